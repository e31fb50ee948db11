"""The dataset-level policy and the classification of the mean pair, on constructed rows."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from ragas_compat.compare.dataset_level import (
    AggregationRow,
    aggregate_target,
    explained_row_value,
    numpy_nanmean,
    pairwise_sum,
    policy_counts,
    row_status,
    sentence,
)
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.values import RagasError

EPS = 1e-10


def outcome(value=None, reason=None, refused=None, error_reason=None, **alternatives) -> ReferenceOutcome:
    details = {"error_reason": error_reason} if error_reason else {}
    return ReferenceOutcome("m", None if value is None else Fraction(value), reason, refused,
                            alternatives, details, "d")


def row(case_id, ref, name, value, single=None, error=None, category="edge") -> AggregationRow:
    return AggregationRow(case_id, category, ref, name, value, value if single is None else single, error)


def test_row_status():
    assert row_status(outcome(Fraction(1, 2))) == ("defined", None)
    assert row_status(outcome(reason="zero_claims")) == ("undefined", "zero_claims")
    assert row_status(outcome(refused="label 2")) == ("error", "refused_input")
    assert row_status(outcome(refused="bad", error_reason="judge_reply_unparseable")) == \
        ("error", "judge_reply_unparseable")


def test_policy_counts_and_exact_mean():
    policy = policy_counts([outcome(Fraction(1, 3)), outcome(1), outcome(reason="zero_claims"),
                            outcome(reason="zero_claims"), outcome(reason="empty_id_set"),
                            outcome(refused="x", error_reason="judge_reply_unparseable")])
    assert (policy.cases, policy.defined, policy.dropped) == (6, 2, 4)
    assert policy.undefined == {"empty_id_set": 1, "zero_claims": 2}
    assert policy.errors == {"judge_reply_unparseable": 1}
    assert policy.mean == Fraction(2, 3) and policy.dropped_share == Fraction(2, 3)


def test_policy_with_no_defined_rows_has_no_mean():
    policy = policy_counts([outcome(reason="zero_claims")])
    assert policy.mean is None and policy.dropped_share == 1
    assert policy_counts([]).dropped_share is None


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 300, 1000])
def test_numpy_nanmean_is_bit_equal_to_numpy(n):
    np = pytest.importorskip("numpy")
    rng = random.Random(n)
    values = [rng.random() * 10 ** rng.randint(-3, 3) for _ in range(n)]
    values = [math.nan if rng.random() < 0.2 else v for v in values]
    ours = numpy_nanmean(values)
    if all(math.isnan(v) for v in values):
        assert math.isnan(ours)
    else:
        assert ours == float(np.nanmean(np.asarray(values)))
    assert pairwise_sum([v for v in values if not math.isnan(v)]) == float(
        np.sum(np.asarray([v for v in values if not math.isnan(v)])))


def test_pairwise_sum_differs_from_a_plain_loop_somewhere():
    """The emulation matters: numpy's summation order is not Python's left-to-right sum."""
    rng = random.Random(7)
    found = False
    for _ in range(200):
        values = [rng.random() for _ in range(rng.randint(9, 60))]
        plain = 0.0
        for v in values:
            plain += v
        found |= plain != pairwise_sum(values)
    assert found


def ap_rows():
    """Three AP rows: 5/6 (Ragas epsilon), undefined scored 0.0, parse failure (NaN)."""
    eps_value = (1 / (1 + EPS) + 2 / 3 / (1 + EPS)) / 2  # any float stands in for Ragas's
    return [
        row("a", outcome(Fraction(5, 6), epsilon=eps_value), "epsilon", eps_value),
        row("b", outcome(reason="no_relevant_retrieved", epsilon=0.0), "empty_as_zero", 0.0),
        row("c", outcome(refused="bad", error_reason="judge_reply_unparseable"), "error", math.nan,
            single=RagasError("OutputParserException", "Invalid json output"),
            error=("OutputParserException", "Invalid json output: x")),
    ]


def test_ap_mean_with_only_epsilon_rows_is_epsilon():
    rows = ap_rows()[:1]
    ragas_mean = numpy_nanmean([r.evaluate_value for r in rows])
    agg = aggregate_target("m", "legacy:X", {"evaluate": ragas_mean}, rows)
    assert agg.classification.name == "epsilon" and agg.alternative_key == "epsilon"


def test_ap_mean_pair_with_kept_zeros_is_empty_as_zero_and_explained_exactly():
    rows = ap_rows()
    ragas_mean = numpy_nanmean([r.evaluate_value for r in rows])
    agg = aggregate_target("m", "legacy:X", {"evaluate": ragas_mean}, rows)
    assert agg.policy.mean == Fraction(5, 6) and agg.policy.defined == 1
    assert agg.explained_mean == ragas_mean and agg.mean_recomputed_exactly
    # the kept 0.0 row changes the set the mean is over: that, not the epsilon, names the gap
    assert agg.classification.name == "empty_as_zero" and agg.alternative_key == "empty_as_zero"
    assert [r.case_id for r in agg.dropped_rows] == ["c"]
    assert [r.case_id for r in agg.kept_but_dropped_by_reference] == ["b"]
    assert agg.single_turn_mismatches == ()
    text = sentence(agg)
    assert text.startswith(f"Ragas's mean of {ragas_mean!r} is over 2 of 3 cases; 1 were dropped: c (error "
                           "turned into NaN: OutputParserException: Invalid json output: x")
    assert "b (no_relevant_retrieved; Ragas 0.0)" in text


def test_unexplained_mean_is_a_divergence():
    rows = ap_rows()
    agg = aggregate_target("m", "legacy:X", {"evaluate": 0.5}, rows)
    assert agg.classification.name == "divergence" and not agg.mean_recomputed_exactly


def test_claim_mean_drops_undefined_rows_and_can_be_identical():
    rows = [row("a", outcome(Fraction(1, 2)), "identical", 0.5),
            row("b", outcome(1), "identical", 1.0),
            row("c", outcome(reason="zero_claims"), "undefined_nan", math.nan)]
    agg = aggregate_target("m", "legacy:X", {"evaluate": 0.75, "aevaluate": 0.75}, rows)
    assert agg.classification.name == "identical" and agg.apis_agree
    assert sentence(agg) == ("Ragas's mean of 0.75 is over 2 of 3 cases; 1 were dropped: c (NaN returned by "
                             "the metric (reference: undefined, zero_claims)).")


def test_dedup_rows_explain_an_id_mean():
    rows = [row("a", outcome(Fraction(2, 3), dedup=Fraction(1, 2)), "dedup", 0.5),
            row("b", outcome(1), "identical", 1.0)]
    agg = aggregate_target("m", "legacy:X", {"evaluate": 0.75}, rows)
    assert agg.policy.mean == Fraction(5, 6)
    assert agg.classification.name == "dedup" and agg.explained_mean == 0.75


def test_single_turn_mismatch_and_api_disagreement_are_reported():
    rows = [row("a", outcome(1), "identical", 1.0, single=0.5)]
    agg = aggregate_target("m", "legacy:X", {"evaluate": 1.0, "aevaluate": 0.5}, rows)
    assert agg.single_turn_mismatches == ("a",) and not agg.apis_agree


def test_explained_row_values():
    assert math.isnan(explained_row_value(row("x", outcome(reason="zero_claims"), "undefined_nan", 0.0)))
    assert math.isnan(explained_row_value(row("x", outcome(refused="r"), "coercion", math.nan)))
    assert explained_row_value(row("x", outcome(refused="r", coercion=Fraction(1, 2)), "coercion", 0.5)) == 0.5
    assert explained_row_value(row("x", outcome(Fraction(1, 3)), "rounding", 0.3333333333333333)) == 1 / 3
