"""Replay by order: a judge (or a labeller) that gave two identical chunks different verdicts replays.

Ragas asks a row's contexts one after another in index order (legacy and collections context
precision), so identical prompts of one row are answered in the order Ragas asks them: a queue per
identical prompt content, still a StubMismatch when Ragas asks more often than replies exist.
Identical prompts of different rows with different verdicts stay ambiguous (evaluate() scores rows
concurrently). ``record`` and ``import`` warn when repeated prompts got different verdicts.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction

import pytest
from test_probe_prompt_book import CP_INSTRUCTION, cp_input, render
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.probe.judge.prompt_book import PromptBook, StubMismatch
from ragas_compat.report.json_report import result_rows
from ragas_compat.tools.record.cases import repeated_prompt_warnings
from ragas_compat.tools.record.importer import import_labels
from ragas_compat.values import decode_ragas_value

CLI = [sys.executable, "-m", "ragas_compat"]
CHUNK = "Oakworks was founded in 1900 by Oakson."
OTHER = "Oakworks makes oak furniture."
LABELS = [1, 0, 1]  # CHUNK, CHUNK again, OTHER: the repeated chunk judged relevant, then not


def ragas_float_ap(labels: list[int]) -> float:
    """Ragas's _calculate_average_precision, operation by operation in floats (both APIs)."""
    numerator = sum([(sum(labels[: i + 1]) / (i + 1)) * labels[i] for i in range(len(labels))])
    return numerator / (sum(labels) + 1e-10)


def hand_ap(labels: list[int]) -> Fraction:
    """The same quantity exactly: sum_i v_i h_i / i over (sum v_i + the float 1e-10)."""
    hits, numerator = 0, Fraction(0)
    for i, v in enumerate(labels, 1):
        hits += v
        numerator += Fraction(v * hits, i)
    return numerator / (sum(labels) + Fraction(1e-10))


def test_the_expected_value_by_hand():
    # [1, 0, 1]: 1/1 + 2/3 = 5/3 over 2 (+ 1e-10); answered the other way round, [0, 1, 1]: 1/2 + 2/3
    assert hand_ap(LABELS) == Fraction(5, 3) / (2 + Fraction(1e-10))
    # Ragas's float arithmetic rounds at each step: within two ulps of the exact value, and printed as the seed says
    assert ragas_float_ap(LABELS) == 0.8333333332916666 and within_ulps(ragas_float_ap(LABELS), hand_ap(LABELS))
    assert hand_ap([0, 1, 1]) == Fraction(7, 6) / (2 + Fraction(1e-10))
    assert not within_ulps(ragas_float_ap(LABELS), hand_ap([0, 1, 1]), 10**6)


def within_ulps(value: float, exact: Fraction, ulps: int = 2) -> bool:
    return abs(Fraction(value) - exact) <= ulps * Fraction(math.ulp(value))


# -- the book -------------------------------------------------------------------------------
def _expect(book: PromptBook, context: str, label: int, row: object | None) -> None:
    book.expect("context_precision", CP_INSTRUCTION, cp_input(context), {"reason": "r", "verdict": label},
                label=f"[{context}]", row=row)


def _ask(book: PromptBook, context: str) -> int:
    return json.loads(book.answer(render(CP_INSTRUCTION, cp_input(context))))["verdict"]


def test_identical_prompts_of_one_row_are_answered_in_the_order_asked():
    book, row = PromptBook(), object()
    for context, label in (("same", 1), ("same", 0), ("other", 1), ("same", 1)):
        _expect(book, context, label, row)
    assert [_ask(book, "same"), _ask(book, "other"), _ask(book, "same"), _ask(book, "same")] == [1, 1, 0, 1]
    assert book.problems == [] and book.unasked() == []


def test_asked_more_often_than_the_queue_holds_is_still_a_stub_mismatch():
    book, row = PromptBook(), object()
    _expect(book, "same", 1, row)
    _expect(book, "same", 0, row)
    assert [_ask(book, "same"), _ask(book, "same")] == [1, 0]
    with pytest.raises(StubMismatch, match="asked 3 times; the frozen verdicts provide 2"):
        _ask(book, "same")


def test_a_queue_asked_fewer_times_than_expected_is_unasked():
    book, row = PromptBook(), object()
    _expect(book, "same", 1, row)
    _expect(book, "same", 0, row)
    assert _ask(book, "same") == 1
    [missing] = book.unasked()
    assert "expected 2 time(s), asked 1" in missing


def test_identical_prompts_of_different_rows_with_different_replies_stay_ambiguous():
    book = PromptBook()
    _expect(book, "same", 1, object())
    _expect(book, "same", 0, object())
    with pytest.raises(StubMismatch, match=r"ambiguous.*in different rows"):
        _ask(book, "same")


# -- the real probe: legacy and collections, per row and in evaluate() -------------------------
def _case(case_id: str, labels: list[int], contexts: list[str]) -> dict:
    return {"id": case_id, "category": "edge", "user_input": "Who founded Oakworks?",
            "reference": "Oakson founded Oakworks in 1900.", "response": "Oakson, in 1900.",
            "retrieved_contexts": contexts,
            "verdicts": {"context_precision_with_reference": labels, "context_precision_without_reference": labels}}


TARGETS = ["legacy:LLMContextPrecisionWithReference", "legacy:LLMContextPrecisionWithoutReference",
           "collections:ContextPrecisionWithReference", "collections:ContextPrecisionWithoutReference"]


@pytest.mark.slow
def test_a_repeated_chunk_labelled_1_then_0_replays_bit_for_bit_through_the_probe():
    from ragas_compat.runner import run_probe

    cases = [_case("repeat-1-then-0", LABELS, [CHUNK, CHUNK, OTHER]),
             _case("repeat-0-then-1", [0, 1, 1], [CHUNK, CHUNK, "Oakworks is in Oakton."])]
    run = run_probe(cases, targets=TARGETS)
    assert run.ok, run.error
    values = {(r["case_id"], r["target"]): decode_ragas_value(r["value"]) for r in run.output["results"]}
    for target in TARGETS:
        # Ragas with a judge answering 1, 0, 1 in asking order: the hand-computed value, bit for bit
        assert values[("repeat-1-then-0", target)] == ragas_float_ap(LABELS), target
        assert within_ulps(values[("repeat-1-then-0", target)], hand_ap(LABELS)), target
        assert values[("repeat-0-then-1", target)] == ragas_float_ap([0, 1, 1]), target


@pytest.mark.slow
def test_evaluate_replays_a_row_whose_repeated_chunk_got_two_verdicts():
    from ragas_compat.runner import run_probe

    run = run_probe([_case("repeat-1-then-0", LABELS, [CHUNK, CHUNK, OTHER]),
                     _case("plain", [1, 0], [OTHER, "unrelated"])],
                    targets=["legacy:LLMContextPrecisionWithReference"],
                    evaluate={"apis": ["evaluate"], "max_workers": 4})
    assert run.ok, run.error
    rows = {row["case_id"]: {t: decode_ragas_value(v) for t, v in row["values"].items()}
            for evaluated in run.output["evaluate"]["runs"] for row in evaluated["rows"]}
    [value] = rows["repeat-1-then-0"].values()
    assert value == ragas_float_ap(LABELS)


# -- warnings of record and import ------------------------------------------------------------
def test_repeated_prompts_with_different_verdicts_are_warned():
    cases = [_case("r", LABELS, [CHUNK, CHUNK, OTHER]), _case("same-verdicts", [1, 1, 0], [CHUNK, CHUNK, OTHER])]
    warnings = repeated_prompt_warnings(cases)
    within = [w for w in warnings if w.startswith("case 'r'")]
    assert len(within) == 2  # with and without reference
    assert "contexts 0, 1 are the same text" in within[0] and "(1, 0)" in within[0]
    # the same prompt (question, chunk, answer) in both cases with other verdicts: evaluate() cannot replay it
    assert any("cases 'r', 'same-verdicts'" in w and "evaluate()" in w for w in warnings)
    assert repeated_prompt_warnings([_case("same-verdicts", [1, 1, 0], [CHUNK, CHUNK, OTHER])]) == []


def test_unjudged_placeholders_are_not_verdicts():
    case = _case("r", [1, 0, 0], [CHUNK, OTHER, OTHER])
    case["verdicts"].pop("context_precision_without_reference")
    case["recording"] = {"unjudged": {"context_precision_with_reference": [1, 2]}}
    assert repeated_prompt_warnings([case]) == []


def test_import_of_a_repeated_chunk_labelled_1_then_0_warns_in_the_file_and_on_the_terminal(tmp_path):
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps({"id": "q1", "user_input": "Who founded Oakworks?", "response": "Oakson.",
                                   "reference": "Oakson founded Oakworks.",
                                   "retrieved_contexts": [CHUNK, CHUNK, OTHER]}) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label,metric\n"
                      + "".join(f"q1,{i},{v},{v},context_precision_with_reference\n" for i, v in enumerate(LABELS)),
                      encoding="utf-8")
    out = tmp_path / "cases.json"
    result = import_labels(dataset, labels, out)
    [warning] = result.warnings
    assert "case 'q1', context_precision_with_reference: contexts 0, 1 are the same text" in warning
    assert json.loads(out.read_text(encoding="utf-8"))["warnings"] == [warning]
    proc = subprocess.run([*CLI, "import", str(dataset), str(labels), "--out", str(tmp_path / "again.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "contexts 0, 1 are the same text" in " ".join(proc.stderr.split())
    # no repeat, no warning
    labels.write_text(labels.read_text(encoding="utf-8").replace("q1,1,0,0", "q1,1,1,1"), encoding="utf-8")
    assert import_labels(dataset, labels, out).warnings == ()
    assert "warnings" not in json.loads(out.read_text(encoding="utf-8"))


FACTORY = '''
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

REPLIES = {replies!r}

def make_judge():
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in REPLIES]))
'''


@pytest.mark.slow
def test_record_with_a_judge_answering_1_then_0_warns_and_replays_bit_for_bit(tmp_path):
    """A live judge (answers in asking order) labels the repeated chunk 1 then 0: record warns, the live
    score is the hand-computed one, and run's replay reproduces it bit for bit."""
    replies = [json.dumps({"reason": "r", "verdict": v}) for v in LABELS]
    (tmp_path / "order_judge.py").write_text(FACTORY.format(replies=replies), encoding="utf-8")
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"id": "q1", "user_input": "Who founded Oakworks?", "response": "Oakson.",
                                   "reference": "Oakson founded Oakworks.",
                                   "retrieved_contexts": [CHUNK, CHUNK, OTHER]}) + "\n", encoding="utf-8")
    out = tmp_path / "recorded.json"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    proc = subprocess.run([*CLI, "record", str(dataset), "--out", str(out), "--llm", "order_judge:make_judge",
                           "--metric", "context_precision_with_reference", "--concurrency", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "are the same text" in " ".join(proc.stderr.split())
    document = json.loads(out.read_text(encoding="utf-8"))
    [case] = document["cases"]
    assert case["verdicts"]["context_precision_with_reference"] == LABELS
    [warning] = document["warnings"]
    assert "contexts 0, 1 are the same text" in warning and "(1, 0)" in warning
    [live] = case["recording"]["live"].values()
    assert decode_ragas_value(live) == ragas_float_ap(LABELS) and within_ulps(decode_ragas_value(live), hand_ap(LABELS))
    report = tmp_path / "report"
    run = CliRunner().invoke(app, ["run", "--cases", str(out), "--out", str(report), "--fail-on", "none"])
    assert run.exit_code == 0, run.output
    audit = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert not [f for f in audit["drift"] if f["kind"] in ("replay_mismatch", "harness_error")]
    rows = result_rows(audit)
    replayed = [r for r in rows if r["ragas_target"] == "legacy:LLMContextPrecisionWithReference"]
    assert [r["ragas_repr"] for r in replayed] == [repr(ragas_float_ap(LABELS))]
