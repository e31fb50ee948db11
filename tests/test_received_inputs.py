"""'identical' means identical semantics: when Ragas's sample changed an input before the metric saw
it, a value that equals the reference only by coincidence is `coercion`, not `identical`."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.classify import classify
from ragas_compat.compare.expectations import Expectations
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.runner import run_probe
from ragas_compat.vocabulary import Classification


def _outcome(**details) -> ReferenceOutcome:
    return ReferenceOutcome("id_context_precision", Fraction(1, 2), None, None,
                            {"coercion": Fraction(1, 2)}, details, "retrieved IDs")


def test_a_coincidental_match_on_changed_inputs_is_coercion():
    diagnosis = classify(0.5, _outcome(ragas_received={"retrieved_context_ids": [1, "2.0"]}))
    assert diagnosis.name is Classification.COERCION
    assert "only by coincidence" in diagnosis.explanation


def test_unchanged_inputs_stay_identical():
    assert classify(0.5, _outcome()).name is Classification.IDENTICAL


@pytest.mark.slow
def test_real_ragas_float_id_against_string_ids_is_not_identical():
    """[1.0, "2.0"] vs ["1.0", "2.0"]: both sides give 1/2, but SingleTurnSample turned 1.0 into 1,
    so Ragas compared "1" with "1.0" (no match) where the reference compared 1.0 with "1.0" (no
    match, by type): same number, different reasons."""
    raw = {"id": "float-vs-string", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
           "retrieved_contexts": ["c1", "c2"], "retrieved_context_ids": [1.0, "2.0"],
           "reference_context_ids": ["1.0", "2.0"]}
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t")
    probe = run_probe([raw], targets=["legacy:IDBasedContextPrecision"])
    assert probe.ok, probe.error
    [row] = build_audit(suite, probe.output, Expectations("t", ()), {}).rows
    assert row.ragas_value == 0.5 and row.reference.value == Fraction(1, 2)
    assert row.received["retrieved_context_ids"] == [1, "2.0"]
    assert row.classification.name is Classification.COERCION
