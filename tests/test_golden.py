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


@pytest.mark.parametrize("folder", ["", "matrix"])
def test_committed_reports_are_plain_files_without_a_set_folder(folder):
    """``ragas-compat run --out reports --golden`` (and ``matrix --out reports/matrix --golden``) keep them
    so; a run without ``--golden`` would bring back the hash-named folder and its symlinks."""
    where = COMMITTED_REPORTS / folder
    entries = list(where.iterdir())
    assert entries and not any(entry.is_symlink() for entry in entries)
    assert not any(entry.name.startswith(".") for entry in entries), [e.name for e in entries]
