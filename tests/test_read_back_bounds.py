"""Files this harness wrote, read back from a user (``diff``'s report.json / matrix.json, ``merge``'s
shard.json), are read as every file from outside is (``input_limits``): a FIFO nobody writes, a device, a
file over ``READ_BACK_FACTOR`` times the input limit, text that is not UTF-8 or JSON nested past what Python
parses are each exit 2 with one line naming the file; nothing blocks, nothing is read without bound, no
traceback (before: ``/dev/zero`` grew the process until MemoryError, exit 4; a FIFO hung; deep JSON was a
RecursionError, exit 4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.input_limits import MAX_INPUT_BYTES_ENV, READ_BACK_FACTOR

LIMIT = 4096  # RAGAS_COMPAT_MAX_INPUT_BYTES in the size case


def _hostile(kind: str, folder: Path) -> Path:
    path = folder / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes: opening it for reading would block
    elif kind == "device":
        path.symlink_to("/dev/zero")  # endless: read whole, it grew the process until MemoryError
    elif kind == "too large":
        path.write_text('{"x": "' + "a" * (READ_BACK_FACTOR * LIMIT) + '"}', encoding="utf-8")
    elif kind == "not utf-8":
        path.write_bytes(b'{"x": "\xff"}')
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["diff", "merge"])
@pytest.mark.parametrize("kind, says", [
    ("fifo", "is a FIFO (named pipe), not a regular file"),
    ("device", "is a character device, not a regular file"),
    ("too large", f"is larger than {READ_BACK_FACTOR} times the input limit of {LIMIT} bytes"),
    ("not utf-8", "is not UTF-8 text"),
    ("deep", "nested deeper"),
])
def test_a_hostile_file_read_back_is_exit_2_naming_it(tmp_path, monkeypatch, command, kind, says):
    if kind == "too large":
        monkeypatch.setenv(MAX_INPUT_BYTES_ENV, str(LIMIT))
    bad = _hostile(kind, tmp_path)
    good = tmp_path / "good.json"
    good.write_text('{"report_format": 4, "provenance": {}, "results": {"columns": ["case_id"], "data": {}}}',
                    encoding="utf-8")
    args = ["diff", str(good), str(bad)] if command == "diff" else ["merge", str(bad), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert str(bad) in message and says in message, message
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert not (tmp_path / "out").exists()  # nothing written
