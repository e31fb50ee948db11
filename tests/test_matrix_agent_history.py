"""The agent metrics across Ragas's history (issue 36) and the judge's prompt per release (issue 38), on fake
probe outputs: ToolCallAccuracy's changes of meaning are drifts a rule of pinned/matrix-drift.toml names with
its upstream change, only across the release where that change landed; a verdict replayed under another
prompt text is a note on the cell, named in the drift list, and no finding."""

from __future__ import annotations

import json

import pytest

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.probe.judge.prompt_book import PromptBook
from ragas_compat.probe.judge.prompt_layouts import CURRENT, EARLY_0_2
from ragas_compat.probe.prompt_hash import per_kind, template_digest
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.matrix.drift import PROMPT_NOTE, Cell, build_matrix, causes_between
from ragas_compat.tools.matrix.drift_rules import ColumnFacts, load_drift_rules, parse_drift_rules
from ragas_compat.tools.matrix.environments import Environment
from ragas_compat.tools.matrix.report import render_reports
from ragas_compat.tools.matrix.run import run_matrix
from ragas_compat.tools.matrix.verdict import matrix_findings

TCA = "legacy:ToolCallAccuracy"


def rules_by_id():
    return {rule.id: rule for rule in load_drift_rules()}


def facts(before: str, after: str) -> tuple[ColumnFacts, ColumnFacts]:
    return ColumnFacts("a", before, "3.11.7"), ColumnFacts("b", after, "3.11.7")


# ---------------------------------------------------------------- the rules file

@pytest.mark.parametrize(("rule_id", "release", "pull"), [
    ("tool-call-accuracy-1685-no-arguments", "0.2.6", 1685),
    ("tool-call-args-1823-any-json", "0.2.11", 1823),
    ("multi-turn-sample-2017-parallel-tool-messages", "0.2.15", 2017),
    ("tool-call-accuracy-1894-length-mismatch", "0.3.3", 1894),
    ("tool-call-accuracy-2300-positional-pairing", "0.3.6", 2300),
    ("tool-call-accuracy-2307-strict-order-option", "0.3.6", 2307),
    ("tool-call-accuracy-2476-collections", "0.4.1", 2476),
])
def test_each_tool_call_accuracy_change_has_a_rule_with_its_release_and_upstream_change(rule_id, release, pull):
    rule = rules_by_id()[rule_id]
    assert str(rule.ragas_crosses) == release
    assert rule.upstream == f"https://github.com/vibrantlabsai/ragas/pull/{pull}"
    assert f"#{pull}" in rule.cause and release in rule.cause


def test_a_release_rule_explains_only_a_change_across_its_release():
    rule = rules_by_id()["tool-call-accuracy-1894-length-mismatch"]
    assert rule.explains_change("value_changed", TCA, "tool_call_accuracy", *facts("0.3.2", "0.3.3"), 1.0, 0.0)
    assert rule.explains_change("value_changed", TCA, "tool_call_accuracy", *facts("0.2.15", "0.3.5"), 2.0, 0.0)
    for before, after, target, why in (
            ("0.3.3", "0.3.5", TCA, "both after the change"),
            ("0.3.0", "0.3.2", TCA, "both before it"),
            ("0.3.3", "0.3.2", TCA, "the later column older (not adjacent releases in order)"),
            ("0.3.2", "0.3.3", "legacy:ToolCallF1", "another class"),
            ("0.3.2", "0.3.3", "collections:ToolCallAccuracy", "another API"),
            ("0.3.2", None, TCA, "a column whose Ragas is not known")):
        assert not rule.explains_change("value_changed", target, "tool_call_accuracy", *facts(before, after),
                                        1.0, 0.0), why
    assert not rule.explains_change("exception", TCA, "tool_call_accuracy", *facts("0.3.2", "0.3.3"), None, None)


def test_an_errors_rule_explains_only_that_exception():
    rule = rules_by_id()["tool-call-accuracy-1685-no-arguments"]
    args = ("exception_fixed", TCA, "tool_call_accuracy", *facts("0.2.5", "0.2.6"), None, 1.0)
    assert rule.explains_change(*args, ("ZeroDivisionError", None))
    assert not rule.explains_change(*args, ("ValidationError", None))
    assert not rule.explains_change(*args)  # no exception on either side


def test_bad_rule_keys_are_refused():
    from ragas_compat.errors import HarnessInputError

    base = {"id": "x", "kind": "k", "explains": ["value_changed"], "cause": "c", "reason": "r"}
    with pytest.raises(HarnessInputError, match="ragas_crosses"):
        parse_drift_rules({"drift_rule": [{**base, "ragas_crosses": "not a version"}]}, "t.toml")
    with pytest.raises(HarnessInputError, match="errors"):
        parse_drift_rules({"drift_rule": [{**base, "errors": []}]}, "t.toml")


# ---------------------------------------------------------------- a matrix over the releases

def _result(case, target, value, **extra):
    return {"case_id": case, "target": target, "api": target.split(":")[0], "metric": extra.pop("metric",
            "tool_call_accuracy"), "value": value, "ragas_class": "ragas.metrics._tool_call_accuracy.ToolCallAccuracy",
            "received": {}, "prompts": extra.pop("prompts", 0), "expected_prompts": 0,
            "warnings": extra.pop("warnings", []), "exported": True, "fields_accepted": ["user_input"],
            "fields_dropped": [], "required_columns": [], **extra}


def _error(kind, message):
    return {"error": {"type": kind, "message": message}}


# Ragas's ToolCallAccuracy on three bundled cases, as read from the code at each tag
HISTORY = {
    "0.2.5": {"tc-no-arguments": _error("ZeroDivisionError", "float division by zero"), "tc-extra-call": 1.0,
              "tc-repeated-call": 2.0, "tc-no-tool-calls": 0.0},
    "0.2.6": {"tc-no-arguments": 1.0, "tc-extra-call": 1.0, "tc-repeated-call": 2.0, "tc-no-tool-calls": 0.0},
    "0.3.2": {"tc-no-arguments": 1.0, "tc-extra-call": 1.0, "tc-repeated-call": 2.0, "tc-no-tool-calls": 0.0},
    "0.3.3": {"tc-no-arguments": 1.0, "tc-extra-call": 0.0, "tc-repeated-call": 0.0, "tc-no-tool-calls": 0.0},
    "0.3.6": {"tc-no-arguments": 1.0, "tc-extra-call": 0.0, "tc-repeated-call": 0.0, "tc-no-tool-calls": 1.0},
}


def _suite(case_ids) -> Suite:
    full = load_default_suite()
    return Suite(full.name, full.source, tuple(full.case(c) for c in case_ids))


def _matrix(outputs: dict[str, list[dict]], case_ids):
    suite = _suite(case_ids)

    def probe(cases, *, python, sys_path_prefix, timeout):
        return ProbeRun(True, None, {"probe_format": 1, "ragas": {"version": python, "import_error": None,
                                                                   "import_warnings": []},
                                     "python": {"version": "3.11.7"}, "network_attempts": [],
                                     "results": outputs[python]}, "", 1.0)

    envs = [Environment(v, "release", v, v, status="reused") for v in outputs]
    columns, _ = run_matrix(envs, suite, probe=probe, jobs=1)
    return build_matrix(columns, {"name": suite.name, "cases": len(suite.cases)})


def test_tool_call_accuracy_history_is_drift_with_named_causes_and_no_unexplained_finding():
    cases = ["tc-no-arguments", "tc-extra-call", "tc-repeated-call", "tc-no-tool-calls"]
    outputs = {version: [_result(c, TCA, values[c]) for c in cases] for version, values in HISTORY.items()}
    matrix = _matrix(outputs, cases)
    named = {(d.before, d.after, d.rule): sorted(case for case, _ in d.rows) for d in matrix.drifts}
    assert named[("0.2.5", "0.2.6", "tool-call-accuracy-1685-no-arguments")] == ["tc-no-arguments"] * 2
    assert named[("0.3.2", "0.3.3", "tool-call-accuracy-1894-length-mismatch")] == sorted(
        ["tc-extra-call", "tc-repeated-call"] * 2)
    assert named[("0.3.3", "0.3.6", "tool-call-accuracy-2300-positional-pairing")] == ["tc-no-tool-calls"] * 2
    assert all(d.rule for d in matrix.drifts), [d for d in matrix.drifts if not d.rule]
    assert not [f for f in matrix_findings(matrix) if f.kind == "unexplained"]
    row = next(r for r in matrix.rows if r.case_id == "tc-repeated-call")
    [value_cause] = [c for c in row.changes[2] if c.kind == "upstream_change" and "2.0" in c.text]
    assert value_cause.text.endswith("(2.0 -> 0.0)") and "#1894" in value_cause.text
    files = render_reports(matrix)
    assert "explained by drift rule tool-call-accuracy-1894-length-mismatch" in files["matrix.md"]


def test_the_same_change_elsewhere_stays_unexplained():
    """A value moving at 0.3.3 -> 0.3.6 the way #1894 moved it is no #1894 change: a finding."""
    cases = ["tc-extra-call"]
    outputs = {"0.3.3": [_result("tc-extra-call", TCA, 1.0)], "0.3.5": [_result("tc-extra-call", TCA, 0.0)]}
    matrix = _matrix(outputs, cases)
    assert [d.rule for d in matrix.drifts] == [None, None]
    assert any(f.kind == "unexplained" for f in matrix_findings(matrix))


# ---------------------------------------------------------------- the judge's prompt per release

def test_template_digest_covers_the_head_and_the_input_block_but_not_the_input():
    head = "Given a question, verify each statement.\nOutput schema: {...}\n--------EXAMPLES-----------\n..."
    one = head + CURRENT.input_marker + json.dumps({"question": "a"}) + CURRENT.output_suffix
    two = head + CURRENT.input_marker + json.dumps({"question": "b"}) + CURRENT.output_suffix
    early = head + EARLY_0_2.input_marker + json.dumps({"question": "a"}) + EARLY_0_2.output_suffix
    book = PromptBook()
    for text in (one, two, early):
        book.expect("verify", "Given a question", {"question": "a" if text is not two else "b"}, {"ok": 1}, "x")
    for text in (one, two):
        book.answer(text)
    [first, second] = [record["template"] for record in book.asked]
    assert first == second == template_digest(head, "current")
    book.answer(early)
    assert book.asked[-1]["template"] != first  # the early-0.2 input block is another prompt text
    assert list(per_kind(book.asked)) == ["verify"]
    assert per_kind(book.asked[:2]) == {"verify": first}
    assert per_kind(book.asked) != per_kind(book.asked[:2])
    assert per_kind(list(reversed(book.asked))) == per_kind(book.asked)  # order does not matter
    assert per_kind([{"kind": "verify", "input": None}]) == {}  # no digest recorded: nothing to compare


def test_a_prompt_change_is_a_named_note_and_no_finding():
    before = Cell("value", 1.0, classification="identical", prompts=2, prompt_hashes=(("nli", "aaaa"), ("x", "1")))
    after = Cell("value", 1.0, classification="identical", prompts=2, prompt_hashes=(("nli", "bbbb"), ("x", "1")))
    [cause] = causes_between(before, after, "0.2.5", "0.2.6")
    assert cause.kind == "prompt_changed" and cause.text.startswith(PROMPT_NOTE) and "nli" in cause.text
    assert causes_between(before, before, "a", "b") == ()
    only_one_side = Cell("value", 1.0, classification="identical", prompts=2, prompt_hashes=(("other", "c"),))
    assert all(c.kind != "prompt_changed" for c in causes_between(before, only_one_side, "a", "b"))

    case = "tc-identical-calls"
    outputs = {v: [_result(case, TCA, 1.0, prompts=1, prompt_hashes={"goal": digest})]
               for v, digest in (("0.3.2", "d1"), ("0.3.3", "d2"))}
    matrix = _matrix(outputs, [case])
    [drift] = matrix.drifts
    assert drift.kind == "prompt_changed" and PROMPT_NOTE in drift.text
    assert matrix_findings(matrix) == []
    files = render_reports(matrix)
    assert "Δ †" in files["matrix.md"] and PROMPT_NOTE in files["matrix.md"]
    cell = json.loads(files["matrix.json"].replace("\n", " "))["rows"][0]["cells"]["0.3.3"]
    assert cell["prompt_hashes"] == {"goal": "d2"} and cell["causes"][0]["kind"] == "prompt_changed"


def test_a_configured_target_is_matched_literally():
    rule = rules_by_id()["tool-call-accuracy-2307-strict-order-option"]
    flexible = "legacy:ToolCallAccuracy[strict_order=False]"
    assert rule.explains_change("class_added", flexible, "tool_call_accuracy_flexible", *facts("0.3.5", "0.3.6"),
                                None, None)
    assert not rule.explains_change("class_added", TCA, "tool_call_accuracy", *facts("0.3.5", "0.3.6"), None, None)


def test_an_input_ragas_dropped_before_scoring_is_no_harness_crash():
    """Ragas 0.2.2's multi_turn_ascore keeps only the declared columns: ToolCallAccuracy receives no
    reference_tool_calls and raises AssertionError. The reference stays the one on the case's inputs (it
    cannot be recomputed on what Ragas received), the column is built, the drift is Ragas's (#1531)."""
    case = "tc-identical-calls"
    dropped = _result(case, TCA, _error("AssertionError", "Reference is not set"),
                      received={"user_input": load_default_suite().case(case).raw["user_input"],
                                "reference_tool_calls": None})
    matrix = _matrix({"0.2.0": [_result(case, TCA, 1.0)], "0.2.2": [dropped]}, [case])
    [row] = matrix.rows
    assert row.cells[1].error_type == "AssertionError" and row.reference == "1"
    assert {d.rule for d in matrix.drifts} == {"multi-turn-1531-required-columns-only"}


# ---------------------------------------------------------------- real releases (slow)

def _real_columns(releases, case_ids):
    import os
    from pathlib import Path

    from ragas_compat.tools.matrix.environments import default_cache_dir, ensure_environments, parse_entries

    cache = Path(os.environ.get("RAGAS_COMPAT_MATRIX_CACHE") or default_cache_dir())
    environments = ensure_environments(parse_entries(",".join(releases)), cache_dir=cache, jobs=1)
    assert all(e.available for e in environments), [e.error for e in environments]
    suite = _suite(case_ids)
    columns, _ = run_matrix(environments, suite, jobs=1)
    assert [c.version for c in columns] == list(releases), [c.error for c in columns]
    return build_matrix(columns, {"name": suite.name, "cases": len(suite.cases)})


@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_real_0_3_2_to_0_3_3_shows_the_length_mismatch_change_with_its_cause():
    """Builds (once, into the matrix cache) or reuses the 0.3.2 and 0.3.3 environments."""
    matrix = _real_columns(("0.3.2", "0.3.3"), ["tc-identical-calls", "tc-extra-call", "tc-repeated-call"])
    row = next(r for r in matrix.rows if (r.case_id, r.target) == ("tc-repeated-call", TCA))
    assert [c.value for c in row.cells] == [2.0, 0.0]  # above the range before #1894 (ragas#2079)
    explained = {(case, target) for d in matrix.drifts if d.rule == "tool-call-accuracy-1894-length-mismatch"
                 for case, target in d.rows}
    assert {("tc-extra-call", TCA), ("tc-repeated-call", TCA)} <= explained
    assert not [f for f in matrix_findings(matrix) if f.kind == "unexplained"]


@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_real_0_4_2_imports_without_network_and_scores():
    """0.4.2 downloads tiktoken's o200k_base at import; its environment holds the file (offline_data)."""
    matrix = _real_columns(("0.4.2",), ["tc-identical-calls"])
    row = next(r for r in matrix.rows if (r.case_id, r.target) == ("tc-identical-calls", TCA))
    assert row.cells[0].value == 1.0


def test_a_named_prompt_change_keeps_the_note_and_is_no_finding():
    case = "ag-goal-reached"
    target = "legacy:AgentGoalAccuracyWithReference"
    outputs = {v: [_result(case, target, 1.0, metric="agent_goal_accuracy_with_reference", prompts=2,
                           prompt_hashes={"agent_goal_workflow": digest})]
               for v, digest in (("0.2.5", "a1"), ("0.2.6", "b2"), ("0.2.7", "c3"))}
    matrix = _matrix(outputs, [case])
    by_pair = {(d.before, d.after): d for d in matrix.drifts}
    named = by_pair[("0.2.5", "0.2.6")]
    assert (named.kind, named.rule) == ("prompt_changed", "pydantic-prompt-1672-format")
    assert named.text.startswith(PROMPT_NOTE) and "#1672" in named.text
    assert by_pair[("0.2.6", "0.2.7")].rule is None  # no rule for a change the history does not name
    assert matrix_findings(matrix) == []
    assert "Δ †" in render_reports(matrix)["matrix.md"]


# ---------------------------------------------------------------- telemetry per row

def test_telemetry_events_per_row_are_a_cause_named_from_0_2_7():
    event = {"event_type": "evaluation", "metrics": ["tool_call_accuracy"], "evaluation_type": "SINGLE_TURN",
             "num_rows": 1}
    before = Cell("value", 1.0, classification="identical", telemetry_events=())
    after = Cell("value", 1.0, classification="identical", telemetry_events=("evaluation tool_call_accuracy SINGLE_TURN",))
    [cause] = causes_between(before, after, "0.2.6", "0.2.7")
    assert cause.kind == "telemetry" and "0 -> 1" in cause.text and "tool_call_accuracy" in cause.text
    unrecorded = Cell("value", 1.0, classification="identical")  # a probe that did not record them
    assert causes_between(unrecorded, after, "a", "b") == ()

    case = "tc-identical-calls"
    outputs = {v: [_result(case, TCA, 1.0, telemetry_events=events)]
               for v, events in (("0.2.6", []), ("0.2.7", [event]), ("0.2.8", [event, event]))}
    matrix = _matrix(outputs, [case])
    by_pair = {(d.before, d.after): d for d in matrix.drifts}
    assert by_pair[("0.2.6", "0.2.7")].rule == "telemetry-1716-per-score-events"
    assert by_pair[("0.2.7", "0.2.8")].kind == "telemetry" and by_pair[("0.2.7", "0.2.8")].rule is None
    assert [f.after for f in matrix_findings(matrix) if f.kind == "unexplained"] == ["0.2.8"]
    cell = json.loads(render_reports(matrix)["matrix.json"].replace("\n", " "))["rows"][0]["cells"]["0.2.7"]
    assert cell["telemetry_events"] == ["evaluation tool_call_accuracy SINGLE_TURN"]


def test_the_probe_counts_the_events_a_row_queues(monkeypatch):
    import sys
    import types

    from ragas_compat.probe import telemetry_events

    class Batcher:
        def __init__(self):
            self.buffer = []

        def add_evaluation(self, event):
            self.buffer.append(event)

    class Event:
        def model_dump(self):
            return {"event_type": "evaluation", "metrics": ["m"], "evaluation_type": "SINGLE_TURN", "num_rows": 1,
                    "language": "english"}

    batcher = Batcher()
    ragas = types.ModuleType("ragas")
    analytics = types.ModuleType("ragas._analytics")
    analytics._analytics_batcher = batcher
    ragas._analytics = analytics
    monkeypatch.setitem(sys.modules, "ragas", ragas)
    monkeypatch.setitem(sys.modules, "ragas._analytics", analytics)
    monkeypatch.setattr(telemetry_events, "_installed", False)
    monkeypatch.setattr(telemetry_events, "_events", [])
    start = telemetry_events.mark()
    batcher.add_evaluation(Event())
    assert telemetry_events.since(start) == [{"event_type": "evaluation", "metrics": ["m"],
                                              "evaluation_type": "SINGLE_TURN", "num_rows": 1}]
    assert len(batcher.buffer) == 1  # Ragas's own batcher still gets the event
    assert telemetry_events.since(telemetry_events.mark()) == []
