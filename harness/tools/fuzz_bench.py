"""Benchmarks of the fuzz path and of AP scaling (numbers for the issue note, never asserted).

Usage: ``python -m ragas_compat.tools.fuzz_bench [--n 2000] [--seed 0] [--skip-fuzz] [--skip-scaling] [--json FILE]``

1. fuzz throughput: ``run_fuzz`` with 1 and with 2 workers on the same seed, every metric, then
   on the context-precision (LLM) targets only; wall seconds, scored contexts per second, the
   children's CPU seconds (``getrusage``), and the 2-vs-1 speed-up. Next to it, the minimal
   hand-written stub loop of ``harness/probe/bench/benchmark.py`` (one Ragas import, a bare
   BaseRagasLLM popping replies, LLMContextPrecisionWithReference) in contexts per second.
2. reference throughput on one list of 10**6 labels: the float replica of Ragas's arithmetic
   (random labels) and the exact profile (``context_precision_profile``) on all-relevant labels;
   the exact profile on random labels up to 10**5 only (see ``reference_million``).
3. AP scaling, K = 10, 100, 1000, 10000: Ragas 0.4.3's legacy ``_calculate_average_precision``
   (timed in a subprocess with ``--python``; Ragas is never imported here) against the
   reference; 10**6 for the reference only. Reuses the timing helpers of ``ragas_compat.tools.bench``.

Load from other processes on the machine changes every wall-time number; the load average at
start and end is printed with the results.

The two throughput rows of ``ragas-compat bench`` are measured by ``ragas_compat.tools.fuzz.throughput``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import Counter
from typing import Any

from ragas_compat.metrics.context_precision import context_precision_profile, ragas_float_average_precision
from ragas_compat.tools.bench import (
    measure_probe_overhead,
    measure_ragas_legacy_scaling,
    measure_reference_float_scaling,
    measure_reference_scaling,
    random_labels,
)
from ragas_compat.tools.fuzz.runner import run_fuzz
from ragas_compat.tools.fuzz.throughput import measure_fuzz_throughput

SCALING_KS = (10, 100, 1000, 10_000)
REFERENCE_ONLY_K = 10**6
EXACT_RANDOM_MAX_K = 10**5
CP_METRICS = ("context_precision_with_reference", "context_precision_without_reference")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fuzz_throughput(n: int, seed: int, workers: int, python: str, metrics=None) -> dict[str, Any]:
    cpu = _children_cpu()
    run = run_fuzz(n, seed, metrics, workers=workers, python=python)
    return {"cases": n, "workers": workers, "metrics": list(run.metrics), "probe_processes": len(run.batches),
            "wall_seconds": round(run.seconds, 2), "probe_cpu_seconds": round(_children_cpu() - cpu, 2),
            "contexts_scored": run.contexts_scored, "pairs": len(run.rows),
            "contexts_per_second": round(run.contexts_scored / run.seconds, 1),
            "by_classification": dict(Counter(r.classification.name for r in run.rows))}


def minimal_stub_rate(python: str) -> dict[str, Any]:
    row = measure_probe_overhead(1, cases=40, contexts=5, rounds=3, python=python)
    if row.reason:
        return {"reason": row.reason}
    minimal_ms = row.baseline[0]
    return {"minimal_ms_per_context": minimal_ms, "probe_ms_per_context": row.samples[0],
            "minimal_contexts_per_second": round(1000 / minimal_ms, 1)}


def _timed_once(function) -> float:
    start = time.perf_counter()
    function()
    return round(time.perf_counter() - start, 3)


def reference_million(seed: int = 0) -> dict[str, Any]:
    """One list of 10**6 labels. The float replica is one O(K) pass. The exact profile does O(K)
    Fraction additions, but on random labels the numerator's denominator grows with the lcm of the
    positive ranks (hundreds of thousands of digits at K = 10**6), so each addition costs more as K
    grows: it is timed on all-relevant labels at 10**6 (integer numerator) and on random labels up to
    EXACT_RANDOM_MAX_K only."""
    labels = random_labels(REFERENCE_ONLY_K, seed)
    exact_random = {k: _timed_once(lambda k=k: context_precision_profile(random_labels(k, seed)))
                    for k in (10**3, 10**4, EXACT_RANDOM_MAX_K)}
    return {"k": REFERENCE_ONLY_K,
            "float_replica_random_seconds": _timed_once(lambda: ragas_float_average_precision(labels)),
            "exact_profile_all_relevant_seconds": _timed_once(lambda: context_precision_profile([1] * REFERENCE_ONLY_K)),
            "exact_profile_random_seconds_by_k": exact_random}


def scaling_table(python: str, repetitions: int = 3) -> list[dict[str, Any]]:
    """Median seconds per call by K (Ragas legacy and reference exact up to 10**4, the reference's
    float replica also at 10**6), plus the fitted growth exponents."""
    ragas = measure_ragas_legacy_scaling(SCALING_KS, repetitions, python=python)
    exact = measure_reference_scaling(SCALING_KS, repetitions)
    replica = measure_reference_float_scaling((*SCALING_KS, REFERENCE_ONLY_K), repetitions)
    by_k: dict[int, dict[str, Any]] = {}
    for name, row in (("ragas_legacy_s", ragas), ("reference_exact_s", exact), ("reference_float_s", replica)):
        if row.reason:
            by_k.setdefault(0, {})[name] = row.reason
            continue
        for point in row.points:
            by_k.setdefault(point["k"], {"k": point["k"]})[name] = point["median"]
    table = [by_k[k] for k in sorted(k for k in by_k if k)]
    notes = {"exponents": {"ragas_legacy": ragas.exponent, "reference_exact": exact.exponent,
                           "reference_float": replica.exponent},
             "ragas_values_agree": ragas.extra.get("values_agree_with_reference_float"),
             "problems": by_k.get(0, {})}
    return table + [notes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="cases per fuzz throughput run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--python", default=sys.executable, help="interpreter whose Ragas is timed")
    parser.add_argument("--skip-fuzz", action="store_true")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"load_average_start": os.getloadavg(), "cpus": os.cpu_count()}
    if not args.skip_fuzz:
        results["minimal_stub"] = minimal_stub_rate(args.python)
        results["fuzz"] = [fuzz_throughput(args.n, args.seed, w, args.python) for w in (1, 2)]
        results["fuzz_context_precision_only"] = [fuzz_throughput(args.n, args.seed, w, args.python, CP_METRICS)
                                                  for w in (1, 2)]
        results["fuzz_vs_stub_loop"] = [row.to_json() for row in measure_fuzz_throughput(1, python=args.python)]
        for key in ("fuzz", "fuzz_context_precision_only"):
            one, two = results[key]
            results[f"{key}_speedup_2_vs_1"] = round(two["contexts_per_second"] / one["contexts_per_second"], 2)
    results["reference_1e6"] = reference_million(args.seed)
    if not args.skip_scaling:
        results["scaling"] = scaling_table(args.python)
    results["load_average_end"] = os.getloadavg()
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
