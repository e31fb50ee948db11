"""Repeats: R (corpus_relevant_count) counts distinct relevant corpus items, and a chunk retrieved twice
is one item: the loader checks R against the distinct relevant items retrieved (by retrieved_context_ids
when given, else by exact text), and the reference's corpus AP and recall@K count a repeat once, with the
label-level readings beside them. Fractions hand-computed."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.cases.loader import parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import metric

A, B, C = "Chunk A is relevant.", "Chunk B is not.", "Chunk C is relevant."


def _case(contexts, labels, r, ids=None):
    raw = {"id": "rep", "category": "edge", "user_input": "q", "reference": "r", "response": "s",
           "retrieved_contexts": contexts, "corpus_relevant_count": r,
           "verdicts": {"context_precision_with_reference": labels}}
    if ids is not None:
        raw["retrieved_context_ids"] = ids
    return parse_suite({"schema_version": 1, "suite": "s", "cases": [raw]}, "rep.json").cases[0]


def test_r_equal_to_the_distinct_relevant_items_is_accepted_when_a_chunk_is_retrieved_twice():
    case = _case([A, A, C], [1, 1, 1], 2)  # three relevant labels, two distinct relevant documents
    assert case.corpus_relevant_count == 2
    assert _case(["x", "y", "z"], [1, 1, 0], 1, ids=["d1", "d1", "d2"]).corpus_relevant_count == 1


def test_r_below_the_distinct_relevant_items_is_refused_naming_how_items_are_told_apart():
    with pytest.raises(HarnessInputError) as caught:
        _case([A, A, C], [1, 1, 1], 1)
    assert "R = 1 is smaller than the 2 distinct items labelled relevant" in str(caught.value)
    assert "(by exact context text)" in str(caught.value)
    with pytest.raises(HarnessInputError) as caught:
        _case([A, A, C], [1, 1, 1], 2, ids=["d1", "d2", "d3"])  # same text, different documents
    assert "3 distinct items labelled relevant" in str(caught.value) and "retrieved_context_ids" in str(caught.value)


def test_corpus_ap_and_recall_count_a_repeated_relevant_chunk_once():
    # labels [1, 1, 0, 1] over items [a, a, b, c], R = 3
    case = _case([A, A, B, C], [1, 1, 0, 1], 3)
    outcome = metric("context_precision_with_reference").outcome(case)
    # Ragas's reading (every label): (1/1 + 2/2 + 3/4) / 3 = 11/12
    assert outcome.value == Fraction(11, 12)
    d = outcome.details
    # distinct items: relevant first retrievals at ranks 1 and 4: (1/1 + 2/4) / R = (3/2) / 3
    assert d["corpus_ap"] == Fraction(1, 2)
    assert d["recall_at_k"] == Fraction(2, 3)
    repeats = d["repeats"]
    assert repeats["distinct_relevant_items"] == 2 and repeats["relevant_labels"] == 3
    assert repeats["context_ap_distinct"] == Fraction(3, 4)           # (3/2) / 2
    assert repeats["corpus_ap_label_level"] == Fraction(11, 12)       # (11/4) / 3
    assert repeats["recall_at_k_label_level"] == 1                    # 3 / 3


def test_without_repeats_nothing_changes():
    outcome = metric("context_precision_with_reference").outcome(_case([A, B, C], [1, 0, 1], 4))
    assert (outcome.value, outcome.details["corpus_ap"], outcome.details["recall_at_k"]) == \
        (Fraction(5, 6), Fraction(5, 12), Fraction(1, 2))
    assert "repeats" not in outcome.details


def test_the_bundled_repeated_chunk_case_loads_with_r_equal_to_its_distinct_relevant_items():
    case = load_default_suite().case("cp-repeated-chunk")
    labels = case.verdicts["context_precision_with_reference"]
    assert sum(labels) > case.corpus_relevant_count == len({c for c, v in zip(case.retrieved_contexts, labels, strict=True) if v})
    outcome = metric("context_precision_with_reference").outcome(case)
    assert "repeats" in outcome.details
