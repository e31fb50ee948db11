"""Write one file atomically, so that a reader sees the old file or the new one, never a part.

``write_atomically(path, text, option)`` is the writer of every single-file output (``record`` after
each batch, ``import``, ``audit-run --cases-out``, ``expect bless``, ``bench --json``). The text goes
into a temporary file of a unique name, created exclusively (``mkstemp``) in the same folder, so that
no symlink or file of the user's is written through or taken over; it is fsync'ed and renamed over
``path``. On any failure the temporary file is removed and the file at ``path`` is left as it was:
an OSError (a disk that filled, or turned read-only, after ``write_preflight.check_output_file``) is
one ``HarnessInputError`` (exit 2) naming the option and the path. Just before the rename
``write_preflight.check_regular_file`` is asked again, so a device, FIFO or folder at ``path`` (or
behind its symlink) is refused, never replaced by a regular file.

The new file gets the mode of the file it replaces, or, when there was none, ``0o666`` less the
umask, as ``open()`` would give it (``mkstemp`` alone makes it ``0o600``).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ragas_compat.errors import HarnessInputError
from ragas_compat.write_preflight import check_regular_file, os_error_reason


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it: set, then restore at once
    os.umask(mask)
    return mask


def file_mode(path: Path) -> int:
    """The permission bits a file written at ``path`` gets: those of the regular file there (through a
    symlink), else ``0o666`` less the umask."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        return stat.S_IMODE(info.st_mode) & 0o777  # its permissions, not a set-user-ID bit
    return 0o666 & ~_umask()


def _error(option: str, path: Path, exc: OSError, what: str) -> HarnessInputError:
    return HarnessInputError(f"{option} {path}: cannot write it ({os_error_reason(exc)}); {what}", field=option,
                             value=str(path))


def write_atomically(path: Path, text: str, option: str = "--out") -> None:
    """Write ``text`` to ``path`` through a unique temporary file in the same folder, fsync'ed, then renamed;
    HarnessInputError naming ``option`` and ``path`` (nothing half-written, no temporary file left) when it
    cannot be."""
    path = Path(path)
    folder = path.parent
    mode = file_mode(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _error(option, path, exc, "nothing was written") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        check_regular_file(path, option)
        os.replace(tmp, path)
    except OSError as exc:  # full or read-only meanwhile: the old file is left as it was
        Path(tmp).unlink(missing_ok=True)
        raise _error(option, path, exc, "the file there was left as it was") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
