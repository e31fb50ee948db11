"""The repeat finding: Ragas's context precision counts a relevant chunk retrieved twice as relevant again.

The row itself is explained (Ragas's value is the label-level AP, up to its 1e-10 guard); the finding
shows, with its example row, the difference to AP over distinct items (the reference's details.repeats).
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.headlines import RANKS, headline_json
from ragas_compat.pipeline import pin_expectations
from ragas_compat.resources import package_json

CASE_ID = "cp-repeated-chunk"  # bundled: labels 1, 1, 0, 1 over chunks A, A, B, C; R = 2
TARGET = "legacy:LLMContextPrecisionWithReference"
RAGAS_VALUE = (1 + 1 + 3 / 4) / (3 + 1e-10)  # Ragas's float AP over every label


def _bundled() -> dict:
    document = package_json("cases/suites/default.json")
    return copy.deepcopy(next(c for c in document["cases"] if c["id"] == CASE_ID))


def _audit(case: dict, value: float):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"}, "results": [
        {"case_id": case["id"], "target": TARGET, "value": value, "received": {}}]}
    return build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3"})


def test_hand_computed_readings():
    # every label: (1/1 + 2/2 + 3/4) / 3 = 11/12; distinct items: the repeat at rank 2 is not relevant
    # again, (1/1 + 2/4) / 2 = 3/4; Ragas's float is the label-level one with its 1e-10 guard
    assert (Fraction(1) + 1 + Fraction(3, 4)) / 3 == Fraction(11, 12)
    assert (Fraction(1) + Fraction(2, 4)) / 2 == Fraction(3, 4)
    assert RAGAS_VALUE == 0.9166666666361111


def test_a_repeated_relevant_chunk_is_a_finding_with_its_example_row():
    audit = _audit(_bundled(), RAGAS_VALUE)
    [row] = [r for r in audit.rows if str(r.target) == TARGET]
    assert row.classification.name.value == "epsilon" and not row.unexpected  # the row is explained
    [finding] = [h for h in audit.headlines if h.kind == "repeat"]
    assert finding.rank == RANKS["dedup"] and finding.rows == 1
    assert "gives 0.9166666666361111, the AP over its 3 relevant labels (11/12" in finding.sentence
    assert "AP over the 2 distinct relevant items gives 3/4 = 0.75" in finding.sentence
    assert "with R=2 relevant items, corpus AP is 3/4 = 0.75 and recall@K 1" in finding.sentence
    assert "11/8" in finding.sentence and "3/2" in finding.sentence
    example = headline_json(finding)["example"]
    assert example == {"case_id": CASE_ID, "metric": "context_precision_with_reference", "target": TARGET,
                       "ragas": "0.9166666666361111",
                       "reference": "distinct items: 3/4 = 0.75; every label: 11/12 = 0.9166666666666666"}
    assert finding.explained_by is not None  # the rule that explains the row (the epsilon guard)


def test_no_repeat_no_finding():
    case = _bundled()
    case["retrieved_contexts"][1] = "A different chunk about the agent."  # four distinct chunks
    case["corpus_relevant_count"] = 3
    audit = _audit(case, RAGAS_VALUE)
    assert not [h for h in audit.headlines if h.kind == "repeat"]


def test_a_repeat_judged_not_relevant_again_is_no_finding():
    case = _bundled()
    case["verdicts"]["context_precision_with_reference"] = [1, 0, 0, 1]  # the labeller counted it once
    audit = _audit(case, (1 + 2 / 4) / (2 + 1e-10))
    assert not [h for h in audit.headlines if h.kind == "repeat"]


def test_a_value_that_is_not_the_label_level_reading_is_not_called_a_repeat():
    # Ragas scoring something else on this row has its own finding (unexplained): the repeat finding
    # says only what is true, that Ragas's value is the AP over every label
    audit = _audit(_bundled(), 0.75)
    assert not [h for h in audit.headlines if h.kind == "repeat"]


@pytest.mark.slow
def test_the_default_audit_shows_the_repeat_finding(default_audit_run):
    audit = default_audit_run.audit
    [finding] = [h for h in audit.headlines if h.kind == "repeat"]
    assert finding.example.case_id == CASE_ID and finding.example.target.startswith("legacy:")
    assert finding.example.ragas == repr(RAGAS_VALUE)
    assert "distinct items: 3/4" in finding.example.reference
    # both APIs and both class names score the case: every row is the label-level AP
    assert finding.rows == 4
    assert audit.verdict.status == "expected"
