from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.judge_audit import judge_audit


def test_seed_judge_audit_example():
    a = judge_audit({"c1": 1, "c2": 1, "c3": 0, "c4": 0}, {"c1": 1, "c2": 1, "c3": 1, "c4": 0})
    assert (a.tp, a.fn, a.fp, a.tn, a.count) == (2, 0, 1, 1, 4)
    assert a.human_support_rate == Fraction(1, 2)
    assert a.judge_support_rate == Fraction(3, 4)
    assert a.mean_bias == Fraction(1, 4)
    assert a.sensitivity == 1
    assert a.false_positive_rate == Fraction(1, 2)
    # E[judge rate] = a*f + b*(1-f) with a = sensitivity, b = false-positive rate, f = human rate
    f = a.human_support_rate
    assert a.sensitivity * f + a.false_positive_rate * (1 - f) - f == a.mean_bias


def test_alignment_is_by_claim_id_not_position():
    a = judge_audit({"x": 1, "y": 0}, {"y": 0, "x": 1})
    assert (a.tp, a.tn, a.fp, a.fn) == (1, 1, 0, 0)


def test_rates_without_positives_or_negatives_are_none_not_zero():
    only_negatives = judge_audit({"a": 0}, {"a": 1})
    assert only_negatives.sensitivity is None
    assert only_negatives.false_positive_rate == 1
    only_positives = judge_audit({"a": 1}, {"a": 1})
    assert only_positives.false_positive_rate is None
    empty = judge_audit({}, {})
    assert empty.mean_bias is None and empty.human_support_rate is None and empty.count == 0


def test_different_key_sets_are_refused_naming_the_keys():
    with pytest.raises(HarnessInputError) as info:
        judge_audit({"c1": 1, "c2": 0}, {"c1": 1, "c3": 0})
    msg = str(info.value)
    assert "judge_audit" in msg and "c2" in msg and "c3" in msg


def test_non_binary_audit_label_names_side_and_claim():
    with pytest.raises(HarnessInputError) as info:
        judge_audit({"c1": 1}, {"c1": 2})
    assert "judge_audit.judge.c1" in str(info.value)
    assert info.value.value == 2


@given(st.dictionaries(st.text(max_size=3), st.tuples(st.integers(0, 1), st.integers(0, 1)), max_size=20))
def test_bias_is_judge_rate_minus_human_rate(pairs):
    a = judge_audit({k: h for k, (h, _) in pairs.items()}, {k: j for k, (_, j) in pairs.items()})
    assert a.tp + a.fn + a.fp + a.tn == a.count == len(pairs)
    if a.count:
        assert a.mean_bias == a.judge_support_rate - a.human_support_rate
        assert -1 <= a.mean_bias <= 1
