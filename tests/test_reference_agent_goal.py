"""AgentGoalAccuracyWithReference / WithoutReference references: the judge's 0/1 comparison verdict, exact;
a verdict that is not 0/1 is refused; the case schema ties the with-reference verdict to a reference."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import metric

WITH, WITHOUT = "agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference"
SUITE = load_default_suite()


def _case(verdicts: dict, reference: str | None = "A table is booked.") -> dict:
    raw = {"id": "g", "category": "edge", "user_input": [{"type": "human", "content": "Book a table"},
                                                       {"type": "ai", "content": "Booked."}],
           "verdicts": verdicts}
    if reference is not None:
        raw["reference"] = reference
    return raw


def _load(*cases: dict):
    return parse_suite({"schema_version": 1, "suite": "t", "cases": list(cases)}, source="t")


def _goal(verdict, goal="Book a table", end="A table is booked"):
    return [{"user_goal": goal, "end_state": end, "verdict": verdict}]


@pytest.mark.parametrize(("name", "case_id", "value"), [
    (WITH, "ag-goal-reached", 1), (WITHOUT, "ag-goal-reached", 1),
    (WITH, "ag-goal-not-reached", 0), (WITHOUT, "ag-goal-not-reached", 0),
    (WITH, "ag-goal-changed-by-user", 0), (WITHOUT, "ag-goal-changed-by-user", 1),
    (WITHOUT, "ag-goal-no-reference", 1)])
def test_bundled_values(name, case_id, value):
    outcome = metric(name).outcome(SUITE.case(case_id))
    assert outcome.value == Fraction(value) and isinstance(outcome.value, Fraction)


def test_with_reference_compares_the_reference_without_the_inferred_goal():
    case = SUITE.case("ag-goal-changed-by-user")
    with_ref = metric(WITH).outcome(case).details
    without = metric(WITHOUT).outcome(case).details
    assert with_ref["desired_outcome"] == case.reference
    assert without["desired_outcome"] == case.verdicts[WITHOUT][0]["user_goal"]
    assert with_ref["arrived_outcome"] == case.verdicts[WITH][0]["end_state"]


def test_no_reference_case_applies_only_without_reference():
    case = SUITE.case("ag-goal-no-reference")
    assert metric(WITHOUT).applies_to(case) and not metric(WITH).applies_to(case)


@pytest.mark.parametrize("label", [True, False, 0, 1])
def test_boolean_and_integer_verdicts_are_labels(label):
    case = _load(_case({WITH: _goal(label)})).cases[0]
    assert metric(WITH).outcome(case).value == int(label)


@pytest.mark.parametrize("label", [2, "1", 0.5])
def test_other_verdicts_are_refused(label):
    outcome = metric(WITHOUT).outcome(_load(_case({WITHOUT: _goal(label)})).cases[0])
    assert outcome.value is None and outcome.refused and repr(label) in outcome.refused


def test_with_reference_verdict_needs_a_reference():
    with pytest.raises(HarnessInputError, match="reference"):
        _load(_case({WITH: _goal(1)}, reference=None))
    _load(_case({WITHOUT: _goal(1)}, reference=None))  # loads


def test_verdict_shape_is_checked():
    bad = _case({WITH: _goal(1) * 2})
    with pytest.raises(HarnessInputError):
        _load(bad)
    unknown = copy.deepcopy(_case({WITH: _goal(1)}))
    unknown["verdicts"][WITH][0]["confidence"] = 1
    with pytest.raises(HarnessInputError, match="confidence"):
        _load(unknown)
