"""ToolCallAccuracy (both orders) and ToolCallF1 through the real probe on the bundled multi-turn cases, both
APIs: the legacy classes get a MultiTurnSample (multi_turn_ascore), the collections classes ragas.messages
objects; every row is identical or explained by a pin rule, and Ragas received the case as given."""

from __future__ import annotations

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.cases.model import Suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.metrics.registry import metric
from ragas_compat.pipeline import pin_expectations
from ragas_compat.runner import run_probe

METRICS = ("tool_call_accuracy", "tool_call_accuracy_flexible", "tool_call_f1")


@pytest.mark.slow
def test_bundled_tool_call_cases_through_the_real_probe():
    cases = tuple(case for case in load_default_suite().cases if case.reference_tool_calls is not None)
    assert len(cases) >= 13
    targets = [str(t) for name in METRICS for t in metric(name).ragas_targets]
    probe = run_probe([case.raw for case in cases], targets=targets)
    assert probe.ok, probe.error
    results = {(r["case_id"], r["target"]): r for r in probe.output["results"]}
    assert len(results) == len(cases) * len(targets)
    legacy = results[("tc-wrong-argument", "legacy:ToolCallAccuracy")]
    assert legacy["value"] == 0.75 and legacy["received"]["user_input"] == load_default_suite().case(
        "tc-wrong-argument").raw["user_input"]
    assert results[("tc-flexible-pairing", "collections:ToolCallAccuracy[strict_order=False]")]["value"] == 0.25
    assert results[("tc-repeated-call", "collections:ToolCallF1")]["value"] == 1.0
    audit = build_audit(Suite("t", "t", cases), probe.output, pin_expectations(), {})
    assert not [(row.case.id, row.target, row.classification.name) for row in audit.rows if row.unexpected]
    names = {(row.case.id, str(row.target)): row.classification.name for row in audit.rows}
    assert names[("tc-argument-type", "legacy:ToolCallAccuracy")] == "variant"
    assert names[("tc-no-tool-calls", "collections:ToolCallF1")] == "empty_as_zero"
    assert names[("tc-repeated-call", "legacy:ToolCallF1")] == "dedup"
    assert names[("tc-missing-call", "legacy:ToolCallF1")] == "rounding"
    assert names[("tc-identical-calls", "collections:ToolCallAccuracy")] == "identical"
