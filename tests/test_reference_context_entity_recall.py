"""ContextEntityRecall reference (ragas_compat.metrics.context_entity_recall): the documented set formula,
Ragas's two denominators as alternatives, and properties."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.compare.classify import classify
from ragas_compat.metrics.context_entity_recall import (
    collections_value,
    context_entity_recall,
    entity_outcome,
    legacy_value,
)
from ragas_compat.vocabulary import Classification


def items(reference: list[str], contexts: list[str]) -> list[dict]:
    return ([{"statement": e, "from": "reference"} for e in reference]
            + [{"statement": e, "from": "contexts"} for e in contexts])


def test_hand_computed_example():
    # GN = {Tern agent, 7443, gRPC, 30 seconds}, CN = {agent, gRPC, 7443, mutual TLS}: 2 / 4
    outcome = entity_outcome(items(["Tern agent", "7443", "gRPC", "30 seconds"],
                                   ["agent", "gRPC", "7443", "mutual TLS"]))
    assert outcome.value == Fraction(1, 2)
    assert outcome.alternatives["epsilon"] == 2 / (4 + 1e-8)
    assert "dedup" not in outcome.alternatives
    assert classify(0.49999999875, outcome).name is Classification.EPSILON


def test_a_repeated_reference_entity_counts_once_in_the_reference_and_every_time_in_legacy():
    outcome = entity_outcome(items(["Tern 1.x", "Tern 1.x", "Tern 2.0"], ["Tern 1.x"]))
    assert outcome.value == Fraction(1, 2)
    assert legacy_value(["Tern 1.x", "Tern 1.x", "Tern 2.0"], ["Tern 1.x"]) == 1 / (3 + 1e-8)
    assert classify(1 / (3 + 1e-8), outcome).name is Classification.DEDUP      # legacy
    assert classify(1 / (2 + 1e-8), outcome).name is Classification.EPSILON    # collections


def test_no_reference_entity_is_undefined_and_ragas_zero_is_empty_as_zero():
    outcome = entity_outcome(items([], ["Greeting"]))
    assert outcome.value is None and outcome.undefined_reason == "no_reference_entities"
    assert classify(0.0, outcome).name is Classification.EMPTY_AS_ZERO


entity_lists = st.lists(st.sampled_from(["A", "B", "C", "D", "E"]), max_size=8)


@given(entity_lists, entity_lists)
def test_range_and_both_ragas_paths_within_the_guard_when_nothing_repeats(reference, contexts):
    value = context_entity_recall(reference, contexts)
    if value is None:
        assert legacy_value(reference, contexts) == collections_value(reference, contexts) == 0.0
        return
    assert 0 <= value <= 1
    assert abs(collections_value(reference, contexts) - float(value)) < 1e-8
    if len(set(reference)) == len(reference):
        assert legacy_value(reference, contexts) == collections_value(reference, contexts)
    else:
        assert legacy_value(reference, contexts) < float(value) or value == 0


@given(entity_lists, entity_lists, st.sampled_from(["A", "B", "C", "D", "E"]))
def test_monotone_in_the_retrieved_entities(reference, contexts, extra):
    before, after = context_entity_recall(reference, contexts), context_entity_recall(reference, contexts + [extra])
    assert (before is None) == (after is None)
    if before is not None:
        assert after >= before
