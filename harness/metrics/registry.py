"""The one registry of metrics: every ``MetricSpec`` the harness knows, in a stable order.

Each metric family module builds its specs (``SPECS``) and is listed once in ``FAMILIES``; the
rest of the code (case schema checks, the loader, fuzz, shrink, explain, legacy-vs-collections
pairing, the targets every probe request carries, the evaluate() metric sets, the reports) iterates
``all_metrics()``. A Ragas target is declared once, in its metric's ``MetricSpec.ragas``;
``probe_targets()`` is what the probe is sent. ``register()`` adds a metric at run time (ir-measures style), e.g. a
user's own metric or a test's toy one; ``unregister()`` takes it away again.
"""

from __future__ import annotations

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics import (
    answer_correctness,
    answer_relevancy,
    context_entity_recall,
    context_precision,
    context_recall,
    criteria_votes,
    datacompy_score,
    factual_correctness,
    faithfulness,
    id_overlap,
    judge_audit,
    noise_sensitivity,
    nvidia_ratings,
    quoted_spans,
    rubrics_score,
    semantic_similarity,
    text_similarity,
)
from ragas_compat.metrics.spec import MetricSpec
from ragas_compat.probe.protocol import TargetSpec, spec_name
from ragas_compat.vocabulary import TargetId

FAMILIES = (context_precision, context_recall, id_overlap, faithfulness, judge_audit, factual_correctness, context_entity_recall, noise_sensitivity, text_similarity, semantic_similarity, criteria_votes, rubrics_score, nvidia_ratings, answer_correctness, answer_relevancy, datacompy_score, quoted_spans)

_REGISTRY: dict[str, MetricSpec] = {}


def register(spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` after the metrics registered so far; a name can be registered once."""
    if spec.name in _REGISTRY:
        raise ValueError(f"metric {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    del _REGISTRY[name]


def all_metrics() -> tuple[MetricSpec, ...]:
    """Every registered metric, in registration order (families in ``FAMILIES`` order)."""
    return tuple(_REGISTRY.values())


def metric_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def metric(name: str) -> MetricSpec:
    """The MetricSpec called ``name``; HarnessInputError listing the valid names otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise HarnessInputError(f"unknown metric {name!r}; valid metrics: {', '.join(_REGISTRY)}",
                                field="metric", value=name) from None


def metrics_for_target(target: str) -> tuple[MetricSpec, ...]:
    """The metrics a Ragas target (``"legacy:Faithfulness"``) is compared with."""
    target = TargetId(target)
    return tuple(spec for spec in _REGISTRY.values() if target in spec.ragas_targets)


def probe_targets() -> dict[str, TargetSpec]:
    """Every target of the registered metrics by name, as the probe is sent them: all legacy targets,
    then all collections targets, each in registration order. A target two metrics name (a user's
    metric compared with a class a built-in one runs already) is scored once, as its first metric
    declares it; ``metrics_for_target`` gives every metric compared with it."""
    specs = [target for spec in _REGISTRY.values() for target in spec.probe_targets()]
    ordered = [t for t in specs if t["api"] == "legacy"] + [t for t in specs if t["api"] != "legacy"]
    out: dict[str, TargetSpec] = {}
    for target in ordered:
        out.setdefault(spec_name(target), target)
    return out


for _family in FAMILIES:
    for _spec in _family.SPECS:
        register(_spec)
