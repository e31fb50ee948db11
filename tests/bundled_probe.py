"""Ragas's values on bundled cases, for the probe tests of one metric family."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ragas_compat.cases import load_default_suite
from ragas_compat.runner import run_probe
from ragas_compat.values import decode_ragas_value


def bundled_values(keep: Callable[[str], bool], targets: Iterable[str]) -> dict[tuple[str, str], object]:
    """``{(case id, target): value}`` for the bundled cases whose id ``keep`` accepts, scored by the
    real probe (no network attempt allowed); a value is a float or a ``RagasError``."""
    cases = [c.raw for c in load_default_suite().cases if keep(c.id)]
    run = run_probe(cases, targets=list(targets))
    assert run.ok, run.error
    assert run.output["network_attempts"] == []
    return {(r["case_id"], r["target"]): decode_ragas_value(r["value"]) for r in run.output["results"]}


def registry_targets(api: str | None = None) -> tuple:
    """The probe's ``Target``s of every target the metric registry declares (what a default request
    carries, ``runner.request_targets``), in request order; only those of ``api`` when given."""
    from ragas_compat.probe.targets import targets_from_request
    from ragas_compat.runner import request_targets

    return tuple(t for t in targets_from_request(request_targets()) if api is None or t.api == api)


def targets_by_metric() -> dict[str, tuple]:
    """The registry's targets (probe ``Target``s) grouped by metric, legacy before collections."""
    out: dict[str, tuple] = {}
    for target in registry_targets():
        out[target.metric] = out.get(target.metric, ()) + (target,)
    return out
