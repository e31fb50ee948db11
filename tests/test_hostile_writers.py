"""Every writer refuses an output it cannot write before any work (and before the judge is paid):
read-only and full file systems (small tmpfs mounts, as root, unmounted afterwards), a folder, a FIFO
or a device (``--out`` symlinked to ``/dev/zero``) where a file should be: exit 2, one line.

Subprocesses run with an address-space limit and a timeout, so the old behaviour (reading
``/dev/zero`` until the kernel's OOM killer came) ends as a failure, not as a stuck machine."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.report.atomic import check_writable
from ragas_compat.write_preflight import check_output_file, check_output_folder

sys.path.insert(0, str(Path(__file__).parent))
from record_judge_server import JudgeServer

CLI = [sys.executable, "-m", "ragas_compat"]
KEY_ENV = "RAGAS_COMPAT_TEST_WRITERS_KEY"
ROW = {"user_input": "When was Alderworks founded?", "retrieved_contexts": ["Alderworks was founded in 1900."],
       "response": "Alderworks was founded in 1900.", "reference": "Alderworks was founded in 1900."}
AS_LIMIT = 3 * 1024 ** 3


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run(argv: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, preexec_fn=_limited,
                          env={**os.environ, **env})


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return lines[0]


def _mount(target: Path, options: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    target.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True,
                          text=True, timeout=30)
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not allowed here: {proc.stderr.strip()}")


def _unmount(target: Path) -> None:
    if subprocess.run(["umount", str(target)], capture_output=True, timeout=30).returncode != 0:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30)


@pytest.fixture
def read_only(tmp_path):
    target = tmp_path / "ro"
    _mount(target, "ro,size=1m")
    try:
        yield target
    finally:
        _unmount(target)


@pytest.fixture
def full(tmp_path):
    target = tmp_path / "full"
    _mount(target, "size=256k")
    try:
        fd = os.open(target / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for _ in range(1024):  # bounded: 4 MiB at most into 256 KiB
                try:
                    os.write(fd, b"\0" * 4096)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
        finally:
            os.close(fd)
        yield target
    finally:
        _unmount(target)


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "rag.jsonl"
    path.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label\nrow-1,c1,1,1\n", encoding="utf-8")
    return path


def hostile_outs(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "a-folder.json"
    folder.mkdir()
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    return {"folder": folder, "fifo": fifo, "dev-zero": zero}


@pytest.mark.parametrize("kind", ["folder", "fifo", "dev-zero"])
def test_import_refuses_a_folder_fifo_or_device_out(tmp_path, dataset, kind):
    out = hostile_outs(tmp_path)[kind]
    proc = run([*CLI, "import", str(dataset), str(tmp_path / "labels.csv"), "--out", str(out)])
    assert proc.returncode == 2
    assert "not a regular file" in one_line(proc)


def test_import_refuses_read_only_and_full_file_systems(tmp_path, dataset, read_only, full):
    for folder, reason in ((read_only, "read-only"), (full, "full")):
        proc = run([*CLI, "import", str(dataset), str(tmp_path / "labels.csv"), "--out", str(folder / "c.json")])
        assert proc.returncode == 2, proc.stderr
        assert reason in one_line(proc)
        assert not (folder / "c.json").exists()
    assert sorted(os.listdir(full)) == ["filler"]  # the check left nothing behind


def record_argv(dataset: Path, out: Path, server: JudgeServer) -> list[str]:
    return [*CLI, "record", str(dataset), "--out", str(out), "--openai-base-url", server.base_url, "--model",
            server.model, "--api-key-env", KEY_ENV, "--metric", "context_precision_with_reference"]


@pytest.mark.parametrize("kind", ["folder", "fifo", "dev-zero", "read-only", "full"])
def test_record_finds_out_unwritable_before_paying_the_judge(tmp_path, dataset, read_only, full, kind):
    outs = {**hostile_outs(tmp_path), "read-only": read_only / "c.json", "full": full / "c.json"}
    with JudgeServer() as server:
        started = time.monotonic()
        proc = run(record_argv(dataset, outs[kind], server), **{KEY_ENV: "sk-test"})
        seconds = time.monotonic() - started
        asked = server.requests
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = one_line(proc)
    assert "--out" in line
    assert asked == 0, "the judge was asked before --out was checked"
    assert seconds < 60


def test_report_and_cache_folders_are_probed_for_space(full, read_only):
    for folder in (full / "reports", full, read_only / "reports"):
        with pytest.raises(HarnessInputError, match=r"full|read-only"):
            check_writable(folder, ("report.md",))
        with pytest.raises(HarnessInputError, match=r"full|read-only"):
            check_output_folder(folder, "--cache-dir")
    assert not (full / "reports").exists()


def test_a_file_out_behind_a_symlink_to_a_device_is_named(tmp_path):
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    with pytest.raises(HarnessInputError, match=r"is a character device \(a symlink to /dev/zero\)"):
        check_output_file(zero)
    check_output_file(tmp_path / "new" / "deeper" / "c.json")  # a folder to be created: fine, not created
    assert not (tmp_path / "new").exists()
