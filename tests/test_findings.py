"""Findings first: the default audit's ranked findings name what a reviewer must know, each with its example
row; report.md opens with the verdict and the findings; every classification's reasons sit with its rows."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import Expectations
from ragas_compat.compare.findings import findings
from ragas_compat.compare.headlines import headlines
from ragas_compat.compare.verdict import verdict
from ragas_compat.pipeline import render_reports
from ragas_compat.report.markdown.document import render_markdown


@pytest.fixture(scope="module")
def default_run(default_audit_run):
    return default_audit_run.result  # tests/conftest.py: the default audit, run once per session


def _by_key(audit):
    return {f.key: f for f in headlines(audit)}


def test_default_audit_names_the_six_findings_with_examples(default_run):
    audit = default_run.audit
    found = _by_key(audit)

    epsilon = found["epsilon"]
    assert "1e-10" in epsilon.sentence and "0.8333333332916666" in epsilon.sentence
    assert "trec_eval AP over all R=4" in epsilon.sentence and "5/12" in epsilon.sentence
    assert epsilon.example.case_id == "cp-worked-example" and epsilon.example.ragas == "0.8333333332916666"
    assert epsilon.example.reference == "5/6 = 0.8333333333333334"

    empty = found["empty_as_zero"]
    assert "0.0" in empty.sentence and empty.example.ragas == "0.0"
    assert empty.example.reference.startswith("undefined (")

    nan = found["undefined_nan"]
    assert "zero claims" in nan.sentence and nan.example.ragas == "NaN"
    assert nan.example.reference == "undefined (zero_claims)"

    dedup = found["dedup"]
    assert "str()" in dedup.sentence and dedup.example.case_id == "edge-duplicate-ids"
    assert (dedup.example.ragas, dedup.example.reference) == ("0.5", "2/3 = 0.6666666666666666")

    raised = found["collections_raise"]
    assert "collections API raises on empty retrieval where the legacy API returns 0.0" in raised.sentence
    assert raised.example.case_id == "edge-empty-retrieval"
    assert "legacy 0.0" in raised.example.ragas and "ValueError" in raised.example.ragas

    gap = found["mean_gap:context_precision_with_reference"]  # one mean-gap finding per metric
    [agg] = [a for a in audit.dataset_level.targets if a.target == gap.example.target]
    assert "evaluate()" in gap.sentence and f"{agg.ragas_mean:.3f}" in gap.sentence
    assert str(agg.policy.mean) in gap.sentence
    assert repr(agg.ragas_mean) in gap.example.ragas
    assert f"{agg.policy.mean} = {float(agg.policy.mean)!r}" in gap.example.reference


def test_findings_are_ranked_by_consequence(default_run):
    found = headlines(default_run.audit)
    assert [f.rank for f in found] == sorted(f.rank for f in found)
    keys = [f.key for f in found]
    assert keys[0].startswith("mean_gap:") and found[-1].rank == max(f.rank for f in found)
    assert all(f.sentence and f.example.ragas and f.example.reference for f in found)


def test_unexplained_rows_come_first_and_set_the_verdict(default_run):
    audit = default_run.audit
    bare = build_audit(audit.suite, default_run.probe.output, Expectations("none", ()), audit.provenance)
    found = headlines(bare)
    assert found[0].kind == "unexplained" and found[0].example.case_id
    v = verdict(bare)
    assert not v.ok and "unexplained" in v.status and "error" in v.status
    assert verdict(audit).status == "expected" and verdict(audit).ok


def test_the_audit_holds_its_judgement_computed_once(default_run):
    """``build_audit`` stores findings, headlines and verdict as fields; the renderers only read them."""
    audit = default_run.audit
    assert audit.verdict == verdict(audit) and list(audit.headlines) == headlines(audit)
    assert list(audit.findings) == findings(audit) and audit.drift == bool(audit.findings)
    assert "_harness_findings" not in vars(audit)  # no cache set beside the fields


def test_report_md_opens_with_verdict_and_findings(default_run):
    text = render_markdown(default_run.audit)
    head = text[:text.index("## Provenance")]
    assert "**Verdict: expected:" in head and "## Findings" in head
    for needle in ("1e-10", "evaluate()", "collections API raises", "str()", "zero claims", "score 0.0"):
        assert needle in head, needle


def test_reasons_are_attached_to_the_rows_they_explain(default_run):
    text = render_markdown(default_run.audit)
    section = text[text.index("### `epsilon`"):text.index("### `undefined_nan`")]
    reason_at = section.index("**Expected because** (rule ap-epsilon")
    table_at = section.index("| case | Ragas target |", reason_at)
    assert "cp-worked-example" in section[table_at:section.index("**Expected because**", table_at)]


def _with_failed_evaluate_run(output: dict, by: str) -> dict:
    """The probe output with its first evaluate() run replaced by one that failed (raised ``by`` whom)."""
    runs = list(output["evaluate"]["runs"])
    runs[0] = {**runs[0], "rows": [], "errors": [], "scores": {},
               "run_error": {"type": "ValueError", "message": "aspect_critic prompt is already expected", "by": by}}
    return {**output, "evaluate": {**output["evaluate"], "runs": runs}}


def test_an_evaluate_run_the_harness_failed_to_prepare_is_a_harness_error(default_run):
    """The dataset-level pass checked nothing when the harness's own preparation raised (its scripted
    judges): the verdict cannot stay "expected" (it once did, the failure only listed under dataset_level)."""
    audit = default_run.audit
    failed = build_audit(audit.suite, _with_failed_evaluate_run(default_run.probe.output, "harness"),
                         audit.expectations, audit.provenance)
    v = verdict(failed)
    assert not v.ok and v.harness_errors == 1 and v.status == "1 dataset-level check not made (harness errors)"
    assert "1 dataset-level check not made (harness errors)" in v.line() and "rows not scored" not in v.line()
    [finding] = [f for f in failed.findings if f.kind == "harness_error"]
    assert finding.line().startswith("harness_error: dataset level: evaluate() on ")
    assert "already expected" in finding.line()


@pytest.mark.parametrize("by", ["ragas", None])
def test_an_evaluate_run_ragas_raised_in_is_an_unexplained_error(default_run, by):
    """Ragas's own evaluate() raised: no dataset-level mean was aggregated, so the verdict cannot say
    "expected" (it once did, the failure only listed). A run whose raiser is not recorded counts the same."""
    audit = default_run.audit
    output = _with_failed_evaluate_run(default_run.probe.output, "ragas")
    if by is None:
        runs = output["evaluate"]["runs"]
        error = {k: v for k, v in runs[0]["run_error"].items() if k != "by"}
        output = {**output, "evaluate": {**output["evaluate"], "runs": [{**runs[0], "run_error": error}, *runs[1:]]}}
    failed = build_audit(audit.suite, output, audit.expectations, audit.provenance)
    assert failed.dataset_level.problems and not failed.dataset_level.harness_problems
    v = verdict(failed)
    assert not v.ok and v.errors == 1 and v.harness_errors == 0 and v.status == "1 error"
    [finding] = [f for f in failed.findings if f.kind == "error"]
    assert finding.case_id is None and finding.line().startswith("error: dataset level: evaluate() on ")
    files = render_reports(failed)
    schema = json.loads(resources.files("ragas_compat").joinpath("report/report.schema.json").read_text())
    jsonschema.validate(json.loads(files["report.json"]), schema)
    assert "dataset level: evaluate() on " in files["report.md"] and v.line() in files["report.md"]


def test_an_evaluate_run_whose_scripted_judge_was_asked_amiss_is_a_harness_error(default_run):
    """A target's evaluate() run in which the harness's scripted judge had no frozen answer (or left prompts
    unasked) compared Ragas's mean on replies nobody scripted: one harness error per run, the problems listed."""
    audit = default_run.audit
    output = default_run.probe.output
    runs = list(output["evaluate"]["runs"])
    target = runs[0]["targets"][0]
    problems = [f"{target}: no frozen answer for a prompt", f"{target}: a prompt expected 1 time(s), asked 0"]
    runs[0] = {**runs[0], "judge_problems": problems}
    judged = build_audit(audit.suite, {**output, "evaluate": {**output["evaluate"], "runs": runs}},
                         audit.expectations, audit.provenance)
    v = verdict(judged)
    assert not v.ok and v.harness_errors == 1 and "1 dataset-level check not made" in v.status
    [finding] = [f for f in judged.findings if f.kind == "harness_error"]
    assert finding.message == (f"dataset level: {runs[0]['api']}() on {problems[0]} (and 1 more)")
    [aggregate] = [a for a in judged.dataset_level.targets if a.target == target]
    assert list(aggregate.run_problems[:2]) == problems


def _evaluate_run_changed(output: dict, *, rows: bool, mean: bool) -> tuple[dict, str]:
    """The probe output with its first evaluate() run's first target moved by 0.125: in every row
    (``rows``) and/or in the mean it reports (``mean``); its aevaluate() run is left as it was."""
    runs = list(output["evaluate"]["runs"])
    run = runs[0]
    target = run["targets"][0]

    def moved(value):
        return value + 0.125 if isinstance(value, float) else value

    if rows:
        run = {**run, "rows": [{**entry, "values": {**entry["values"], target: moved(entry["values"].get(target))}}
                               for entry in run["rows"]]}
    if mean:
        run = {**run, "scores": {**run["scores"], target: moved(run["scores"].get(target))}}
    runs[0] = run
    return {**output, "evaluate": {**output["evaluate"], "runs": runs}}, target


@pytest.mark.parametrize("rows, mean, says", [
    (True, True, ["the APIs' means differ", "row values differ from evaluate()",
                  "evaluate()'s row is not single_turn_ascore's value"]),
    (False, True, ["is not numpy's nanmean over its own rows", "the APIs' means differ"]),
])
def test_a_dataset_level_run_that_disagrees_with_the_per_row_scoring_is_unexplained(default_run, rows, mean, says):
    """Ragas's evaluate() rows are checked against its own single_turn_ascore on the same cases, its mean against
    numpy's nanmean of its rows, and evaluate() against aevaluate(): a disagreement is an unexplained finding (it
    once showed only in the dataset-level section while the verdict said "expected")."""
    audit = default_run.audit
    assert not [f for f in audit.findings if f.message.startswith("dataset level:")]  # all hold in the default audit
    output, target = _evaluate_run_changed(default_run.probe.output, rows=rows, mean=mean)
    changed = build_audit(audit.suite, output, audit.expectations, audit.provenance)
    found = [f for f in changed.findings if f.message.startswith("dataset level:")]
    assert {f.kind for f in found} == {"unexplained"} and {f.target for f in found} == {target}
    assert len(found) == len(says) and all(any(text in f.message for f in found) for text in says)
    v = verdict(changed)
    assert not v.ok and v.unexplained == len(says) and v.status == f"{len(says)} unexplained"
    files = render_reports(changed)
    schema = json.loads(resources.files("ragas_compat").joinpath("report/report.schema.json").read_text())
    jsonschema.validate(json.loads(files["report.json"]), schema)
    assert all(f.message in files["report.md"] for f in found)


def test_a_batch_whose_reported_mean_is_not_its_rows_mean_is_unexplained(default_run):
    """A batched evaluate() run's mean is the harness's safe_nanmean over every row (probe/evaluate.py merges the
    batches); what Ragas reported for each batch is checked there, and a batch that disagrees is a finding too."""
    audit = default_run.audit
    output = default_run.probe.output
    runs = list(output["evaluate"]["runs"])
    target = runs[0]["targets"][0]
    problem = f"{target}: batch 1/2: evaluate() reported the mean 0.5, Ragas's safe_nanmean of its 3 rows is 0.25"
    runs[0] = {**runs[0], "stub_problems": [problem]}
    changed = build_audit(audit.suite, {**output, "evaluate": {**output["evaluate"], "runs": runs}},
                          audit.expectations, audit.provenance)
    [finding] = [f for f in changed.findings if f.message.startswith("dataset level:")]
    assert finding.kind == "unexplained" and finding.message == f"dataset level: {problem}"
    assert not verdict(changed).ok


def test_a_dataset_level_disagreement_the_harness_caused_is_not_said_of_ragas(default_run):
    """A row the harness failed to score, or a run whose scripted judge was asked amiss, makes no dataset-level
    disagreement: the harness error says it (never blamed on Ragas)."""
    audit = default_run.audit
    output, target = _evaluate_run_changed(default_run.probe.output, rows=True, mean=True)
    runs = list(output["evaluate"]["runs"])
    runs[0] = {**runs[0], "judge_problems": [f"{target}: no frozen answer for a prompt"]}
    amiss = build_audit(audit.suite, {**output, "evaluate": {**output["evaluate"], "runs": runs}},
                        audit.expectations, audit.provenance)
    assert [f.kind for f in amiss.findings if f.message.startswith("dataset level:")] == ["harness_error"]

    case_id = runs[0]["rows"][0]["case_id"]
    harness_row = {"error": {"type": "StubMismatch", "message": "no frozen answer", "origin": "harness"}}
    results = [{**r, "value": harness_row} if (r["case_id"], r["target"]) == (case_id, target) else r
               for r in default_run.probe.output["results"]]
    only_row, _ = _evaluate_run_changed({**default_run.probe.output, "results": results}, rows=False, mean=False)
    scored = build_audit(audit.suite, only_row, audit.expectations, audit.provenance)
    assert not [f for f in scored.findings if f.message.startswith("dataset level:")]
    assert [f.kind for f in scored.findings if f.case_id == case_id and f.target == target] == ["harness_error"]
