"""The per-case budget of a probe (standard library only): judge calls, wall time, address space.

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
- memory: :func:`limit_address_space` sets the process's ``RLIMIT_AS``; a ``MemoryError`` in a case
  is that case's budget value (:func:`memory_value`).

Whose fault: an ``OverBudget`` is Ragas's behaviour (no ``origin``) when the code that looped or grew is
not the probe's; when the probe's own code (its scripted judge, its stubs) made the calls or was running
at the deadline, it is the harness's (``origin`` "harness").
"""

from __future__ import annotations

import asyncio
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
        if calls[0] > limit + book.scripted_prompts():  # the cap counts calls beyond the case's own prompts
            raise OverBudget("judge calls", calls[0], caller_origin(sys._getframe(1)))
        if size[0] > char_limit:
            raise OverBudget("prompt size", calls[0], caller_origin(sys._getframe(1)), size[0])
        return inner(prompt_text, n)

    book.answer_generations = answer_generations  # type: ignore[method-assign]
    return book


def memory_value(exc: MemoryError, calls: int, raised_by_probe: bool) -> ErrorValue:
    """The value of a case that ran out of address space (the harness's when the probe's code raised it)."""
    return OverBudget("memory", calls, HARNESS_ORIGIN if raised_by_probe else None).value()


def limit_address_space(limit: int | None) -> None:
    """Set this process's soft ``RLIMIT_AS`` to ``limit`` bytes (None: as high as the hard limit allows);
    nothing where the platform has no such limit."""
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = resource.RLIM_INFINITY if limit is None else limit
    if hard != resource.RLIM_INFINITY and (wanted == resource.RLIM_INFINITY or wanted > hard):
        wanted = hard
    if wanted != soft:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


T = t.TypeVar("T")


async def within_deadline(coroutine: t.Awaitable[T], on_over: t.Callable[[OverBudget], T],
                          seconds: float | None = None) -> T:
    """Await ``coroutine`` (one case's scoring) for at most ``seconds`` (default: the budget's), then
    stop it. ``on_over(exc)`` makes the result of a case stopped before it could make its own (an
    ``OverBudget`` it did not catch, or cancelled while awaiting). Tasks the case left behind are
    cancelled; a case over its budget leaves its garbage collected."""
    limit = BUDGET["case_seconds"] if seconds is None else seconds
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    before = asyncio.all_tasks(loop)
    task = loop.create_task(coroutine)  # type: ignore[arg-type]
    state = {"fired": False, "origin": None}
    alarm = hasattr(signal, "setitimer") and _main_thread()

    def on_alarm(signum: int, frame: types.FrameType | None) -> None:
        if task.done():
            return
        running = asyncio.current_task(loop)
        state["fired"] = True
        if running is None or running is me:  # the loop waits: the case is awaiting something that never comes
            loop.call_soon_threadsafe(task.cancel)
            return
        # a case running without giving the loop back: stop it where it is (again in 1 s if it swallowed it)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        state["origin"] = running_origin(frame)
        raise OverBudget("time", 0, state["origin"])

    previous = None
    if alarm:
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        if alarm:
            await asyncio.wait({task})  # the alarm stops it; no second timer
        else:
            await asyncio.wait({task}, timeout=limit)
            if not task.done():
                state["fired"] = True
                task.cancel()
                await asyncio.wait({task})
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    over = False
    try:
        value = task.result()
    except OverBudget as exc:
        value, over = on_over(exc), True
    except asyncio.CancelledError:
        if not state["fired"]:
            raise
        value, over = on_over(OverBudget("time", 0, state["origin"])), True
    for left in asyncio.all_tasks(loop) - before - {task}:
        left.cancel()
    if over or (isinstance(value, dict) and _is_budget(value)):
        await asyncio.sleep(0)
        gc.collect()
    return value


def _is_budget(result: dict) -> bool:
    value = result.get("value")
    return isinstance(value, dict) and isinstance(value.get("error"), dict) \
        and value["error"].get("type") == BUDGET_ERROR_TYPE


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
