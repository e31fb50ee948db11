"""Write a set of report files atomically: all of them, or none touched.

Every file is first written to a temporary file in the target folder (same file system),
then all are renamed into place with ``os.replace``. A failure before the renames leaves
the folder as it was; the temporary files are removed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.errors import HarnessInputError


def write_reports_atomically(folder: Path, files: dict[str, str]) -> list[Path]:
    """Write ``files`` (name -> text) into ``folder``; raise HarnessInputError if it is unwritable."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HarnessInputError(f"output folder {folder}: cannot create it ({exc.strerror})", field="--out")
    staged: list[tuple[str, Path]] = []
    try:
        for name, text in files.items():
            handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="\n", dir=folder,
                                                 prefix=f".{name}.", suffix=".tmp", delete=False)
            with handle:
                staged.append((name, Path(handle.name)))
                handle.write(text)
    except OSError as exc:
        for _, temp in staged:
            temp.unlink(missing_ok=True)
        raise HarnessInputError(f"output folder {folder}: cannot write reports ({exc.strerror})", field="--out")
    written = []
    for name, temp in staged:
        os.chmod(temp, 0o644)
        os.replace(temp, folder / name)
        written.append(folder / name)
    return written


def check_writable(folder: Path) -> None:
    """Fail early (before any work) when reports could not be written into ``folder``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check.", delete=True):
            pass
    except OSError as exc:
        raise HarnessInputError(f"output folder {folder} is not writable ({exc.strerror})", field="--out")
