"""Ragas's telemetry per scored row: the events a legacy class queues for Ragas's analytics while one row is
scored (standard library only; Ragas is imported by the caller).

From 0.2.7 (ragas#1716) ``single_turn_score`` / ``single_turn_ascore`` / the multi-turn pair add an
``EvaluationEvent`` (metric name, evaluation type, one row) to ``ragas._analytics._analytics_batcher``
whether or not telemetry is off: the batcher's thread sends them later, and only when it is on. The
network guard counts attempts per run (a batch is sent from a background thread, long after the row);
the queued events are synchronous, so they are counted per row, deterministically. ``install`` wraps the
batcher instance's ``add_evaluation`` (every module calls it through that one object) once per process;
a Ragas without a batcher records nothing (``mark``/``since`` then give no events).
"""

from __future__ import annotations

import typing as t

_events: list[dict[str, t.Any]] = []
_installed = False


def _summary(event: t.Any) -> dict[str, t.Any]:
    dump = getattr(event, "model_dump", None)
    data = dump() if callable(dump) else {}
    return {key: data[key] for key in ("event_type", "metrics", "evaluation_type", "num_rows") if key in data}


def install() -> None:
    """Record every event queued on Ragas's analytics batcher from now on (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from ragas import _analytics
    except ImportError:
        return
    batcher = getattr(_analytics, "_analytics_batcher", None)
    add = getattr(batcher, "add_evaluation", None)
    if batcher is None or not callable(add):
        return

    def add_evaluation(event: t.Any, *args: t.Any, **kwargs: t.Any) -> t.Any:
        _events.append(_summary(event))
        return add(event, *args, **kwargs)

    batcher.add_evaluation = add_evaluation


def mark() -> int:
    """Where the events of the row about to be scored start."""
    install()
    return len(_events)


def since(start: int) -> list[dict[str, t.Any]]:
    """The events queued since ``start`` (``mark``)."""
    return list(_events[start:])
