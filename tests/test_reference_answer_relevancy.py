"""ResponseRelevancy / AnswerRelevancy reference (ragas_compat.metrics.answer_relevancy): a hand-computed example
from the documented definition, the noncommittal and undefined policies, Ragas's semantics as named
alternatives, and properties."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.metrics.answer_relevancy import answer_relevancy_outcome, mean_cosine, ragas_relevancy
from ragas_compat.metrics.registry import metric
from ragas_compat.vocabulary import Classification

QUESTIONS = ("Where was Albert Einstein born?", "In which country was Einstein born?",
             "What is Einstein's country of birth?")


def case(flags=(0, 0, 0), vectors=((1, 0), (3, 4), (4, 3)), user=(1, 0), questions=QUESTIONS, **extra):
    embeddings = {"Where was Einstein born?": list(user)}
    for q, v in zip(questions, vectors, strict=True):
        embeddings[q] = list(v)
    raw = {"id": "c", "category": "edge", "user_input": "Where was Einstein born?",
           "response": "Albert Einstein was born in Germany.", "reference": "r", "retrieved_contexts": [],
           "embeddings": embeddings,
           "verdicts": {"answer_relevancy": [{"statement": q, "noncommittal": f}
                                             for q, f in zip(questions, flags, strict=True)]}}
    raw.update(extra)
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def outcome(c, strictness=3):
    return answer_relevancy_outcome("answer_relevancy", strictness, c)


def test_hand_computed_example_from_the_documented_definition():
    # cos([1, 0], [1, 0]) = 1, cos([3, 4], [1, 0]) = 3/5, cos([4, 3], [1, 0]) = 4/5: mean 4/5
    o = outcome(case())
    assert o.value == Fraction(4, 5)
    assert outcome(case(), strictness=1).value == 1
    # Ragas's doubles: 0.8000000000000002, the float evaluation recomputed bit for bit
    assert o.alternatives["rounding"] == 0.8000000000000002
    assert classify(0.8000000000000002, o).name is Classification.ROUNDING


def test_one_noncommittal_sample_zeroes_the_reference_ragas_needs_all():
    o = outcome(case(flags=(0, 1, 0)))
    assert o.value == 0
    assert o.alternatives["variant:noncommittal_all"] == 0.8000000000000002
    assert classify(0.8000000000000002, o).name is Classification.VARIANT
    assert outcome(case(flags=(1, 1, 1))).value == 0
    assert "variant:noncommittal_all" not in outcome(case(flags=(1, 1, 1))).alternatives


def test_strictness_reads_the_first_samples_only():
    assert outcome(case(flags=(1, 0, 0)), strictness=1).value == 0
    assert outcome(case(flags=(0, 1, 1)), strictness=1).value == 1
    few = outcome(case(flags=(0,), vectors=((1, 0),), questions=QUESTIONS[:1]))
    assert few.refused is not None and "strictness 3" in few.refused


def test_an_empty_question_is_left_out_legacy_keeps_it():
    c = case(questions=(QUESTIONS[0], "", QUESTIONS[2]), vectors=((1, 0), (0, 1), (4, 3)))
    o = outcome(c)
    assert o.value == Fraction(9, 10)                     # (1 + 4/5) / 2
    assert o.alternatives["variant:empty_questions_kept"] == pytest.approx(0.6)  # (1 + 0 + 4/5) / 3


def test_no_question_and_zero_vectors_are_undefined():
    empty = case(questions=("", "", ""), vectors=((1, 0), (1, 0), (1, 0)))
    assert outcome(empty).undefined_reason == "no_questions"
    assert classify(math.nan, outcome(empty)).name is Classification.UNDEFINED_NAN
    assert classify(0.0, outcome(empty)).name is Classification.EMPTY_AS_ZERO
    zero = outcome(case(user=(0, 0)))
    assert zero.value is None and zero.undefined_reason == "zero_embedding"
    # noncommittal does not rescue an undefined mean (0 x NaN is NaN in Ragas too)
    assert outcome(case(user=(0, 0), flags=(1, 1, 1))).undefined_reason == "zero_embedding"


def test_missing_vectors_and_non_binary_flags_are_refused():
    c = case()
    raw = {**c.raw, "embeddings": {k: v for k, v in c.raw["embeddings"].items() if k != QUESTIONS[1]}}
    o = outcome(parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0])
    assert o.refused is not None and QUESTIONS[1] in o.refused
    o = outcome(case(flags=(0, 2, 0)))
    assert o.refused is not None and "noncommittal" in o.refused
    assert o.alternatives["coercion"] == 0.8000000000000002   # np.all([0, 2, 0]) is False


def test_registered_specs_read_the_case():
    assert metric("answer_relevancy").outcome(case()).value == Fraction(4, 5)
    assert metric("answer_relevancy_strictness_1").outcome(case()).value == 1


# -- properties ----------------------------------------------------------------------------------------
vector = st.lists(st.integers(-3, 3), min_size=3, max_size=3).filter(any)


@settings(max_examples=150, deadline=None)
@given(vector, st.lists(vector, min_size=3, max_size=3))
def test_range_and_the_float_path(user, generated):
    o = outcome(case(user=user, vectors=generated))
    assert -1 <= o.value <= 1
    assert math.isclose(o.alternatives["rounding"], float(o.value), rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=100, deadline=None)
@given(vector, st.lists(vector, min_size=1, max_size=5), st.randoms())
def test_the_mean_does_not_depend_on_the_order_of_the_questions(user, generated, rng):
    shuffled = list(generated)
    rng.shuffle(shuffled)
    assert mean_cosine(user, generated) == mean_cosine(user, shuffled)


@settings(max_examples=100, deadline=None)
@given(vector, st.lists(vector, min_size=1, max_size=4))
def test_a_question_identical_to_the_user_input_never_lowers_the_mean(user, generated):
    before = mean_cosine(user, generated)
    after = mean_cosine(user, [*generated, user])
    assert after >= before or math.isclose(float(after), float(before), abs_tol=1e-18)


def test_ragas_float_path_matches_numpy_by_hand():
    # dot / (|q_i| |q|): 1.0, 0.6, 0.8; their float sum is 2.4000000000000004
    assert ragas_relevancy((1, 0), [(1, 0), (3, 4), (4, 3)], [0, 0, 0]) == 0.8000000000000002
    assert ragas_relevancy((1, 0), [(1, 0), (3, 4), (4, 3)], [1, 1, 1]) == 0.0


def test_an_empty_question_with_a_zero_vector_makes_the_legacy_nan_a_named_variant():
    c = case(questions=(QUESTIONS[0], "", QUESTIONS[2]), vectors=((1, 0), (0, 0), (4, 3)))
    o = outcome(c)
    assert o.value == Fraction(9, 10)
    assert math.isnan(o.alternatives["variant:empty_questions_kept"])
    assert classify(math.nan, o).name is Classification.VARIANT       # legacy: the empty question is embedded
    assert classify(0.9, o).name is Classification.IDENTICAL          # collections: it is dropped
