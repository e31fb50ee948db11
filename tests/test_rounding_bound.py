"""``rounding`` has a magnitude bound: ROUNDING_ULPS units in the last place of the exact value, or the
absolute bound the metric states (FactualCorrectness's two decimals, a cosine's float tolerance). A
recomputed float evaluation bit-equal to Ragas but out of that bound (an overflow, an underflow to 0.0)
is a divergence, never rounding."""

from __future__ import annotations

import math
from fractions import Fraction

from ragas_compat.compare.classify import ROUNDING_ULPS, classify
from ragas_compat.metrics.factual_correctness import ROUNDING_BOUND, factual_outcome
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.vocabulary import Classification


def outcome(value: Fraction, alternatives: dict | None = None, **details) -> ReferenceOutcome:
    return ReferenceOutcome("toy", value, None, None, dict(alternatives or {}), dict(details), "n")


def test_an_underflow_to_zero_equal_to_ragas_is_a_divergence_not_rounding():
    # the float evaluation of a half underflowed (or overflowed and was clamped) to 0.0, as Ragas's did
    diagnosis = classify(0.0, outcome(Fraction(1, 2), {"rounding": 0.0}))
    assert diagnosis.name is Classification.DIVERGENCE
    assert "not rounding" in diagnosis.explanation and "underflow" in diagnosis.explanation
    assert "1/2" in diagnosis.explanation


def test_an_overflow_to_inf_equal_to_ragas_is_a_divergence():
    diagnosis = classify(math.inf, outcome(Fraction(1, 2), {"rounding": math.inf}))
    assert diagnosis.name is Classification.DIVERGENCE
    assert "overflow" in diagnosis.explanation


def test_a_stated_bound_does_not_stretch_to_a_lost_half():
    # FactualCorrectness rounds to 2 decimals: 0.0 for an exact 1/2 is beyond its 0.005 bound
    diagnosis = classify(0.0, outcome(Fraction(1, 2), {"rounding": 0.0}, rounding_bound=ROUNDING_BOUND))
    assert diagnosis.name is Classification.DIVERGENCE
    # ... while 0.0 for an exact 1/300 is what np.round(1/300, 2) gives: within the bound
    assert classify(0.0, outcome(Fraction(1, 300), {"rounding": 0.0}, rounding_bound=ROUNDING_BOUND)).name \
        is Classification.ROUNDING


def test_factual_correctness_two_decimals_stay_rounding():
    claims = [{"from": "response", "verdict": v} for v in (1, 1, 1, 1, 0, 0, 0)]
    reference = factual_outcome("fc", "precision", 1.0, claims)
    assert reference.value == Fraction(4, 7) and reference.details["rounding_bound"] == ROUNDING_BOUND
    assert classify(0.57, reference).name is Classification.ROUNDING


def test_the_ulp_bound_is_stated_and_kept():
    exact = Fraction(1, 3)
    near = float(exact)
    for _ in range(ROUNDING_ULPS):
        near = math.nextafter(near, 1.0)
    assert classify(near, outcome(exact)).name is Classification.ROUNDING
    assert classify(math.nextafter(near, 1.0), outcome(exact)).name is Classification.DIVERGENCE
    # a recomputed float evaluation one ulp further than the bound, bit-equal to Ragas, is not rounding either
    far = math.nextafter(near, 1.0)
    assert classify(far, outcome(exact, {"rounding": far})).name is Classification.DIVERGENCE


def test_a_subnormal_exact_value_read_as_zero_is_not_rounding():
    tiny = Fraction(2) ** -1073  # 2 ulps above 0.0
    assert classify(0.0, outcome(tiny)).name is Classification.DIVERGENCE
    assert classify(0.0, outcome(tiny, {"rounding": 0.0})).name is Classification.DIVERGENCE
