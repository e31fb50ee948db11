from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.id_overlap import id_overlap


def ragas_0_4_3_id_scores(retrieved, reference):
    """IDBasedContextPrecision / IDBasedContextRecall arithmetic (None for NaN)."""
    r, g = {str(x) for x in retrieved}, {str(x) for x in reference}
    precision = sum(1 for x in r if str(x) in g) / len(r) if r else None
    recall = sum(1 for x in g if str(x) in r) / len(g) if g else None
    return precision, recall


def test_duplicate_ids_are_collapsed_by_ragas_and_kept_by_raw_semantics():
    ov = id_overlap(["d1", "d1", "d2"], ["d1"])
    assert ov.ragas_precision == Fraction(1, 2)
    assert ov.raw_precision == Fraction(2, 3)
    assert ov.ragas_recall == ov.raw_recall == 1
    (group,) = ov.collapsed
    assert group.as_string == "d1"
    assert group.retrieved == ("d1", "d1")
    assert group.reasons == ("duplicate_in_retrieved",)


def test_int_and_string_one_match_under_str_but_not_raw():
    ov = id_overlap([1], ["1"])
    assert ov.ragas_precision == 1 and ov.ragas_recall == 1
    assert ov.raw_precision == 0 and ov.raw_recall == 0
    (group,) = ov.collapsed
    assert group.as_string == "1" and group.retrieved == (1,) and group.reference == ("1",)
    assert group.reasons == ("types_merged",)


def test_int_and_float_one_are_distinct_under_both_semantics():
    ov = id_overlap([1.0], [1])
    assert ov.raw_precision == 0 and ov.ragas_precision == 0
    assert ov.collapsed == ()


def test_empty_denominator_sets_are_undefined():
    ov = id_overlap([], ["d1"])
    assert ov.ragas_precision is None and ov.raw_precision is None
    assert ov.precision_undefined_reason == "empty_id_set"
    assert ov.ragas_recall == 0 and ov.raw_recall == 0
    ov = id_overlap(["d1"], [])
    assert ov.ragas_recall is None and ov.recall_undefined_reason == "empty_id_set"


def test_order_is_ignored():
    assert id_overlap(["a", "b"], ["b"]) == id_overlap(["b", "a"], ["b"])


@pytest.mark.parametrize("bad", [True, None, float("nan"), float("inf"), ["d1"], {"id": 1}])
def test_bad_id_names_field_position_and_value(bad):
    with pytest.raises(HarnessInputError) as info:
        id_overlap(["d1"], ["d1", bad])
    assert "reference_context_ids[1]" in str(info.value)
    assert info.value.field == "reference_context_ids[1]"


ids_st = st.lists(st.one_of(st.integers(-3, 3), st.sampled_from(["1", "2", "a", "-1"]),
                            st.sampled_from([1.0, 2.5])), max_size=12)


@given(ids_st, ids_st)
def test_scores_in_unit_interval_and_ragas_semantics_match_ragas_arithmetic(retrieved, reference):
    ov = id_overlap(retrieved, reference)
    for v in (ov.ragas_precision, ov.ragas_recall, ov.raw_precision, ov.raw_recall):
        assert v is None or 0 <= v <= 1
    precision, recall = ragas_0_4_3_id_scores(retrieved, reference)
    assert (None if ov.ragas_precision is None else float(ov.ragas_precision)) == precision
    assert (None if ov.ragas_recall is None else float(ov.ragas_recall)) == recall


@given(ids_st, ids_st)
def test_no_collapse_means_both_semantics_agree(retrieved, reference):
    ov = id_overlap(retrieved, reference)
    if not ov.collapsed:
        assert ov.raw_precision == ov.ragas_precision
        assert ov.raw_recall == ov.ragas_recall
