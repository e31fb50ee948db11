"""Publish a set of report files atomically: a reader sees the old set or the new set, never a mix.

``write_reports_atomically(folder, files)`` writes the set ``name`` (by default the stem most of the
file names share: ``report`` for report.md / report.json / junit.xml, ``fuzz``, ``matrix``) as

    folder/report.md   -> .report-set/report.md     (relative symlinks, made once, then left alone)
    folder/report.json -> .report-set/report.json
    folder/junit.xml   -> .report-set/junit.xml
    folder/.report-set -> .report-set.<hash>        (the pointer)
    folder/.report-set.<hash>/report.md ...         (the generation: the files themselves)

so that readers keep reading ``folder/report.md`` and friends, and publishing a new set is one
``rename(2)`` of a new pointer over the old one, which POSIX makes atomic. ``<hash>`` is a hash of
the names and contents: publishing identical reports changes nothing on disk (a committed reports
folder shows no diff).

The steps, under an exclusive ``fcntl.flock`` on ``folder/.report-set.lock`` (a concurrent writer on the
same folder waits up to ``LOCK_WAIT_SECONDS``, the time to write a set, then refuses with exit 2):

1. stage: every file into ``.report-set.tmp-<random>`` (a file given as chunks of text is written as
   they come, never held whole), renamed to ``.report-set.<hash>`` when complete;
2. check: each name in ``folder`` is absent, a regular file or a symlink (a folder in the way is an
   error with exit 2 and the old set untouched);
3. publish: the pointer swapped by rename; a name that is not yet the symlink (a regular file from an
   older ragas-compat, or a first publication) is replaced by it, one rename each: only then, once,
   is a publication file by file;
4. clean: the previous generation, anything left by an earlier crash, the lock file.

SIGINT and SIGTERM arriving while this runs in the main thread are held back until it is done (and
then delivered), except while waiting for the lock: an interrupted run leaves the old set or the new
one, and no staging folder, link or lock file. Any failure removes what this call created.
"""

from __future__ import annotations

import fcntl
import gc
import hashlib
import os
import secrets
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ragas_compat.errors import HarnessInputError
from ragas_compat.write_preflight import check_output_folder

LOCK_WAIT_SECONDS = 30.0
_POLL_SECONDS = 0.05


def set_name(names: list[str] | tuple[str, ...]) -> str:
    """The default name of a set of files: the stem most of them share (``report`` for report.md,
    report.json and junit.xml); ties go to the alphabetically first."""
    stems = Counter(name.split(".", 1)[0] or name for name in names)
    return sorted(stems.items(), key=lambda item: (-item[1], item[0]))[0][0]


def write_reports_atomically(folder: Path, files: Mapping[str, str | Iterable[str]], *,
                             name: str | None = None, first_apart: bool = False) -> list[Path]:
    """Publish ``files`` (file name -> text, or the text's chunks in order, written as they come; UTF-8)
    as one set in ``folder`` and return their paths there. ``first_apart``: the first file is made and
    written by a forked child while this process writes the others (``_Apart``; two cores render a
    report set in the time of its largest file), where a fork is safe (POSIX, no other thread).
    HarnessInputError (exit 2) when the folder cannot be created or written, something is in the way,
    or another process holds the folder's lock for too long; the previous set is then left as it was."""
    folder = Path(folder)
    names = list(files)
    if not names or any(not n or n in (".", "..") or "/" in n or n.startswith(".") for n in names):
        raise ValueError(f"report file names must be plain, visible file names: {names!r}")
    name = name or set_name(names)
    _make_folder(folder)
    with signals_held() as pending, _locked(folder, f".{name}-set.lock", pending):
        _Publication(folder, name, files, first_apart=first_apart).run()
    return [folder / n for n in names]


def check_writable(folder: Path, names: tuple[str, ...] | list[str] = ()) -> None:
    """Fail early (before any work) when reports could not be written into ``folder``, or when one of
    ``names`` there is in the way (a folder, a device...). A folder that does not exist yet is not created
    here (its nearest existing parent is tried): the writer creates it with the reports."""
    folder = Path(folder)
    check_output_folder(folder)  # read-only, full or not a folder: exit 2 now, nothing created
    existing = folder  # tried where it will be created, not created yet: a run that stops before its reports
    while not existing.exists() and existing.parent != existing:  # leaves no empty folder behind
        existing = existing.parent
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".write-check.", delete=True):
            pass
    except OSError as exc:
        raise HarnessInputError(f"--out {folder}: not writable: cannot write in it ({exc.strerror or exc})",
                                field="--out") from None
    _check_in_the_way(folder, names)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HarnessInputError(f"--out {folder}: not writable: cannot create it ({exc.strerror or exc})",
                                field="--out") from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _check_in_the_way(folder: Path, names: tuple[str, ...] | list[str], pointer: str | None = None) -> None:
    """HarnessInputError naming the first of ``names`` (each must be absent, a regular file or a
    symlink) or of ``pointer`` (absent or a symlink) that something else occupies."""
    for entry, allowed in [(n, (stat.S_ISREG, stat.S_ISLNK)) for n in names] + \
                          ([(pointer, (stat.S_ISLNK,))] if pointer else []):
        try:
            mode = os.lstat(folder / entry).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise HarnessInputError(f"output folder {folder}: cannot inspect {entry} ({exc.strerror})",
                                    field="--out") from None
        if not any(test(mode) for test in allowed):
            kind = "a regular file" if stat.S_ISREG(mode) else _kind(mode)
            raise HarnessInputError(f"output folder {folder}: {entry} is {kind}, in the way of the reports; "
                                    f"move it away or choose another --out; the reports there were left as they were",
                                    field="--out", value=str(folder / entry))


class _SignalPending(Exception):
    """Raised inside ``signals_held`` to stop waiting when SIGINT or SIGTERM arrived meanwhile."""


@contextmanager
def signals_held() -> Iterator[list[int]]:
    """Hold SIGINT and SIGTERM back (main thread only; not those that are ignored) and deliver them at
    the end. Yields the list of signals received so far, for loops that should stop waiting."""
    pending: list[int] = []
    previous: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(sig)
            if handler in (signal.SIG_IGN, None):
                continue
            previous[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
    stopped = False
    try:
        yield pending
    except _SignalPending:
        stopped = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            signal.raise_signal(pending[0])
    if stopped:  # the signal's handler did not raise, but the reports were not written
        raise HarnessInputError("interrupted before the reports could be written", field="--out")


@contextmanager
def _locked(folder: Path, lock_name: str, pending: list[int]) -> Iterator[None]:
    """An exclusive flock on ``folder/lock_name``, created for the purpose and removed afterwards.

    A lock file can be removed by the holder we waited for: after locking, the path must still name
    the locked file, otherwise lock the new one."""
    path = folder / lock_name
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise HarnessInputError(f"output folder {folder}: cannot create the lock file {lock_name} "
                                    f"({exc.strerror})", field="--out") from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if pending:
                        raise _SignalPending() from None
                    if time.monotonic() >= deadline:
                        raise HarnessInputError(
                            f"output folder {folder}: another ragas-compat process has been writing its reports "
                            f"for {LOCK_WAIT_SECONDS:g} s (it holds {lock_name}); wait for it to finish or choose "
                            f"another --out", field="--out") from None
                    time.sleep(_POLL_SECONDS)
            try:
                current = os.stat(path)
                mine = os.fstat(fd)
                same = (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino)
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


class _Publication:
    """One call of ``write_reports_atomically``, under the lock, signals held."""

    def __init__(self, folder: Path, name: str, files: Mapping[str, str | Iterable[str]], *,
                 first_apart: bool = False) -> None:
        self.folder = folder
        self.files = files
        self.first_apart = first_apart
        self.pointer = f".{name}-set"
        self.prefix = f".{name}-set."
        self.lock = f".{name}-set.lock"
        self.created: list[Path] = []  # removed whatever happens
        self.generation: str | None = None

    def run(self) -> None:
        try:
            self._check()
            self._stage()
            self._publish()
        finally:
            for path in self.created:
                _remove(path)
        self._clean()

    def _fail(self, action: str, exc: OSError, *, intact: bool = True) -> HarnessInputError:
        return HarnessInputError(f"output folder {self.folder}: cannot {action} ({exc.strerror or exc})"
                                 + ("; the reports there were left as they were" if intact else ""), field="--out")

    def _check(self) -> None:
        _check_in_the_way(self.folder, list(self.files), self.pointer)

    def _stage(self) -> None:
        """Write every file into a staging folder, chunk by chunk (a report given as an iterable of
        text is never held whole), then name the generation by the hash of what was written."""
        staging = self.folder / f"{self.prefix}tmp-{secrets.token_hex(6)}"
        try:
            staging.mkdir()
            self.created.append(staging)
            items = list(self.files.items())
            apart = _Apart.start(staging / items[0][0], items[0][1]) \
                if self.first_apart and len(items) > 1 and _Apart.safe() else None
            try:
                for file, text in sorted(items[1:] if apart else items):
                    _write_text(staging / file, text)
            finally:
                if apart is not None:
                    apart.wait()  # raises what the child met (an OSError as one)
            self.generation = self.prefix + _set_digest(staging, sorted(self.files))[:16]
            target = self.folder / self.generation
            if self._target() == self.generation and target.is_dir():
                return  # the same set is published already: nothing to swap (staging is removed)
            if os.path.lexists(target):  # a leftover of an interrupted or killed earlier run
                _remove(target)
            staging.rename(target)
        except OSError as exc:
            raise self._fail("write the reports", exc) from None
        self.created = [target]  # until the pointer names it

    def _target(self) -> str | None:
        try:
            return os.readlink(self.folder / self.pointer)
        except OSError:
            return None

    def _symlink(self, target: str, at: str) -> None:
        """Make ``at`` a symlink to ``target`` with one rename (atomic replacement)."""
        link = self.folder / f"{self.prefix}link-{secrets.token_hex(6)}"
        os.symlink(target, link)
        self.created.append(link)
        os.replace(link, self.folder / at)
        self.created.remove(link)

    def _publish(self) -> None:
        assert self.generation is not None
        swapped = False
        try:
            if self._target() != self.generation:
                self._symlink(self.generation, self.pointer)
                self.created = [p for p in self.created if p.name != self.generation]
            swapped = True
            for file in self.files:
                wanted = f"{self.pointer}/{file}"
                try:
                    current = os.readlink(self.folder / file)
                except OSError:
                    current = None
                if current != wanted:
                    self._symlink(wanted, file)
        except OSError as exc:
            raise self._fail("publish the reports", exc, intact=not swapped) from None

    def _clean(self) -> None:
        """Everything of this set but the pointer, the published generation and the lock: the previous
        generation and leftovers of interrupted or killed runs (only this process writes now)."""
        keep = {self.pointer, self.lock, self._target()}
        try:
            entries = os.listdir(self.folder)
        except OSError:
            return
        for entry in entries:
            if entry.startswith(self.prefix) and entry not in keep:
                _remove(self.folder / entry)


def _write_text(path: Path, text: str | Iterable[str]) -> None:
    """``text`` (one string, or its chunks in order) as UTF-8 at ``path``."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        if isinstance(text, str):
            handle.write(text)
        else:
            handle.writelines(text)


class _Apart:
    """One file made and written by a forked child (``write_reports_atomically(first_apart=True)``).
    The child shares nothing back but its exit status and, on failure, what it met: an OSError as
    ``errno`` and message (the parent raises it again: "cannot write the reports", exit 2), anything else
    as its traceback (the parent raises RuntimeError with it: an internal error)."""

    def __init__(self, pid: int, reader: int, path: Path) -> None:
        self.pid, self.reader, self.path = pid, reader, path

    @staticmethod
    def safe() -> bool:
        """Can this process fork here without risk: POSIX, and no other thread (a lock another thread
        holds would stay held in the child)."""
        return hasattr(os, "fork") and threading.active_count() == 1

    @classmethod
    def start(cls, path: Path, text: str | Iterable[str]) -> _Apart:
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: write, say how it went, end without the parent's exit handlers
            status = 0
            try:
                os.close(reader)
                gc.disable()  # a short life: a collection would touch (and so copy) every page it shares
                _write_text(path, text)
            except OSError as exc:
                status = 1
                _send(writer, f"OSError\t{exc.errno or 0}\t{exc.strerror or exc}")
            except BaseException:  # reported to the parent, which raises it
                import traceback

                status = 1
                _send(writer, "error\t" + traceback.format_exc())
            finally:
                os._exit(status)
        os.close(writer)
        return cls(pid, reader, path)

    def wait(self) -> None:
        chunks = []
        while block := os.read(self.reader, 1 << 16):
            chunks.append(block)
        os.close(self.reader)
        _, status = os.waitpid(self.pid, 0)
        if status == 0:
            return
        kind, _, detail = b"".join(chunks).decode("utf-8", errors="replace").partition("\t")
        if kind == "OSError":
            number, _, message = detail.partition("\t")
            raise OSError(int(number) if number.isdigit() else 0, message)
        raise RuntimeError(f"writing {self.path.name} in a child process failed "
                           f"(exit status {os.waitstatus_to_exitcode(status)}): "
                           f"{detail or 'no report'}")


def _send(fd: int, text: str) -> None:
    data = text.encode("utf-8", errors="replace")
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass


def _set_digest(folder: Path, files: list[str]) -> str:
    """SHA-256 over each file of the set in name order as ``<len(name)>:<name>:<len(bytes)>:<bytes>``,
    read back from ``folder`` in blocks (the hash names the generation: same names and bytes, same name)."""
    digest = hashlib.sha256()
    for file in files:
        path = folder / file
        digest.update(f"{len(file)}:{file}:{path.stat().st_size}:".encode())
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass
