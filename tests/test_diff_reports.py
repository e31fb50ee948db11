"""``ragas-compat diff A B`` (issue 38): two report.json files from the real renderer, one of them edited,
compared row by row: exactly the edited rows are listed, with both values and classifications; one ulp
is a change, NaN and undefined are different values; the provenance difference is shown; exit 1 on a
change, 0 on none, 2 on an unreadable or invalid file (named)."""

from __future__ import annotations

import copy
import json
import math

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.report.json_report import REPORT_FORMAT
from ragas_compat.tools.diff_reports import diff_files, same_value


def _diff(*args: str):
    return CliRunner().invoke(app, ["diff", *args])


def _columns(report: dict) -> dict[str, int]:
    return {name: i for i, name in enumerate(report["results"]["columns"])}


def _write(path, doc) -> str:
    path.write_text(json.dumps(doc, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def real_report(default_audit_run) -> str:
    """report.json as the renderer writes it for the default audit."""
    return default_audit_run.reports["report.json"]


def _value_row(report: dict, *, skip: set[str] = frozenset()) -> str:
    col = _columns(report)
    for key, row in report["results"]["data"].items():
        value = row[col["ragas_value"]]
        if key not in skip and isinstance(value, float) and value not in (0.0, 1.0) and math.isfinite(value):
            return key
    raise AssertionError("no row with a float value")


@pytest.mark.slow
def test_diff_lists_exactly_the_edited_rows(real_report, tmp_path):
    a = tmp_path / "a.json"
    a.write_text(real_report, encoding="utf-8")
    report = json.loads(real_report)
    col = _columns(report)
    data = report["results"]["data"]
    ulp_key = _value_row(report)
    before = data[ulp_key][col["ragas_value"]]
    after = math.nextafter(before, math.inf)
    data[ulp_key][col["ragas_value"]] = after
    class_key = next(k for k in data if k != ulp_key and data[k][col["classification"]] == "identical")
    data[class_key][col["classification"]] = "divergence"
    b = _write(tmp_path / "b.json", report)

    result = _diff(str(a), b, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    changes = {c["key"]: c for c in doc["changes"]}
    assert set(changes) == {ulp_key, class_key}
    assert doc["only_in_a"] == doc["only_in_b"] == []
    ulp = changes[ulp_key]
    assert ulp["changed"] == ["value"] and ulp["ulps"] == 1
    assert ulp["a"]["value_text"] == repr(before) and ulp["b"]["value_text"] == repr(after)
    assert ulp["a"]["classification"] == ulp["b"]["classification"]
    cls = changes[class_key]
    assert cls["changed"] == ["classification"]
    assert (cls["a"]["classification"], cls["b"]["classification"]) == ("identical", "divergence")
    assert doc["provenance"] == []

    md = _diff(str(a), b, "--format", "md")
    assert md.exit_code == 1
    assert repr(before) in md.stdout and repr(after) in md.stdout
    table_rows = [line for line in md.stdout.splitlines()
                  if line.startswith("| ") and not line.startswith(("| row ", "|---"))]
    assert len(table_rows) == 2
    assert f"| {before!r} | {after!r} | 1 |" in table_rows[0]
    assert table_rows[1].endswith("| 0 | identical | divergence |")

    same = _diff(str(a), str(a))
    assert same.exit_code == 0, same.output
    assert "no change: " in same.stdout


@pytest.mark.slow
def test_nan_undefined_error_and_rows_on_one_side(real_report, tmp_path):
    report = json.loads(real_report)
    col = _columns(report)
    data = report["results"]["data"]
    first = _value_row(report)
    second = _value_row(report, skip={first})
    edited = copy.deepcopy(report)
    edited["results"]["data"][first][col["ragas_value"]] = "NaN"
    a = _write(tmp_path / "a.json", edited)
    edited["results"]["data"][first][col["ragas_value"]] = None
    edited["results"]["data"][second][col["ragas_value"]] = {"error": {"type": "ValueError", "message": "x"}}
    dropped = next(k for k in data if k not in (first, second))
    row = edited["results"]["data"].pop(dropped)  # the key holds the case and the target (format 5)
    edited["results"]["data"]["new-case|" + dropped.rpartition("|")[2]] = row
    edited["provenance"]["python"]["version"] = "3.13.0"
    b = _write(tmp_path / "b.json", edited)

    diff = diff_files(a, b)
    assert {c.key for c in diff.changes} == {first, second}
    by_key = {c.key: c for c in diff.changes}
    assert (by_key[first].a.value, by_key[first].b.value) == ("NaN", None)
    assert by_key[second].ulps is None and by_key[second].value_changed
    assert [r.key for r in diff.only_in_a] == [dropped]
    assert [r.key for r in diff.only_in_b] == ["new-case|" + dropped.rpartition("|")[2]]
    [python] = [p for p in diff.provenance if p.field == "Python"]
    assert (python.a, python.b) == (report["provenance"]["python"]["version"], "3.13.0")
    result = _diff(a, b, "--format", "md")
    assert result.exit_code == 1
    assert "| Python | " in result.stdout and "undefined (null)" in result.stdout
    assert "error: ValueError: x" in result.stdout


def test_exact_values():
    assert same_value(0.5, 0.5) and same_value("NaN", "NaN") and same_value(None, None)
    assert not same_value(0.0, -0.0)
    assert not same_value(0.1, math.nextafter(0.1, 1.0))
    assert not same_value("NaN", None)
    assert not same_value(1.0, "1.0")
    assert same_value(1, 1.0)  # the same double, however the file spells it


def _minimal(rows: dict) -> dict:
    columns = ["case_id", "ragas_target", "ragas_value", "classification"]
    return {"report_format": REPORT_FORMAT, "provenance": {}, "results": {"columns": columns, "data": rows}}


@pytest.mark.parametrize("content, says", [
    ("{not json", "not JSON"),
    ('{"report_format": 4, "results": {"columns": ["case_id"], "data": {"c|t": NaN}}}', "bare NaN"),
    (json.dumps({"report_format": 3, "results": {}}), "report.json format 3"),
    (json.dumps([1, 2]), "not a report.json or matrix.json"),
    (json.dumps({"something": 1}), "not a report.json or matrix.json"),
    (json.dumps(_minimal({"c|t": ["c", "t", 0.5]})), "not a valid report.json"),
    (json.dumps({"report_format": 4}), "not a valid report.json"),
    (b"\xff\xfe\x00", "the report is not UTF-8 text"),
])
def test_invalid_input_is_exit_2_naming_the_file(tmp_path, content, says):
    good = _write(tmp_path / "good.json", _minimal({"c|t": ["c", "t", 0.5, "identical"]}))
    bad = tmp_path / "bad.json"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content, encoding="utf-8")
    for args in ([good, str(bad)], [str(bad), good]):
        result = _diff(*args)
        assert result.exit_code == 2, result.output
        assert str(bad) in " ".join(result.stderr.split()) and says in result.stderr


def test_missing_file_and_mixed_kinds_are_exit_2(tmp_path):
    good = _write(tmp_path / "good.json", _minimal({"c|t": ["c", "t", 0.5, "identical"]}))
    result = _diff(good, str(tmp_path / "absent.json"))
    assert result.exit_code == 2 and "absent.json: report not found" in result.stderr
    matrix = _write(tmp_path / "matrix.json", {"matrix_format": 2, "columns": [], "rows": []})
    result = _diff(good, matrix)
    assert result.exit_code == 2 and "two of a kind" in result.stderr


def test_matrix_cells_compared_per_column(tmp_path):
    def matrix(value, python):
        return {"matrix_format": 2, "suite": {"source": "s", "cases": 1},
                "columns": [{"label": "0.4.3", "ragas_version": "0.4.3", "kind": "release", "python": python,
                             "available": True}],
                "rows": [{"case_id": "c", "target": "legacy:X", "cells": {
                    "0.4.3": {"status": "value", "value": value, "classification": "epsilon"}}}]}

    a = _write(tmp_path / "a.json", matrix(0.9999999999666667, "3.11.7"))
    b = _write(tmp_path / "b.json", matrix(math.nextafter(0.9999999999666667, 0.0), "3.13.0"))
    result = _diff(a, b, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    [change] = doc["changes"]
    assert change["key"] == "c|legacy:X @ 0.4.3" and change["ulps"] == 1
    assert change["a"]["value_text"] == "0.9999999999666667"
    assert doc["provenance"] == [{"field": "column 0.4.3: python", "a": "3.11.7", "b": "3.13.0"}]
    assert _diff(a, a).exit_code == 0
