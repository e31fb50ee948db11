"""``matrix --format`` and ``--fail-on`` on fake environments and fake probe outputs (no pip, no Ragas)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ragas_compat.cli.matrix as cli_matrix
from ragas_compat.cli.app import app
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.matrix.environments import Environment
from ragas_compat.tools.matrix.run import run_matrix

CASE = "cp-worked-example"
EPSILON = 0.8333333332916666


def result(target, metric, value):
    return {"case_id": CASE, "target": target, "api": "legacy", "metric": metric, "value": value,
            "ragas_class": f"ragas.metrics._x.{target.split(':')[1]}", "fields_read": [], "received": {},
            "prompts": 0, "expected_prompts": 0, "warnings": [], "exported": True,
            "fields_accepted": [], "fields_dropped": [], "required_columns": []}


STUB = {"error": {"type": "StubMismatch", "message": "no frozen reply for this prompt layout"}}
OUTPUTS = {
    "old": [result("legacy:LLMContextPrecisionWithReference", "context_precision_with_reference", EPSILON),
            result("legacy:Faithfulness", "faithfulness", STUB)],
    "new": [result("legacy:LLMContextPrecisionWithReference", "context_precision_with_reference", 0.5),
            result("legacy:Faithfulness", "faithfulness", 1.0)],
}


@pytest.fixture
def fake_matrix(monkeypatch):
    def environments(entries, **kwargs):
        return [Environment(e.text, "release", e.exact_version, python, status="reused", installer=installer)
                for e, python, installer in zip(entries, ("old", "new"), ("pip", "uv"), strict=True)]

    def probe(cases, *, python, sys_path_prefix, timeout):
        output = {"probe_format": 1, "ragas": {"version": python, "import_error": None, "import_warnings": []},
                  "network_attempts": [], "results": OUTPUTS[python]}
        return ProbeRun(True, None, output, "", 0.1)

    monkeypatch.setattr(cli_matrix, "ensure_environments", environments)
    monkeypatch.setattr(cli_matrix, "run_matrix", lambda envs, suite, **kw: run_matrix(envs, suite, probe=probe))


def invoke(tmp_path, *extra):
    return CliRunner().invoke(app, ["matrix", "--versions", "0.2.3,0.2.15", "--out", str(tmp_path / "m"),
                                    "--cache-dir", str(tmp_path / "envs"), *extra])


def test_json_summary_names_ragas_findings_and_keeps_harness_limits_out(tmp_path, fake_matrix):
    found = invoke(tmp_path, "--format", "json")
    assert found.exit_code == 1, found.output
    doc = json.loads(found.stdout)
    assert [c["label"] for c in doc["columns"]] == ["0.2.3", "0.2.15"] and doc["columns"][0]["available"]
    assert [c["installer"] for c in doc["columns"]] == ["pip", "uv"]  # what built each environment
    kinds = {(f["kind"], f["target"]) for f in doc["findings"]}
    assert kinds == {("unexplained", "legacy:LLMContextPrecisionWithReference"),
                     ("divergence", "legacy:LLMContextPrecisionWithReference")}
    assert all(f["fails"] for f in doc["findings"])
    by = {d["kind"]: d["by"] for d in doc["drifts"]}
    assert by["stub_mismatch"] == "harness" and by["value_changed"] == "ragas"
    assert (tmp_path / "m" / "matrix.json").exists()


def test_fail_on_selects_the_kinds_that_fail(tmp_path, fake_matrix):
    assert invoke(tmp_path, "--fail-on", "none").exit_code == 0
    assert invoke(tmp_path, "--fail-on", "error,out_of_range").exit_code == 0
    assert invoke(tmp_path, "--fail-on", "divergence").exit_code == 1
    bad = invoke(tmp_path, "--fail-on", "sometimes")
    assert bad.exit_code == 2 and "--fail-on" in bad.output


def test_markdown_summary_separates_the_harness_limits(tmp_path, fake_matrix):
    md = invoke(tmp_path, "--format", "md", "--fail-on", "none")
    assert md.exit_code == 0, md.output
    ragas, harness = md.stdout.split("### Ragas drifts")[1].split("### Not compared (the harness's limits)")
    assert "value_changed" in ragas and "StubMismatch" not in ragas and "stub_mismatch" not in ragas
    assert "stub_mismatch" in harness
    assert "Findings: 2 (0 of a --fail-on kind)." in md.stdout


def test_the_markdown_summary_says_what_built_each_environment(tmp_path, fake_matrix):
    found = invoke(tmp_path, "--format", "md", "--fail-on", "none")
    assert found.exit_code == 0, found.output
    assert "| reused (pip) |" in found.stdout and "| reused (uv) |" in found.stdout
