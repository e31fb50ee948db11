"""Reference outcomes computed once per (case, metric), and ahead of the probe when the host can.

A row is one (case, metric, Ragas target); a case's reference is the same for every target that is
compared with the metric (legacy, collections, each alias), so ``ReferenceBook`` computes it once.
``fill`` computes every reference a suite needs up front: ``run`` calls it while the probe imports
Ragas and scores in its own process, so the references (and the oracles they ask, whose imports
alone take seconds) cost no wall time of their own. The outcomes never depend on Ragas's output.
"""

from __future__ import annotations

from collections.abc import Collection

from ragas_compat.cases import Case, Suite
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.registry import all_metrics, configured_specs
from ragas_compat.metrics.spec import MetricSpec


class ReferenceBook:
    """``outcome(spec, case)`` = ``spec.outcome(case)``, computed at most once per (case id, metric and
    configuration: ``MetricSpec.reference_key``)."""

    def __init__(self) -> None:
        self._outcomes: dict[tuple[str, str], ReferenceOutcome] = {}

    def __len__(self) -> int:
        return len(self._outcomes)

    def outcome(self, spec: MetricSpec, case: Case) -> ReferenceOutcome:
        key = (case.id, spec.reference_key)
        if key not in self._outcomes:
            self._outcomes[key] = spec.outcome(case)
        return self._outcomes[key]

    def fill(self, suite: Suite, metrics: Collection[str] | None = None) -> ReferenceBook:
        """Compute the reference of every metric that applies to each case (only ``metrics`` when given):
        the registered metrics, then the configurations the case names (case key ``targets``: each
        configured metric has its own reference, ``MetricSpec.reference_key``, which the audit asks for)."""
        for case in suite.cases:
            configured = [spec for config in case.targets for spec in configured_specs(config)]
            for spec in (*all_metrics(), *configured):
                if (metrics is None or spec.name in metrics) and spec.applies_to(case):
                    self.outcome(spec, case)
        return self
