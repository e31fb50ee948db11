"""The default audit end to end: committed reports are current, valid, deterministic, portable."""

import json
import sys
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from ragas_compat.pin import resolve_ragas_source
from ragas_compat.pipeline import COMMITTED_REPORTS, load_run_expectations, load_suite, render_reports, run_audit
from ragas_compat.report.json_report import expanded_row, expanded_rows, result_rows
from ragas_compat.resources import CHECKOUT_ROOT as REPO_ROOT


@pytest.fixture(scope="module")
def default_run(default_audit_run):
    return default_audit_run.audit, default_audit_run.reports  # tests/conftest.py: run once per session


def rows_of(report: dict, case_id: str, target: str) -> dict:
    [row] = [r for r in result_rows(report) if r["case_id"] == case_id and r["ragas_target"] == target]
    return row


def _this_machine(text: str, committed: str) -> str:
    """``committed`` with its provenance ``platform`` line (the OS and kernel that made the goldens) read as
    this machine's, the one line a rerun on another machine legitimately changes."""
    import platform

    return "\n".join(f'  "platform": {json.dumps(platform.platform())},' if line.startswith('  "platform": ') else line
                     for line in committed.split("\n")) if '"platform"' in text else committed


def test_committed_report_json_is_what_the_code_produces(default_run):
    _, files = default_run
    golden = json.loads((COMMITTED_REPORTS / "report.json").read_text(encoding="utf-8"))["provenance"]["python"]["version"]
    if golden.split(".")[:2] != [str(v) for v in sys.version_info[:2]]:
        pytest.skip(f"the committed reports are Python {golden}'s (the reference's floats differ between Pythons: "
                    f"3.12 made sum() exact); this is {sys.version.split()[0]}")
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        committed = _this_machine(files[name], (COMMITTED_REPORTS / name).read_text(encoding="utf-8"))
        assert committed == files[name], (
            f"reports/{name} is stale: regenerate the committed reports with "
            "`ragas-compat run --out reports --golden` (from the repository root) and commit them")


@pytest.mark.slow
def test_results_classified_as_they_are_read_give_the_same_reports(default_run):
    """``run`` reads the probe's results one at a time (``keep_output=False``): same audit, same reports."""
    _, files = default_run
    result = run_audit(load_suite([]), load_run_expectations(None), resolve_ragas_source(python=sys.executable),
                       python=sys.executable, keep_output=False)
    assert result.probe.output["results"] == []
    assert render_reports(result.audit) == files


def test_rendering_is_deterministic(default_run):
    audit, files = default_run
    assert render_reports(audit) == files


def test_no_machine_paths_in_any_report(default_run):
    _, files = default_run
    for name, text in files.items():
        for needle in (str(REPO_ROOT), str(Path.home()), sys.prefix, "/tmp/"):
            assert needle not in text, f"{name} contains {needle}"


def test_report_json_matches_its_schema(default_run):
    _, files = default_run
    schema = json.loads(resources.files("ragas_compat").joinpath("report/report.schema.json").read_text())
    jsonschema.validate(json.loads(files["report.json"]), schema)


def test_what_rows_refer_to_is_stored_once_and_joins_back(default_run):
    audit, files = default_run
    report = json.loads(files["report.json"])
    labels = {entry["label"] for entry in report["expectations"]}
    for row, full in zip(result_rows(report), expanded_rows(report), strict=True):
        assert row["explanation"] in report["texts"] and all(key in report["texts"] for key in row["warnings"])
        assert row["explained_by"] is None or row["explained_by"] in labels
        assert full["fields_read"] and full["reference_denominator"]
    by_key = {(r.case.id, r.target): r for r in audit.rows}
    for full in expanded_rows(report):
        row = by_key[(full["case_id"], full["ragas_target"])]
        assert full["explanation"] == row.classification.explanation
        assert full["ragas_class"] == row.ragas_class or row.ragas_class is None
        assert set(full["received"]) == set(row.received or {})
    assert len(report["texts"]) < len(report["results"]["data"])  # texts repeat: each is stored once


def test_done_criteria_rows(default_run):
    audit, files = default_run
    report = json.loads(files["report.json"])
    worked = rows_of(report, "cp-worked-example", "legacy:LLMContextPrecisionWithReference")
    assert worked["ragas_value"] == 0.8333333332916666
    assert worked["ragas_repr"] == "0.8333333332916666"
    assert expanded_row(report, worked)["reference_exact"] == "5/6" and worked["classification"] == "epsilon"
    assert rows_of(report, "edge-empty-retrieval", "legacy:LLMContextPrecisionWithReference")[
        "classification"] == "empty_as_zero"
    zero_claims = rows_of(report, "edge-zero-response-claims", "legacy:Faithfulness")
    assert zero_claims["ragas_value"] == "NaN" and expanded_row(report, zero_claims)["reference_value"] is None
    assert zero_claims["classification"] == "undefined_nan"
    assert rows_of(report, "edge-duplicate-ids", "legacy:IDBasedContextPrecision")["classification"] == "dedup"
    assert report["summary"]["unexpected"] == 0 and not audit.drift and report["drift"] == []
    for row in expanded_rows(report):  # every known deviation is explained by a rule (or the suite's own entry)
        if row["classification"] != "identical":
            assert row["explained_by"] and row["expected_reason"], (row["case_id"], row["ragas_target"])
    rule_rows = [r for r in result_rows(report) if (r["explained_by"] or "").startswith("rule ")]
    assert rule_rows and {e["by"] for e in report["expectations"]} >= {"rule ap-epsilon", "rule id-dedup"}
    assert worked["explained_by"] == "rule ap-epsilon (pinned/expectations.toml)"
    assert expanded_row(report, worked)["upstream"] == "https://github.com/vibrantlabsai/ragas/issues/2909"
    assert report["provenance"]["pin"]["commit"] == "298b68274234c060deacab3cf5fb52aa3a20e885"
    assert report["provenance"]["python"]["version"].count(".") == 2


def test_markdown_names_provenance_and_causes(default_run):
    _, files = default_run
    md = files["report.md"]
    for needle in ("## Provenance", "298b68274234c060deacab3cf5fb52aa3a20e885", "not the pinned commit",
                   "### `epsilon`", "0.8333333332916666", "5/6", "### context_precision_with_reference",
                   "Denominator:", "Missing-value policy:", "`user_input`"):
        assert needle in md


def test_junit_has_one_case_per_row_and_no_failure(default_run):
    audit, files = default_run
    suite = ET.fromstring(files["junit.xml"].split("\n", 1)[1])
    assert int(suite.get("tests")) == len(audit.rows) == len(suite.findall("testcase"))
    assert suite.get("failures") == "0" and not suite.findall(".//failure")
