from pathlib import Path

import pytest

from harness.errors import HarnessInputError
from harness.report import atomic
from harness.report.atomic import check_writable, write_reports_atomically


def test_writes_all_files_and_leaves_no_temporaries(tmp_path: Path):
    written = write_reports_atomically(tmp_path, {"a.json": "{}\n", "b.md": "# b\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.md"]
    assert [p.read_text() for p in written] == ["{}\n", "# b\n"]


def test_a_failure_while_staging_touches_no_report(tmp_path: Path, monkeypatch):
    (tmp_path / "a.json").write_text("old")
    real = atomic.tempfile.NamedTemporaryFile
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(atomic.tempfile, "NamedTemporaryFile", flaky)
    with pytest.raises(HarnessInputError, match="cannot write reports"):
        write_reports_atomically(tmp_path, {"a.json": "new", "b.md": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
    assert (tmp_path / "a.json").read_text() == "old"


def test_unwritable_folder_is_an_input_error():
    # /proc refuses new folders even to root (CI runs as root, so chmod would prove nothing).
    with pytest.raises(HarnessInputError, match="ragas-compat-reports"):
        check_writable(Path("/proc/ragas-compat-reports"))


def test_a_file_in_the_way_is_an_input_error(tmp_path: Path):
    blocker = tmp_path / "reports"
    blocker.write_text("not a folder")
    with pytest.raises(HarnessInputError, match="reports"):
        check_writable(blocker)
