"""AspectCritic / SimpleCriteriaScore reference (ragas_compat.metrics.criteria_votes): the majority vote over
strictness samples (made odd), the undefined and refused paths, Ragas 0.4.3's first-sample variant, and
properties of the vote."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.cases import parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.criteria_votes import (
    ASPECT_CRITIC,
    SIMPLE_CRITERIA,
    SPECS,
    majority,
    odd_strictness,
    votes_outcome,
)
from ragas_compat.vocabulary import Classification


def aspect(*votes: object) -> list[dict]:
    return [{"verdict": v} for v in votes]


def scores(*votes: object) -> list[dict]:
    return [{"score": v} for v in votes]


def test_hand_computed_example_from_the_documented_definition():
    # strictness 3: three samples 0, 1, 1 -> two of three say 1 -> verdict 1
    outcome = votes_outcome("aspect_critic_strictness_3", ASPECT_CRITIC, 3, aspect(0, 1, 1))
    assert outcome.value == Fraction(1)
    assert outcome.details["counts"] == {0: 1, 1: 2}
    # Ragas 0.4.3 asks once and returns the first sample: the named variant, not a divergence
    assert outcome.alternatives == {"variant:first_sample": Fraction(0)}
    assert classify(0.0, outcome).name is Classification.VARIANT
    assert classify(1.0, outcome).name is Classification.IDENTICAL


def test_even_strictness_is_made_odd_so_the_third_sample_breaks_the_tie():
    assert [odd_strictness(s) for s in (1, 2, 3, 4)] == [1, 3, 3, 5]
    outcome = votes_outcome("aspect_critic_strictness_2", ASPECT_CRITIC, 2, aspect(1, 0, 0))
    assert outcome.value == 0 and outcome.details["samples_used"] == 3


def test_samples_beyond_k_are_not_read():
    outcome = votes_outcome("simple_criteria", SIMPLE_CRITERIA, 1, scores(3, 5, 5))
    assert outcome.value == 3 and outcome.alternatives == {}
    outcome = votes_outcome("simple_criteria_strictness_3", SIMPLE_CRITERIA, 3, scores(3, 5, 5, 1, 1, 1))
    assert outcome.value == 5


def test_simple_criteria_takes_the_mode_and_a_tie_is_undefined():
    assert votes_outcome("s", SIMPLE_CRITERIA, 3, scores(2, 4, 4)).value == 4
    tied = votes_outcome("s", SIMPLE_CRITERIA, 3, scores(1, 2, 3))
    assert tied.value is None and tied.undefined_reason == "tied_votes"
    assert tied.alternatives == {"variant:first_sample": Fraction(1)}
    assert classify(1.0, tied).name is Classification.VARIANT      # undefined, Ragas reads the first sample
    assert classify(2.0, tied).name is Classification.DIVERGENCE


def test_fewer_samples_than_k_vote_over_those_given_and_can_tie():
    tied = votes_outcome("a", ASPECT_CRITIC, 3, aspect(1, 0))
    assert tied.value is None and tied.undefined_reason == "tied_votes"
    assert votes_outcome("a", ASPECT_CRITIC, 3, aspect(1)).value == 1


def test_no_sample_is_undefined():
    outcome = votes_outcome("a", ASPECT_CRITIC, 1, [])
    assert outcome.value is None and outcome.undefined_reason == "no_votes" and outcome.alternatives == {}


@pytest.mark.parametrize(("key", "bad"), [(ASPECT_CRITIC, 2), (ASPECT_CRITIC, "1"), (ASPECT_CRITIC, 1.0),
                                          (SIMPLE_CRITERIA, True), (SIMPLE_CRITERIA, "3"), (SIMPLE_CRITERIA, 2.5)])
def test_a_vote_of_the_wrong_kind_is_refused(key, bad):
    sample = "verdict" if key == ASPECT_CRITIC else "score"
    outcome = votes_outcome("m", key, 3, [{sample: 1}, {sample: bad}, {sample: 1}])
    assert outcome.value is None and outcome.refused is not None and f"verdicts.{key}[1]" in outcome.refused
    assert classify(2.0, outcome).name is Classification.DIVERGENCE


def test_booleans_are_binary_verdicts():
    assert votes_outcome("a", ASPECT_CRITIC, 3, aspect(True, False, True)).value == 1


def test_a_malformed_sample_names_its_field():
    with pytest.raises(HarnessInputError) as info:
        votes_outcome("a", ASPECT_CRITIC, 1, [{"score": 1}])
    assert info.value.field == "verdicts.aspect_critic[0]"


def test_the_loader_refuses_a_sample_without_its_key_naming_the_field():
    case = {"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
            "retrieved_contexts": [], "verdicts": {"aspect_critic": [{"vote": 1}]}}
    with pytest.raises(HarnessInputError) as info:
        parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    assert "verdicts.aspect_critic[0]" in str(info.value)


def test_every_configured_strictness_is_a_metric_with_its_target():
    assert {s.name: s.ragas_targets for s in SPECS}["aspect_critic_strictness_2"] == (
        "legacy:AspectCritic[strictness=2]",)
    assert all(t.startswith("legacy:") for s in SPECS for t in s.ragas_targets)  # no collections class


binary = st.lists(st.integers(0, 1), min_size=1, max_size=9)


@given(binary, st.sampled_from((1, 2, 3, 4, 5)))
def test_the_verdict_is_binary_and_is_the_strict_majority(votes, strictness):
    outcome = votes_outcome("a", ASPECT_CRITIC, strictness, aspect(*votes))
    used = votes[:odd_strictness(strictness)]
    if outcome.value is None:
        assert outcome.undefined_reason == "tied_votes" and 2 * sum(used) == len(used)
    else:
        assert outcome.value in (0, 1)
        assert 2 * used.count(int(outcome.value)) > len(used)


@given(binary, st.sampled_from((1, 3, 5)), st.data())
def test_turning_a_no_into_a_yes_never_turns_the_verdict_to_no(votes, strictness, data):
    k = odd_strictness(strictness)
    votes = (votes * k)[:k]
    zeros = [i for i, v in enumerate(votes) if v == 0]
    if not zeros:
        return
    i = data.draw(st.sampled_from(zeros))
    more = votes[:i] + [1] + votes[i + 1:]
    before = votes_outcome("a", ASPECT_CRITIC, strictness, aspect(*votes)).value
    after = votes_outcome("a", ASPECT_CRITIC, strictness, aspect(*more)).value
    assert after >= before


@given(st.lists(st.integers(-3, 10), min_size=1, max_size=7), st.randoms())
def test_the_vote_does_not_depend_on_the_order_of_the_samples_read(votes, rng):
    k = odd_strictness(len(votes))
    used = votes[:k]
    shuffled = list(used)
    rng.shuffle(shuffled)
    assert majority(used) == majority(shuffled)
    outcome = votes_outcome("s", SIMPLE_CRITERIA, len(votes), scores(*votes))
    if outcome.value is not None:
        assert outcome.value in used
