"""Benchmarks behind ``ragas-compat bench``: one function per measurement, ratios within one run.

Every measurement runs in this process tree, alternating the measured side and its baseline over
several repetitions, and is summarised as median and min–max (shared machines are noisy, so
the ratio of two sides measured side by side is the number to read, not an absolute time).
Ragas is never imported here: whatever touches Ragas runs in a subprocess of ``python``.

1. run vs floor      ``ragas-compat run`` on the bundled suite / ``python -c "import ragas.metrics"``
                     (ratio per alternated pair; target <= 1.3); the same for ``run --metric
                     faithfulness`` (one metric, both APIs and evaluate()); and, without a target,
                     ``run`` / importing AUDIT_IMPORTS (what the audit's probe imports before it
                     can score every class: the floor this machine allows); and ``run`` /
                     harness/probe/bench/floor.py, Ragas's own work: every (case, target) pair of the
                     bundled suite scored through Ragas with the probe's frozen judge in one process,
                     nothing else (target <= 1.1). With ``--quick`` the rows against the three
                     floors share one run per repetition (``BenchPlan.share_run``) and the row of
                     ``run --metric faithfulness`` is not measured (``BenchPlan.one_metric_run``).
2. probe overhead    harness/probe/bench/benchmark.py: probe ms per scored context / a minimal
                     hand-written stub loop on the same Ragas class and verdicts (ratio of the
                     median round of each invocation; target <= 1.1).
3. scaling           seconds per call of Ragas's legacy ``_calculate_average_precision`` and of the
                     reference ``context_precision_profile`` at growing K; growth exponent = slope of
                     the least-squares line through (log K, log median seconds).
4. matrix            a warm ``ragas-compat matrix`` over the cached environments / the sum of
                     single-version ``ragas-compat run --python ENV`` (target <= 1.2); otherwise a
                     row "not measured: <reason>".
5. scale             ``ragas_compat.tools.scale_bench``: marginal time per case, peak memory and
                     report.json size of the bundled suite copied to 2,000 cases, against the
                     bundled suite's in the same run.
6. fuzz throughput   ``ragas_compat.tools.fuzz.throughput``: fuzz contexts per second at 400 cases with 1 and
                     with 2 workers / the minimal stub loop's in one process, both after the Ragas
                     import (targets >= 0.9 and >= 1.7: floors).
7. record            ``ragas_compat.tools.bench_record``: ``record``'s samples per second / Ragas's own
                     ``evaluate()``'s on the same samples and judged metrics, both against one loopback
                     judge adding 100 ms per call (target >= 0.9: a floor).

``run_bench(only=...)`` (``bench --row ID``) runs just the measurements of the named rows.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragas_compat.atomic_file import write_atomically
from ragas_compat.metrics.context_precision import context_precision_profile, ragas_float_average_precision
from ragas_compat.probe.protocol import ENTRY_BENCHMARK, probe_command
from ragas_compat.runner import request_targets
from ragas_compat.tools.bench_rows import BenchRow, summarize
from ragas_compat.tools.scale_bench import measure_scale

BENCH_FORMAT = 1
RUN_TARGET, PROBE_TARGET, MATRIX_TARGET = 1.3, 1.1, 1.2
RAGAS_WORK_TARGET = 1.1  # run / floor.py (Ragas's own scoring of the bundled suite)
RELEVANT_SHARE = 0.5  # share of relevant labels in the scaling benchmark's random label lists


# ---------------------------------------------------------------- pure helpers

def fit_growth_exponent(ks: Sequence[float], seconds: Sequence[float]) -> float:
    """Slope b of the least-squares line log(seconds) = a + b log(K): time grows like K^b.

    Needs at least two distinct K and positive times (ValueError otherwise).
    """
    if len(ks) != len(seconds):
        raise ValueError("ks and seconds differ in length")
    if len(set(ks)) < 2:
        raise ValueError("need at least two distinct K")
    if any(k <= 0 for k in ks) or any(s <= 0 for s in seconds):
        raise ValueError("K and seconds must be positive")
    xs = [math.log(k) for k in ks]
    ys = [math.log(s) for s in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def random_labels(k: int, seed: int = 0) -> list[int]:
    """K pseudo-random 0/1 labels, relevant with probability RELEVANT_SHARE (same list for the same K, seed)."""
    rng = random.Random(seed * 1_000_003 + k)
    return [int(rng.random() < RELEVANT_SHARE) for _ in range(k)]


def seconds_per_call(function: Callable[[], object], calls: int) -> float:
    """Wall time of ``calls`` calls of ``function``, divided by ``calls``."""
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def calls_for(function: Callable[[], object], min_seconds: float) -> int:
    """How many calls make one timing last at least ``min_seconds`` (one call timed to decide)."""
    once = seconds_per_call(function, 1)
    return max(1, math.ceil(min_seconds / max(once, 1e-9)))


# ---------------------------------------------------------------- rows

def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["RAGAS_DO_NOT_TRACK"] = "true"
    return env


def _timed(command: list[str], *, cwd: str | None = None, stdin: str | None = None,
           timeout: float = 1800.0) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=_environment(), input=stdin, capture_output=True,
                          text=True, timeout=timeout, stdin=None if stdin is not None else subprocess.DEVNULL)
    return time.perf_counter() - start, proc


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "(no output)"


# ---------------------------------------------------------------- 1. run vs floor

ONE_METRIC = "faithfulness"  # run_one_metric_vs_floor: an audit of one metric (both APIs and evaluate())
# What the default audit's probe imports before it can score every class (``-X importtime`` of the probe
# on the bundled suite, Ragas 0.4.3): Ragas's metrics and its collections, then what its string metrics
# import on first use - RougeScore rouge_score (whose nltk brings scipy and scikit-learn: about 0.96 s),
# BleuScore and ChrfScore sacrebleu, NonLLMStringSimilarity rapidfuzz. One process imports them one
# after another, so no audit that scores those classes can take less.
AUDIT_IMPORTS = ("ragas.metrics", "ragas.metrics.collections", "rouge_score.rouge_scorer", "sacrebleu", "rapidfuzz")


def import_command(python: str, modules: Sequence[str]) -> list[str]:
    """``python -c`` importing ``modules`` in order: the first must import (else the command fails),
    a later one that cannot be imported is skipped (an audit in that environment does not import it
    either). One module: exactly ``python -c "import <module>"``."""
    first, *rest = modules
    script = f"import {first}"
    if rest:
        script += (f"\nimport importlib\nfor name in {tuple(rest)!r}:\n"
                   "    try:\n        importlib.import_module(name)\n    except ImportError:\n        pass\n")
    return [python, "-c", script]


ENTRY_FLOOR = "bench.floor"  # harness/probe/bench/floor.py: the bundled suite's pairs scored by Ragas alone


def floor_request(path: Path) -> Path:
    """Write the request of ``bench.floor`` at ``path``: the bundled suite's cases and the targets a
    default run requests for them (``runner.request_targets``)."""
    from ragas_compat.cases import load_default_suite

    cases = [case.raw for case in load_default_suite().cases]
    path.write_text(json.dumps({"cases": cases, "targets": request_targets(None, cases)}), encoding="utf-8")
    return path


FLOORS = ("import", "audit_imports", "ragas_work")  # the floors a run is timed against (rows below)


def _floor_row(floor: str, metric: str | None) -> BenchRow:
    """The (empty) row of ``run`` (only ``metric`` when given) against ``floor`` (one of FLOORS)."""
    if floor == "ragas_work":
        return BenchRow("run_vs_ragas_floor", "run vs Ragas's own work (floor.py)", target=RAGAS_WORK_TARGET,
                        notes=["the floor imports ragas.metrics and its collections and scores every (case, target) "
                               "pair of the bundled suite in one process, each through Ragas with the probe's frozen "
                               "judge; no evaluate() pass, reference, classification or report (run: default "
                               "--workers, one per core)"])
    if floor == "audit_imports":
        return BenchRow("run_vs_import_floor", "run vs the audit's imports",
                        notes=["the floor imports " + ", ".join(AUDIT_IMPORTS) + " in one process (no target: "
                               "what the default audit cannot go below on this machine)"])
    if floor != "import":
        raise ValueError(f"unknown floor {floor!r}; floors: {', '.join(FLOORS)}")
    if metric is None:
        return BenchRow("run_vs_floor", "run vs floor (import ragas.metrics)", target=RUN_TARGET)
    return BenchRow("run_one_metric_vs_floor", f"run --metric {metric} vs floor", target=RUN_TARGET)


def measure_run_vs_floors(repetitions: int, floors: Sequence[str], *, python: str = sys.executable,
                          warm_up: bool = True, metric: str | None = None) -> list[BenchRow]:
    """Wall time of ``ragas-compat run`` (bundled suite, --out to a temp folder; only ``metric`` when
    given) against each of ``floors``, one row each, in the order given: ``import`` is
    ``python -c "import ragas.metrics"``; ``audit_imports`` imports every module of AUDIT_IMPORTS (a
    floor without target); ``ragas_work`` is harness/probe/bench/floor.py, every (case, target) pair of
    the bundled suite scored by Ragas with the same stub judge and nothing else (target
    RAGAS_WORK_TARGET). Each repetition times one run and each floor once, the run first in even
    repetitions and last in odd ones (floors reversed), so with one floor the pair alternates as a
    pair; with several, the rows share each repetition's run (``bench --quick``: one run instead of
    one per row). ``warm_up`` runs each floor once untimed first. A floor that fails makes its own row
    "not measured"; a run that fails, every row."""
    rows = {floor: _floor_row(floor, metric) for floor in floors}
    only = ["--metric", metric] if metric else []
    floor_reports: list[dict] = []
    failed: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="ragas-compat-bench-") as tmp:
        commands = {floor: import_command(python, AUDIT_IMPORTS if floor == "audit_imports" else ("ragas.metrics",))
                    for floor in floors}
        if "ragas_work" in commands:
            commands["ragas_work"] = probe_command(python, ENTRY_FLOOR,
                                                   str(floor_request(Path(tmp) / "floor-request.json")))

        def run_once(index: int) -> float:
            seconds, proc = _timed([python, "-m", "ragas_compat", "run", "--out", str(Path(tmp) / f"run-{index}"), *only])
            if proc.returncode not in (0, 1):  # 1 = drift: the run still completed
                raise RuntimeError(f"ragas-compat run exited {proc.returncode}: {_tail(proc.stderr)}")
            return seconds

        def floors_once(order: Sequence[str]) -> dict[str, float]:
            measured = {}
            for floor in order:
                if floor in failed:
                    continue
                try:
                    seconds, proc = _timed(commands[floor])
                except (subprocess.TimeoutExpired, OSError) as exc:
                    failed[floor] = str(exc)
                    continue
                if proc.returncode != 0:
                    label = "floor.py" if floor == "ragas_work" else commands[floor][2].splitlines()[0]
                    failed[floor] = f"the floor ({label}) failed: {_tail(proc.stderr)}"
                    continue
                if floor == "ragas_work":
                    floor_reports.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                measured[floor] = seconds
            return measured

        try:
            if warm_up:
                floors_once(floors)
            for index in range(repetitions):
                if len(failed) == len(rows):  # no floor left to time the run against
                    break
                if index % 2 == 0:
                    run_seconds = run_once(index)
                    floor_seconds = floors_once(floors)
                else:
                    floor_seconds = floors_once(floors[::-1])
                    run_seconds = run_once(index)
                for floor, seconds in floor_seconds.items():
                    rows[floor].samples.append(run_seconds)
                    rows[floor].baseline.append(seconds)
                    rows[floor].ratios.append(run_seconds / seconds)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
            return [BenchRow(row.id, row.measurement, reason=str(exc)) for row in rows.values()]
    if floor_reports:
        last = floor_reports[-1]
        rows["ragas_work"].extra["floor"] = last
        rows["ragas_work"].notes.append(f"the floor scored {last['pairs']} pairs ({last['errors']} raised)")
    if len(rows) > 1:
        for row in rows.values():
            row.notes.append("each repetition's run is shared with the rows " + ", ".join(
                other.id for other in rows.values() if other is not row))
    return [BenchRow(row.id, row.measurement, reason=failed[floor]) if floor in failed else row
            for floor, row in rows.items()]


def measure_run_vs_floor(repetitions: int, *, python: str = sys.executable, warm_up: bool = True,
                         metric: str | None = None, audit_imports: bool = False,
                         ragas_work: bool = False) -> BenchRow:
    """``measure_run_vs_floors`` against one floor: ``import`` (default), or AUDIT_IMPORTS with
    ``audit_imports``, or floor.py with ``ragas_work``."""
    floor = "ragas_work" if ragas_work else "audit_imports" if audit_imports else "import"
    return measure_run_vs_floors(repetitions, (floor,), python=python, warm_up=warm_up, metric=metric)[0]


# ---------------------------------------------------------------- 2. probe overhead

def measure_probe_overhead(invocations: int, *, cases: int, contexts: int, rounds: int,
                           python: str = sys.executable) -> BenchRow:
    """harness/probe/bench/benchmark.py run ``invocations`` times (each: one Ragas import, probe and
    minimal stub interleaved case by case for ``rounds`` rounds). Samples: probe ms per context
    (best round); baseline: minimal ms per context (best round); ratio: 1 + the median round's
    overhead of each invocation."""
    row = BenchRow("probe_overhead", "probe overhead per scored context", unit="ms", target=PROBE_TARGET)
    reports = []
    for _ in range(invocations):
        try:
            target = json.dumps(request_targets(["legacy:LLMContextPrecisionWithReference"])[0])
            _, proc = _timed(probe_command(python, ENTRY_BENCHMARK, "--target", target, "--cases", str(cases),
                                           "--contexts", str(contexts), "--rounds", str(rounds)))
        except (subprocess.TimeoutExpired, OSError) as exc:
            return BenchRow(row.id, row.measurement, reason=f"bench.benchmark: {exc}")
        if proc.returncode != 0:
            return BenchRow(row.id, row.measurement,
                            reason=f"bench.benchmark exited {proc.returncode}: {_tail(proc.stderr)}")
        report = json.loads(proc.stdout)
        reports.append(report)
        row.samples.append(report["probe_ms_per_context"])
        row.baseline.append(report["minimal_ms_per_context"])
        row.ratios.append(1 + report["overhead_median_round"])
    row.extra["invocations"] = reports
    row.extra["overhead_best_rounds"] = [r["overhead_best_rounds"] for r in reports]
    row.notes.append(f"{cases} cases × {contexts} contexts × {rounds} rounds per invocation")
    attempts = [a for r in reports for a in r.get("network_attempts", [])]
    if attempts:
        row.notes.append(f"network attempts blocked: {len(attempts)}")
    return row


# ---------------------------------------------------------------- 3. scaling

def _points(ks: Sequence[int], seconds: dict[int, list[float]]) -> list[dict]:
    return [{"k": k, **summarize(seconds[k]).to_json(), "samples": seconds[k]} for k in ks]


def _fit(row: BenchRow) -> BenchRow:
    ks = [p["k"] for p in row.points]
    medians = [p["median"] for p in row.points]
    row.exponent = fit_growth_exponent(ks, medians)
    row.tail_exponent = fit_growth_exponent(ks[-2:], medians[-2:])
    largest = row.points[-1]
    row.samples = list(largest["samples"])
    row.extra["largest_k"] = largest["k"]
    return row


def time_scaling(functions: dict[int, Callable[[], object]], repetitions: int, min_seconds: float) -> dict[int, list[float]]:
    """Seconds per call for each K: the number of calls per timing is fixed once per K (at least
    ``min_seconds`` a timing), then repetitions loop over every K, the K order flipping each time."""
    ks = list(functions)
    calls = {k: calls_for(functions[k], min_seconds) for k in ks}
    seconds: dict[int, list[float]] = {k: [] for k in ks}
    for repetition in range(repetitions):
        for k in (ks if repetition % 2 == 0 else ks[::-1]):
            seconds[k].append(seconds_per_call(functions[k], calls[k]))
    return seconds


def measure_reference_scaling(ks: Sequence[int], repetitions: int, *, labels: str = "random",
                              min_seconds: float = 0.05) -> BenchRow:
    """Seconds per call of the reference ``context_precision_profile`` (exact Fraction numerator
    plus Ragas's float) on ``labels``: "random" (half relevant) or "all_relevant" (every term
    h_i / i is exactly 1, so the exact numerator stays an integer)."""
    make = {"random": random_labels, "all_relevant": lambda k, seed=0: [1] * k}[labels]
    title = {"random": "reference AP exact, random labels",
             "all_relevant": "reference AP exact, all-relevant labels"}[labels]
    row = BenchRow(f"scaling_reference_{labels}", f"scaling: {title}")
    functions = {k: (lambda values=make(k): context_precision_profile(values)) for k in ks}
    row.points = _points(ks, time_scaling(functions, repetitions, min_seconds))
    return _fit(row)


def measure_reference_float_scaling(ks: Sequence[int], repetitions: int, *, min_seconds: float = 0.05) -> BenchRow:
    """Seconds per call of ``ragas_float_average_precision`` (the reference's one-pass replica of
    Ragas's float arithmetic, same result as Ragas) on random labels."""
    row = BenchRow("scaling_reference_float", "scaling: reference float AP, random labels")
    functions = {k: (lambda values=random_labels(k): ragas_float_average_precision(values)) for k in ks}
    row.points = _points(ks, time_scaling(functions, repetitions, min_seconds))
    return _fit(row)


RAGAS_AP_CHILD = r'''
import json, math, os, sys, time, warnings
os.environ["RAGAS_DO_NOT_TRACK"] = "true"
request = json.load(sys.stdin)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ragas
    from ragas.metrics._context_precision import LLMContextPrecisionWithReference, Verification
metric = LLMContextPrecisionWithReference()
inputs = {int(k): [Verification(reason="r", verdict=v) for v in labels] for k, labels in request["labels"].items()}
def per_call(k, calls):
    start = time.perf_counter()
    for _ in range(calls):
        metric._calculate_average_precision(inputs[k])
    return (time.perf_counter() - start) / calls
ks = sorted(inputs)
calls = {k: max(1, math.ceil(request["min_seconds"] / max(per_call(k, 1), 1e-9))) for k in ks}
seconds = {k: [] for k in ks}
for repetition in range(request["repetitions"]):
    for k in (ks if repetition % 2 == 0 else ks[::-1]):
        seconds[k].append(per_call(k, calls[k]))
values = {k: repr(float(metric._calculate_average_precision(inputs[k]))) for k in ks}
print(json.dumps({"ragas_version": ragas.__version__, "seconds": seconds, "values": values}))
'''


def measure_ragas_legacy_scaling(ks: Sequence[int], repetitions: int, *, python: str = sys.executable,
                                 min_seconds: float = 0.05) -> BenchRow:
    """Seconds per call of Ragas's legacy ``LLMContextPrecisionWithReference._calculate_average_precision``
    (prefix sums re-summed per position: O(K^2)) on the same random labels, timed in a subprocess;
    each value is checked against the reference's Ragas-float replica."""
    row = BenchRow("scaling_ragas_legacy", "scaling: Ragas legacy AP, random labels")
    labels = {k: random_labels(k) for k in ks}
    request = json.dumps({"labels": labels, "repetitions": repetitions, "min_seconds": min_seconds})
    try:
        _, proc = _timed([python, "-c", RAGAS_AP_CHILD], stdin=request)
    except (subprocess.TimeoutExpired, OSError) as exc:
        return BenchRow(row.id, row.measurement, reason=str(exc))
    if proc.returncode != 0:
        return BenchRow(row.id, row.measurement, reason=f"Ragas subprocess exited {proc.returncode}: {_tail(proc.stderr)}")
    report = json.loads(proc.stdout)
    seconds = {int(k): v for k, v in report["seconds"].items()}
    row.points = _points(ks, seconds)
    disagreements = [k for k in ks if float(report["values"][str(k)])
                     != context_precision_profile(labels[k]).context_ap_ragas_float]
    row.extra["ragas_version"] = report["ragas_version"]
    row.extra["values_agree_with_reference_float"] = not disagreements
    if disagreements:
        row.notes.append(f"Ragas value differs from the reference's Ragas-float replica at K = {disagreements}")
    else:
        row.notes.append(f"Ragas {report['ragas_version']}: every value equals the reference's Ragas-float replica")
    return _fit(row)


# ---------------------------------------------------------------- 4. matrix warm vs cold

def environments_dir() -> Path:
    """Where ``ragas_compat.tools.matrix`` caches its virtualenvs (~/.cache/ragas-compat/envs, XDG_CACHE_HOME honoured)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "ragas-compat" / "envs"


def built_environments(folder: Path) -> dict[str, str]:
    """Ragas version -> interpreter, for every environment under ``folder`` whose python has Ragas
    installed (read from package metadata in a subprocess; Ragas itself is not imported)."""
    found: dict[str, str] = {}
    pythons = sorted(folder.glob("*/bin/python")) + sorted(folder.glob("*/Scripts/python.exe"))
    for python in pythons:
        try:
            proc = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('ragas'))"],
                                  capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (subprocess.TimeoutExpired, OSError):
            continue
        if proc.returncode == 0 and proc.stdout.strip():
            found.setdefault(proc.stdout.strip(), str(python))
    return found


def _version_key(text: str) -> tuple:
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(text), text)
    except InvalidVersion:
        return (1, None, text)


def measure_matrix_warm_vs_cold(repetitions: int, *, python: str = sys.executable, skip: str | None = None,
                                cli: Sequence[str] | None = None) -> BenchRow:
    """A warm ``ragas-compat matrix --versions V1,V2,...`` vs the sum of ``ragas-compat run --python
    ENV_V`` over the same environments, alternated. Not measured (with the reason) when ``skip``
    says so, ragas_compat.tools.matrix is missing, no environment is built, or a command fails. ``cli`` is the
    command line that starts ragas-compat (default ``python -m ragas_compat``)."""
    row = BenchRow("matrix_warm_vs_cold", "matrix warm vs single-version runs", target=MATRIX_TARGET)

    def not_measured(reason: str) -> BenchRow:
        return BenchRow(row.id, row.measurement, reason=reason)

    cli = list(cli or (python, "-m", "ragas_compat"))
    if importlib.util.find_spec("ragas_compat.tools.matrix") is None:
        return not_measured("ragas_compat.tools.matrix is not importable (the matrix is not built yet)")
    folder = environments_dir()
    envs = built_environments(folder) if folder.is_dir() else {}
    if not envs:
        return not_measured(f"no built environments under {folder}")
    if skip:
        return not_measured(f"{skip} ({len(envs)} environment(s) found: {', '.join(sorted(envs, key=_version_key))})")
    try:
        _, help_proc = _timed([*cli, "matrix", "--help"])
    except (subprocess.TimeoutExpired, OSError) as exc:
        return not_measured(f"ragas-compat matrix --help: {exc}")
    if help_proc.returncode != 0 or "--versions" not in help_proc.stdout or "--out" not in help_proc.stdout:
        return not_measured("`ragas-compat matrix` with --versions/--out is not available here "
                            "(not run, so nothing is written into the repository)")
    versions = sorted(envs, key=_version_key)  # oldest first, as the matrix expects
    with tempfile.TemporaryDirectory(prefix="ragas-compat-bench-matrix-") as tmp:
        def matrix_once(index: int) -> float:
            seconds, proc = _timed([*cli, "matrix", "--versions", ",".join(versions),
                                    "--out", str(Path(tmp) / f"matrix-{index}")])
            if proc.returncode not in (0, 1):
                raise RuntimeError(f"ragas-compat matrix exited {proc.returncode}: {_tail(proc.stderr)}")
            return seconds

        def singles_once(index: int) -> float:
            total = 0.0
            for version in versions:
                seconds, proc = _timed([*cli, "run", "--python", envs[version],
                                        "--out", str(Path(tmp) / f"run-{index}-{version}")])
                if proc.returncode not in (0, 1):
                    raise RuntimeError(f"ragas-compat run --python ({version}) exited {proc.returncode}: "
                                       f"{_tail(proc.stderr)}")
                total += seconds
            return total

        try:
            matrix_once(-1)  # makes sure every environment is warm before timing
            for index in range(repetitions):
                if index % 2 == 0:
                    warm, singles = matrix_once(index), singles_once(index)
                else:
                    singles = singles_once(index)
                    warm = matrix_once(index)
                row.samples.append(warm)
                row.baseline.append(singles)
                row.ratios.append(warm / singles)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
            return not_measured(str(exc))
    row.extra["versions"] = versions
    row.notes.append(f"versions: {', '.join(versions)}")
    return row


# ---------------------------------------------------------------- the whole bench

@dataclass(frozen=True)
class BenchPlan:
    """Repetitions and sizes of one bench run."""

    run_pairs: int
    probe_invocations: int
    probe_cases: int
    probe_rounds: int
    ragas_ks: tuple[int, ...]
    reference_ks: tuple[int, ...]
    reference_large_ks: tuple[int, ...]
    scaling_repetitions: int
    min_seconds: float
    matrix_repetitions: int
    warm_up: bool
    scale_cases: int
    scale_repetitions: int
    share_run: bool = False  # the three rows of ``run`` vs a floor time one run per repetition together
    scale_base_cases: int | None = None  # the scale rows' small run: the bundled suite's first N cases (None: all)
    one_metric_run: bool = True  # False (--quick): run_one_metric_vs_floor not measured unless named by ``only``
    record_samples: int = 96  # samples of the record_vs_evaluate row

    @classmethod
    def for_mode(cls, quick: bool) -> BenchPlan:
        if quick:
            return cls(run_pairs=1, probe_invocations=1, probe_cases=8, probe_rounds=3,
                       ragas_ks=(10, 100, 1_000), reference_ks=(10, 100, 1_000),
                       reference_large_ks=(10, 100, 1_000, 10_000), scaling_repetitions=3,
                       min_seconds=0.01, matrix_repetitions=0, warm_up=False, scale_cases=20, scale_repetitions=1,
                       share_run=True, scale_base_cases=10, one_metric_run=False, record_samples=4)
        return cls(run_pairs=5, probe_invocations=3, probe_cases=40, probe_rounds=5,
                   ragas_ks=(10, 100, 1_000, 10_000), reference_ks=(10, 100, 1_000, 10_000, 100_000),
                   reference_large_ks=(10, 100, 1_000, 10_000, 100_000, 1_000_000), scaling_repetitions=5,
                   min_seconds=0.05, matrix_repetitions=2, warm_up=True, scale_cases=2_000, scale_repetitions=5)


ROW_IDS = ("run_vs_floor", "run_vs_import_floor", "run_vs_ragas_floor", "run_one_metric_vs_floor", "probe_overhead", "scaling_ragas_legacy",
           "scaling_reference_random", "scaling_reference_all_relevant", "scaling_reference_float", "matrix_warm_vs_cold",
           "scale_marginal_time", "scale_peak_memory", "report_size",
           "fuzz_per_process", "fuzz_two_workers", "stub_loop_two_processes", "record_vs_evaluate")
FUZZ_CASES, FUZZ_QUICK_CASES = 400, 40  # fuzz throughput rows (ragas_compat.tools.fuzz.throughput)
QUICK_SKIPS_ONE_METRIC = ("--quick skips it unless asked for with --row (a second audit timed against the same "
                          "floor as run vs floor; the full bench measures it)")


def _not_measured(row: BenchRow, reason: str) -> BenchRow:
    return BenchRow(row.id, row.measurement, reason=reason)


def run_bench(quick: bool, *, python: str = sys.executable,
              progress: Callable[[str], None] = lambda message: None,
              only: Collection[str] | None = None) -> list[BenchRow]:
    """Every measurement, in ROW_IDS order; with ``only`` (row ids), just the measurements that make
    those rows (a measurement making several rows makes them all)."""
    plan = BenchPlan.for_mode(quick)
    unknown = sorted(set(only or ()) - set(ROW_IDS))
    if unknown:
        raise ValueError(f"unknown bench rows {unknown}; rows: {', '.join(ROW_IDS)}")

    def reference_random() -> list[BenchRow]:
        random_row = measure_reference_scaling(plan.reference_ks, plan.scaling_repetitions,
                                               min_seconds=plan.min_seconds)
        skipped = [k for k in plan.reference_large_ks if k > plan.reference_ks[-1]]
        if skipped:
            largest = random_row.points[-1]
            estimate = largest["median"] * (skipped[-1] / largest["k"]) ** random_row.tail_exponent
            random_row.extra["extrapolated_seconds"] = {str(skipped[-1]): estimate}
            random_row.notes.append(
                f"K = {skipped[-1]:,} not timed: the exact numerator's denominator grows with the lcm of the "
                f"relevant ranks (about K bits), so big-integer arithmetic takes over as K grows; the last "
                f"decade's exponent extrapolates to about {estimate:.3g} s per call (more if growth keeps steepening)")
        return [random_row]

    def fuzz() -> list[BenchRow]:
        from ragas_compat.tools.fuzz.throughput import measure_fuzz_throughput

        return measure_fuzz_throughput(1 if quick else 5, n=FUZZ_QUICK_CASES if quick else FUZZ_CASES, python=python)

    def record() -> list[BenchRow]:
        from ragas_compat.tools.bench_record import measure_record_vs_evaluate

        return [measure_record_vs_evaluate(1 if quick else 5, samples=plan.record_samples, python=python)]

    floor_rows = dict(zip(FLOORS, ("run_vs_floor", "run_vs_import_floor", "run_vs_ragas_floor"), strict=True))
    if plan.share_run:  # one run per repetition, timed against every floor that makes a requested row
        wanted = tuple(floor for floor, row_id in floor_rows.items() if only is None or row_id in only)
        run_steps = [(tuple(floor_rows.values()), "run vs floor, the audit's own imports and Ragas's own work (floor.py)",
                      lambda: measure_run_vs_floors(plan.run_pairs, wanted, python=python, warm_up=plan.warm_up))]
    else:
        run_steps = [
            (("run_vs_floor",), "run vs floor",
             lambda: [measure_run_vs_floor(plan.run_pairs, python=python, warm_up=plan.warm_up)]),
            (("run_vs_import_floor",), "run vs the audit's own imports",
             lambda: [measure_run_vs_floor(plan.run_pairs, python=python, warm_up=False, audit_imports=True)]),
            (("run_vs_ragas_floor",), "run vs Ragas's own work (floor.py)",
             lambda: [measure_run_vs_floor(plan.run_pairs, python=python, warm_up=False, ragas_work=True)]),
        ]
    steps: list[tuple[tuple[str, ...], str, Callable[[], list[BenchRow]]]] = [
        *run_steps,
        (("run_one_metric_vs_floor",), f"run --metric {ONE_METRIC} vs floor",
         lambda: [measure_run_vs_floor(plan.run_pairs, python=python, warm_up=False, metric=ONE_METRIC)
                  if plan.one_metric_run or "run_one_metric_vs_floor" in (only or ())
                  else _not_measured(_floor_row("import", ONE_METRIC), QUICK_SKIPS_ONE_METRIC)]),
        (("probe_overhead",), "probe overhead",
         lambda: [measure_probe_overhead(plan.probe_invocations, cases=plan.probe_cases, contexts=5,
                                         rounds=plan.probe_rounds, python=python)]),
        (("scaling_ragas_legacy",), "scaling: Ragas legacy AP (subprocess)",
         lambda: [measure_ragas_legacy_scaling(plan.ragas_ks, plan.scaling_repetitions, python=python,
                                               min_seconds=plan.min_seconds)]),
        (("scaling_reference_random",), "scaling: reference AP", reference_random),
        (("scaling_reference_all_relevant",), "scaling: reference AP, all relevant",
         lambda: [measure_reference_scaling(plan.reference_large_ks, plan.scaling_repetitions,
                                            labels="all_relevant", min_seconds=plan.min_seconds)]),
        (("scaling_reference_float",), "scaling: reference float path",
         lambda: [measure_reference_float_scaling(plan.reference_large_ks, plan.scaling_repetitions,
                                                  min_seconds=plan.min_seconds)]),
        (("matrix_warm_vs_cold",), "matrix warm vs cold",
         lambda: [measure_matrix_warm_vs_cold(
             plan.matrix_repetitions, python=python,
             skip="--quick skips the matrix (each repetition is several full audits)" if quick else None)]),
        (("scale_marginal_time", "scale_peak_memory", "report_size"),
         f"scale: {plan.scale_cases:,} cases vs the bundled suite"
         + ("" if plan.scale_base_cases is None else f"'s first {plan.scale_base_cases:,}"),
         lambda: measure_scale(plan.scale_cases, plan.scale_repetitions, python=python,
                               base_cases=plan.scale_base_cases)),
        (("fuzz_per_process", "fuzz_two_workers", "stub_loop_two_processes"),
         f"fuzz: {FUZZ_QUICK_CASES if quick else FUZZ_CASES} cases, 1 and 2 workers vs the minimal stub loop", fuzz),
        (("record_vs_evaluate",), "record vs Ragas's evaluate() against a loopback judge", record),
    ]
    rows: list[BenchRow] = []
    for ids, message, measure in steps:
        if only is None or set(ids) & set(only):
            progress(message)
            rows += measure()
    return rows


def bench_to_json(rows: Sequence[BenchRow], *, quick: bool, python: str = sys.executable) -> dict:
    import platform

    return {"bench_format": BENCH_FORMAT, "quick": quick,
            "plan": BenchPlan.for_mode(quick).__dict__,
            "python": {"executable": python, "version": platform.python_version()},
            "cpu_count": os.cpu_count(),
            "rows": [row.to_json() for row in rows]}


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` atomically (``atomic_file.write_atomically``: a unique temporary file in the
    same folder, then renamed; a device, FIFO or folder there is refused, not replaced); HarnessInputError
    naming ``--json`` when it cannot be written."""
    write_atomically(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n", "--json")
