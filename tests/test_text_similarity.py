"""The string, n-gram and edit-similarity metrics: the named variants, the float evaluations, the
threshold fact, the opt-in and the oracles' absence (no Ragas here; the probe side is in the audit)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify, matching_variant
from ragas_compat.compare.rules import INPUT_FACTS, contexts_at_similarity_threshold, parse_condition
from ragas_compat.metrics import oracles
from ragas_compat.metrics.registry import metric
from ragas_compat.vocabulary import Classification


def case(reference: str, response: str, string_metrics: object = True, **extra):
    raw = {"id": "c", "category": "edge", "user_input": "q", "reference": reference, "response": response,
           "retrieved_contexts": [], **extra}
    if string_metrics is not None:
        raw["string_metrics"] = string_metrics
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def test_the_metrics_run_only_on_cases_that_ask_for_them():
    assert metric("bleu").applies_to(case("a", "a"))
    assert not metric("bleu").applies_to(case("a", "a", string_metrics=False))
    assert not metric("bleu").applies_to(case("a", "a", string_metrics=None))


def test_bleu_first_sentence_variant_is_recognised_and_named():
    a = "the quick brown fox jumps over the lazy dog"
    out = metric("bleu").outcome(case(f"{a}. another sentence with nothing in common at all",
                                      f"{a}. a completely different second sentence here"))
    assert out.value is not None and out.value < Fraction(6, 10)
    diagnosis = classify(1.0000000000000004, out)   # what Ragas 0.4.3 returns on this input
    assert diagnosis.name is Classification.VARIANT
    assert "first sentence" in diagnosis.explanation
    assert matching_variant(1.0000000000000004, out) == "bleu_first_sentence"
    condition = parse_condition({"variant": "bleu_first_sentence"}, "when")
    assert condition.variant == frozenset({"bleu_first_sentence"})


def test_similarity_float_cancellation_is_rounding_not_divergence():
    out = metric("string_similarity_levenshtein").outcome(case("a" * 20, "b" * 19 + "a"))
    assert out.value == Fraction(1, 20)
    ragas = 1 - 19 / 20                       # rapidfuzz's normalized distance, then Ragas's 1 - x
    assert ragas == 0.050000000000000044 and out.alternatives["rounding"] == ragas
    diagnosis = classify(ragas, out)
    assert diagnosis.name is Classification.ROUNDING and "cancels digits" in diagnosis.explanation


def test_empty_response_is_undefined_where_the_response_is_the_denominator():
    for name in ("rouge_1_precision", "rouge_l_fmeasure"):
        out = metric(name).outcome(case("Paris is the capital.", ""))
        assert out.value is None and out.undefined_reason
        assert classify(0.0, out).name is Classification.EMPTY_AS_ZERO
    # recall divides by the reference; BLEU and chrF of an empty hypothesis are 0 (sacrebleu's reading)
    for name in ("bleu", "chrf", "rouge_1_recall", "rouge_l_recall"):
        out = metric(name).outcome(case("Paris is the capital.", ""))
        assert out.value == 0 and classify(0.0, out).name is Classification.IDENTICAL
    assert metric("string_similarity_levenshtein").outcome(case("Paris", "")).value == 0


def test_exactly_half_similar_contexts_are_the_threshold_fact():
    assert contexts_at_similarity_threshold(["abef"], ["abcd"])
    assert not contexts_at_similarity_threshold(["abcf"], ["abcd"])    # 3/4
    assert not contexts_at_similarity_threshold(["abcd"], ["abcd"])    # equal is not "at the threshold"
    assert "contexts_at_similarity_threshold" in INPUT_FACTS


def test_an_absent_oracle_is_named_not_fatal(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(oracles, "_version", lambda distribution: None)
    out = metric("chrf").outcome(case("a cat", "a cat"))
    assert out.value == 1
    assert "absent" in out.details["oracle"] and "value" not in out.details["oracle"]
    assert oracles.oracle_status() == {"sacrebleu": None, "rouge-score": None, "rapidfuzz": None, "datacompy": None}


def test_present_oracles_agree_with_the_reference_on_a_worked_example():
    pytest.importorskip("sacrebleu")
    out = metric("chrf").outcome(case("The capital of France is Paris.", "Paris is the capital of France."))
    assert out.details["oracle"]["value"] == pytest.approx(float(out.value), abs=1e-12)


def test_string_metrics_and_semantic_similarity_fuzzed_together_score_the_same_texts():
    # regression: SemanticSimilarity's fuzz inputs used to overwrite every case's texts with two fixed
    # strings, so a fuzz run of all metrics scored BLEU, ROUGE ... on one constant pair of texts
    from ragas_compat.tools.fuzz.generator import generate_case

    texts = set()
    for i in range(40):
        together = generate_case(7, i, ["bleu", "rouge_1_recall", "semantic_similarity"])
        alone = generate_case(7, i, ["bleu"])
        assert (together["reference"], together["response"]) == (alone["reference"], alone["response"])
        assert {together["reference"] or " ", together["response"] or " "} <= set(together["embeddings"])
        texts.add(together["reference"])
    assert len(texts) > 30
