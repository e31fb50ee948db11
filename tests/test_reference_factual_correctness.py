"""FactualCorrectness reference (ragas_compat.metrics.factual_correctness): hand-computed examples from the
documented definition, Ragas's rounding and 1e-8 guard as alternatives, and properties."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.compare.classify import classify
from ragas_compat.metrics.factual_correctness import (
    MODES,
    counts,
    exact_score,
    factual_outcome,
    np_round2,
    ragas_float,
    ragas_score,
)
from ragas_compat.metrics.registry import metric
from ragas_compat.vocabulary import Classification


def claims(response: list[int], reference: list[int]) -> list[dict]:
    return ([{"statement": f"response claim {i}", "from": "response", "verdict": v} for i, v in enumerate(response)]
            + [{"statement": f"reference claim {i}", "from": "reference", "verdict": v}
               for i, v in enumerate(reference)])


def test_hand_computed_worked_example():
    # response claims [1, 1, 0]: TP 2, FP 1; reference claims [1, 0, 0]: FN 2
    c = claims([1, 1, 0], [1, 0, 0])
    assert factual_outcome("p", "precision", 1.0, c).value == Fraction(2, 3)
    assert factual_outcome("r", "recall", 1.0, c).value == Fraction(1, 2)      # 2 / (2 + 2)
    assert factual_outcome("f", "f1", 1.0, c).value == Fraction(4, 7)          # 2*2 / (2*2 + 2 + 1)
    # F(0.5) = 1.25 * 2 / (1.25 * 2 + 0.25 * 2 + 1) = 2.5 / 4
    assert factual_outcome("f", "f1", 0.5, c).value == Fraction(5, 8)


def test_ragas_rounds_to_two_decimals_and_its_guard_moves_half_way_values_down():
    three_eighths = claims([1, 1, 1, 0, 0, 0, 0, 0], [])
    outcome = factual_outcome("p", "precision", 1.0, three_eighths)
    assert outcome.value == Fraction(3, 8)
    assert outcome.alternatives["rounding"] == 0.38          # np.round(0.375, 2): half to even
    assert outcome.alternatives["epsilon"] == 0.37           # np.round(3 / (8 + 1e-8), 2)
    assert classify(0.37, outcome).name is Classification.EPSILON
    assert classify(0.38, outcome).name is Classification.ROUNDING
    assert classify(0.375, outcome).name is Classification.IDENTICAL


def test_two_thirds_is_reported_as_0_67_and_classified_rounding():
    outcome = factual_outcome("p", "precision", 1.0, claims([1, 1, 0], []))
    assert "epsilon" not in outcome.alternatives
    assert classify(0.67, outcome).name is Classification.ROUNDING


def test_zero_claims_are_undefined_and_ragas_zero_is_empty_as_zero():
    for mode in ("precision", "recall", "f1"):
        outcome = factual_outcome("m", mode, 1.0, [])
        assert outcome.value is None and outcome.undefined_reason == "zero_claims"
        assert classify(0.0, outcome).name is Classification.EMPTY_AS_ZERO


def test_precision_ignores_reference_claims_and_no_response_claim_is_undefined():
    c = claims([], [0, 0])
    assert factual_outcome("p", "precision", 1.0, c).value is None
    assert factual_outcome("r", "recall", 1.0, c).value == 0
    assert factual_outcome("f", "f1", 1.0, c).value == 0


def test_non_binary_verdict_is_refused_with_the_bool_coerced_value():
    outcome = factual_outcome("f", "f1", 1.0, claims([2, 0], [1]))
    assert outcome.refused is not None and "2" in outcome.refused
    assert outcome.alternatives["coercion"] == ragas_score("f1", 1.0, 1, 1, 0)  # 2 -> True
    assert classify(0.67, outcome).name is Classification.COERCION


@given(st.floats(min_value=0, max_value=1, allow_nan=False))
def test_np_round2_is_numpys_round(x):
    assert np_round2(x) == float(np.round(np.float64(x), 2))


RAGAS_FBETA = """
import itertools, json, sys
import numpy as np
from ragas.metrics.utils import fbeta_score
out = {}
for tp, fp, fn in itertools.product(range(13), repeat=3):
    for beta in (0.5, 1.0, 2.0):
        out[f"{tp},{fp},{fn},{beta}"] = float(fbeta_score(np.int64(tp), np.int64(fp), np.int64(fn), beta)).hex()
json.dump(out, sys.stdout)
"""


@pytest.mark.slow
def test_ragas_float_formula_is_ragas_fbeta_score_bit_for_bit():
    """Ragas 0.4.3's fbeta_score, run in a subprocess (Ragas never enters the test process)."""
    import json
    import subprocess
    import sys

    ragas = json.loads(subprocess.run([sys.executable, "-c", RAGAS_FBETA], capture_output=True, text=True,
                                      check=True, env={"RAGAS_DO_NOT_TRACK": "true", "PATH": ""}).stdout)
    for key, value in ragas.items():
        tp, fp, fn, beta = key.split(",")
        ours = ragas_float("f1", float(beta), int(tp), int(fp), int(fn), 1e-8)
        assert ours.hex() == value, key


@settings(max_examples=300)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20), st.sampled_from([0.5, 1.0, 2.0]),
       st.sampled_from(["precision", "recall", "f1"]))
def test_range_and_agreement_with_ragas_up_to_its_rounding(tp, fp, fn, beta, mode):
    value = exact_score(mode, beta, tp, fp, fn)
    if value is None:
        assert ragas_score(mode, beta, tp, fp, fn) == 0.0
        return
    assert 0 <= value <= 1
    assert abs(ragas_score(mode, beta, tp, fp, fn) - float(value)) <= 0.005 + 1e-9


@settings(max_examples=300)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20), st.sampled_from([0.5, 1.0, 2.0]))
def test_monotone_one_more_supported_claim_never_lowers_and_one_more_error_never_raises(tp, fp, fn, beta):
    for mode in ("precision", "recall", "f1"):
        base = exact_score(mode, beta, tp, fp, fn)
        more_tp = exact_score(mode, beta, tp + 1, fp, fn)
        assert more_tp is not None and (base is None or more_tp >= base)
        for worse in (exact_score(mode, beta, tp, fp + 1, fn), exact_score(mode, beta, tp, fp, fn + 1)):
            if base is not None and worse is not None:
                assert worse <= base


@given(st.integers(1, 20), st.integers(0, 20), st.integers(0, 20))
def test_f_is_between_precision_and_recall_and_beta_moves_it_towards_recall(tp, fp, fn):
    p, r = exact_score("precision", 1.0, tp, fp, fn), exact_score("recall", 1.0, tp, fp, fn)
    f_half, f_one, f_two = (exact_score("f1", b, tp, fp, fn) for b in (0.5, 1.0, 2.0))
    assert min(p, r) <= f_one <= max(p, r)
    if r > p:
        assert f_half <= f_one <= f_two
    elif r < p:
        assert f_half >= f_one >= f_two


def test_counts():
    assert counts([("response", 1), ("response", 0), ("reference", 0), ("reference", 1)]) == (1, 1, 1)


@pytest.mark.parametrize("name", list(MODES))
def test_registered_with_both_apis(name):
    spec = metric(name)
    assert {t.api.value for t in spec.ragas_targets} == {"legacy", "collections"}
