"""Context precision profile: seed worked example, validation, properties."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.context_precision import context_precision_profile, ragas_float_average_precision


def ragas_0_4_3_average_precision(verdict_list: list[int]) -> float:
    """Ragas 0.4.3 ``_calculate_average_precision`` arithmetic, copied verbatim (slicing and all)."""
    denominator = sum(verdict_list) + 1e-10
    numerator = sum([(sum(verdict_list[: i + 1]) / (i + 1)) * verdict_list[i] for i in range(len(verdict_list))])
    return numerator / denominator


def naive_numerator(labels: list[int]) -> Fraction:
    return sum((Fraction(sum(labels[:i]), i) * labels[i - 1] for i in range(1, len(labels) + 1)), Fraction(0))


labels_st = st.lists(st.integers(0, 1), max_size=40)


def test_seed_worked_example_1_0_1_with_r_4():
    p = context_precision_profile([1, 0, 1], 4)
    assert p.retrieved == 3
    assert p.relevant_retrieved == 2
    assert p.numerator == Fraction(5, 3)
    assert p.context_ap_exact == Fraction(5, 6)
    assert p.context_ap_ragas_float == 0.8333333332916666
    assert p.precision_at_k == Fraction(2, 3)
    assert p.corpus_relevant == 4
    assert p.recall_at_k == Fraction(1, 2)
    assert p.corpus_ap == Fraction(5, 12)
    assert p.empty_context is False
    assert p.undefined_reason is None


def test_seed_moving_second_positive_up_gives_ap_one_but_recall_unchanged():
    p = context_precision_profile([1, 1, 0], 4)
    assert p.context_ap_exact == 1
    assert p.context_ap_ragas_float == pytest.approx(1, abs=1e-9)
    assert p.recall_at_k == Fraction(1, 2)


def test_one_relevant_of_ten_at_rank_one():
    p = context_precision_profile([1], 10)
    assert p.context_ap_exact == 1
    assert p.recall_at_k == Fraction(1, 10)
    assert p.corpus_ap == Fraction(1, 10)


def test_empty_list_and_all_zero_both_give_ragas_zero_but_differ_in_flag():
    empty = context_precision_profile([])
    zeros = context_precision_profile([0, 0, 0])
    assert empty.context_ap_ragas_float == 0.0 == zeros.context_ap_ragas_float
    assert empty.context_ap_exact is None and zeros.context_ap_exact is None
    assert empty.empty_context is True and zeros.empty_context is False
    assert empty.undefined_reason == "empty_retrieval"
    assert zeros.undefined_reason == "no_relevant_retrieved"
    assert empty.precision_at_k is None
    assert zeros.precision_at_k == 0


def test_booleans_are_labels():
    assert context_precision_profile([True, False, True]).context_ap_exact == Fraction(5, 6)


def test_r_absent_or_zero_leaves_corpus_quantities_undefined():
    assert context_precision_profile([1, 0]).corpus_ap is None
    p = context_precision_profile([0, 0], 0)
    assert p.corpus_ap is None and p.recall_at_k is None


@pytest.mark.parametrize("bad", [2, -1, 1.0, 0.5, "1", None])
def test_non_binary_label_is_refused_naming_field_position_and_value(bad):
    with pytest.raises(HarnessInputError) as info:
        context_precision_profile([1, bad, 0], field="verdicts.context_precision_with_reference")
    msg = str(info.value)
    assert "verdicts.context_precision_with_reference[1]" in msg
    assert repr(bad) in msg
    assert info.value.field == "verdicts.context_precision_with_reference[1]"


def test_every_bad_label_is_listed_in_problems():
    with pytest.raises(HarnessInputError) as info:
        context_precision_profile([2, 1, 3], field="labels")
    assert len(info.value.problems) == 2
    assert "labels[2]" in info.value.problems[1]


def test_label_list_must_be_a_list():
    with pytest.raises(HarnessInputError, match=r"labels: expected a list"):
        context_precision_profile("101")


@pytest.mark.parametrize("bad_r", [True, 4.0, "4", -1, 1])
def test_corpus_relevant_must_be_int_at_least_retrieved_positives(bad_r):
    with pytest.raises(HarnessInputError) as info:
        context_precision_profile([1, 0, 1], bad_r, corpus_relevant_field="corpus_relevant_count")
    assert "corpus_relevant_count" in str(info.value)
    assert repr(bad_r) in str(info.value) or str(bad_r) in str(info.value)


def test_r_equal_to_retrieved_positives_is_fine():
    assert context_precision_profile([1, 0, 1], 2).recall_at_k == 1


@given(labels_st)
def test_float_matches_ragas_formula_bit_for_bit(labels):
    p = context_precision_profile(labels)
    assert p.context_ap_ragas_float == ragas_0_4_3_average_precision(labels)
    assert ragas_float_average_precision(labels) == ragas_0_4_3_average_precision(labels)


@given(labels_st)
def test_exact_value_matches_definition_and_is_in_unit_interval(labels):
    p = context_precision_profile(labels)
    assert p.numerator == naive_numerator(labels)
    assert p.relevant_retrieved == sum(labels)
    if p.context_ap_exact is not None:
        assert 0 < p.context_ap_exact <= 1
        assert p.context_ap_exact == p.numerator / sum(labels)
    assert 0.0 <= p.context_ap_ragas_float <= 1.0


@given(labels_st, st.data())
def test_moving_a_positive_up_never_lowers_context_ap(labels, data):
    swaps = [i for i in range(1, len(labels)) if labels[i] == 1 and labels[i - 1] == 0]
    if not swaps:
        return
    i = data.draw(st.sampled_from(swaps))
    moved = labels.copy()
    moved[i - 1], moved[i] = 1, 0
    before = context_precision_profile(labels)
    after = context_precision_profile(moved)
    assert after.context_ap_exact >= before.context_ap_exact
    assert after.context_ap_ragas_float >= before.context_ap_ragas_float


@given(labels_st, st.integers(0, 50))
def test_corpus_ap_never_exceeds_context_ap(labels, extra):
    r = sum(labels) + extra
    p = context_precision_profile(labels, r)
    if p.context_ap_exact is not None:
        assert p.corpus_ap <= p.context_ap_exact
        assert 0 <= p.recall_at_k <= 1


def test_one_million_labels_in_one_pass():
    ones = context_precision_profile([1] * 10**6, 10**6)
    assert ones.context_ap_exact == 1 and ones.recall_at_k == 1
    zeros = context_precision_profile([0] * 10**6)
    assert zeros.context_ap_exact is None and zeros.precision_at_k == 0
