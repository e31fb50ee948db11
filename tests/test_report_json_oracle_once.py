"""report.json stores a reference's oracle once (issue 40: report.json <= 10x the case file): under the
reference's ``oracle`` key, no longer also inside its ``reference_details`` (the same object twice per
case and string metric: 365 KB of 16.4 MB at 2,000 copied cases)."""

from __future__ import annotations

import json

from ragas_compat.report.json_report import expanded_rows
from ragas_compat.values import encode_detail


def test_each_oracle_is_written_once_and_is_the_audits(default_audit_run) -> None:
    report = json.loads(default_audit_run.reports["report.json"])
    for case_id, metrics in report["references"].items():
        for metric, reference in metrics.items():
            assert "oracle" not in reference["reference_details"], (case_id, metric)
    first: dict[tuple[str, str], object] = {}  # the reference written per (case, metric): its first row's
    for row in default_audit_run.audit.rows:
        first.setdefault((row.case.id, row.spec.name), row.reference.details.get("oracle"))
    written = 0
    for (case_id, metric), oracle in first.items():
        assert report["references"][case_id][metric]["oracle"] == encode_detail(oracle), (case_id, metric)
        written += oracle is not None
    assert written >= 50  # the string metrics' rows of the bundled suite still carry their oracle


def test_an_expanded_row_still_names_its_oracle(default_audit_run) -> None:
    report = json.loads(default_audit_run.reports["report.json"])
    rows = [row for row in expanded_rows(report) if isinstance(row.get("oracle"), dict)]
    assert rows and all("library" in row["oracle"] and "oracle" not in row["reference_details"] for row in rows)
