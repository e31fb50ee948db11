"""NoiseSensitivity reference (ragas_compat.metrics.noise_sensitivity): the hand-computed worked example,
the undefined and refused cases, and properties."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.metrics.noise_sensitivity import noise_counts, noise_outcome
from ragas_compat.vocabulary import Classification


def case(statements: list[dict], contexts: int):
    raw = {"id": "ns", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
           "retrieved_contexts": [f"context {j}" for j in range(contexts)],
           "verdicts": {"noise_sensitivity": statements}}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="test").cases[0]


def g(ctx):
    return {"statement": f"g{ctx}", "from": "reference", "contexts": ctx}


def a(name, ctx, verdict):
    return {"statement": name, "from": "response", "contexts": ctx, "verdict": verdict}


WORKED = [g([1, 0, 0]), g([1, 0, 0]),
          a("correct, from the relevant context", [1, 0, 0], 1),
          a("wrong, from the outdated context", [0, 1, 0], 0),
          a("wrong, from the relevant context", [1, 0, 0], 0),
          a("wrong, from the unrelated context", [0, 0, 1], 0)]


def test_hand_computed_worked_example():
    # context 0 supports a reference statement: R = {0}. Incorrect statements: 3 of 4; one supported by
    # context 0 (relevant: 1/4), two only by contexts 1 and 2 (irrelevant: 2/4)
    c = case(WORKED, 3)
    assert noise_outcome("r", "relevant", c).value == Fraction(1, 4)
    assert noise_outcome("i", "irrelevant", c).value == Fraction(1, 2)
    assert classify(0.25, noise_outcome("r", "relevant", c)).name is Classification.IDENTICAL


def test_a_wrong_statement_from_both_kinds_of_context_counts_as_relevant_only():
    c = case([g([1, 0]), a("x", [1, 1], 0)], 2)
    assert noise_outcome("r", "relevant", c).value == 1
    assert noise_outcome("i", "irrelevant", c).value == 0


def test_zero_response_statements_undefined_and_zero_reference_statements_defined():
    none = noise_outcome("r", "relevant", case([g([1])], 1))
    assert none.value is None and none.undefined_reason == "zero_claims"
    assert classify(float("nan"), none).name is Classification.UNDEFINED_NAN
    no_reference = case([a("x", [1], 0)], 1)
    assert noise_outcome("r", "relevant", no_reference).value == 0
    assert noise_outcome("i", "irrelevant", no_reference).value == 1


def test_non_binary_label_is_refused_with_the_truthiness_value():
    outcome = noise_outcome("r", "relevant", case([g([1]), a("x", [1], 1), a("y", [2], 0)], 1))
    assert outcome.refused is not None
    assert outcome.alternatives["coercion"] == Fraction(1, 2)


bits = st.integers(0, 1)


@st.composite
def statements(draw):
    n = draw(st.integers(1, 4))
    reference = [g(draw(st.lists(bits, min_size=n, max_size=n))) for _ in range(draw(st.integers(0, 3)))]
    response = [a(f"a{i}", draw(st.lists(bits, min_size=n, max_size=n)), draw(bits))
                for i in range(draw(st.integers(0, 6)))]
    return reference, response


@given(statements())
def test_range_and_the_two_modes_partition_the_incorrect_share(pair):
    reference, response = pair
    rel, irr, total, _ = noise_counts(reference, response)
    incorrect = sum(1 for s in response if not s["verdict"])
    assert 0 <= rel + irr <= incorrect <= total


@given(statements())
def test_monotone_marking_a_statement_correct_never_raises_either_mode(pair):
    reference, response = pair
    rel, irr, _, _ = noise_counts(reference, response)
    for i in range(len(response)):
        fixed = [dict(s, verdict=1) if j == i else s for j, s in enumerate(response)]
        rel2, irr2, _, _ = noise_counts(reference, fixed)
        assert rel2 <= rel and irr2 <= irr
