"""Ragas 0.2.0-0.2.5's rubric classes (issue 38): RubricsScoreWithReference / WithoutReference and
InstanceRubricsWithReference / InstanceRubricsScoreWithoutReference, renamed RubricsScore / InstanceRubrics in
0.2.6 (ragas#1666), which also renamed SingleTurnSample's ``rubric`` to ``rubrics``.

Unit tests (no Ragas): the registry declares them as targets of those releases only (``RagasTargets.releases``)
with the sample's earlier field name (``sample_names``); the probe protocol carries both; the probe passes the
case's ``rubrics`` as ``rubric`` where the release's sample declares that, and leaves a target out where its
class is missing outside its releases; the judge answers their prompt dialect (contexts folded into the
question); the matrix shows the missing class outside the releases and, at the rename, compares the old
class's cell with its successor's: ``class_renamed`` plus the sample's renamed field as ``field_dropped``.

The end-to-end test (``matrix_e2e``, slow) runs the matrix over the cached 0.2.3, 0.2.5 and 0.2.6 environments.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import BaseModel
from test_probe_dialects import render_early_0_2

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.metrics.registry import metric, probe_targets, release_bounds
from ragas_compat.pin.modules import registered_targets
from ragas_compat.probe.judge.criteria import (
    folded_into_question,
    receives_contexts,
    renders_contexts,
    rubrics_script,
)
from ragas_compat.probe.judge.dialects import dialect_book, prompts_for
from ragas_compat.probe.judge.prompt_book import PromptBook
from ragas_compat.probe.protocol import API_LEGACY, target_problem
from ragas_compat.probe.scoring import sample_renames
from ragas_compat.probe.targets import Target, release_number
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.matrix.drift import MISSING_CLASS_ERROR, Cell, build_matrix, causes_between
from ragas_compat.tools.matrix.environments import Environment
from ragas_compat.tools.matrix.run import run_matrix
from ragas_compat.tools.matrix.verdict import matrix_findings

OLD_RUBRICS = ("legacy:RubricsScoreWithReference", "legacy:RubricsScoreWithoutReference")
OLD_INSTANCE = ("legacy:InstanceRubricsWithReference", "legacy:InstanceRubricsScoreWithoutReference")
CASES = ("criteria-unanimous", "criteria-empty-inputs", "rubric-out-of-scale")


# ---------------------------------------------------------------- the registry and the protocol

def test_the_earlier_classes_are_targets_of_0_2_0_to_0_2_5_only_with_their_successor():
    assert metric("rubrics_score").ragas_targets[:3] == ("legacy:RubricsScore", *OLD_RUBRICS)
    assert metric("instance_rubrics").ragas_targets[:3] == ("legacy:InstanceRubrics", *OLD_INSTANCE)
    for target in OLD_RUBRICS:
        assert release_bounds(target) == ("0.2.0", "0.2.6", "RubricsScore")
    for target in OLD_INSTANCE:
        assert release_bounds(target) == ("0.2.0", "0.2.6", "InstanceRubrics")
    # the same class name in the other API (0.4.x collections RubricsScoreWithReference) is not bounded
    for target in ("collections:RubricsScoreWithReference", "legacy:RubricsScore", "legacy:InstanceRubrics",
                   "legacy:Faithfulness", "not a target"):
        assert release_bounds(target) is None


def test_probe_targets_carry_the_releases_and_the_earlier_sample_name():
    sent = probe_targets()
    for name in (*OLD_RUBRICS, *OLD_INSTANCE):
        assert sent[name]["releases"] == ["0.2.0", "0.2.6"]
        assert target_problem(sent[name]) is None
    for name in OLD_INSTANCE + ("legacy:InstanceRubrics",):
        assert sent[name]["sample_names"] == [["rubrics", "rubric"]]
    assert "sample_names" not in sent["legacy:RubricsScore"]  # it reads no rubric of the case
    assert "sample_names" not in sent["collections:InstanceSpecificRubrics"]  # a legacy sample's name only
    assert "releases" not in sent["legacy:InstanceRubrics"] and "releases" not in sent["collections:RubricsScoreWithReference"]
    # the pin (0.4.3) holds none of the earlier classes: no file of it is behind them
    assert not set(OLD_RUBRICS + OLD_INSTANCE) & set(registered_targets())


@pytest.mark.parametrize(("key", "value"), [
    ("releases", ["0.2.0"]), ("releases", "0.2.0"), ("releases", [0, 2]),
    ("sample_names", [["rubrics"]]), ("sample_names", ["rubrics", "rubric"]), ("sample_names", [[1, "x"]]),
])
def test_a_malformed_releases_or_sample_names_is_refused(key, value):
    spec = {**probe_targets()["legacy:InstanceRubricsWithReference"], key: value}
    assert key in (target_problem(spec) or "")


def test_sample_names_are_for_a_legacy_sample_only():
    spec = {**probe_targets()["collections:InstanceSpecificRubrics"], "sample_names": [["rubrics", "rubric"]]}
    assert "sample_names" in (target_problem(spec) or "")


@pytest.mark.parametrize(("version", "within"), [
    ("0.2.0", True), ("0.2.5", True), ("0.2.5.post1", True), ("0.2.6", False), ("0.2.6.dev3+g1a2b3c4", False),
    ("0.1.22", False), ("0.4.3", False), (None, True), ("unknown", True),
])
def test_within_releases(version, within):
    target = Target.from_spec(probe_targets()["legacy:InstanceRubricsWithReference"])
    assert target.releases == ("0.2.0", "0.2.6") and target.sample_names == (("rubrics", "rubric"),)
    assert target.within_releases(version) is within


def test_release_number():
    assert release_number("0.2.6.dev3+g1a2b3c4") == (0, 2, 6)
    assert release_number("10.0") == (10, 0) and release_number("") is None and release_number(None) is None


# ---------------------------------------------------------------- the probe: the sample's name for the field

class Sample025:  # stand-ins for a SingleTurnSample's declared fields (pydantic's model_fields)
    model_fields = dict.fromkeys(("user_input", "response", "retrieved_contexts", "reference", "rubric"))


class Sample026:
    model_fields = dict.fromkeys(("user_input", "response", "retrieved_contexts", "reference", "rubrics"))


def test_the_case_rubrics_go_in_as_rubric_where_the_sample_declares_only_that():
    names = (("rubrics", "rubric"),)
    inputs = {"user_input": "q", "rubrics": {"score1_description": "x"}}
    assert sample_renames(Sample025, names, inputs) == {"rubrics": "rubric"}
    assert sample_renames(Sample026, names, inputs) == {}        # declared under the case's name
    assert sample_renames(Sample025, names, {"user_input": "q"}) == {}  # the case gives none
    assert sample_renames(Sample025, (), inputs) == {}           # the target names no earlier name
    assert sample_renames(None, names, inputs) == {}             # 0.1.x scores row dicts


# ---------------------------------------------------------------- the judge: the 0.2.0-0.2.5 dialect

RUBRIC_INSTRUCTION = "Score the response on the rubric (a stand-in instruction)."
RUBRIC = {f"score{n}_description": f"level {n}" for n in range(1, 6)}


class RubricInputWithReference(BaseModel):  # 0.2.0-0.2.5: no retrieved_contexts field, the rubric a dict
    user_input: str
    response: str
    reference: str
    rubrics: dict[str, str]


class RubricInputCurrent(BaseModel):  # 0.2.6 on: the contexts a field of their own
    user_input: str | None = None
    response: str | None = None
    retrieved_contexts: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str]


class ScoreFeedback(BaseModel):
    feedback: str
    score: int


def rubric_metric(input_model: type) -> SimpleNamespace:
    prompt = SimpleNamespace(instruction=RUBRIC_INSTRUCTION, input_model=input_model, output_model=ScoreFeedback)
    return SimpleNamespace(single_turn_scoring_prompt=prompt, rubrics=RUBRIC)


CASE = {"user_input": "q", "response": "r", "reference": "ref", "retrieved_contexts": ["c1", "c2"],
        "verdicts": {"rubrics_score": [{"score": 4}]}}


def test_the_early_rubric_classes_are_asked_with_the_contexts_folded_into_the_question():
    metric_ = rubric_metric(RubricInputWithReference)
    adapter, book = prompts_for(API_LEGACY, metric_), PromptBook()
    assert not renders_contexts(adapter, metric_, "rubrics_score")
    rubrics_script("rubrics_score")(adapter, metric_, CASE, dialect_book(adapter, book))
    folded = folded_into_question(CASE)
    assert folded == "q answer using context: c1\nc2"
    asked = render_early_0_2(RUBRIC_INSTRUCTION, {"user_input": folded, "response": "r", "reference": "ref",
                                                  "rubrics": RUBRIC})
    assert ScoreFeedback.model_validate_json(book.answer(asked)).score == 4
    assert book.problems == [] and book.unasked() == []


def test_the_early_rubric_classes_fold_no_empty_context_list():
    case = {**CASE, "retrieved_contexts": []}
    metric_ = rubric_metric(RubricInputWithReference)
    adapter, book = prompts_for(API_LEGACY, metric_), PromptBook()
    rubrics_script("rubrics_score")(adapter, metric_, case, dialect_book(adapter, book))
    asked = render_early_0_2(RUBRIC_INSTRUCTION, {"user_input": "q", "response": "r", "reference": "ref",
                                                  "rubrics": RUBRIC})
    assert ScoreFeedback.model_validate_json(book.answer(asked)).score == 4


class SingleTurn:  # a stand-in for ragas.metrics.base.MetricType's member
    name = "SINGLE_TURN"


def filtering_metric(columns: set[str]) -> SimpleNamespace:
    """A 0.2.2-0.2.5 rubric class: it keeps only the sample columns it declares."""
    metric_ = rubric_metric(RubricInputWithReference)
    metric_._required_columns = {SingleTurn(): columns}
    metric_._only_required_columns_single_turn = lambda sample: sample
    return metric_


def test_a_class_that_drops_undeclared_columns_is_asked_without_the_contexts():
    # 0.2.2-0.2.3 RubricsScoreWithReference declares no retrieved_contexts: they never reach the question
    metric_ = filtering_metric({"user_input", "response", "reference"})
    assert not receives_contexts(metric_)
    adapter, book = prompts_for(API_LEGACY, metric_), PromptBook()
    rubrics_script("rubrics_score")(adapter, metric_, CASE, dialect_book(adapter, book))
    asked = render_early_0_2(RUBRIC_INSTRUCTION, {"user_input": "q", "response": "r", "reference": "ref",
                                                  "rubrics": RUBRIC})
    assert ScoreFeedback.model_validate_json(book.answer(asked)).score == 4
    # 0.2.4-0.2.5 declare them optional: folded again
    assert receives_contexts(filtering_metric({"user_input", "response", "retrieved_contexts:optional"}))
    assert receives_contexts(rubric_metric(RubricInputWithReference))  # 0.2.0-0.2.1: no column filter


def test_rubrics_score_keeps_the_contexts_a_field_where_its_prompt_has_one():
    metric_ = rubric_metric(RubricInputCurrent)
    adapter, book = prompts_for(API_LEGACY, metric_), PromptBook()
    assert renders_contexts(adapter, metric_, "rubrics_score")
    rubrics_script("rubrics_score")(adapter, metric_, CASE, dialect_book(adapter, book))
    asked = render_early_0_2(RUBRIC_INSTRUCTION, {"user_input": "q", "response": "r",
                                                  "retrieved_contexts": ["c1", "c2"], "reference": "ref",
                                                  "rubrics": RUBRIC})
    assert ScoreFeedback.model_validate_json(book.answer(asked)).score == 4


# ---------------------------------------------------------------- the matrix: the rename as a drift

def result(case_id, target, value, **extra):
    metric_name = "instance_rubrics" if "Instance" in target else "rubrics_score"
    return {"case_id": case_id, "target": target, "api": "legacy", "metric": metric_name, "value": value,
            "ragas_class": f"ragas.metrics._m.{target.split(':')[1]}", "fields_read": [], "received": {},
            "prompts": extra.pop("prompts", 1), "expected_prompts": 1, "warnings": [], "exported": True,
            "fields_accepted": extra.pop("fields_accepted", ["user_input", "response"]),
            "fields_dropped": [], "required_columns": [], **extra}


def missing(case_id, target):
    return result(case_id, target, {"error": {"type": MISSING_CLASS_ERROR, "message": f"this Ragas has no {target}"}},
                  ragas_class=None, prompts=0)


KEY_ERROR = {"error": {"type": "KeyError", "message": "'rubrics'"}}
U = "criteria-unanimous"
OLD = [missing(U, "legacy:RubricsScore"), missing(U, "legacy:InstanceRubrics"),
       result(U, "legacy:RubricsScoreWithReference", 4.0),
       result(U, "legacy:InstanceRubricsWithReference", KEY_ERROR, prompts=0, fields_renamed={"rubrics": "rubric"},
              fields_accepted=["user_input", "response", "rubric"])]
NEW = [result(U, "legacy:RubricsScore", 4.0), result(U, "legacy:InstanceRubrics", 4.0)]  # the earlier: no row


def probe_output(version, results):
    return {"probe_format": 1, "ragas": {"version": version, "import_error": None, "import_warnings": []},
            "network_attempts": [], "results": results}


@pytest.fixture(scope="module")
def columns():
    full = load_default_suite()
    suite = Suite(full.name, full.source, (full.case(U),))
    outputs = {"old": probe_output("0.2.5", OLD), "new": probe_output("0.2.6", NEW)}

    def probe(cases, *, python, sys_path_prefix, timeout):
        return ProbeRun(True, None, outputs[python], "", 1.0)

    envs = [Environment("0.2.5", "release", "0.2.5", "old", status="reused"),
            Environment("0.2.6", "release", "0.2.6", "new", status="reused")]
    columns, _ = run_matrix(envs, suite, probe=probe)
    return columns, suite


@pytest.fixture(scope="module")
def matrix(columns):
    """The matrix without drift rules: the causes as the matrix names them."""
    columns, suite = columns
    return build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": 1}, drift_rules=())


@pytest.fixture(scope="module")
def explained(columns):
    """The matrix with pinned/matrix-drift.toml's rules."""
    columns, suite = columns
    return build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": 1})


def row(matrix, target):
    return next(r for r in matrix.rows if r.target == target)


def test_outside_its_releases_an_earlier_class_is_a_missing_class_not_an_absent_row(matrix):
    cell = row(matrix, "legacy:InstanceRubricsWithReference").cells[1]
    assert cell.status == "error" and cell.error_type == MISSING_CLASS_ERROR and cell.text == "missing class"
    assert "0.2.0 to before 0.2.6 only; InstanceRubrics from 0.2.6" in cell.error_message


def test_the_sample_field_rename_is_a_field_dropped_drift_of_the_renamed_class(matrix):
    kinds = {c.kind: c.text for c in row(matrix, "legacy:InstanceRubricsWithReference").changes[0]}
    assert kinds["class_renamed"].startswith("InstanceRubricsWithReference is InstanceRubrics from 0.2.6")
    assert kinds["field_dropped"] == ("SingleTurnSample of 0.2.6 has no field 'rubric': renamed 'rubrics' (the "
                                      "case's rubrics went in as 'rubric' in 0.2.5, as 'rubrics' from 0.2.6 on)")
    assert kinds["exception_fixed"] == "0.2.5 raised KeyError: 'rubrics'"
    assert "class_missing" not in kinds and "class_moved" not in kinds
    drifts = {(d.kind, d.text): d.rows for d in matrix.drifts}
    assert drifts[("field_dropped", kinds["field_dropped"])] == ((U, "legacy:InstanceRubricsWithReference"),)


def test_a_renamed_class_that_scores_the_same_shows_only_the_rename(matrix):
    kinds = [c.kind for c in row(matrix, "legacy:RubricsScoreWithReference").changes[0]]
    assert kinds == ["class_renamed"]
    # the successor's own row: the class first exists in 0.2.6
    assert [c.kind for c in row(matrix, "legacy:RubricsScore").changes[0]] == ["class_added"]


def test_the_rules_name_the_upstream_change_and_keep_the_field_dropped_kind(explained):
    causes = {c.kind: c for c in row(explained, "legacy:InstanceRubricsWithReference").changes[0]}
    assert (causes["field_dropped"].rule, causes["class_renamed"].rule) == (
        "sample-rubric-1666-renamed-rubrics", "rubric-classes-1666-renamed")
    assert "rubric is renamed rubrics (ragas#1666, 0.2.6)" in causes["field_dropped"].text
    assert causes["upstream_change"].rule == "instance-rubrics-1666-keyerror-fixed"  # the KeyError fixed
    assert {c.rule for c in row(explained, "legacy:InstanceRubrics").changes[0]} == {"rubric-classes-1666-renamed"}
    # every change of the rename is explained: no finding
    found = [f for f in matrix_findings(explained) if "Rubric" in f.target]
    assert found == []


def test_a_rename_the_other_way_names_the_sample_earlier_name():
    before = Cell("value", 4.0, classification="identical", prompts=1)
    after = Cell("error", error_type="KeyError", error_message="'rubrics'", classification="error", prompts=0,
                 fields_renamed=(("rubrics", "rubric"),))
    [dropped] = [c for c in causes_between(before, after, "0.2.6", "0.2.5") if c.kind == "field_dropped"]
    assert dropped.text.startswith("SingleTurnSample of 0.2.5 has no field 'rubrics': it declares 'rubric'")


# ---------------------------------------------------------------- end to end: the cached 0.2.3, 0.2.5, 0.2.6

@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_matrix_over_the_rename_shows_field_dropped_and_scores_the_early_rubric_scores():
    from ragas_compat.tools.matrix.environments import default_cache_dir, ensure_environments, parse_entries

    cache = Path(os.environ.get("RAGAS_COMPAT_MATRIX_CACHE") or default_cache_dir())
    envs = ensure_environments(parse_entries("0.2.3,0.2.5,0.2.6"), cache_dir=cache, jobs=1)
    assert all(e.available for e in envs), [e.error for e in envs]
    full = load_default_suite()
    suite = Suite(full.name, full.source, tuple(full.case(c) for c in CASES))
    columns, _ = run_matrix(envs, suite, jobs=2)
    assert [c.available for c in columns] == [True, True, True], [c.error for c in columns]
    matrix = build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": len(CASES)})

    for target in OLD_INSTANCE:  # KeyError: 'rubrics' in 0.2.5 whatever the case gives; fixed by the rename
        for case_id in CASES:
            r = next(r for r in matrix.rows if (r.case_id, r.target) == (case_id, target))
            for cell in r.cells[:2]:
                assert (cell.error_type, cell.error_message) == ("KeyError", "'rubrics'")
                assert cell.fields_renamed == (("rubrics", "rubric"),)
            assert r.cells[2].text == "missing class"
            rules = {c.kind: c.rule for c in r.changes[1]}
            assert rules["class_renamed"] == "rubric-classes-1666-renamed"
            assert rules["field_dropped"] == "sample-rubric-1666-renamed-rubrics"
            assert rules["upstream_change"] == "instance-rubrics-1666-keyerror-fixed", rules  # the KeyError fixed
    for column in (0, 1):  # 0.2.3 (contexts dropped by the column filter), 0.2.5 (folded into the question)
        values = {(r.case_id, r.target): r.cells[column].value for r in matrix.rows}
        for target in OLD_RUBRICS:  # the judge answers their dialect: each returns the frozen score as given
            assert values[("criteria-unanimous", target)] == 4.0
            assert values[("criteria-empty-inputs", target)] == 1.0
            assert values[("rubric-out-of-scale", target)] == 7.0
    dropped = [d for d in matrix.drifts if d.kind == "field_dropped"]
    assert [(d.before, d.after, len(d.rows), d.rule) for d in dropped] == [
        ("0.2.5", "0.2.6", 6, "sample-rubric-1666-renamed-rubrics")]
    print(json.dumps([[d.before, d.after, d.kind, d.text, len(d.rows), d.rule] for d in matrix.drifts
                      if d.before == "0.2.5"], indent=1))
