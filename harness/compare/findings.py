"""Drift findings: which outcomes of an audit no rule or case entry accounts for.

A row (or legacy-vs-collections pair) that is ``identical``, or that a rule or case entry of the
expectations explains, is fine. Everything else is a *finding* of one kind:

- ``unexplained``: a row no rule explains whose classification is neither ``divergence`` nor
  ``error`` (e.g. an ``epsilon`` on a class no rule names), a row whose case entry expects another
  classification (it moved), the problems of an expectations file (stale or ambiguous case
  entries), and a target whose dataset-level ``evaluate()`` run does not hold together with its
  per-row scoring (``TargetAggregate.disagreements``: its mean is not numpy's nanmean of its rows,
  ``evaluate()`` and ``aevaluate()`` differ, a row is not the case's ``single_turn_ascore`` value);
- ``divergence``: a ``divergence`` no rule explains;
- ``error``: an ``error`` (Ragas raised) no rule explains; also a dataset-level ``evaluate()`` run that
  Ragas's own ``evaluate()`` raised in: no mean was aggregated, so nothing there was checked;
- ``out_of_range``: a Ragas value outside its metric's range (``value_range``), unless the rule or
  case entry explaining the row allows it (``allow_out_of_range``). NaN is not out of range (it is
  how Ragas encodes undefined); infinities are.
- ``harness_error``: a row the harness could not score: it raised its own error while driving Ragas
  (its scripted judge had no frozen answer, ``StubMismatch``; its frozen embedding model lacks a text;
  it cannot drive the class; the probe's own code failed). No rule or case entry explains it: it says
  nothing about Ragas, and a verdict cannot vouch for a row nobody scored. Also a dataset-level
  check the harness could not make: an ``evaluate()`` run it failed to prepare (its scripted judges, the
  metrics), or a target's run its scripted judge answered amiss: no row, the same reason.
- ``replay_mismatch``: a case recorded by ``ragas-compat record`` whose offline replay does not
  reproduce the live Ragas score bit for bit, or whose live outcome cannot be replayed
  (``ragas_compat.compare.replay``).

``findings(audit)`` collects them (rows in order, then pairs, then problems); ``build_audit``
(``ragas_compat.compare.audit``) stores them on the audit once, as ``Audit.findings``.
``ragas_compat.compare.verdict`` decides which of them fail a run (``--fail-on``); the reports list
every finding whatever ``--fail-on`` says.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ragas_compat.compare.expectations import harness_raised
from ragas_compat.compare.replay import replay_problems
from ragas_compat.metrics import registry
from ragas_compat.values import RagasError

Audit = Any  # ragas_compat.compare.audit.Audit (which imports this module): suite, rows, pairs, expectation_problems

DRIFT_KINDS: tuple[str, ...] = ("unexplained", "divergence", "out_of_range", "error", "harness_error",
                                 "replay_mismatch")

# Every current metric is a share or a mean of 0/1 quantities: [0, 1]. Kept here, per metric name of
# the registry, rather than in the metric registry; a metric with another range goes in RANGE_OVERRIDES.
UNIT_INTERVAL: tuple[float, float] = (0.0, 1.0)
RANGE_OVERRIDES: dict[str, tuple[float, float]] = {
    # integer scores: SimpleCriteriaScore on a scale its definition text names; RubricsScore on its
    # default 1..5 rubric; InstanceRubrics on each case's own rubric (the reference refuses a score off it)
    **{name: (-math.inf, math.inf) for name in ("simple_criteria", "simple_criteria_strictness_2",
                                                "simple_criteria_strictness_3", "instance_rubrics")},
    "rubrics_score": (1.0, 5.0),
    # a user's NumericMetric: its allowed_values are its configuration (the reference refuses a value outside them)
    "numeric_metric": (-math.inf, math.inf),
    # a mean of cosines is in [-1, 1]; AnswerCorrectness blends F in [0, 1] with a cosine: 0.75 F + 0.25 cos
    "answer_relevancy": (-1.0, 1.0), "answer_relevancy_strictness_1": (-1.0, 1.0),
    "answer_correctness": (-0.25, 1.0),
    # a cosine is in [-1, 1]: SemanticSimilarity returns it unclipped (its collections docstring says 0.0-1.0)
    "semantic_similarity": (-1.0, 1.0),
}


def _metric_names() -> tuple[str, ...]:
    names = getattr(registry, "metric_names", None)
    return tuple(names()) if names is not None else tuple(spec.name for spec in registry.METRICS)


def value_range(metric: str) -> tuple[float, float] | None:
    """The range of a metric's values (None for a name the registry does not know)."""
    if metric in RANGE_OVERRIDES:
        return RANGE_OVERRIDES[metric]
    return UNIT_INTERVAL if metric in _metric_names() else None


@dataclass(frozen=True)
class Finding:
    """One drift finding: its kind, the row (or pair, or file problem) and why."""

    kind: str
    case_id: str | None
    target: str | None          # "legacy:X" for a row, "legacy:X vs collections:Y" for a pair
    classification: str | None
    expected: str | None
    message: str

    def line(self) -> str:
        """One line for a terminal or an assertion message."""
        if self.case_id is None:
            return f"{self.kind}: {self.message}"
        return f"{self.kind}: case {self.case_id!r}, {self.target}: {self.message}"


def _unexpected_kind(classification: str) -> str:
    if classification == "divergence":
        return "divergence"
    if classification == "error":
        return "error"
    return "unexplained"


def out_of_range(metric: str, value: Any) -> bool:
    """True for a Ragas float outside the metric's range (NaN never is; errors are not values)."""
    if isinstance(value, RagasError) or not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    bounds = value_range(metric)
    if bounds is None or math.isnan(value):
        return False
    return not (bounds[0] <= value <= bounds[1])


def _why(expected: Any, classification: Any, explanation: str) -> str:
    if expected.explained:
        return (f"classified {classification}, but {expected.label} expects {expected.classification}: "
                f"{explanation}")
    return f"classified {classification}, which no rule explains: {explanation}"


def row_findings(row: Any) -> list[Finding]:
    """The findings of one audit row (``ragas_compat.compare.audit.AuditRow``)."""
    found = []
    name = str(row.classification.name)
    if harness_raised(row.ragas_value):  # nothing explains it, whatever a rule or case entry says
        return [Finding("harness_error", row.case.id, row.target, name, None,
                        f"not scored (harness error): the harness raised {row.ragas_value.type} driving Ragas: "
                        f"{(row.ragas_value.message.strip().splitlines() or [''])[0][:300]}")]
    expected = row.expected
    if name != expected.classification:
        found.append(Finding(_unexpected_kind(name), row.case.id, row.target, name, expected.classification,
                             _why(expected, name, row.classification.explanation)))
    if out_of_range(row.spec.name, row.ragas_value) and not (
            expected.explained and expected.allow_out_of_range and name == expected.classification):
        low, high = value_range(row.spec.name) or UNIT_INTERVAL
        found.append(Finding("out_of_range", row.case.id, row.target, name, expected.classification,
                             f"Ragas returned {row.ragas_value!r}, outside [{low:g}, {high:g}] for {row.spec.name}"))
    return found


def pair_findings(pair: Any) -> list[Finding]:
    """The findings of one legacy-vs-collections pair (``ragas_compat.compare.api_paths.PathPair``)."""
    name = str(pair.classification.name)
    if name == pair.expected.classification:
        return []
    if harness_raised(pair.legacy.ragas_value) or harness_raised(pair.collections.ragas_value):
        return []  # a side nobody scored: its row is a harness_error finding already
    target = f"{pair.legacy.target} vs {pair.collections.target}"
    return [Finding(_unexpected_kind(name), pair.case.id, target, name, pair.expected.classification,
                    _why(pair.expected, name, pair.classification.explanation))]


# Kinds listed in ``counts`` only when they occur (a harness error; a suite recorded by ``ragas-compat record``).
OCCASIONAL_KINDS: frozenset[str] = frozenset({"harness_error", "replay_mismatch"})


def findings(audit: Audit) -> list[Finding]:
    """Every finding of an audit: rows in order, then pairs, then problems of the expectations, then
    recorded scores the replay does not reproduce, then dataset-level runs that disagree with the per-row
    scoring, then dataset-level runs Ragas raised in, then dataset-level checks the harness could not make.
    ``build_audit`` calls it once (``judged``, after it
    stored each row's and pair's findings, ``Audit.row_findings`` and ``Audit.pair_findings``); read
    ``Audit.findings``."""
    found = [finding for _, row_found in audit.rows_with_findings() for finding in row_found]
    found += [finding for _, pair_found in audit.pairs_with_findings() for finding in pair_found]
    found += [Finding("unexplained", None, None, None, None, problem) for problem in audit.expectation_problems]
    found += [Finding("replay_mismatch", case_id, target, classification, None, message)
              for case_id, target, classification, message in replay_problems(audit)]
    level = audit.dataset_level
    if level is not None:
        found += [Finding("unexplained", None, aggregate.target, None, None, f"dataset level: {text}")
                  for aggregate in level.targets for text in aggregate.disagreements()]
        found += [Finding("error", None, None, None, None, f"dataset level: {problem}")
                  for problem in level.ragas_problems]
        found += [Finding("harness_error", None, None, None, None, f"dataset level: {problem}")
                  for problem in level.harness_problems]
    return found


def counts(found: Iterable[Finding]) -> dict[str, int]:
    """Findings per kind, in ``DRIFT_KINDS`` order: every kind (zeros included) but the occasional
    ones, which appear only when found."""
    result = {kind: 0 for kind in DRIFT_KINDS}
    for finding in found:
        result[finding.kind] += 1
    return {kind: n for kind, n in result.items() if n or kind not in OCCASIONAL_KINDS}
