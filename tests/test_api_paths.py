"""Legacy vs collections pairs: pairing, classification with the legacy value as the reference,
path expectations, and the differences in the committed report."""

from __future__ import annotations

import json
import math

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.compare.api_paths import legacy_as_reference, path_differences, path_pairs, unpaired_metrics
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import parse_expectations
from ragas_compat.compare.findings import findings
from ragas_compat.pipeline import COMMITTED_REPORTS
from ragas_compat.report.json_report import api_paths_json, pair_rows, table_rows
from ragas_compat.report.markdown.api_paths import api_paths_markdown
from ragas_compat.values import encode_ragas_value

SUITE = load_default_suite()
CP = "context_precision_with_reference"


def result(case_id: str, target: str, metric: str, value) -> dict:
    return {"case_id": case_id, "target": target, "metric": metric, "value": value,
            "api": target.split(":")[0], "fields_read": [], "received": {}}


def audit_of(results: list[dict], expectations: dict | None = None):
    exp = parse_expectations(expectations or {}, "x.toml")
    return build_audit(SUITE, {"results": results}, exp, {})


def pair_of(case_id: str, metric: str, legacy, collections):
    audit = audit_of([result(case_id, "legacy:L", metric, legacy), result(case_id, "collections:C", metric, collections)])
    [pair] = path_pairs(audit.rows, None)
    return pair


ERR = {"error": {"type": "ValueError", "message": "retrieved_contexts cannot be empty"}}


@pytest.mark.parametrize("case_id,metric,legacy,collections,expected", [
    ("cp-worked-example", CP, 0.8333333332916666, 0.8333333332916666, "identical"),
    # the paths differ by exactly the 1e-10: 5/6 with and without it (either direction)
    ("cp-worked-example", CP, 0.8333333332916666, 5 / 6, "epsilon"),
    ("cp-worked-example", CP, 5 / 6, 0.8333333332916666, "epsilon"),
    ("cp-worked-example", CP, 0.8333333332916666, 0.8333333332916667, "rounding"),
    ("cp-worked-example", CP, 0.8333333332916666, 0.5, "divergence"),
    # non-binary verdict [1, 2, 0]: legacy coerces by truthiness, collections takes 2 as given
    ("edge-non-binary-verdict", CP, 0.99999999995, 1.3333333332888888, "coercion"),
    ("edge-non-binary-verdict", CP, 0.99999999995, 0.99999999995, "identical"),
    # empty retrieval: legacy 0.0, collections raises
    ("edge-empty-retrieval", CP, 0.0, ERR, "error"),
    ("edge-empty-retrieval", CP, ERR, ERR, "identical"),
    ("edge-empty-retrieval", CP, ERR, 0.0, "divergence"),
    ("edge-empty-retrieval", CP, {"error": {"type": "TypeError", "message": "x"}}, ERR, "error"),
    # legacy NaN: collections NaN is the same behaviour; 0.0 hides the undefined value
    ("edge-zero-response-claims", "faithfulness", "NaN", "NaN", "identical"),
    ("edge-zero-response-claims", "faithfulness", "NaN", 0.0, "empty_as_zero"),
    ("edge-zero-response-claims", "faithfulness", "NaN", 1.0, "divergence"),
    ("cp-worked-example", "faithfulness", 1.0, "NaN", "divergence"),
])
def test_pair_classification(case_id, metric, legacy, collections, expected):
    pair = pair_of(case_id, metric, legacy, collections)
    assert pair.classification.name == expected, pair.classification.explanation
    assert pair.classification.explanation.startswith("legacy ")


def test_legacy_value_becomes_the_reference_side():
    pair = pair_of("cp-worked-example", CP, 0.8333333332916666, 0.8333333332916666)
    side = legacy_as_reference(pair.legacy)
    assert float(side.value) == 0.8333333332916666 and side.alternatives == {"epsilon": 5 / 6}
    nan = legacy_as_reference(pair_of("edge-zero-response-claims", "faithfulness", "NaN", "NaN").legacy)
    assert nan.value is None and nan.undefined_reason
    error = legacy_as_reference(pair_of("edge-empty-retrieval", CP, ERR, 0.0).legacy)
    assert error.value is None and "ValueError" in error.refused
    coerced = legacy_as_reference(pair_of("edge-non-binary-verdict", CP, 0.99999999995, 1.0).legacy)
    assert coerced.alternatives["coercion"] == 1.3333333332888888


def test_every_legacy_row_pairs_with_every_collections_row_of_its_case_and_metric():
    audit = audit_of([
        result("cp-worked-example", "legacy:A", CP, 0.8333333332916666),
        result("cp-worked-example", "legacy:B", CP, 0.8333333332916666),
        result("cp-worked-example", "collections:C", CP, 0.8333333332916666),
        result("cp-worked-example", "collections:D", CP, 0.8333333332916666),
        result("recall-four-claims", "collections:C", CP, 0.9999999999),          # other case: no pair
        result("cp-worked-example", "legacy:F", "faithfulness", 1.0),            # other metric: no pair
        result("cp-worked-example", "legacy:I", "id_context_precision", 1.0),    # legacy only
    ])
    pairs = path_pairs(audit.rows, audit.expectations)
    assert sorted((p.legacy.target, p.collections.target) for p in pairs) == [
        ("legacy:A", "collections:C"), ("legacy:A", "collections:D"),
        ("legacy:B", "collections:C"), ("legacy:B", "collections:D")]
    assert unpaired_metrics(audit.rows) == {"legacy_only": ["faithfulness", "id_context_precision"],
                                            "collections_only": []}


TWO_PATHS = [
    result("edge-empty-retrieval", "legacy:L", CP, 0.0),
    result("edge-empty-retrieval", "collections:C", CP, ERR),
    result("edge-non-binary-verdict", "legacy:L", CP, 0.99999999995),
    result("edge-non-binary-verdict", "collections:C", CP, 1.3333333332888888),
]
ROW_DEVIATIONS = [{"classification": "empty_as_zero", "targets": ["legacy:L"], "cases": ["edge-empty-retrieval"],
                   "reason": "r"},
                  {"classification": "error", "targets": ["collections:C"], "cases": ["edge-empty-retrieval"],
                   "reason": "r"},
                  {"classification": "coercion", "targets": ["legacy:L"], "cases": ["edge-non-binary-verdict"],
                   "reason": "r"},
                  {"classification": "divergence", "targets": ["collections:C"],
                   "cases": ["edge-non-binary-verdict"], "reason": "r", "allow_out_of_range": True}]


def path_deviation(classification: str, cases: list[str]) -> dict:
    return {"classification": classification, "legacy_targets": ["legacy:L"],
            "collections_targets": ["collections:C"], "cases": cases, "reason": "r", "upstream": "https://u"}


def test_pairs_are_checked_against_path_deviations():
    matched = audit_of(TWO_PATHS, {"deviation": ROW_DEVIATIONS, "path_deviation": [
        path_deviation("error", ["edge-empty-retrieval"]), path_deviation("coercion", ["edge-non-binary-verdict"])]})
    assert not matched.drift, matched.expectation_problems
    assert {p.case.id: p.expected.upstream for p in path_pairs(matched.rows, matched.expectations)} == {
        "edge-empty-retrieval": "https://u", "edge-non-binary-verdict": "https://u"}

    unnamed = audit_of(TWO_PATHS, {"deviation": ROW_DEVIATIONS})
    pair_findings = [f for f in findings(unnamed) if f.target == "legacy:L vs collections:C"]
    assert unnamed.drift and len(pair_findings) == 2 and not unnamed.expectation_problems
    assert any(f.case_id == "edge-empty-retrieval" and f.kind == "error" and f.expected == "identical"
               for f in pair_findings)

    stale = audit_of(TWO_PATHS, {"deviation": ROW_DEVIATIONS, "path_deviation": [
        path_deviation("error", ["edge-empty-retrieval", "edge-non-binary-verdict"]),
        path_deviation("coercion", ["edge-non-binary-verdict"])]})
    assert any("more than one path case entry (path_deviation[0], path_deviation[1])" in p
               for p in stale.expectation_problems)


def test_differences_and_rendering_name_the_case_and_both_values():
    audit = audit_of(TWO_PATHS)
    differences = list(path_differences(path_pairs(audit.rows, None)))
    assert [(d.case.id, d.classification) for d in differences] == [
        ("edge-empty-retrieval", "error"), ("edge-non-binary-verdict", "coercion")]
    section = api_paths_json(audit)
    assert section["pairs"] == 2 and section["by_classification"]["coercion"] == 1
    first = table_rows(section["results"])[0]  # pairs refer to rows by their key in results
    assert first["classification"] == "error"
    rows = {f"{row.case.id}|{row.target}": row for row in audit.rows}
    assert encode_ragas_value(rows[first["collections_row"]].ragas_value) == ERR
    assert rows[first["legacy_row"]].target.startswith("legacy:")
    assert next(iter(section["results"]["data"])) == f"{first['legacy_row']} vs {rows[first['collections_row']].target}"
    text = "\n".join(api_paths_markdown(audit))
    assert "## Legacy vs collections at this Ragas" in text
    assert "| edge-non-binary-verdict | context_precision_with_reference | coercion | `L` 0.99999999995 | `C` 1.3333333332888888 |" in text


def test_no_pairs_no_section():
    audit = audit_of([result("cp-worked-example", "legacy:L", CP, 0.8333333332916666)])
    assert list(api_paths_markdown(audit)) == [] and api_paths_json(audit)["pairs"] == 0


def test_committed_report_lists_the_known_path_differences():
    """The done criteria, on the committed report (tests/test_reports.py keeps it current)."""
    report = json.loads((COMMITTED_REPORTS / "report.json").read_text(encoding="utf-8"))
    section = report["api_paths"]
    assert section["unexpected"] == 0

    def pair(case_id, legacy, collections):
        [row] = [r for r in pair_rows(report) if r["case_id"] == case_id and r["legacy_target"] == legacy
                 and r["collections_target"] == collections]
        return row

    empty = pair("edge-empty-retrieval", "legacy:LLMContextPrecisionWithReference",
                 "collections:ContextPrecisionWithReference")
    assert empty["legacy_value"] == 0.0 and empty["collections_value"]["error"]["type"] == "ValueError"
    assert empty["classification"] == "error"
    two = pair("edge-non-binary-verdict", "legacy:ContextPrecision", "collections:ContextPrecision")
    assert (two["legacy_value"], two["collections_value"], two["classification"]) == (
        0.99999999995, 1.3333333332888888, "coercion")
    assert not math.isnan(two["collections_value"])
    assert {(d["case_id"], d["metric"]) for d in section["differences"]} >= {
        ("edge-empty-retrieval", CP), ("edge-non-binary-verdict", CP)}
