"""Pair the probe's Ragas results with the reference outcomes and classify every row.

This is the whole core of a run with no I/O: cases, probe output and expectations in,
an ``Audit`` out. It never imports Ragas.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.compare.dataset_level import DatasetLevel, from_probe
from harness.compare.api_paths import path_expectation_problems
from harness.cases import Case, Suite
from harness.compare.classify import Classification, classify
from harness.values import RagasValue
from harness.values import decode_ragas_value
from harness.compare.expectations import Expectation, Expectations
from harness.metrics.outcome import ReferenceOutcome
from harness.metrics.registry import METRICS, MetricSpec, metric


@dataclass(frozen=True)
class AuditRow:
    """One (case, Ragas target) pair, classified."""

    case: Case
    spec: MetricSpec
    target: str
    ragas_class: str
    fields_read: tuple[str, ...]
    received: dict[str, Any]
    ragas_value: RagasValue
    reference: ReferenceOutcome
    classification: Classification
    expected: Expectation
    prompts: int | None
    expected_prompts: int | None
    warnings: tuple[str, ...]

    @property
    def unexpected(self) -> bool:
        return self.classification.name != self.expected.classification


@dataclass(frozen=True)
class ReferenceOnlyRow:
    """A metric with no Ragas counterpart (the judge audit): reported, not compared."""

    case: Case
    spec: MetricSpec
    reference: ReferenceOutcome


@dataclass(frozen=True)
class Audit:
    suite: Suite
    provenance: dict[str, Any]
    rows: tuple[AuditRow, ...]
    reference_only: tuple[ReferenceOnlyRow, ...]
    expectation_problems: tuple[str, ...] = field(default=())
    expectations: Expectations | None = None  # for the legacy-vs-collections pairs (report.api_paths)
    dataset_level: DatasetLevel | None = None  # Ragas's evaluate() means vs the policy (aggregation.py)

    @property
    def unexpected(self) -> tuple[AuditRow, ...]:
        return tuple(row for row in self.rows if row.unexpected)

    @property
    def drift(self) -> bool:
        """True when any row's classification differs from its expectation."""
        return bool(self.unexpected) or bool(self.expectation_problems)

    def counts(self, key) -> dict[str, Counter]:
        """Classification counts grouped by ``key(row)`` (e.g. metric or category)."""
        grouped: dict[str, Counter] = {}
        for row in self.rows:
            grouped.setdefault(key(row), Counter())[row.classification.name] += 1
        return grouped


# Warnings that depend on garbage-collection timing or the machine, not on Ragas's semantics;
# keeping them would make two identical runs produce different reports.
UNSTABLE_WARNINGS = ("ResourceWarning",)


def _warning_text(warning: Any) -> str:
    if isinstance(warning, dict):
        return f"{warning.get('category', 'Warning')}: {warning.get('message', '')}"
    return str(warning)


def with_received_inputs(spec: MetricSpec, case: Case, reference: ReferenceOutcome,
                         received: dict[str, Any]) -> ReferenceOutcome:
    """Add a ``coercion`` alternative when Ragas's ``SingleTurnSample`` changed an input before the
    metric saw it (e.g. an ID ``1.0`` arrives as ``1``): the value under Ragas's semantics,
    recomputed on the inputs the metric actually received. Type-sensitive comparison (JSON text)."""
    changed = {name: value for name, value in received.items()
               if name in case.raw and json.dumps(case.raw[name]) != json.dumps(value)}
    if not changed or reference.refused is not None:
        return reference
    as_fields = {name: tuple(value) if isinstance(value, list) else value
                 for name, value in changed.items() if name in {f.name for f in dataclasses.fields(Case)}}
    received_case = dataclasses.replace(case, raw={**case.raw, **changed}, **as_fields)
    recomputed = spec.outcome(received_case)
    ragas_semantics = next((recomputed.alternatives[key] for key in ("dedup", "epsilon")
                            if recomputed.alternatives.get(key) is not None), recomputed.value)
    return dataclasses.replace(
        reference,
        alternatives={**reference.alternatives, "coercion": ragas_semantics},
        details={**reference.details, "ragas_received": changed},
    )


def build_audit(suite: Suite, probe_output: dict[str, Any], expectations: Expectations,
                provenance: dict[str, Any]) -> Audit:
    """Classify every probe result against the reference and the expectations."""
    cases = {case.id: case for case in suite.cases}
    rows = []
    for result in probe_output.get("results", []):
        case = cases.get(result["case_id"])
        if case is None:
            continue  # the probe only answers for cases it was given
        spec = metric(result["metric"])
        received = result.get("received") or {}
        reference = with_received_inputs(spec, case, spec.outcome(case), received)
        ragas_value = decode_ragas_value(result.get("value"))
        rows.append(AuditRow(
            case=case,
            spec=spec,
            target=result["target"],
            ragas_class=result.get("ragas_class", result["target"]),
            fields_read=tuple(result.get("fields_read", ())),
            received=received,
            ragas_value=ragas_value,
            reference=reference,
            classification=classify(ragas_value, reference),
            expected=expectations.expected(case.id, result["target"]),
            prompts=result.get("prompts"),
            expected_prompts=result.get("expected_prompts"),
            warnings=tuple(_warning_text(w) for w in result.get("warnings", ())
                           if not _warning_text(w).startswith(UNSTABLE_WARNINGS)),
        ))
    order = {case.id: index for index, case in enumerate(suite.cases)}
    rows.sort(key=lambda row: (order[row.case.id], row.spec.name, row.target))
    reference_only = tuple(
        ReferenceOnlyRow(case, spec, spec.outcome(case))
        for case in suite.cases
        for spec in METRICS
        if not spec.ragas_targets and spec.applies_to(case)
    )
    problems = expectations.check_coverage([(row.case.id, row.target) for row in rows], set(cases))
    problems += path_expectation_problems(rows, expectations, set(cases))
    return Audit(suite, provenance, tuple(rows), reference_only, tuple(problems), expectations,
                 dataset_level=from_probe(rows, probe_output.get("evaluate")))
