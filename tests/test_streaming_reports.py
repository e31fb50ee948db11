"""The report writers stream: writing an audit's four reports holds a small part of what is written.

The audit is the bundled suite's, copied (``copied_suite``) with the probe's results copied along
(case ids ``<id>~N``), so a large audit needs one probe run. ``tracemalloc`` measures the peak of
memory allocated while the reports are written, beyond what the audit already holds."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from ragas_compat.cases import load_cases
from ragas_compat.compare.audit import build_audit
from ragas_compat.pipeline import load_run_expectations, load_suite, render_reports, write_reports
from ragas_compat.tools.scale_bench import copied_suite

pytestmark = pytest.mark.slow  # audits of thousands of copied rows, measured for memory

# The stated bounds. Writing the four reports of N rows allocates at most a constant plus
# WRITING_BYTES_PER_ROW per row at its peak (a row's reports take about 1,850 bytes: a writer that
# renders a report whole holds at least that), and at most WRITING_SHARE_BOUND of the bytes written.
WRITING_BYTES_PER_ROW = 64
WRITING_SHARE_BOUND = 0.10


@pytest.fixture(scope="module")
def bundled(default_audit_run):
    return default_audit_run.probe.output  # tests/conftest.py: the default audit, run once per session


def copied_output(output: dict, copies: int) -> dict:
    """The probe's output for ``copied_suite``: every result and evaluate() row once per copy."""
    def renamed(entry: dict, k: int) -> dict:
        return {**entry, "case_id": entry["case_id"] if k == 0 else f"{entry['case_id']}~{k}"}

    runs = [{**run, "rows": [renamed(e, k) for k in range(copies) for e in run.get("rows", [])],
             "errors": [renamed(e, k) for k in range(copies) for e in run.get("errors", [])]}
            for run in output["evaluate"]["runs"]]
    return {**output, "results": [renamed(r, k) for k in range(copies) for r in output["results"]],
            "evaluate": {**output["evaluate"], "runs": runs}}


def copied_audit(output: dict, copies: int, tmp_path: Path):
    document = copied_suite(copies * len(load_suite([]).cases))
    path = tmp_path / f"copies-{copies}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    suite = load_cases(path)
    return build_audit(suite, copied_output(output, copies), load_run_expectations(None), {"ragas": {}})


def writing_peak(audit, out: Path) -> tuple[int, int]:
    """(peak bytes allocated while the four reports are written, bytes written)."""
    tracemalloc.start()
    try:
        write_reports(audit, out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, sum((out / name).stat().st_size for name in ("report.json", "report.md", "report.html", "junit.xml"))


def test_copied_audit_renders_the_bundled_rows_once_per_copy(bundled, tmp_path):
    audit = copied_audit(bundled, 2, tmp_path)
    single = copied_audit(bundled, 1, tmp_path)
    assert len(audit.rows) == 2 * len(single.rows)
    assert [r.classification.name for r in audit.rows[len(single.rows):]] == \
        [r.classification.name for r in single.rows]


def test_writing_peak_stays_within_the_stated_bound_as_rows_grow(bundled, tmp_path):
    measured = {}
    for copies in (5, 20):
        audit = copied_audit(bundled, copies, tmp_path)
        measured[copies] = (len(audit.rows), *writing_peak(audit, tmp_path / f"out-{copies}"))
        del audit
    (rows_small, peak_small, bytes_small), (rows_big, peak_big, bytes_big) = measured[5], measured[20]
    assert rows_big == 4 * rows_small
    assert bytes_big >= 3.5 * bytes_small
    # four times the rows: the writing peak grows by at most the stated bytes per added row
    assert peak_big - peak_small <= WRITING_BYTES_PER_ROW * (rows_big - rows_small), measured
    assert peak_big <= WRITING_SHARE_BOUND * bytes_big, measured


def test_a_whole_report_in_memory_breaks_the_bound(bundled, tmp_path):
    """The measure can fail: rendering the reports as whole strings (what writing did before it
    streamed) holds more than the share bound, and more than the per-row bound for every row."""
    audit = copied_audit(bundled, 5, tmp_path)
    tracemalloc.start()
    try:
        files = render_reports(audit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak > WRITING_SHARE_BOUND * sum(len(text.encode()) for text in files.values())
    assert peak > WRITING_BYTES_PER_ROW * len(audit.rows) * 10


def test_a_repeated_key_is_kept_apart_with_the_keys_of_one_case_remembered():
    """``results`` and ``api_paths`` keys are unique per case; the table remembers the current case's keys
    only (rows come case by case), so a repeat within a case is ``#2`` and writing keeps nothing per row."""
    from ragas_compat.report.json_report import KeyedTable, row_key

    keys = [row_key("a|b", "legacy:X"), row_key("a|b", "legacy:X"), row_key("a|b", "legacy:Y"),
            row_key("c", "legacy:X"), row_key("c", "legacy:X"), row_key("c", "legacy:X")]
    table = KeyedTable(["v"], lambda: ((key, {"v": index}) for index, key in enumerate(keys)))
    assert [key for key, _ in table.data()] == ["a|b|legacy:X", "a|b|legacy:X#2", "a|b|legacy:Y",
                                                "c|legacy:X", "c|legacy:X#2", "c|legacy:X#3"]
    assert list(table.to_json()["data"].values()) == [[index] for index in range(len(keys))]
