"""The one registry of metrics: every ``MetricSpec`` the harness knows, in a stable order.

Each metric family module builds its specs (``SPECS``) and is listed once in ``FAMILIES``; the
rest of the code (case schema checks, the loader, fuzz, shrink, explain, legacy-vs-collections
pairing, the targets every probe request carries, the evaluate() metric sets, the reports) iterates
``all_metrics()``. A Ragas target is declared once, in its metric's ``MetricSpec.ragas``;
``probe_targets()`` is what the probe is sent. ``register()`` adds a metric at run time (ir-measures style), e.g. a
user's own metric or a test's toy one; ``unregister()`` takes it away again.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import Version

from ragas_compat.cases.configurations import TargetConfig, overridden
from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics import (
    agent_goal,
    answer_correctness,
    answer_relevancy,
    context_entity_recall,
    context_precision,
    context_recall,
    criteria_votes,
    datacompy_score,
    discrete_ranking,
    factual_correctness,
    faithfulness,
    faithfulness_hhem,
    id_overlap,
    judge_audit,
    multimodal,
    noise_sensitivity,
    numeric_metric,
    nvidia_ratings,
    quoted_spans,
    rubrics_score,
    semantic_similarity,
    sql_equivalence,
    summarization,
    text_similarity,
    tool_calls,
    topic_adherence,
)
from ragas_compat.metrics.spec import MetricSpec
from ragas_compat.probe.protocol import TargetSpec, spec_name
from ragas_compat.vocabulary import TargetId

FAMILIES = (context_precision, context_recall, id_overlap, faithfulness, judge_audit, factual_correctness, context_entity_recall, noise_sensitivity, text_similarity, semantic_similarity, criteria_votes, rubrics_score, nvidia_ratings, answer_correctness, answer_relevancy, datacompy_score, quoted_spans, tool_calls, agent_goal, topic_adherence, summarization, sql_equivalence, multimodal, numeric_metric, discrete_ranking, faithfulness_hhem)

_REGISTRY: dict[str, MetricSpec] = {}
_BY_TARGET: dict[TargetId, tuple[MetricSpec, ...]] = {}  # metrics_for_target's answers; emptied on (un)register
_BUILTIN: list[tuple[str, str, str, MetricSpec]] = []  # _builtin_targets' answer; emptied on (un)register


def register(spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` after the metrics registered so far; a name can be registered once."""
    if spec.name in _REGISTRY:
        raise ValueError(f"metric {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    _BY_TARGET.clear()
    _BUILTIN.clear()
    return spec


def unregister(name: str) -> None:
    del _REGISTRY[name]
    _BY_TARGET.clear()
    _BUILTIN.clear()


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


def metrics_for_target(target: str, case: Case | None = None) -> tuple[MetricSpec, ...]:
    """The metrics a Ragas target (``"legacy:Faithfulness"``) is compared with; for a ``case`` that
    configures targets (case key ``targets``), the metrics configured as it names them."""
    if case is not None and case.targets:
        return case_targets(case).get(str(target), ())
    target = TargetId(target)
    if target not in _BY_TARGET:  # one scan per target, not one per result row
        _BY_TARGET[target] = tuple(spec for spec in _REGISTRY.values() if target in spec.ragas_targets)
    return _BY_TARGET[target]


def release_bounds(target: str) -> tuple[str, str, str] | None:
    """(first release, first release without the class, the class that replaced it or "") of a target
    whose class some Ragas releases only have (``RagasTargets.releases``); None for any other target."""
    try:
        target_id = TargetId(target)
    except ValueError:
        return None
    for spec in metrics_for_target(target_id):
        bounds = spec.ragas.release_bounds(target_id.api.value, target_id.ragas_class) if spec.ragas else None
        if bounds is not None:
            return bounds
    return None


def in_release(target: str, version: str) -> bool:
    """Does Ragas ``version`` have ``target``'s class? False only for a class of ``RagasTargets.releases``
    outside its releases (its target makes no row there)."""
    bounds = release_bounds(target)
    return bounds is None or Version(bounds[0]) <= Version(version) < Version(bounds[1])


_CONFIGURED: dict[tuple[TargetConfig, tuple[str, ...]], tuple[MetricSpec, ...]] = {}


def configured_specs(config: TargetConfig) -> tuple[MetricSpec, ...]:
    """The metrics that read one configured target (``MetricSpec.configured``), configured; a configuration
    no registered metric reads is refused (HarnessInputError)."""
    key = (config, tuple(_REGISTRY))
    if key not in _CONFIGURED:
        found = tuple(configured for spec in _REGISTRY.values()
                      if (configured := spec.configured(config.api, config.ragas_class, config.options)) is not None)
        if not found:
            raise HarnessInputError(f"target {config.name}: no registered metric reads this configuration",
                                    field="targets", value=config.name)
        _CONFIGURED[key] = found
    return _CONFIGURED[key]


def _builtin_targets() -> list[tuple[str, str, str, MetricSpec]]:
    """(target name, api, class, metric) of every built-in target, in registration order (built once per
    registry: ``case_targets`` asks for it on every result row of a case that configures targets)."""
    if not _BUILTIN:
        _BUILTIN.extend((str(target), target.api.value, ragas_class, spec) for spec in _REGISTRY.values()
                        if spec.ragas is not None
                        for target, ragas_class in zip(spec.ragas_targets, (*spec.ragas.legacy, *spec.ragas.collections),
                                                       strict=True))
    return _BUILTIN


def case_targets(case: Case) -> dict[str, tuple[MetricSpec, ...]]:
    """The targets scoring ``case`` by name, each with the metrics it is compared with: the built-in
    targets of every class the case does not configure, then the case's configured targets."""
    replaced = overridden(case.targets)
    out: dict[str, tuple[MetricSpec, ...]] = {}
    for name, api, ragas_class, spec in _builtin_targets():
        if (api, ragas_class) not in replaced:
            out[name] = (*out.get(name, ()), spec)
    for config in case.targets:
        out.setdefault(config.name, configured_specs(config))
    return out


def suite_probe_targets(cases: Sequence[tuple[str, tuple[TargetConfig, ...]]]) -> dict[str, TargetSpec]:
    """The targets a probe request on these cases (``(case id, its configured targets)``) carries: every
    built-in target (``probe_targets``) and every configured one. A target that scores only some of the
    cases (a configured one; a built-in one whose class some case configures) lists them (``cases``); a
    built-in target no case keeps is left out."""
    declared = probe_targets()
    if not any(configs for _, configs in cases):
        return declared
    ids = [case_id for case_id, _ in cases]
    scoring: dict[str, list[str]] = {name: [] for name in declared}
    specs: dict[str, TargetSpec] = dict(declared)
    for case_id, configs in cases:
        replaced = overridden(configs)
        for name, spec in declared.items():
            if (spec["api"], spec["ragas_class"]) not in replaced:
                scoring[name].append(case_id)
        for config in configs:
            if config.name not in specs:
                specs[config.name] = configured_specs(config)[0].probe_targets()[0]
            if case_id not in scoring.setdefault(config.name, []):
                scoring[config.name].append(case_id)
    out: dict[str, TargetSpec] = {}
    for name, spec in specs.items():
        if scoring[name] == ids:
            out[name] = spec
        elif scoring[name]:
            out[name] = {**spec, "cases": scoring[name]}
    return out


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
