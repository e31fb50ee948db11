"""AnswerCorrectness through the real Ragas classes of both APIs (probe, scripted judge, frozen embeddings):
the bundled cases give the hand-computed values, and Ragas's known semantics show as the rules in
pinned/expectations.toml describe them."""

from __future__ import annotations

import math

import pytest
from bundled_probe import bundled_values

from ragas_compat.cases import load_default_suite
from ragas_compat.runner import run_probe
from ragas_compat.values import decode_ragas_value

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

IDS = ("ac-worked-example", "ac-zero-statements", "ac-no-reference-statements", "ac-zero-vector", "ac-empty-inputs")
TARGETS = [f"{api}:AnswerCorrectness{suffix}" for api in ("legacy", "collections") for suffix in ("", "[weights=1.0,0.0]")]


@pytest.fixture(scope="module")
def values():
    return bundled_values(IDS.__contains__, TARGETS)


@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_worked_example_is_the_documented_blend(values, api):
    # F1 = 2/5, cos = 24/25: 0.75 * 0.4 + 0.25 * 0.96 = 0.54; weights [1, 0]: F1
    assert values[("ac-worked-example", f"{api}:AnswerCorrectness")] == 0.54
    assert values[("ac-worked-example", f"{api}:AnswerCorrectness[weights=1.0,0.0]")] == 0.4


@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_no_statement_counts_as_perfect_factuality(values, api):
    assert values[("ac-zero-statements", f"{api}:AnswerCorrectness")] == 0.99
    assert values[("ac-zero-statements", f"{api}:AnswerCorrectness[weights=1.0,0.0]")] == 1.0
    assert values[("ac-empty-inputs", f"{api}:AnswerCorrectness")] == 1.0


def test_the_apis_disagree_when_one_side_has_no_statement(values):
    assert values[("ac-no-reference-statements", "legacy:AnswerCorrectness")] == 0.74
    assert values[("ac-no-reference-statements", "collections:AnswerCorrectness")] == 0.99
    assert values[("ac-no-reference-statements", "legacy:AnswerCorrectness[weights=1.0,0.0]")] == 2 / 3
    assert values[("ac-no-reference-statements", "collections:AnswerCorrectness[weights=1.0,0.0]")] == 1.0


def test_a_zero_vector_is_nan_on_the_legacy_path_and_zero_similarity_on_collections(values):
    assert math.isnan(values[("ac-zero-vector", "legacy:AnswerCorrectness")])
    assert values[("ac-zero-vector", "collections:AnswerCorrectness")] == 0.375
    for api in ("legacy", "collections"):
        assert values[("ac-zero-vector", f"{api}:AnswerCorrectness[weights=1.0,0.0]")] == 0.5


def test_a_missing_vector_fails_loudly():
    case = next(c.raw for c in load_default_suite().cases if c.id == "ac-worked-example")
    case = {**case, "embeddings": {k: v for k, v in case["embeddings"].items() if "fusion" not in k}}
    run = run_probe([case], targets=["legacy:AnswerCorrectness", "collections:AnswerCorrectness"])
    assert run.ok, run.error
    for result in run.output["results"]:
        error = decode_ragas_value(result["value"])
        assert error.type == "LookupError" and "no frozen embedding" in error.message


def test_a_prompt_the_script_cannot_answer_fails_loudly():
    # response and reference are the same text with different frozen statements: one statement-generation
    # prompt would need two different replies, which a judge answering by content cannot give
    case = next(c.raw for c in load_default_suite().cases if c.id == "ac-worked-example")
    case = {**case, "reference": case["response"]}
    run = run_probe([case], targets=["legacy:AnswerCorrectness", "collections:AnswerCorrectness"])
    assert run.ok, run.error
    for result in run.output["results"]:
        value = decode_ragas_value(result["value"])
        assert value.type == "StubMismatch" and "ambiguous" in value.message
