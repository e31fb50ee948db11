"""Every legacy target, run by the real probe on small constructed cases (one probe run)."""

from __future__ import annotations

import pytest
from bundled_probe import registry_targets

from ragas_compat.runner import run_probe

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

LEGACY_TARGETS = registry_targets("legacy")


def case(case_id: str, **fields) -> dict:
    base = {"id": case_id, "category": "edge", "user_input": f"question of {case_id}",
            "reference": f"reference of {case_id}", "response": f"response of {case_id}",
            "retrieved_contexts": []}
    base.update(fields)
    return base


def claims(key: str, values: list) -> list[dict]:
    return [{"statement": f"claim {i}", key: v} for i, v in enumerate(values)]


CASES = [
    case("worked", retrieved_contexts=["c one", "c two", "c three"], verdicts={
        "context_precision_with_reference": [1, 0, 1],
        "context_precision_without_reference": [0, 1, 1],
        "context_recall": claims("attributed", [1, 0, 1, 1]),
        "faithfulness": claims("verdict", [1, 0, 1])}),
    case("coercion", retrieved_contexts=["k one", "k two", "k three"], verdicts={
        "context_precision_with_reference": [2, 0, True],
        "context_precision_without_reference": [True, False, 2],
        "context_recall": claims("attributed", [2, True, 0]),
        "faithfulness": claims("verdict", [2, 0])}),
    case("zero-claims", retrieved_contexts=["z one"], verdicts={
        "context_recall": [], "faithfulness": []}),
    case("empty-retrieval", verdicts={"context_precision_with_reference": [],
                                      "faithfulness": claims("verdict", [1])}),
    case("ids-duplicate", retrieved_context_ids=["d1", "d1", "d2"], reference_context_ids=["d1"]),
    case("ids-coerced", retrieved_context_ids=[1.0, "1", 2], reference_context_ids=["1", "9"]),
    case("ids-invalid", retrieved_context_ids=[1.5], reference_context_ids=["1"]),
    case("strings-exact", retrieved_contexts=["alpha beta gamma delta", "zzzz qqqq wwww"],
         reference_contexts=["alpha beta gamma delta", "unrelated reference passage"]),
    case("strings-no-retrieval", retrieved_contexts=[], reference_contexts=["some passage"]),
    case("dup-context-same", retrieved_contexts=["same", "same"],
         verdicts={"context_precision_with_reference": [1, 1]}),
    case("dup-context-ambiguous", retrieved_contexts=["same", "same"],
         verdicts={"context_precision_with_reference": [1, 0]}),
    case("labels-too-long", retrieved_contexts=["only one"],
         verdicts={"context_precision_with_reference": [1, 0]}),
]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], dict]:
    run = run_probe(CASES, targets=[t.name for t in LEGACY_TARGETS])  # collections: test_probe_collections
    assert run.ok, run.error
    assert run.output["network_attempts"] == []
    return {(r["case_id"], r["target"].removeprefix("legacy:")): r for r in run.output["results"]}


def value(results, case_id: str, target: str):
    return results[(case_id, target)]["value"]


@pytest.mark.parametrize("target", ["LLMContextPrecisionWithReference", "ContextPrecision"])
def test_context_precision_with_reference_worked_example(results, target):
    r = results[("worked", target)]
    assert r["value"] == 0.8333333332916666
    assert r["metric"] == "context_precision_with_reference"
    assert r["prompts"] == r["expected_prompts"] == 3
    assert r["fields_read"] == ["user_input", "retrieved_contexts", "reference"]
    assert r["received"] == {"user_input": "question of worked",
                             "retrieved_contexts": ["c one", "c two", "c three"],
                             "reference": "reference of worked"}
    assert r["ragas_class"] == f"ragas.metrics._context_precision.{target}"
    assert any(w["category"] == "DeprecationWarning" for w in r["warnings"])


@pytest.mark.parametrize("target", ["LLMContextPrecisionWithoutReference", "ContextUtilization"])
def test_context_precision_without_reference(results, target):
    # labels [0, 1, 1]: (1/2 + 2/3) / (2 + 1e-10)
    assert value(results, "worked", target) == (0.5 + 2 / 3) / (2 + 1e-10)
    assert results[("worked", target)]["received"]["response"] == "response of worked"


@pytest.mark.parametrize("target", ["LLMContextPrecisionWithReference", "LLMContextPrecisionWithoutReference"])
def test_non_binary_labels_are_coerced_by_truthiness(results, target):
    # [2, 0, true] and [true, false, 2] score like [1, 0, 1] and [1, 0, 1]
    assert value(results, "coercion", target) == 0.8333333332916666


@pytest.mark.parametrize("target", ["LLMContextRecall", "ContextRecall"])
def test_context_recall(results, target):
    assert value(results, "worked", target) == 0.75
    assert value(results, "coercion", target) == 2 / 3
    r = results[("zero-claims", target)]
    assert r["value"] == "NaN" and r["prompts"] == r["expected_prompts"] == 1


def test_faithfulness(results):
    r = results[("worked", "Faithfulness")]
    assert r["value"] == 2 / 3 and r["prompts"] == r["expected_prompts"] == 2
    assert value(results, "coercion", "Faithfulness") == 0.5
    assert value(results, "empty-retrieval", "Faithfulness") == 1.0


def test_faithfulness_with_zero_statements_asks_once_and_is_nan(results):
    r = results[("zero-claims", "Faithfulness")]
    assert r["value"] == "NaN"
    assert r["prompts"] == r["expected_prompts"] == 1


def test_context_precision_on_empty_retrieval_asks_nothing(results):
    r = results[("empty-retrieval", "LLMContextPrecisionWithReference")]
    assert r["value"] == 0.0 and r["prompts"] == r["expected_prompts"] == 0


def test_id_based_metrics_deduplicate(results):
    assert value(results, "ids-duplicate", "IDBasedContextPrecision") == 0.5
    assert value(results, "ids-duplicate", "IDBasedContextRecall") == 1.0


def test_id_coercion_is_recorded_as_received(results):
    r = results[("ids-coerced", "IDBasedContextPrecision")]
    assert r["received"]["retrieved_context_ids"] == [1, "1", 2]  # 1.0 arrives as 1
    assert r["value"] == 0.5  # {"1", "2"} against {"1", "9"}
    assert value(results, "ids-coerced", "IDBasedContextRecall") == 0.5


def test_sample_validation_failure_is_a_per_result_error(results):
    error = value(results, "ids-invalid", "IDBasedContextPrecision")["error"]
    assert error["type"] == "ValidationError"
    assert results[("ids-invalid", "IDBasedContextPrecision")]["received"] is None


def test_non_llm_string_metrics(results):
    # retrieved[0] equals reference[0]; retrieved[1] resembles no reference
    assert value(results, "strings-exact", "NonLLMContextPrecisionWithReference") == 1 / (1 + 1e-10)
    assert value(results, "strings-exact", "NonLLMContextRecall") == 0.5


def test_metric_raising_is_a_per_result_error(results):
    error = value(results, "strings-no-retrieval", "NonLLMContextRecall")["error"]
    assert error == {"type": "ValueError", "message": "max() arg is an empty sequence"}
    assert value(results, "strings-no-retrieval", "NonLLMContextPrecisionWithReference") == 0.0


def test_identical_prompts_with_identical_verdicts_are_answered_each_time(results):
    r = results[("dup-context-same", "LLMContextPrecisionWithReference")]
    assert r["value"] == (1 + 1) / (2 + 1e-10) and r["prompts"] == 2


def test_identical_prompts_of_one_row_with_different_verdicts_are_answered_in_asking_order(results):
    # Ragas asks a row's contexts in index order: the repeated chunk gets 1, then 0 (replay by order)
    r = results[("dup-context-ambiguous", "LLMContextPrecisionWithReference")]
    assert r["value"] == 1 / (1 + 1e-10) and r["prompts"] == r["expected_prompts"] == 2


def test_expected_prompt_left_unasked_is_a_stub_mismatch(results):
    r = results[("labels-too-long", "LLMContextPrecisionWithReference")]
    assert r["value"]["error"]["type"] == "StubMismatch"
    assert r["prompts"] == 1 and r["expected_prompts"] == 2


def test_targets_run_only_when_their_inputs_are_present(results):
    ran = {target for (case_id, target) in results if case_id == "ids-duplicate"}
    assert ran == {"IDBasedContextPrecision", "IDBasedContextRecall"}
    ran = {target for (case_id, target) in results if case_id == "zero-claims"}
    assert ran == {"LLMContextRecall", "ContextRecall", "Faithfulness"}


def test_result_records_follow_the_protocol(results):
    from ragas_compat.probe.protocol import ProbeResult

    for key, r in results.items():
        assert ProbeResult.__required_keys__ <= set(r) <= ProbeResult.__required_keys__ | ProbeResult.__optional_keys__, key
        assert r["api"] == "legacy"
    # every optional key but "classifier" (a class built on a frozen classifier stub only: FaithfulnesswithHHEM)
    # and "fields_renamed" (a release whose sample declares a field under another name only)
    assert set(results[("worked", "Faithfulness")]) == (ProbeResult.__required_keys__ | ProbeResult.__optional_keys__
                                                        ) - {"classifier", "fields_renamed"}
