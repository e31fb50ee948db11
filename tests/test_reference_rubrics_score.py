"""RubricsScore / InstanceRubrics reference (ragas_compat.metrics.rubrics_score): the judge's level on the
rubric's scale, refused off the scale, undefined without a scale; the case format's checks."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import metric
from ragas_compat.metrics.rubrics_score import DEFAULT_LEVELS, rubric_levels, rubric_outcome
from ragas_compat.vocabulary import Classification


def case(**extra: object):
    raw = {"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
           "retrieved_contexts": []}
    raw.update(extra)
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t.json").cases[0]


def test_hand_computed_example_on_the_default_rubric():
    # the judge reads RubricsScore's default rubric (score1 .. score5) and gives 4: the value is 4
    outcome = metric("rubrics_score").outcome(case(verdicts={"rubrics_score": [{"score": 4}]}))
    assert outcome.value == Fraction(4) and outcome.details["levels"] == DEFAULT_LEVELS
    assert classify(4.0, outcome).name is Classification.IDENTICAL


def test_the_instance_rubric_sets_the_scale():
    rubric = {"score1_description": "a", "score2_description": "b", "score3_description": "c"}
    spec = metric("instance_rubrics")
    assert spec.outcome(case(rubrics=rubric, verdicts={"instance_rubrics": [{"score": 3}]})).value == 3
    off = spec.outcome(case(rubrics=rubric, verdicts={"instance_rubrics": [{"score": 5}]}))
    assert off.value is None and off.details["error_reason"] == "score_out_of_scale"
    assert classify(5.0, off).name is Classification.DIVERGENCE


def test_instance_rubrics_does_not_apply_without_a_rubric():
    assert not metric("instance_rubrics").applies_to(case(verdicts={"instance_rubrics": [{"score": 3}]}))


def test_an_empty_rubric_has_no_scale():
    outcome = rubric_outcome("instance_rubrics", 1, ())
    assert outcome.value is None and outcome.undefined_reason == "no_rubric_levels"


@pytest.mark.parametrize("score", [0, 6, 7, -1])
def test_a_score_off_the_default_scale_is_refused(score):
    outcome = rubric_outcome("rubrics_score", score, DEFAULT_LEVELS)
    assert outcome.refused is not None and outcome.details["error_reason"] == "score_out_of_scale"


@pytest.mark.parametrize("score", [True, "4", 4.0, 3.5, None])
def test_a_score_that_is_not_an_integer_is_refused(score):
    outcome = rubric_outcome("rubrics_score", score, DEFAULT_LEVELS)
    assert outcome.refused is not None and outcome.details["error_reason"] == "score_not_integer"


def test_levels_come_from_the_scoreN_description_keys():
    assert rubric_levels({"score10_description": "", "score0_description": "", "score5_description": ""}) == (0, 5, 10)
    with pytest.raises(HarnessInputError) as info:
        rubric_levels({"level1": "x"})
    assert info.value.field == "rubrics.level1"


def test_the_loader_checks_rubric_keys_and_one_reply():
    with pytest.raises(HarnessInputError) as info:
        case(rubrics={"level1": "x"}, verdicts={"instance_rubrics": [{"score": 1}]})
    assert "rubrics" in str(info.value)
    with pytest.raises(HarnessInputError) as info:
        case(verdicts={"rubrics_score": [{"score": 1}, {"score": 2}]})
    assert "verdicts.rubrics_score" in str(info.value)


@given(st.sets(st.integers(0, 20), min_size=1, max_size=8), st.data())
def test_a_level_of_the_rubric_is_its_own_value_and_within_the_scale(levels, data):
    score = data.draw(st.sampled_from(sorted(levels)))
    outcome = rubric_outcome("instance_rubrics", score, tuple(sorted(levels)))
    assert outcome.value == score and min(levels) <= outcome.value <= max(levels)


@given(st.sets(st.integers(0, 20), min_size=1, max_size=8), st.integers(-5, 25))
def test_a_score_is_defined_exactly_when_it_is_a_level(levels, score):
    outcome = rubric_outcome("instance_rubrics", score, tuple(sorted(levels)))
    assert (outcome.value is not None) == (score in levels)


def test_an_empty_rubric_is_undefined_whatever_the_score():
    assert rubric_outcome("instance_rubrics", "4", ()).undefined_reason == "no_rubric_levels"
