"""Context recall: how much of what should have been retrieved was.

- ``context_recall`` (LLM-judged): attributed reference-answer claims / reference-answer claims
  (``ragas_compat.metrics.claim_coverage``); undefined for zero claims, where Ragas returns NaN.
- ``context_recall_string_match``: reference contexts found verbatim among the retrieved contexts /
  reference contexts; undefined for no reference contexts (Ragas's NonLLMContextRecall fails there,
  and on empty retrieved contexts, with ``max()`` of an empty list).
"""

from __future__ import annotations

from fractions import Fraction

from ragas_compat.cases.model import Case
from ragas_compat.metrics.claim_coverage import claim_outcome, claim_quantities, explain_claims, share_as_given
from ragas_compat.metrics.context_precision import TEXTS_HELP, explain_texts
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
    ratio_text,
)

CONTEXT_RECALL = "context_recall"
STRING_MATCH = "context_recall_string_match"


def _context_recall(case: Case) -> ReferenceOutcome:
    return claim_outcome(CONTEXT_RECALL, case.verdicts[CONTEXT_RECALL], "attributed",
                         f"verdicts.{CONTEXT_RECALL}", "reference-answer claims |G|")


def _string_match_recall(case: Case) -> ReferenceOutcome:
    """Share of reference_contexts entries that exactly equal some retrieved context."""
    reference = case.reference_contexts or ()
    retrieved = set(case.retrieved_contexts)
    found = tuple(1 if ref in retrieved else 0 for ref in reference)
    total = len(found)
    details: dict[str, object] = {"found_labels": found, "found": sum(found), "reference_contexts": total,
                                  "retrieved_contexts": len(case.retrieved_contexts),
                                  "label_rule": "exact string equality with some retrieved_contexts item"}
    return ReferenceOutcome(STRING_MATCH, Fraction(sum(found), total) if total else None,
                            None if total else "empty_reference_contexts", None, {}, details,
                            "reference contexts (entries of reference_contexts)")


def _string_recall_quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    """explain: reference contexts found verbatim / reference contexts."""
    d = reference.details
    found, total = int(d["found"]), int(d["reference_contexts"])
    return ([Quantity("recall (exact)", reference.number), Quantity("reference contexts found", found),
             Quantity("reference contexts", total)],
            [f"found labels {list(d['found_labels'])}: {d['label_rule']} (Ragas: Levenshtein similarity > 0.5)",
             f"recall = found / reference contexts = {ratio_text(found, total, 'empty_reference_contexts')}"])


RAGAS_MODULE = "ragas.metrics._context_recall"
LLM_TARGETS = RagasTargets(("LLMContextRecall", "ContextRecall"), ("ContextRecall",), RAGAS_MODULE,
                           judge="context_recall")
STRING_MATCH_TARGETS = RagasTargets(("NonLLMContextRecall",), (), RAGAS_MODULE)

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=CONTEXT_RECALL,
        reference_on="verdicts.context_recall (attributed)",
        ragas=LLM_TARGETS,
        fields_read=("user_input", "retrieved_contexts", "reference"),
        denominator="reference-answer claims |G|",
        undefined_policy=("None ('zero_claims') when the judge produced zero reference claims; Ragas returns NaN. "
                          "Never 0 or 1. Non-0/1 labels are refused (Ragas coerces by truthiness)."),
        compute=_context_recall,
        requires=(f"verdicts.{CONTEXT_RECALL}",),
        verdicts=Verdicts(CONTEXT_RECALL, "claims", "attributed"),
        as_given=share_as_given,
        fuzz_inputs=lambda draw: {"verdicts": {CONTEXT_RECALL: draw.attributed_claims}},
        explain=ExplainAdapter(
            command="context-recall", takes="labels",
            inputs_help='LABELS (one 0/1 "attributed" per reference claim; "" = zero claims)',
            targets=LLM_TARGETS.ids(),
            case_inputs=explain_claims(CONTEXT_RECALL, "attributed", "reference"),
            quantities=lambda reference, given: claim_quantities(reference, "CR", "reference"))),
    MetricSpec(
        name=STRING_MATCH,
        reference_on="reference_contexts (share exactly present in retrieved_contexts)",
        ragas=STRING_MATCH_TARGETS,
        fields_read=("retrieved_contexts", "reference_contexts"),
        denominator="reference contexts (entries of reference_contexts)",
        undefined_policy=("None ('empty_reference_contexts') when reference_contexts is empty; Ragas fails there "
                          "(max() of an empty list), as it does on empty retrieved_contexts, where the reference "
                          "gives 0."),
        compute=_string_match_recall,
        requires=("reference_contexts",),
        fuzz_inputs=lambda draw: {"reference_contexts": draw.reference_contexts},
        explain=ExplainAdapter(
            command="string-match-recall", takes="texts", inputs_help=TEXTS_HELP,
            targets=STRING_MATCH_TARGETS.ids(), case_inputs=explain_texts,
            quantities=_string_recall_quantities)),
)
