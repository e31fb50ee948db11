"""What Ragas 0.4.3's generic builders (DiscreteMetric, NumericMetric, RankingMetric) do with a judge's value,
as docs/metrics.md states it (all three are driven: metrics/numeric_metric.py, metrics/discrete_ranking.py; this
pins the same facts outside the probe): each class scored through its own ``ascore(llm=..., **inputs)`` with a
stub instructor LLM replying a fixed JSON text. A Ragas that changes any of these fails here, and the references
and rules (discrete-metric-value-not-allowed, ranking-metric-length-unchecked, ...) must be read again."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before Ragas is imported: no usage events


@pytest.fixture(scope="module")
def ragas_metrics():
    """Ragas imported when a test here runs, not when the module is collected (several seconds of every pytest
    process's collection, xdist's workers included)."""
    return pytest.importorskip("ragas.metrics")


@pytest.fixture(scope="module")
def score(ragas_metrics):
    """``score(metric, value)``: the metric's ``ascore`` with a stub instructor LLM replying
    ``{"reason": ..., "value": value}`` to every prompt, parsed by the requested response model; returns the
    result's value and the prompts sent."""
    ragas_llms = pytest.importorskip("ragas.llms.base")

    class Reply(ragas_llms.InstructorBaseRagasLLM):
        def __init__(self, value: object) -> None:
            self.text = json.dumps({"reason": "fixed", "value": value})
            self.prompts: list[str] = []

        def generate(self, prompt, response_model):
            return response_model.model_validate_json(self.text)

        async def agenerate(self, prompt, response_model):
            self.prompts.append(prompt)
            return response_model.model_validate_json(self.text)

    def score(metric, value):
        llm = Reply(value)
        return asyncio.run(metric.ascore(llm=llm, response="the answer")).value, llm.prompts

    score.Reply = Reply
    return score


def test_numeric_metric_returns_the_judge_s_number_unchecked_against_its_range(ragas_metrics, score):
    metric = ragas_metrics.NumericMetric(name="n", prompt="Rate {response} from 0 to 1.", allowed_values=(0.0, 1.0))
    assert score(metric, 7)[0] == 7.0 and score(metric, -1)[0] == -1.0
    assert score(metric, "0.25")[0] == 0.25
    value, prompts = score(metric, 0.5)
    assert value == 0.5 and prompts == ["Rate the answer from 0 to 1."]  # the template, formatted


def test_discrete_metric_refuses_a_value_outside_allowed_values_case_sensitively(ragas_metrics, score):
    from pydantic import ValidationError

    metric = ragas_metrics.DiscreteMetric(name="d", prompt="Judge {response}.", allowed_values=["pass", "fail"])
    assert score(metric, "pass")[0] == "pass"
    for value in ("PASS", "maybe"):
        with pytest.raises(ValidationError):
            score(metric, value)


def test_ranking_metric_returns_a_list_of_any_length(ragas_metrics, score):
    metric = ragas_metrics.RankingMetric(name="k", prompt="Rank {response}.", allowed_values=3)
    assert score(metric, ["a", "b"])[0] == ["a", "b"]
    assert score(metric, ["a", "b", "c", "d"])[0] == ["a", "b", "c", "d"]


def test_ranking_metric_keeps_the_order_and_duplicates_and_refuses_non_strings(ragas_metrics, score):
    from pydantic import ValidationError

    metric = ragas_metrics.RankingMetric(name="k", prompt="Rank {response}.", allowed_values=2)
    assert score(metric, ["b", "a"])[0] == ["b", "a"]
    assert score(metric, ["a", "a"])[0] == ["a", "a"]
    for value in ("a,b", [1, 2], None):
        with pytest.raises(ValidationError):
            score(metric, value)


def test_none_of_them_aggregates_batch_score_returns_the_results(ragas_metrics, score):
    metric = ragas_metrics.DiscreteMetric(name="d", prompt="Judge {response}.", allowed_values=["pass", "fail"])
    results = metric.batch_score([{"response": "x"}, {"response": "y"}], llm=score.Reply("fail"))
    assert isinstance(results, list) and [r.value for r in results] == ["fail", "fail"]


def test_none_of_them_is_exported_by_the_collections_api():
    collections = pytest.importorskip("ragas.metrics.collections")
    assert not any(hasattr(collections, name) for name in ("DiscreteMetric", "NumericMetric", "RankingMetric"))
