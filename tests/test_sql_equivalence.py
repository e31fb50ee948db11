"""LLMSQLEquivalence (legacy) / SQLSemanticEquivalence (collections): the reference is the judge's verdict, the
scripted judge answers each API's own reply keys, and the bundled sql-* cases run through the real probe."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.metrics.registry import metric


def _case(equivalent, response="SELECT 1;"):
    raw = {"id": "q", "category": "edge", "user_input": "u", "reference": "SELECT 1;", "response": response,
           "retrieved_contexts": [], "reference_contexts": ["Table t: id (INT)"],
           "verdicts": {"sql_equivalence": [{"response_explanation": "r", "reference_explanation": "f",
                                             "equivalent": equivalent}]}}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t").cases[0]


@pytest.mark.parametrize(("given", "value"), [(1, 1), (0, 0), (True, 1), (False, 0)])
def test_the_reference_is_the_verdict(given, value):
    assert metric("sql_equivalence").outcome(_case(given)).value == Fraction(value)


@pytest.mark.parametrize("given", [2, "yes", 0.5])
def test_a_verdict_that_is_not_0_or_1_is_refused(given):
    outcome = metric("sql_equivalence").outcome(_case(given))
    assert outcome.value is None and "equivalent must be 0 or 1" in outcome.refused


def test_each_api_gets_its_own_reply_keys():
    from ragas_compat.probe.judge.prompt_book import PromptBook
    from ragas_compat.probe.judge.scripts import COLLECTIONS_PROMPTS, LEGACY_PROMPTS
    from ragas_compat.probe.judge.summaries import sql_equivalence_script

    class Metric:
        class equivalence_prompt:  # Ragas's attribute name
            instruction = "compare"

    replies = {}
    for prompts in (LEGACY_PROMPTS, COLLECTIONS_PROMPTS):
        book = PromptBook()
        sql_equivalence_script("sql_equivalence")(prompts, Metric(), _case(1).raw, book)
        assert book.expected_count == 1
        (entry,) = book._entries.values()
        replies[prompts.api] = json.loads(entry.replies[0])
    assert replies["legacy"] == {"response_query_explaination": "r", "reference_query_explaination": "f",
                                 "equivalence": True}
    assert replies["collections"] == {"response_explanation": "r", "reference_explanation": "f", "equivalent": True}
    # the collections class raises before asking on an empty response: nothing expected
    empty = PromptBook()
    sql_equivalence_script("sql_equivalence")(COLLECTIONS_PROMPTS, Metric(), _case(0, response=" ").raw, empty)
    assert empty.expected_count == 0


@pytest.mark.slow
def test_bundled_sql_cases_through_the_real_probe(tmp_path):
    from typer.testing import CliRunner

    from ragas_compat.cli import app

    suite = {"schema_version": 1, "suite": "sql", "cases": [
        case.raw for case in load_default_suite().cases if case.id.startswith("sql-")]}
    assert len(suite["cases"]) >= 4
    cases = tmp_path / "sql.json"
    cases.write_text(json.dumps(suite))
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(out), "--metric", "sql_equivalence",
                                      "--workers", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    rows = {key: dict(zip(report["results"]["columns"], row, strict=True))
            for key, row in report["results"]["data"].items()}
    assert not [key for key, row in rows.items() if row["unexpected"]]
    assert rows["sql-equivalent-boolean|legacy:LLMSQLEquivalence"]["ragas_value"] == 1.0
    assert rows["sql-boundary-differs|collections:SQLSemanticEquivalence"]["ragas_value"] == 0.0
    assert rows["sql-no-schema|collections:SQLSemanticEquivalence"]["classification"] == "identical"
    assert rows["sql-empty-response|legacy:LLMSQLEquivalence"]["classification"] == "identical"
    assert rows["sql-empty-response|collections:SQLSemanticEquivalence"]["classification"] == "error"
