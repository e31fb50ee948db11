"""Per-call judge scripts (case key ``judge_calls``): the loader's checks, the PromptBook answering in
call order, a probe run on the installed Ragas, and the matrix drifts the scripts make visible
(``tests/data/per_call_cases.json``; the ``matrix_e2e`` tests skip, saying so, when a release's
environment is not built in the matrix cache)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
from test_probe_dialects import CP_INPUT, CP_INSTRUCTION, cached_environment, render_current, render_early_0_2

from ragas_compat.cases.loader import load_cases, parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.probe.judge.prompt_book import PromptBook, StubMismatch

CASES = Path(__file__).parent / "data" / "per_call_cases.json"
FEWER_VERDICTS = "per-call-faithfulness-fewer-verdicts-than-statements"
SAMPLES_DISAGREE = "per-call-relevancy-samples-disagree"
FAITHFULNESS, WITHOUT_REFERENCE, NEVER_JSON = ("per-call-faithfulness-zero-statements",
                                               "per-call-precision-without-reference-judges-reference",
                                               "per-call-precision-reply-never-json")


def suite_with(change) -> dict:
    document = json.loads(CASES.read_text())
    change(document["cases"][2])
    return document


# -- loader ---------------------------------------------------------------------------------------
def test_the_per_call_cases_load_with_their_scripts():
    suite = load_cases(CASES)
    case = suite.case(NEVER_JSON)
    assert set(case.judge_calls["context_precision_with_reference"]) == {"context_precision", "fix_output_format"}
    assert case.verdicts["context_precision_with_reference"] == (1,)


def problems_of(document: dict) -> str:
    with pytest.raises(HarnessInputError) as caught:
        parse_suite(document, "per_call.json")
    return str(caught.value)


def test_a_script_without_its_verdict_is_refused_naming_case_and_field():
    def drop(case):
        case["verdicts"] = {"context_recall": []}
    text = problems_of(suite_with(drop))
    assert f"case {NEVER_JSON!r}: $.cases[2].judge_calls.context_precision_with_reference" in text
    assert "verdicts.context_precision_with_reference" in text


def test_a_prompt_kind_the_verdict_does_not_ask_is_an_unknown_key():
    def misname(case):
        case["judge_calls"]["context_precision_with_reference"]["nli_statements"] = ["{}"]
    text = problems_of(suite_with(misname))
    assert "judge_calls.context_precision_with_reference.nli_statements" in text and "unknown key" in text


@pytest.mark.parametrize("entry", [[], [[]], [1], [{"when": {"answer": None}}], [{"reply": "x", "when": {}}]])
def test_malformed_call_entries_are_refused(entry):
    def set_entry(case):
        case["judge_calls"]["context_precision_with_reference"]["context_precision"] = entry
    assert "judge_calls.context_precision_with_reference.context_precision" in problems_of(suite_with(set_entry))


def test_judge_replies_and_judge_calls_cannot_script_the_same_judge():
    def both(case):
        case["judge_replies"] = {"context_precision_with_reference": {"0": "x"}}
    assert "use one of judge_calls and judge_replies" in problems_of(suite_with(both))


def test_the_schema_names_only_prompt_kinds_the_judge_scripts_ask():
    from ragas_compat.probe.judge.answers import ATTRIBUTES
    from ragas_compat.probe.judge.criteria import PROMPTS
    from ragas_compat.probe.judge.prompt_book import FORMAT_FIX_KIND
    from ragas_compat.probe.judge.scripts import PROMPT_KINDS
    from ragas_compat.probe.protocol import API_LEGACY
    from ragas_compat.resources import CASES_SCHEMA, package_text

    schema = json.loads(package_text(CASES_SCHEMA))
    by_key = schema["$defs"]["case"]["properties"]["judge_calls"]["properties"]
    kinds = {*PROMPT_KINDS, *ATTRIBUTES[API_LEGACY], *PROMPTS, FORMAT_FIX_KIND}
    assert by_key and all(set(spec["properties"]) <= kinds for spec in by_key.values())
    assert set(by_key) <= set(schema["$defs"]["case"]["properties"]["verdicts"]["properties"])


def test_cases_without_a_script_are_unchanged():
    document = suite_with(lambda case: case.pop("judge_calls"))
    assert parse_suite(copy.deepcopy(document)).cases[2].judge_calls == {}


# -- the book -------------------------------------------------------------------------------------
def scripted_book(calls: list) -> PromptBook:
    book = PromptBook()
    book.expect("context_precision", CP_INSTRUCTION, CP_INPUT, {"reason": "r", "verdict": 1}, label="verdicts[0]")
    book.script_calls("context_precision", CP_INSTRUCTION, calls, label="judge_calls.cp.context_precision")
    return book


def test_scripted_calls_are_answered_in_order_whatever_the_input():
    book = scripted_book(["first", "second"])
    other = dict(CP_INPUT, context="a context no verdict names")
    assert book.answer(render_current(CP_INSTRUCTION, other)) == "first"
    assert book.answer(render_early_0_2(CP_INSTRUCTION, CP_INPUT)) == "second"
    assert [a.get("scripted") for a in book.asked] == ["judge_calls.cp.context_precision[0]",
                                                       "judge_calls.cp.context_precision[1]"]
    assert book.unasked() == [] and book.problems == []


def test_after_the_script_the_frozen_verdict_answers_and_unused_entries_are_no_mismatch():
    book = scripted_book([{"reply": "only when no answer", "when": {"answer": None}}])
    assert json.loads(book.answer(render_current(CP_INSTRUCTION, CP_INPUT)))["verdict"] == 1
    assert book.unasked() == [] and book.expected_count == 0
    without_answer = {"question": "q", "context": "c1"}
    assert book.answer(render_current(CP_INSTRUCTION, without_answer)) == "only when no answer"
    with pytest.raises(StubMismatch):  # the script is used up and no verdict has this input
        book.answer(render_current(CP_INSTRUCTION, without_answer))


def test_a_repeated_entry_answers_every_further_asking_it_fits():
    book = scripted_book(["once", {"reply": "never JSON", "repeat": True}])
    replies = [book.answer(render_current(CP_INSTRUCTION, CP_INPUT)) for _ in range(5)]
    assert replies == ["once"] + ["never JSON"] * 4 and book.problems == []


def test_a_scripted_fix_output_format_prompt_is_answered_verbatim():
    from ragas_compat.probe.judge.scripts import LEGACY_PROMPTS, fix_output_format_instruction, use_judge_calls

    metric = type("Metric", (), {"context_precision_prompt": type("P", (), {"instruction": CP_INSTRUCTION})()})()
    case = {"judge_calls": {"context_precision_with_reference": {"context_precision": ["bad"],
                                                                 "fix_output_format": ["still bad"]}}}
    book = PromptBook()
    use_judge_calls(LEGACY_PROMPTS, metric, case, book, "context_precision_with_reference")
    use_judge_calls(LEGACY_PROMPTS, metric, case, book, "faithfulness")  # nothing scripted for it
    assert book.answer(render_current(CP_INSTRUCTION, CP_INPUT)) == "bad"
    fix = render_current(fix_output_format_instruction(),
                         {"output_string": "bad", "prompt_value": render_current(CP_INSTRUCTION, CP_INPUT)})
    assert book.answer(fix) == "still bad"
    assert [a["kind"] for a in book.asked] == ["context_precision", "fix_output_format"]


def test_a_call_of_n_generations_gets_its_listed_replies():
    book = scripted_book([["a", "b", "c"], "same"])
    assert book.answer_generations(render_current(CP_INSTRUCTION, CP_INPUT), 3) == ["a", "b", "c"]
    assert book.answer_generations(render_current(CP_INSTRUCTION, CP_INPUT), 2) == ["same", "same"]
    book = scripted_book([["a", "b"]])
    with pytest.raises(StubMismatch, match="asked for 3 generations"):
        book.answer_generations(render_current(CP_INSTRUCTION, CP_INPUT), 3)


# -- the probe on the installed Ragas, and the matrix across releases -------------------------------
_COLUMNS: dict[str, object] = {}  # interpreter -> its column: a release's probe runs once per module, not per test


def matrix_over(environments):
    """The matrix of these environments' columns (in order) over CASES. A column is one environment's probe
    run on the suite alone (``run_matrix`` runs them independently; ``VersionColumn`` is frozen), so a
    release two tests compare is probed once."""
    from ragas_compat.tools.matrix.drift import build_matrix
    from ragas_compat.tools.matrix.run import run_matrix

    suite = load_cases(CASES)
    missing = [e for e in environments if e.python not in _COLUMNS]
    if missing:
        columns, _ = run_matrix(missing, suite, jobs=1)
        _COLUMNS.update(zip((e.python for e in missing), columns, strict=True))
    columns = [_COLUMNS[e.python] for e in environments]
    for column in columns:
        assert column.available, column.error
    return build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": len(suite.cases)})


def cached(*versions: str):
    from ragas_compat.tools.matrix.environments import Environment

    out = []
    for version in versions:
        env = cached_environment(version)
        if env is None:
            pytest.skip(f"Ragas {version}'s environment is not built in the matrix cache "
                        f"(build it: ragas-compat matrix --versions {version})")
        out.append(Environment(version, "release", version, str(env / "bin" / "python"), status="reused", path=env))
    return out


def cells(matrix, case_id: str, target: str):
    return next(r for r in matrix.rows if (r.case_id, r.target) == (case_id, target))


@pytest.mark.slow
def test_the_installed_ragas_reads_the_scripts():
    from ragas_compat.tools.matrix.environments import Environment

    here = Environment("installed", "release", None, sys.executable, status="reused", path=Path(sys.prefix))
    matrix = matrix_over([here])
    never_json = cells(matrix, NEVER_JSON, "legacy:LLMContextPrecisionWithReference").cells[0]
    assert (never_json.error_type, never_json.prompts) == ("RagasOutputParserException", 4)
    # the collections class's instructor re-asks a reply it refuses (its default three attempts, each taking the
    # script's next reply), then raises its own exception, as against a live judge that never returns JSON
    collections = cells(matrix, NEVER_JSON, "collections:ContextPrecisionWithReference").cells[0]
    assert (collections.error_type, collections.prompts) == ("InstructorRetryException", 3)
    zero = cells(matrix, FAITHFULNESS, "legacy:Faithfulness").cells[0]
    assert zero.prompts == 1 and zero.harness_limit is None
    for target in ("legacy:Faithfulness", "collections:Faithfulness"):  # divides by the verdicts the reply holds
        row = cells(matrix, FEWER_VERDICTS, target)
        assert (row.reference, row.cells[0].value, row.cells[0].prompts) == ("1/2", 1.0, 2)
    # three generations that disagree: the legacy class asks once for n=3 and reads the first sample's flag
    # (mean cosine 4/5); the collections class asks three times for one and sees the first generation each time
    legacy = cells(matrix, SAMPLES_DISAGREE, "legacy:AnswerRelevancy").cells[0]
    assert (legacy.value, legacy.prompts) == (pytest.approx(0.8), 1)
    collections = cells(matrix, SAMPLES_DISAGREE, "collections:AnswerRelevancy").cells[0]
    assert (collections.value, collections.prompts) == (1.0, 3)


def causes(row, index: int) -> dict[str, str]:
    return {cause.kind: cause.text for cause in row.changes[index]}


@pytest.mark.matrix_e2e
def test_faithfulness_on_zero_statements_stops_asking_the_nli_prompt_after_0_2_6():
    matrix = matrix_over(cached("0.2.6", "0.2.15"))
    row = cells(matrix, FAITHFULNESS, "legacy:Faithfulness")
    assert [c.prompts for c in row.cells] == [2, 1]
    assert causes(row, 0)["prompts_changed"] == "judge prompts 2 -> 1"
    assert any(d.kind == "prompts_changed" and (FAITHFULNESS, row.target) in d.rows for d in matrix.drifts)


@pytest.mark.matrix_e2e
def test_precision_without_reference_reads_the_reference_until_0_2_3():
    matrix = matrix_over(cached("0.2.2", "0.2.3"))
    row = cells(matrix, WITHOUT_REFERENCE, "legacy:LLMContextPrecisionWithoutReference")
    found = causes(row, 0)
    assert found["exception_fixed"] == "0.2.2 raised KeyError: 'reference'"
    assert found["prompts_changed"] == "judge prompts 0 -> 2"
    assert row.cells[1].value == pytest.approx(1.0)
    assert any(d.kind == "exception_fixed" and (WITHOUT_REFERENCE, row.target) in d.rows for d in matrix.drifts)


@pytest.mark.matrix_e2e
def test_a_reply_that_is_never_json_fails_differently_in_0_1_21_and_0_2_3():
    matrix = matrix_over(cached("0.1.21", "0.2.3"))
    row = cells(matrix, NEVER_JSON, "legacy:ContextPrecision")
    assert [(c.error_type, c.prompts) for c in row.cells] == [("ValidationError", 2), ("RagasOutputParserException", 4)]
    found = causes(row, 0)
    assert found["exception_changed"].startswith("ValidationError -> RagasOutputParserException")
    assert found["prompts_changed"] == "judge prompts 2 -> 4"
    assert any(d.kind == "exception_changed" and (NEVER_JSON, row.target) in d.rows for d in matrix.drifts)


@pytest.mark.matrix_e2e
def test_generations_that_disagree_score_by_how_a_release_samples_them():
    """A deterministic judge returns the same three generations on every call, the second noncommittal:
    0.1.21 asks once for n=3 and zeroes the score (as the verdicts define), 0.2.x asks three calls of one
    generation and sees the first each time (1.0), 0.3.9 asks once again but reads the first sample's flag."""
    matrix = matrix_over(cached("0.1.21", "0.2.3", "0.3.9"))
    row = cells(matrix, SAMPLES_DISAGREE, "legacy:AnswerRelevancy")
    assert row.reference == "0"
    assert [(c.value, c.prompts) for c in row.cells] == [(0.0, 1), (1.0, 3), (pytest.approx(0.8), 1)]
    first, second = causes(row, 0), causes(row, 1)
    assert first["prompts_changed"] == "judge prompts 1 -> 3" and "value_changed" in first
    assert second["prompts_changed"] == "judge prompts 3 -> 1" and "value_changed" in second
    assert any(d.kind == "value_changed" and (SAMPLES_DISAGREE, row.target) in d.rows for d in matrix.drifts)
