"""Cosines of rational vectors computed exactly (issue 35): the dot product and the squared norms are Fractions,
the cosine a signed square root of a rational (ragas_compat.metrics.roots), exact when rational; a threshold, the
double nearest the cosine and Ragas's float against its rounding bound are decided against the root, with no
tolerance of the harness's own. One cosine for SemanticSimilarity, AnswerCorrectness and ResponseRelevancy."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify, reference_double, within_of_reference
from ragas_compat.metrics.answer_relevancy import mean_cosine
from ragas_compat.metrics.roots import SignedRoot
from ragas_compat.metrics.semantic_similarity import _outcome, cosine, cosine_in_doubles, exact_cosine
from ragas_compat.vocabulary import Classification


def case(ref: list[float], resp: list[float]):
    raw = {"id": "e", "category": "edge", "user_input": "q", "reference": "r", "response": "s",
           "retrieved_contexts": [], "embeddings": {"r": ref, "s": resp}}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def digits(root: SignedRoot, n: int = 100) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = n
        return root.sign * (Decimal(root.square.numerator) / Decimal(root.square.denominator)).sqrt()


def test_rational_cosines_are_exact_fractions():
    # [1, 2, 2] . [2, 1, 2] = 8, |a|^2 |b|^2 = 81: cos = 8/9 exactly (before: the 20-digit 0.88888888888888888889)
    assert cosine([1.0, 2.0, 2.0], [2.0, 1.0, 2.0]) == Fraction(8, 9)
    assert cosine([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]) == Fraction(1, 2)
    assert cosine([0.5, -0.5], [-1.0, 1.0]) == -1
    # decimals as given are the doubles Ragas receives: 0.1 is not 1/10, and the cosine of (0.1, 0.2) with
    # (0.2, 0.4) is still exactly 1 (parallel doubles: 0.2 and 0.4 are exactly twice 0.1 and 0.2)
    assert cosine([0.1, 0.2], [0.2, 0.4]) == 1
    # the one cosine of the embedding metrics: ResponseRelevancy's mean of 8/9 and 1 is 17/18 exactly
    assert mean_cosine([2.0, 1.0, 2.0], [[1.0, 2.0, 2.0], [2.0, 1.0, 2.0]]) == Fraction(17, 18)


def test_irrational_cosine_is_its_root_and_the_nearest_double_is_decided_exactly():
    root = exact_cosine([1.0, 0.0], [1.0, 1.0])
    assert root == SignedRoot(1, Fraction(1, 2)) and root.rational is None
    # sqrt(1/2) is a correctly rounded IEEE square root of an exact double: the nearest double
    assert root.nearest_double() == math.sqrt(0.5) == 0.7071067811865476
    outcome = _outcome(case([1.0, 0.0], [1.0, 1.0]), False)
    assert outcome.details["exact_root"] == {"sign": 1, "square": Fraction(1, 2)}
    assert reference_double(outcome) == 0.7071067811865476


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(st.lists(st.integers(-9, 9), min_size=n, max_size=n),
                                                      st.lists(st.integers(-9, 9), min_size=n, max_size=n))))
def test_nearest_double_against_a_100_digit_square_root(vectors):
    a, b = ([float(x) for x in v] for v in vectors)
    root = exact_cosine(a, b)
    if root is None:
        assert not any(a) or not any(b)
        return
    assert root.nearest_double() == float(digits(root))
    # the float evaluation Ragas performs is within the stated tolerance, decided against the root
    assert classify(cosine_in_doubles(a, b), _outcome(case(a, b), False)).name in (
        Classification.IDENTICAL, Classification.ROUNDING)


def test_a_threshold_a_hair_above_an_irrational_cosine_is_not_reached():
    # cos([1, 1, 1], [1, 0, 0]) = 1/sqrt(3) = 0.577350269189625764509...; its 20-digit rounding 0.57735026918962576451
    # lies above it. With that threshold the cosine is below it: 0 (before: the 20-digit value compared, 1)
    at = Fraction("0.57735026918962576451")
    outcome = _outcome(case([1.0, 1.0, 1.0], [1.0, 0.0, 0.0]), True, at)
    assert outcome.value == 0
    assert _outcome(case([1.0, 1.0, 1.0], [1.0, 0.0, 0.0]), True, Fraction("0.57735026918962576450")).value == 1
    # exactly 1/2 reaches 1/2 (a rational cosine, no rounding either way)
    assert _outcome(case([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]), True, Fraction(1, 2)).value == 1


def test_the_rounding_bound_is_decided_against_the_root_not_its_digits():
    outcome = _outcome(case([1.0, 0.0], [1.0, 1.0]), False)
    root = SignedRoot(1, Fraction(1, 2))
    ragas = 0.7071067811865475  # one ulp below the nearest double
    gap = abs(Fraction(ragas) - Fraction(digits(root, 120)))
    # a bound 10^-60 above the true distance holds, 10^-60 below it does not: finer than any approximation digit
    assert within_of_reference(ragas, gap + Fraction(1, 10 ** 60), outcome)
    assert not within_of_reference(ragas, gap - Fraction(1, 10 ** 60), outcome)
    assert classify(ragas, outcome).name is Classification.ROUNDING
    assert classify(0.7071067811865476, outcome).name is Classification.IDENTICAL
    assert classify(0.70710678, outcome).name is Classification.DIVERGENCE
