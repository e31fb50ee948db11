"""Pair the probe's Ragas results with the reference outcomes and classify every row.

This is the whole core of a run with no I/O: cases, probe output and expectations in,
an ``Audit`` out. It never imports Ragas.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from ragas_compat.cases import Case, Suite
from ragas_compat.compare.api_paths import PathPair, path_expectation_problems, path_pairs
from ragas_compat.compare.classify import Diagnosis, classify
from ragas_compat.compare.dataset_level import DatasetLevel, from_probe
from ragas_compat.compare.expectations import IDENTICAL, Expectations
from ragas_compat.compare.findings import Finding, findings, pair_findings, row_findings
from ragas_compat.compare.headlines import Headline, headlines
from ragas_compat.compare.reference_book import ReferenceBook
from ragas_compat.compare.rows import AuditRow, ReferenceOnlyRow
from ragas_compat.compare.verdict import Verdict, verdict
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.registry import all_metrics, metric, metrics_for_target
from ragas_compat.metrics.spec import MetricSpec
from ragas_compat.values import NON_NUMERIC, decode_ragas_value

__all__ = ["Audit", "AuditRow", "ReferenceOnlyRow", "build_audit", "judged", "metric_entries"]


@dataclass(frozen=True)
class Audit:
    """The rows of a run and their judgement, computed once by ``build_audit`` (``judged``): each row's
    and each pair's drift findings (``row_findings``, ``pair_findings``, in the order of ``rows`` and
    ``pairs``), all drift ``findings`` (``ragas_compat.compare.findings``), the ranked ``headlines``
    (``ragas_compat.compare.headlines``) and the ``verdict`` (``ragas_compat.compare.verdict``). The
    renderers only format these fields (``rows_with_findings``, ``pairs_with_findings``)."""

    suite: Suite
    provenance: dict[str, Any]
    rows: tuple[AuditRow, ...]
    reference_only: tuple[ReferenceOnlyRow, ...]
    expectation_problems: tuple[str, ...] = field(default=())
    expectations: Expectations | None = None  # for the legacy-vs-collections pairs (report.api_paths)
    dataset_level: DatasetLevel | None = None  # Ragas's evaluate() means vs the policy (dataset_level.py)
    pairs: tuple[PathPair, ...] = ()  # legacy vs collections, one per (case, metric, legacy, collections target)
    row_findings: tuple[tuple[Finding, ...], ...] = ()  # one entry per row of ``rows``, in its order
    pair_findings: tuple[tuple[Finding, ...], ...] = ()  # one entry per pair of ``pairs``, in its order
    findings: tuple[Finding, ...] = ()  # rows in order, then pairs, then expectations problems, then replays
    headlines: tuple[Headline, ...] = ()  # ranked, most consequential first
    verdict: Verdict | None = None  # None only for an audit ``judged`` has not seen

    @property
    def unexpected(self) -> tuple[AuditRow, ...]:
        return tuple(row for row in self.rows if row.unexpected)

    def rows_with_findings(self) -> Iterator[tuple[AuditRow, tuple[Finding, ...]]]:
        """Each row with its drift findings (empty when it has none), in row order."""
        return zip(self.rows, self._judged(self.row_findings, self.rows), strict=True)

    def pairs_with_findings(self) -> Iterator[tuple[PathPair, tuple[Finding, ...]]]:
        """Each legacy-vs-collections pair with its drift findings (empty when it has none), in pair order."""
        return zip(self.pairs, self._judged(self.pair_findings, self.pairs), strict=True)

    def unattached_findings(self) -> list[Finding]:
        """The findings of ``findings`` that no row, pair or expectations problem shows, in order: recorded
        scores the replay does not reproduce (they name a row, but are not among its findings), the
        dataset-level findings and any other finding of no row or pair. Row and pair findings always name
        their case; an expectations-file problem is an ``unexplained`` finding of no case and no target.
        junit.xml and the pytest plugin's items give each a test of its own."""
        problems = set(self.expectation_problems)
        return [finding for finding in self.findings
                if finding.kind == "replay_mismatch" or (finding.case_id is None and not (
                    finding.kind == "unexplained" and finding.target is None and finding.message in problems))]

    def _judged(self, found: tuple[tuple[Finding, ...], ...], items: tuple) -> tuple[tuple[Finding, ...], ...]:
        if len(found) != len(items):  # an audit ``judged`` has not seen (or rows replaced after it)
            raise ValueError("an audit's findings are read after build_audit (or judged) computed them")
        return found

    @property
    def drift(self) -> bool:
        """True when the audit has any drift finding (ragas_compat.compare.findings: an unexplained row or
        pair, a divergence or error no rule explains, a value out of range, an expectations problem)."""
        return bool(self.findings)

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
    recomputed on the inputs the metric actually received. Type-sensitive comparison (JSON text).
    A reference that refuses the case's inputs (a boolean ID) gets the alternative too when it can
    score what Ragas received (the boolean arrived as 1), unless it already has one (verdicts)."""
    changed = {name: value for name, value in received.items()
               if name in case.raw and json.dumps(case.raw[name]) != json.dumps(value)}
    if not changed or "coercion" in reference.alternatives:
        return reference
    as_fields: dict[str, Any] = {name: tuple(value) if isinstance(value, list) else value
                 for name, value in changed.items() if name in {f.name for f in dataclasses.fields(Case)}}
    received_case = dataclasses.replace(case, raw={**case.raw, **changed}, **as_fields)
    if not spec.applies_to(received_case):
        # Ragas dropped an input the metric needs before it saw the sample (0.2.2's multi_turn_ascore keeps
        # only the declared columns: ToolCallAccuracy lost reference_tool_calls): nothing to recompute
        return dataclasses.replace(reference, details={**reference.details, "ragas_received": changed})
    recomputed = spec.outcome(received_case)
    if recomputed.refused is not None or isinstance(recomputed.value, NON_NUMERIC):
        # refused; or a label / ranking, compared exactly (no numeric alternative explains it)
        return dataclasses.replace(reference, details={**reference.details, "ragas_received": changed})
    ragas_semantics = next((recomputed.alternatives[key] for key in ("dedup", "epsilon")
                            if recomputed.alternatives.get(key) is not None), recomputed.value)
    return dataclasses.replace(
        reference,
        alternatives={**reference.alternatives, "coercion": ragas_semantics},
        details={**reference.details, "ragas_received": changed},
    )


class _Shared:
    """One object for equal values across the probe's results (a case's received inputs, warning texts,
    class names, classifications with their explanation), so the rows of a large suite hold each once
    instead of once per row."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._values: dict[str, Any] = {}
        self._diagnoses: dict[Diagnosis, Diagnosis] = {}

    def text(self, text: str) -> str:
        return self._texts.setdefault(text, text)

    def diagnosis(self, diagnosis: Diagnosis) -> Diagnosis:
        """``diagnosis`` or an equal one seen before (the same classification and explanation)."""
        return self._diagnoses.setdefault(diagnosis, diagnosis)

    def value(self, value: Any) -> Any:
        """``value`` (JSON data) or an equal one seen before: same JSON text (key order too) and type."""
        key = json.dumps(value, ensure_ascii=False, default=repr) + type(value).__name__
        return self._values.setdefault(key, value)


def build_audit(suite: Suite, probe_output: dict[str, Any], expectations: Expectations,
                provenance: dict[str, Any], metrics: Collection[str] | None = None,
                references: ReferenceBook | None = None) -> Audit:
    """Classify every probe result against the reference of each metric the registry compares its
    target with (only ``metrics`` when given), and against the expectations. ``references``: outcomes
    already computed for this suite (``ReferenceBook.fill``); the others are computed here, once each."""
    references = references if references is not None else ReferenceBook()
    cases = {case.id: case for case in suite.cases}
    expectations = expectations.for_ragas((probe_output.get("ragas") or {}).get("version"))
    rows = []
    shared = _Shared()
    for result in probe_output.get("results", []):
        case = cases.get(result["case_id"])
        if case is None:
            continue  # the probe only answers for cases it was given
        received = shared.value(result.get("received") or {})
        ragas_value = decode_ragas_value(result.get("value"))
        # the registry says which metrics a target is compared with; else the metric the probe named
        for spec in metrics_for_target(result["target"], case) or (metric(result["metric"]),):
            if metrics is not None and spec.name not in metrics:
                continue
            reference = with_received_inputs(spec, case, references.outcome(spec, case), received)
            row = AuditRow(
                case=case,
                spec=spec,
                target=shared.text(result["target"]),
                ragas_class=shared.text(result.get("ragas_class", result["target"])),
                fields_read=shared.value(tuple(result.get("fields_read", ()))),
                received=received,
                ragas_value=ragas_value,
                reference=reference,
                classification=shared.diagnosis(classify(ragas_value, reference)),
                expected=IDENTICAL,
                prompts=result.get("prompts"),
                expected_prompts=result.get("expected_prompts"),
                warnings=shared.value(tuple(shared.text(_warning_text(w)) for w in result.get("warnings", ())
                                            if not _warning_text(w).startswith(UNSTABLE_WARNINGS))),
            )
            rows.append(dataclasses.replace(row, expected=expectations.explain(row)))  # rule or case entry
    order = {case.id: index for index, case in enumerate(suite.cases)}
    rows.sort(key=lambda row: (order[row.case.id], row.spec.name, row.target))
    only_specs = [spec for spec in all_metrics()  # once, not per case: ragas_targets is built on each call
                  if not spec.ragas_targets and (metrics is None or spec.name in metrics)]
    reference_only = tuple(
        ReferenceOnlyRow(case, spec, references.outcome(spec, case))
        for case in suite.cases
        for spec in only_specs
        if spec.applies_to(case)
    )
    problems = expectations.check_coverage([(row.case.id, row.target) for row in rows], set(cases))
    pairs = path_pairs(rows, expectations)
    problems += path_expectation_problems(pairs, expectations, set(cases))
    return judged(Audit(suite, provenance, tuple(rows), reference_only, tuple(problems), expectations,
                        dataset_level=from_probe(rows, probe_output.get("evaluate")), pairs=pairs))


def judged(audit: Audit) -> Audit:
    """``audit`` with its findings, headlines and verdict computed from its rows, pairs and problems
    (in that order: each reads the ones before). Each row's and pair's findings are computed here once."""
    audit = dataclasses.replace(audit, row_findings=tuple(tuple(row_findings(row)) for row in audit.rows),
                                pair_findings=tuple(tuple(pair_findings(pair)) for pair in audit.pairs))
    audit = dataclasses.replace(audit, findings=tuple(findings(audit)))
    audit = dataclasses.replace(audit, headlines=tuple(headlines(audit)))
    return dataclasses.replace(audit, verdict=verdict(audit))


def metric_entries(audit: Audit) -> list[dict[str, Any]]:
    """Each metric of the run with its denominator, missing-value policy and the Ragas classes run
    for it (with the fields each read), sorted by metric name."""
    targets: dict[str, dict[str, dict[str, Any]]] = {}
    for row in audit.rows:
        targets.setdefault(row.spec.name, {})[row.target] = {
            "target": row.target, "ragas_class": row.ragas_class, "fields_read": list(row.fields_read)}
    specs = {row.spec.name: row.spec for row in audit.rows}
    specs.update({row.spec.name: row.spec for row in audit.reference_only})
    return [
        {"metric": name, "denominator": spec.denominator, "undefined_policy": spec.undefined_policy,
         "ragas_targets": [targets[name][t] for t in sorted(targets.get(name, {}))]}
        for name, spec in sorted(specs.items())
    ]
