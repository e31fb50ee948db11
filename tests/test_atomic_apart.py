"""``write_reports_atomically(first_apart=True)``: the first file is made and written by a forked child while
the parent writes the others; the set is the same bytes as a serial write, and a failure in the child is
the parent's failure (an OSError: exit 2 and the old set left as it was; anything else: an internal error),
with nothing half-written."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.report import atomic
from ragas_compat.report.atomic import write_reports_atomically

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


@pytest.fixture
def fork_allowed(monkeypatch):
    """The child path even where an earlier test of this process left a thread running (pytest-xdist's
    workers run many tests): whether a fork is safe is ``_Apart.safe``'s question, tested on its own below."""
    monkeypatch.setattr(atomic._Apart, "safe", staticmethod(lambda: True))


def chunks(text: str, pids: list[int] | None = None, fail: BaseException | None = None) -> Iterator[str]:
    """``text`` in three chunks; records the pid that makes it; raises ``fail`` half-way."""
    if pids is not None:
        with open(pids[0], "a", encoding="utf-8") as log:  # a file: the child's list is its own copy
            log.write(f"{os.getpid()}\n")
    yield text[: len(text) // 2]
    if fail is not None:
        raise fail
    yield text[len(text) // 2:]
    yield "\n"


def files(tag: str, **first: object) -> dict[str, Iterator[str]]:
    return {"report.json": chunks(f"{tag} json " * 500, **first), "report.md": chunks(f"{tag} md"),
            "junit.xml": chunks(f"{tag} junit")}


def published(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("report.json", "report.md", "junit.xml")}


def test_same_bytes_as_a_serial_write_and_the_first_file_made_in_a_child(tmp_path: Path, fork_allowed):
    log = tmp_path / "pids.txt"
    write_reports_atomically(tmp_path / "serial", files("A"))
    write_reports_atomically(tmp_path / "apart", files("A", pids=[str(log)]), first_apart=True)
    assert published(tmp_path / "apart") == published(tmp_path / "serial")
    assert os.readlink(tmp_path / "apart" / ".report-set") == os.readlink(tmp_path / "serial" / ".report-set")
    assert [int(pid) for pid in log.read_text().split()] != [os.getpid()]  # made by another process


def test_written_here_while_another_thread_runs(tmp_path: Path):
    log = tmp_path / "pids.txt"
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        write_reports_atomically(tmp_path / "out", files("A", pids=[str(log)]), first_apart=True)
    finally:
        stop.set()
        thread.join()
    assert [int(pid) for pid in log.read_text().split()] == [os.getpid()]


def test_an_os_error_in_the_child_is_exit_2_and_leaves_the_old_set(tmp_path: Path, fork_allowed):
    write_reports_atomically(tmp_path, files("old"))
    before = published(tmp_path)
    with pytest.raises(HarnessInputError, match=r"cannot write the reports .*No space left"):
        write_reports_atomically(tmp_path, files("new", fail=OSError(errno.ENOSPC, "No space left on device")),
                                 first_apart=True)
    assert published(tmp_path) == before
    assert not [p for p in os.listdir(tmp_path) if "tmp-" in p]  # no staging folder left


def test_any_other_error_in_the_child_is_raised_with_its_traceback(tmp_path: Path, fork_allowed):
    with pytest.raises(RuntimeError, match=r"(?s)writing report.json in a child process failed.*ValueError: broken"):
        write_reports_atomically(tmp_path, files("new", fail=ValueError("broken")), first_apart=True)
    assert not [p for p in os.listdir(tmp_path) if not p.startswith(".report-set.lock")]
