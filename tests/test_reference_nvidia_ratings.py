"""AnswerAccuracy, ContextRelevance, ResponseGroundedness reference (ragas_compat.metrics.nvidia_ratings):
the documented two-template mean, retries, Ragas's legacy reading as named alternatives, the case
format's checks, and properties."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.nvidia_ratings import (
    ATTEMPTS,
    METRICS,
    legacy_average,
    legacy_read,
    legacy_template,
    rating_outcome,
    rating_score,
    template_rating,
)
from ragas_compat.metrics.registry import metric
from ragas_compat.vocabulary import Classification

BY_KEY = {m.key: m for m in METRICS}
AA, CR, RG = BY_KEY["answer_accuracy"], BY_KEY["context_relevance"], BY_KEY["response_groundedness"]
EINSTEIN = ["Albert Einstein was born March 14, 1879.", "Albert Einstein was born at Ulm, in Wuerttemberg, Germany."]


def calls(*pairs):
    return [{"template": t, "rating": r} for t, r in pairs]


def case(key: str, items: list, **texts):
    raw = {"id": "c", "category": "edge", "user_input": "When and where was Albert Einstein born?",
           "reference": "Albert Einstein was born in 1879.", "response": "Albert Einstein was born in 1879.",
           "retrieved_contexts": EINSTEIN, "verdicts": {key: items}}
    raw.update(texts)
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def outcome(m, *pairs, **texts):
    return rating_outcome(m, case(m.key, calls(*pairs), **texts))


# --------------------------------------------------------------------------- the documented examples

def test_documented_examples_both_templates_top_rating_score_one():
    # Ragas docs, Nvidia Metrics: AnswerAccuracy 4 and 4 -> (1 + 1) / 2 = 1; ContextRelevance and
    # ResponseGroundedness 2 and 2 -> 1
    assert outcome(AA, (1, 4), (2, 4)).value == 1
    assert outcome(CR, (1, 2), (2, 2)).value == 1
    assert outcome(RG, (1, 2), (2, 2)).value == 1


def test_hand_computed_disagreeing_templates():
    assert outcome(AA, (1, 4), (2, 2)).value == Fraction(3, 4)      # (4/4 + 2/4) / 2
    assert outcome(RG, (1, 0), (2, 1)).value == Fraction(1, 4)      # (0/2 + 1/2) / 2
    assert outcome(CR, (1, 1), (2, 2)).value == Fraction(3, 4)


def test_only_one_valid_template_takes_the_valid_one_either_way_round():
    # "If both ratings are valid, the final score is average of score1 and score2; otherwise, it takes the valid one."
    assert outcome(AA, (1, "n/a"), (2, 2)).value == Fraction(1, 2)
    assert outcome(AA, (1, 2), (2, "n/a")).value == Fraction(1, 2)
    assert outcome(RG, (1, 7), (2, 1)).details["valid_templates"] == 1


def test_an_off_scale_rating_is_a_failed_attempt_and_the_template_is_asked_again():
    o = outcome(AA, (1, 3), (1, 4), (2, 4))
    assert o.value == 1 and o.details["ratings"] == {"template 1": 4, "template 2": 4}


def test_only_the_first_five_attempts_count_and_the_last_reply_repeats():
    assert template_rating(["x", "x", "x", "x", 2], CR.scale) == 2
    assert template_rating(["x", "x", "x", "x", "x", 2], CR.scale) is None
    assert template_rating([5], CR.scale) is None  # asked 5 times, 5 every time
    assert ATTEMPTS == 5


def test_no_valid_rating_is_undefined_and_ragas_nan_is_undefined_nan():
    o = outcome(CR, (1, "n/a"), (2, 5))
    assert o.value is None and o.undefined_reason == "no_valid_rating"
    assert classify(math.nan, o).name is Classification.UNDEFINED_NAN


# --------------------------------------------------------------------------- Ragas's legacy reading

def test_legacy_reads_digits_by_substring_in_its_own_order():
    assert legacy_read(3, AA) == 0.75 and legacy_read(1, AA) == 0.25    # off the 0/2/4 scale, still read
    assert legacy_read("10", AA) == 0.0                                 # 0 is looked for first
    assert legacy_read("12", CR) == 1.0                                 # 2 is looked for first
    assert legacy_read("Rating: 2", RG) == 1.0
    assert math.isnan(legacy_read("n/a", AA)) and math.isnan(legacy_read(3, CR))


def test_legacy_average_is_max_on_nan_so_the_first_template_decides():
    assert legacy_average(0.5, 1.0) == 0.75
    assert legacy_average(0.5, math.nan) == 0.5
    assert math.isnan(legacy_average(math.nan, 0.5))


def test_legacy_digit_reading_is_a_named_variant():
    o = outcome(AA, (1, 3), (1, 4), (2, 4))
    assert o.alternatives["variant:legacy_digit_scan"] == 0.875
    assert o.details["legacy_reads_other_ratings"] is True
    assert classify(0.875, o).name is Classification.VARIANT
    assert classify(1.0, o).name is Classification.IDENTICAL          # collections: the definition


def test_first_template_unread_is_flagged_and_legacy_nan_diverges():
    o = outcome(RG, (1, 7), (2, 1))
    assert o.value == Fraction(1, 2) and o.details["legacy_first_template_unread"] is True
    assert classify(math.nan, o).name is Classification.DIVERGENCE
    swapped = outcome(RG, (1, 1), (2, 7))
    assert swapped.details["legacy_first_template_unread"] is False and "variant:legacy_digit_scan" not in swapped.alternatives


def test_fixed_scores_without_the_judge_are_a_named_variant():
    contained = outcome(RG, (1, 1), (2, 1), response="Albert Einstein was born at Ulm")
    assert contained.value == Fraction(1, 2) and contained.alternatives["variant:text_shortcut"] == 1
    assert classify(1.0, contained).name is Classification.VARIANT
    question_has_context = outcome(CR, (1, 2), (2, 2), user_input="Is it so? " + "\n".join(EINSTEIN))
    assert question_has_context.alternatives["variant:text_shortcut"] == 0
    assert outcome(CR, (1, 1), (2, 1), retrieved_contexts=[]).details["legacy_shortcut"] == 0.0
    assert outcome(AA, (1, 0), (2, 0), response="").details["legacy_shortcut"] is None  # AnswerAccuracy asks


# --------------------------------------------------------------------------- the case format

@pytest.mark.parametrize(("items", "field"), [
    (calls((1, 4)), "verdicts.answer_accuracy"),                         # template 2 never asked
    (calls((1, 4), (2, 2.0)), "verdicts.answer_accuracy[1].rating"),     # 2.0: not an integer rating
    (calls((1, 4), (2, True)), None),                                     # the schema refuses a boolean
])
def test_bad_judge_calls_are_refused_naming_the_field(items, field):
    with pytest.raises(HarnessInputError) as err:
        rating_outcome(AA, case("answer_accuracy", items))
    if field is not None:
        assert err.value.field == field
    else:
        assert "verdicts.answer_accuracy[1].rating" in str(err.value)


def test_the_schema_refuses_a_third_template_and_unknown_keys():
    with pytest.raises(HarnessInputError) as err:
        case("context_relevance", [{"template": 3, "rating": 2}, {"template": 1, "ratin": 2}])
    text = str(err.value)
    assert "verdicts.context_relevance[0].template" in text and "'ratin'" in text


def test_specs_are_registered_with_both_apis():
    for m in METRICS:
        spec = metric(m.key)
        assert spec.ragas_targets == (f"legacy:{m.ragas_class}", f"collections:{m.ragas_class}")
        assert spec.fields_read == m.fields_read


# --------------------------------------------------------------------------- properties

replies = st.lists(st.one_of(st.integers(-2, 6), st.sampled_from(["n/a", "Rating: 2", "10"])), min_size=1, max_size=7)


@given(st.sampled_from(METRICS), replies, replies)
def test_range_and_symmetry_in_the_templates(m, first, second):
    value = rating_score([template_rating(first, m.scale), template_rating(second, m.scale)], m.top)
    swapped = rating_score([template_rating(second, m.scale), template_rating(first, m.scale)], m.top)
    assert value == swapped
    assert value is None or 0 <= value <= 1


@given(st.sampled_from(METRICS), st.data())
def test_a_higher_rating_never_lowers_the_score(m, data):
    low, high = sorted(data.draw(st.lists(st.sampled_from(m.scale), min_size=2, max_size=2)))
    other = data.draw(st.one_of(st.none(), st.sampled_from(m.scale)))
    assert rating_score([low, other], m.top) <= rating_score([high, other], m.top)


@given(st.sampled_from(METRICS), replies, replies)
def test_legacy_recomputation_is_the_definition_when_every_reply_is_on_the_scale_or_unread(m, first, second):
    """Where no reply holds a digit the definition does not count, the legacy reading is the
    definition, except that an unread first template makes it NaN."""
    if any(not math.isnan(legacy_read(r, m)) and not (type(r) is int and r in m.scale) for r in first + second):
        return
    exact = rating_score([template_rating(first, m.scale), template_rating(second, m.scale)], m.top)
    legacy = legacy_average(legacy_template(first, m), legacy_template(second, m))
    if template_rating(first, m.scale) is None:
        assert math.isnan(legacy)
    else:
        assert legacy == exact
