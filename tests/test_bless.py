"""Bless: the current classifications of a suite as an expectations file, round-tripped.

Unit tests on hand-written probe outputs, and the round trip end to end through the CLI with the
installed Ragas: bless, rerun -> 0; edit one verdict -> 1 naming exactly the rows that moved.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner
from user_cases import write_suite

from ragas_compat.cases import parse_suite
from ragas_compat.cli.app import app
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.bless import bless
from ragas_compat.compare.expectations import parse_expectations_text
from ragas_compat.compare.findings import findings
from ragas_compat.pipeline import pin_expectations
from ragas_compat.report.json_report import result_rows
from ragas_compat.toml_text import toml_string

runner = CliRunner()

CASES = [
    {"id": "worked", "category": "single_source", "user_input": "q", "reference": "r", "response": "s",
     "retrieved_contexts": ["a", "b", "c"], "verdicts": {"context_precision_with_reference": [1, 0, 1],
                                                         "faithfulness": [{"statement": "s", "verdict": 1}]}},
    {"id": "two", "category": "edge", "user_input": "q", "reference": "r", "response": "s",
     "retrieved_contexts": ["a", "b"], "verdicts": {"context_precision_with_reference": [1, 2]}},
]
ODD_ERROR = {"error": {"type": "KeyError", "message": 'odd "quotes" \\ back\nslash\ttab \x7f del \x01 ctl é'}}
RESULTS = [
    ("worked", "legacy:LLMContextPrecisionWithReference", 0.8333333332916666),   # epsilon (rule)
    ("worked", "collections:ContextPrecisionWithReference", 0.8333333332916666),  # epsilon (rule)
    ("worked", "legacy:Faithfulness", 1.0),                                       # identical
    ("worked", "collections:Faithfulness", ODD_ERROR),                            # error no rule explains
    ("two", "collections:ContextPrecision", 1.4999999999250001),                  # explained, out of range
]


def audit_of(results, expectations):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": CASES}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": c, "target": t, "value": v, "received": {}} for c, t, v in results]}
    return build_audit(suite, probe, expectations, {"ragas_version": "0.4.3"})


def test_toml_strings_round_trip():
    for text in ['plain', 'q "x" \\ y', "new\nline\ttab\r", "\x00\x1f\x7f", "é ünï ☃"]:
        assert tomllib.loads(f"v = {toml_string(text)}")["v"] == text


def test_bless_names_every_row_and_pair_and_reruns_clean():
    before = audit_of(RESULTS, pin_expectations())
    assert {f.kind for f in findings(before)} == {"error", "out_of_range"}
    text = bless(before)
    blessed = parse_expectations_text(text, "blessed.toml")
    assert blessed.include_pin_rules and not blessed.rules
    named = {(c, t) for entry in blessed.cases for c in entry.cases for t in entry.targets}
    assert named == {(c, t) for c, t, _ in RESULTS}
    assert any(e.classification == "identical" and e.reason == "bit-equal to the reference value" for e in blessed.cases)
    assert any(e.reason.startswith("_calculate_average_precision divides") and e.upstream for e in blessed.cases)
    assert any(e.reason.startswith("as observed when blessed: Ragas raised KeyError") for e in blessed.cases)
    assert [e.allow_out_of_range for e in blessed.cases if e.cases == ("two",)] == [True]
    assert blessed.path_cases  # the legacy-vs-collections pairs too
    for expectations in (blessed.layered_over(pin_expectations()), blessed):
        after = audit_of(RESULTS, expectations)
        assert findings(after) == [] and after.expectation_problems == ()


def test_a_moved_row_is_exactly_what_drifts():
    blessed = parse_expectations_text(bless(audit_of(RESULTS, pin_expectations())), "blessed.toml")
    moved = [r if r[1] != "legacy:Faithfulness" else (r[0], r[1], 0.0) for r in RESULTS]
    found = findings(audit_of(moved, blessed.layered_over(pin_expectations())))
    # the pair (legacy vs a collections error) is still an error pair: it did not move
    assert [(f.kind, f.case_id, f.target, f.classification, f.expected) for f in found] == [
        ("divergence", "worked", "legacy:Faithfulness", "divergence", "identical")]
    assert "case entry" in found[0].message


@pytest.mark.slow
def test_bless_round_trip_end_to_end(tmp_path: Path):
    cases = write_suite(tmp_path / "acme.json")
    expectations = tmp_path / "expectations.toml"
    blessed = runner.invoke(app, ["expect", "bless", "--cases", str(cases), "--out", str(expectations)])
    assert blessed.exit_code == 0, blessed.output
    assert "blessed" in blessed.output and expectations.exists()
    rerun = runner.invoke(app, ["run", "--cases", str(cases), "--expectations", str(expectations),
                                "--out", str(tmp_path / "rerun")])
    assert rerun.exit_code == 0, rerun.output
    report = json.loads((tmp_path / "rerun" / "report.json").read_text())
    assert report["provenance"]["expectations"] == "expectations.toml + pinned/expectations.toml"
    assert all(r["explained_by"] and "expectations.toml" in r["explained_by"] for r in result_rows(report))

    # edit one verdict: the conflict case's judge now finds the new page useless for the reference
    data = json.loads(cases.read_text())
    [conflict] = [c for c in data["cases"] if c["id"] == "timeout-old-and-new-page"]
    conflict["verdicts"]["context_precision_with_reference"] = [0, 0]
    cases.write_text(json.dumps(data))
    edited = runner.invoke(app, ["run", "--cases", str(cases), "--expectations", str(expectations),
                                 "--out", str(tmp_path / "edited")])
    assert edited.exit_code == 1, edited.output
    report = json.loads((tmp_path / "edited" / "report.json").read_text())
    moved = {(f["case_id"], f["target"]) for f in report["drift"]}
    assert moved == {("timeout-old-and-new-page", t) for t in (
        "legacy:LLMContextPrecisionWithReference", "legacy:ContextPrecision",
        "collections:ContextPrecisionWithReference", "collections:ContextPrecision")}
    assert {(f["classification"], f["expected"]) for f in report["drift"]} == {("empty_as_zero", "epsilon")}
    for case_id, target in moved:
        assert case_id in edited.output and target in edited.output


@pytest.mark.parametrize("kind", ["folder", "fifo", "under_a_file"])
def test_bless_out_goes_through_the_write_preflight_before_any_work(tmp_path: Path, monkeypatch, kind):
    """``--out`` a folder, a FIFO, or a path under a regular file: exit 2 naming --out, before the suite is
    read, a Ragas source resolved or a probe started."""
    import os

    from ragas_compat.cli import expect as expect_cli

    def no_work(*args, **kwargs):
        raise AssertionError("bless did work before refusing --out")

    for name in ("load_suite", "resolve_ragas_source", "bless_suite"):
        monkeypatch.setattr(expect_cli, name, no_work)
    if kind == "folder":
        out = tmp_path / "expectations.toml"
        out.mkdir()
    elif kind == "fifo":
        out = tmp_path / "fifo.toml"
        os.mkfifo(out)
    else:
        (tmp_path / "plain").write_text("x", encoding="utf-8")
        out = tmp_path / "plain" / "expectations.toml"
    result = runner.invoke(app, ["expect", "bless", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "--out" in result.output
