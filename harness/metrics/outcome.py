"""What a reference implementation says about one (case, metric): the record the diff engine consumes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ragas_compat.values import Label, Ranking


@dataclass(frozen=True)
class ReferenceOutcome:
    """The reference's verdict on one case for one metric.

    ``value`` is the exact reference value (None = undefined, reason in ``undefined_reason``;
    or refused, message in ``refused``); for a metric whose value is not a number, a ``Label``
    (DiscreteMetric's category) or a ``Ranking`` (RankingMetric's list), compared exactly. ``alternatives`` holds the value under semantics Ragas
    is known to use, keyed by the classification that would explain a match:
    ``"epsilon"`` (float, AP metrics: numerator / (hits + 1e-10) with Ragas's float operations),
    ``"dedup"`` (Fraction | None, ID metrics under str() + set semantics),
    ``"coercion"`` (value after coercing labels by truthiness; only when refused).
    ``details`` holds every quantity for the report; ``denominator`` says in words what the
    value is divided by.
    """

    metric: str
    value: Fraction | Label | Ranking | None
    undefined_reason: str | None
    refused: str | None
    alternatives: dict[str, float | Fraction | None]
    details: dict[str, object]
    denominator: str

    @property
    def number(self) -> Fraction | None:
        """``value`` of a metric whose value is a number (every metric but DiscreteMetric's and
        RankingMetric's): the exact rational, or None. A label or a ranking here is the harness's
        own error (a numeric metric's code read a non-numeric reference): TypeError, never a float."""
        if isinstance(self.value, (Label, Ranking)):
            raise TypeError(f"{self.metric}: the reference's value is a {type(self.value).__name__}, not a number")
        return self.value


JUDGE_REPLY_UNPARSEABLE = "judge_reply_unparseable"


def unparseable_reply_outcome(key: str, labels: Sequence[object], replies: Mapping[int, str],
                              denominator: str) -> ReferenceOutcome:
    """A row whose judge reply (case field judge_replies) is not a verdict: an *error*, not an
    undefined value (the formula's denominator is fine; the judge failed). Encoded as a refusal
    with ``details["error_reason"] = "judge_reply_unparseable"``; no alternative value."""
    where = ", ".join(f"judge_replies.{key}.{i} = {text!r}" for i, text in sorted(replies.items()))
    return ReferenceOutcome(
        key, None, None,
        f"the judge's reply is not a verdict ({where}); there is no label to score",
        {}, {"labels": tuple(labels), "error_reason": JUDGE_REPLY_UNPARSEABLE,
             "unparseable_replies": {str(i): text for i, text in sorted(replies.items())}},
        denominator)
