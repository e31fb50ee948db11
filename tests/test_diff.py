"""Each classification from a constructed (Ragas value, reference outcome) pair."""

import math
from fractions import Fraction

import pytest

from ragas_compat.compare.classify import CLASSIFICATIONS, classify, same_float, ulps_between
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.values import RagasError


def outcome(value=None, *, undefined=None, refused=None, **alternatives):
    return ReferenceOutcome(metric="m", value=value, undefined_reason=undefined, refused=refused,
                            alternatives=alternatives, details={}, denominator="d")


def ap_with_epsilon(numerator_terms, hits):
    return sum(numerator_terms) / (hits + 1e-10)


def test_identical_is_bit_equality():
    assert classify(0.5, outcome(Fraction(1, 2))).name == "identical"
    assert classify(1.0, outcome(Fraction(1))).name == "identical"


def test_epsilon_recomputed_not_tolerated():
    ragas = 0.8333333332916666
    eps = ap_with_epsilon([1.0, 2 / 3], 2)
    assert eps == ragas
    assert classify(ragas, outcome(Fraction(5, 6), epsilon=eps)).name == "epsilon"
    # A value as close to 5/6 as the epsilon one but not the recomputed value is a divergence.
    other = 0.8333333332916666 - 2e-11
    assert classify(other, outcome(Fraction(5, 6), epsilon=eps)).name == "divergence"


def test_epsilon_within_summation_order_ulps():
    eps = ap_with_epsilon([1.0, 2 / 3], 2)
    nudged = math.nextafter(eps, 1.0)
    assert classify(nudged, outcome(Fraction(5, 6), epsilon=eps)).name == "epsilon"


def test_undefined_nan_and_empty_as_zero():
    assert classify(math.nan, outcome(undefined="zero_claims")).name == "undefined_nan"
    assert classify(0.0, outcome(undefined="empty_retrieval")).name == "empty_as_zero"
    assert classify(0.25, outcome(undefined="empty_retrieval")).name == "divergence"


def test_dedup():
    # retrieved ["d1", "d1", "d2"], reference ["d1"]: lists 2/3, sets 1/2
    assert classify(0.5, outcome(Fraction(2, 3), dedup=Fraction(1, 2))).name == "dedup"


def test_coercion_only_when_the_coerced_value_matches():
    refused = "verdicts.x[1]: label 2 is not 0/1"
    assert classify(1.0, outcome(refused=refused, coercion=Fraction(1))).name == "coercion"
    assert classify(0.5, outcome(refused=refused, coercion=Fraction(1))).name == "divergence"
    assert classify(math.nan, outcome(refused=refused, coercion=None)).name == "coercion"


def test_rounding_is_a_few_ulps_from_exact():
    exact = Fraction(1, 3) + Fraction(1, 3) + Fraction(1, 3) - Fraction(1, 10**17)
    assert classify(math.nextafter(float(exact), 0.0), outcome(exact)).name == "rounding"
    far = float(exact) - 1e-12
    assert classify(far, outcome(exact)).name == "divergence"


def test_divergence_and_nan_where_defined():
    assert classify(0.25, outcome(Fraction(1, 4) + Fraction(1, 1000))).name == "divergence"
    assert classify(math.nan, outcome(Fraction(1, 2))).name == "divergence"


def test_error_keeps_message():
    c = classify(RagasError("AssertionError", "retrieved_context_ids is empty"), outcome(Fraction(1)))
    assert c.name == "error" and "retrieved_context_ids is empty" in c.explanation


def test_a_named_variant_is_recognised_within_a_few_ulps():
    out = ReferenceOutcome("bleu", Fraction(1, 2), None, None, {"variant:first_sentence": Fraction(1)},
                  {"variants": {"first_sentence": "only the first sentence is scored"}}, "none")
    c = classify(math.nextafter(1.0, 2.0), out)
    assert c.name == "variant" and "only the first sentence is scored" in c.explanation
    assert classify(0.75, out).name == "divergence"


def test_every_classification_is_reachable_by_a_test_above():
    # Guard: adding a classification means adding its constructed pair here.
    assert CLASSIFICATIONS == ("identical", "epsilon", "undefined_nan", "empty_as_zero", "dedup",
                               "coercion", "rounding", "variant", "divergence", "error")


@pytest.mark.parametrize("a,b,d", [(1.0, 1.0, 0), (1.0, math.nextafter(1.0, 2.0), 1), (0.0, -0.0, 0),
                                   (-1.0, math.nextafter(-1.0, 0.0), 1)])
def test_ulps_between(a, b, d):
    assert ulps_between(a, b) == d


def test_same_float_keeps_signed_zero_apart():
    assert not same_float(0.0, -0.0) and same_float(math.nan, math.nan)


def test_exact_values_of_any_size_are_written_and_sentences_stay_short():
    import sys
    from fractions import Fraction

    from ragas_compat.values import encode_fraction, short_fraction_text

    big = sum(Fraction(1, n) for n in range(2, 12000))  # the exact mean of many rows gets this long
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # only to compute the expected text here
    try:
        expected = str(big)
    finally:
        sys.set_int_max_str_digits(limit)
    assert len(expected.split("/")[1]) > 4300  # str() refuses this under the default limit
    assert encode_fraction(big) == expected
    assert encode_fraction(Fraction(5, 6)) == "5/6" and encode_fraction(Fraction(-7)) == "-7"
    assert encode_fraction(-Fraction(10 ** 5000 + 1, 3)) == "-" + "1" + "0" * 4999 + "1/3"
    assert short_fraction_text(Fraction(5, 6)) == "5/6"
    assert "exact fraction of about" in short_fraction_text(big) and len(short_fraction_text(big)) < 80
