"""Write a set of report files as plain files under their fixed names: the repository's committed
golden reports (``ragas-compat run --out reports --golden``).

The atomic layout (``ragas_compat.report.atomic``) keeps each set in a folder named by a hash of its
contents behind symlinks, so a reader never sees a mix of two sets; committed to git, every change
of a report renames that folder and ``git diff`` shows every file deleted and added. Goldens are
instead written in place: each file to a temporary name beside it, then renamed over its name (a
reader sees a whole file, the old or the new), so a diff shows the lines that changed. What the
atomic layout left in the folder for the same set (its pointer, its generations, its lock file) is
removed; other files are left alone. Every file is staged before any is renamed, and the renames run
with SIGINT and SIGTERM held back: a full disk (or any error while staging) leaves every old file as it
was, and a Ctrl-C leaves the old set or the new one, never a mix.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from ragas_compat.errors import HarnessInputError
from ragas_compat.report.atomic import set_name, signals_held


def write_golden_files(folder: Path, files: Mapping[str, str | Iterable[str]], *,
                       name: str | None = None) -> list[Path]:
    """Write ``files`` (file name -> text, or its chunks in order; UTF-8) as plain files in ``folder``
    and return their paths. A file whose text is unchanged is not rewritten. HarnessInputError (exit 2)
    when the folder or a file cannot be written (a folder in the way, no permission, a full disk)."""
    folder = Path(folder)
    names = list(files)
    if not names or any(not n or n in (".", "..") or "/" in n or n.startswith(".") for n in names):
        raise ValueError(f"report file names must be plain, visible file names: {names!r}")
    staged: list[tuple[Path, Path]] = []  # (temporary file, the name it is renamed over)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for file_name, text in files.items():
            temporary = _stage(folder / file_name, text)
            if temporary is not None:
                staged.append((temporary, folder / file_name))
        with signals_held():
            for temporary, path in staged:
                os.replace(temporary, path)
        _remove_set_layout(folder, name or set_name(names))
    except OSError as error:
        raise HarnessInputError(f"cannot write the reports in {folder}: {error.strerror or error}; the files there "
                                "were left as they were", field="--out", value=str(folder)) from error
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
    return [folder / n for n in names]


def _stage(path: Path, text: str | Iterable[str]) -> Path | None:
    """Write ``text`` beside ``path`` under a temporary name and return it (to be renamed over ``path``: a
    symlink there is replaced, not followed); None when ``path`` holds these bytes already."""
    if path.is_dir() and not path.is_symlink():
        raise IsADirectoryError(21, "a folder is in the way", str(path))
    staged = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    try:
        with open(staged, "x", encoding="utf-8", newline="") as handle:
            for chunk in [text] if isinstance(text, str) else text:
                handle.write(chunk)
        if path.is_file() and not path.is_symlink() and _same_bytes(path, staged):
            staged.unlink()
            return None
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def _same_bytes(a: Path, b: Path) -> bool:
    return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def _remove_set_layout(folder: Path, name: str) -> None:
    """The pointer ``.<name>-set``, its generations ``.<name>-set.<hash>`` and lock left by the atomic
    layout of the same set."""
    prefix = f".{name}-set"
    for entry in folder.iterdir():
        if entry.name == prefix or entry.name.startswith(prefix + "."):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
