"""junit.xml tells the verdict's story: every finding the verdict counts fails a test case (a row's, a pair's, an
expectations problem's, or one of its own: a recorded score the replay does not reproduce, a dataset-level
finding), and the suite's ``failures`` is the verdict's count, so ``failures="0"`` exactly when it is green.
Once, a replay mismatch or a dataset-level finding made the run exit 1 while junit.xml said ``failures="0"``."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.findings import Finding
from ragas_compat.compare.verdict import verdict
from ragas_compat.pipeline import COMMITTED_REPORTS
from ragas_compat.report.junit_report import render_junit, xml_text

runner = CliRunner()


def _failures(junit: str) -> tuple[ET.Element, list[tuple[str | None, str | None, str]]]:
    """The parsed suite and its failures as (classname, name, message), in order."""
    suite = ET.fromstring(junit)
    return suite, [(case.get("classname"), case.get("name"), failure.get("message") or "")
                   for case in suite.findall("testcase") for failure in case.findall("failure")]


def _verdict_count(audit) -> int:
    v = verdict(audit)
    return v.unexplained + v.errors + v.harness_errors


@pytest.mark.slow
def test_a_replay_mismatch_fails_a_junit_case_of_its_own(tmp_path: Path):
    """A recorded live score Ragas does not reproduce: exit 1, and junit.xml has a failing ``replay.<target>``
    case naming it (it once said failures="0")."""
    suite = json.loads(resources.files("ragas_compat").joinpath("cases/suites/default.json").read_text())
    [case] = [c for c in suite["cases"] if c["id"] == "cp-worked-example"]
    recorded = {**{k: v for k, v in suite.items() if k != "cases"}, "recording": {"format": 1},
                "cases": [{**case, "recording": {"live": {"legacy:ContextPrecision": 0.5}}}]}
    (tmp_path / "rec.json").write_text(json.dumps(recorded))
    out = tmp_path / "rec"
    result = runner.invoke(app, ["run", "--cases", str(tmp_path / "rec.json"), "--metric",
                                 "context_precision_with_reference", "--out", str(out)])
    assert result.exit_code == 1, result.output
    drift = json.loads((out / "report.json").read_text())["drift"]
    assert [row["kind"] for row in drift] == ["replay_mismatch"]
    suite_xml, failures = _failures((out / "junit.xml").read_text())
    assert suite_xml.get("failures") == str(len(failures)) == str(len(drift)) == "1"
    [(classname, name, message)] = failures
    assert (classname, name) == ("replay.legacy:ContextPrecision", "cp-worked-example")
    assert "replay_mismatch" in message and "the live recording 0.5" in message


def _with_failed_evaluate_run(output: dict, by: str) -> dict:
    """The probe output with its first evaluate() run replaced by one that failed (raised ``by`` whom)."""
    runs = list(output["evaluate"]["runs"])
    runs[0] = {**runs[0], "rows": [], "errors": [], "scores": {},
               "run_error": {"type": "ValueError", "message": "aspect_critic prompt <&> is already expected", "by": by}}
    return {**output, "evaluate": {**output["evaluate"], "runs": runs}}


def _with_moved_mean(output: dict) -> dict:
    """The probe output with its first evaluate() run's first target's mean moved by 0.125 (a disagreement)."""
    runs = list(output["evaluate"]["runs"])
    target = runs[0]["targets"][0]
    runs[0] = {**runs[0], "scores": {**runs[0]["scores"], target: runs[0]["scores"][target] + 0.125}}
    return {**output, "evaluate": {**output["evaluate"], "runs": runs}}


@pytest.mark.parametrize("change", ["harness", "ragas", "disagreement"])
def test_dataset_level_findings_fail_junit_cases_of_their_own(default_audit_run, change):
    """An evaluate() run the harness failed to prepare or Ragas raised in, or one that disagrees with the per-row
    scoring: each dataset-level finding is a failing ``dataset level`` case, its text the failure message."""
    audit = default_audit_run.audit
    output = default_audit_run.probe.output
    output = _with_moved_mean(output) if change == "disagreement" else _with_failed_evaluate_run(output, change)
    changed = build_audit(audit.suite, output, audit.expectations, audit.provenance)
    level = [f for f in changed.findings if f.message.startswith("dataset level:")]
    assert level and not verdict(changed).ok
    suite, failures = _failures(render_junit(changed))
    assert suite.get("failures") == str(len(failures)) == str(len(changed.findings)) == str(_verdict_count(changed))
    assert [message for classname, _, message in failures if classname == "dataset level"] == [
        xml_text(f.line()) for f in level]
    assert len({(classname, name) for classname, name, _ in failures}) == len(failures)  # stable, distinct names
    assert render_junit(changed) == render_junit(changed)


def test_a_row_with_two_findings_is_one_failure_naming_both(default_audit_run):
    """A row's one failure names each of its findings; the suite's failures count failing test cases (as JUnit
    readers do), the verdict each finding: both are nonzero together."""
    audit = default_audit_run.audit
    two = (Finding("divergence", "c", "t", "divergence", "identical", "moved"),
           Finding("out_of_range", "c", "t", "divergence", "identical", "Ragas returned 2.0"))
    row_findings = (two, *audit.row_findings[1:])
    swapped = dataclasses.replace(audit, row_findings=row_findings, findings=(*two, *audit.findings))
    suite, failures = _failures(render_junit(swapped))
    assert suite.get("failures") == "1" == str(len(failures)) and _verdict_count(swapped) == 2
    [(_, _, message)] = failures
    assert "divergence" in message and "out_of_range" in message


def test_the_default_audit_junit_is_unchanged(default_audit_run):
    """The default audit is green: no failure, and its junit.xml is the committed one byte for byte."""
    junit = render_junit(default_audit_run.audit)
    assert 'failures="0"' in junit and "<failure" not in junit
    assert junit.encode() == (COMMITTED_REPORTS / "junit.xml").read_bytes()
