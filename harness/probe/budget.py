"""The per-case budget of a probe (standard library only): judge calls, wall time, memory.

A Ragas release that retries without end (0.2.0 asking a judge that never returns valid JSON to fix its
format again and again) or grows without bound must cost one result, not the process: the case stops
with a ``BudgetExceeded`` value ("Ragas did not finish (N judge calls / memory / time)") and the other
cases are scored.

- judge calls: :func:`cap_judge_calls` counts the calls of one (case, target)'s scripted judge and the
  characters of their prompts (0.2.0 nests each format-fix prompt, escaped, in the next: 21 calls reach
  gigabytes); the call past either cap raises :class:`OverBudget`, a ``BaseException`` so that no ``except Exception`` of a retry
  loop swallows it;
- time: :func:`within_deadline` scores one (case, target) with a ``SIGALRM`` deadline: a coroutine that
  does not give the event loop back (a retry loop against a judge that answers at once) gets
  ``OverBudget`` raised where it runs; an awaited case that never resumes is cancelled;
- memory: :func:`limit_memory` lets a case allocate the budget's ``memory`` bytes beyond what the
  probe holds when the case starts (``RLIMIT_DATA``, renewed by :func:`within_deadline` for each
  case and target; ``RLIMIT_AS`` as a backstop); a ``MemoryError`` in a case is that case's budget value
  (:func:`memory_value`).

Whose fault: an ``OverBudget`` is Ragas's behaviour (no ``origin``) when the code that looped or grew is
not the probe's; when the probe's own code (its scripted judge, its stubs) made the calls or was running
at the deadline, it is the harness's (``origin`` "harness").
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import signal
import sys
import types
import typing as t

from .protocol import (
    BUDGET_ERROR_TYPE,
    DEFAULT_BUDGET,
    HARNESS_ORIGIN,
    Budget,
    ErrorValue,
    budget_message,
    encode_error,
)

_PROBE_FOLDER = os.path.dirname(os.path.abspath(__file__))
# the probe's judge layer: its frames are skipped when finding who called the judge
_JUDGE_FOLDERS = tuple(os.path.join(_PROBE_FOLDER, name) + os.sep for name in ("stubs", "judge"))

BUDGET: Budget = dict(DEFAULT_BUDGET)  # type: ignore[assignment]  # the request being served (set_budget)


def set_budget(budget: Budget) -> None:
    """The budget of the request being served (inherited by forked workers)."""
    BUDGET.clear()
    BUDGET.update(budget)


class OverBudget(BaseException):
    """A case went over its budget; ``what`` is "judge calls", "memory" or "time"."""

    def __init__(self, what: str, calls: int = 0, origin: str | None = None, chars: int = 0) -> None:
        super().__init__(what)
        self.what, self.calls, self.origin, self.chars = what, calls, origin, chars

    def value(self, calls: int | None = None) -> ErrorValue:
        """The case's value: a ``BudgetExceeded`` error (``calls``: the judge calls made, when known better)."""
        made = self.calls if calls is None else max(calls, self.calls)
        return encode_error(BUDGET_ERROR_TYPE, budget_message(self.what, BUDGET, made, self.chars), self.origin)


def _in_probe(filename: str) -> bool:
    folder = os.path.dirname(os.path.abspath(filename)) + os.sep
    return folder.startswith(_PROBE_FOLDER + os.sep)


def _in_judge(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_JUDGE_FOLDERS) or os.path.abspath(filename) == __file__


def caller_origin(frame: types.FrameType | None) -> str | None:
    """Whose code called the probe's judge: the first frame outside its judge layer (stubs, judge,
    this module), walking outwards from ``frame``. The probe's own code: "harness"; anything else (Ragas,
    the library it calls, the class under test): None."""
    while frame is not None and _in_judge(frame.f_code.co_filename):
        frame = frame.f_back
    return HARNESS_ORIGIN if frame is not None and _in_probe(frame.f_code.co_filename) else None


def running_origin(frame: types.FrameType | None) -> str | None:
    """Whose code was running when the deadline came: "harness" when the innermost frame is the probe's
    (its judge matching a prompt, say), else None (Ragas's)."""
    return HARNESS_ORIGIN if frame is not None and _in_probe(frame.f_code.co_filename) else None


class _Book(t.Protocol):
    asked: list

    def answer_generations(self, prompt_text: str, n: int) -> list[str]: ...

    def scripted_prompts(self) -> int: ...


def cap_judge_calls(book: _Book, cap: int | None = None, chars: int | None = None) -> _Book:
    """``book`` (a ``PromptBook``) answering at most ``cap`` calls more than the prompts the case's script
    holds (a case with 60 contexts asks 60 prompts legitimately; a retry loop asks beyond them), and
    ``chars`` prompt characters in all
    (defaults: the budget's); the call past either raises :class:`OverBudget` (before the book parses
    the prompt) with the origin of the code that called. Every judge answer goes through
    ``answer_generations``, so the instance's is wrapped."""
    limit = BUDGET["judge_calls"] if cap is None else cap
    char_limit = BUDGET["judge_chars"] if chars is None else chars
    inner = book.answer_generations
    calls, size = [0], [0]

    def answer_generations(prompt_text: str, n: int) -> list[str]:
        calls[0] += 1
        size[0] += len(prompt_text)
        # the cap counts calls beyond the case's own prompts (counted only past ``limit``: never fewer than 0)
        if calls[0] > limit and calls[0] > limit + book.scripted_prompts():
            raise OverBudget("judge calls", calls[0], caller_origin(sys._getframe(1)))
        if size[0] > char_limit:
            raise OverBudget("prompt size", calls[0], caller_origin(sys._getframe(1)), size[0])
        return inner(prompt_text, n)

    book.answer_generations = answer_generations  # type: ignore[method-assign]
    return book


def memory_value(exc: MemoryError, calls: int, raised_by_probe: bool) -> ErrorValue:
    """The value of a case that ran out of memory (the harness's when the probe's code raised it)."""
    return OverBudget("memory", calls, HARNESS_ORIGIN if raised_by_probe else None).value()


# address space that may be reserved and never touched, on top of what a case may allocate: malloc
# arenas (64 MiB each, up to 8 a core), thread stacks; the backstop for memory RLIMIT_DATA does not count
RESERVATIONS = 2 * 2**30

_ALLOWANCE: list[int | None] = []  # limit_memory's allowance: renew_memory_limit applies it again


def process_sizes() -> tuple[int, int] | None:
    """This process's ``(data size, address space)`` in bytes (``/proc/self/statm``: its data field is
    the private writable memory ``RLIMIT_DATA`` counts, plus the main stack); None where there is none."""
    try:
        fields = os.pread(_statm(), 4096, 0).split()
        return int(fields[5]) * _PAGE[0], int(fields[0]) * _PAGE[0]
    except (OSError, ValueError, IndexError):
        return None


_STATM: dict[int, int] = {}  # pid -> its /proc/self/statm, opened once (a forked worker opens its own)
_PAGE: list[int] = []


def _statm() -> int:
    """This process's ``/proc/self/statm``, kept open: read again from its start it gives the sizes now
    (about 0.7 us a read against 5 us for open, read and close each case). The file opened by the
    process that forked this one names that process, so each process opens its own."""
    pid = os.getpid()
    fd = _STATM.get(pid)
    if fd is None:
        if not _PAGE:
            _PAGE.append(os.sysconf("SC_PAGE_SIZE"))
        fd = _STATM[pid] = os.open("/proc/self/statm", os.O_RDONLY)
    return fd


def limit_memory(allowance: int | None) -> None:
    """Let this process allocate at most ``allowance`` bytes more than it holds now (None: no limit but
    the hard ones); :func:`within_deadline` renews it at the start of each (case, target)
    (:func:`renew_memory_limit`), so each case may allocate ``allowance`` and a long run may grow
    with its results. Called once Ragas is imported: the import is not a case. A case that allocates
    past it gets a ``MemoryError`` (:func:`memory_value`).

    - ``RLIMIT_DATA`` at the data size plus ``allowance``: Linux 4.7 and later count every private
      writable mapping in it, not the files of libraries nor reserved-but-inaccessible memory, so it
      follows resident memory (``RLIMIT_AS`` does not: after Ragas's import the address space is about
      1.6 GB for about 0.2 GB resident; a 4 GiB address space let a case touch 2.4 GB);
    - ``RLIMIT_AS`` at the address space plus ``allowance`` and :data:`RESERVATIONS`: a backstop for
      memory ``RLIMIT_DATA`` does not count (shared anonymous mappings).

    Nothing where the sizes cannot be read (no ``/proc/self/statm``) or there are no such limits;
    never above the hard limits."""
    _ALLOWANCE[:] = [allowance]
    renew_memory_limit()


def renew_memory_limit() -> None:
    """Set the limits of :func:`limit_memory` again from this process's sizes now (nothing before
    ``limit_memory`` was called)."""
    try:
        import resource
    except ImportError:
        return
    sizes = process_sizes() if _ALLOWANCE else None
    if sizes is None:
        return
    allowance = _ALLOWANCE[0]
    data, space = sizes
    for which, wanted in ((resource.RLIMIT_DATA, None if allowance is None else data + allowance),
                          (resource.RLIMIT_AS, None if allowance is None else space + allowance + RESERVATIONS)):
        soft, hard = resource.getrlimit(which)
        limit = resource.RLIM_INFINITY if wanted is None else wanted
        if hard != resource.RLIM_INFINITY and (limit == resource.RLIM_INFINITY or limit > hard):
            limit = hard
        if limit != soft:
            resource.setrlimit(which, (limit, hard))


T = t.TypeVar("T")


async def within_deadline(coroutine: t.Awaitable[T], on_over: t.Callable[[OverBudget], T],
                          seconds: float | None = None) -> T:
    """Await ``coroutine`` (one case's scoring) for at most ``seconds`` (default: the budget's), then
    stop it (:meth:`Deadlines.run`, for this one case)."""
    with Deadlines(seconds) as deadlines:
        return await deadlines.run(coroutine, on_over)


class _InContext:
    """Awaits ``coroutine`` in the awaiting task, each of its steps run in ``context``: what a task of its own
    gives a case (its context variables stay its own, and the tasks it starts copy them) without a task's
    scheduling (a task of its own per pair, awaited with ``asyncio.wait``, cost about 1.5% of the fuzz
    bench's time with one worker, docs/bench.md)."""

    __slots__ = ("context", "coroutine")

    def __init__(self, coroutine: t.Any, context: contextvars.Context) -> None:
        self.coroutine, self.context = coroutine, context

    def __await__(self) -> t.Generator[t.Any, t.Any, t.Any]:
        run, send, throw = self.context.run, self.coroutine.send, self.coroutine.throw
        value: t.Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = run(send, value) if error is None else run(throw, error)
            except StopIteration as stop:
                return stop.value
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # thrown into the awaiting task (a cancellation): the case's to handle
                value, error = None, exc


class Deadlines:
    """The deadline of each of a series of cases scored one after another (``with Deadlines() as d:`` then
    ``await d.run(case, on_over)`` per case): its ``SIGALRM`` handler is installed once for the series,
    its timer set for each case and stopped when the case ends (between cases no timer runs, and a
    signal that comes then finds no case to stop). A case runs in the awaiting task, in a context of its
    own (:class:`_InContext`); where no alarm can be set (not the main thread), in a task of its own that
    is cancelled at the deadline."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds
        self.alarm = hasattr(signal, "setitimer") and _main_thread()
        self.previous: t.Any = None
        self.case: tuple[dict, asyncio.AbstractEventLoop, asyncio.Task | None] | None = None

    def __enter__(self) -> Deadlines:
        if self.alarm:
            self.previous = signal.signal(signal.SIGALRM, self._on_alarm)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)

    def _on_alarm(self, signum: int, frame: types.FrameType | None) -> None:
        if self.case is None:
            return
        state, loop, _ = self.case
        running = asyncio.current_task(loop)
        state["fired"] = True
        if running is None:  # the loop waits: the case is awaiting something that never comes
            loop.call_soon_threadsafe(self._cancel, state)
            return
        # a case running without giving the loop back: stop it where it is (again in 1 s if it swallowed it)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        state["origin"] = running_origin(frame)
        raise OverBudget("time", 0, state["origin"])

    def _cancel(self, state: dict) -> None:
        """Cancel the task awaiting the case, if that case (``state``) is still the one running: the
        cancellation is thrown in where the case awaits (again in 1 s if it swallowed it)."""
        if self.case is None or self.case[0] is not state or self.case[2] is None:
            return
        state["cancelled"] += 1
        self.case[2].cancel()
        signal.setitimer(signal.ITIMER_REAL, 1.0)

    async def run(self, coroutine: t.Awaitable[T], on_over: t.Callable[[OverBudget], T]) -> T:
        """Await ``coroutine`` (one case's scoring) for at most the series' ``seconds`` (default: the
        budget's), then stop it. ``on_over(exc)`` makes the result of a case stopped before it could make
        its own (an ``OverBudget`` it did not catch, or cancelled while awaiting). Tasks the case left
        behind are cancelled; a case over its budget leaves its garbage collected."""
        limit = BUDGET["case_seconds"] if self.seconds is None else self.seconds
        renew_memory_limit()  # the case may allocate the budget's memory beyond what the probe holds now
        loop = asyncio.get_running_loop()
        before = asyncio.all_tasks(loop)
        state: dict = {"fired": False, "origin": None, "cancelled": 0}
        over = False
        try:
            value = await (self._alarmed(coroutine, limit, loop, state) if self.alarm
                           else self._timed(coroutine, limit, state))
        except OverBudget as exc:
            value, over = on_over(exc), True
        except asyncio.CancelledError:
            if not state["fired"]:
                raise
            value, over = on_over(OverBudget("time", 0, state["origin"])), True
        for left in asyncio.all_tasks(loop) - before:
            left.cancel()
        if over or (isinstance(value, dict) and _is_budget(value)):
            await asyncio.sleep(0)
            gc.collect()
        return value

    async def _alarmed(self, coroutine: t.Awaitable[T], limit: float, loop: asyncio.AbstractEventLoop,
                       state: dict) -> T:
        me = asyncio.current_task()
        self.case = (state, loop, me)
        try:
            signal.setitimer(signal.ITIMER_REAL, limit)
            return await _InContext(coroutine, contextvars.copy_context())
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.case = None
            # the cancellations were the deadline's, not the caller's, whether the case gave up or swallowed
            # them and returned (Python 3.11+ counts them on the task)
            for _ in range(state["cancelled"] if me is not None and hasattr(me, "uncancel") else 0):
                me.uncancel()

    async def _timed(self, coroutine: t.Awaitable[T], limit: float, state: dict) -> T:
        task = asyncio.ensure_future(coroutine)
        await asyncio.wait({task}, timeout=limit)
        if not task.done():
            state["fired"] = True
            task.cancel()
            await asyncio.wait({task})
        return task.result()


def _is_budget(result: dict) -> bool:
    value = result.get("value")
    return isinstance(value, dict) and isinstance(value.get("error"), dict) \
        and value["error"].get("type") == BUDGET_ERROR_TYPE


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def exit_without_teardown(exit_code: int) -> t.NoReturn:
    """End a probe whose output is written: skip the interpreter's teardown with Ragas loaded (about
    0.7 s), unless a profiler or coverage runs (they write at teardown)."""
    if sys.getprofile() is None and sys.gettrace() is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_code)
    sys.exit(exit_code)
