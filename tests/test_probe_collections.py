"""The collections-API judge stub and targets: in-process stub checks, one probe run over every
collections target, and the unavailable path (missing class, missing module, a Ragas without it)."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before Ragas is imported below

import pytest
from bundled_probe import registry_targets
from pydantic import ValidationError

from ragas_compat.metrics.registry import metric
from ragas_compat.probe.judge.prompt_book import PromptBook, StubMismatch
from ragas_compat.probe.judge.script_table import SCRIPTS
from ragas_compat.probe.scoring import resolve_collections_class, run_collections_target
from ragas_compat.runner import run_probe

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

COLLECTIONS_TARGETS = registry_targets("collections")
TARGETS_BY_NAME = {t.name: t for t in registry_targets()}


# -- the stub ------------------------------------------------------------------------------
def _cp_prompt(question: str, context: str, answer: str) -> str:
    from ragas.metrics.collections.context_precision.util import ContextPrecisionInput, ContextPrecisionPrompt

    return ContextPrecisionPrompt().to_string(ContextPrecisionInput(question=question, context=context, answer=answer))


def _judge(verdicts: dict[str, object]):
    from ragas.metrics.collections.context_precision.util import ContextPrecisionPrompt

    from ragas_compat.probe.stubs.collections_llm import FrozenInstructorJudge

    book = PromptBook()
    for context, verdict in verdicts.items():
        book.expect("context_precision", ContextPrecisionPrompt.instruction,
                    {"question": "q", "context": context, "answer": "a"},
                    {"reason": "r", "verdict": verdict}, label=context)
    return FrozenInstructorJudge(book), book


def test_stub_answers_by_content_with_the_requested_model_and_values_as_given():
    from ragas.metrics.collections.context_precision.util import ContextPrecisionOutput

    judge, book = _judge({"c1": 0, "c2": 2, "c3": True})
    # asked in another order than expected: content decides
    third = asyncio.run(judge.agenerate(_cp_prompt("q", "c3", "a"), ContextPrecisionOutput))
    second = asyncio.run(judge.agenerate(_cp_prompt("q", "c2", "a"), ContextPrecisionOutput))
    first = judge.generate(_cp_prompt("q", "c1", "a"), ContextPrecisionOutput)
    assert isinstance(second, ContextPrecisionOutput)
    assert (first.verdict, second.verdict) == (0, 2)  # 2 stays 2: the int field accepts it
    assert third.verdict == 1 and type(third.verdict) is int  # pydantic's int field turns true into 1
    assert book.problems == [] and book.unasked() == [] and len(book.asked) == 3


def test_stub_fails_loudly_on_unknown_and_repeated_prompts_and_reports_unasked_ones():
    from ragas.metrics.collections.context_precision.util import ContextPrecisionOutput

    judge, book = _judge({"c1": 1, "c2": 0})
    with pytest.raises(StubMismatch, match="no frozen answer"):
        asyncio.run(judge.agenerate(_cp_prompt("q", "other", "a"), ContextPrecisionOutput))
    judge.generate(_cp_prompt("q", "c1", "a"), ContextPrecisionOutput)
    with pytest.raises(StubMismatch, match="asked 2 times"):
        judge.generate(_cp_prompt("q", "c1", "a"), ContextPrecisionOutput)
    assert len(book.problems) == 2
    assert book.unasked() == ["context_precision prompt (c2) expected 1 time(s), asked 0"]


def test_a_reply_the_response_model_refuses_is_raised_and_recorded():
    from ragas.metrics.collections.context_precision.util import ContextPrecisionOutput

    judge, _ = _judge({"c1": 1.5})
    with pytest.raises(ValidationError):
        judge.generate(_cp_prompt("q", "c1", "a"), ContextPrecisionOutput)
    assert len(judge.rejected) == 1 and "ContextPrecisionOutput refused" in judge.rejected[0]


# -- the targets ---------------------------------------------------------------------------
def test_targets_take_the_registry_fields_and_match_ascore_signatures():
    for target in COLLECTIONS_TARGETS:
        assert set(target.fields_read) == set(metric(target.metric).fields_read), target.name
        parameters = inspect.signature(resolve_collections_class(target).ascore).parameters
        taken = set(parameters) - {"self"}
        assert set(target.fields_read) <= taken, target.name
        # an input the class takes and the target leaves out must be optional there (e.g. the rubric classes'
        # reference_contexts): Ragas then scores without it, as a caller passing only the required inputs
        assert all(parameters[name].default is not inspect.Parameter.empty
                   for name in taken - set(target.fields_read)), target.name


def case(case_id: str, **fields) -> dict:
    base = {"id": case_id, "category": "edge", "user_input": f"question of {case_id}",
            "reference": f"reference of {case_id}", "response": f"response of {case_id}",
            "retrieved_contexts": ["c one", "c two", "c three"]}
    base.update(fields)
    return base


def claims(key: str, values: list) -> list[dict]:
    return [{"statement": f"claim {i}", key: v} for i, v in enumerate(values)]


CASES = [
    case("worked", verdicts={
        "context_precision_with_reference": [1, 0, 1],
        "context_precision_without_reference": [0, 1, 1],
        "context_recall": claims("attributed", [1, 0, 1, 1]),
        "faithfulness": claims("verdict", [1, 0, 1])}),
    case("non-binary", verdicts={
        "context_precision_with_reference": [2, 0, True],
        "context_recall": claims("attributed", [2, True, 0]),
        "faithfulness": claims("verdict", [2, 0])}),
    case("fractional", verdicts={"context_precision_with_reference": [1, 0.5, 0]}),
    case("zero-claims", verdicts={"context_recall": [], "faithfulness": []}),
    case("empty-retrieval", retrieved_contexts=[], verdicts={
        "context_precision_with_reference": [], "context_recall": claims("attributed", [0]),
        "faithfulness": claims("verdict", [1])}),
    case("labels-too-long", retrieved_contexts=["only one"],
         verdicts={"context_precision_with_reference": [1, 0]}),
]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], dict]:
    run = run_probe(CASES, targets=[t.name for t in COLLECTIONS_TARGETS])
    assert run.ok, run.error
    assert run.output["network_attempts"] == []
    return {(r["case_id"], r["target"].removeprefix("collections:")): r for r in run.output["results"]}


@pytest.mark.parametrize("target", ["ContextPrecisionWithReference", "ContextPrecision"])
def test_context_precision_with_reference(results, target):
    r = results[("worked", target)]
    assert r["api"] == "collections" and r["metric"] == "context_precision_with_reference"
    assert r["ragas_class"].startswith("ragas.metrics.collections.") and r["ragas_class"].endswith(target)
    assert r["value"] == 0.8333333332916666 and r["prompts"] == r["expected_prompts"] == 3
    assert r["received"]["retrieved_contexts"] == ["c one", "c two", "c three"]


@pytest.mark.parametrize("target", ["ContextPrecisionWithoutReference", "ContextUtilization"])
def test_context_precision_without_reference(results, target):
    r = results[("worked", target)]
    assert r["metric"] == "context_precision_without_reference"
    assert r["value"] == (1 / 2 + 2 / 3) / (2 + 1e-10)


def test_verdicts_are_taken_as_given_by_average_precision(results):
    # [2, 0, True]: the int field keeps 2 and turns True into 1; AP = (2/1*2 + 3/3*1) / (3 + 1e-10)
    assert results[("non-binary", "ContextPrecisionWithReference")]["value"] == (2.0 * 2 + 1.0) / (3 + 1e-10)
    # context recall sums the attributions as given: (2 + 1 + 0) / 3 = 1.0
    assert results[("non-binary", "ContextRecall")]["value"] == 1.0
    # faithfulness maps verdicts by truthiness: 1 of 2
    assert results[("non-binary", "Faithfulness")]["value"] == 0.5


def test_a_verdict_the_response_model_refuses_is_a_recorded_validation_error(results):
    r = results[("fractional", "ContextPrecisionWithReference")]
    assert r["value"]["error"]["type"] == "ValidationError" and r["prompts"] == 2


def test_context_recall_and_faithfulness(results):
    assert results[("worked", "ContextRecall")]["value"] == 0.75
    assert results[("worked", "Faithfulness")]["value"] == 2 / 3
    assert results[("worked", "Faithfulness")]["prompts"] == 2


def test_zero_claims_are_nan(results):
    assert results[("zero-claims", "ContextRecall")]["value"] == "NaN"
    faithfulness = results[("zero-claims", "Faithfulness")]
    assert faithfulness["value"] == "NaN" and faithfulness["prompts"] == faithfulness["expected_prompts"] == 1


@pytest.mark.parametrize("target", ["ContextPrecisionWithReference", "ContextRecall", "Faithfulness"])
def test_empty_retrieval_raises_before_asking(results, target):
    r = results[("empty-retrieval", target)]
    assert r["value"]["error"]["type"] == "ValueError" and "retrieved_contexts" in r["value"]["error"]["message"]
    assert r["prompts"] == 0


def test_expected_prompt_left_unasked_is_a_stub_mismatch(results):
    r = results[("labels-too-long", "ContextPrecisionWithReference")]
    assert r["value"]["error"]["type"] == "StubMismatch" and r["prompts"] == 1 and r["expected_prompts"] == 2


def test_targets_run_only_when_their_inputs_are_present(results):
    assert {t for (c, t) in results if c == "zero-claims"} == {"ContextRecall", "Faithfulness"}


# -- unavailable ---------------------------------------------------------------------------
def _script(prompts, metric, case, book):  # never reached: the class cannot be resolved
    raise AssertionError("script ran for an unavailable target")


def _unscriptable(**changes):
    """collections:Faithfulness with ``changes`` (class name, module) and a script that must not run."""
    target = TARGETS_BY_NAME["collections:Faithfulness"]
    return dataclasses.replace(target, fields_read=("user_input",), requires_verdicts=(), judge="never", **changes)


@pytest.mark.parametrize("target,needle", [
    (_unscriptable(class_name="NoSuchMetric"), "has no ragas.metrics.collections.NoSuchMetric"),
    (_unscriptable(module="ragas.metrics.no_such_collections"), "has no collections API"),
])
def test_missing_class_or_module_is_an_unavailable_record(target, needle, monkeypatch):
    monkeypatch.setitem(SCRIPTS, "never", lambda target: _script)
    r = asyncio.run(run_collections_target(target, case("c")))
    assert r["value"]["error"]["type"] == "TargetUnavailable" and needle in r["value"]["error"]["message"]
    assert r["ragas_class"] is None and r["api"] == "collections" and r["prompts"] == 0


def test_a_ragas_without_the_collections_api_gives_unavailable_results(tmp_path: Path):
    fake = tmp_path / "ragas"
    (fake / "metrics").mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "0.1.0+fake"\n')
    (fake / "metrics" / "__init__.py").write_text("")
    run = run_probe([CASES[0]], sys_path_prefix=[str(tmp_path)],
                    targets=["collections:ContextPrecisionWithReference", "collections:Faithfulness"])
    assert run.ok, run.error
    assert [r["target"] for r in run.output["results"]] == ["collections:ContextPrecisionWithReference",
                                                             "collections:Faithfulness"]
    for r in run.output["results"]:
        assert r["value"]["error"]["type"] == "TargetUnavailable"
        assert "no collections API" in r["value"]["error"]["message"]


def test_result_records_follow_the_protocol(results):
    from ragas_compat.probe.protocol import ProbeResult

    for key, r in results.items():
        # the legacy-only keys are absent; a judged row carries its prompts' hashes on both APIs
        assert set(r) - {"prompt_hashes"} == ProbeResult.__required_keys__, key
        assert len(r.get("prompt_hashes", {})) <= r["prompts"], key  # one digest per prompt kind asked
