"""AgentGoalAccuracy (with and without reference) and TopicAdherence (three modes) through the real probe on
the bundled multi-turn cases, both APIs: the scripted judge answers Ragas's own prompts from the frozen
verdicts; every row is identical or explained by a pin rule."""

from __future__ import annotations

import math

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.cases.model import Suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.metrics.registry import metric
from ragas_compat.pipeline import pin_expectations
from ragas_compat.runner import run_probe

METRICS = ("agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference",
           "topic_adherence_f1", "topic_adherence_precision", "topic_adherence_recall")


@pytest.mark.slow
def test_bundled_agent_cases_through_the_real_probe():
    cases = tuple(case for case in load_default_suite().cases if case.id.startswith(("ag-", "ta-")))
    assert len(cases) >= 10
    targets = [str(t) for name in METRICS for t in metric(name).ragas_targets]
    probe = run_probe([case.raw for case in cases], targets=targets)
    assert probe.ok, probe.error
    results = {(r["case_id"], r["target"]): r for r in probe.output["results"]}
    value = {key: r["value"] for key, r in results.items()}
    # every prompt the script expected was asked, and no other
    assert not [key for key, r in results.items() if isinstance(r["value"], dict)]
    assert value[("ag-goal-changed-by-user", "legacy:AgentGoalAccuracyWithReference")] == 0.0
    assert value[("ag-goal-changed-by-user", "collections:AgentGoalAccuracyWithoutReference")] == 1.0
    assert ("ag-goal-no-reference", "legacy:AgentGoalAccuracyWithReference") not in results
    assert value[("ta-all-answered-on-topic", "legacy:TopicAdherenceScore[mode=precision]")] == 2 / (2 + 1e-10)
    assert value[("ta-mixed", "collections:TopicAdherence[mode=recall]")] == 1 / (2 + 1e-10)
    p, r = 1 / (1 + 1e-10), 1 / (2 + 1e-10)  # TP 1, FP 0, FN 1: Ragas's 1e-10 arithmetic, bit for bit
    assert value[("ta-repeated-topic", "legacy:TopicAdherenceScore")] == 2 * (p * r) / (p + r + 1e-10)
    assert value[("ta-no-topics", "legacy:TopicAdherenceScore")] == 0.0
    nan = value[("ta-no-topics", "collections:TopicAdherence")]
    assert nan == "NaN" or (isinstance(nan, float) and math.isnan(nan))
    audit = build_audit(Suite("t", "t", cases), probe.output, pin_expectations(), {})
    assert not [(row.case.id, row.target, row.classification.name) for row in audit.rows if row.unexpected]
    names = {(row.case.id, str(row.target)): row.classification.name for row in audit.rows}
    assert names[("ag-goal-reached", "collections:AgentGoalAccuracyWithReference")] == "identical"
    assert names[("ta-mixed", "legacy:TopicAdherenceScore")] == "epsilon"
    assert names[("ta-all-refused", "collections:TopicAdherence[mode=precision]")] == "empty_as_zero"
    assert names[("ta-all-refused", "legacy:TopicAdherenceScore[mode=recall]")] == "identical"
    assert names[("ta-refused-off-topic-only", "legacy:TopicAdherenceScore")] == "empty_as_zero"
    assert names[("ta-no-topics", "collections:TopicAdherence[mode=recall]")] == "undefined_nan"
    assert names[("ta-no-topics", "legacy:TopicAdherenceScore[mode=recall]")] == "empty_as_zero"
