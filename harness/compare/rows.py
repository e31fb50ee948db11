"""The rows of an audit: one (case, metric, Ragas target) classified, or a reference-only metric."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.compare.classify import Diagnosis
from ragas_compat.compare.expectations import Expectation
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import MetricSpec
from ragas_compat.values import Label, RagasValue, Ranking


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
    classification: Diagnosis
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


def reference_text(row: AuditRow | ReferenceOnlyRow, exact: Callable[[Fraction | Label | Ranking], str] = str) -> str:
    """The row's reference value in words: ``refused (why)``, ``undefined (reason)`` or ``exact(value)``."""
    ref = row.reference
    if ref.refused is not None:
        return f"refused ({ref.refused})"
    if ref.value is None:
        return f"undefined ({ref.undefined_reason})"
    return exact(ref.value)
