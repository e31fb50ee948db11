"""Score in several processes that share one Ragas import: fork after the import (standard library only).

Importing Ragas is most of a small audit's time; scoring is the rest. ``run_forked(tasks)`` runs
``tasks[0]`` in this process and every other task in a child forked from it, so each child starts
with Ragas already imported (copy-on-write) and the children score at the same time on other cores.
A task returns JSON-able data; a child sends its data back through a file (``dump`` writes it,
``load`` reads it in the parent: JSON unless given). A child that fails (an exception, a crash, a
signal) makes ``run_forked`` raise ``WorkerFailed`` naming it; its traceback is on the shared stderr.

``Claims(count, shared=True)``, made before the fork, hands the units ``0..count-1`` out one at a time
to whichever process asks next (a counter in shared memory, under a lock): the workers take the next
unit as each finishes one, so none waits idle while another still has a queue of its own (a static
split leaves the faster worker idle whenever the other is slowed: a slow case, or a core taken by
another process).

Fork before any event loop or thread of our own exists (the probe forks right after the import;
Ragas's analytics thread is idle then and is not copied into the children).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
import traceback
import typing as t

EXIT_WORKER_FAILED = 70


class WorkerFailed(RuntimeError):
    pass


def _dump_json(result: t.Any, handle: t.TextIO) -> None:
    json.dump(result, handle, ensure_ascii=False)


def run_forked(tasks: t.Sequence[t.Callable[[], t.Any]], *,
               dump: t.Callable[[t.Any, t.TextIO], None] = _dump_json,
               load: t.Callable[[t.TextIO], t.Any] = json.load) -> list[t.Any]:
    """Every task's result, in task order (see the module docstring). A child's result goes through
    ``dump(result, handle)`` into a file the parent reads back with ``load(handle)`` (UTF-8 text, lines
    ending in "\\n" only); the first task's result, made here, is returned as it is."""
    if not hasattr(os, "fork") or len(tasks) <= 1:
        return [task() for task in tasks]
    folder = tempfile.mkdtemp(prefix="ragas-compat-workers-")
    children: list[tuple[int, int, str]] = []
    sys.stdout.flush()
    sys.stderr.flush()
    # keep the collector off the objects every process shares: traversing them would copy their pages.
    # They stay frozen (reference counting still frees them; only a cycle among them waits for the exit)
    gc.collect()
    gc.freeze()
    try:
        for index, task in enumerate(tasks[1:], start=1):
            path = os.path.join(folder, f"worker-{index}.json")
            pid = os.fork()
            if pid == 0:  # the child: run its task, hand the result over, never return
                code = 0
                try:
                    with open(path, "w", encoding="utf-8", newline="\n") as handle:
                        dump(task(), handle)
                except BaseException:
                    traceback.print_exc()
                    code = EXIT_WORKER_FAILED
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            children.append((index, pid, path))
        results: list[t.Any] = [tasks[0]()]
        lift_memory_limits()
        failures = []
        for index, pid, path in children:
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                failures.append(f"worker {index} (pid {pid}) exited with {code}")
                results.append(None)
                continue
            with open(path, encoding="utf-8", newline="\n") as handle:
                results.append(load(handle))
        children = []
        if failures:
            raise WorkerFailed("; ".join(failures))
        return results
    finally:
        for _, pid, _ in children:  # an exception in this process: leave no child behind
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        os.rmdir(folder)


def lift_memory_limits() -> None:
    """Raise this process's soft ``RLIMIT_DATA`` and ``RLIMIT_AS`` to their hard limits. A per-case
    memory budget (``budget.limit_memory``) is sized for one case on top of what the process held when
    the case started; reading the workers' results back is the probe's own bookkeeping, and for a large
    suite it needs more than one case's allowance (a 50,000-case run's worker results did not fit: a
    MemoryError in ``json.load``). The next case renews its budget (``budget.renew_memory_limit``)."""
    try:
        import resource
    except ImportError:
        return
    for which in (resource.RLIMIT_DATA, resource.RLIMIT_AS):
        soft, hard = resource.getrlimit(which)
        if soft != hard:
            resource.setrlimit(which, (hard, hard))


class Claims:
    """The units ``0..count-1``, each handed out once, in order, to whichever process calls ``next``
    first (see the module docstring). ``shared``: the counter is in anonymous shared memory and taken
    under a POSIX record lock (``lockf``, held per process), for processes forked after this is made;
    otherwise it is a plain counter of this process. ``close`` when every process is done."""

    def __init__(self, count: int, *, shared: bool) -> None:
        self.count = count
        self._local = 0
        self._memory: t.Any = None
        self._lock: t.Any = None
        if shared:
            import mmap

            self._memory = mmap.mmap(-1, 8)  # anonymous: MAP_SHARED, so the forked workers see one counter
            self._lock = tempfile.TemporaryFile()

    def next(self) -> int | None:
        """The next unit not yet handed out, or None when every unit has been."""
        if self._memory is None:
            unit, self._local = self._local, self._local + 1
        else:
            import fcntl

            fcntl.lockf(self._lock, fcntl.LOCK_EX)
            try:
                unit = int.from_bytes(self._memory[:8], "little")
                self._memory[:8] = (unit + 1).to_bytes(8, "little")
            finally:
                fcntl.lockf(self._lock, fcntl.LOCK_UN)
        return unit if unit < self.count else None

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._lock.close()
            self._memory = self._lock = None
