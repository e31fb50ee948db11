"""The floor of an audit run that is Ragas's own work (``ragas-compat bench``: run / this floor).

``ragas_compat_probe.bench.floor REQUEST.json [--evaluate]`` (``protocol.probe_command``; REQUEST: the
``cases`` and ``targets`` of the run's probe request, as the host builds them) imports what the audit
imports (``ragas.metrics``, ``ragas.metrics.collections``; the string metrics' own imports come with
their first use, as in the probe), then scores every (case, target) pair the probe scores, one after
another in one process, through Ragas with the same stub: a fresh instance of the class with the
probe's frozen judge (``FrozenJudgeLLM`` or ``FrozenInstructorJudge`` answering from a content-keyed
``PromptBook`` scripted for the case) and frozen embeddings, on the sample the probe builds (its own
helpers: a ``SingleTurnSample``, or a ``MultiTurnSample`` scored with ``multi_turn_ascore`` for a multi-turn
case) for a legacy class, the case's fields (a multi-turn case's as ``ragas.messages`` objects) for a
collections class, and a legacy function on a dataset of the case alone; a configured target scores the
cases that name it (``Target.applies``). Nothing else: no warning capture, no received-input recording, no result
records, no worker processes, no reference, classification or report. With ``--evaluate`` it also runs
the evaluate()/aevaluate() passes the probe runs (``evaluate.planned_runs``), one after another.
Prints ``{"pairs", "errors", "evaluate_runs", "seconds"}``; an error is counted, not raised.
Standard library, Ragas and the probe's stubs only; it never imports the harness.
"""

from __future__ import annotations

import os

os.environ["RAGAS_DO_NOT_TRACK"] = "true"

import asyncio
import json
import sys
import time
import typing as t
import warnings

from .. import multi_turn
from ..judge.prompt_book import PromptBook
from ..protocol import API_COLLECTIONS, API_LEGACY
from ..targets import Target, targets_from_request


async def score_pair(target: Target, case: dict) -> object:
    """One (case, target) through Ragas with the probe's stub judge and embeddings."""
    from ..scoring import (
        _single_turn_sample,
        adapt_inputs,
        collections_judge_class,
        constructor_options,
        frozen_embeddings,
        legacy_judge_class,
        resolve_collections_class,
        resolve_legacy_class,
        row_fields,
    )

    book = PromptBook()
    if target.function is not None:  # a function of a dataset: the case alone
        from ..scoring import resolve_legacy_function

        arguments, key = target.function
        return resolve_legacy_function(target)(**{p: [case.get(f)] for p, f in arguments})[key]
    if target.llm_per_call:  # a class given its LLM per call (NumericMetric)
        cls = resolve_legacy_class(target)
        metric = cls(**constructor_options(cls, target.options))
        target.expect_prompts(metric, case, book)
        result = await metric.ascore(llm=collections_judge_class()(book),
                                     **{f: case[f] for f in target.fields_read if f in case})
        return result.value
    if target.api == API_LEGACY:
        cls = resolve_legacy_class(target)
        options = constructor_options(cls, target.options)
        if target.embeddings:
            options["embeddings"] = frozen_embeddings(case)
        from ..scoring import frozen_classifier

        with frozen_classifier(target, cls, case, {}):  # FaithfulnesswithHHEM's frozen classifier, as the probe
            metric = cls(llm=legacy_judge_class()(book), **options) if target.needs_judge else cls(**options)
        if target.embeddings and target.needs_judge:
            from ..stubs.legacy_llm import NO_RETRY

            metric.init(NO_RETRY)  # as evaluate() does (AnswerCorrectness's AnswerSimilarity)
        target.expect_prompts(metric, case, book)
        if multi_turn.is_multi_turn(case):  # a MultiTurnSample, as the probe builds it
            sample = multi_turn.multi_turn_sample({f: case[f] for f in target.fields_read if f in case})[0]
            return await metric.multi_turn_ascore(sample)
        sample_cls = _single_turn_sample()
        sample = adapt_inputs(sample_cls, {f: case[f] for f in row_fields(sample_cls, metric, target.fields_read)
                                           if f in case})[0]
        return await (metric.ascore(sample) if isinstance(sample, dict) else metric.single_turn_ascore(sample))
    cls = resolve_collections_class(target)
    options = constructor_options(cls, target.options)
    if target.embeddings:
        options["embeddings"] = frozen_embeddings(case)
    metric = cls(llm=collections_judge_class()(book), **options) if target.needs_judge else cls(**options)
    target.expect_prompts(metric, case, book)
    inputs = {f: case[f] for f in target.fields_read if f in case}
    # a multi-turn case's messages and tool calls as ragas.messages objects, as the probe passes them
    return await metric.ascore(**(multi_turn.ragas_arguments(inputs) if multi_turn.is_multi_turn(case) else inputs))


async def score_all(cases: list[dict], targets: t.Sequence[Target]) -> tuple[int, int]:
    """Every pair the probe scores (case by case, targets in request order): (pairs, errors)."""
    pairs = errors = 0
    for case in cases:
        for target in targets:
            if target.api not in (API_LEGACY, API_COLLECTIONS) or not target.applies(case):
                continue
            pairs += 1
            try:
                await score_pair(target, case)
            except Exception:  # the floor measures time; a failing pair is counted
                errors += 1
    return pairs, errors


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        request = json.load(handle)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ragas
        import ragas.metrics
        import ragas.metrics.collections

        from ..scoring import targets_here

        # the probe's own selection: a class some releases only have makes no row where this Ragas lacks it
        targets = targets_here(targets_from_request(request["targets"]), getattr(ragas, "__version__", None))
        pairs, errors = asyncio.run(score_all(request["cases"], targets))
        runs = 0
        if "--evaluate" in argv[2:]:
            from ..evaluate import planned_runs, run_planned

            settings, planned = planned_runs(request["cases"], True, targets)
            for run in planned:
                run_planned(run, settings)
                runs += 1
    print(json.dumps({"pairs": pairs, "errors": errors, "evaluate_runs": runs,
                      "seconds": round(time.perf_counter() - start, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
