"""Reference fixes found on held-out data, each against an independent oracle (rouge-score, sacrebleu) or a
hand-computed fraction: ROUGE precision/recall undefined only on their own empty denominator; BLEU and chrF
of an empty hypothesis 0 (sacrebleu's reading) with "undefined" as the named alternative."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.metrics import text_reference as tr
from ragas_compat.metrics.registry import metric
from ragas_compat.vocabulary import Classification

sacrebleu = pytest.importorskip("sacrebleu")


def case(reference: str, response: str):
    raw = {"id": "t", "category": "edge", "user_input": "q", "reference": reference, "response": response,
           "retrieved_contexts": [], "string_metrics": True}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t.json").cases[0]


def rouge(reference: str, response: str, rouge_type: str, mode: str) -> float:
    from rouge_score import rouge_scorer  # here, not at collection: it imports nltk (about 0.5 s a pytest process)

    return getattr(rouge_scorer.RougeScorer([rouge_type], use_stemmer=False).score(reference, response)[rouge_type],
                   mode)


@pytest.mark.parametrize("rouge_type", ["rouge1", "rougeL"])
def test_an_empty_response_has_rouge_recall_0_over_the_reference_tokens(rouge_type):
    short = "1" if rouge_type == "rouge1" else "l"
    reference = "the cat sat on the mat"
    recall = metric(f"rouge_{short}_recall").compute(case(reference, ""))
    assert recall.value == Fraction(0, 6) and recall.undefined_reason is None   # 0 / |ref| = 0 / 6
    assert float(recall.value) == rouge(reference, "", rouge_type, "recall") == 0.0
    # precision divides by the response's tokens: 0/0 there, undefined (rouge-score writes 0)
    precision = metric(f"rouge_{short}_precision").compute(case(reference, ""))
    assert precision.value is None and precision.undefined_reason == "empty_response_tokens"
    fmeasure = metric(f"rouge_{short}_fmeasure").compute(case(reference, ""))
    assert fmeasure.value is None and fmeasure.undefined_reason == "empty_response_tokens"


@pytest.mark.parametrize("rouge_type", ["rouge1", "rougeL"])
def test_an_empty_reference_has_rouge_precision_0_over_the_response_tokens(rouge_type):
    short = "1" if rouge_type == "rouge1" else "l"
    precision = metric(f"rouge_{short}_precision").compute(case("", "a dog ran"))
    assert precision.value == Fraction(0, 3) and float(precision.value) == rouge("", "a dog ran", rouge_type,
                                                                                  "precision")
    recall = metric(f"rouge_{short}_recall").compute(case("", "a dog ran"))
    assert recall.value is None and recall.undefined_reason == "empty_reference_tokens"
    fmeasure = metric(f"rouge_{short}_fmeasure").compute(case("", "a dog ran"))
    assert fmeasure.value is None and fmeasure.undefined_reason == "empty_reference_tokens"


def test_rouge_value_per_mode_by_hand():
    assert tr.rouge_value("recall", 0, 0, 4) == 0 and tr.rouge_value("precision", 0, 0, 4) is None
    assert tr.rouge_value("precision", 0, 5, 0) == 0 and tr.rouge_value("recall", 0, 5, 0) is None
    assert tr.rouge_value("fmeasure", 0, 0, 4) is None and tr.rouge_value("fmeasure", 2, 4, 8) == Fraction(1, 3)


def test_the_explicit_policy_mean_over_an_empty_answer_counts_its_recall_as_0():
    # two answers, one empty: recall 1 and 0, mean 1/2 (before: the empty one was dropped, mean 1)
    values = [metric("rouge_1_recall").compute(case("red fox", r)).value for r in ("red fox", "")]
    assert values == [1, 0]


@pytest.mark.parametrize("name,oracle", [
    ("bleu", lambda ref, hyp: sacrebleu.corpus_bleu([hyp], [[ref]]).score / 100),
    ("chrf", lambda ref, hyp: sacrebleu.corpus_chrf([hyp], [[ref]]).score / 100),
])
@pytest.mark.parametrize("response", ["", "   "])
def test_bleu_and_chrf_of_an_empty_hypothesis_are_0_with_undefined_as_the_alternative(name, oracle, response):
    out = metric(name).compute(case("The agent uses port 7443.", response))
    assert out.value == 0 and out.undefined_reason is None
    assert float(out.value) == oracle("The agent uses port 7443.", response) == 0.0
    assert out.alternatives["variant:empty_hypothesis_undefined"] is None
    assert "undefined" in out.details["variants"]["empty_hypothesis_undefined"]
    # Ragas's 0.0 on an empty response is the reference's value, bit for bit
    assert classify(0.0, out).name is Classification.IDENTICAL


def test_chrf_with_only_the_reference_empty_stays_undefined():
    out = metric("chrf").compute(case("", "some text"))
    assert out.value is None and out.undefined_reason == "empty_text"
