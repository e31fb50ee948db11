"""The harness's own error is drift of its own kind (``harness_error``) that nothing explains.

A row the harness could not score (its scripted judge had no frozen answer, its frozen embedding model
lacks a text) says nothing about Ragas: no rule and no case entry may explain it, ``--fail-on all``
(the default) fails on it, and the verdict line counts it ("N rows not scored (harness errors)").
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import parse_expectations_text
from ragas_compat.compare.findings import findings
from ragas_compat.compare.verdict import FAIL_ON_DEFAULT, exit_code, parse_fail_on, verdict
from ragas_compat.pipeline import pin_expectations

needs_ragas = pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                                 reason="Ragas is not installed in this interpreter")

CASE = {"id": "cp", "category": "single_source", "user_input": "q", "reference": "r", "response": "a",
        "retrieved_contexts": ["c1", "c2"], "verdicts": {"context_precision_with_reference": [1, 0]}}
HARNESS = {"error": {"type": "StubMismatch", "message": "no frozen answer for a prompt", "origin": "harness"}}
LOOKUP = {"error": {"type": "LookupError", "message": "no frozen embedding for the text 'x'", "origin": "harness"}}

# a rule and a case entry that would explain the row if it were Ragas's error
EXPLAINING = """
[[rule]]
id = "any-error"
classification = "error"
reason = "explains every error"

[[case]]
case = "cp"
targets = ["legacy:LLMContextPrecisionWithReference"]
classification = "error"
reason = "an entry naming the row"
"""


def _audit(value, expectations_text=EXPLAINING, include_pin=False):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [CASE]}, source="t.json")
    expectations = parse_expectations_text(expectations_text, "mine.toml")
    if include_pin:
        expectations = expectations.layered_over(pin_expectations())
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": "cp", "target": "legacy:LLMContextPrecisionWithReference", "value": value,
                          "received": {}}]}
    return build_audit(suite, probe, expectations, {"ragas_version": "0.4.3"})


@pytest.mark.parametrize("value", [HARNESS, LOOKUP])
def test_no_rule_or_case_entry_explains_the_harnesss_own_error(value):
    audit = _audit(value)
    (row,) = audit.rows
    assert not row.expected.explained
    found = findings(audit)
    assert [f.kind for f in found] == ["harness_error"]
    assert "not scored (harness error)" in found[0].message and value["error"]["type"] in found[0].message
    assert exit_code(audit) == 1 and exit_code(audit, parse_fail_on("all")) == 1
    assert "harness_error" in FAIL_ON_DEFAULT
    assert exit_code(audit, parse_fail_on("divergence,error")) == 0  # its own kind, chosen with --fail-on
    v = verdict(audit)
    assert not v.ok and v.harness_errors == 1 and v.errors == 0 and v.unexplained == 0
    assert "1 row not scored (harness errors)" in v.line() and v.status == "1 row not scored (harness errors)"


def test_ragas_raising_the_same_type_is_still_explained():
    audit = _audit({"error": {"type": "StubMismatch", "message": "m"}} | {})  # typed harness-only: still harness
    assert [f.kind for f in findings(audit)] == ["harness_error"]
    ragas = _audit({"error": {"type": "LookupError", "message": "Ragas's own"}})
    assert ragas.rows[0].expected.explained and findings(ragas) == [] and verdict(ragas).ok


BUDGET = {"error": {"type": "BudgetExceeded", "message": "Ragas did not finish (time): 0 judge calls"}}
NAMING_THE_BUDGET = """
[[rule]]
id = "budget-on-purpose"
classification = "error"
reason = "this run gives each case 0.01 s on purpose"
when = { error_type = ["BudgetExceeded"] }
"""


def test_a_rule_explains_a_budget_stop_only_when_it_names_it():
    """Ragas stopped by the harness's budget (code of Ragas running at the deadline: no harness origin) was not
    scored: a catch-all error rule turned a run whose rows all hit a 0.01 s budget green. Only a rule that names
    the stop (error_type BudgetExceeded) explains it."""
    rule_only = EXPLAINING.split("[[case]]")[0]
    caught = _audit(BUDGET, expectations_text=rule_only)
    assert not caught.rows[0].expected.explained
    assert [f.kind for f in findings(caught)] == ["error"] and not verdict(caught).ok and exit_code(caught) == 1
    named = _audit(BUDGET, expectations_text=NAMING_THE_BUDGET)
    assert named.rows[0].expected.label.startswith("rule budget-on-purpose") and verdict(named).ok
    ragas = _audit({"error": {"type": "ValueError", "message": "Ragas's own"}}, expectations_text=rule_only)
    assert ragas.rows[0].expected.explained and verdict(ragas).ok  # Ragas's own errors: as before


UNAVAILABLE = {"error": {"type": "TargetUnavailable", "message": "no class LLMContextPrecisionWithReference here"}}


@pytest.mark.parametrize("value", [BUDGET, UNAVAILABLE])
def test_no_case_entry_explains_a_row_that_was_not_scored(value):
    """A case entry records what a row scored; ``expect bless`` writes ``classification = "error"`` for a row
    where Ragas raised. Such an entry explained a later budget stop (or a class missing from the Ragas run):
    "expected", exit 0, with nothing scored. Neither it nor a catch-all error rule explains one now; a rule
    naming the type does."""
    entry = _audit(value)  # EXPLAINING: a catch-all error rule and a case entry naming the row
    assert not entry.rows[0].expected.explained
    assert [f.kind for f in findings(entry)] == ["error"] and not verdict(entry).ok and exit_code(entry) == 1
    naming = NAMING_THE_BUDGET.replace("BudgetExceeded", value["error"]["type"])
    assert _audit(value, expectations_text=EXPLAINING + naming).rows[0].expected.label.startswith(
        "rule budget-on-purpose")
    ragas = _audit({"error": {"type": "ValueError", "message": "Ragas's own"}}, expectations_text=EXPLAINING)
    assert ragas.rows[0].expected.label.startswith("case entry 0")  # an entry still explains Ragas's own error


@pytest.mark.parametrize("value", [BUDGET, UNAVAILABLE, HARNESS])
def test_bless_writes_no_entry_for_a_row_that_was_not_scored(value):
    """``expect bless`` froze a budget stop as an ``error`` entry and said nothing: it now leaves such a row out,
    lists it at the top of the file, and the file it writes still parses."""
    from ragas_compat.compare.bless import bless, unblessable

    audit = _audit(value, expectations_text="")
    text = bless(audit)
    assert [(c, t) for c, t, _ in unblessable(audit)] == [("cp", "legacy:LLMContextPrecisionWithReference")]
    assert "[[case]]" not in text and "#   (cp, legacy:LLMContextPrecisionWithReference) not scored" in text
    assert parse_expectations_text(text, "blessed.toml").cases == ()
    scored = _audit({"error": {"type": "ValueError", "message": "Ragas's own"}}, expectations_text="")
    assert unblessable(scored) == [] and "[[case]]" in bless(scored)


def test_the_pin_rules_explain_no_harness_error():
    audit = _audit(LOOKUP, expectations_text="", include_pin=True)
    assert [f.kind for f in findings(audit)] == ["harness_error"]


@pytest.mark.slow
@needs_ragas
def test_a_misspelled_embedding_key_exits_1_naming_the_harness_error(tmp_path: Path):
    case = {"id": "typo", "category": "single_source", "user_input": "What is the capital of France?",
            "reference": "Paris is the capital of France.", "response": "The capital of France is Paris.",
            "retrieved_contexts": [],
            # "Franse": the reference's text has no frozen embedding
            "embeddings": {"Paris is the capital of Franse.": [3, 4, 0], "The capital of France is Paris.": [4, 3, 0]}}
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"schema_version": 1, "suite": "typo", "cases": [case]}))
    run = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--cases", str(cases), "--out",
                          str(tmp_path / "out"), "--metric", "semantic_similarity", "--workers", "1",
                          "--format", "json"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    summary = json.loads(run.stdout)
    kinds = {f["kind"] for f in summary["drift"]}
    assert kinds == {"harness_error"}, summary["drift"]
    assert all("LookupError" in f["message"] and f["fails"] for f in summary["drift"])
    assert summary["verdict"]["harness_errors"] == len(summary["drift"]) >= 1
    assert "not scored (harness errors)" in summary["verdict"]["line"]
