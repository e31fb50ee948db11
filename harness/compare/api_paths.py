"""Legacy vs collections at this Ragas: the two Ragas paths for one metric, compared case by case.

A *pair* is a legacy row (``legacy:X``) and a collections row (``collections:Y``) of the same
case and metric (every legacy target with every collections target). It is classified with
``ragas_compat.compare.classify.classify`` and the same vocabulary, with the legacy value in the place of the
reference (``legacy_as_reference``):

- a legacy float becomes the exact value ``Fraction(float)``; bit-equal is ``identical``, a few
  ulps is ``rounding``;
- ``epsilon``: both paths compute AP with the ``1e-10`` in the denominator, so the legacy float
  already carries it. In a pair ``epsilon`` means the paths differ by exactly that term (one adds
  it, the other not), recomputed from the case's labels: the alternative is the case's exact AP
  when the legacy value is the epsilon float, and the epsilon float when the legacy value is exact;
- ``coercion``: the legacy classes map verdicts to 0/1 by truthiness; when the case holds a
  non-binary verdict (the reference refuses it), the alternative is the value with the verdicts
  taken AS GIVEN (AP with Ragas's float operations; claim share ``sum / count``), so a path that
  does not coerce is recognised;
- legacy NaN is an undefined reference: collections NaN is ``identical`` (same meaning, same
  encoding), 0.0 is ``empty_as_zero``, anything else ``divergence``;
- a collections error is ``error`` (``identical`` when the legacy class raised the same type);
  a legacy error against a collections value is ``divergence``.

Legacy rows of metrics with no collections class in the run (and the reverse) are listed as
unpaired. Nothing here does I/O; ``ragas_compat.report.markdown.api_paths`` renders the section.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import groupby
from typing import Any

from ragas_compat.cases import Case
from ragas_compat.compare.classify import FLOAT_TOLERANCE, Diagnosis, classify, same_float
from ragas_compat.compare.expectations import IDENTICAL, Expectation, Expectations
from ragas_compat.compare.rows import AuditRow
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.values import NON_NUMERIC, RagasError
from ragas_compat.vocabulary import Api, Classification, TargetId


@dataclass(frozen=True)
class PathPair:
    """One (case, metric, legacy target, collections target), classified."""

    case: Case
    metric: str
    legacy: AuditRow
    collections: AuditRow
    classification: Diagnosis
    expected: Expectation

    @property
    def unexpected(self) -> bool:
        return self.classification.name != self.expected.classification


def _is_legacy(row: AuditRow) -> bool:
    return TargetId(row.target).api is Api.LEGACY


def _is_collections(row: AuditRow) -> bool:
    return TargetId(row.target).api is Api.COLLECTIONS


def _as_given_value(row: AuditRow) -> float | None:
    """The case's value with non-binary verdicts taken as given (None when not computable)."""
    labels = row.reference.details.get("labels")
    if row.reference.refused is None or not isinstance(labels, (list, tuple)) or not labels:
        return None
    if not all(isinstance(v, (bool, int)) for v in labels):
        return None  # e.g. 1.5: no integer verdict to take as given
    if row.spec.as_given is None:
        return None
    return row.spec.as_given([int(v) for v in labels])


def _epsilon_counterpart(legacy_value: float, reference: ReferenceOutcome) -> float | None:
    """The AP value on the other side of the 1e-10 from the legacy value, if it is on one side."""
    eps = reference.alternatives.get("epsilon")
    if eps is None:
        return None
    number = reference.number  # only the AP metrics (numbers) have an epsilon alternative
    if number is None:
        return None
    exact, eps = float(number), float(eps)
    if same_float(exact, eps):
        return None
    if same_float(legacy_value, eps):
        return exact
    if same_float(legacy_value, exact):
        return eps
    return None


def legacy_as_reference(legacy: AuditRow) -> ReferenceOutcome:
    """The legacy row's value as a ReferenceOutcome (see the module docstring)."""
    value = legacy.ragas_value
    details: dict[str, object] = {"legacy_target": legacy.target}
    tolerance = legacy.reference.details.get(FLOAT_TOLERANCE)
    if isinstance(tolerance, float):  # two float evaluations, each within the tolerance of the exact value
        details[FLOAT_TOLERANCE] = 2 * tolerance
    base: dict[str, Any] = {"metric": legacy.spec.name, "details": details, "denominator": legacy.reference.denominator}
    if isinstance(value, RagasError):
        return ReferenceOutcome(value=None, undefined_reason=None, alternatives={},
                                refused=(f"the harness raised {value.type} on the legacy path: {value.message}"
                                         if value.raised_by_harness
                                         else f"the legacy path raised {value.type}: {value.message}"), **base)
    if isinstance(value, NON_NUMERIC):  # a label or a ranking: the reference as it is, compared exactly
        return ReferenceOutcome(value=value, undefined_reason=None, refused=None, alternatives={}, **base)
    if math.isnan(value):
        return ReferenceOutcome(value=None, undefined_reason="legacy path returned NaN", refused=None,
                                alternatives={}, **base)
    alternatives: dict[str, float | Fraction | None] = {}
    epsilon = _epsilon_counterpart(value, legacy.reference)
    if epsilon is not None:
        alternatives["epsilon"] = epsilon
    as_given = _as_given_value(legacy)
    if as_given is not None:
        alternatives["coercion"] = as_given
    if math.isinf(value):  # no exact Fraction: only bit-equality can match
        return ReferenceOutcome(value=None, undefined_reason=f"legacy path returned {value!r}",
                                refused=None, alternatives=alternatives, **base)
    return ReferenceOutcome(value=Fraction(value), undefined_reason=None, refused=None,
                            alternatives=alternatives, **base)


def value_text(value: Any) -> str:
    if isinstance(value, RagasError):
        return f"{value.label}: {value.message}"
    return repr(value)


def classify_paths(legacy: AuditRow, collections: AuditRow) -> Diagnosis:
    """Classify the collections value against the legacy value (module docstring)."""
    left, right = legacy.ragas_value, collections.ragas_value
    name: Classification
    if isinstance(left, RagasError):
        if isinstance(right, RagasError):
            name = Classification.IDENTICAL if right.type == left.type else Classification.ERROR
        else:
            name = Classification.DIVERGENCE
    elif isinstance(left, float) and isinstance(right, float) and (
            same_float(left, right) or (math.isnan(left) and math.isnan(right))):
        name = Classification.IDENTICAL
    else:
        name = classify(right, legacy_as_reference(legacy)).name
    return Diagnosis(name, f"legacy {value_text(left)}, collections {value_text(right)}: {name.pair_meaning}")


def path_pairs(rows: Sequence[AuditRow], expectations: Expectations | None) -> tuple[PathPair, ...]:
    """Every (legacy row, collections row) of the same case and metric, classified, in row order (a
    metric a case configures, ``MetricSpec.reference_key``: of the same configuration)."""
    collections_rows: dict[tuple[str, str], list[AuditRow]] = {}
    for row in rows:
        if _is_collections(row):
            collections_rows.setdefault((row.case.id, row.spec.reference_key), []).append(row)
    pairs = []
    for legacy in (r for r in rows if _is_legacy(r)):
        for collections in collections_rows.get((legacy.case.id, legacy.spec.reference_key), ()):
            diagnosis = classify_paths(legacy, collections)
            expected = (expectations.explain_pair(legacy, collections, diagnosis.name)
                        if expectations is not None else IDENTICAL)
            pairs.append(PathPair(legacy.case, legacy.spec.name, legacy, collections, diagnosis, expected))
    return tuple(pairs)


def path_expectation_problems(pairs: Sequence[PathPair], expectations: Expectations,
                              case_ids: set[str]) -> list[str]:
    """Coverage problems of the path case entries (stale or ambiguous); unexpected pairs are drift
    findings of their own (ragas_compat.compare.verdict.pair_findings)."""
    return expectations.check_path_coverage(
        [(p.case.id, p.legacy.target, p.collections.target) for p in pairs], case_ids)


def unpaired_metrics(rows: Sequence[AuditRow]) -> dict[str, list[str]]:
    """Metrics run on only one path: ``{"legacy_only": [...], "collections_only": [...]}``."""
    legacy = {r.spec.name for r in rows if _is_legacy(r)}
    collections = {r.spec.name for r in rows if _is_collections(r)}
    return {"legacy_only": sorted(legacy - collections), "collections_only": sorted(collections - legacy)}


@dataclass(frozen=True)
class PathDifference:
    """One behavioural difference: a case and metric where the paths disagree, with the values."""

    case: Case
    metric: str
    classification: str
    legacy: tuple[tuple[str, str], ...]       # (target, value text)
    collections: tuple[tuple[str, str], ...]
    meaning: str
    explained_by: tuple[str, ...] = ()  # the rules or case entries that explain its pairs


def path_differences(pairs: Iterable[PathPair]) -> Iterator[PathDifference]:
    """Non-identical pairs grouped by (case, metric, classification), made case by case (pairs come in
    row order, so a case's pairs are together)."""
    for _, case_pairs in groupby(pairs, key=lambda pair: pair.case.id):
        groups: dict[tuple[str, str], list[PathPair]] = {}
        for pair in case_pairs:
            if pair.classification.name != "identical":
                groups.setdefault((pair.metric, pair.classification.name), []).append(pair)
        for (metric, name), members in groups.items():
            legacy = {p.legacy.target: value_text(p.legacy.ragas_value) for p in members}
            collections = {p.collections.target: value_text(p.collections.ragas_value) for p in members}
            yield PathDifference(members[0].case, metric, name, tuple(legacy.items()), tuple(collections.items()),
                                 Classification(name).pair_meaning,
                                 tuple(sorted({p.expected.by or "nothing (unexplained)" for p in members})))
