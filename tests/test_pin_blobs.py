"""Git blob ids computed in Python equal `git hash-object`."""

from __future__ import annotations

import subprocess

import pytest

from ragas_compat.pin.blobs import blob_id, blob_ids_under, file_blob_id, is_blob_id

SAMPLES = [b"", b"hello\n", b"line\r\nwindows\r\n", "naïve ✓\n".encode(), bytes(range(256)) * 3]


def git_hash_object(path) -> str:
    return subprocess.run(["git", "hash-object", "--no-filters", str(path)], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_empty_blob_is_the_well_known_id():
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


@pytest.mark.parametrize("content", SAMPLES)
def test_blob_id_equals_git_hash_object(tmp_path, content):
    path = tmp_path / "sample.bin"
    path.write_bytes(content)
    assert blob_id(content) == file_blob_id(path) == git_hash_object(path)


def test_blob_ids_under_reports_absent_files_as_none(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_bytes(b"x = 1\n")
    result = blob_ids_under(tmp_path, ["src/a.py", "src/missing.py"])
    assert result == {"src/a.py": git_hash_object(tmp_path / "src" / "a.py"), "src/missing.py": None}


def test_is_blob_id():
    assert is_blob_id("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
    assert not is_blob_id("E69DE29BB2D1D6434B8B29AE775AD8C2E48C5391")
    assert not is_blob_id("e69de29")
    assert not is_blob_id(None)
