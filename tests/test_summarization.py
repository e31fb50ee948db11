"""SummarizationScore (legacy) / SummaryScore (collections): the exact reference on hand-computed inputs, Ragas's
known semantics as named alternatives, and the bundled sum-* cases through the real probe (both APIs, the
scripted judge answering Ragas's three prompts from the frozen verdicts)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.metrics.registry import metric

TEXT = "abcdefghij"  # 10 code points


def _case(answers, questions=None, contexts=(TEXT,), response="abcd", targets=None):
    questions = [f"q{i}?" for i in range(len(answers))] if questions is None else questions
    raw = {"id": "s", "category": "edge", "user_input": "u", "reference": "", "response": response,
           "retrieved_contexts": [], "reference_contexts": list(contexts),
           "verdicts": {"summary_score": [{"keyphrases": ["k"], "questions": questions, "answers": answers}]}}
    if targets:
        raw["targets"] = targets
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t").cases[0]


def test_the_score_is_qa_and_conciseness_weighted_exactly():
    outcome = metric("summary_score").outcome(_case([1, 0, 1, True]))
    # QA 3/4, conciseness 1 - 4/10 = 3/5: (3/4 + 3/5) / 2 = 27/40
    assert outcome.value == Fraction(27, 40)
    assert outcome.details["qa_score"] == Fraction(3, 4) and outcome.details["conciseness"] == Fraction(3, 5)
    # Ragas: 1 - 4 / (10 + 1e-10), in its own float order
    assert outcome.alternatives["epsilon"] == 0.75 * 0.5 + (1 - 4 / (10 + 1e-10)) * 0.5
    assert metric("summary_score_qa").outcome(_case([1, 0, 1, True])).value == Fraction(3, 4)


def test_a_summary_longer_than_the_text_has_conciseness_zero_and_ragas_a_hair_above():
    outcome = metric("summary_score").outcome(_case([1], response=TEXT + "xyz"))
    assert outcome.details["conciseness"] == 0 and outcome.value == Fraction(1, 2)
    assert outcome.alternatives["epsilon"] > 0.5


def test_the_legacy_class_without_length_penalty_still_weights_the_qa_share():
    outcome = metric("summary_score_qa").outcome(_case([1, 1, 0, 0]))
    assert outcome.value == Fraction(1, 2)
    assert outcome.alternatives["variant:no_penalty_still_weighted"] == 0.25


def test_fewer_answers_than_questions_the_reference_counts_the_missing_one_as_unanswered():
    outcome = metric("summary_score_qa").outcome(_case([1, 1], questions=["a?", "b?", "c?"]))
    assert outcome.value == Fraction(2, 3)
    assert outcome.alternatives["variant:answers_returned"] == 1.0
    assert "epsilon" not in metric("summary_score").outcome(_case([1, 1], questions=["a?", "b?", "c?"])).alternatives


def test_no_question_and_an_empty_text_are_undefined_and_named():
    none = metric("summary_score").outcome(_case([], questions=[]))
    assert none.value is None and none.undefined_reason == "no_questions" and not none.alternatives
    empty = metric("summary_score").outcome(_case([1], contexts=("",)))
    assert empty.value is None and empty.undefined_reason == "empty_reference_text"
    assert empty.alternatives == {"variant:empty_text_concise": 1.0}  # legacy: 1 - 0/1e-10 = 1.0, QA 1
    assert metric("summary_score_qa").outcome(_case([1], contexts=("",))).value == 1


def test_a_non_binary_answer_is_refused_naming_it():
    outcome = metric("summary_score").outcome(_case([1, 2]))
    assert outcome.value is None and "answers[1]" in outcome.refused and "2" in outcome.refused


def test_a_configured_coefficient_is_the_decimal_written():
    case = _case([1, 0], targets={"SummarizationScore": {"coeff": 0.3}})
    configured = metric("summary_score").configured("legacy", "SummarizationScore", (("coeff", 0.3),))
    # QA 1/2, conciseness 3/5: 1/2 * 7/10 + 3/5 * 3/10 = 53/100
    assert configured.outcome(case).value == Fraction(53, 100)
    assert metric("summary_score_qa").configured("legacy", "SummarizationScore", (("coeff", 0.3),)) is None


@pytest.mark.slow
def test_bundled_summary_cases_through_the_real_probe(tmp_path):
    """Through ``run`` (configured targets included): every row identical or explained by a pin rule."""
    import json

    from typer.testing import CliRunner

    from ragas_compat.cli import app

    suite = json.loads(json.dumps({"schema_version": 1, "suite": "sum", "cases": [
        case.raw for case in load_default_suite().cases if case.id.startswith("sum-")]}))
    assert len(suite["cases"]) >= 6
    cases = tmp_path / "sum.json"
    cases.write_text(json.dumps(suite))
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(out), "--metric", "summary_score",
                                      "--metric", "summary_score_qa", "--workers", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    rows = report["results"]["data"]
    columns = report["results"]["columns"]
    by_key = {key: dict(zip(columns, row, strict=True)) for key, row in rows.items()}
    assert not [key for key, row in by_key.items() if row["unexpected"]]
    cls = {key: row["classification"] for key, row in by_key.items()}
    assert cls["sum-good|legacy:SummarizationScore"] == "epsilon"
    assert cls["sum-good|collections:SummaryScore"] == "epsilon"
    assert cls["sum-good|legacy:SummarizationScore[length_penalty=False]"] == "variant"
    assert cls["sum-good|collections:SummaryScore[length_penalty=False]"] == "identical"
    assert cls["sum-fewer-answers|collections:SummaryScore"] == "variant"
    assert cls["sum-no-questions|legacy:SummarizationScore"] == "error"
    assert cls["sum-empty-source|legacy:SummarizationScore"] == "variant"
    assert cls["sum-empty-source|collections:SummaryScore"] == "error"
    assert cls["sum-coeff-configured|collections:SummaryScore[coeff=0.8]"] == "epsilon"
    # Ragas's value, bit for bit: QA 3/4 and 1 - |summary| / (|text| + 1e-10), weighted 1/2
    good = next(c for c in load_default_suite().cases if c.id == "sum-good")
    text = "\n".join(good.reference_contexts)
    expected = 0.75 * 0.5 + (1 - len(good.response) / (len(text) + 1e-10)) * 0.5
    assert by_key["sum-good|legacy:SummarizationScore"]["ragas_value"] == expected
    assert by_key["sum-good|legacy:SummarizationScore[length_penalty=False]"]["ragas_value"] == 0.375
