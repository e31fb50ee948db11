"""Check, before any work (and before any judge is paid), that an output can be written.

``check_output_file(path)`` for a writer of one file (``import``, ``record``, a blessed expectations
file) and ``check_output_folder(folder)`` for a writer of a folder (reports, a cache) raise one
``HarnessInputError`` (exit 2, one line naming the path and the reason) when:

- the path (or what its symlink points at) is a folder, a FIFO, a character or block device (a
  ``--out`` symlinked to ``/dev/zero``) or a socket, where a regular file should be;
- the folder that would hold it is not a folder, is read-only (``EROFS``, ``EACCES``), or is full:
  a probe file of ``PROBE_BYTES`` is written, fsync'ed and removed there, so ``ENOSPC`` and
  ``EDQUOT`` show now rather than after the work.

A folder that does not exist yet is not created: the nearest existing ancestor is probed instead
(the writer creates the rest), so a refused check leaves nothing behind.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from ragas_compat.errors import HarnessInputError

PROBE_BYTES = 64 * 1024

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_REASONS = {errno.EROFS: "the file system is read-only", errno.ENOSPC: "the file system is full",
            errno.EDQUOT: "the disk quota is exhausted", errno.EACCES: "permission denied",
            errno.EPERM: "permission denied"}


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _reason(exc: OSError) -> str:
    return _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def _existing_ancestor(folder: Path) -> Path:
    current = folder
    while not os.path.lexists(current) and current != current.parent:
        current = current.parent
    return current


def _probe_folder(folder: Path, shown: Path, option: str) -> None:
    """Write, fsync and remove ``PROBE_BYTES`` in ``folder`` (an existing folder)."""
    try:
        info = os.stat(folder)
    except OSError as exc:
        raise HarnessInputError(f"{option} {shown}: cannot use the folder {folder} ({_reason(exc)})",
                                field=option, value=str(shown)) from None
    if not stat.S_ISDIR(info.st_mode):
        raise HarnessInputError(f"{option} {shown}: {folder} is {_kind(info.st_mode)}, not a folder",
                                field=option, value=str(shown))
    try:
        fd, name = tempfile.mkstemp(prefix=".ragas-compat-write-check.", dir=folder)
    except OSError as exc:
        raise HarnessInputError(f"{option} {shown}: cannot write in {folder} ({_reason(exc)})",
                                field=option, value=str(shown)) from None
    try:
        block = b"\0" * PROBE_BYTES
        written = 0
        while written < PROBE_BYTES:
            written += os.write(fd, block[written:])
        os.fsync(fd)
    except OSError as exc:
        raise HarnessInputError(f"{option} {shown}: cannot write in {folder} ({_reason(exc)})",
                                field=option, value=str(shown)) from None
    finally:
        os.close(fd)
        try:
            os.unlink(name)
        except OSError:
            pass


def check_output_file(path: str | Path, option: str = "--out") -> None:
    """HarnessInputError (exit 2) unless a regular file can be written (atomically replaced) at ``path``."""
    path = Path(path)
    try:
        info = os.stat(path)  # follows a symlink: what would a reader of the path see
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise HarnessInputError(f"{option} {path}: cannot inspect it ({_reason(exc)})", field=option,
                                value=str(path)) from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        via = f" (a symlink to {os.path.realpath(path)})" if path.is_symlink() else ""
        raise HarnessInputError(f"{option} {path}: is {_kind(info.st_mode)}{via}, not a regular file; "
                                "choose another path", field=option, value=str(path))
    parent = path.parent if str(path.parent) else Path(".")
    _probe_folder(_existing_ancestor(parent), path, option)


def check_output_folder(folder: str | Path, option: str = "--out") -> None:
    """HarnessInputError (exit 2) unless files can be written into ``folder`` (or the folders that
    would be created to hold it)."""
    folder = Path(folder)
    _probe_folder(_existing_ancestor(folder), folder, option)
