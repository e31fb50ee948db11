"""Golden reports are plain files under fixed names (``ragas_compat.report.golden``); users' ``--out``
keeps its atomic set (tests/test_atomic.py)."""

from __future__ import annotations

import os

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.pipeline import COMMITTED_REPORTS
from ragas_compat.report.atomic import write_reports_atomically
from ragas_compat.report.golden import write_golden_files

FILES = {"report.json": "{}\n", "report.md": "# r\n", "junit.xml": "<x/>\n"}


def test_golden_files_are_plain_files_and_replace_an_atomic_set(tmp_path):
    write_reports_atomically(tmp_path, FILES)
    assert (tmp_path / "report.md").is_symlink() and (tmp_path / ".report-set").is_symlink()
    (tmp_path / "other.txt").write_text("kept", encoding="utf-8")
    paths = write_golden_files(tmp_path, {**FILES, "report.md": iter(["# r", "2\n"])})
    assert paths == [tmp_path / name for name in FILES]
    assert sorted(os.listdir(tmp_path)) == ["junit.xml", "other.txt", "report.json", "report.md"]
    assert not any(path.is_symlink() for path in tmp_path.iterdir())
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "# r2\n"


def test_unchanged_golden_file_is_not_rewritten(tmp_path):
    write_golden_files(tmp_path, FILES)
    before = {name: (tmp_path / name).stat().st_ino for name in FILES}
    write_golden_files(tmp_path, {**FILES, "report.json": "[]\n"})
    after = {name: (tmp_path / name).stat().st_ino for name in FILES}
    assert after["report.md"] == before["report.md"] and after["report.json"] != before["report.json"]
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == "[]\n"


def test_a_folder_in_the_way_exits_2_and_leaves_no_temporary_file(tmp_path):
    (tmp_path / "report.md").mkdir()
    with pytest.raises(HarnessInputError):
        write_golden_files(tmp_path, FILES)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _chunks_then_full_disk():
    yield "{"
    raise OSError(28, "No space left on device")


def test_a_full_disk_while_staging_leaves_every_old_file_as_it_was(tmp_path):
    """``run --golden`` on a disk that filled after its write check left report.json and report.md new and
    junit.xml and report.html old (exit 2): each file was renamed as soon as it was written."""
    write_golden_files(tmp_path, FILES)
    old = {name: (tmp_path / name).read_text(encoding="utf-8") for name in FILES}
    new = {"report.json": "[1]\n", "report.md": "# new\n", "junit.xml": _chunks_then_full_disk()}
    with pytest.raises(HarnessInputError, match="No space left on device; the files there were left as they were"):
        write_golden_files(tmp_path, new)
    assert {name: (tmp_path / name).read_text(encoding="utf-8") for name in FILES} == old
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_ctrl_c_between_renames_leaves_the_new_set_whole(tmp_path, monkeypatch):
    """A SIGINT right after the first file was renamed left one new file beside the old ones (exit 130)."""
    import signal

    write_golden_files(tmp_path, FILES)
    replace, calls = os.replace, []

    def replace_then_interrupt(source, target):
        replace(source, target)
        calls.append(target)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    new = {name: text.replace("\n", " new\n") for name, text in FILES.items()}
    with pytest.raises(KeyboardInterrupt):
        write_golden_files(tmp_path, new)
    assert len(calls) == 3
    assert {name: (tmp_path / name).read_text(encoding="utf-8") for name in FILES} == new


@pytest.mark.parametrize("folder", ["", "matrix"])
def test_committed_reports_are_plain_files_without_a_set_folder(folder):
    """``ragas-compat run --out reports --golden`` (and ``matrix --out reports/matrix --golden``) keep them
    so; a run without ``--golden`` would bring back the hash-named folder and its symlinks."""
    where = COMMITTED_REPORTS / folder
    entries = list(where.iterdir())
    assert entries and not any(entry.is_symlink() for entry in entries)
    assert not any(entry.name.startswith(".") for entry in entries), [e.name for e in entries]
