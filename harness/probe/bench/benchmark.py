"""Benchmark: the probe's cost per retrieved context vs a minimal hand-written stub loop.

Usage: ``ragas_compat_probe.bench.benchmark --target SPEC [--cases 40] [--contexts 5] [--rounds 5]``
(``protocol.probe_command``; SPEC: the host's target ``legacy:LLMContextPrecisionWithReference`` as JSON)
(prints JSON). Both sides score the same synthetic cases with Ragas's
LLMContextPrecisionWithReference in the same process after one Ragas import:

* probe:   ``run_legacy_target`` - content-keyed PromptBook, FrozenJudgeLLM, per-result
           warning capture, received-field recording, result encoding;
* minimal: a bare BaseRagasLLM that pops pre-rendered replies in call order, called straight
           through ``single_turn_ascore``.

The two are interleaved case by case (the verdicts and scores are identical; the warm-up
asserts so). Overhead = probe / minimal - 1, on the best round of each and the median
round (target: <= 10 %). Ragas's import is reported separately: it is the floor of a run.
"""

from __future__ import annotations

import os

os.environ["RAGAS_DO_NOT_TRACK"] = "true"

import argparse
import asyncio
import json
import sys
import time
import warnings

from .. import network_guard
from ..protocol import FROZEN_REASON


def synthetic_cases(n_cases: int, n_contexts: int) -> list[dict]:
    return [{"id": f"bench-{i}", "user_input": f"question {i}", "reference": f"reference answer {i}",
             "response": f"response {i}",
             "retrieved_contexts": [f"context {i}.{k} " + "lorem ipsum " * 20 for k in range(n_contexts)],
             "verdicts": {"context_precision_with_reference": [(i + k) % 2 for k in range(n_contexts)]}}
            for i in range(n_cases)]


def probe_scorer(spec: dict):
    """The probe's runner on the target ``spec`` (the host's ``legacy:LLMContextPrecisionWithReference``)."""
    from ..scoring import run_legacy_target
    from ..targets import targets_from_request

    [target] = targets_from_request([spec])

    async def score(case: dict) -> object:
        result = await run_legacy_target(target, case)
        assert not isinstance(result["value"], dict), result["value"]
        return result["value"]

    return score


def minimal_scorer():
    from ragas.metrics._context_precision import LLMContextPrecisionWithReference

    from .stub_loop import context_precision_scorer

    return context_precision_scorer(LLMContextPrecisionWithReference, "context_precision_with_reference",
                                    FROZEN_REASON)


async def timed_rounds(cases: list[dict], rounds: int, spec: dict) -> tuple[list[float], list[float]]:
    """Per round: total seconds of each side. The two are interleaved case by case in
    alternating order, so load drift, cache and garbage-collection effects hit both."""
    probe, minimal = probe_scorer(spec), minimal_scorer()
    for case in cases[:3]:  # warm-up
        assert await probe(case) == await minimal(case)
    probe_totals, minimal_totals = [], []
    for _ in range(rounds):
        totals = {"probe": 0.0, "minimal": 0.0}
        for index, case in enumerate(cases):
            order = [("probe", probe), ("minimal", minimal)]
            for side, score in (order if index % 2 == 0 else order[::-1]):
                start = time.perf_counter()
                await score(case)
                totals[side] += time.perf_counter() - start
        probe_totals.append(totals["probe"])
        minimal_totals.append(totals["minimal"])
    return probe_totals, minimal_totals


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--contexts", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--target", type=json.loads, required=True,
                        help="the target as the host requests it (protocol.TargetSpec, JSON): "
                             "legacy:LLMContextPrecisionWithReference")
    args = parser.parse_args(argv[1:])
    attempts: list[dict] = []
    network_guard.install(attempts)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ragas.metrics  # noqa: F401
    import_seconds = time.perf_counter() - start
    cases = synthetic_cases(args.cases, args.contexts)
    contexts = args.cases * args.contexts
    probe, minimal = asyncio.run(timed_rounds(cases, args.rounds, args.target))
    best_probe, best_minimal = min(probe), min(minimal)
    ratios = sorted(p / m for p, m in zip(probe, minimal))
    print(json.dumps({
        "ragas_import_seconds": round(import_seconds, 3),
        "cases": args.cases, "contexts_per_case": args.contexts, "rounds": args.rounds,
        "probe_ms_per_context": round(1000 * best_probe / contexts, 4),
        "minimal_ms_per_context": round(1000 * best_minimal / contexts, 4),
        "overhead_best_rounds": round(best_probe / best_minimal - 1, 4),
        "overhead_median_round": round(ratios[len(ratios) // 2] - 1, 4),
        "network_attempts": attempts,
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
