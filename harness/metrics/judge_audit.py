"""Judge error audit: human vs judge 0/1 labels aligned by claim ID (never by list position).

With positives = human label 1:
- tp, fn, fp, tn, count n
- sensitivity          = tp / (tp + fn)     None when the human marked no positives
- false-positive rate  = fp / (fp + tn)     None when the human marked no negatives
- human support rate   = (tp + fn) / n      judge support rate = (tp + fp) / n
- mean bias            = (fp - fn) / n      = judge rate - human rate
Rates over n are None when n = 0. Both maps must have identical key sets and 0/1 labels
(booleans allowed); otherwise HarnessInputError names the field. O(n).

``judge_audit_summary`` pools the audits of many cases (an imported dataset's) into one count over
all their claims: agreement (tp + tn) / n, sensitivity, false-positive rate and mean bias, each an
exact ``Fraction`` with its numerator and denominator, undefined (None) when the denominator is 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.labels import is_binary_label, validate_label
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, ExplainInput, MetricSpec, Quantity, ratio_text


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

    @classmethod
    def from_details(cls, details: Mapping[str, object]) -> JudgeAudit:
        """The audit back from a reference outcome's ``details`` (``dataclasses.asdict`` of one)."""
        return cls(**{f.name: details[f.name] for f in dataclasses.fields(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class Rate:
    """``numerator / denominator`` kept with its counts; ``value`` is None (undefined) when the
    denominator is 0, and ``undefined`` says why."""

    key: str          # its key in report.json
    label: str
    formula: str
    numerator: int
    denominator: int
    undefined: str

    @property
    def value(self) -> Fraction | None:
        return Fraction(self.numerator, self.denominator) if self.denominator else None

    def text(self) -> str:
        """``"agreement = (tp + tn) / n = 5/8 ≈ 0.625"`` or ``"... = 0/0: undefined (why)"``."""
        shown = ratio_text(self.numerator, self.denominator, self.undefined)
        value = self.value
        if value is not None and value.denominator != 1:
            shown += f" ≈ {float(value):.4g}"
        return f"{self.label} = {self.formula} = {shown}"


@dataclass(frozen=True)
class JudgeAuditSummary:
    """The judge audits of many cases pooled: confusion counts over all their claims and the rates."""

    cases: int                     # cases whose audit counted
    refused: tuple[str, ...]       # ids of the cases whose audit the reference refused (not counted)
    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def count(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    def rates(self) -> tuple[Rate, ...]:
        """Agreement, sensitivity, false-positive rate and mean bias, in that order."""
        tp, fn, fp, tn, n = self.tp, self.fn, self.fp, self.tn, self.count
        return (
            Rate("agreement", "agreement", "(tp + tn) / n", tp + tn, n, "no audited claims"),
            Rate("sensitivity", "sensitivity", "tp / (tp + fn)", tp, tp + fn, "the human marked no claim supported"),
            Rate("false_positive_rate", "false-positive rate", "fp / (fp + tn)", fp, fp + tn,
                 "the human marked no claim unsupported"),
            Rate("mean_bias", "mean bias", "mean(judge − human) = (fp − fn) / n", fp - fn, n, "no audited claims"),
        )

    def counts_text(self) -> str:
        return (f"{self.count} claims in {self.cases} case(s): tp {self.tp}, fn {self.fn}, fp {self.fp}, "
                f"tn {self.tn} (positive = the human's label 1)")

    def lines(self) -> list[str]:
        """Plain-text lines: the counts, then one line per rate (no user text; ``refused`` holds case ids,
        which a renderer escapes itself)."""
        return [f"judge audit over all claims: {self.counts_text()}"] + [rate.text() for rate in self.rates()]


def judge_audit_summary(audits: Iterable[tuple[str, JudgeAudit | None]]) -> JudgeAuditSummary:
    """Pool ``(case id, audit)`` pairs (None: the case's audit was refused, it is listed, not counted)."""
    cases = tp = fn = fp = tn = 0
    refused: list[str] = []
    for case_id, audit in audits:
        if audit is None:
            refused.append(case_id)
            continue
        cases += 1
        tp, fn, fp, tn = tp + audit.tp, fn + audit.fn, fp + audit.fp, tn + audit.tn
    return JudgeAuditSummary(cases, tuple(refused), tp, fn, fp, tn)


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


# --------------------------------------------------------------------------- the metric

JUDGE_AUDIT = "judge_audit"


def _judge_audit_outcome(case: Case) -> ReferenceOutcome:
    audit_in = case.judge_audit or {}
    human, judge = audit_in.get("human", {}), audit_in.get("judge", {})
    denominator = "audited claims n"
    try:
        audit = judge_audit(human, judge)
    except HarnessInputError as err:
        alternatives: dict[str, float | Fraction | None] = {}
        labels = list(human.values()) + list(judge.values())
        if set(human) == set(judge) and not all(is_binary_label(v) for v in labels):
            coerced = judge_audit({k: 1 if v else 0 for k, v in human.items()},
                                  {k: 1 if v else 0 for k, v in judge.items()})
            alternatives["coercion"] = coerced.mean_bias
        return ReferenceOutcome(JUDGE_AUDIT, None, None, str(err), alternatives, {}, denominator)
    return ReferenceOutcome(JUDGE_AUDIT, audit.mean_bias, None if audit.count else "no_audited_claims", None,
                            {}, dataclasses.asdict(audit), denominator)


def _judge_audit_quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    """explain: mean bias, sensitivity, false-positive rate and the confusion counts, with formulas."""
    d = reference.details
    if reference.refused is not None:
        formulas = [f"the reference refuses the audit: {reference.refused}"]
        if reference.alternatives.get("coercion") is not None:
            formulas.append(f"mean bias on labels coerced by truthiness = {reference.alternatives['coercion']}")
        return [], formulas
    tp, fn, fp, tn, n = d["tp"], d["fn"], d["fp"], d["tn"], d["count"]
    formulas = [
        f"mean bias = (fp − fn) / n = ({fp} − {fn}) / {n} = {ratio_text(fp - fn, n, 'no audited claims')}",
        f"sensitivity = tp / (tp + fn) = {ratio_text(tp, tp + fn, 'the human marked no claim supported')}",
        f"false-positive rate = fp / (fp + tn) = {ratio_text(fp, fp + tn, 'the human marked no claim unsupported')}",
        f"judge support rate (tp + fp) / n = {ratio_text(tp + fp, n, 'n = 0')}; human support rate (tp + fn) / n = "
        f"{ratio_text(tp + fn, n, 'n = 0')}; their difference is the mean bias",
    ]
    quantities = [Quantity("mean bias (fp − fn) / n", d["mean_bias"]),
                  Quantity("sensitivity", d["sensitivity"]),
                  Quantity("false-positive rate", d["false_positive_rate"]),
                  Quantity("human support rate", d["human_support_rate"]),
                  Quantity("judge support rate", d["judge_support_rate"]),
                  Quantity("tp", tp), Quantity("fn", fn), Quantity("fp", fp), Quantity("tn", tn),
                  Quantity("audited claims n", n)]
    return quantities, formulas


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=JUDGE_AUDIT,
        reference_on="judge_audit.human vs judge_audit.judge, aligned by claim ID",
        ragas=None,
        fields_read=(),
        denominator="audited claims n",
        undefined_policy=("Mean bias (fp - fn) / n is None ('no_audited_claims') when n = 0; sensitivity and "
                          "false-positive rate are None when the human marked no positives / negatives. "
                          "Different claim-ID sets or non-0/1 labels are refused. No Ragas counterpart."),
        compute=_judge_audit_outcome,
        requires=("judge_audit",),
        explain=ExplainAdapter(
            command="judge-audit", takes="label_maps",
            inputs_help="--human JSON-OBJECT --judge JSON-OBJECT (claim ID -> 0/1)", targets=(),
            case_inputs=lambda given: {"judge_audit": {"human": dict(given.human or {}),
                                                       "judge": dict(given.judge or {})}},
            quantities=_judge_audit_quantities)),
)
