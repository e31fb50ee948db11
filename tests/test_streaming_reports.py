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
from ragas_compat.pipeline import load_run_expectations, load_suite, render_reports, report_chunks
from ragas_compat.report.atomic import write_reports_atomically
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


@pytest.fixture(scope="module")
def two_copies(bundled, tmp_path_factory):
    """The audit of the bundled suite copied twice, built once for the tests that only read it."""
    return copied_audit(bundled, 2, tmp_path_factory.mktemp("two-copies"))


def copied_audit(output: dict, copies: int, tmp_path: Path):
    document = copied_suite(copies * len(load_suite([]).cases))
    path = tmp_path / f"copies-{copies}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    suite = load_cases(path)
    return build_audit(suite, copied_output(output, copies), load_run_expectations(None), {"ragas": {}})


def writing_peak(audit, out: Path) -> tuple[int, int, dict[str, int]]:
    """(peak bytes allocated while the four reports are written, bytes written, each report's own peak).
    ``write_reports`` makes report.json in a forked child where it can (``first_apart``), out of this
    process's tracemalloc: here all four are written in this process, from the same chunks through the same
    atomic publication. Each report's peak is measured apart (beyond what was allocated when it began), so
    a report that grows per row is seen even while its peak is below another report's."""
    peaks: dict[str, int] = {}

    def measured(name: str, chunks):
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        yield from chunks
        peaks[name] = tracemalloc.get_traced_memory()[1] - start

    tracemalloc.start()
    try:
        write_reports_atomically(out, {name: measured(name, chunks) for name, chunks in report_chunks(audit).items()})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(peaks) == ["junit.xml", "report.html", "report.json", "report.md"], peaks
    written = sum((out / name).stat().st_size for name in ("report.json", "report.md", "report.html", "junit.xml"))
    return peak, written, peaks


def test_copied_audit_renders_the_bundled_rows_once_per_copy(bundled, two_copies, tmp_path):
    audit = two_copies
    single = copied_audit(bundled, 1, tmp_path)
    assert len(audit.rows) == 2 * len(single.rows)
    assert [r.classification.name for r in audit.rows[len(single.rows):]] == \
        [r.classification.name for r in single.rows]


def test_writing_peak_stays_within_the_stated_bound_as_rows_grow(bundled, two_copies, tmp_path):
    # 2 copies (the module's audit) and 10 copies (2,680 and 13,400 rows): the per-row bound allows 64 * 10,720
    # bytes (686 kB) of growth, and a writer keeping as little as 110 bytes a row (KeyedTable remembering every
    # key, 77844ae) grows by 1.18 MB; the writing peak (about 2.2 MB whatever the size) is 8% of the 28 MB
    # written at 10 copies (the share bound needs a large audit; the growth, any two sizes far apart)
    measured = {2: (len(two_copies.rows), *writing_peak(two_copies, tmp_path / "out-2"))}
    audit = copied_audit(bundled, 10, tmp_path)
    measured[10] = (len(audit.rows), *writing_peak(audit, tmp_path / "out-10"))
    del audit
    (rows_small, peak_small, bytes_small, each_small), (rows_big, peak_big, bytes_big, each_big) = \
        measured[2], measured[10]
    assert rows_big == 5 * rows_small
    assert bytes_big >= 4 * bytes_small  # (each report has a fixed part too: 6.4 MB at 2 copies, 28 MB at 10)
    # five times the rows: the writing peak, and each report's, grows by at most the stated bytes per added row
    assert peak_big - peak_small <= WRITING_BYTES_PER_ROW * (rows_big - rows_small), measured
    for name in each_big:
        assert each_big[name] - each_small[name] <= WRITING_BYTES_PER_ROW * (rows_big - rows_small), (name, measured)
    assert peak_big <= WRITING_SHARE_BOUND * bytes_big, measured


def test_a_whole_report_in_memory_breaks_the_bound(two_copies):
    """The measure can fail: rendering the reports as whole strings (what writing did before it
    streamed) holds more than the share bound, and more than the per-row bound for every row."""
    audit = two_copies
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
