"""What a reference implementation says about one (case, metric): the record the diff engine consumes."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class ReferenceOutcome:
    """The reference's verdict on one case for one metric.

    ``value`` is the exact reference value (None = undefined, reason in ``undefined_reason``;
    or refused, message in ``refused``). ``alternatives`` holds the value under semantics Ragas
    is known to use, keyed by the classification that would explain a match:
    ``"epsilon"`` (float, AP metrics: numerator / (hits + 1e-10) with Ragas's float operations),
    ``"dedup"`` (Fraction | None, ID metrics under str() + set semantics),
    ``"coercion"`` (value after coercing labels by truthiness; only when refused).
    ``details`` holds every quantity for the report; ``denominator`` says in words what the
    value is divided by.
    """

    metric: str
    value: Fraction | None
    undefined_reason: str | None
    refused: str | None
    alternatives: dict[str, float | Fraction | None]
    details: dict[str, object]
    denominator: str
