"""ReferenceOutcome.number: a numeric metric's exact value (or None), and a TypeError, never a float, when
the value is a label or a ranking (DiscreteMetric's, RankingMetric's), which only exact comparison reads."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.compare.classify import same_float
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.values import Label, Ranking


def outcome(value) -> ReferenceOutcome:
    return ReferenceOutcome("m", value, None, None, {}, {}, "n")


@pytest.mark.parametrize("value", [Fraction(5, 6), Fraction(0), None])
def test_a_number_or_undefined_is_given_as_it_is(value):
    assert outcome(value).number is value


@pytest.mark.parametrize("value", [Label("pass"), Ranking(("b", "a"))])
def test_a_label_or_a_ranking_is_not_a_number(value):
    with pytest.raises(TypeError, match="not a number"):
        _ = outcome(value).number


def test_same_float_takes_labels_and_rankings_exactly():
    assert same_float(Label("pass"), Label("pass")) and not same_float(Label("pass"), Label("Pass"))
    assert not same_float(Ranking(("a", "b")), Ranking(("b", "a"))) and not same_float(Label("1"), 1.0)
