"""Run generated cases through the Ragas probe, batch after batch, and classify every pair.

All batches go to one probe process that imports Ragas once and serves them as a chain of
requests (``ragas_compat.runner.StartedProbe``), each forking ``workers`` scoring processes
(``harness/probe/probe_workers.py``; each batch is sent in ``by_cost`` order, so the workers get equal
work). Every batch is handed over at once, so the probe never waits for the host: while it scores
batch k + 1, the host pairs batch k with the reference (``ragas_compat.compare.audit.build_audit``);
when the workers leave a core free, the last batch's tail is a request of its own, so the host pairs
the rest while the probe scores it (``plan_requests``), and the last request is paired while the
probe exits (``Early``).
Classification is ``run``'s pipeline, reused: ``build_audit`` with the same expectations (the pin's
rules in ``pinned/expectations.toml``, or a user's file layered over them, ``pipeline.load_run_expectations``)
explains each row by a rule or case entry, ``compare.findings`` lists what nothing explains (an
unexplained row or pair, an error no rule explains, a harness error, a value out of range) and
``compare.verdict`` says it in one line. A fuzz run is drift (exit 1) exactly when ``run`` would call
the same rows drift; the shrinker works only on unexplained rows (``unexplained_rows``). The rows do
not depend on ``workers`` or on the batching.

Throughput is counted in *scored contexts*: for every (case, target) result whose target reads
``retrieved_contexts``, the number of retrieved contexts of the case.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragas_compat import runner as probe_runner
from ragas_compat.cases.loader import Suite, _build_case, parse_suite
from ragas_compat.compare.api_paths import PathPair
from ragas_compat.compare.audit import Audit, AuditRow, build_audit, judged
from ragas_compat.compare.expectations import Expectations
from ragas_compat.compare.findings import Finding, row_findings
from ragas_compat.compare.reference_book import ReferenceBook
from ragas_compat.compare.verdict import FAIL_ON_DEFAULT, Verdict, failing
from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.pipeline import pin_expectations
from ragas_compat.runner import ProbeRun, StartedProbe, run_probe
from ragas_compat.tools.fuzz.generator import (
    check_case_count,
    check_metrics,
    fuzz_suite_document,
    generate_cases,
    targets_for,
)

PAIRING_CHUNK = 20             # cases per build_audit call (see _pair)
MAX_BATCH = 2000               # cases per batch when --batch-size is not given
MAX_WORKERS = 64               # --workers: scoring processes forked by each probe after its import
BATCH_TIMEOUT_FLOOR = 600.0    # seconds; a batch may also take 2 s per case
TAIL_SHARE = 8                 # the last batch's last 1/8 of cases may be a probe request of its own (plan_requests)

ProbeFunction = Callable[..., ProbeRun]
Progress = Callable[[int, int], None]


class FuzzProbeFailed(RagasUnavailable):
    """A probe process could not run Ragas at all (no results for its batch)."""


@dataclass(frozen=True)
class FuzzRun:
    seed: int
    metrics: tuple[str, ...]
    targets: tuple[str, ...]
    cases: int
    batches: tuple[tuple[int, int], ...]   # [start, stop) case indices of each batch (request to the probe)
    workers: int                           # scoring processes each probe forks after importing Ragas
    rows: tuple[AuditRow, ...]             # every (case, target) pair, in case order
    provenance: dict[str, Any]
    seconds: float                         # wall time of generation + probes + classification
    probe_seconds: float                   # the probe's wall time (sum over its requests)
    expectations: str = ""                 # the source of the rules and case entries applied (as run's)
    findings: tuple[Finding, ...] = ()     # what run would call drift: compare.findings over rows and pairs
    verdict: Verdict | None = None         # compare.verdict of the same audit
    shrink_rounds: int = 0                 # probe rounds allowed to shrink the findings (delta_debug)
    shrunk: dict[tuple[str, str], Any] = field(default_factory=dict)  # (classification, target) -> delta_debug.Shrunk

    @property
    def contexts_scored(self) -> int:
        return sum(len(row.case.retrieved_contexts) for row in self.rows
                   if "retrieved_contexts" in row.fields_read)

    @property
    def divergence(self) -> bool:
        """A ``divergence`` no rule or case entry explains."""
        return any(finding.kind == "divergence" for finding in self.findings)

    @property
    def drift(self) -> bool:
        """What makes ``run`` exit 1 by default (``compare.verdict.failing``): the fuzz run's exit code."""
        return bool(failing(self.findings, FAIL_ON_DEFAULT))


def unexplained(row: AuditRow) -> bool:
    """The row is drift by itself (``compare.findings.row_findings``): nothing explains it, or nobody scored it."""
    return bool(row_findings(row))


def unexplained_rows(rows: Sequence[AuditRow]) -> list[AuditRow]:
    """The rows the shrinker may work on: those ``unexplained``; an explained difference is no finding."""
    return [row for row in rows if unexplained(row)]


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def plan_batches(n: int, batch_size: int | None = None) -> list[tuple[int, int]]:
    """[start, stop) ranges covering 0..n. Without ``batch_size``: the fewest batches of at most
    MAX_BATCH cases, of equal size (within one case)."""
    if n == 0:
        return []
    if batch_size is None:
        batch_size = math.ceil(n / math.ceil(n / MAX_BATCH))
    return [(start, min(start + batch_size, n)) for start in range(0, n, batch_size)]


def plan_requests(batches: Sequence[tuple[int, int]], workers: int,
                  cores: int | None = None) -> list[tuple[int, int]]:
    """[start, stop) ranges of the probe requests serving ``batches``, in order: one per batch, except
    that when the workers leave a core free (``workers`` < ``cores``, default ``os.cpu_count()``) the
    last batch's last 1/TAIL_SHARE of cases (whole PAIRING_CHUNKs, at least one) is a request of its
    own, so the host classifies the rest of the batch on the free core while the probe scores that
    tail; only the tail's classification is left after the probe's last output. Each batch's own
    request already overlaps with the next batch's scoring. A request boundary is a multiple of
    PAIRING_CHUNK from its batch's start, so ``_pair`` makes the same build_audit calls; rows do not
    depend on the requests. With every core scoring, the host's classification would only take
    CPU from the workers, and a request more costs the probe a warm-up, a fork and an idle worker
    at its end: no tail request then."""
    requests = list(batches)
    if not requests or workers >= (cores or os.cpu_count() or 1):
        return requests
    start, stop = requests[-1]
    tail = PAIRING_CHUNK * max(1, round((stop - start) / TAIL_SHARE / PAIRING_CHUNK))
    split = start + (stop - start - tail) // PAIRING_CHUNK * PAIRING_CHUNK
    if split - start >= tail:
        requests[-1:] = [(start, split), (split, stop)]
    return requests


def check_fuzz_arguments(n: int, workers: int) -> None:
    """``--n`` within 0 .. MAX_FUZZ_CASES and ``--workers`` within 1 .. MAX_WORKERS (HarnessInputError, exit 2)."""
    check_case_count(n)
    if not 1 <= workers <= MAX_WORKERS:
        raise HarnessInputError(f"--workers: {workers}; expected 1 to {MAX_WORKERS} scoring processes per probe",
                                field="--workers", value=workers)


def fuzz_suite(cases: list[dict[str, Any]], seed: int, *, validate: bool) -> Suite:
    """The generated cases as a Suite. ``validate``: through the loader (``parse_suite``, about
    5 ms per case in jsonschema); otherwise built with the loader's own case builder (the
    generator's output is checked against the loader by tests/test_fuzz.py)."""
    document = fuzz_suite_document(cases, seed)
    if validate:
        return parse_suite(document, source=f"fuzz seed {seed}")
    return Suite(document["suite"], f"fuzz seed {seed}", tuple(_build_case(c) for c in cases))


@dataclass
class Paired:
    """What ``build_audit`` made of the batches so far: rows, legacy-vs-collections pairs, problems of
    the expectations, and the expectations as bound to the Ragas version that ran."""

    rows: list[AuditRow] = field(default_factory=list)
    pairs: list[PathPair] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    expectations: Expectations | None = None

    def add(self, audit: Audit) -> None:
        self.rows.extend(audit.rows)
        self.pairs.extend(audit.pairs)
        self.problems.extend(audit.expectation_problems)
        self.expectations = audit.expectations

    def merge(self, other: Paired) -> None:
        """``other``'s rows, pairs and problems after these (a later batch)."""
        self.rows.extend(other.rows)
        self.pairs.extend(other.pairs)
        self.problems.extend(other.problems)
        self.expectations = other.expectations if other.expectations is not None else self.expectations


def _pair(suite: Suite, start: int, stop: int, output: dict[str, Any], metrics: Sequence[str],
          expectations: Expectations, into: Paired | None = None, references: ReferenceBook | None = None) -> Paired:
    """Classify one batch's probe results with ``build_audit`` under ``expectations`` (as ``run``
    does), PAIRING_CHUNK cases at a time: build_audit's cross-API pairing compares every row with every
    other row of its suite, so it is kept to small suites (the pairs are per case; chunking changes no
    result). ``references``: the batch's reference outcomes when already computed (``ReferenceBook``)."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for result in output.get("results", []):
        by_case.setdefault(result["case_id"], []).append(result)
    paired = into if into is not None else Paired()
    for chunk in range(start, stop, PAIRING_CHUNK):
        cases = suite.cases[chunk:min(chunk + PAIRING_CHUNK, stop)]
        results = [r for case in cases for r in by_case.get(case.id, [])]
        paired.add(build_audit(Suite(suite.name, suite.source, cases), {**output, "results": results},
                               expectations, {}, metrics=metrics, references=references))
    return paired


def classify_results(suite: Suite, output: dict[str, Any], metrics: Sequence[str],
                     expectations: Expectations | None = None) -> tuple[AuditRow, ...]:
    """Every (case, target) result of one probe output over all of ``suite``, classified and explained
    under ``expectations`` (default: the pin's rules; see ``_pair``)."""
    chosen = expectations if expectations is not None else pin_expectations()
    return tuple(_pair(suite, 0, len(suite.cases), output, metrics, chosen).rows)


def judge_fuzz(suite: Suite, paired: Paired, provenance: dict[str, Any]) -> Audit:
    """One audit of the whole fuzz run, judged as ``run`` judges its audit (``compare.audit.judged``):
    its ``findings`` and ``verdict`` are the fuzz run's."""
    return judged(Audit(suite, provenance, tuple(paired.rows), (), tuple(paired.problems), paired.expectations,
                        pairs=tuple(paired.pairs)))


def _provenance(runs: Sequence[ProbeRun]) -> dict[str, Any]:
    output = next((run.output for run in runs if run.output), {})
    attempts = [a for run in runs for a in run.output.get("network_attempts", [])]
    return {"ragas_version": output.get("ragas", {}).get("version"),
            "python": {k: v for k, v in output.get("python", {}).items() if k != "executable"},
            "telemetry": output.get("telemetry", {}),
            "network_attempts": attempts}


def case_cost(case: Any) -> int:
    """A case's scoring work, roughly: 1 + the number of list items anywhere in it (contexts, labels,
    claims, IDs; Ragas's judged metrics make one judge call per context or claim)."""
    if isinstance(case, list):
        return len(case) + sum(case_cost(item) - 1 for item in case) + 1
    if isinstance(case, dict):
        return sum(case_cost(value) - 1 for value in case.values()) + 1
    return 1


def by_cost(cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases in ascending ``case_cost`` (ties in case order): the probe deals a request's cases to
    its workers round robin, which on this order gives each worker about the same work (generated
    shapes rotate, so in case order one worker would get every long list); the cheapest case comes
    first, where the probe warms each target before forking. Rows are paired by case id, so the
    order changes no row."""
    return sorted(cases, key=case_cost)


def batch_timeout(size: int, timeout: float | None) -> float:
    """Seconds a probe has for a batch of ``size`` cases: ``timeout``, or max(BATCH_TIMEOUT_FLOOR, 2 s a case)."""
    return timeout or max(BATCH_TIMEOUT_FLOOR, 2.0 * size)


class Early:
    """Classify the last batch while its probe exits (``StartedProbe.result``'s ``while_exiting``): the
    probe has written the output; whether the run is ok is known at its exit. ``paired(run)``: the
    classification when the run is ok (an error classifying it is raised then), else None (the probe's
    failure is what the run reports)."""

    def __init__(self, classify: Callable[[dict[str, Any]], Paired]) -> None:
        self.classify = classify
        self.done: Paired | None = None
        self.error: BaseException | None = None

    def __call__(self, output: dict[str, Any]) -> None:
        try:
            self.done = self.classify(output)
        except Exception as exc:  # raised again by paired() only if the probe's run is ok
            self.error = exc

    def paired(self, run: ProbeRun) -> Paired | None:
        if not run.ok:
            return None
        if self.error is not None:
            raise self.error
        return self.done


class ProbeAhead:
    """``run_probe`` for a series of calls that depend on each other (the shrinker's rounds): each
    call hands its cases to a probe started at the previous call (importing Ragas since) and starts
    the next one, so a round does not wait for a whole import. Its timeout counts from the hand-over.
    ``close()`` ends the probe still waiting."""

    def __init__(self) -> None:
        self.spare: StartedProbe | None = None

    def __call__(self, cases: list[dict[str, Any]], *, python: str, sys_path_prefix: Sequence[str] = (),
                 targets: Sequence[str] | None = None, timeout: float = BATCH_TIMEOUT_FLOOR) -> ProbeRun:
        probe, self.spare = self.spare, None
        if probe is None or not probe.matches(python, sys_path_prefix):
            if probe is not None:
                probe.close()
            probe = StartedProbe(python=python, sys_path_prefix=sys_path_prefix, timeout=timeout)
        probe.timeout = probe_runner.check_timeout(timeout)
        probe.deadline = time.perf_counter() + probe.timeout
        self.spare = StartedProbe(python=python, sys_path_prefix=sys_path_prefix, timeout=timeout)
        try:
            probe.submit(cases, targets=targets)
            return probe.result()
        finally:
            probe.close()

    def close(self) -> None:
        if self.spare is not None:
            self.spare.close()
            self.spare = None


def run_fuzz(n: int, seed: int, metrics: Sequence[str] | None = None, *, workers: int | None = None,
             batch_size: int | None = None, python: str = sys.executable, sys_path_prefix: Sequence[str] = (),
             timeout: float | None = None, validate: bool = False,
             probe: ProbeFunction | None = None,
             on_batch: Callable[[int, int, ProbeRun], None] | None = None,
             on_progress: Progress | None = None, started: StartedProbe | None = None,
             expectations: Expectations | None = None) -> FuzzRun:
    """Generate ``n`` cases from ``seed``, score them with Ragas and the reference, classify every pair.

    The batches (``plan_batches``) are one chain of requests to one probe, which forks ``workers``
    scoring processes per batch after its one import of Ragas; ``started`` is a probe already
    started for this interpreter and path (it serves the chain). ``on_batch(done, total,
    probe_run)`` is called as each batch finishes; ``on_progress(done, total)`` in cases over the
    whole run, about five times a second. ``probe`` replaces the real probe (tests): it is called
    once per batch like ``ragas_compat.runner.run_probe`` (without ``workers``); the module's
    ``run_probe`` is looked up at call time, and anything but the real one is used that way.
    ``expectations``: the rules and case entries that explain rows, as ``run``'s (default: the pin's).
    Raises HarnessInputError for bad arguments and FuzzProbeFailed (naming the batch's cases)
    when a probe process fails."""
    probe = probe or run_probe
    clock = time.perf_counter()
    expectations = expectations if expectations is not None else pin_expectations()
    workers = workers or default_workers()
    try:
        check_fuzz_arguments(n, workers)  # before anything is generated: a huge --n is refused at once
        chosen = check_metrics(metrics)
        targets = targets_for(chosen)
        cases = generate_cases(n, seed, chosen)
        suite = fuzz_suite(cases, seed, validate=validate)
    except BaseException:
        if started is not None:
            started.close()
        raise
    batches = plan_batches(n, batch_size)
    paired = Paired()
    runs: list[ProbeRun] = []

    def finished(start: int, stop: int, run: ProbeRun, references: ReferenceBook | None = None,
                 early: Paired | None = None) -> None:
        """The request for cases ``start..stop - 1`` answered: its rows into ``paired`` (``early``:
        classified already); ``on_batch`` when it ends a batch."""
        if not run.ok:
            raise FuzzProbeFailed(f"probe for cases {start}..{stop - 1}: {run.error}")
        if early is None:
            early = _pair(suite, start, stop, run.output, chosen, expectations, references=references)
        paired.merge(early)
        runs.append(run)
        done = sum(1 for _, batch_stop in batches if batch_stop <= stop)
        if on_batch is not None and batches[done - 1][1] == stop:
            on_batch(done, len(batches), run)

    if probe is not probe_runner.run_probe:  # a stand-in probe: one call per batch
        if started is not None:
            started.close()
        for start, stop in batches:
            finished(start, stop, probe(by_cost(cases[start:stop]), python=python, sys_path_prefix=sys_path_prefix,
                                        targets=targets, timeout=batch_timeout(stop - start, timeout)))
    elif not batches:  # nothing to score (--n 0): no probe process
        if started is not None:
            started.close()
    else:
        chain = started if started is not None else StartedProbe(python=python, sys_path_prefix=sys_path_prefix,
                                                                  timeout=batch_timeout(n, timeout))
        requests = plan_requests(batches, workers)
        with chain:
            for index, (start, stop) in enumerate(requests):  # handed over at once: the probe never waits
                chain.submit(by_cost(cases[start:stop]), targets=targets, workers=workers,
                             chained=index + 1 < len(requests))
            for start, stop in requests:
                # a request's time counts from when the host waits for it
                chain.deadline = max(chain.deadline, time.perf_counter() + batch_timeout(stop - start, timeout))
                progress = None if on_progress is None else \
                    (lambda done, total, before=start: on_progress(before + done, n))
                # the request's references, computed while the probe scores it (one request's at a time)
                references = ReferenceBook().fill(Suite(suite.name, suite.source, suite.cases[start:stop]), chosen)
                early = Early(lambda output, start=start, stop=stop, references=references:
                              _pair(suite, start, stop, output, chosen, expectations, references=references))
                run = chain.result(progress, while_exiting=early)
                finished(start, stop, run, references, early.paired(run))
    provenance = _provenance(runs)
    audit = judge_fuzz(suite, paired, {**provenance, "expectations": expectations.source})
    return FuzzRun(seed=seed, metrics=chosen, targets=tuple(targets), cases=n, batches=tuple(batches),
                   workers=workers, rows=audit.rows, provenance=provenance, expectations=expectations.source,
                   findings=audit.findings, verdict=audit.verdict,
                   seconds=time.perf_counter() - clock,
                   probe_seconds=sum(run.seconds for run in runs))
