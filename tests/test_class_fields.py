"""Classes that read fewer of the case's fields than their metric (issue 38): ``RagasTargets.class_fields``.

Ragas 0.2.0-0.2.5's RubricsScoreWithoutReference / InstanceRubricsScoreWithoutReference never read the
sample's ``reference``; 0.2.2-0.2.5's column filter drops it. While every target of a metric read the metric's
``fields_read``, the probe passed and recorded the case's reference for them, the host saw it arrive as None
and labelled the rows ``coercion`` (the harness's own mislabel: Ragas scored the inputs the class reads as the
case gave them), and the rename to RubricsScore showed an unexplained ``coercion -> identical``. The registry
now declares what those classes read, the probe receives it as the target's ``fields_read`` (data), and
neither passes nor records a field outside it. Legacy AspectCritic, whose single-turn score reads the reference
from 0.2.6 on only, is declared the same way below that release (``fields_read_before``). A field the class does read and Ragas drops (0.2.2-0.2.3's
filter drops ``retrieved_contexts``, which the classes read with ``row.get``) stays ``coercion``.

The end-to-end test (``matrix_e2e``, slow) runs the matrix over the cached 0.2.3, 0.2.5 and 0.2.6 environments.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.metrics.registry import all_metrics, metric, probe_targets
from ragas_compat.metrics.spec import RagasTargets, target_name
from ragas_compat.probe.protocol import target_problem
from ragas_compat.probe.targets import Target, release_number

CASES = ("criteria-unanimous", "criteria-empty-inputs", "rubric-out-of-scale")
REFERENCE_FREE = ("legacy:RubricsScoreWithoutReference", "legacy:InstanceRubricsScoreWithoutReference")


def all_specs():
    return [spec for spec in all_metrics() if spec.ragas is not None]


def test_the_reference_free_rubric_classes_are_sent_without_the_reference():
    sent = probe_targets()
    assert sent["legacy:RubricsScoreWithoutReference"]["fields_read"] == ["user_input", "response",
                                                                          "retrieved_contexts"]
    assert sent["legacy:InstanceRubricsScoreWithoutReference"]["fields_read"] == [
        "user_input", "response", "retrieved_contexts", "rubrics"]
    for name in REFERENCE_FREE:
        assert target_problem(sent[name]) is None
        assert Target.from_spec(sent[name]).fields_read == tuple(sent[name]["fields_read"])
    # the other targets of the same metrics read the metric's fields, the reference among them
    for name in ("legacy:RubricsScoreWithReference", "legacy:RubricsScore", "collections:DomainSpecificRubrics"):
        assert sent[name]["fields_read"] == list(metric("rubrics_score").fields_read)
        assert "reference" in sent[name]["fields_read"]
    for name in ("legacy:InstanceRubricsWithReference", "legacy:InstanceRubrics"):
        assert sent[name]["fields_read"] == list(metric("instance_rubrics").fields_read)


def test_class_fields_name_a_target_of_the_metric_and_read_fewer_of_its_fields():
    declared = 0
    for spec in all_specs():
        classes = {target_name(api, c) for api, classes in (("legacy", spec.ragas.legacy),
                                                             ("collections", spec.ragas.collections))
                   for c in classes}
        for name, fields, until in spec.ragas.class_fields:
            declared += 1
            assert name in classes, (spec.name, name)
            assert set(fields) < set(spec.fields_read), (spec.name, name, fields)
            assert len(set(fields)) == len(fields)
            assert until == "" or release_number(until) is not None
    assert declared >= 5  # the two reference-free rubric classes, AspectCritic at strictness 1, 2, 3


def test_aspect_critic_reads_no_reference_below_0_2_6():
    sent = probe_targets()
    for name in ("legacy:AspectCritic", "legacy:AspectCritic[strictness=3]"):
        assert target_problem(sent[name]) is None
        assert sent[name]["fields_read"] == list(metric("aspect_critic").fields_read)  # 0.2.6 on: the reference too
        assert sent[name]["fields_read_before"] == ["0.2.6", ["user_input", "response", "retrieved_contexts"]]
        target = Target.from_spec(sent[name])
        for version in ("0.1.21", "0.2.2", "0.2.5"):
            assert target.for_release(version).fields_read == ("user_input", "response", "retrieved_contexts")
        for version in ("0.2.6", "0.4.3", None, "unknown"):  # at and after the release, or no release number
            assert target.for_release(version) == target
    assert "fields_read_before" not in sent["legacy:SimpleCriteriaScore"]  # it reads the reference in 0.2.x
    plain = Target.from_spec(sent["legacy:RubricsScore"])
    assert plain.for_release("0.2.0") is plain


@pytest.mark.parametrize("value", [["0.2.6"], "0.2.6", [6, ["user_input"]], ["0.2.6", "user_input"],
                                   ["0.2.6", [1]]])
def test_a_malformed_fields_read_before_is_refused(value):
    raw = {**probe_targets()["legacy:AspectCritic"], "fields_read_before": value}
    assert "fields_read_before" in (target_problem(raw) or "")


def test_fields_of_falls_back_to_the_metric_fields():
    targets = RagasTargets(("A", "B", "C"), ("A",), class_fields=(("legacy:A", ("user_input",), ""),
                                                                   ("legacy:C", ("response",), "0.2.6")))
    metric_fields = ("user_input", "response", "reference")
    assert targets.fields_of("legacy", "A", metric_fields) == ("user_input",)
    assert targets.fields_of("legacy", "B", metric_fields) == metric_fields
    assert targets.fields_of("collections", "A", metric_fields) == metric_fields  # the API is named
    assert targets.fields_of("legacy", "C", metric_fields) == metric_fields  # narrower in earlier releases only
    assert targets.fields_before("legacy", "C") == ("0.2.6", ("response",))
    assert targets.fields_before("legacy", "A") is None and targets.fields_before("legacy", "B") is None


# ---------------------------------------------------------------- end to end: the cached 0.2.3, 0.2.5, 0.2.6

@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_the_matrix_shows_no_coercion_for_a_reference_the_class_never_reads():
    from ragas_compat.tools.matrix.drift import build_matrix
    from ragas_compat.tools.matrix.environments import default_cache_dir, ensure_environments, parse_entries
    from ragas_compat.tools.matrix.run import run_matrix

    cache = Path(os.environ.get("RAGAS_COMPAT_MATRIX_CACHE") or default_cache_dir())
    envs = ensure_environments(parse_entries("0.2.3,0.2.5,0.2.6"), cache_dir=cache, jobs=1)
    assert all(e.available for e in envs), [e.error for e in envs]
    full = load_default_suite()
    suite = Suite(full.name, full.source, tuple(full.case(c) for c in CASES))
    columns, _ = run_matrix(envs, suite, jobs=1)
    assert [c.available for c in columns] == [True, True, True], [c.error for c in columns]
    matrix = build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": len(CASES)})
    rows = {(r.case_id, r.target): r for r in matrix.rows}

    for case_id, value in (("criteria-unanimous", 4.0), ("criteria-empty-inputs", 1.0)):
        without = rows[(case_id, "legacy:RubricsScoreWithoutReference")].cells
        with_reference = rows[(case_id, "legacy:RubricsScoreWithReference")].cells
        # 0.2.5: the reference is dropped by the column filter but never read: identical, as the class with it
        assert (without[1].value, without[1].classification) == (value, "identical")
        assert with_reference[1].classification == "identical"
        # 0.2.3: the filter also drops the retrieved contexts, which both classes read: coercion, honestly
        assert without[0].classification == with_reference[0].classification == "coercion"
        critic = rows[(case_id, "legacy:AspectCritic")].cells  # reads the reference from 0.2.6 only
        assert [c.classification for c in critic] == ["coercion", "identical", "identical"]
        assert "reference" not in critic[1].received and critic[2].received["reference"] is not None
    # at the rename the old reference-free class, its successor and AspectCritic are identical: no change
    assert not [d for d in matrix.drifts
                if d.kind == "classification_changed" and (d.before, d.after) == ("0.2.5", "0.2.6")]
