"""``import``'s judge audit over all claims: the judge_audit labels of every case pooled (TP/FN/FP/TN with
positive = the human's 1; agreement, sensitivity, false-positive rate, mean bias as exact fractions with
their counts, undefined when a denominator is 0), printed after ``import`` and in the reports of a run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ragas_compat.cases import parse_suite
from ragas_compat.cli.app import app
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import Expectations
from ragas_compat.metrics.judge_audit import judge_audit_summary
from ragas_compat.report.html_report import render_html
from ragas_compat.report.json_report import audit_to_json
from ragas_compat.report.markdown.document import render_markdown
from ragas_compat.tools.record.importer import import_labels

runner = CliRunner()

DATASET = [
    {"id": "s1", "user_input": "Q1?", "retrieved_contexts": ["a"], "response": "A1.", "reference": "R1."},
    {"id": "s2", "user_input": "Q2?", "retrieved_contexts": ["b"], "response": "A2. B2.", "reference": "R2."},
    {"id": "s3", "user_input": "Q3?", "retrieved_contexts": ["c"], "response": "A3.", "reference": "R3."},
]
# By hand (positive = human 1): s1 c1 TP, c2 FN, c3 FP, c4 TN; s2 c1 TP, faithfulness:f1 FP, faithfulness:f2 TP;
# f3 has no human label (a verdict, not audited); s3 has no labels.
# tp 3, fn 1, fp 2, tn 1, n 7: agreement 4/7, sensitivity 3/4, false-positive rate 2/3, mean bias (2 - 1)/7 = 1/7.
LABELS = """sample_id,claim_id,human_label,judge_label,metric,statement
s1,c1,1,1,,
s1,c2,1,0,,
s1,c3,0,1,judge_audit,
s1,c4,false,FALSE,,
s2,c1,true,1,,
s2,f1,0,1,faithfulness,A2.
s2,f2,1,1,faithfulness,B2.
s2,f3,,0,faithfulness,C2.
"""
EXPECTED_COUNTS = {"cases": 2, "refused_cases": [], "claims": 7, "tp": 3, "fn": 1, "fp": 2, "tn": 1}
EXPECTED_RATES = {"agreement": (4, 7), "sensitivity": (3, 4), "false_positive_rate": (2, 3), "mean_bias": (1, 7)}
# no human positive: s1 c1 FP, c2 TN, c3 FP -> sensitivity 0/0 undefined; agreement 1/3, FPR 2/3, mean bias 2/3
NO_POSITIVES = "sample_id,claim_id,human_label,judge_label\ns1,c1,0,1\ns1,c2,0,0\ns3,c3,0,1\n"


def _inputs(folder: Path, labels: str) -> tuple[Path, Path]:
    data = folder / "eval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in DATASET), encoding="utf-8")
    csv_path = folder / "labels.csv"
    csv_path.write_text(labels, encoding="utf-8")
    return data, csv_path


def _offline_audit(cases_file: Path):
    """The run's audit of the imported cases without Ragas: judge_audit is reference-only."""
    suite = parse_suite(json.loads(cases_file.read_text(encoding="utf-8")), source=cases_file.name)
    return build_audit(suite, {"results": []}, Expectations("none", ()), {})


def test_import_pools_every_audited_claim_exactly(tmp_path):
    data, labels = _inputs(tmp_path, LABELS)
    result = import_labels(data, labels, tmp_path / "cases.json")
    summary = result.judge_audit
    assert summary is not None
    assert (summary.cases, summary.refused, summary.count) == (2, (), 7)
    assert (summary.tp, summary.fn, summary.fp, summary.tn) == (3, 1, 2, 1)
    rates = {rate.key: rate for rate in summary.rates()}
    for key, (num, den) in EXPECTED_RATES.items():
        assert (rates[key].numerator, rates[key].denominator) == (num, den)
        assert rates[key].value == Fraction(num, den) and isinstance(rates[key].value, Fraction)
    assert result.audited == summary.count  # the same claims the import counts


def test_undefined_when_the_human_marked_no_positive(tmp_path):
    data, labels = _inputs(tmp_path, NO_POSITIVES)
    summary = import_labels(data, labels, tmp_path / "cases.json").judge_audit
    assert summary is not None and (summary.tp, summary.fn, summary.fp, summary.tn) == (0, 0, 2, 1)
    rates = {rate.key: rate for rate in summary.rates()}
    assert rates["sensitivity"].value is None and rates["sensitivity"].denominator == 0
    assert "undefined (the human marked no claim supported)" in rates["sensitivity"].text()
    assert rates["agreement"].value == Fraction(1, 3)
    assert rates["false_positive_rate"].value == Fraction(2, 3)
    assert rates["mean_bias"].value == Fraction(2, 3)
    empty = judge_audit_summary([])
    assert empty.count == 0 and all(rate.value is None for rate in empty.rates())
    section = audit_to_json(_offline_audit(tmp_path / "cases.json"))["judge_audit_summary"]
    assert section["sensitivity"] == {"formula": "tp / (tp + fn)", "numerator": 0, "denominator": 0, "exact": None,
                                      "value": None, "undefined": "the human marked no claim supported"}
    assert section["mean_bias"]["exact"] == "2/3"


def test_the_terminal_shows_the_summary(tmp_path):
    data, labels = _inputs(tmp_path, LABELS)
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(tmp_path / "cases.json")])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "judge audit over all claims: 7 claims in 2 case(s): tp 3, fn 1, fp 2, tn 1" in out
    assert "agreement = (tp + tn) / n = 4/7" in out
    assert "sensitivity = tp / (tp + fn) = 3/4" in out
    assert "false-positive rate = fp / (fp + tn) = 2/3" in out
    assert "mean bias = mean(judge − human) = (fp − fn) / n = 1/7" in out

    _inputs(tmp_path, NO_POSITIVES)
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(tmp_path / "no-pos.json")])
    assert result.exit_code == 0, result.output
    assert "sensitivity = tp / (tp + fn) = 0/0: undefined" in " ".join(result.output.split())
    only_judge = "sample_id,claim_id,human_label,judge_label,metric,statement\ns2,f1,,1,faithfulness,A2.\n"
    _inputs(tmp_path, only_judge)
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(tmp_path / "judge-only.json")])
    assert result.exit_code == 0, result.output
    assert "no claim has both a human and a judge label" in " ".join(result.output.split())


def _check_section(report: dict, whole: bool) -> None:
    """The section's counts and rates; valid against report.schema.json (the whole report, or the section
    alone when the report was built without a run's provenance)."""
    section = report["judge_audit_summary"]
    assert {k: section[k] for k in EXPECTED_COUNTS} == EXPECTED_COUNTS
    for key, (num, den) in EXPECTED_RATES.items():
        rate = section[key]
        assert (rate["numerator"], rate["denominator"]) == (num, den)
        assert Fraction(rate["exact"]) == Fraction(num, den) and rate["value"] == float(Fraction(num, den))
        assert rate["undefined"] is None
    schema = json.loads(resources.files("ragas_compat").joinpath("report/report.schema.json").read_text())
    if whole:
        jsonschema.validate(report, schema)
    else:
        jsonschema.validate(section, {"$defs": schema["$defs"], **schema["properties"]["judge_audit_summary"]})


def test_the_reports_carry_the_summary(tmp_path):
    data, labels = _inputs(tmp_path, LABELS)
    import_labels(data, labels, tmp_path / "cases.json")
    audit = _offline_audit(tmp_path / "cases.json")
    _check_section(audit_to_json(audit), whole=False)
    assert audit_to_json(audit) == audit_to_json(_offline_audit(tmp_path / "cases.json"))  # deterministic
    markdown = render_markdown(audit)
    assert "## Judge audit over all claims" in markdown
    assert "- agreement = (tp + tn) / n = 4/7" in markdown and "- mean bias = mean(judge − human)" in markdown
    page = render_html(audit)
    assert 'id="judge-audit"' in page and "false-positive rate = fp / (fp + tn) = 2/3" in page


def test_no_section_without_judge_audits(tmp_path):
    data, labels = _inputs(tmp_path, "sample_id,claim_id,human_label,judge_label,metric,statement\n"
                                     "s2,f1,,1,faithfulness,A2.\n")
    import_labels(data, labels, tmp_path / "cases.json")
    audit = _offline_audit(tmp_path / "cases.json")
    assert audit_to_json(audit)["judge_audit_summary"] is None
    assert "Judge audit over all claims" not in render_markdown(audit)
    assert 'id="judge-audit"' not in render_html(audit)


def test_a_refused_case_is_listed_not_counted_and_its_id_escaped(tmp_path):
    base = {"category": "edge", "user_input": "Q?", "retrieved_contexts": ["c"], "response": "A.", "reference": "R."}
    suite = {"schema_version": 1, "suite": "refused", "cases": [
        {"id": "ok", **base, "judge_audit": {"human": {"a": 1}, "judge": {"a": 0}}},
        {"id": "bad*<b>", **base, "judge_audit": {"human": {"a": 1}, "judge": {"b": 1}}}]}
    path = tmp_path / "refused.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    audit = _offline_audit(path)
    section = audit_to_json(audit)["judge_audit_summary"]
    assert section["refused_cases"] == ["bad*<b>"] and section["claims"] == 1 and section["fn"] == 1
    assert "bad\\*&lt;b&gt;" in render_markdown(audit)
    assert "bad*&lt;b&gt;" in render_html(audit)


@pytest.mark.slow
def test_run_on_the_imported_cases_writes_the_section(tmp_path):
    data, labels = _inputs(tmp_path, LABELS)
    import_labels(data, labels, tmp_path / "cases.json")
    proc = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--cases", str(tmp_path / "cases.json"),
                           "--out", str(tmp_path / "report"), "--fail-on", "none"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_section(json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8")), whole=True)
    assert "## Judge audit over all claims" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert 'id="judge-audit"' in (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
