"""Judge error audit: human vs judge 0/1 labels aligned by claim ID (never by list position).

With positives = human label 1:
- tp, fn, fp, tn, count n
- sensitivity          = tp / (tp + fn)     None when the human marked no positives
- false-positive rate  = fp / (fp + tn)     None when the human marked no negatives
- human support rate   = (tp + fn) / n      judge support rate = (tp + fp) / n
- mean bias            = (fp - fn) / n      = judge rate - human rate
Rates over n are None when n = 0. Both maps must have identical key sets and 0/1 labels
(booleans allowed); otherwise HarnessInputError names the field. O(n).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from harness.errors import HarnessInputError
from harness.metrics.labels import validate_label


@dataclass(frozen=True)
class JudgeAudit:
    """Confusion counts and rates of a judge against human labels."""

    tp: int
    fn: int
    fp: int
    tn: int
    count: int
    sensitivity: Fraction | None
    false_positive_rate: Fraction | None
    human_support_rate: Fraction | None
    judge_support_rate: Fraction | None
    mean_bias: Fraction | None


def _ratio(num: int, den: int) -> Fraction | None:
    return Fraction(num, den) if den else None


def judge_audit(human: Mapping[str, object], judge: Mapping[str, object],
                field: str = "judge_audit") -> JudgeAudit:
    """Audit ``judge`` against ``human``; see the module docstring for formulas."""
    for side, labels in (("human", human), ("judge", judge)):
        if not isinstance(labels, Mapping):
            raise HarnessInputError(f"{field}.{side}: expected an object mapping claim IDs to 0/1 labels, "
                                    f"got {labels!r}", field=f"{field}.{side}", value=labels)
    if set(human) != set(judge):
        only_h = sorted(map(str, set(human) - set(judge)))
        only_j = sorted(map(str, set(judge) - set(human)))
        raise HarnessInputError(
            f"{field}: human and judge must label the same claim IDs; only in {field}.human: {only_h}, "
            f"only in {field}.judge: {only_j}", field=field, value={"human_only": only_h, "judge_only": only_j})
    tp = fn = fp = tn = 0
    for claim_id in human:
        h = validate_label(human[claim_id], f"{field}.human.{claim_id}")
        j = validate_label(judge[claim_id], f"{field}.judge.{claim_id}")
        if h and j:
            tp += 1
        elif h:
            fn += 1
        elif j:
            fp += 1
        else:
            tn += 1
    n = tp + fn + fp + tn
    return JudgeAudit(
        tp=tp, fn=fn, fp=fp, tn=tn, count=n,
        sensitivity=_ratio(tp, tp + fn),
        false_positive_rate=_ratio(fp, fp + tn),
        human_support_rate=_ratio(tp + fn, n),
        judge_support_rate=_ratio(tp + fp, n),
        mean_bias=Fraction(fp - fn, n) if n else None,
    )
