"""evaluate() on a suite whose cases are duplicated (copies under new ids, as ``scale_bench.copied_suite`` makes):
the scripted judge serves rows with identical prompt content per asking asyncio task (``PromptBook``), so the
metrics whose row asks one prompt again and gets another reply (AnswerAccuracy's and ContextRelevance's retry of an
unusable rating, TopicAdherenceScore's repeated topic) score every copy as its original, and so do those whose row
reads the first of its sampled votes (AspectCritic and SimpleCriteriaScore with a strictness: served in turn across
rows, a copy read its original's second vote): no scripted-judge problem, and each dataset-level mean equals the
single copy's (identical rows)."""

from __future__ import annotations

from ragas_compat.cases import load_default_suite
from ragas_compat.runner import run_probe

IN_TURN = ("legacy:AnswerAccuracy", "legacy:ContextRelevance", "legacy:TopicAdherenceScore",
            "legacy:TopicAdherenceScore[mode=precision]", "legacy:TopicAdherenceScore[mode=recall]",
            "legacy:AspectCritic[strictness=2]", "legacy:AspectCritic[strictness=3]",
            "legacy:SimpleCriteriaScore[strictness=2]", "legacy:SimpleCriteriaScore[strictness=3]")


def evaluate_runs(cases: list[dict]) -> list[dict]:
    run = run_probe(cases, targets=list(IN_TURN), evaluate={"apis": ["evaluate", "aevaluate"], "max_workers": 8})
    assert run.ok, run.error
    return run.output["evaluate"]["runs"]


def scores(runs: list[dict]) -> dict[tuple[str, str], str]:
    return {(run["api"], target): value for run in runs for target, value in run["scores"].items()}


def test_copied_cases_score_as_their_originals():
    originals = [case.raw for case in load_default_suite().cases]
    copies = originals + [{**case, "id": f"{case['id']}~1"} for case in originals]
    single, copied = evaluate_runs(originals), evaluate_runs(copies)
    # the cases that make the judge answer one prompt differently in turn are among those copied
    assert {"nv-aa-first-template-unparseable", "nv-cr-retry-then-valid", "ta-repeated-topic",
            "criteria-split-votes"} <= {
        case_id for run in single for case_id in run["case_ids"]}
    for run in copied:
        assert run["judge_problems"] == [] and run["stub_problems"] == [] and run["run_error"] is None, run["targets"]
        assert len(run["case_ids"]) == 2 * len(next(r for r in single if r["targets"] == run["targets"])["case_ids"])
    assert len(scores(copied)) == 2 * len(IN_TURN)  # both APIs
    assert scores(copied) == scores(single)
