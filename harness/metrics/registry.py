"""The one registry of metrics: our name -> reference outcome, Ragas targets, fields, denominator,
undefined policy.

Later stages (targets, diff, report) and generic tests iterate ``METRICS`` instead of repeating
lists. Each ``MetricSpec.outcome(case)`` turns a Case into a ReferenceOutcome:

- ``value``: the exact reference value (Fraction) or None (undefined, or refused).
- ``alternatives``: the value under semantics Ragas is known to use —
  ``"epsilon"`` (AP metrics: float with Ragas's ``/ (hits + 1e-10)``),
  ``"dedup"`` (ID metrics: str() + set semantics; the reference value uses raw lists),
  ``"coercion"`` (when the reference refuses a non-0/1 label: the value after coercing labels by
  truthiness, as Ragas does; a float for AP metrics because Ragas's float formula applies).
- ``refused``: the reference's message when it refuses the input (value is then None). A judge
  reply that is not a verdict (case field ``judge_replies``) is refused too, with
  ``details["error_reason"] == "judge_reply_unparseable"``: an error, not an undefined value.

The string-match metrics derive 0/1 labels by *exact* string equality (retrieved context i is
relevant iff it equals some reference context); Ragas uses Levenshtein similarity with a 0.5
threshold instead, so near-duplicates (e.g. an outdated version of a page) can differ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from harness.cases import Case
from harness.errors import HarnessInputError
from harness.metrics.claim_coverage import claim_coverage, claim_labels
from harness.metrics.context_precision import context_precision_profile, ragas_float_average_precision
from harness.metrics.id_overlap import id_overlap
from harness.metrics.judge_audit import judge_audit
from harness.metrics.labels import coerce_by_truthiness, is_binary_label
from harness.metrics.outcome import ReferenceOutcome


@dataclass(frozen=True)
class MetricSpec:
    """One metric: how the reference computes it and which Ragas classes it is compared with."""

    name: str
    reference_on: str                        # the case input the reference reads, in words
    ragas_targets: tuple[str, ...]           # Ragas legacy class names ("" = none)
    fields_read: tuple[str, ...]             # SingleTurnSample fields the Ragas classes read
    denominator: str                         # what the value is divided by, in words
    undefined_policy: str                    # what happens on an empty denominator, both sides
    outcome: Callable[[Case], ReferenceOutcome]
    applies_to: Callable[[Case], bool]


# --------------------------------------------------------------------------- AP metrics

AP_DENOMINATOR = "relevant retrieved contexts h_K (Ragas adds 1e-10)"
AP_UNDEFINED = ("None when no retrieved context is relevant (undefined_reason 'no_relevant_retrieved', or "
                "'empty_retrieval' with details.empty_context when nothing was retrieved); Ragas returns 0.0 "
                "there because of the 1e-10 epsilon (alternative 'epsilon'). Non-0/1 labels are refused; "
                "Ragas coerces them by truthiness (alternative 'coercion').")


def _ap_outcome(metric: str, labels: Sequence[object], field: str, corpus_relevant: int | None,
                denominator: str, extra: dict[str, object] | None = None) -> ReferenceOutcome:
    details: dict[str, object] = {"labels": tuple(labels)}
    details.update(extra or {})
    try:
        profile = context_precision_profile(labels, corpus_relevant, field,
                                            corpus_relevant_field="corpus_relevant_count")
    except HarnessInputError as err:
        alternatives: dict[str, float | Fraction | None] = {}
        if isinstance(labels, (list, tuple)) and not all(is_binary_label(v) for v in labels):
            coerced = coerce_by_truthiness(labels)
            alternatives["coercion"] = ragas_float_average_precision(coerced)
            details["coerced_labels"] = coerced
            details["coercion_exact"] = context_precision_profile(coerced).context_ap_exact
        return ReferenceOutcome(metric, None, None, str(err), alternatives, details, denominator)
    details.update(dataclasses.asdict(profile))
    return ReferenceOutcome(metric, profile.context_ap_exact, profile.undefined_reason, None,
                            {"epsilon": profile.context_ap_ragas_float}, details, denominator)


def _verdict_ap(key: str, uses_corpus_relevant: bool) -> Callable[[Case], ReferenceOutcome]:
    """AP over the frozen labels at verdicts.<key>. R (corpus_relevant_count) counts items relevant to
    the *reference* answer, so only the with-reference variant uses it."""
    def outcome(case: Case) -> ReferenceOutcome:
        _require(case, key)
        if case.judge_replies.get(key):
            return unparseable_reply_outcome(key, case.verdicts[key], case.judge_replies[key], AP_DENOMINATOR)
        r = case.corpus_relevant_count if uses_corpus_relevant else None
        return _ap_outcome(key, case.verdicts[key], f"verdicts.{key}", r, AP_DENOMINATOR)
    return outcome


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


def string_match_labels(retrieved: Sequence[str], reference: Sequence[str]) -> tuple[int, ...]:
    """Label 1 for each retrieved context that exactly equals some reference context, else 0."""
    wanted = set(reference)
    return tuple(1 if c in wanted else 0 for c in retrieved)


def _string_match_precision(case: Case) -> ReferenceOutcome:
    _require(case, "context_precision_string_match")
    labels = string_match_labels(case.retrieved_contexts, case.reference_contexts or ())
    return _ap_outcome("context_precision_string_match", labels, "derived string-match labels", None,
                       "retrieved contexts equal to a reference context (Ragas adds 1e-10)",
                       {"label_rule": "exact string equality with some reference_contexts item",
                        "reference_contexts": len(case.reference_contexts or ())})


# --------------------------------------------------------------------------- claim metrics

def _claim_outcome(metric: str, claims: Sequence[object], label_key: str, field: str,
                   denominator: str) -> ReferenceOutcome:
    try:
        cov = claim_coverage(claims, label_key, field)  # type: ignore[arg-type]
    except HarnessInputError as err:
        alternatives: dict[str, float | Fraction | None] = {}
        details: dict[str, object] = {"label_key": label_key}
        try:
            raw = claim_labels(claims, label_key, field)  # type: ignore[arg-type]
        except HarnessInputError:
            raw = None
        if raw is not None:
            coerced = coerce_by_truthiness(raw)
            alternatives["coercion"] = Fraction(sum(coerced), len(coerced)) if coerced else None
            details.update(labels=tuple(raw), coerced_labels=coerced)
        return ReferenceOutcome(metric, None, None, str(err), alternatives, details, denominator)
    details = dataclasses.asdict(cov)
    details["labels"] = tuple(claim[label_key] for claim in claims)  # type: ignore[index]
    return ReferenceOutcome(metric, cov.value, cov.undefined_reason, None, {}, details, denominator)


def _context_recall(case: Case) -> ReferenceOutcome:
    _require(case, "context_recall")
    return _claim_outcome("context_recall", case.verdicts["context_recall"], "attributed",
                          "verdicts.context_recall", "reference-answer claims |G|")


def _faithfulness(case: Case) -> ReferenceOutcome:
    _require(case, "faithfulness")
    return _claim_outcome("faithfulness", case.verdicts["faithfulness"], "verdict",
                          "verdicts.faithfulness", "response claims |A|")


def _string_match_recall(case: Case) -> ReferenceOutcome:
    """Share of reference_contexts entries that exactly equal some retrieved context."""
    _require(case, "context_recall_string_match")
    reference = case.reference_contexts or ()
    retrieved = set(case.retrieved_contexts)
    found = tuple(1 if ref in retrieved else 0 for ref in reference)
    total = len(found)
    details: dict[str, object] = {"found_labels": found, "found": sum(found), "reference_contexts": total,
                                  "retrieved_contexts": len(case.retrieved_contexts),
                                  "label_rule": "exact string equality with some retrieved_contexts item"}
    return ReferenceOutcome("context_recall_string_match",
                            Fraction(sum(found), total) if total else None,
                            None if total else "empty_reference_contexts", None, {}, details,
                            "reference contexts (entries of reference_contexts)")


# --------------------------------------------------------------------------- ID metrics

def _id_outcome(metric: str, case: Case, precision: bool) -> ReferenceOutcome:
    _require(case, metric)
    denominator = ("retrieved ID list entries (Ragas: distinct str() of retrieved IDs)" if precision
                   else "reference ID list entries (Ragas: distinct str() of reference IDs)")
    try:
        ov = id_overlap(case.retrieved_context_ids or (), case.reference_context_ids or ())
    except HarnessInputError as err:
        return ReferenceOutcome(metric, None, None, str(err), {}, {}, denominator)
    details = dataclasses.asdict(ov)
    details["collapsed"] = [dataclasses.asdict(g) for g in ov.collapsed]
    if precision:
        value, dedup, reason = ov.raw_precision, ov.ragas_precision, ov.precision_undefined_reason
    else:
        value, dedup, reason = ov.raw_recall, ov.ragas_recall, ov.recall_undefined_reason
    return ReferenceOutcome(metric, value, reason, None, {"dedup": dedup}, details, denominator)


# --------------------------------------------------------------------------- judge audit

def _judge_audit(case: Case) -> ReferenceOutcome:
    _require(case, "judge_audit")
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
        return ReferenceOutcome("judge_audit", None, None, str(err), alternatives, {}, denominator)
    return ReferenceOutcome("judge_audit", audit.mean_bias, None if audit.count else "no_audited_claims", None,
                            {}, dataclasses.asdict(audit), denominator)


# --------------------------------------------------------------------------- applicability

def _has_verdict(key: str) -> Callable[[Case], bool]:
    return lambda case: key in case.verdicts


def _has_reference_contexts(case: Case) -> bool:
    return case.reference_contexts is not None


def _has_ids(case: Case) -> bool:
    return case.retrieved_context_ids is not None and case.reference_context_ids is not None


def _has_judge_audit(case: Case) -> bool:
    return case.judge_audit is not None


def _require(case: Case, metric_name: str) -> None:
    spec = metric(metric_name)
    if not spec.applies_to(case):
        raise HarnessInputError(
            f"case {case.id!r}: metric {metric_name!r} does not apply: it needs {spec.reference_on}",
            field=metric_name, value=case.id)


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name="context_precision_with_reference",
        reference_on="verdicts.context_precision_with_reference",
        ragas_targets=("LLMContextPrecisionWithReference", "ContextPrecision"),
        fields_read=("user_input", "retrieved_contexts", "reference"),
        denominator=AP_DENOMINATOR,
        undefined_policy=AP_UNDEFINED,
        outcome=_verdict_ap("context_precision_with_reference", uses_corpus_relevant=True),
        applies_to=_has_verdict("context_precision_with_reference")),
    MetricSpec(
        name="context_precision_without_reference",
        reference_on="verdicts.context_precision_without_reference",
        ragas_targets=("LLMContextPrecisionWithoutReference", "ContextUtilization"),
        fields_read=("user_input", "retrieved_contexts", "response"),
        denominator=AP_DENOMINATOR,
        undefined_policy=AP_UNDEFINED,
        outcome=_verdict_ap("context_precision_without_reference", uses_corpus_relevant=False),
        applies_to=_has_verdict("context_precision_without_reference")),
    MetricSpec(
        name="context_precision_string_match",
        reference_on="reference_contexts (labels: retrieved context i exactly equals some reference context)",
        ragas_targets=("NonLLMContextPrecisionWithReference",),
        fields_read=("retrieved_contexts", "reference_contexts"),
        denominator="retrieved contexts equal to a reference context (Ragas adds 1e-10)",
        undefined_policy=("None when no retrieved context equals a reference context ('no_relevant_retrieved') or "
                          "nothing was retrieved ('empty_retrieval'); Ragas returns 0.0 (epsilon) there, and "
                          "fails on empty reference_contexts (max() of an empty list)."),
        outcome=_string_match_precision,
        applies_to=_has_reference_contexts),
    MetricSpec(
        name="context_recall",
        reference_on="verdicts.context_recall (attributed)",
        ragas_targets=("LLMContextRecall", "ContextRecall"),
        fields_read=("user_input", "retrieved_contexts", "reference"),
        denominator="reference-answer claims |G|",
        undefined_policy=("None ('zero_claims') when the judge produced zero reference claims; Ragas returns NaN. "
                          "Never 0 or 1. Non-0/1 labels are refused (Ragas coerces by truthiness)."),
        outcome=_context_recall,
        applies_to=_has_verdict("context_recall")),
    MetricSpec(
        name="context_recall_string_match",
        reference_on="reference_contexts (share exactly present in retrieved_contexts)",
        ragas_targets=("NonLLMContextRecall",),
        fields_read=("retrieved_contexts", "reference_contexts"),
        denominator="reference contexts (entries of reference_contexts)",
        undefined_policy=("None ('empty_reference_contexts') when reference_contexts is empty; Ragas fails there "
                          "(max() of an empty list), as it does on empty retrieved_contexts, where the reference "
                          "gives 0."),
        outcome=_string_match_recall,
        applies_to=_has_reference_contexts),
    MetricSpec(
        name="id_context_precision",
        reference_on="retrieved_context_ids vs reference_context_ids",
        ragas_targets=("IDBasedContextPrecision",),
        fields_read=("retrieved_context_ids", "reference_context_ids"),
        denominator="retrieved ID list entries (Ragas: distinct str() of retrieved IDs)",
        undefined_policy=("None ('empty_id_set') when no ID was retrieved; Ragas returns NaN. The reference keeps "
                          "duplicates and types; Ragas's str() + set value is alternative 'dedup'."),
        outcome=lambda case: _id_outcome("id_context_precision", case, precision=True),
        applies_to=_has_ids),
    MetricSpec(
        name="id_context_recall",
        reference_on="retrieved_context_ids vs reference_context_ids",
        ragas_targets=("IDBasedContextRecall",),
        fields_read=("retrieved_context_ids", "reference_context_ids"),
        denominator="reference ID list entries (Ragas: distinct str() of reference IDs)",
        undefined_policy=("None ('empty_id_set') when there are no reference IDs; Ragas returns NaN. The reference "
                          "keeps duplicates and types; Ragas's str() + set value is alternative 'dedup'."),
        outcome=lambda case: _id_outcome("id_context_recall", case, precision=False),
        applies_to=_has_ids),
    MetricSpec(
        name="faithfulness",
        reference_on="verdicts.faithfulness (verdict)",
        ragas_targets=("Faithfulness",),
        fields_read=("user_input", "response", "retrieved_contexts"),
        denominator="response claims |A|",
        undefined_policy=("None ('zero_claims') when the response yields zero claims; Ragas returns NaN without a "
                          "second judge call. Never 1. Non-0/1 labels are refused (Ragas coerces by truthiness)."),
        outcome=_faithfulness,
        applies_to=_has_verdict("faithfulness")),
    MetricSpec(
        name="judge_audit",
        reference_on="judge_audit.human vs judge_audit.judge, aligned by claim ID",
        ragas_targets=(),
        fields_read=(),
        denominator="audited claims n",
        undefined_policy=("Mean bias (fp - fn) / n is None ('no_audited_claims') when n = 0; sensitivity and "
                          "false-positive rate are None when the human marked no positives / negatives. "
                          "Different claim-ID sets or non-0/1 labels are refused. No Ragas counterpart."),
        outcome=_judge_audit,
        applies_to=_has_judge_audit),
)

METRIC_NAMES: tuple[str, ...] = tuple(spec.name for spec in METRICS)
_BY_NAME = {spec.name: spec for spec in METRICS}


def metric(name: str) -> MetricSpec:
    """The MetricSpec called ``name``; HarnessInputError listing the valid names otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise HarnessInputError(f"unknown metric {name!r}; valid metrics: {', '.join(METRIC_NAMES)}",
                                field="metric", value=name) from None
