"""The condition vocabulary of expectation rules (ragas_compat.compare.rules): predicates and input facts."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.rules import (
    INPUT_FACTS,
    PREDICATES,
    RowSubject,
    contexts_near_duplicate,
    ids_collapse,
    levenshtein,
    parse_condition,
    string_similarity,
)
from ragas_compat.errors import HarnessInputError
from ragas_compat.values import RagasError


def make_case(**overrides):
    data = {"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "s",
            "retrieved_contexts": ["a", "b"]}
    data.update(overrides)
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [data]}).cases[0]


def reference(value=None, undefined_reason=None, refused=None, **details):
    return SimpleNamespace(value=value, undefined_reason=undefined_reason, refused=refused, details=details)


def subject(case=None, metric="context_precision_with_reference", value=0.0, ref=None, received=None):
    return RowSubject(case or make_case(), metric, value, ref or reference(Fraction(1)), received or {})


def holds(when: dict, s) -> bool:
    return parse_condition(when, "w").holds(s)


def test_reference_state_and_reasons():
    defined, undefined = reference(Fraction(1, 2)), reference(None, "no_relevant_retrieved")
    refused = reference(None, None, "non-binary label", error_reason="judge_reply_unparseable")
    assert holds({"reference": "defined"}, subject(ref=defined))
    assert holds({"reference": ["undefined", "refused"]}, subject(ref=undefined))
    assert not holds({"reference": "defined"}, subject(ref=refused))
    assert holds({"undefined_reason": ["empty_retrieval", "no_relevant_retrieved"]}, subject(ref=undefined))
    assert not holds({"undefined_reason": "zero_claims"}, subject(ref=undefined))
    assert not holds({"undefined_reason": "no_relevant_retrieved"}, subject(ref=defined))
    assert holds({"reference_error_reason": "judge_reply_unparseable"}, subject(ref=refused))
    assert not holds({"reference_error_reason": "judge_reply_unparseable"}, subject(ref=undefined))
    assert holds({}, subject())  # the empty condition always holds


def test_error_type_and_message():
    error = RagasError("ValueError", "max() arg is an empty sequence")
    assert holds({"error_type": "ValueError", "error_message": r"max\(\) arg"}, subject(value=error))
    assert not holds({"error_type": "KeyError"}, subject(value=error))
    assert not holds({"error_message": "cannot be empty"}, subject(value=error))
    assert not holds({"error_type": "ValueError"}, subject(value=0.5))  # no error at all


def test_input_facts_and_negation():
    empty = make_case(retrieved_contexts=[], reference_contexts=[], verdicts={"context_precision_with_reference": []})
    assert holds({"inputs": ["retrieved_contexts_empty", "reference_contexts_empty"]}, subject(empty))
    assert holds({"inputs": "!retrieved_contexts_empty"}, subject())
    assert not holds({"inputs": "reference_contexts_empty"}, subject())  # absent is not empty


@pytest.mark.parametrize("labels,expected", [
    ([1, 0], False), ([True, False], False), ([2, 0], True), (["1", 0], True), ([1.0, 0], True),
])
def test_non_binary_verdicts_read_the_rows_metric(labels, expected):
    case = make_case(verdicts={"context_precision_with_reference": labels,
                               "faithfulness": [{"statement": "s", "verdict": labels[0]}]})
    assert holds({"inputs": "non_binary_verdicts"}, subject(case)) is expected
    assert holds({"inputs": "non_binary_verdicts"}, subject(case, metric="faithfulness")) is expected
    assert not holds({"inputs": "non_binary_verdicts"}, subject(case, metric="context_recall"))


@pytest.mark.parametrize("retrieved,reference,expected", [
    (["d1", "d2"], ["d1"], False),
    (["d1", "d1", "d2"], ["d1"], True),     # a repeated ID
    ([1], ["1"], True),                      # one str(), two JSON types
    ([1.0], ["1"], False),                   # str(1.0) is "1.0"
    ([True], ["True"], True),
    ([], [], False),
])
def test_ids_collapse(retrieved, reference, expected):
    assert ids_collapse(retrieved, reference) is expected


def test_received_differs_compares_json_values():
    case = make_case(retrieved_context_ids=[1.0], reference_context_ids=["1"])
    assert holds({"inputs": "received_differs"}, subject(case, received={"retrieved_context_ids": [1]}))
    assert not holds({"inputs": "received_differs"}, subject(case, received={"retrieved_context_ids": [1.0]}))


def test_string_similarity_is_normalized_levenshtein():
    assert levenshtein("kitten", "sitting") == 3
    assert string_similarity("kitten", "sitting") == 1 - 3 / 7
    assert string_similarity("", "") == 1.0
    assert contexts_near_duplicate(["Set retention in config v2.x: keep=30"], ["Set retention in config v3.x: keep=30"])
    assert not contexts_near_duplicate(["identical"], ["identical"])  # equal is a match for both sides
    assert not contexts_near_duplicate(["abc"], ["xyz"])
    assert not contexts_near_duplicate(["a"], None)


def test_error_names_empty_input():
    case = make_case(response="", verdicts={"faithfulness": []})
    assert holds({"inputs": "error_names_empty_input"},
                 subject(case, value=RagasError("ValueError", "response is missing. Please add response")))
    assert not holds({"inputs": "error_names_empty_input"},
                     subject(case, value=RagasError("ValueError", "reference cannot be empty")))
    assert not holds({"inputs": "error_names_empty_input"}, subject(case, value=0.0))
    # the scripted judge's message quotes the prompt's input names: the harness's error, not Ragas naming a field
    assert not holds({"inputs": "error_names_empty_input"},
                     subject(case, value=RagasError("StubMismatch", 'no frozen answer for prompt with input {"response": ""}')))


def test_judge_reply_replaced():
    case = make_case(verdicts={"context_precision_with_reference": [1, 0]},
                     judge_replies={"context_precision_with_reference": {"0": "{\"verdict\": yes}"}})
    assert holds({"inputs": "judge_reply_replaced"}, subject(case))
    assert not holds({"inputs": "judge_reply_replaced"}, subject(case, metric="faithfulness"))


def test_describe_says_the_condition_in_words():
    condition = parse_condition({"reference": "undefined", "undefined_reason": ["empty_retrieval"],
                                 "inputs": ["!retrieved_contexts_empty"]}, "w")
    assert condition.describe() == "reference undefined; undefined because empty_retrieval; not retrieved_contexts_empty"
    assert parse_condition(None, "w").describe() == "always"


@pytest.mark.parametrize("when,message", [
    ({"refrence": "defined"}, "w.refrence: unknown key 'refrence'; did you mean 'reference'?"),
    ({"reference": "maybe"}, "w.reference: 'maybe' is not one of defined, undefined, refused"),
    ({"error_type": []}, "w.error_type: expected a string or a non-empty list of strings"),
    ({"inputs": ["ids_colapse"]}, "w.inputs: unknown input fact 'ids_colapse'; did you mean 'ids_collapse'?"),
    ("reference", "w: expected a table of predicates"),
])
def test_bad_conditions_are_refused_with_the_key(when, message):
    with pytest.raises(HarnessInputError) as err:
        parse_condition(when, "w")
    assert message in str(err.value)


def test_every_predicate_and_fact_is_documented():
    assert set(PREDICATES) == {"reference", "undefined_reason", "reference_error_reason", "error_type",
                               "error_message", "inputs", "variant"}
    assert all(fact.meaning for fact in INPUT_FACTS.values())
    import ragas_compat.compare.rules as rules

    for name in list(PREDICATES) + list(INPUT_FACTS):
        assert name in rules.__doc__ or name in PREDICATES["inputs"], name
