"""Faithfulness: supported response claims / response claims (``ragas_compat.metrics.claim_coverage``).

Undefined for zero response claims (Ragas returns NaN, without asking the judge a second time);
never 1 there. It measures support by the retrieved contexts, not completeness.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ragas_compat.cases.model import Case
from ragas_compat.metrics.claim_coverage import (
    claim_outcome,
    claim_quantities,
    explain_claims,
    reply_verdicts,
    share_as_given,
)
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, MetricSpec, RagasTargets, Verdicts

FAITHFULNESS = "faithfulness"


VERDICTS_RETURNED = "verdicts_returned"
VERDICTS_RETURNED_TEXT = ("the judge's NLI reply returned a verdict for fewer (or more) statements than the response "
                          "has; Ragas divides the supported verdicts by the verdicts returned, not by the statements")


def returned_verdicts(case: Case, key: str, prompt_kind: str) -> list[object] | None:
    """The verdicts a per-call script's first ``prompt_kind`` reply returns (case key ``judge_calls``), or
    None when the case scripts no such call or its reply is not a JSON object with a ``statements`` list."""
    calls = case.judge_calls.get(key, {}).get(prompt_kind, ())
    return reply_verdicts(calls[0]) if calls else None


def _faithfulness(case: Case) -> ReferenceOutcome:
    outcome = claim_outcome(FAITHFULNESS, case.verdicts[FAITHFULNESS], "verdict", f"verdicts.{FAITHFULNESS}",
                            "response claims |A|")
    returned = returned_verdicts(case, FAITHFULNESS, "nli_statements")
    if outcome.value is None or returned is None or len(returned) == len(case.verdicts[FAITHFULNESS]):
        return outcome
    # Ragas: sum(1 if verdict else 0) / len(verdicts returned); NaN when none is returned
    share = Fraction(sum(1 for v in returned if v), len(returned)) if returned else math.nan
    outcome.alternatives["variant:" + VERDICTS_RETURNED] = share
    outcome.details["variants"] = {VERDICTS_RETURNED: VERDICTS_RETURNED_TEXT}
    outcome.details["verdicts_returned"] = len(returned)
    return outcome


TARGETS = RagasTargets(("Faithfulness",), ("Faithfulness",), "ragas.metrics._faithfulness", judge="faithfulness")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=FAITHFULNESS,
        reference_on="verdicts.faithfulness (verdict)",
        ragas=TARGETS,
        fields_read=("user_input", "response", "retrieved_contexts"),
        denominator="response claims |A|",
        undefined_policy=("None ('zero_claims') when the response yields zero claims; Ragas returns NaN without a "
                          "second judge call. Never 1. Non-0/1 labels are refused (Ragas coerces by truthiness)."),
        compute=_faithfulness,
        requires=(f"verdicts.{FAITHFULNESS}",),
        verdicts=Verdicts(FAITHFULNESS, "claims", "verdict"),
        as_given=share_as_given,
        fuzz_inputs=lambda draw: {"verdicts": {FAITHFULNESS: draw.verdict_claims}},
        explain=ExplainAdapter(
            command="faithfulness", takes="labels",
            inputs_help='LABELS (one 0/1 verdict per response claim; "" = zero claims)',
            targets=TARGETS.ids(),
            case_inputs=explain_claims(FAITHFULNESS, "verdict", "response"),
            quantities=lambda reference, given: claim_quantities(reference, "F", "response"))),
)
