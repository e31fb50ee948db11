"""A verification run opens no network connection, and Ragas telemetry is off."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragas_compat.runner import run_probe

DEFAULT_SUITE = Path(__file__).resolve().parents[1] / "harness" / "cases" / "suites" / "default.json"
JUDGED_TARGETS = {  # a configured class is its own target
    "factual_correctness": ["FactualCorrectness", "FactualCorrectness[mode=precision]",
                            "FactualCorrectness[mode=recall]", "FactualCorrectness[beta=0.5]"],
    "context_entity_recall": ["ContextEntityRecall"],
    "noise_sensitivity": ["NoiseSensitivity", "NoiseSensitivity[mode=irrelevant]"],
    "answer_accuracy": ["AnswerAccuracy"],
    "context_relevance": ["ContextRelevance"],
    "response_groundedness": ["ResponseGroundedness"],
}
VERDICT_TARGETS = {
    "context_precision_with_reference": ["LLMContextPrecisionWithReference", "ContextPrecision"],
    "context_precision_without_reference": ["LLMContextPrecisionWithoutReference", "ContextUtilization"],
    "context_recall": ["LLMContextRecall", "ContextRecall"],
    "faithfulness": ["Faithfulness"],
    **JUDGED_TARGETS,
    "answer_correctness": ["AnswerCorrectness", "AnswerCorrectness[weights=1.0,0.0]"],  # (the cases have embeddings)
    "answer_relevancy": [f"{c}{s}" for c in ("ResponseRelevancy", "AnswerRelevancy") for s in ("", "[strictness=1]")],
    # issue 18: votes per configured strictness (legacy only), rubric scores
    **{key: [f"{c}{s}" for s in ("", "[strictness=2]", "[strictness=3]")]
       for key, c in (("aspect_critic", "AspectCritic"), ("simple_criteria", "SimpleCriteriaScore"))},
    "rubrics_score": ["RubricsScore"],
    "instance_rubrics": ["InstanceRubrics"],
}
COLLECTIONS_VERDICT_TARGETS = {  # ragas.metrics.collections at 0.4.3: no ID-based or string-match classes
    "context_precision_with_reference": ["ContextPrecisionWithReference", "ContextPrecision"],
    "context_precision_without_reference": ["ContextPrecisionWithoutReference", "ContextUtilization"],
    "context_recall": ["ContextRecall"],
    "faithfulness": ["Faithfulness"],
    **JUDGED_TARGETS,  # issue 18: the same classes in both APIs
    "answer_correctness": ["AnswerCorrectness", "AnswerCorrectness[weights=1.0,0.0]"],
    "answer_relevancy": ["AnswerRelevancy", "AnswerRelevancy[strictness=1]"],
    "rubrics_score": ["DomainSpecificRubrics"],
    "instance_rubrics": ["InstanceSpecificRubrics"],
}


def applicable_targets(case: dict) -> set[str]:
    """The contract's rule, restated independently of the probe's own table."""
    names = {t for key, ts in VERDICT_TARGETS.items() if key in case.get("verdicts", {}) for t in ts}
    if case.get("reference_contexts") is not None:
        names |= {"NonLLMContextPrecisionWithReference", "NonLLMContextRecall"}
    if case.get("retrieved_context_ids") is not None and case.get("reference_context_ids") is not None:
        names |= {"IDBasedContextPrecision", "IDBasedContextRecall"}
    collections = {t for key, ts in COLLECTIONS_VERDICT_TARGETS.items() if key in case.get("verdicts", {}) for t in ts}
    if case.get("string_metrics") is True:  # issue 19: the string metrics, both APIs
        both = STRING_TARGETS
        names |= both | {"ChrfScore"}
        collections |= both | {"CHRFScore"}
    if case.get("embeddings") is not None:
        names |= {"SemanticSimilarity", "SemanticSimilarity[threshold=0.5]"}
        collections |= {"SemanticSimilarity", "SemanticSimilarity[threshold=0.5]"}
    if case.get("table_metrics") is True:  # issue 19: DataCompyScore, one class per mode and metric, both APIs
        names |= TABLE_TARGETS
        collections |= TABLE_TARGETS
    if case.get("quoted_spans") is True:  # issue 19: collections only at 0.4.3
        collections |= {"QuotedSpansAlignment"}
    return {f"legacy:{n}" for n in names} | {f"collections:{n}" for n in collections}


TABLE_TARGETS = {f"DataCompyScore[mode={mode},metric={metric}]" for mode in ("rows", "columns")
                 for metric in ("precision", "recall", "f1")}
STRING_TARGETS = {"ExactMatch", "StringPresence", "BleuScore",
                  *(f"NonLLMStringSimilarity[distance_measure={m}]" for m in ("levenshtein", "hamming", "jaro",
                                                                             "jaro_winkler")),
                  *(f"RougeScore[rouge_type={t},mode={m}]" for t in ("rouge1", "rougeL")
                    for m in ("precision", "recall", "fmeasure"))}


@pytest.fixture(scope="module")
def suite_cases() -> list[dict]:
    return json.loads(DEFAULT_SUITE.read_text(encoding="utf-8"))["cases"]


@pytest.fixture(scope="module")
def suite_run(suite_cases):
    run = run_probe(suite_cases)
    assert run.ok, run.error
    return run


def test_default_suite_runs_with_no_network_attempt(suite_run):
    assert suite_run.output["network_attempts"] == []


def test_default_suite_has_a_result_for_every_applicable_target(suite_run, suite_cases):
    got = {(r["case_id"], r["target"]) for r in suite_run.output["results"]}
    wanted = {(c["id"], t) for c in suite_cases for t in applicable_targets(c)}
    assert got == wanted
    assert len(suite_run.output["results"]) == len(wanted)  # one result per pair
    assert {t for _, t in got} == {f"legacy:{n}" for ts in VERDICT_TARGETS.values() for n in ts} | {
        "legacy:NonLLMContextPrecisionWithReference", "legacy:NonLLMContextRecall",
        "legacy:IDBasedContextPrecision", "legacy:IDBasedContextRecall"} | {
        f"collections:{n}" for ts in COLLECTIONS_VERDICT_TARGETS.values() for n in ts} | {
        f"{api}:{n}" for api in ("legacy", "collections")
        for n in STRING_TARGETS | {"SemanticSimilarity", "SemanticSimilarity[threshold=0.5]"}} | {
        "legacy:ChrfScore", "collections:CHRFScore"} | {
        f"{api}:{n}" for api in ("legacy", "collections") for n in TABLE_TARGETS} | {"collections:QuotedSpansAlignment"}


RETRIED_TEMPLATE_TARGETS = {f"{api}:{n}" for api in ("legacy", "collections")
                            for n in ("AnswerAccuracy", "ContextRelevance", "ResponseGroundedness")}


def test_default_suite_judge_is_asked_exactly_the_expected_prompts(suite_run):
    for r in suite_run.output["results"]:
        if r["target"] in RETRIED_TEMPLATE_TARGETS:  # one expected text per template, asked 0 to 5 times
            assert r["prompts"] <= 5 * r["expected_prompts"], r
        elif not isinstance(r["value"], dict):
            assert r["prompts"] == r["expected_prompts"], r


def test_telemetry_is_off_inside_the_probe(suite_run):
    assert suite_run.output["telemetry"] == {"RAGAS_DO_NOT_TRACK": "true", "do_not_track": True}
    assert suite_run.output["ragas"]["import_error"] is None


def test_guard_catches_a_real_connection_attempt():
    """Negative control: the same guard records and blocks an attempt made inside the probe."""
    case = {"id": "net", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
            "retrieved_contexts": []}
    run = run_probe([case], targets=["selftest:connect"])
    assert run.ok, run.error
    [attempt] = run.output["network_attempts"]
    assert attempt["call"] == "socket.create_connection" and attempt["address"] == "('127.0.0.1', 9)"
    assert run.output["results"][0]["value"]["error"]["type"] == "NetworkBlocked"


def test_guard_blocks_every_patched_entry_point():
    script = textwrap.dedent("""
        import json, socket, sys
        from ragas_compat.probe import network_guard as probe_network_guard
        attempts = []
        probe_network_guard.install(attempts)
        calls = [lambda: socket.create_connection(("127.0.0.1", 9)),
                 lambda: socket.getaddrinfo("example.com", 443),
                 lambda: socket.socket().connect(("127.0.0.1", 9)),
                 lambda: socket.socket().connect_ex(("127.0.0.1", 9))]
        blocked = 0
        for call in calls:
            try:
                call()
            except probe_network_guard.NetworkBlocked:
                blocked += 1
        print(json.dumps({"blocked": blocked, "calls": [a["call"] for a in attempts]}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"blocked": 4, "calls": [
        "socket.create_connection", "socket.getaddrinfo", "socket.connect", "socket.connect_ex"]}
