"""compare/ computes a row's and a pair's drift findings once (``build_audit``: ``Audit.row_findings``,
``Audit.pair_findings``); the renderers format those fields and never ask compare again."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import parse_expectations
from ragas_compat.compare.findings import Finding, findings, pair_findings, row_findings
from ragas_compat.pipeline import render_reports
from ragas_compat.report.json_report import table_rows

SUITE = load_default_suite()
CP = "context_precision_with_reference"


def result(case_id: str, target: str, value) -> dict:
    return {"case_id": case_id, "target": target, "metric": CP, "value": value,
            "api": target.split(":")[0], "fields_read": [], "received": {}}


def drifting_audit():
    """Two targets of one metric on two cases, no rules: a divergence, an identical row, two rows no rule
    explains, and the pairs between them."""
    results = [result("cp-worked-example", "legacy:L", 0.5), result("cp-worked-example", "collections:C", 5 / 6),
               result("edge-non-binary-verdict", "legacy:L", 0.99999999995),
               result("edge-non-binary-verdict", "collections:C", 0.99999999995)]
    return build_audit(SUITE, {"results": results}, parse_expectations({}, "x.toml"), {})


def test_build_audit_stores_each_rows_and_pairs_findings_in_their_order():
    audit = drifting_audit()
    assert len(audit.row_findings) == len(audit.rows) == 4 and len(audit.pair_findings) == len(audit.pairs) == 2
    assert [list(found) for found in audit.row_findings] == [row_findings(row) for row in audit.rows]
    assert [list(found) for found in audit.pair_findings] == [pair_findings(pair) for pair in audit.pairs]
    kinds = {(row.case.id, row.target): [f.kind for f in found] for row, found in audit.rows_with_findings()}
    assert kinds == {("cp-worked-example", "legacy:L"): ["divergence"],
                     ("cp-worked-example", "collections:C"): [],
                     ("edge-non-binary-verdict", "legacy:L"): ["unexplained"],
                     ("edge-non-binary-verdict", "collections:C"): ["unexplained"]}
    assert list(audit.findings) == findings(audit) == [
        f for found in (*audit.row_findings, *audit.pair_findings) for f in found]


def test_an_audit_not_judged_refuses_to_give_row_findings():
    audit = drifting_audit()
    with pytest.raises(ValueError, match="after build_audit"):
        list(dataclasses.replace(audit, row_findings=()).rows_with_findings())
    with pytest.raises(ValueError, match="after build_audit"):
        list(dataclasses.replace(audit, pair_findings=()).pairs_with_findings())


def test_the_renderers_format_the_stored_findings_and_compute_none():
    """Swap the stored findings (every row's and pair's, in turn, for a made-up one or none): report.json's
    drift columns and junit.xml's failures follow the stored fields, not what compare would compute."""
    audit = drifting_audit()
    made_up = (Finding("out_of_range", None, None, None, None, "made up by the test"),)
    swapped = dataclasses.replace(audit, row_findings=tuple(() if found else made_up for found in audit.row_findings),
                                  pair_findings=tuple(() if found else made_up for found in audit.pair_findings))
    reports = render_reports(swapped)
    report = json.loads(reports["report.json"])
    assert [row["drift"] for row in table_rows(report["results"])] == [
        [] if found else ["out_of_range"] for found in audit.row_findings]
    assert [pair["drift"] for pair in table_rows(report["api_paths"]["results"])] == [
        [] if found else ["out_of_range"] for found in audit.pair_findings]
    junit = ET.fromstring(reports["junit.xml"])
    failing = [(case.get("name"), case.get("classname")) for case in junit.findall("testcase")
               if case.find("failure") is not None]
    expected_rows = [(row.case.id, f"{row.spec.name}.{row.target}") for row, found in audit.rows_with_findings()
                     if not found]
    expected_pairs = [(pair.case.id, f"{pair.metric}.{pair.legacy.target} vs {pair.collections.target}")
                      for pair, found in audit.pairs_with_findings() if not found]
    assert failing == expected_rows + expected_pairs
    assert junit.get("failures") == str(len(expected_rows) + len(expected_pairs))
