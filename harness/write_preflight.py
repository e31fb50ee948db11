"""Check, before any work (and before any judge is paid), that an output can be written.

``check_output_file(path)`` for a writer of one file (``import``, ``record``, a blessed expectations file,
``bench --json``; each then writes it with ``ragas_compat.atomic_file.write_atomically``) and
``check_output_folder(folder)`` for a writer of a folder (reports, a cache) raise one
``HarnessInputError`` (exit 2) when:

- the path (or what its symlink points at) is a folder, a FIFO, a character or block device (a
  ``--out`` symlinked to ``/dev/zero``) or a socket, where a regular file should be;
- the folder that would hold it is not a folder, is read-only (``EROFS``, ``EACCES``), or is full:
  a probe file of ``PROBE_BYTES`` is written, fsync'ed and removed there, so ``ENOSPC`` and
  ``EDQUOT`` show now rather than after the work.

A folder that does not exist yet is not created: the nearest existing ancestor is probed instead
(the writer creates the rest), so a refused check leaves nothing behind.

Every refusal is one line of one shape, the option, the path given, "not writable", then what cannot be
done and the reason: ``--out /proc/x: not writable: cannot create it in /proc (No such file or
directory)``, ``--out /mnt/full/c.json: not writable: cannot write in /mnt/full (the file system is
full)``, ``--out a.json: not writable: it is a folder, not a regular file; choose another path``.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from ragas_compat.errors import HarnessInputError

PROBE_BYTES = 64 * 1024

_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_REASONS = {errno.EROFS: "the file system is read-only", errno.ENOSPC: "the file system is full",
            errno.EDQUOT: "the disk quota is exhausted", errno.EACCES: "permission denied",
            errno.EPERM: "permission denied"}


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def os_error_reason(exc: OSError) -> str:
    """The words a refusal gives an OSError: "the file system is full" for ``ENOSPC``, else its strerror."""
    return _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def _existing_ancestor(folder: Path) -> Path:
    current = folder
    while not os.path.lexists(current) and current != current.parent:
        current = current.parent
    return current


def _refused(option: str, shown: Path, what: str) -> HarnessInputError:
    """The one line of every refusal: ``<option> <path>: not writable: <what>``."""
    return HarnessInputError(f"{option} {shown}: not writable: {what}", field=option, value=str(shown))


def _probe_folder(folder: Path, shown: Path, option: str, creating: str | None = None) -> None:
    """Write, fsync and remove ``PROBE_BYTES`` in ``folder`` (an existing folder). ``creating`` names
    what the writer would create there (the output folder, or the output file's folder), when it
    does not exist yet."""
    try:
        info = os.stat(folder)
    except OSError as exc:
        raise _refused(option, shown, f"cannot use the folder {folder} ({os_error_reason(exc)})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise _refused(option, shown, f"{folder} is {_kind(info.st_mode)}, not a folder")
    cannot = f"cannot create {creating} in {folder}" if creating else f"cannot write in {folder}"
    try:
        fd, name = tempfile.mkstemp(prefix=".ragas-compat-write-check.", dir=folder)
    except OSError as exc:
        raise _refused(option, shown, f"{cannot} ({os_error_reason(exc)})") from None
    try:
        block = b"\0" * PROBE_BYTES
        written = 0
        while written < PROBE_BYTES:
            written += os.write(fd, block[written:])
        os.fsync(fd)
    except OSError as exc:
        raise _refused(option, shown, f"{cannot} ({os_error_reason(exc)})") from None
    finally:
        os.close(fd)
        try:
            os.unlink(name)
        except OSError:
            pass


def check_regular_file(path: str | Path, option: str = "--out") -> None:
    """HarnessInputError (exit 2) unless ``path`` is absent or a regular file (a symlink: what it points at).
    ``check_output_file`` asks it before the work, and ``atomic_file.write_atomically`` again just before
    its rename, so a device, FIFO or folder found there is refused, never replaced by a regular file."""
    path = Path(path)
    try:
        info = os.stat(path)  # follows a symlink: what would a reader of the path see
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _refused(option, path, f"cannot inspect it ({os_error_reason(exc)})") from None
    if not stat.S_ISREG(info.st_mode):
        via = f" (a symlink to {os.path.realpath(path)})" if path.is_symlink() else ""
        raise _refused(option, path, f"it is {_kind(info.st_mode)}{via}, not a regular file; choose another path")


def check_output_file(path: str | Path, option: str = "--out") -> None:
    """HarnessInputError (exit 2) unless a regular file can be written (atomically replaced) at ``path``."""
    path = Path(path)
    check_regular_file(path, option)
    parent = path.parent if str(path.parent) else Path(".")
    ancestor = _existing_ancestor(parent)
    _probe_folder(ancestor, path, option, creating=None if ancestor == parent else "its folder")


def check_output_folder(folder: str | Path, option: str = "--out") -> None:
    """HarnessInputError (exit 2) unless files can be written into ``folder`` (or the folders that
    would be created to hold it)."""
    folder = Path(folder)
    ancestor = _existing_ancestor(folder)
    _probe_folder(ancestor, folder, option, creating=None if ancestor == folder else "it")
