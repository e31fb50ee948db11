"""Multi-turn cases (Ragas's MultiTurnSample): a case whose user_input is a list of human, ai and tool
messages, with reference_tool_calls, reference and reference_topics; validated like the rest (file,
case, JSON path; unknown keys refused), and in one file with single-turn cases."""

from __future__ import annotations

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.cases.model import Message, ToolCall
from ragas_compat.errors import HarnessInputError

SINGLE = {"id": "single", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
          "retrieved_contexts": ["c"]}
MULTI = {"id": "multi", "category": "edge", "description": "weather, two cities in parallel",
         "user_input": [
             {"type": "human", "content": "Weather in Paris and Oslo?"},
             {"type": "ai", "content": "Checking", "tool_calls": [
                 {"name": "weather", "args": {"city": "Paris"}}, {"name": "weather", "args": {"city": "Oslo", "days": 2}}]},
             {"type": "tool", "content": "Paris: 20C"},
             {"type": "tool", "content": "Oslo: 5C"},
             {"type": "ai", "content": "Paris 20C, Oslo 5C", "metadata": {"model": "m"}}],
         "reference_tool_calls": [{"name": "weather", "args": {"city": "Paris"}},
                                  {"name": "weather", "args": {"city": "Oslo", "days": 2}}],
         "reference": "The user gets both forecasts", "reference_topics": ["weather"]}


def suite(*cases):
    return parse_suite({"schema_version": 1, "suite": "t", "cases": list(cases)}, source="cases.json")


def problems(*cases) -> list[str]:
    with pytest.raises(HarnessInputError) as err:
        suite(*cases)
    return err.value.problems


def test_a_single_turn_and_a_multi_turn_case_sit_in_one_suite():
    single, multi = suite(SINGLE, MULTI).cases
    assert not single.multi_turn and single.conversation is None and single.reference_tool_calls is None
    assert multi.multi_turn and multi.user_input == "" and multi.response == "" and multi.retrieved_contexts == ()
    assert multi.conversation[0] == Message("human", "Weather in Paris and Oslo?")
    assert multi.conversation[1].tool_calls == (ToolCall("weather", {"city": "Paris"}),
                                                ToolCall("weather", {"city": "Oslo", "days": 2}))
    assert multi.conversation[4].tool_calls is None
    assert multi.predicted_tool_calls == multi.reference_tool_calls  # the ai messages' calls, in order
    assert multi.reference == "The user gets both forecasts" and multi.reference_topics == ("weather",)
    assert multi.raw["user_input"] == MULTI["user_input"]  # the probe reads the case as given


def test_optional_keys_and_an_empty_conversation():
    [case] = suite({"id": "m", "category": "edge", "user_input": []}).cases
    assert case.multi_turn and case.conversation == () and case.reference_tool_calls is None
    assert case.reference == "" and case.predicted_tool_calls == ()


def test_unknown_keys_and_shapes_are_refused_with_file_case_and_path():
    bad = {"id": "m", "category": "edge", "retrieved_contexts": [],
           "user_input": [{"type": "human", "content": "hi", "tool_calls": []},
                          {"type": "ai", "content": "", "tool_calls": [{"name": "f", "argz": {}}]},
                          {"type": "robot", "content": ""}, {"type": "ai"}],
           "reference_tool_calls": [{"name": "f", "args": []}], "reference_tool_cals": []}
    found = problems(SINGLE, bad)
    assert found == [
        "cases.json: case 'm': $.cases[1].retrieved_contexts: 'retrieved_contexts' is a single-turn key, but this case "
        "is multi-turn (user_input is a list of messages: Ragas's MultiTurnSample); a multi-turn case takes id, "
        "category, description, user_input, reference, reference_tool_calls, reference_topics, verdicts",
        "cases.json: case 'm': $.cases[1].user_input[0].tool_calls: only ai messages make tool calls; this is a human message",
        "cases.json: case 'm': $.cases[1].user_input[1].tool_calls[0]: missing required key 'args'",
        "cases.json: case 'm': $.cases[1].user_input[1].tool_calls[0].argz: unknown key 'argz'; did you mean 'args'?",
        "cases.json: case 'm': $.cases[1].user_input[2].type: expected one of human, ai, tool, got string \"robot\"",
        "cases.json: case 'm': $.cases[1].user_input[3]: missing required key 'content'",
        "cases.json: case 'm': $.cases[1].reference_tool_calls[0].args: expected an object, got array",
        "cases.json: case 'm': $.cases[1].reference_tool_cals: unknown key 'reference_tool_cals'; did you mean "
        "'reference_tool_calls'?",
    ]


def test_a_single_turn_case_still_needs_its_keys_and_refuses_multi_turn_ones():
    found = problems({**SINGLE, "reference_tool_calls": []})
    assert found == ["cases.json: case 'single': $.cases[0].reference_tool_calls: 'reference_tool_calls' is a "
                     "multi-turn key, but this case is single-turn (user_input is a text); a multi-turn case gives "
                     "user_input as a list of messages ({\"type\": \"human\"|\"ai\"|\"tool\", \"content\": ...})"]
    found = problems({"id": "s", "category": "edge", "user_input": "q"})
    assert any("missing required key 'response'" in line for line in found)


def test_a_tool_call_name_and_message_content_must_be_strings():
    found = problems({"id": "m", "category": "edge", "user_input": [{"type": "human", "content": 3}],
                      "reference_tool_calls": [{"name": None, "args": {}}]})
    assert found == ["cases.json: case 'm': $.cases[0].user_input[0].content: expected a string, got integer 3",
                     "cases.json: case 'm': $.cases[0].reference_tool_calls[0].name: expected a string, got null"]
