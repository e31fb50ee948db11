"""The single-file writers (``bench --json``, ``expect bless``, and ``record``/``import``/``audit-run
--cases-out`` through ``atomic_file.write_atomically``) lose nothing of the user's:

- ``bench --json`` checks its path before anything is measured (``write_preflight.check_output_file``) and
  refuses, exit 2 naming ``--json``, a FIFO or device there, before the bench and again at the write,
  rather than replace it with a regular file (as root it once replaced /dev/null);
- ``expect bless`` writes through a temporary file of a unique name: a ``<out>.tmp`` symlink to another
  file, or a user's own ``<out>.tmp``, is left alone;
- a disk that fills after the check is exit 2 naming the option and the path, the old file left as it was
  and no temporary file left behind (bless was exit 4 with a truncated ``.tmp``);
- a written file has the mode of the file it replaces, else 0o666 less the umask (not mkstemp's 0o600).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.atomic_file import write_atomically
from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.bless import bless, write_blessed
from ragas_compat.compare.expectations import parse_expectations_text
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.bench_rows import BenchRow

CASE = {"id": "cp", "category": "single_source", "user_input": "q", "reference": "r", "response": "a",
        "retrieved_contexts": ["c1", "c2"], "verdicts": {"context_precision_with_reference": [1, 0]}}


def _audit():
    """A one-row audit without Ragas (as tests/test_verdict_edges_harness_errors.py builds one)."""
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [CASE]}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": "cp", "target": "legacy:LLMContextPrecisionWithReference",
                          "value": 0.9999999999, "received": {}}]}
    return build_audit(suite, probe, parse_expectations_text("", "mine.toml"), {"ragas_version": "0.4.3"})


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (room for the 64 KiB write check; skipped where it cannot be mounted), always unmounted."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def _fill(folder: Path) -> None:
    """Write ``folder``'s file system full (a pad file up to ENOSPC)."""
    with open(folder / "pad", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _char_device(path: Path) -> Path:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    except OSError as exc:
        pytest.skip(f"cannot make a character device here: {exc}")
    return path


def _bench(monkeypatch, json_path: Path, during=lambda: None):
    """``ragas-compat bench --json PATH`` through the real command, its measuring replaced by a stub that
    records that it ran (and calls ``during``); (the CliRunner result, the list of calls)."""
    from ragas_compat.cli import bench as bench_cli
    from ragas_compat.cli.app import app

    calls = []

    def measured(quick, **kwargs):
        calls.append(quick)
        during()
        return [BenchRow("floor", "run vs imports", samples=[3.0], baseline=[2.0], ratios=[1.5])]

    monkeypatch.setattr(bench_cli, "run_bench", measured)
    result = CliRunner().invoke(app, ["bench", "--quick", "--json", str(json_path), "-q"])
    return result, calls


@pytest.mark.parametrize("make", [_fifo, _char_device], ids=["fifo", "char-device"])
def test_bench_json_refuses_a_fifo_or_device_before_measuring(tmp_path, monkeypatch, make):
    target = make(tmp_path / "mynull")
    result, calls = _bench(monkeypatch, target)
    assert result.exit_code == 2, result.output
    assert calls == []  # refused before anything was measured
    assert f"--json {target}: not writable" in " ".join(result.output.split())
    kind = os.lstat(target).st_mode
    assert stat.S_ISFIFO(kind) if make is _fifo else stat.S_ISCHR(kind)  # left as it was


def test_bench_json_refuses_a_fifo_that_appeared_during_the_bench(tmp_path, monkeypatch):
    target = tmp_path / "b.json"
    result, calls = _bench(monkeypatch, target, during=lambda: _fifo(target))
    assert calls == [True]
    assert result.exit_code == 2, result.output
    assert "--json" in result.output and "FIFO" in result.output
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]  # no temporary file left


def test_bench_json_on_a_disk_that_filled_during_the_bench(tiny_disk, monkeypatch):
    target = tiny_disk / "b.json"
    target.write_text("old\n")
    result, calls = _bench(monkeypatch, target, during=lambda: _fill(tiny_disk))
    assert calls == [True]
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"--json {target}: cannot write it (the file system is full); the file there was left as it was" in said
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["b.json", "pad"]


def test_bless_does_not_write_through_a_tmp_symlink_or_take_over_a_users_tmp_file(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n")
    out = tmp_path / "ex.toml"
    (tmp_path / "ex.toml.tmp").symlink_to(precious)
    audit = _audit()
    write_blessed(audit, out)
    assert precious.read_text() == "precious\n"
    assert stat.S_ISREG(os.lstat(out).st_mode) and out.read_text() == bless(audit)
    assert os.readlink(tmp_path / "ex.toml.tmp") == str(precious)

    mine = tmp_path / "other.toml.tmp"
    mine.write_text("a user's file\n")
    write_blessed(audit, tmp_path / "other.toml")
    assert mine.read_text() == "a user's file\n"


@pytest.mark.parametrize("old", [True, False], ids=["replacing", "new-folder"])
def test_bless_on_a_full_disk_is_exit_2_and_leaves_nothing(tiny_disk, old):
    out = tiny_disk / "e.toml" if old else tiny_disk / "new" / "e.toml"
    if old:
        out.write_text("old\n")
    else:
        out.parent.mkdir()
    _fill(tiny_disk)
    with pytest.raises(HarnessInputError) as raised:
        write_blessed(_audit(), out)
    assert int(raised.value.exit_code) == 2
    assert str(raised.value).startswith(f"--out {out}: cannot write it (the file system is full)")
    assert sorted(p.name for p in out.parent.iterdir()) == (["e.toml", "pad"] if old else [])
    if old:
        assert out.read_text() == "old\n"


def test_a_new_file_gets_0666_less_the_umask(tmp_path):
    with _umask(0o027):
        write_atomically(tmp_path / "c.json", "{}\n")
        write_blessed(_audit(), tmp_path / "e.toml")
    with _umask(0o022):
        write_atomically(tmp_path / "d.json", "{}\n")
    assert stat.S_IMODE(os.stat(tmp_path / "c.json").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(tmp_path / "e.toml").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(tmp_path / "d.json").st_mode) == 0o644


def test_a_replaced_file_keeps_its_mode(tmp_path, monkeypatch):
    for name, mode in (("shared.json", 0o644), ("group.toml", 0o660), ("private.json", 0o600)):
        (tmp_path / name).write_text("old\n")
        os.chmod(tmp_path / name, mode)
    with _umask(0o077):
        write_atomically(tmp_path / "shared.json", "{}\n")
        write_blessed(_audit(), tmp_path / "group.toml")
        result, _ = _bench(monkeypatch, tmp_path / "private.json")
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(os.stat(tmp_path / "shared.json").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "group.toml").st_mode) == 0o660
    assert stat.S_IMODE(os.stat(tmp_path / "private.json").st_mode) == 0o600
    assert (tmp_path / "private.json").read_text().startswith("{")


def test_bench_json_new_file_gets_the_umask(tmp_path, monkeypatch):
    with _umask(0o022):
        result, _ = _bench(monkeypatch, tmp_path / "b.json")
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(os.stat(tmp_path / "b.json").st_mode) == 0o644
