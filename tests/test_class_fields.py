"""Classes that read fewer of the case's fields than their metric (issue 38): ``RagasTargets.class_fields``.

Ragas 0.2.0-0.2.5's RubricsScoreWithoutReference / InstanceRubricsScoreWithoutReference never read the
sample's ``reference``; 0.2.2-0.2.5's column filter drops it. While every target of a metric read the metric's
``fields_read``, the probe passed and recorded the case's reference for them, the host saw it arrive as None
and labelled the rows ``coercion`` (the harness's own mislabel: Ragas scored the inputs the class reads as the
case gave them), and the rename to RubricsScore showed an unexplained ``coercion -> identical``. The registry
now declares what those classes read, the probe receives it as the target's ``fields_read`` (data), and
neither passes nor records a field outside it. A field the class does read and Ragas drops (0.2.2-0.2.3's
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
from ragas_compat.probe.targets import Target

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
        for name, fields in spec.ragas.class_fields:
            declared += 1
            assert name in classes, (spec.name, name)
            assert set(fields) < set(spec.fields_read), (spec.name, name, fields)
            assert len(set(fields)) == len(fields)
    assert declared >= 2


def test_fields_of_falls_back_to_the_metric_fields():
    targets = RagasTargets(("A", "B"), ("A",), class_fields=(("legacy:A", ("user_input",)),))
    metric_fields = ("user_input", "reference")
    assert targets.fields_of("legacy", "A", metric_fields) == ("user_input",)
    assert targets.fields_of("legacy", "B", metric_fields) == metric_fields
    assert targets.fields_of("collections", "A", metric_fields) == metric_fields  # the API is named


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
    # at the rename the old reference-free class and its successor are both identical: no classification change
    for drift in matrix.drifts:
        if drift.kind == "classification_changed" and (drift.before, drift.after) == ("0.2.5", "0.2.6"):
            assert not {target for _, target in drift.rows} & set(REFERENCE_FREE), drift
