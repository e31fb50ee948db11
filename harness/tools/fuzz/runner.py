"""Run generated cases through the Ragas probe in batches, in parallel, and classify every pair.

One probe subprocess per batch (Ragas is imported once per batch, never in this process); up to
``workers`` batches run at the same time (a thread pool waiting on subprocesses, so both cores
run Ragas). Each finished batch is paired with the reference by ``harness.compare.audit.build_audit``
while the other batches still run. The fuzz run has no expectations file: a row's meaning is its
classification, split into EXPLAINED ones (a known, named semantic difference, recomputed by
the diff engine) and UNEXPLAINED ones (``divergence``, ``error``).

Throughput is counted in *scored contexts*: for every (case, target) result whose target reads
``retrieved_contexts``, the number of retrieved contexts of the case.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from harness.cases.loader import Suite, _build_case, parse_suite
from harness.compare.audit import AuditRow, build_audit
from harness.compare.expectations import Expectations
from harness.errors import HarnessInputError, RagasUnavailable
from harness.runner import ProbeRun, run_probe
from harness.tools.fuzz.generator import (
    check_case_count,
    check_metrics,
    fuzz_suite_document,
    generate_cases,
    targets_for,
)

EXPLAINED: tuple[str, ...] = ("identical", "epsilon", "undefined_nan", "empty_as_zero", "dedup", "coercion",
                              "rounding", "variant")
UNEXPLAINED: tuple[str, ...] = ("divergence", "error")
PAIRING_CHUNK = 20             # cases per build_audit call (see _pair)
MAX_BATCH = 2000               # cases per probe process when --batch-size is not given
MAX_WORKERS = 64               # --workers: probe processes (each imports Ragas, ~200 MB) at a time
BATCH_TIMEOUT_FLOOR = 600.0    # seconds; a batch may also take 2 s per case
NO_EXPECTATIONS = Expectations("fuzz (no expectations)", ())

ProbeFunction = Callable[..., ProbeRun]


class FuzzProbeFailed(RagasUnavailable):
    """A probe process could not run Ragas at all (no results for its batch)."""


@dataclass(frozen=True)
class FuzzRun:
    seed: int
    metrics: tuple[str, ...]
    targets: tuple[str, ...]
    cases: int
    batches: tuple[tuple[int, int], ...]   # [start, stop) case indices of each probe process
    workers: int
    rows: tuple[AuditRow, ...]             # every (case, target) pair, in case order
    provenance: dict[str, Any]
    seconds: float                         # wall time of generation + probes + classification
    probe_seconds: float                   # sum of the probe processes' wall times
    shrink_rounds: int = 0                 # probe rounds allowed to shrink the findings (delta_debug)
    shrunk: dict[tuple[str, str], Any] = field(default_factory=dict)  # (classification, target) -> delta_debug.Shrunk

    @property
    def contexts_scored(self) -> int:
        return sum(len(row.case.retrieved_contexts) for row in self.rows
                   if "retrieved_contexts" in row.fields_read)

    @property
    def divergence(self) -> bool:
        return any(row.classification.name == "divergence" for row in self.rows)


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def plan_batches(n: int, workers: int, batch_size: int | None = None) -> list[tuple[int, int]]:
    """[start, stop) ranges covering 0..n. Without ``batch_size``: the fewest batches of at most
    MAX_BATCH cases whose count is a multiple of ``workers`` (every worker gets equal work)."""
    if n == 0:
        return []
    if batch_size is None:
        count = workers * math.ceil(n / (workers * MAX_BATCH))
        batch_size = math.ceil(n / count)
    return [(start, min(start + batch_size, n)) for start in range(0, n, batch_size)]


def check_fuzz_arguments(n: int, workers: int) -> None:
    """``--n`` within 0 .. MAX_FUZZ_CASES and ``--workers`` within 1 .. MAX_WORKERS (HarnessInputError, exit 2)."""
    check_case_count(n)
    if not 1 <= workers <= MAX_WORKERS:
        raise HarnessInputError(f"--workers: {workers}; expected 1 to {MAX_WORKERS} probe processes at a time",
                                field="--workers", value=workers)


def fuzz_suite(cases: list[dict[str, Any]], seed: int, *, validate: bool) -> Suite:
    """The generated cases as a Suite. ``validate``: through the loader (``parse_suite``, about
    5 ms per case in jsonschema); otherwise built with the loader's own case builder (the
    generator's output is checked against the loader by tests/test_fuzz.py)."""
    document = fuzz_suite_document(cases, seed)
    if validate:
        return parse_suite(document, source=f"fuzz seed {seed}")
    return Suite(document["suite"], f"fuzz seed {seed}", tuple(_build_case(c) for c in cases))


def _pair(suite: Suite, start: int, stop: int, output: dict[str, Any],
          metrics: Sequence[str]) -> tuple[AuditRow, ...]:
    """Classify one batch's probe results with ``build_audit``, PAIRING_CHUNK cases at a time:
    build_audit's cross-API pairing compares every row with every other row of its suite, so it is
    kept to small suites (the pairs are per case; chunking changes no result)."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for result in output.get("results", []):
        by_case.setdefault(result["case_id"], []).append(result)
    rows: list[AuditRow] = []
    for chunk in range(start, stop, PAIRING_CHUNK):
        cases = suite.cases[chunk:min(chunk + PAIRING_CHUNK, stop)]
        results = [r for case in cases for r in by_case.get(case.id, [])]
        audit = build_audit(Suite(suite.name, suite.source, cases), {**output, "results": results},
                            NO_EXPECTATIONS, {}, metrics=metrics)
        rows.extend(audit.rows)
    return tuple(rows)


def classify_results(suite: Suite, output: dict[str, Any], metrics: Sequence[str]) -> tuple[AuditRow, ...]:
    """Every (case, target) result of one probe output over all of ``suite``, classified (see ``_pair``)."""
    return _pair(suite, 0, len(suite.cases), output, metrics)


def _provenance(runs: Sequence[ProbeRun]) -> dict[str, Any]:
    output = next((run.output for run in runs if run.output), {})
    attempts = [a for run in runs for a in run.output.get("network_attempts", [])]
    return {"ragas_version": output.get("ragas", {}).get("version"),
            "python": {k: v for k, v in output.get("python", {}).items() if k != "executable"},
            "telemetry": output.get("telemetry", {}),
            "network_attempts": attempts}


def run_fuzz(n: int, seed: int, metrics: Sequence[str] | None = None, *, workers: int | None = None,
             batch_size: int | None = None, python: str = sys.executable, sys_path_prefix: Sequence[str] = (),
             timeout: float | None = None, validate: bool = False,
             probe: ProbeFunction | None = None,
             on_batch: Callable[[int, int, ProbeRun], None] | None = None) -> FuzzRun:
    """Generate ``n`` cases from ``seed``, score them with Ragas and the reference, classify every pair.

    ``on_batch(done, total, probe_run)`` is called as each batch finishes (progress).
    ``probe`` defaults to ``harness.runner.run_probe`` (looked up at call time).
    Raises HarnessInputError for bad arguments and FuzzProbeFailed when a probe process fails."""
    probe = probe or run_probe
    started = time.perf_counter()
    workers = workers or default_workers()
    check_fuzz_arguments(n, workers)  # before anything is generated: a huge --n is refused at once
    chosen = check_metrics(metrics)
    targets = targets_for(chosen)
    cases = generate_cases(n, seed, chosen)
    suite = fuzz_suite(cases, seed, validate=validate)
    batches = plan_batches(n, workers, batch_size)
    audits: dict[int, tuple[AuditRow, ...]] = {}
    runs: dict[int, ProbeRun] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {}
        for index, (start, stop) in enumerate(batches):
            limit = timeout or max(BATCH_TIMEOUT_FLOOR, 2.0 * (stop - start))
            futures[pool.submit(probe, cases[start:stop], python=python, sys_path_prefix=sys_path_prefix,
                                targets=targets, timeout=limit)] = index
        for future in as_completed(futures):
            index = futures[future]
            run = future.result()
            if not run.ok:
                for other in futures:
                    other.cancel()
                start, stop = batches[index]
                raise FuzzProbeFailed(f"probe for cases {start}..{stop - 1}: {run.error}")
            start, stop = batches[index]
            audits[index] = _pair(suite, start, stop, run.output, chosen)
            runs[index] = run
            if on_batch is not None:
                on_batch(len(runs), len(batches), run)
    rows = tuple(row for index in sorted(audits) for row in audits[index])
    ordered_runs = [runs[index] for index in sorted(runs)]
    return FuzzRun(seed=seed, metrics=chosen, targets=tuple(targets), cases=n, batches=tuple(batches),
                   workers=workers, rows=rows, provenance=_provenance(ordered_runs),
                   seconds=time.perf_counter() - started,
                   probe_seconds=sum(run.seconds for run in ordered_runs))
