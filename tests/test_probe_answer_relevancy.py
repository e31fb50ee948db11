"""ResponseRelevancy / AnswerRelevancy through the real Ragas classes of both APIs (probe, scripted judge
sampled ``strictness`` times, frozen embeddings): the bundled cases give the hand-computed values; and the
judge stub's in-order samples and the embedding stub's legacy names."""

from __future__ import annotations

import json
import math

import pytest
from bundled_probe import bundled_values

from ragas_compat.cases import load_default_suite
from ragas_compat.probe.judge.prompt_book import INPUT_MARKER, OUTPUT_SUFFIX, PromptBook, StubMismatch
from ragas_compat.runner import run_probe
from ragas_compat.values import RagasError, decode_ragas_value

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

IDS = ("ar-worked-example", "ar-some-noncommittal", "ar-first-sample-noncommittal", "ar-all-noncommittal",
       "ar-empty-question", "ar-zero-vector", "ar-empty-inputs")
LEGACY = ("ResponseRelevancy", "AnswerRelevancy")
TARGETS = ([f"legacy:{c}{s}" for c in LEGACY for s in ("", "[strictness=1]")]
           + [f"collections:AnswerRelevancy{s}" for s in ("", "[strictness=1]")])
ALL = [("legacy", c) for c in LEGACY] + [("collections", "AnswerRelevancy")]


@pytest.fixture(scope="module")
def values():
    return bundled_values(IDS.__contains__, TARGETS)


@pytest.mark.parametrize(("api", "cls"), ALL)
def test_worked_example_mean_cosine(values, api, cls):
    # cosines 1, 3/5, 4/5 evaluated in doubles: 0.8000000000000002; strictness 1: the first question only
    assert values[("ar-worked-example", f"{api}:{cls}")] == 0.8000000000000002
    assert values[("ar-worked-example", f"{api}:{cls}[strictness=1]")] == 1.0


@pytest.mark.parametrize(("api", "cls"), ALL)
def test_only_all_noncommittal_samples_zero_the_score(values, api, cls):
    assert values[("ar-some-noncommittal", f"{api}:{cls}")] == 0.8000000000000002
    assert values[("ar-all-noncommittal", f"{api}:{cls}")] == 0.0
    # the strictness boundary: one sample, so "all" and "any" agree
    assert values[("ar-first-sample-noncommittal", f"{api}:{cls}")] == 0.8000000000000002
    assert values[("ar-first-sample-noncommittal", f"{api}:{cls}[strictness=1]")] == 0.0


def test_empty_question_kept_by_legacy_dropped_by_collections(values):
    for cls in LEGACY:
        assert values[("ar-empty-question", f"legacy:{cls}")] == pytest.approx(14 / 15)
    assert values[("ar-empty-question", "collections:AnswerRelevancy")] == pytest.approx(0.9)


@pytest.mark.parametrize("target", TARGETS)
def test_zero_vector_is_nan(values, target):
    assert math.isnan(values[("ar-zero-vector", target)])


def test_empty_inputs_legacy_scores_collections_raises(values):
    for cls in LEGACY:
        assert values[("ar-empty-inputs", f"legacy:{cls}")] == 0.0
    error = values[("ar-empty-inputs", "collections:AnswerRelevancy")]
    assert isinstance(error, RagasError) and error.type == "ValueError" and "user_input" in error.message


def test_fewer_samples_than_strictness_fails_loudly_on_collections():
    case = next(c.raw for c in load_default_suite().cases if c.id == "ar-worked-example")
    case = {**case, "verdicts": {"answer_relevancy": case["verdicts"]["answer_relevancy"][:2]}}
    run = run_probe([case], targets=["collections:AnswerRelevancy"])
    assert run.ok, run.error
    value = decode_ragas_value(run.output["results"][0]["value"])
    assert isinstance(value, RagasError) and value.type == "StubMismatch"


# -- the stubs -------------------------------------------------------------------------------------------
def prompt(instruction: str, data: dict) -> str:
    return f"{instruction}\n{INPUT_MARKER}{json.dumps(data)}{OUTPUT_SUFFIX}"


def test_in_order_samples_answer_one_asking_each():
    book = PromptBook()
    book.expect_in_order("q", "Generate a question", {"response": "r"}, [{"n": 1}, {"n": 2}], label="samples")
    text = prompt("Generate a question", {"response": "r"})
    assert [book.answer(text), book.answer(text)] == ['{"n": 1}', '{"n": 2}']
    with pytest.raises(StubMismatch, match="asked 3 times"):
        book.answer(text)
    assert book.unasked() == []


def test_identical_content_with_different_replies_is_still_ambiguous_without_in_order():
    book = PromptBook()
    for n in (1, 2):
        book.expect("q", "Generate a question", {"response": "r"}, {"n": n}, label="plain")
    with pytest.raises(StubMismatch, match="ambiguous"):
        book.answer(prompt("Generate a question", {"response": "r"}))


def test_frozen_embeddings_answer_the_legacy_names_too():
    pytest.importorskip("ragas")
    from ragas_compat.probe.stubs.embeddings import FrozenEmbeddings

    model = FrozenEmbeddings({"a": [1, 0], "b": [0, 1]})
    assert model.embed_query("a") == [1.0, 0.0]
    assert model.embed_documents(["b", "a"]) == [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(LookupError, match="'c'"):
        model.embed_query("c")
