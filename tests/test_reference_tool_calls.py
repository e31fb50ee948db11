"""The exact references of ToolCallAccuracy (strict and flexible order) and ToolCallF1, and the values
under Ragas 0.4.3's semantics they carry as alternatives (str() arguments, sorted pairing, sets, rounding)."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.cases.model import ToolCall
from ragas_compat.metrics.registry import metric
from ragas_compat.metrics.tool_calls import _optimal_total, json_equal, str_equal

SUITE = load_default_suite()


def outcomes(case_id):
    case = SUITE.case(case_id)
    return {name: metric(name).outcome(case) for name in ("tool_call_accuracy", "tool_call_accuracy_flexible",
                                                           "tool_call_f1")}


def values(case_id):
    return tuple(o.value for o in outcomes(case_id).values())


def test_bundled_cases_exact_values():
    F = Fraction
    assert values("tc-identical-calls") == (1, 1, 1)
    assert values("tc-wrong-order") == (0, 1, 1)                 # strict order vs order-insensitive
    assert values("tc-wrong-argument") == (F(3, 4), F(3, 4), F(1, 2))
    assert values("tc-missing-call") == (0, 0, F(2, 3))          # length mismatch: 0, no coverage penalty
    assert values("tc-extra-call") == (0, 0, F(4, 5))
    assert values("tc-parallel-calls") == (1, 1, 1)
    assert values("tc-parallel-calls-other-order") == (0, 1, 1)
    assert values("tc-no-tool-calls") == (1, 1, None)
    assert outcomes("tc-no-tool-calls")["tool_call_f1"].undefined_reason == "no_tool_calls"
    assert values("tc-no-predicted-calls") == (0, 0, 0)
    assert values("tc-argument-type") == (F(3, 4), F(3, 4), F(1, 2))
    assert values("tc-argument-key-order") == (1, 1, 1)
    assert values("tc-repeated-call") == (0, 0, F(2, 3))
    assert values("tc-flexible-pairing") == (F(1, 4), F(1, 2), 0)


def test_ragas_semantics_as_alternatives():
    assert outcomes("tc-argument-type")["tool_call_accuracy"].alternatives == {"variant:str_arguments": 1}
    assert outcomes("tc-argument-key-order")["tool_call_accuracy"].alternatives == {"variant:str_arguments": 0}
    assert outcomes("tc-flexible-pairing")["tool_call_accuracy_flexible"].alternatives == {
        "variant:sorted_pairing": Fraction(1, 4)}
    f1 = outcomes("tc-repeated-call")["tool_call_f1"]
    assert f1.alternatives == {"rounding": 0.6667, "dedup": 1.0}
    assert outcomes("tc-missing-call")["tool_call_f1"].alternatives == {"rounding": 0.6667}
    assert outcomes("tc-identical-calls")["tool_call_accuracy"].alternatives == {}


def test_hash_equality_variant_when_nothing_repeats():
    case = parse_suite({"schema_version": 1, "suite": "t", "cases": [{
        "id": "b", "category": "edge", "reference_tool_calls": [{"name": "f", "args": {"x": 1}}],
        "user_input": [{"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {"x": True}}]}]}]}).cases[0]
    f1 = metric("tool_call_f1").outcome(case)
    assert f1.value == 0 and f1.alternatives == {"rounding": 0.0, "variant:hash_equality": 1.0}


def test_argument_comparisons():
    assert json_equal(1, 1.0) and not json_equal(1, "1") and not json_equal(True, 1)
    assert json_equal({"a": 1, "b": [1, {"c": None}]}, {"b": [1.0, {"c": None}], "a": 1})
    assert not json_equal([1, 2], [2, 1]) and not json_equal(None, "None")
    assert str_equal(1, "1") and not str_equal(1, 1.0) and str_equal(True, "True")
    assert not str_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_the_optimal_pairing_is_the_best_permutation():
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(1, 5)
        weights = [[Fraction(rng.randint(0, 3), 3) for _ in range(n)] for _ in range(n)]
        best = max(sum(weights[i][p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
        assert _optimal_total(weights) == best


def test_predicted_calls_are_the_ai_messages_calls_in_order():
    case = SUITE.case("tc-parallel-calls-other-order")
    assert [c.name for c in case.predicted_tool_calls] == ["book_hotel", "weather"]
    assert case.reference_tool_calls[0] == ToolCall("weather", {"city": "Lyon"})
