"""``ragas-compat diff A B`` compares what explains each row and the reports' verdicts, not only values and
classifications: the same run judged with and without the pinned rules (green, then "4 unexplained") is a
change naming both verdicts and the expectations each was judged by; a row whose rule or entry changed is
listed with both sides; two identical reports still say no change (exit 0)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.report.json_report import REPORT_FORMAT

COLUMNS = ["case_id", "ragas_target", "ragas_value", "classification", "expected_classification", "explained_by",
           "unexpected", "drift"]
TARGETS = ("legacy:ContextPrecision", "collections:ContextPrecision")
RULE = "rule ap-epsilon (pinned/expectations.toml)"


def _diff(*args: str):
    return CliRunner().invoke(app, ["diff", *args])


def _row(target: str, *, explained_by: str | None = RULE) -> list:
    """A row whose epsilon is explained by ``explained_by``, or (None) unexplained as without the pinned rules."""
    if explained_by is None:
        return ["cp-worked-example", target, 0.8333333332916666, "epsilon", "identical", None, True, ["unexplained"]]
    return ["cp-worked-example", target, 0.8333333332916666, "epsilon", "epsilon", explained_by, False, []]


def _report(*, explained: bool = True, status: str | None = None, expectations: str = "pinned/expectations.toml",
            rule: str = RULE) -> dict:
    rows = {f"cp-worked-example|{t}": _row(t, explained_by=rule if explained else None) for t in TARGETS}
    n = len(rows)
    verdict = {"status": status or ("expected" if explained else f"{n} unexplained"), "rows": n, "identical": 0,
               "explained": n if explained else 0, "unexplained": 0 if explained else n, "errors": 0,
               "harness_errors": 0}
    return {"report_format": REPORT_FORMAT, "provenance": {"expectations": expectations}, "verdict": verdict,
            "results": {"columns": COLUMNS, "data": rows}}


def _write(path, doc) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_green_and_red_verdicts_of_the_same_values_are_a_change(tmp_path):
    a = _write(tmp_path / "a.json", _report())
    b = _write(tmp_path / "b.json", _report(explained=False, expectations="empty.toml"))

    result = _diff(a, b, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["changed"] is True
    assert doc["verdict"]["a"] == {"status": "expected", "expectations": "pinned/expectations.toml"}
    assert doc["verdict"]["b"] == {"status": "2 unexplained", "expectations": "empty.toml"}
    assert {c["field"]: (c["a"], c["b"]) for c in doc["verdict"]["changed"]} == {
        "verdict status": ("expected", "2 unexplained"), "verdict explained": (2, 0), "verdict unexplained": (0, 2)}
    assert doc["summary"].startswith("verdict changed: A expected (expectations pinned/expectations.toml), "
                                     "B 2 unexplained (expectations empty.toml); 2 rows changed")
    changes = {c["key"]: c for c in doc["changes"]}
    assert set(changes) == {f"cp-worked-example|{t}" for t in TARGETS}
    for change in changes.values():
        assert change["changed"] == ["explanation"]
        assert (change["a"]["explained_by"], change["b"]["explained_by"]) == (RULE, None)
        assert (change["a"]["unexpected"], change["b"]["unexpected"]) == (False, True)
        assert change["b"]["drift"] == ["unexplained"]

    text = _diff(a, b)
    assert text.exit_code == 1, text.output
    flat = " ".join(text.stdout.split())
    assert "no change" not in flat
    assert "verdict changed: A expected (expectations pinned/expectations.toml), B 2 unexplained" in flat

    md = _diff(a, b, "--format", "md")
    assert md.exit_code == 1
    lines = md.stdout.splitlines()
    assert "| verdict status | expected | 2 unexplained |" in lines
    explanation_rows = [line for line in lines if line.startswith("| cp-worked-example")]
    assert len(explanation_rows) == 2
    assert all(f"expected epsilon, explained by {RULE} | unexpected (expected identical), explained by nothing; "
               "drift: unexplained |" in line for line in explanation_rows)


def test_a_row_explained_by_another_rule_is_listed(tmp_path):
    a_doc = _report()
    b_doc = _report()
    key = f"cp-worked-example|{TARGETS[1]}"
    other = "rule collections-ap-epsilon (pinned/expectations.toml)"
    b_doc["results"]["data"][key][COLUMNS.index("explained_by")] = other
    a, b = _write(tmp_path / "a.json", a_doc), _write(tmp_path / "b.json", b_doc)

    result = _diff(a, b, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["verdict"]["changed"] == []
    assert [(c["key"], c["changed"], c["a"]["explained_by"], c["b"]["explained_by"]) for c in doc["changes"]] == [
        (key, ["explanation"], RULE, other)]
    assert "1 rows changed (0 values, 0 classifications, 1 explanations)" in doc["summary"]


def test_a_hand_edited_verdict_alone_is_a_change(tmp_path):
    a = _write(tmp_path / "a.json", _report())
    b = _write(tmp_path / "b.json", _report(status="1 unexplained"))

    result = _diff(a, b, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["changes"] == []
    assert doc["verdict"]["changed"] == [{"field": "verdict status", "a": "expected", "b": "1 unexplained"}]
    assert doc["summary"].startswith("verdict changed: A expected (expectations pinned/expectations.toml), "
                                     "B 1 unexplained (expectations pinned/expectations.toml); 0 rows changed")


def test_identical_reports_say_no_change(tmp_path):
    for name, doc in (("green", _report()), ("red", _report(explained=False, expectations="empty.toml"))):
        path = _write(tmp_path / f"{name}.json", doc)
        result = _diff(path, path)
        assert result.exit_code == 0, result.output
        assert " ".join(result.stdout.split()).endswith(
            "no change: 2 rows, every value bit-equal and every classification and explanation the same, "
            "and the same verdict")
        assert json.loads(_diff(path, path, "--format", "json").stdout)["verdict"]["changed"] == []
