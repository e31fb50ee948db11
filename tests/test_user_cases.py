"""Your cases, not ours: a case file no one here wrote for the bundled suite, run with no
expectations of its own, is judged by the pin's rules (known Ragas semantics, whatever the case id).

It exits 0 when every row is identical or explained, and 1 naming the row when one is not; string
verdicts and boolean IDs reach the report with both sides shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from user_cases import JUDGE_SAID_TWO, write_suite

from ragas_compat.cli.app import app
from ragas_compat.report.json_report import expanded_rows

pytestmark = pytest.mark.slow  # each test runs whole audits through the CLI

runner = CliRunner()


def committed_reports() -> dict[str, bytes]:
    from ragas_compat.pipeline import COMMITTED_REPORTS

    return {p.name: p.read_bytes() for p in COMMITTED_REPORTS.iterdir() if p.is_file()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The CLI's audits of the user's suite. The clean one runs without --out from a folder of its own
    (``tmp/clean``): its reports go to ``tmp/clean/ragas-compat-report``; ``committed`` is the repository's
    reports before it ran."""
    tmp = tmp_path_factory.mktemp("user-cases")
    clean = write_suite(tmp / "acme.json")
    with_two = write_suite(tmp / "acme-two.json", [JUDGE_SAID_TWO])
    committed = committed_reports()
    (tmp / "clean").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp / "clean")
        clean_run = runner.invoke(app, ["run", "--cases", str(clean)])
    with pytest.MonkeyPatch.context() as patch:
        made = _one_audit_per_case_file(patch)
        results = {
            "two": runner.invoke(app, ["run", "--cases", str(with_two), "--out", str(tmp / "two")]),
            "two-none": runner.invoke(app, ["run", "--cases", str(with_two), "--out", str(tmp / "two-none"),
                                            "--fail-on", "none"]),
            "two-divergence": runner.invoke(app, ["run", "--cases", str(with_two), "--out", str(tmp / "two-div"),
                                                  "--fail-on", "divergence,error,unexplained"]),
        }
    assert made == ["acme-support"], made  # the three --fail-on runs of one case file: one probe run
    return tmp, {"committed": committed, "clean": clean_run, **results}


def _one_audit_per_case_file(patch: pytest.MonkeyPatch) -> list[str]:
    """``run``'s audit made once per input (suite, expectations, Ragas, metrics) and reused by the command
    lines that differ only in ``--fail-on`` (what they exit with and print is the subject, not the probe).
    Returns the suite names of the audits made."""
    from ragas_compat.cli import run as cli_run

    original, made, audits = cli_run.run_audit, [], []

    def run_audit(suite, expectations, source, **kwargs):
        key = (suite, expectations, source, kwargs.get("metrics"), kwargs.get("python"))
        for seen, result in audits:
            if seen == key:
                return result
        made.append(suite.name)
        audits.append((key, original(suite, expectations, source, **kwargs)))
        return audits[-1][1]

    patch.setattr(cli_run, "run_audit", run_audit)
    return made


def test_realistic_cases_are_explained_by_the_pins_rules(runs):
    tmp, results = runs
    assert results["clean"].exit_code == 0, results["clean"].output
    report = json.loads((tmp / "clean" / "ragas-compat-report" / "report.json").read_text())
    assert report["summary"]["drift"] is False and report["drift"] == []
    rows = expanded_rows(report)
    not_identical = [r for r in rows if r["classification"] != "identical"]
    assert not_identical and all(r["explained_by"] and r["explained_by"].startswith("rule ") for r in not_identical)
    assert all(r["expected_reason"] for r in not_identical)
    by_rule = {r["explained_by"].split(" (")[0] for r in not_identical}
    # the semantics this suite touches, each explained by the rule that names its cause
    assert {"rule ap-epsilon", "rule ap-empty-as-zero", "rule collections-empty-input-error", "rule id-dedup",
            "rule string-similarity-not-identity", "rule claims-zero-nan"} <= by_rule
    assert {e["by"] for e in report["expectations"]} >= by_rule


def test_a_row_no_rule_accepts_exits_1_naming_the_row(runs):
    tmp, results = runs
    result = results["two"]
    assert result.exit_code == 1, result.output
    assert "judge-said-two" in result.output and "collections:ContextRecall" in result.output
    assert "out_of_range" in result.output
    report = json.loads((tmp / "two" / "report.json").read_text())
    assert [(f["kind"], f["case_id"], f["target"]) for f in report["drift"]] == [
        ("out_of_range", "judge-said-two", "collections:ContextRecall")]
    junit = (tmp / "two" / "junit.xml").read_text()
    assert junit.count("<failure ") == 1 and "out_of_range" in junit
    md = (tmp / "two" / "report.md").read_text()
    assert "## Drift" in md and "| out_of_range | judge-said-two | collections:ContextRecall |" in md


def test_fail_on_chooses_what_fails(runs):
    _, results = runs
    assert results["two-none"].exit_code == 0, results["two-none"].output
    assert results["two-divergence"].exit_code == 0, results["two-divergence"].output
    assert "finding" in results["two-none"].output  # still listed, just not failing


def test_a_bad_fail_on_value_is_bad_usage(tmp_path: Path):
    result = runner.invoke(app, ["run", "--fail-on", "divergences", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "--fail-on: unknown value 'divergences'" in result.output
    assert not (tmp_path / "r").exists()


def test_string_verdicts_and_boolean_ids_show_both_sides_in_the_report(tmp_path: Path):
    case = {"id": "as-given", "category": "edge", "user_input": "Which page covers keys?", "reference": "kb-12.",
            "response": "kb-12.", "retrieved_contexts": ["Keys: see kb-12.", "Billing: see kb-77."],
            "retrieved_context_ids": [True, "kb-12"], "reference_context_ids": ["kb-12"],
            "verdicts": {"context_precision_with_reference": ["1", "0"]}}
    path = tmp_path / "given.json"
    path.write_text(json.dumps({"schema_version": 1, "suite": "given", "cases": [case]}))
    result = runner.invoke(app, ["run", "--cases", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output  # every row is explained by the pin's rules
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    rows = {r["ragas_target"]: r for r in expanded_rows(report)}
    # Ragas parsed "1"/"0" into ints and scored them; SingleTurnSample turned True into 1: coercion, not identical
    assert {r["classification"] for r in rows.values()} == {"coercion"}, rows
    labels = rows["legacy:LLMContextPrecisionWithReference"]
    assert labels["reference_value"]["error"]["type"] == "refused"
    assert "non-binary label '1'" in labels["reference_value"]["error"]["message"]
    assert isinstance(labels["ragas_value"], float)  # Ragas parsed "1"/"0" and scored them
    ids = rows["legacy:IDBasedContextPrecision"]
    assert "got True" in ids["reference_value"]["error"]["message"]
    assert isinstance(ids["ragas_value"], float) and ids["received"]["retrieved_context_ids"][0] != "True"
    md = (tmp_path / "r" / "report.md").read_text()
    assert "non-binary label '1'" in md and "got True" in md


def test_unknown_keys_in_a_case_file_exit_2_naming_the_closest_key(tmp_path: Path):
    path = write_suite(tmp_path / "typo.json")
    data = json.loads(path.read_text())
    data["cases"][0]["corpus_relevent_count"] = data["cases"][0].pop("corpus_relevant_count")
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["run", "--cases", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "unknown key 'corpus_relevent_count'; did you mean 'corpus_relevant_count'?" in result.output


def test_out_defaults_to_a_folder_in_the_working_directory(runs):
    tmp, results = runs
    assert results["clean"].exit_code == 0, results["clean"].output
    assert sorted(p.name for p in (tmp / "clean").iterdir()) == ["ragas-compat-report"]
    assert sorted(p.name for p in (tmp / "clean" / "ragas-compat-report").iterdir() if not p.name.startswith(".")) == [
        "junit.xml", "report.html", "report.json", "report.md"]
    assert committed_reports() == results["committed"]
