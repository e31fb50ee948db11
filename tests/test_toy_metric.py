"""Adding a metric is one module: a toy metric, registered at run time, flows through fuzz,
explain and the report with no other code touched.

The toy is "context precision as Ragas computes it": Ragas's own float formula
(numerator / (hits + 1e-10), labels coerced by truthiness) over the with-reference labels. It is
compared with the real ``LLMContextPrecisionWithReference`` class through the real probe, so a
correct registration gives ``identical`` rows everywhere.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import Expectations
from ragas_compat.metrics import registry
from ragas_compat.metrics.context_precision import ragas_float_average_precision
from ragas_compat.metrics.labels import coerce_by_truthiness
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, MetricSpec, Quantity, RagasTargets, Verdicts
from ragas_compat.report.json_report import audit_to_json
from ragas_compat.report.markdown.document import render_markdown
from ragas_compat.runner import run_probe
from ragas_compat.tools.explain import explain, explain_names
from ragas_compat.tools.fuzz.generator import check_metrics, generate_case, targets_for
from ragas_compat.tools.fuzz.runner import run_fuzz

TOY = "toy_ragas_float_ap"
KEY = "context_precision_with_reference"
# a class a built-in metric runs too: the probe scores it once, and both metrics are compared with it
TOY_TARGETS = RagasTargets(("LLMContextPrecisionWithReference",), (), "ragas.metrics._context_precision",
                           judge="context_precision_with_reference")
TARGET = TOY_TARGETS.ids()


def _toy_outcome(case) -> ReferenceOutcome:
    labels = coerce_by_truthiness(case.verdicts[KEY])
    value = ragas_float_average_precision(labels)
    return ReferenceOutcome(TOY, Fraction(value), None, None, {}, {"labels": labels}, "hits + 1e-10")


TOY_SPEC = MetricSpec(
    name=TOY,
    reference_on=f"verdicts.{KEY}",
    ragas=TOY_TARGETS,
    fields_read=("user_input", "retrieved_contexts", "reference"),
    denominator="relevant retrieved contexts + 1e-10",
    undefined_policy="never undefined: 0.0 when nothing relevant is retrieved (the toy copies Ragas)",
    compute=_toy_outcome,
    requires=(f"verdicts.{KEY}",),
    verdicts=Verdicts(KEY, "labels"),
    fuzz_inputs=lambda draw: {"verdicts": {KEY: draw.ranked_labels}},
    explain=ExplainAdapter(
        command="toy-ap", takes="labels", inputs_help="LABELS", targets=TARGET,
        case_inputs=lambda given: {"retrieved_contexts": [f"toy context {i}" for i in range(len(given.labels))],
                                   "verdicts": {KEY: list(given.labels)}},
        quantities=lambda reference, given: ([Quantity("toy AP", reference.value)], ["toy AP = Ragas's float"])),
)


@pytest.fixture
def toy():
    registry.register(TOY_SPEC)
    try:
        yield TOY_SPEC
    finally:
        registry.unregister(TOY)


def test_registration_is_visible_to_every_consumer_and_undone(toy):
    assert registry.metric(TOY) is toy
    assert toy in registry.metrics_for_target("legacy:LLMContextPrecisionWithReference")
    assert TOY in check_metrics([TOY]) and targets_for([TOY]) == list(TARGET)
    assert TOY in explain_names()  # registry names; "toy-ap" is accepted with a hint
    with pytest.raises(ValueError, match="already registered"):
        registry.register(TOY_SPEC)


def test_unregistered_afterwards():
    assert TOY not in registry.metric_names()


@pytest.mark.slow
def test_fuzz_generates_inputs_for_it_and_scores_it_through_ragas(toy):
    case = generate_case(7, 3, [TOY])
    assert set(case["verdicts"]) == {KEY}
    run = run_fuzz(12, 7, [TOY], workers=1)
    assert {row.spec.name for row in run.rows} == {TOY}
    assert len(run.rows) == 12
    assert {row.classification.name for row in run.rows} == {"identical"}, [
        (row.case.id, row.classification.explanation) for row in run.rows if row.classification.name != "identical"]


@pytest.mark.slow
def test_explain_uses_its_adapter_and_runs_the_real_class(toy):
    explanation = explain("toy-ap", labels="1,0,1")
    assert [q.name for q in explanation.quantities] == ["toy AP"]
    assert explanation.formulas == ("toy AP = Ragas's float",)
    [row] = explanation.rows
    assert row.target == "legacy:LLMContextPrecisionWithReference"
    assert row.value == 0.8333333332916666 and row.classification.name == "identical"


@pytest.mark.slow
def test_the_report_has_its_rows_next_to_the_metric_that_shares_the_class(toy):
    suite = load_default_suite()
    cases = [case for case in suite.cases if case.id in ("cp-worked-example", "edge-all-zero-labels")]
    probe = run_probe([case.raw for case in cases], targets=list(TARGET))
    assert probe.ok, probe.error
    from ragas_compat.cases.model import Suite

    audit = build_audit(Suite("toy", "toy", tuple(cases)), probe.output, Expectations("toy", ()), {})
    metrics_with_rows = {row.spec.name for row in audit.rows}
    assert metrics_with_rows == {TOY, KEY}
    toy_rows = [row for row in audit.rows if row.spec.name == TOY]
    assert [row.classification.name for row in toy_rows] == ["identical", "identical"]
    document = audit_to_json(audit)
    assert TOY in {entry["metric"] for entry in document["metrics"]}
    assert document["summary"]["by_metric"][TOY]["identical"] == 2
    assert f"`{TOY}`" in render_markdown(audit) or TOY in render_markdown(audit)


# -- the README's recipe, step by step, for a Ragas class no built-in metric declares ----------------
NEW_CLASS = "legacy:ToySemanticSimilarity"  # a subclass of Ragas's SemanticSimilarity no metric declares
TOY_MODULE_DIR = str(Path(__file__).resolve().parent / "data" / "toy_ragas_module")  # on the probe's path
SEMANTIC = registry.metric("semantic_similarity")
# step 1: the MetricSpec, its Ragas target declared once (no judge: step 3 needs nothing)
NEW_SPEC = MetricSpec(
    name="toy_answer_similarity",
    reference_on="cosine of the frozen embeddings of reference and response (semantic_similarity's reference)",
    ragas=RagasTargets(("ToySemanticSimilarity",), (), "toy_similarity", embeddings=True),
    fields_read=SEMANTIC.fields_read,
    denominator=SEMANTIC.denominator,
    undefined_policy=SEMANTIC.undefined_policy,
    compute=SEMANTIC.compute,
    requires=SEMANTIC.requires,
)


@pytest.fixture
def new_metric():
    registry.register(NEW_SPEC)  # step 2
    try:
        yield NEW_SPEC
    finally:
        registry.unregister(NEW_SPEC.name)


def test_a_new_ragas_class_declared_only_in_its_spec_is_sent_to_the_probe_and_scored(new_metric):
    from ragas_compat.runner import request_targets

    assert new_metric.ragas_targets == (NEW_CLASS,)
    [sent] = [t for t in request_targets() if t["ragas_class"] == "ToySemanticSimilarity"]
    assert (sent["metric"], sent["module"], sent["embeddings"], sent["judge"]) == (
        new_metric.name, "toy_similarity", True, None)
    # step 4's data: the bundled cases with frozen embeddings
    # (a case configuring SemanticSimilarity itself replaces the built-in target compared with here)
    cases = [case for case in load_default_suite().cases if new_metric.applies_to(case) and not case.targets]
    assert len(cases) >= 3
    probe = run_probe([case.raw for case in cases], targets=[NEW_CLASS, "legacy:SemanticSimilarity"],
                      sys_path_prefix=[TOY_MODULE_DIR])
    assert probe.ok, probe.error
    values = {(r["case_id"], r["target"]): r["value"] for r in probe.output["results"]}
    for case in cases:  # the subclass computes what its parent class computes
        assert values[(case.id, NEW_CLASS)] == values[(case.id, "legacy:SemanticSimilarity")], case.id
    from ragas_compat.cases.model import Suite

    audit = build_audit(Suite("toy", "toy", tuple(cases)), probe.output, Expectations("toy", ()), {})
    by_case = {(row.case.id, row.spec.name): row.classification.name for row in audit.rows}
    assert {name for _, name in by_case} == {new_metric.name, SEMANTIC.name}
    for case in cases:
        assert by_case[(case.id, new_metric.name)] == by_case[(case.id, SEMANTIC.name)], case.id


def test_the_new_class_is_not_sent_once_its_metric_is_unregistered():
    from ragas_compat.runner import request_targets

    assert "ToySemanticSimilarity" not in {t["ragas_class"] for t in request_targets()}
