"""Fuzz throughput against the minimal stub loop: the rows ``fuzz_per_process`` and ``fuzz_two_workers``
of ``ragas-compat bench``.

``measure_fuzz_throughput`` compares the fuzz path with the minimal stub loop on the same work, in
contexts per second *after Ragas is imported* (a long fuzz run is one probe that imports Ragas once
and serves every batch, so the import is amortised away; the ratios measure what is paid per context):

- the work: the first ``n`` (400) cases ``generate_cases(n, seed, ["context_precision_with_reference"])``
  draws, scored on that metric's legacy targets (LLMContextPrecisionWithReference and
  ContextPrecision); contexts = the sum over (case, target) of len(retrieved_contexts), the same
  count on both sides (checked);
- minimal stub loop (one process): ``harness/probe/bench/stub_loop.py`` imports Ragas, then, timed, scores every
  (case, target) with a bare BaseRagasLLM popping pre-rendered verdict replies, each with the
  scripted judge's reason (``protocol.FROZEN_REASON``: Ragas parses the same replies on both sides) (as
  harness/probe/bench/benchmark.py's minimal side) through ``single_turn_ascore``;
  rate = contexts / loop seconds;
- fuzz: as ``ragas-compat fuzz`` does, a ``StartedProbe`` is started and
  ``run_fuzz(n, seed, [metric], workers=W, started=probe)`` called at once (the cases are generated
  while the probe imports Ragas); timed from the later of the call and the end of the probe's
  import (its ``imported.txt``, watched by ``ImportWatch``) to the classified rows: what the host
  still does after the import, the probe scoring in W forked processes with the scripted judge,
  reading its output and classifying every pair against the reference; rate = contexts / that time;
- ``fuzz_per_process`` = fuzz rate with W = 1 / stub loop rate (target >= 0.9);
  ``fuzz_two_workers`` = fuzz rate with W = 2 / stub loop rate (one process) (target >= 1.7);
- ``stub_loop_two_processes`` = two stub loops started together (each waits, imported, for one go
  file) over one: both loops' contexts over the longer loop's seconds, per the one loop's rate. Two
  processes can at best double one; what this machine gives instead caps ``fuzz_two_workers`` (its
  workers are two such processes doing more work each), whatever the harness does (no target: context);
- each repetition measures the stub loop, W = 1, W = 2 and the two loops once, the order rotating with
  the repetition; a ratio pairs the stub loop and the other side of the same repetition.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ragas_compat.probe.protocol import ENTRY_STUB_LOOP, FROZEN_REASON, IMPORTED_FILE, probe_command
from ragas_compat.runner import StartedProbe
from ragas_compat.tools.bench_rows import BenchRow
from ragas_compat.tools.fuzz.generator import generate_cases, targets_for
from ragas_compat.tools.fuzz.runner import FuzzProbeFailed, batch_timeout, run_fuzz

THROUGHPUT_CASES = 400
THROUGHPUT_METRIC = "context_precision_with_reference"
PER_PROCESS_TARGET, TWO_WORKERS_TARGET = 0.9, 1.7
TWO_LOOPS = "two stub loops"  # the side of the row stub_loop_two_processes
IMPORT_WAIT = 300.0  # seconds a fuzz probe may take to import Ragas before the measurement gives up

class MeasurementFailed(RuntimeError):
    pass


def _stub_request(n: int, seed: int) -> dict:
    cases = generate_cases(n, seed, (THROUGHPUT_METRIC,))
    classes = [target.split(":", 1)[1] for target in targets_for([THROUGHPUT_METRIC])]
    return {"cases": cases, "classes": classes, "verdicts": THROUGHPUT_METRIC, "reason": FROZEN_REASON,
            "module": "ragas.metrics._context_precision"}


def _stub_report(proc: subprocess.Popen, stdout: str, stderr: str) -> tuple[int, float]:
    if proc.returncode != 0:
        tail = " | ".join(stderr.strip().splitlines()[-3:]) or "(no output)"
        raise MeasurementFailed(f"stub loop exited {proc.returncode}: {tail}")
    report = json.loads(stdout)
    return report["contexts"], report["loop_seconds"]


def stub_loops(n: int, seed: int, *, python: str, processes: int = 1) -> list[tuple[int, float]]:
    """(contexts, seconds of the loop after the import) of the minimal stub loop on the throughput work, in
    each of ``processes`` processes whose loops start together (each waits, imported, for one go file)."""
    with tempfile.TemporaryDirectory(prefix="ragas-compat-bench-stub-") as tmp:
        folder, go = Path(tmp), Path(tmp) / "go"
        requests = []
        for index in range(processes):
            ready = folder / f"ready-{index}"
            path = folder / f"request-{index}.json"
            together = {"ready": str(ready), "go": str(go)} if processes > 1 else {}
            path.write_text(json.dumps({**_stub_request(n, seed), **together}), encoding="utf-8")
            requests.append((path, ready))
        procs = [subprocess.Popen(probe_command(python, ENTRY_STUB_LOOP, str(path)), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                                  env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"}) for path, _ in requests]
        try:
            if processes > 1:
                waited_until = time.monotonic() + IMPORT_WAIT
                while not all(ready.exists() for _, ready in requests):
                    if time.monotonic() > waited_until or any(p.poll() is not None for p in procs):
                        raise MeasurementFailed(f"the {processes} stub loops were not all ready within "
                                                f"{IMPORT_WAIT:.0f} s (or one exited)")
                    time.sleep(0.005)
                go.touch()
            outputs = [proc.communicate(timeout=1800) for proc in procs]
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        return [_stub_report(proc, *output) for proc, output in zip(procs, outputs, strict=True)]


def stub_loop(n: int, seed: int, *, python: str) -> tuple[int, float]:
    """(contexts, seconds of the loop after the import) of the minimal stub loop on the throughput work."""
    return stub_loops(n, seed, python=python)[0]


class ImportWatch:
    """When a started probe has imported Ragas: a thread polls for its ``imported.txt`` every
    POLL seconds and notes the ``time.perf_counter()`` it appeared at (``at``, None until then)."""

    POLL = 0.002

    def __init__(self, probe: StartedProbe) -> None:
        if probe.error is not None or probe.folder is None:
            raise MeasurementFailed(f"fuzz probe did not start: {probe.error}")
        self.marker = Path(probe.folder.name) / IMPORTED_FILE
        self.at: float | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="import-watch", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.is_set():
            if self.marker.exists():
                self.at = time.perf_counter()
                return
            time.sleep(self.POLL)

    def stop(self) -> float | None:
        self.done.set()
        self.thread.join()
        return self.at


def fuzz_after_import(n: int, seed: int, workers: int, *, python: str) -> tuple[int, float]:
    """(contexts scored, seconds of ``run_fuzz`` after its probe imported Ragas). The probe is started
    and ``run_fuzz`` called at once, as ``ragas-compat fuzz`` does (the cases are generated while the
    probe imports); the time counts from the later of the call and the end of the import."""
    probe = StartedProbe(python=python, timeout=IMPORT_WAIT + batch_timeout(n, None))
    try:
        watch = ImportWatch(probe)
    except BaseException:
        probe.close()
        raise
    called = time.perf_counter()
    try:
        run = run_fuzz(n, seed, [THROUGHPUT_METRIC], workers=workers, python=python, started=probe)
    finally:
        imported = watch.stop()
    ended = time.perf_counter()
    if imported is None:
        raise MeasurementFailed("the fuzz probe finished without saying it had imported Ragas")
    return run.contexts_scored, ended - max(called, imported)


def measure_fuzz_throughput(repetitions: int, *, n: int = THROUGHPUT_CASES, seed: int = 0,
                            python: str = sys.executable) -> list[BenchRow]:
    """The rows ``fuzz_per_process`` and ``fuzz_two_workers`` (see the module docstring). Samples are
    the fuzz run's seconds, the baseline the stub loop's; ratios are contexts per second over the
    stub loop's, in the same repetition (higher is better: the targets are floors)."""
    rows = {1: BenchRow("fuzz_per_process", f"fuzz vs minimal stub loop, 1 worker ({n} cases, contexts/s)",
                        target=PER_PROCESS_TARGET, at_least=True),
            2: BenchRow("fuzz_two_workers", f"fuzz 2 workers vs minimal stub loop ({n} cases, contexts/s)",
                        target=TWO_WORKERS_TARGET, at_least=True),
            TWO_LOOPS: BenchRow("stub_loop_two_processes", f"two minimal stub loops at once vs one ({n} cases each, "
                                "contexts/s): this machine's own scaling, the ceiling of fuzz_two_workers")}
    sides = ("stub", 1, 2, TWO_LOOPS)
    load = [os.getloadavg()[0]]
    try:
        for repetition in range(repetitions):
            measured: dict[Any, tuple[int, float]] = {}
            for side in sides[repetition % len(sides):] + sides[:repetition % len(sides)]:
                if side == "stub":
                    measured[side] = stub_loop(n, seed, python=python)
                elif side == TWO_LOOPS:  # both loops' contexts over the longer loop's time
                    together = stub_loops(n, seed, python=python, processes=2)
                    measured[side] = (sum(c for c, _ in together), max(s for _, s in together))
                else:
                    measured[side] = fuzz_after_import(n, seed, side, python=python)
            stub_contexts, stub_seconds = measured["stub"]
            for side, row in rows.items():
                contexts, seconds = measured[side]
                expected = 2 * stub_contexts if side == TWO_LOOPS else stub_contexts
                if contexts != expected:
                    raise MeasurementFailed(f"{row.id} scored {contexts} contexts, expected {expected}")
                row.samples.append(seconds)
                row.baseline.append(stub_seconds)
                row.ratios.append((contexts / seconds) / (stub_contexts / stub_seconds))
            load.append(os.getloadavg()[0])
    except (MeasurementFailed, FuzzProbeFailed, subprocess.TimeoutExpired, OSError) as exc:
        return [BenchRow(row.id, row.measurement, reason=str(exc)) for row in rows.values()]
    for row in rows.values():
        row.extra.update(contexts=stub_contexts, cases=n, seed=seed, metric=THROUGHPUT_METRIC,
                         load_average_1min=load)
        row.notes.append(f"{stub_contexts} contexts per side; rates after the Ragas import; the order of "
                         "stub loop, 1 worker, 2 workers and two stub loops at once rotates with the repetition")
    return [rows[1], rows[2], rows[TWO_LOOPS]]
