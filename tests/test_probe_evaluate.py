"""Ragas's evaluate()/aevaluate() through the probe on the default suite (two probe runs).

Run A: every legacy target per row, plus evaluate() and aevaluate() with 16 concurrent workers.
Run B: no per-row targets, evaluate() only, one worker (sequential). The scripted judges answer
by content, so all three dataset runs must give bit-identical rows, equal to the per-row
``single_turn_ascore`` values (NaN where that raised), and the parse-failure case must show up
as dropped with its cause.
"""

from __future__ import annotations

import math

import pytest
from bundled_probe import registry_targets

from ragas_compat.cases import load_default_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import Expectations
from ragas_compat.probe.evaluate import evaluation_groups, metric_sets
from ragas_compat.runner import run_probe
from ragas_compat.values import decode_ragas_value

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

PARSE_FAILURE = "edge-judge-reply-unparseable"
LEGACY_TARGETS = registry_targets("legacy")
LEGACY = [t.name for t in LEGACY_TARGETS]
# evaluate() takes metric instances: a legacy function target (a function of a dataset) is not one, nor a class
# given its LLM per call (NumericMetric: ascore(llm=..., **inputs), not a Metric evaluate() runs), nor one built
# on a case's frozen classifier (FaithfulnesswithHHEM)
LEGACY_CLASSES = [t.name for t in LEGACY_TARGETS if t.function is None and not t.llm_per_call and t.classifier is None]
METRIC_SETS = tuple((name, tuple(t.name for t in group)) for name, group in metric_sets(LEGACY_TARGETS))


def row_values(run: dict) -> dict[tuple[str, str], str]:
    """(case, target) -> repr of the value (NaN as 'nan'), for bit-exact comparison."""
    out = {}
    for row in run["rows"]:
        for target, raw in row["values"].items():
            out[(row["case_id"], target)] = repr(decode_ragas_value(raw))
    return out


def runs_by(output: dict, api: str) -> dict[tuple[str, str], str]:
    values: dict[tuple[str, str], str] = {}
    for run in output["evaluate"]["runs"]:
        if run["api"] == api:
            values.update(row_values(run))
    return values


@pytest.fixture(scope="module")
def suite():
    return load_default_suite()


@pytest.fixture(scope="module")
def concurrent(suite):
    run = run_probe([c.raw for c in suite.cases], targets=LEGACY,
                    evaluate={"apis": ["evaluate", "aevaluate"], "max_workers": 16})
    assert run.ok, run.error
    return run.output


@pytest.fixture(scope="module")
def sequential(suite):
    # evaluate() runs only the targets the request names (here every legacy one)
    run = run_probe([c.raw for c in suite.cases], targets=LEGACY, evaluate={"apis": ["evaluate"], "max_workers": 1})
    assert run.ok, run.error
    return run.output


def test_every_legacy_target_is_in_exactly_one_metric_set():
    names = [name for _, targets in METRIC_SETS for name in targets]
    assert sorted(names) == sorted(LEGACY_CLASSES)


def test_metric_sets_derived_from_the_target_table_keep_aliases_apart():
    # a row's legacy classes share a metric name, so evaluate() cannot score them in one run
    # (checked on the first metrics; later rows are derived the same way)
    first = {"legacy:LLMContextPrecisionWithReference", "legacy:LLMContextPrecisionWithoutReference",
             "legacy:LLMContextRecall", "legacy:Faithfulness", "legacy:ContextPrecision", "legacy:ContextUtilization",
             "legacy:ContextRecall", "legacy:NonLLMContextPrecisionWithReference", "legacy:NonLLMContextRecall",
             "legacy:IDBasedContextPrecision", "legacy:IDBasedContextRecall"}
    assert tuple((name, tuple(t for t in targets if t in first)) for name, targets in METRIC_SETS) == (
        ("legacy_llm", ("legacy:LLMContextPrecisionWithReference", "legacy:LLMContextPrecisionWithoutReference",
                        "legacy:LLMContextRecall", "legacy:Faithfulness")),
        ("legacy_llm_aliases", ("legacy:ContextPrecision", "legacy:ContextUtilization", "legacy:ContextRecall")),
        ("legacy_non_llm", ("legacy:NonLLMContextPrecisionWithReference", "legacy:NonLLMContextRecall",
                            "legacy:IDBasedContextPrecision", "legacy:IDBasedContextRecall")),
    )


def test_configured_targets_are_scored_under_their_own_name():
    # FactualCorrectness in four configurations runs in one evaluate(): each instance is renamed
    # with its configuration, so evaluate()'s columns (name(mode=...)) stay apart
    llm = dict(METRIC_SETS)["legacy_llm"]
    assert {"legacy:FactualCorrectness", "legacy:FactualCorrectness[mode=precision]",
            "legacy:FactualCorrectness[mode=recall]", "legacy:FactualCorrectness[beta=0.5]",
            "legacy:ContextEntityRecall"} <= set(llm)


def test_groups_hold_only_cases_their_targets_apply_to(suite):
    for _, targets, cases in evaluation_groups([c.raw for c in suite.cases], LEGACY_TARGETS):
        assert all(t.applies(c) for t in targets for c in cases)


RETRIED_TEMPLATE_TARGETS = {"legacy:AnswerAccuracy", "legacy:ContextRelevance", "legacy:ResponseGroundedness"}


def test_settings_and_no_network(concurrent):
    settings = concurrent["evaluate"]["settings"]
    assert settings["raise_exceptions"] is False and settings["max_workers"] == 16
    assert concurrent["network_attempts"] == []
    for run in concurrent["evaluate"]["runs"]:
        assert run["run_error"] is None
        # the one known harness limit: a case with no vote (criteria-no-votes) gives the scripted judge
        # nothing to answer (rule criteria-no-votes-unanswerable); every other prompt is answered
        unanswerable = [p for p in run["judge_problems"]
                        if p.startswith("legacy:AspectCritic") and '"user_input":"Is the response polite?"' in p]
        assert [p for p in run["judge_problems"] if p not in unanswerable] == [] and run["stub_problems"] == []
        prompts = {t: n - sum(p.startswith(t + ":") for p in unanswerable)  # asked, not answered
                   for t, n in run["prompts"].items() if t not in RETRIED_TEMPLATE_TARGETS}
        assert prompts == {t: n for t, n in run["expected_prompts"].items() if t not in RETRIED_TEMPLATE_TARGETS}
        for target in set(run["prompts"]) & RETRIED_TEMPLATE_TARGETS:  # one text per template, asked 0 to 5 times
            assert run["prompts"][target] <= 5 * run["expected_prompts"][target]


def test_rows_are_identical_across_runs_and_worker_counts(concurrent, sequential):
    first = runs_by(concurrent, "evaluate")
    assert len(first) > 100
    assert runs_by(concurrent, "aevaluate") == first
    assert runs_by(sequential, "evaluate") == first


def evaluated_targets(suite) -> set[str]:
    """The targets evaluate() runs for the request: its legacy classes, the cases' configured ones too
    (a request naming a metric's targets carries that metric's configured targets, of either API;
    collections targets and legacy functions are scored per row only)."""
    from ragas_compat.probe.targets import targets_from_request
    from ragas_compat.runner import request_targets

    targets = targets_from_request(request_targets(LEGACY, [c.raw for c in suite.cases]))
    return {t.name for t in targets if t.api == "legacy" and t.function is None and not t.llm_per_call
            and t.classifier is None}


def test_rows_equal_single_turn_ascore(suite, concurrent):
    wanted = evaluated_targets(suite)
    assert set(LEGACY_CLASSES) < wanted  # the cases configure legacy targets of their own
    single = {(r["case_id"], r["target"]): decode_ragas_value(r["value"]) for r in concurrent["results"]
              if r["target"] in wanted}
    evaluated = runs_by(concurrent, "evaluate")
    assert set(evaluated) == set(single)
    for key, value in single.items():
        expected = "nan" if not isinstance(value, float) else repr(value)  # an exception becomes NaN
        assert evaluated[key] == expected, key


def test_dataset_scores_are_the_nanmean_of_the_rows(concurrent):
    from ragas_compat.compare.dataset_level import numpy_nanmean

    for run in concurrent["evaluate"]["runs"]:
        for target, raw in run["scores"].items():
            rows = [decode_ragas_value(r["values"][target]) for r in run["rows"]]
            assert repr(decode_ragas_value(raw)) == repr(numpy_nanmean(rows)), target


def test_parse_failure_is_dropped_with_its_cause(suite, concurrent):
    audit = build_audit(suite, concurrent, Expectations("none", ()), {})
    by_target = {a.target: a for a in audit.dataset_level.targets}
    for target in ("legacy:LLMContextPrecisionWithReference", "legacy:ContextPrecision"):
        agg = by_target[target]
        [dropped] = agg.dropped_rows
        assert dropped.case_id == PARSE_FAILURE
        assert dropped.evaluate_error[0] == "OutputParserException"
        assert agg.policy.errors["judge_reply_unparseable"] == 1
        assert f"{PARSE_FAILURE} (error turned into NaN: OutputParserException" in sentence_of(agg)
        # rows Ragas keeps as 0.0 (no relevant context) name the gap, the epsilon only adds to it
        assert agg.classification.name == "empty_as_zero" and agg.mean_recomputed_exactly
    faithfulness = by_target["legacy:Faithfulness"]
    # the bundled cases with zero response claims (hhem-no-statements: FaithfulnesswithHHEM's, scored by Faithfulness too)
    dropped = {row.case_id: row for row in faithfulness.dropped_rows}
    assert set(dropped) == {"edge-zero-response-claims", "hhem-no-statements"}
    assert all(row.evaluate_error is None and math.isnan(row.evaluate_value) for row in dropped.values())
    assert faithfulness.policy.undefined == {"zero_claims": 2}


def sentence_of(agg) -> str:
    from ragas_compat.compare.dataset_level import sentence

    return sentence(agg)


@pytest.mark.parametrize("failing, by", [("_metrics_with_judges", "harness"), ("_call", "ragas")])
def test_a_failed_run_says_who_raised(monkeypatch, failing, by):
    """An evaluate() run that failed while the harness built its metrics and scripted judges is the harness's
    (the audit counts it as a harness error); one that failed inside Ragas's evaluate() is Ragas's."""
    from ragas_compat.probe import evaluate

    def raises(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(evaluate, "_metrics_with_judges", lambda targets, cases: ([], []))
    monkeypatch.setattr(evaluate, "_dataset", lambda targets, cases: None)
    monkeypatch.setattr(evaluate, failing, raises)
    record, raw = evaluate._run_batch("evaluate", "set", (), (), {})
    assert record["run_error"] == {"type": "ValueError", "message": "boom", "by": by} and raw == {}
