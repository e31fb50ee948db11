"""The targets the probe is sent (harness/probe/targets.py reads them) are the registry's, with its traits."""

from __future__ import annotations

from bundled_probe import registry_targets

from ragas_compat.cases import load_default_suite
from ragas_compat.metrics.registry import all_metrics
from ragas_compat.vocabulary import Api

METRICS = all_metrics()
LEGACY_TARGETS = registry_targets("legacy")


def test_every_registry_target_is_a_probe_target_with_the_same_metric_and_fields():
    # (a class that reads fewer fields than its metric: RagasTargets.class_fields)
    from_registry = {(t.ragas_class, spec.name, spec.ragas.fields_of("legacy", t.ragas_class.partition("[")[0],
                                                                     spec.fields_read))
                     for spec in METRICS for t in spec.targets_of(Api.LEGACY)}
    # the target's Ragas class as named in the target (a configured row adds its suffix: X[mode=...])
    from_probe = {(t.name.partition(":")[2], t.metric, t.fields_read) for t in LEGACY_TARGETS}
    assert from_probe == from_registry


def test_probe_applicability_matches_the_registry_on_the_default_suite():
    specs = {spec.name: spec for spec in METRICS}
    for case in load_default_suite().cases:
        for target in LEGACY_TARGETS:
            assert target.applies(case.raw) == specs[target.metric].applies_to(case), (case.id, target.name)
