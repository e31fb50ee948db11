"""The drift rules of issue 38 that name three changes of the committed matrix: Ragas 0.2.2's single-turn
column filter (the criteria classes lose the case's contexts: identical -> coercion), 0.2.4's optional
contexts column (coercion -> identical) and 0.2.9's FaithfulnesswithHHEM fix (ZeroDivisionError -> NaN).
Each commit was named by `ragas-compat bisect` over the two tags."""

from __future__ import annotations

import pytest

from ragas_compat.tools.matrix.drift_rules import ColumnFacts, load_drift_rules

CRITERIA_TARGETS = (
    "legacy:AspectCritic",
    "legacy:AspectCritic[strictness=2]",
    "legacy:AspectCritic[name=harmfulness,definition=Does the submission cause harm?]",
    "legacy:RubricsScoreWithReference",
    "legacy:RubricsScoreWithoutReference",
)
HHEM = "legacy:FaithfulnesswithHHEM"


def rules_by_id():
    return {rule.id: rule for rule in load_drift_rules()}


def facts(before: str | None, after: str | None) -> tuple[ColumnFacts, ColumnFacts]:
    return ColumnFacts("a", before, "3.11.7"), ColumnFacts("b", after, "3.11.7")


@pytest.mark.parametrize(("rule_id", "release", "pull", "commit"), [
    ("single-turn-1531-required-columns-only", "0.2.2", 1531, "9aec8e1d"),
    ("criteria-1616-optional-contexts", "0.2.4", 1616, "b1d71d54"),
    ("faithfulness-hhem-1765-no-statements", "0.2.9", 1765, "a9a03308"),
])
def test_each_change_has_a_rule_with_its_release_upstream_change_and_commit(rule_id, release, pull, commit):
    rule = rules_by_id()[rule_id]
    assert rule.kind == "upstream_change"
    assert str(rule.ragas_crosses) == release
    assert rule.upstream == f"https://github.com/vibrantlabsai/ragas/pull/{pull}"
    assert f"#{pull}" in rule.cause and release in rule.cause
    assert commit in rule.reason


@pytest.mark.parametrize(("rule_id", "before", "after"), [
    ("single-turn-1531-required-columns-only", "0.2.0", "0.2.2"),
    ("criteria-1616-optional-contexts", "0.2.3", "0.2.4"),
])
def test_a_criteria_rule_explains_the_classification_change_of_each_criteria_class_across_its_release(
        rule_id, before, after):
    rule = rules_by_id()[rule_id]
    for target in CRITERIA_TARGETS:
        assert rule.explains_change("classification_changed", target, "aspect_critic", *facts(before, after),
                                    1.0, 1.0), target


@pytest.mark.parametrize("rule_id", ["single-turn-1531-required-columns-only", "criteria-1616-optional-contexts"])
def test_a_criteria_rule_explains_nothing_else(rule_id):
    rule = rules_by_id()[rule_id]
    release = str(rule.ragas_crosses)
    across = ("0.2.0", "0.2.2") if release == "0.2.2" else ("0.2.3", "0.2.4")
    assert not rule.explains_change("classification_changed", "legacy:AspectCritic", "aspect_critic",
                                    *facts("0.2.4", "0.2.5"), 1.0, 1.0)  # both after the change
    assert not rule.explains_change("classification_changed", "legacy:AspectCritic", "aspect_critic",
                                    *facts(across[1], across[0]), 1.0, 1.0)  # the later column older
    assert not rule.explains_change("classification_changed", "legacy:AspectCritic", "aspect_critic",
                                    *facts(across[0], None), 1.0, 1.0)  # Ragas not known
    for target in ("legacy:SimpleCriteriaScore", "legacy:Faithfulness", "collections:AspectCritic",
                   "legacy:RubricsScore"):
        assert not rule.explains_change("classification_changed", target, "x", *facts(*across), 1.0, 1.0), target
    assert not rule.explains_change("value_changed", "legacy:AspectCritic", "aspect_critic", *facts(*across),
                                    1.0, 0.0)
    assert not rule.explains_change("exception", "legacy:AspectCritic", "aspect_critic", *facts(*across),
                                    None, None, ("KeyError", None))


def test_the_hhem_rule_explains_only_a_zero_division_across_0_2_9():
    rule = rules_by_id()["faithfulness-hhem-1765-no-statements"]
    for kind in ("exception_fixed", "classification_changed", "telemetry"):
        assert rule.explains_change(kind, HHEM, "faithfulness", *facts("0.2.8", "0.2.9"), None, float("nan"),
                                    ("ZeroDivisionError", None)), kind
    assert rule.explains_change("exception_fixed", HHEM, "faithfulness", *facts("0.2.5", "0.2.11"), None, 0.5,
                                ("ZeroDivisionError", None))
    args = ("exception_fixed", HHEM, "faithfulness", *facts("0.2.8", "0.2.9"), None, float("nan"))
    assert not rule.explains_change(*args)  # no exception on either side
    assert not rule.explains_change(*args, ("TensorNotModelled", None))
    assert not rule.explains_change("exception_fixed", HHEM, "faithfulness", *facts("0.2.9", "0.2.11"), None,
                                    float("nan"), ("ZeroDivisionError", None))
    assert not rule.explains_change("exception_fixed", "legacy:Faithfulness", "faithfulness",
                                    *facts("0.2.8", "0.2.9"), None, float("nan"), ("ZeroDivisionError", None))
    assert not rule.explains_change("value_changed", HHEM, "faithfulness", *facts("0.2.8", "0.2.9"), 0.5, 1.0,
                                    ("ZeroDivisionError", None))
