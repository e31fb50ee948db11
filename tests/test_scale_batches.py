"""evaluate() passes in batches (issue 40): a batched run records what one whole-dataset call records.

The probe plans a run of more than ``EVALUATE_BATCH_CASES`` cases as consecutive batches, one
``evaluate()`` call each, and ``merge_batches`` joins their records; the dataset-level score is Ragas's
own ``safe_nanmean`` over all the rows. Here, in a subprocess that imports Ragas, every ``evaluate()``
run of the bundled suite is planned once whole and once in batches of 7 cases, and the merged records
must equal the whole ones in rows, errors, scores, prompts and stub problems (bit for bit: the encoded
values are compared as text).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest

from ragas_compat.probe.evaluate import batch_bounds

SCRIPT = r"""
import json
from ragas_compat.cases import load_default_suite
from ragas_compat.runner import request_targets
from ragas_compat.probe.targets import targets_from_request
from ragas_compat.probe.evaluate import merge_batches, planned_runs, run_planned

cases = [case.raw for case in load_default_suite().cases]
targets = targets_from_request(json.loads(json.dumps(request_targets(None, cases))))
request = {"apis": ["evaluate"]}
settings, whole = planned_runs(cases, request, targets)
_, batched = planned_runs(cases, request, targets, batch_cases=7)
keys = ("api", "targets", "case_ids", "rows", "errors", "scores", "run_error", "prompts", "expected_prompts",
        "stub_problems", "judge_problems")
one = [run_planned(run, settings) for run in whole]
many = merge_batches([run_planned(run, settings) for run in batched])
print(json.dumps({"whole": [{k: r[k] for k in keys} for r in one], "merged": [{k: r[k] for k in keys} for r in many],
                  "calls": len(batched), "batches": [r.get("batches", 1) for r in many]}))
"""


def test_batch_bounds_cover_the_cases_in_order_in_near_equal_batches():
    assert batch_bounds(0, 7) == [(0, 0)]
    assert batch_bounds(7, 7) == [(0, 7)]
    assert batch_bounds(8, 7) == [(0, 4), (4, 8)]
    for count, size in [(50_000, 2_000), (93, 7), (2_001, 2_000)]:
        bounds = batch_bounds(count, size)
        assert bounds[0][0] == 0 and bounds[-1][1] == count
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
        lengths = [stop - start for start, stop in bounds]
        assert max(lengths) <= size and max(lengths) - min(lengths) <= 1


@pytest.mark.slow
def test_batched_evaluate_runs_merge_to_the_whole_dataset_call():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["calls"] > len(out["whole"]) + 10  # the runs really were split
    assert any(count > 1 for count in out["batches"])
    assert [r["targets"] for r in out["merged"]] == [r["targets"] for r in out["whole"]]
    assert any(r["errors"] for r in out["whole"])  # rows evaluate() turned into NaN are in the comparison
    for whole, merged in zip(out["whole"], out["merged"], strict=True):
        assert merged == whole, whole["targets"]


LIFT_SCRIPT = r"""
import resource, sys
from ragas_compat.probe.budget import process_sizes
from ragas_compat.probe.workers import run_forked

def big():  # the worker's own budget is its own: it lifts it, then makes a result of about 60 MB of JSON
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
    return ["x" * 600 for _ in range(100_000)]

data = process_sizes()[0]
resource.setrlimit(resource.RLIMIT_DATA, (data + 32 * 2**20, resource.getrlimit(resource.RLIMIT_DATA)[1]))
small, large = run_forked([lambda: "small", big])
print(small, len(large))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA counts private memory on Linux")
def test_the_parent_reads_worker_results_past_a_case_memory_budget():
    """A per-case memory budget (soft RLIMIT_DATA) is lifted while the parent reads its workers' results
    back: a 50,000-case run's results did not fit one case's allowance (MemoryError in json.load)."""
    proc = subprocess.run([sys.executable, "-c", LIFT_SCRIPT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["small", "100000"]
