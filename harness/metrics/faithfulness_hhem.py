"""FaithfulnesswithHHEM: the response's statements judged by Vectara's HHEM classifier, not by the LLM's NLI prompt.

Ragas (``ragas.metrics._faithfulness.FaithfulnesswithHHEM``, legacy API only; added in ragas#1191): the judge
splits the response into statements (Faithfulness's statement-generation prompt: the statements are
``verdicts.faithfulness``'s, their labels are not read), each statement is paired with the premise
``"\\n".join(retrieved_contexts)``, the classifier gives a probability per pair in batches of ``batch_size``
(10), each rounded by ``torch.round`` on the float32 tensor, and the score is ``sum / len``; NaN for zero
statements (without calling the classifier). The classifier is replaced by the case's frozen scores
(``hhem_scores``: statement -> probability in [0, 1]; the probe's stub ``stubs/hhem_classifier.py``).

Reference: HHEM = |{s : round_half_even(float32(score(s))) = 1}| / |statements|, exact (Fraction). A score is
the double the case file gives, rounded to the nearest float32 (ties to even), then rounded to an integer half
to even: a score of exactly 0.5 counts as unsupported, and so does any score whose float32 is 0.5 (0.50000001,
0.500000029, and 0.5000000298023224, halfway between 0.5 and the next float32, whose tie goes to the even 0.5);
the next float32 above 0.5, 0.5000000596046448 (from 0.50000003, say), counts as supported. Those are the
model's threshold as Ragas applies it (named variant ``float32_half_even`` in the details, not a divergence:
the reference computes it). Zero statements: undefined (``zero_claims``, as faithfulness), Ragas NaN.
The batching does not change the value (``batches`` in the details).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
    ratio_text,
)

KEY = "faithfulness_hhem"
STATEMENTS = "faithfulness"     # the verdict key whose statements the judge returns
SCORES = "hhem_scores"          # the case key of the frozen classifier scores
BATCH_SIZE = 10                 # FaithfulnesswithHHEM.batch_size's default
DENOMINATOR = "response statements |A| (each scored by the frozen HHEM classifier)"
HALF = Fraction(1, 2)
VARIANT_TEXT = ("HHEM's probability counts as supported when torch.round on its float32 value gives 1: the "
                "double is rounded to float32 first, then half to even, so 0.5 and every score whose float32 is "
                "0.5 count as unsupported")


def float32_fraction(score: float) -> Fraction:
    """The exact value of ``score`` rounded to the nearest float32 (ties to even)."""
    return Fraction(struct.unpack("<f", struct.pack("<f", score))[0])


def supported(score: float) -> int:
    """1 or 0: the float32 of ``score`` rounded half to even (the value lies in [0, 1])."""
    exact = float32_fraction(score)
    return 1 if exact > HALF else 0  # == 1/2 rounds to the even 0


def _hhem(case: Case) -> ReferenceOutcome:
    statements = [claim["statement"] for claim in case.verdicts[STATEMENTS]]
    scores = case.hhem_scores or {}
    given = [scores[s] for s in statements]  # the loader checked every statement has its score
    labels = [supported(score) for score in given]
    at_half = sum(1 for score in given if float32_fraction(score) == HALF)
    details: dict[str, Any] = {
        "statements": len(statements), "supported": sum(labels), "labels": tuple(labels),
        "scores": tuple(given), "float32_scores": tuple(float(float32_fraction(s)) for s in given),
        "scores_at_threshold": at_half, "batches": math.ceil(len(statements) / BATCH_SIZE),
        "variants": {"float32_half_even": VARIANT_TEXT}}
    if not statements:
        return ReferenceOutcome(KEY, None, "zero_claims", None, {}, details, DENOMINATOR)
    return ReferenceOutcome(KEY, Fraction(sum(labels), len(labels)), None, None, {}, details, DENOMINATOR)


def _as_given(labels: Any) -> float:
    return sum(labels) / len(labels) if labels else float("nan")


# --------------------------------------------------------------------------- fuzz and explain

# scores around the threshold: 0.5 itself, doubles whose float32 is 0.5 (counted unsupported), the next float32
# above 0.5 and a double just above it (supported), and the ends
EDGE_SCORES = (0.5, 0.50000001, 0.500000029, 0.5000000298023224, 0.50000003, 0.49999997, 0.0, 1.0, 0, 1)


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    scores = {}
    for claim in draw.verdict_claims:
        scores[claim["statement"]] = (rng.choice(EDGE_SCORES) if rng.random() < 0.3
                                      else round(rng.random(), rng.choice((1, 2, 3, 9, 17))))
    return {"verdicts": {STATEMENTS: draw.verdict_claims}, SCORES: scores}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    claims = [{"statement": f"Synthetic response claim #{i}", "verdict": 1 if label else 0}
              for i, label in enumerate(given.labels, start=1)]
    return {"retrieved_contexts": ["Synthetic retrieved context #1", "Synthetic retrieved context #2"],
            "verdicts": {STATEMENTS: claims},
            SCORES: {claim["statement"]: 0.75 if claim["verdict"] else 0.5 for claim in claims}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d: dict[str, Any] = dict(reference.details)
    supported_count, total = int(d["supported"]), int(d["statements"])
    formulas = [f"HHEM = statements whose round_half_even(float32(score)) is 1 / statements = "
                f"{ratio_text(supported_count, total, 'zero_claims: Ragas returns NaN without calling the classifier')}",
                f"scores {list(d['scores'])} -> float32 {list(d['float32_scores'])} -> {list(d['labels'])}; "
                f"{d['scores_at_threshold']} at exactly 0.5 (rounded to the even 0: unsupported)",
                f"Ragas: sum(predict(pairs).cpu().detach().round().tolist()) / len, in {d['batches']} batch(es) of "
                f"at most {BATCH_SIZE}"]
    return ([Quantity("HHEM (exact)", reference.number), Quantity("supported statements", supported_count),
             Quantity("response statements", total), Quantity("scores at exactly 0.5", int(d["scores_at_threshold"]))],
            formulas)


TARGETS = RagasTargets(("FaithfulnesswithHHEM",), (), "ragas.metrics._faithfulness", judge=KEY, classifier="hhem")

SPECS: tuple[MetricSpec, ...] = (MetricSpec(
    name=KEY,
    reference_on=f"verdicts.{STATEMENTS} (the statements) and {SCORES} (the frozen HHEM score of each)",
    ragas=TARGETS,
    fields_read=("user_input", "response", "retrieved_contexts"),
    denominator=DENOMINATOR,
    undefined_policy=("None ('zero_claims') when the response yields zero statements; Ragas returns NaN without "
                      "calling the classifier. Never 1. The faithfulness verdict labels are not read."),
    compute=_hhem,
    requires=(f"verdicts.{STATEMENTS}", SCORES),
    verdicts=Verdicts(STATEMENTS, "claims", "verdict"),
    as_given=_as_given,
    fuzz_inputs=_fuzz,
    explain=ExplainAdapter(
        command="faithfulness-hhem", takes="labels",
        inputs_help=('LABELS (one per response statement: 1 = HHEM score 0.75, 0 = HHEM score exactly 0.5, '
                     'which HHEM rounds to 0; "" = zero statements)'),
        targets=TARGETS.ids(), case_inputs=_explain_inputs, quantities=_quantities)),)
