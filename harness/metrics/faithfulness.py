"""Faithfulness: supported response claims / response claims (``ragas_compat.metrics.claim_coverage``).

Undefined for zero response claims (Ragas returns NaN, without asking the judge a second time);
never 1 there. It measures support by the retrieved contexts, not completeness.
"""

from __future__ import annotations

from ragas_compat.cases.model import Case
from ragas_compat.metrics.claim_coverage import claim_outcome, claim_quantities, explain_claims, share_as_given
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, MetricSpec, RagasTargets, Verdicts

FAITHFULNESS = "faithfulness"


def _faithfulness(case: Case) -> ReferenceOutcome:
    return claim_outcome(FAITHFULNESS, case.verdicts[FAITHFULNESS], "verdict", f"verdicts.{FAITHFULNESS}",
                         "response claims |A|")


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
