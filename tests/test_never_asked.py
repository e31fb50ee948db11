"""A rating metric's "never asked" outcome (a score the class returns without asking its judge) is tested
before ``empty_as_zero``: a row the judge's replies leave undefined, scored 0.0 by the shortcut, is explained by
the shortcut (variant ``text_shortcut``), its true cause, not read as an undefined row scored 0."""

from __future__ import annotations

import math

import pytest
from bundled_probe import bundled_values

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.compare.classify import classify, never_asked_variants
from ragas_compat.metrics.nvidia_ratings import METRICS, rating_outcome
from ragas_compat.vocabulary import Classification

BY_KEY = {m.key: m for m in METRICS}
CR, RG, AA = BY_KEY["context_relevance"], BY_KEY["response_groundedness"], BY_KEY["answer_accuracy"]
NO_VALID = [{"template": 1, "rating": "n/a"}, {"template": 2, "rating": 5}]


def case(key: str, items: list, **texts):
    raw = {"id": "c", "category": "edge", "user_input": "Is this true: The Nile flows north.",
           "reference": "Yes.", "response": "Yes.", "retrieved_contexts": ["The Nile flows north."],
           "verdicts": {key: items}}
    raw.update(texts)
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def test_question_containing_the_context_with_no_valid_rating_is_the_shortcut_not_empty_as_zero():
    reference = rating_outcome(CR, case("context_relevance", NO_VALID))
    assert reference.value is None and reference.undefined_reason == "no_valid_rating"
    assert never_asked_variants(reference) == ("text_shortcut",)
    diagnosis = classify(0.0, reference)
    # before: EMPTY_AS_ZERO ("reference undefined ...; Ragas returns 0.0, indistinguishable from a real zero")
    assert diagnosis.name is Classification.VARIANT
    assert "never asked" in diagnosis.explanation and "without asking the judge" in diagnosis.explanation


def test_blank_response_with_no_valid_rating_is_the_groundedness_shortcut():
    reference = rating_outcome(RG, case("response_groundedness", NO_VALID, response="  "))
    assert reference.value is None
    assert classify(0.0, reference).name is Classification.VARIANT


def test_a_zero_read_from_the_replies_stays_empty_as_zero():
    # AnswerAccuracy asks its judge (no shortcut): '10' is off the scale (undefined), the legacy digit scan
    # reads its 0, an undefined row scored 0.0 through the judge's replies
    reference = rating_outcome(AA, case("answer_accuracy", [{"template": 1, "rating": 10}, {"template": 2, "rating": 10}]))
    assert reference.value is None and never_asked_variants(reference) == ()
    assert classify(0.0, reference).name is Classification.EMPTY_AS_ZERO


def test_a_nan_is_not_taken_for_the_shortcut():
    reference = rating_outcome(CR, case("context_relevance", NO_VALID))
    assert classify(math.nan, reference).name is Classification.UNDEFINED_NAN


@pytest.mark.slow
def test_bundled_shortcut_case_through_the_probe_is_the_variant_on_both_apis():
    case_id = "nv-cr-shortcut-no-valid-rating"
    values = bundled_values(lambda cid: cid == case_id,
                            ["legacy:ContextRelevance", "collections:ContextRelevance"])
    reference = rating_outcome(CR, load_default_suite().case(case_id))
    for api in ("legacy", "collections"):
        value = values[(case_id, f"{api}:ContextRelevance")]
        assert value == 0.0
        assert classify(value, reference).name is Classification.VARIANT  # type: ignore[arg-type]
