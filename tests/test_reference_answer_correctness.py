"""AnswerCorrectness reference (ragas_compat.metrics.answer_correctness): a hand-computed example from the
documented definition, the undefined policy, Ragas's semantics as named alternatives, and properties."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.answer_correctness import (
    answer_correctness_outcome,
    blend,
    collections_cosine,
    collections_factuality,
    factuality,
    legacy_factuality,
)
from ragas_compat.metrics.registry import metric
from ragas_compat.vocabulary import Classification

DEFAULT, FACTUALITY_ONLY = (0.75, 0.25), (1.0, 0.0)


def case(response: list[int], reference: list[int], resp_vec=(3.0, 4.0), ref_vec=(4.0, 3.0), **extra):
    statements = ([{"statement": f"response statement {i}", "from": "response", "verdict": v}
                   for i, v in enumerate(response)]
                  + [{"statement": f"reference statement {i}", "from": "reference", "verdict": v}
                     for i, v in enumerate(reference)])
    raw = {"id": "c", "category": "edge", "user_input": "q", "response": "the response", "reference": "the reference",
           "retrieved_contexts": [], "verdicts": {"answer_correctness": statements}}
    embeddings = {}
    if resp_vec is not None:
        embeddings["the response"] = list(resp_vec)
    if ref_vec is not None:
        embeddings["the reference"] = list(ref_vec)
    raw["embeddings"] = embeddings
    raw.update(extra)
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def outcome(c, weights=DEFAULT, beta=1.0):
    return answer_correctness_outcome("answer_correctness", weights, beta, c)


def test_hand_computed_example_from_the_documented_definition():
    # TP = 1 (a supported response statement), FP = 1, FN = 2 (reference statements the response lacks):
    # F1 = TP / (TP + (FP + FN) / 2) = 1 / 2.5 = 2/5; cos([3, 4], [4, 3]) = 24/25
    # AC = 0.75 * 2/5 + 0.25 * 24/25 = 3/10 + 6/25 = 27/50
    c = case([0, 1], [0, 0])
    o = outcome(c)
    assert (o.details["tp"], o.details["fp"], o.details["fn"]) == (1, 1, 2)
    assert o.details["factuality"] == Fraction(2, 5)
    assert o.details["similarity"] == Fraction(24, 25)
    assert o.value == Fraction(27, 50)
    assert outcome(c, FACTUALITY_ONLY).value == Fraction(2, 5)
    assert classify(0.54, o).name is Classification.IDENTICAL


def test_f_beta_weights_recall_by_beta_squared():
    # F(2) = 5 TP / (5 TP + 4 FN + FP) = 5 / (5 + 8 + 1)
    assert factuality(2.0, 1, 1, 2) == Fraction(5, 14)
    assert factuality(1.0, 0, 0, 0) is None
    assert factuality(1.0, 0, 3, 1) == 0


def test_zero_statements_are_undefined_and_ragas_takes_factuality_one():
    o = outcome(case([], []))
    assert o.value is None and o.undefined_reason == "zero_statements"
    assert o.alternatives["variant:no_statements_as_one"] == 0.75 + 0.25 * 0.96
    assert classify(0.99, o).name is Classification.VARIANT
    assert classify(0.0, o).name is Classification.EMPTY_AS_ZERO
    assert classify(0.5, o).name is Classification.DIVERGENCE


def test_collections_takes_one_for_a_side_without_statements():
    o = outcome(case([1, 0], []))             # TP 1, FP 1: F1 = 2/3, AC = 0.5 + 0.24
    assert o.value == Fraction(37, 50)
    assert legacy_factuality(1.0, 1, 1, 0, 2, 0) == 2 / 3
    assert collections_factuality(1.0, 1, 1, 0, 2, 0) == 1.0
    assert classify(0.99, o).name is Classification.VARIANT


def test_legacy_scores_an_empty_classification_zero():
    # no response statement, the only reference statement contained: TP = FP = FN = 0 with a statement
    o = outcome(case([], [1]))
    assert o.value is None and o.undefined_reason == "zero_statements"
    assert o.alternatives["variant:unclassified_as_zero"] == pytest.approx(0.24)
    assert classify(o.alternatives["variant:unclassified_as_zero"], o).name is Classification.VARIANT


def test_a_zero_vector_is_undefined_legacy_nan_collections_zero_similarity():
    o = outcome(case([1], [0, 0], ref_vec=(0.0, 0.0)))
    assert o.value is None and o.undefined_reason == "zero_embedding"
    assert classify(math.nan, o).name is Classification.UNDEFINED_NAN
    assert o.alternatives["variant:zero_vector_as_zero_similarity"] == 0.75 * 0.5
    # weights [1, 0]: the similarity is not computed, so the zero vector does not matter
    assert outcome(case([1], [0, 0], ref_vec=(0.0, 0.0)), FACTUALITY_ONLY).value == Fraction(1, 2)


def test_a_text_without_a_frozen_vector_is_refused_naming_it():
    o = outcome(case([1], [], ref_vec=None))
    assert o.refused is not None and "'the reference'" in o.refused and o.details["error_reason"] == "embeddings"
    assert outcome(case([1], [], ref_vec=None), FACTUALITY_ONLY).value == 1


def test_malformed_statements_name_the_field():
    c = case([1], [])
    bad = parse_suite({"schema_version": 1, "suite": "t", "cases": [{**c.raw, "verdicts": {"answer_correctness": [
        {"statement": "s", "from": "response", "verdict": 1}]}}]}).cases[0]
    assert outcome(bad).value == Fraction(1, 1) * Fraction(3, 4) + Fraction(1, 4) * Fraction(24, 25)
    with pytest.raises(HarnessInputError, match=r"verdicts\.answer_correctness.*\[0\].*from"):
        parse_suite({"schema_version": 1, "suite": "t", "cases": [{**c.raw, "verdicts": {"answer_correctness": [
            {"statement": "s", "from": "nowhere", "verdict": 1}]}}]})


def test_a_non_binary_verdict_is_refused_with_the_truthiness_value():
    c = case([1], [0])
    raw = {**c.raw, "verdicts": {"answer_correctness": [{"statement": "s", "from": "response", "verdict": 2}]}}
    o = outcome(parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0])
    assert o.refused is not None and "non-binary" in o.refused
    assert o.alternatives["coercion"] == 0.75 + 0.25 * 0.96


def test_registered_specs_read_the_case():
    c = case([0, 1], [0, 0])
    assert metric("answer_correctness").outcome(c).value == Fraction(27, 50)
    assert metric("answer_correctness_factuality").outcome(c).value == Fraction(2, 5)


# -- properties ----------------------------------------------------------------------------------------
labels = st.lists(st.integers(0, 1), max_size=6)
vectors = st.lists(st.integers(-3, 3), min_size=2, max_size=2).filter(any)


@settings(max_examples=150, deadline=None)
@given(labels, labels, vectors, vectors)
def test_the_value_is_in_range_and_the_float_path_is_close(response, reference, a, b):
    o = outcome(case(response, reference, tuple(map(float, a)), tuple(map(float, b))))
    if o.value is None:
        assert o.undefined_reason == "zero_statements"
        return
    assert Fraction(-1, 4) <= o.value <= 1
    assert math.isclose(o.alternatives["rounding"], float(o.value), rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=150, deadline=None)
@given(labels, labels, st.data())
def test_turning_an_unsupported_response_statement_into_a_supported_one_never_lowers_the_score(
        response, reference, data):
    if 0 not in response:
        return
    i = data.draw(st.sampled_from([j for j, v in enumerate(response) if v == 0]))
    better = list(response)
    better[i] = 1
    low, high = outcome(case(response, reference)), outcome(case(better, reference))
    assert high.value is not None
    if low.value is not None:
        assert high.value >= low.value


@settings(max_examples=100, deadline=None)
@given(st.fractions(0, 1), st.fractions(-1, 1), st.floats(0, 4).filter(lambda w: w > 0), st.floats(0, 4))
def test_blend_is_the_weighted_mean(f, s, wf, ws):
    value = blend((wf, ws), f, s)
    assert value == (Fraction(wf) * f + Fraction(ws) * s) / (Fraction(wf) + Fraction(ws))
    assert min(f, s) <= value <= max(f, s)


def test_a_cancelling_blend_is_rounding_within_the_stated_tolerance_not_a_divergence():
    # F1 = 1/4 (TP 1, FP 4, FN 2), cos([-2, 1], [2, 1]) = -3/5: AC = 3/16 - 3/20 = 3/80. The collections
    # cosine dot / (|a| |b|) is -3 / 5.000000000000001, so Ragas gives 0.03750000000000003, dozens of ulps
    # from 0.0375 but within the absolute tolerance of a doubles cosine
    o = outcome(case([0, 1, 0, 0, 0], [1, 1, 0, 1, 0], (-2.0, 1.0), (2.0, 1.0)))
    assert o.value == Fraction(3, 80)
    assert collections_cosine((-2.0, 1.0), (2.0, 1.0)) == -0.5999999999999999
    assert classify(0.03750000000000003, o).name is Classification.ROUNDING
    assert classify(0.0375 + 1e-10, o).name is Classification.DIVERGENCE
