"""report.json diffs: adding one case to a suite changes a bounded number of lines of report.json.

No Ragas runs here: the probe's answers are made up from the references (Ragas "returns" the
reference's float, NaN where it is undefined, or its label / ranking as it is), which gives every target of the bundled suite a row
and every legacy row its collections pair. The audit of the bundled suite and of the same suite with
one case inserted in its middle are rendered, and the ``difflib`` line diff between the two
report.json files is measured.

The bound, and why: report.json keys every row by ``"<case>|<target>"``, every pair by its rows'
keys, every text by a hash of its content, and lays out each on one line, so nothing is renumbered.
An added case therefore

- adds one line per row, per pair and per ``differences`` entry, at most one ``texts`` line for each
  of them (a new explanation), one ``references`` line per metric it has and its ``cases`` entry
  (``CASE_LINES``): at most ``3 * (rows + pairs) + metrics + CASE_LINES``;
- changes (one line removed, one added) only lines that count rows: the summary's count for each
  metric and each target it has rows of, and a fixed number of totals (verdict, summary, category,
  pair counts and the findings' sentences, ``TOTALS``): at most ``2 * (metrics + targets + TOTALS)``.

The bound does not depend on the size of the rest of the suite (the test checks a small suite too).
Report format 3 broke it: its texts were numbered ``t1``, ``t2``... in order of first use and pairs named
rows by index, so a case added in the middle renumbered every later text and pair (182 changed
lines for one added row in the bundled suite, 958 for 17 rows).
"""

from __future__ import annotations

import copy
import difflib
import json
import math
from importlib import resources

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.metrics.registry import all_metrics
from ragas_compat.pipeline import load_run_expectations
from ragas_compat.report.json_report import render_json, row_key
from ragas_compat.values import NON_NUMERIC, RagasValue, encode_ragas_value

CASE_LINES = 4  # "id": {, "category", "received", }
TOTALS = 40


def bundled_document() -> dict:
    return json.loads(resources.files("ragas_compat").joinpath("cases/suites/default.json").read_text("utf-8"))


def made_up_output(suite) -> dict:
    """A probe output in which every target scores every case its metric applies to with the reference's
    float (NaN when undefined or refused), or its label / ranking as it is (never through float())."""
    results = []
    for case in suite.cases:
        for spec in all_metrics():
            if not spec.ragas_targets or not spec.applies_to(case):
                continue
            outcome = spec.outcome(case)
            value: RagasValue
            if outcome.value is None or outcome.refused is not None:
                value = math.nan
            elif isinstance(outcome.value, NON_NUMERIC):
                value = outcome.value  # DiscreteMetric's label, RankingMetric's list: exact, never a float
            else:
                value = float(outcome.value)
            results += [{"case_id": case.id, "target": str(target), "metric": spec.name, "ragas_class": str(target),
                         "fields_read": list(spec.fields_read), "received": None,
                         "value": encode_ragas_value(value), "warnings": []} for target in spec.ragas_targets]
    return {"probe_format": 1, "python": {"version": "3"}, "ragas": {"version": "made-up"}, "network_attempts": [],
            "results": results}


def rendered(document: dict):
    suite = parse_suite(document, source="suite.json")
    audit = build_audit(suite, made_up_output(suite), load_run_expectations(None), {"suite": len(suite.cases)})
    return audit, render_json(audit)


def with_case_added(document: dict, copy_of: str) -> dict:
    """``document`` with a copy of case ``copy_of`` (id ``<id>-added``) inserted right after it."""
    grown = copy.deepcopy(document)
    index = next(i for i, case in enumerate(grown["cases"]) if case["id"] == copy_of)
    added = {**copy.deepcopy(grown["cases"][index]), "id": f"{copy_of}-added"}
    grown["cases"].insert(index + 1, added)
    return grown


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]
    return [line[1:] for line in diff if line.startswith("+")], [line[1:] for line in diff if line.startswith("-")]


def bound(audit, case_id: str) -> int:
    rows = [row for row in audit.rows if row.case.id == case_id]
    pairs = [pair for pair in audit.pairs if pair.case.id == case_id]
    metrics = {row.spec.name for row in rows} | {row.spec.name for row in audit.reference_only
                                                  if row.case.id == case_id}
    targets = {row.target for row in rows}
    return 3 * (len(rows) + len(pairs)) + len(metrics) + CASE_LINES + 2 * (len(metrics) + len(targets) + TOTALS)


@pytest.fixture(scope="module")
def bundled():
    return bundled_document()


@pytest.mark.parametrize("copy_of", ["quotes-none", "cp-worked-example", "edge-empty-retrieval"])
def test_adding_one_case_changes_a_bounded_number_of_lines(bundled, copy_of):
    _, before = rendered(bundled)
    audit, after = rendered(with_case_added(bundled, copy_of))
    added_id = f"{copy_of}-added"
    added, removed = changed_lines(before, after)
    rows = [row for row in audit.rows if row.case.id == added_id]
    assert rows, "the added case has rows"
    assert len(added) + len(removed) <= bound(audit, added_id), (len(rows), len(added), len(removed))
    # every row of the added case is one added line under its key, and no row of another case moved
    keys = [json.dumps(row_key(added_id, row.target), ensure_ascii=False) for row in rows]
    assert all(sum(line.lstrip().startswith(key + ":") for line in added) == 1 for key in keys)
    assert not any(line.lstrip().startswith(json.dumps(copy_of + "|")) for line in added + removed)


def test_the_bound_does_not_grow_with_the_suite(bundled):
    """The same case added to a suite of 12 cases and to the whole bundled suite changes as many lines
    (give or take the count lines the two suites share)."""
    small = {**bundled, "cases": [case for case in bundled["cases"] if case["id"] != "cp-worked-example"][:11]
             + [case for case in bundled["cases"] if case["id"] == "cp-worked-example"]}
    sizes = []
    for document in (small, bundled):
        _, before = rendered(document)
        audit, after = rendered(with_case_added(document, "cp-worked-example"))
        added, removed = changed_lines(before, after)
        assert len(added) + len(removed) <= bound(audit, "cp-worked-example-added")
        sizes.append(len(added) + len(removed))
    assert abs(sizes[0] - sizes[1]) <= 2 * TOTALS, sizes
