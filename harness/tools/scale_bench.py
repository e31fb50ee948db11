"""The audit at scale, for ``ragas-compat bench``: a big suite against the bundled one, in one run.

The big suite is the bundled suite copied until it holds ``cases`` cases (ids suffixed ``~N``).
Small and big runs alternate (``ragas-compat run --workers W --quiet`` in a subprocess; wall time
and the peak resident memory of the largest process of the run, from ``getrusage`` of a wrapper).
Three rows, each a ratio against its floor measured in the same run:

- ``scale_marginal_time``: seconds per case beyond the small run, (T_big - T_small) / (n_big - n_small),
  over the small run's seconds per case T_small / n_small (goal <= 0.4);
- ``scale_peak_memory``: the big run's peak resident memory over the small run's (goal <= 2);
- ``report_size``: the big run's report.json bytes over its case file's bytes (goal <= 10).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ragas_compat.resources import package_json
from ragas_compat.tools.bench_rows import BenchRow

MARGINAL_TARGET, MEMORY_TARGET, REPORT_SIZE_TARGET = 0.4, 2.0, 10.0

# Runs a command and prints "<seconds> <peak RSS KiB of its largest process> <exit code>".
_MEASURE = ("import resource, subprocess, sys, time\n"
            "started = time.perf_counter()\n"
            "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
            "print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n")


def copied_suite(cases: int, base_cases: int | None = None) -> dict:
    """The bundled suite's document with its cases (only its first ``base_cases`` when given) copied
    until there are ``cases`` (at least one copy)."""
    document = package_json("cases/suites/default.json")
    originals = document["cases"][:base_cases]
    copies = []
    while len(copies) < max(cases, len(originals)):
        round_number = len(copies) // len(originals)
        for case in originals[: max(cases, len(originals)) - len(copies)]:
            copies.append({**case, "id": case["id"] if round_number == 0 else f"{case['id']}~{round_number}"})
    return {**document, "cases": copies}


def _measured_run(python: str, case_file: Path, out: Path, workers: int) -> tuple[float, int]:
    """(seconds, peak KiB) of one ``ragas-compat run``; RuntimeError when it did not complete."""
    command = [python, "-c", _MEASURE, python, "-m", "ragas_compat", "run", "--cases", str(case_file), "--out", str(out),
               "--workers", str(workers), "--quiet"]
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"},
                          timeout=3600)
    seconds, peak_kib, code = proc.stdout.split()
    if int(code) not in (0, 1):  # 1 = drift: the run still completed
        raise RuntimeError(f"ragas-compat run on {case_file.name} exited {code}: {proc.stderr[-300:]}")
    return float(seconds), int(peak_kib)


def measure_scale(cases: int, repetitions: int, *, workers: int = 2, python: str = sys.executable,
                  base_cases: int | None = None) -> list[BenchRow]:
    """The three rows of the module docstring, small and big runs alternated ``repetitions`` times. With
    ``base_cases`` (``bench --quick``), the small run is the bundled suite's first ``base_cases`` cases and
    the big one those cases copied to ``cases``."""
    base = "bundled" if base_cases is None else f"the first {base_cases:,} bundled"
    marginal = BenchRow("scale_marginal_time", f"marginal s/case at {cases:,} cases / {base}", unit="s",
                        target=MARGINAL_TARGET)
    memory = BenchRow("scale_peak_memory", f"peak memory at {cases:,} cases / {base}", unit="KiB",
                      target=MEMORY_TARGET)
    size = BenchRow("report_size", f"report.json / case file at {cases:,} cases", unit="bytes",
                    target=REPORT_SIZE_TARGET)
    with tempfile.TemporaryDirectory(prefix="ragas-compat-scale-") as tmp:
        small_doc, big_doc = copied_suite(0, base_cases), copied_suite(cases, base_cases)
        small_file, big_file = Path(tmp) / "small.json", Path(tmp) / "big.json"
        small_file.write_text(json.dumps(small_doc, ensure_ascii=False), encoding="utf-8")
        big_file.write_text(json.dumps(big_doc, ensure_ascii=False), encoding="utf-8")
        n_small, n_big = len(small_doc["cases"]), len(big_doc["cases"])
        try:
            for index in range(repetitions):
                order = [("small", small_file), ("big", big_file)]
                measured = {}
                for name, path in order if index % 2 == 0 else order[::-1]:
                    measured[name] = _measured_run(python, path, Path(tmp) / f"{name}-{index}", workers)
                (t_small, m_small), (t_big, m_big) = measured["small"], measured["big"]
                marginal.samples.append((t_big - t_small) / (n_big - n_small))
                marginal.baseline.append(t_small / n_small)
                marginal.ratios.append(marginal.samples[-1] / marginal.baseline[-1])
                memory.samples.append(m_big)
                memory.baseline.append(m_small)
                memory.ratios.append(m_big / m_small)
            report_bytes = (Path(tmp) / f"big-{repetitions - 1}" / "report.json").stat().st_size
            size.samples.append(report_bytes)
            size.baseline.append(big_file.stat().st_size)
            size.ratios.append(report_bytes / big_file.stat().st_size)
        except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as exc:
            return [BenchRow(row.id, row.measurement, reason=str(exc)) for row in (marginal, memory, size)]
    for row in (marginal, memory, size):
        row.extra.update(cases_small=n_small, cases_big=n_big, workers=workers)
        if base_cases is not None:
            row.notes.append(f"the small run: the bundled suite's first {n_small:,} cases (not the whole suite)")
    return [marginal, memory, size]
