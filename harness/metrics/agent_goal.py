"""Whether an agent reached its goal: AgentGoalAccuracyWithReference and AgentGoalAccuracyWithoutReference.

Inputs (a multi-turn case): the conversation, and for the with-reference class the case's ``reference`` (the
outcome the conversation should reach). The judge is asked twice (both classes, both APIs):

1. the conversation (``MultiTurnSample.pretty_repr()``: ``Human: ...``, ``AI: ...``, ``Tools:`` with one
   ``  name: {args}`` line per call, ``ToolOutput: ...``) -> ``{user_goal, end_state}`` (what the user
   wanted, where the conversation ended);
2. ``{desired_outcome, arrived_outcome}`` -> ``{reason, verdict}`` with ``verdict`` the literal ``"1"``
   (same) or ``"0"`` (different): desired is the case's ``reference`` (with reference) or the inferred
   ``user_goal`` (without); arrived is the inferred ``end_state``.

The frozen verdicts (``verdicts.agent_goal_accuracy_with_reference`` / ``..._without_reference``, one
object each) hold the judge's inferred goal and end state and its comparison verdict (0/1).

Reference: the comparison verdict, 1 or 0 (exact). Never undefined. A verdict that is not 0, 1, false or
true is refused (Ragas's reply model accepts only the literals "0" and "1": such a reply fails to parse).
Ragas returns ``float(verdict)``, so both APIs are expected to be identical; what the metric measures is
entirely the judge's two answers (the goal and end state it infers are not checked against anything).

Ragas 0.4.3 facts the rows do not show: both legacy classes are named ``agent_goal_accuracy``, so an
``evaluate()`` over both files one column (the probe names the without-reference instance
``agent_goal_accuracy_without_reference`` so its scores stay apart); the legacy with-reference class only
asserts that ``reference`` is not None (an empty string is compared), the collections class raises
ValueError on an empty reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
)

WITH_REFERENCE = "agent_goal_accuracy_with_reference"
WITHOUT_REFERENCE = "agent_goal_accuracy_without_reference"
_BINARY = {0: 0, 1: 1}


def binary(value: Any) -> int | None:
    """0 or 1 for a 0/1 label (booleans included), None for anything else."""
    if isinstance(value, bool):
        return int(value)
    if type(value) is int and value in _BINARY:
        return value
    return None


def goal_outcome(metric: str, case: Case) -> ReferenceOutcome:
    """The judge's comparison verdict (1 reached, 0 not), with what it compared."""
    verdict = case.verdicts[metric][0]
    desired = case.reference if metric == WITH_REFERENCE else verdict["user_goal"]
    details: dict[str, Any] = {"desired_outcome": desired, "arrived_outcome": verdict["end_state"],
                               "inferred_user_goal": verdict["user_goal"], "verdict": verdict["verdict"],
                               "compared": "reference vs inferred end state" if metric == WITH_REFERENCE
                               else "inferred user goal vs inferred end state"}
    denominator = "none: the judge's one 0/1 comparison verdict"
    label = binary(verdict["verdict"])
    if label is None:
        return ReferenceOutcome(metric, None, None, f"verdicts.{metric}[0].verdict must be 0 or 1, got "
                                f"{verdict['verdict']!r} (Ragas's reply model accepts only \"0\" and \"1\")",
                                {}, details, denominator)
    return ReferenceOutcome(metric, Fraction(label), None, None, {}, details, denominator)


def _as_given(labels: Sequence[int]) -> float:
    """Both APIs return float(verdict) of the one verdict."""
    return float(labels[0]) if labels else float("nan")


# --------------------------------------------------------------------------- fuzz and explain

_GOALS = ("Book a table for two at 8pm", "Find the weather in Paris", "Cancel my subscription")


def conversation(goal: str, reached: bool, with_call: bool) -> list[dict[str, Any]]:
    """A short conversation toward ``goal`` that ends reached or not."""
    messages: list[dict[str, Any]] = [{"type": "human", "content": goal}]
    if with_call:
        messages.append({"type": "ai", "content": "Let me do that.",
                         "tool_calls": [{"name": "act", "args": {"request": goal}}]})
        messages.append({"type": "tool", "content": "done" if reached else "failed"})
    messages.append({"type": "ai", "content": "It is done." if reached else "I could not do it."})
    return messages


def _verdict(goal: str, reached: bool, label: Any) -> list[dict[str, Any]]:
    return [{"user_goal": goal, "end_state": f"{goal}: {'done' if reached else 'not done'}", "verdict": label}]


def _fuzz(metric: str) -> Callable[[FuzzDraw], dict[str, Any]]:
    def fuzz(draw: FuzzDraw) -> dict[str, Any]:
        rng = draw.rng
        # a token of the case in the goal: evaluate() scores all cases with one judge answering by content
        goal, reached = f"{rng.choice(_GOALS)} ({rng.getrandbits(40):010x})", rng.random() < 0.5
        label = rng.choice((0, 1, 0, 1, True, False))
        out: dict[str, Any] = {"user_input": conversation(goal, reached, rng.random() < 0.7),
                               "verdicts": {metric: _verdict(goal, reached, label)}}
        if metric == WITH_REFERENCE:
            out["reference"] = rng.choice((goal + ": done", "Something else happened"))
        return out
    return fuzz


def _explain_inputs(metric: str) -> Callable[[ExplainInput], dict[str, Any]]:
    def inputs(given: ExplainInput) -> dict[str, Any]:
        label = given.labels[0] if given.labels else 0
        goal = _GOALS[0]
        out: dict[str, Any] = {"user_input": conversation(goal, binary(label) == 1, True),
                               "verdicts": {metric: _verdict(goal, binary(label) == 1, label)}}
        if metric == WITH_REFERENCE:
            out["reference"] = goal + ": done"
        return out
    return inputs


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    quantities = [Quantity(f"{reference.metric} (exact)", reference.number), Quantity("verdict as given", None,
                                                                                     repr(d["verdict"]))]
    formulas = [f"{d['compared']}: desired {d['desired_outcome']!r}, arrived {d['arrived_outcome']!r}",
                f"value = the judge's verdict = {d['verdict']!r}" + (f" (refused: {reference.refused})"
                                                                     if reference.refused else ""),
                "Ragas: float(verdict) of the reply's literal \"0\" / \"1\""]
    return quantities, formulas


RAGAS_MODULE = "ragas.metrics._goal_accuracy"
TARGETS: Mapping[str, RagasTargets] = {
    WITH_REFERENCE: RagasTargets(("AgentGoalAccuracyWithReference",), ("AgentGoalAccuracyWithReference",),
                                 RAGAS_MODULE, judge="agent_goal_accuracy_with_reference"),
    # both legacy classes are named "agent_goal_accuracy": evaluate() keys its columns by name
    WITHOUT_REFERENCE: RagasTargets(("AgentGoalAccuracyWithoutReference",), ("AgentGoalAccuracyWithoutReference",),
                                    RAGAS_MODULE, settings=(("name", WITHOUT_REFERENCE),),
                                    judge="agent_goal_accuracy_without_reference"),
}


def _spec(metric: str) -> MetricSpec:
    targets = TARGETS[metric]
    with_reference = metric == WITH_REFERENCE
    return MetricSpec(
        name=metric,
        reference_on=(f"verdicts.{metric} (the judge's verdict comparing the inferred end state with "
                      + ("the reference)" if with_reference else "the inferred user goal)")),
        ragas=targets,
        fields_read=("user_input", "reference") if with_reference else ("user_input",),
        denominator="none: the judge's one 0/1 comparison verdict",
        undefined_policy=("never undefined: the verdict, 1 or 0; a verdict other than 0/1 is refused (Ragas's reply "
                          "model accepts only \"0\" and \"1\")"),
        compute=lambda case, _m=metric: goal_outcome(_m, case),
        requires=(f"verdicts.{metric}", "reference") if with_reference else (f"verdicts.{metric}",),
        verdicts=Verdicts(metric, "claims", "verdict"),
        as_given=_as_given,
        fuzz_inputs=_fuzz(metric),
        multi_turn=True,
        explain=ExplainAdapter(
            command=metric.replace("_", "-"), takes="labels",
            inputs_help="LABELS (the judge's comparison verdict: the first label, 1 reached / 0 not)",
            targets=targets.ids(), case_inputs=_explain_inputs(metric), quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = (_spec(WITH_REFERENCE), _spec(WITHOUT_REFERENCE))
