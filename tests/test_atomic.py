"""Report sets are published atomically (ragas_compat.report.atomic): a reader sees the old set or the new
set, never a mix; concurrent writers on one folder serialise; a failure or a signal leaves the old set
or the new one and nothing else behind (no staging folder, link or lock file)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ragas_compat.errors import ExitCode, HarnessInputError
from ragas_compat.report import atomic
from ragas_compat.report.atomic import check_writable, set_name, write_reports_atomically

NAMES = ("report.md", "report.json", "junit.xml")


def report_set(tag: str) -> dict[str, str]:
    return {name: f"{tag} {name}\n" for name in NAMES}


def visible(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def tags(folder: Path) -> set[str]:
    """The tag of each file of the set as a reader of folder/<name> sees it."""
    return {(folder / name).read_text().split(" ", 1)[0] for name in NAMES}


def assert_clean(folder: Path, name: str = "report") -> None:
    """Only the pointer and the one generation it names: no staging folder, link or lock file."""
    pointer = folder / f".{name}-set"
    entries = [e for e in hidden(folder) if e.startswith(f".{name}-set")]
    assert entries == sorted([pointer.name, os.readlink(pointer)]), entries


def test_set_names():
    assert set_name(list(NAMES)) == "report"
    assert set_name(["fuzz.json", "fuzz.md"]) == "fuzz"
    assert set_name(["matrix.json", "matrix.md", "matrix.html"]) == "matrix"


def test_writes_all_files_through_one_pointer_and_leaves_no_temporaries(tmp_path: Path):
    written = write_reports_atomically(tmp_path, report_set("A"))
    assert written == [tmp_path / name for name in NAMES]
    assert visible(tmp_path) == sorted(NAMES)
    assert [p.read_text() for p in written] == [f"A {name}\n" for name in NAMES]
    for name in NAMES:  # readers keep reading folder/<name>
        assert os.readlink(tmp_path / name) == f".report-set/{name}"
    assert os.readlink(tmp_path / ".report-set").startswith(".report-set.")
    assert_clean(tmp_path)


def test_republishing_swaps_the_whole_set_and_removes_the_old_generation(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("A"))
    old = os.readlink(tmp_path / ".report-set")
    write_reports_atomically(tmp_path, report_set("B"))
    assert tags(tmp_path) == {"B"}
    assert os.readlink(tmp_path / ".report-set") != old and not (tmp_path / old).exists()
    assert_clean(tmp_path)


def test_identical_reports_change_nothing_on_disk(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("A"))
    before = {p.name: (os.readlink(p) if p.is_symlink() else None, p.lstat().st_ino) for p in tmp_path.iterdir()}
    write_reports_atomically(tmp_path, report_set("A"))
    after = {p.name: (os.readlink(p) if p.is_symlink() else None, p.lstat().st_ino) for p in tmp_path.iterdir()}
    assert after == before


def test_regular_report_files_of_an_older_writer_are_replaced_and_other_files_kept(tmp_path: Path):
    for name in NAMES:
        (tmp_path / name).write_text(f"OLD {name}\n")
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "matrix").mkdir()
    write_reports_atomically(tmp_path, report_set("A"))
    assert tags(tmp_path) == {"A"} and all((tmp_path / n).is_symlink() for n in NAMES)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "matrix").is_dir()
    assert_clean(tmp_path)


def test_sets_of_different_writers_share_a_folder(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("A"))
    write_reports_atomically(tmp_path, {"fuzz.json": "F json", "fuzz.md": "F md"})
    write_reports_atomically(tmp_path, report_set("B"))
    assert tags(tmp_path) == {"B"} and (tmp_path / "fuzz.md").read_text() == "F md"
    assert visible(tmp_path) == sorted([*NAMES, "fuzz.json", "fuzz.md"])
    assert_clean(tmp_path, "report")
    assert_clean(tmp_path, "fuzz")


def test_a_failure_while_staging_touches_no_report(tmp_path: Path, monkeypatch):
    write_reports_atomically(tmp_path, report_set("A"))
    opened = []

    class FillsUp(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    def disk_fills_on_the_second_file(path, *args, **kwargs):
        opened.append(path)
        return FillsUp() if len(opened) == 2 else open(path, *args, **kwargs)

    monkeypatch.setattr(atomic, "open", disk_fills_on_the_second_file, raising=False)
    with pytest.raises(HarnessInputError, match=r"cannot write the reports .No space left on device.; the "
                                                r"reports there were left as they were") as raised:
        write_reports_atomically(tmp_path, report_set("B"))
    assert len(opened) == 2
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    assert tags(tmp_path) == {"A"}
    assert_clean(tmp_path)


def test_a_report_given_as_chunks_is_written_as_they_come_and_names_the_same_generation(tmp_path: Path):
    whole = {"report.json": "{\n \"a\": 1\n}\n", "report.md": "# é\n\nrows\n"}
    seen = []

    def chunks(text: str):
        for char in text:
            seen.append(char)
            yield char

    write_reports_atomically(tmp_path / "whole", whole)
    write_reports_atomically(tmp_path / "chunks", {name: chunks(text) for name, text in whole.items()})
    for name, text in whole.items():
        assert (tmp_path / "chunks" / name).read_text(encoding="utf-8") == text
    assert len(seen) == sum(len(text) for text in whole.values())
    assert os.readlink(tmp_path / "chunks" / ".report-set") == os.readlink(tmp_path / "whole" / ".report-set")


def test_a_renderer_failing_midway_leaves_the_old_set_and_no_partial_file(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("A"))

    def breaks_after_a_line():
        yield "B md, first line\n"
        raise ValueError("the renderer's own bug")

    with pytest.raises(ValueError, match="the renderer's own bug"):
        write_reports_atomically(tmp_path, {**report_set("B"), "report.md": breaks_after_a_line()})
    assert tags(tmp_path) == {"A"}
    assert_clean(tmp_path)


def test_a_folder_where_a_report_should_be_is_exit_2_and_the_old_set_stays(tmp_path: Path):
    write_reports_atomically(tmp_path, {"report.json": "A json", "junit.xml": "A xml"}, name="report")
    (tmp_path / "report.md").mkdir()
    with pytest.raises(HarnessInputError, match=r"report.md is a folder, in the way of the reports") as raised:
        write_reports_atomically(tmp_path, report_set("B"))
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    assert (tmp_path / "report.json").read_text() == "A json" and (tmp_path / "junit.xml").read_text() == "A xml"
    assert (tmp_path / "report.md").is_dir()
    assert_clean(tmp_path)
    with pytest.raises(HarnessInputError, match=r"report.md is a folder"):  # and the early check sees it too
        check_writable(tmp_path, NAMES)


def test_a_failure_while_publishing_is_exit_2_and_the_old_set_stays(tmp_path: Path, monkeypatch):
    write_reports_atomically(tmp_path, report_set("A"))

    def refuse(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(HarnessInputError, match=r"cannot publish the reports .Input/output error.; the reports "
                                                r"there were left as they were"):
        write_reports_atomically(tmp_path, report_set("B"))
    assert tags(tmp_path) == {"A"}
    assert_clean(tmp_path)


def _hold_lock(folder: Path, name: str = "report") -> int:
    fd = os.open(folder / f".{name}-set.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_writer_that_keeps_the_lock_makes_the_second_refuse_with_exit_2(tmp_path: Path, monkeypatch):
    write_reports_atomically(tmp_path, report_set("A"))
    monkeypatch.setattr(atomic, "LOCK_WAIT_SECONDS", 0.3)
    fd = _hold_lock(tmp_path)
    try:
        started = time.monotonic()
        with pytest.raises(HarnessInputError, match=r"another ragas-compat process has been writing its reports") \
                as raised:
            write_reports_atomically(tmp_path, report_set("B"))
        assert 0.3 <= time.monotonic() - started < 3
        assert raised.value.exit_code == ExitCode.BAD_INPUT
        assert tags(tmp_path) == {"A"}
    finally:
        os.close(fd)


def test_a_writer_waits_for_the_lock_then_publishes(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("A"))
    fd = _hold_lock(tmp_path)
    threading.Timer(0.3, lambda: (os.unlink(tmp_path / ".report-set.lock"), os.close(fd))).start()
    started = time.monotonic()
    write_reports_atomically(tmp_path, report_set("B"))
    assert time.monotonic() - started >= 0.3
    assert tags(tmp_path) == {"B"}
    assert_clean(tmp_path)


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from ragas_compat.report.atomic import write_reports_atomically
    folder, tag, times = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for i in range(times):
        write_reports_atomically(folder, {n: f"{tag}-{i} {n}" + "x" * 100_000 for n in sys.argv[4:]})
""")


def _sigint_raises() -> None:
    """In the child, before Python starts: SIGINT at its default, so Python turns it into KeyboardInterrupt
    even when this test runs in the background (a shell starts background jobs with SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _writer(folder: Path, tag: str, times: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(folder), tag, str(times), *NAMES],
                            preexec_fn=_sigint_raises)


def test_concurrent_writers_serialise_and_readers_always_see_one_whole_set(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("start"))
    writers = [_writer(tmp_path, tag, 40) for tag in ("P", "Q", "R")]
    seen = 0
    while any(w.poll() is None for w in writers):
        # a reader that resolves the pointer once reads one complete generation
        generation = os.readlink(tmp_path / ".report-set")
        try:
            texts = {(tmp_path / generation / name).read_text()[:40].split(" ", 1)[0] for name in NAMES}
        except FileNotFoundError:  # replaced and removed meanwhile: it must no longer be the current one
            assert os.readlink(tmp_path / ".report-set") != generation
            continue
        assert len(texts) == 1, texts
        seen += 1
    assert [w.returncode for w in writers] == [0, 0, 0]
    assert len(tags(tmp_path)) == 1 and {t.rsplit("-", 1)[1] for t in tags(tmp_path)} == {"39"}
    assert_clean(tmp_path)
    assert seen > 0


INTERRUPTED = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from ragas_compat.report import atomic
    folder, sig, when = Path(sys.argv[1]), getattr(signal, sys.argv[2]), sys.argv[3]
    if sys.argv[2] == "SIGTERM":  # as the command line does: SIGTERM raises, so clean-up runs
        def terminated(signum, frame):
            raise SystemExit(143)
        signal.signal(signal.SIGTERM, terminated)
    real_replace = os.replace
    calls = []
    def replace(src, dst):  # the publications: the pointer, then (first time only) each file's symlink
        real_replace(src, dst)
        calls.append(dst)
        if when == "between-publications" and len(calls) == 1:
            os.kill(os.getpid(), sig)
    def streamed(name):  # a report made as it is written: the signal arrives mid-file
        yield "new "
        if when == "while-staging":
            os.kill(os.getpid(), sig)
        yield name
    atomic.os.replace = replace
    try:
        atomic.write_reports_atomically(folder, {n: streamed(n) for n in sys.argv[4:]})
    except KeyboardInterrupt:
        print("KeyboardInterrupt after", len(calls), "publications")
        sys.exit(130)
    print("not interrupted")
""")


@pytest.mark.parametrize("first", [True, False], ids=["regular-files-before", "a-set-before"])
@pytest.mark.parametrize("when", ["between-publications", "while-staging"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_during_publication_leaves_a_whole_set_and_no_leftovers(tmp_path: Path, sig, when, first):
    if first:
        for name in NAMES:
            (tmp_path / name).write_text(f"old {name}")
    else:
        write_reports_atomically(tmp_path, {n: f"old {n}" for n in NAMES})
    proc = subprocess.run([sys.executable, "-c", INTERRUPTED, str(tmp_path), sig, when, *NAMES],
                          capture_output=True, text=True, timeout=60, preexec_fn=_sigint_raises)
    assert proc.returncode == (130 if sig == "SIGINT" else 143), proc.stdout + proc.stderr
    # the signal was held back until the set was published and everything cleaned
    publications = 4 if first else 1
    if sig == "SIGINT":
        assert proc.stdout.strip() == f"KeyboardInterrupt after {publications} publications"
    assert {(tmp_path / name).read_text().split(" ", 1)[0] for name in NAMES} == {"new"}
    assert_clean(tmp_path)


def test_a_signal_while_waiting_for_the_lock_stops_waiting_and_changes_nothing(tmp_path: Path):
    write_reports_atomically(tmp_path, report_set("A"))
    fd = _hold_lock(tmp_path)
    try:
        proc = _writer(tmp_path, "B", 1)
        time.sleep(1.0)  # started and waiting for the lock
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        assert time.monotonic() - started < 2
        assert proc.returncode == -signal.SIGINT  # an uncaught KeyboardInterrupt
        assert tags(tmp_path) == {"A"}
        assert [e for e in hidden(tmp_path) if ".report-set.tmp-" in e or ".report-set.link-" in e] == []
    finally:
        os.close(fd)


def test_check_writable_names_what_is_in_the_way(tmp_path: Path):
    (tmp_path / "junit.xml").mkdir()
    with pytest.raises(HarnessInputError, match=r"junit.xml is a folder"):
        check_writable(tmp_path, NAMES)
    os.mkfifo(tmp_path / "report.md")
    (tmp_path / "junit.xml").rmdir()
    with pytest.raises(HarnessInputError, match=r"report.md is a named pipe"):
        check_writable(tmp_path, NAMES)
    assert hidden(tmp_path) == []  # the check leaves nothing behind


def test_unwritable_folder_is_an_input_error():
    # /proc refuses new folders even to root (CI runs as root, so chmod would prove nothing).
    with pytest.raises(HarnessInputError, match=r"ragas-compat-reports"):
        check_writable(Path("/proc/ragas-compat-reports"))
    with pytest.raises(HarnessInputError, match=r"ragas-compat-reports"):
        write_reports_atomically(Path("/proc/ragas-compat-reports"), report_set("A"))


def test_a_file_in_the_way_is_an_input_error(tmp_path: Path):
    blocker = tmp_path / "reports"
    blocker.write_text("not a folder")
    with pytest.raises(HarnessInputError, match=r"reports"):
        check_writable(blocker)


def test_the_cli_report_folders_are_readable_as_before(tmp_path: Path):
    """--out DIR gives DIR/report.md, DIR/report.json, DIR/junit.xml to any reader (cat, json.load)."""
    write_reports_atomically(tmp_path, {"report.json": json.dumps({"a": 1}), "report.md": "# r", "junit.xml": "<x/>"})
    assert json.loads((tmp_path / "report.json").read_text()) == {"a": 1}
    assert subprocess.run(["cat", str(tmp_path / "report.md")], capture_output=True, text=True).stdout == "# r"


def test_the_write_check_creates_no_folder(tmp_path):
    """check_writable created --out (and its parents) to try a write in it: a run that stopped before its
    reports (a full disk, a Ctrl-C, a refused suite) left an empty folder behind."""
    from ragas_compat.report.atomic import check_writable

    check_writable(tmp_path / "new" / "out", ("report.json",))
    assert list(tmp_path.iterdir()) == []
