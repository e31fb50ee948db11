"""A user's NumericMetric (Ragas's generic builder): the reference on frozen judge values, the probe's llm_per_call
target kind, and the bundled nm-* cases (the built-in configuration and a case's own) through the real probe."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.metrics.registry import metric, probe_targets


def _case(value, targets=None):
    raw = {"id": "n", "category": "edge", "user_input": "q", "reference": "", "response": "r",
           "retrieved_contexts": [], "verdicts": {"numeric_metric": [{"value": value}]}}
    if targets:
        raw["targets"] = targets
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t").cases[0]


@pytest.mark.parametrize(("given", "exact"), [(0, 0), (1, 1), (0.1, Fraction(1, 10)), (0.75, Fraction(3, 4))])
def test_a_value_within_allowed_values_is_the_reference_exactly(given, exact):
    assert metric("numeric_metric").outcome(_case(given)).value == exact


def test_a_value_outside_allowed_values_or_not_a_number_is_refused_and_named():
    out = metric("numeric_metric").outcome(_case(7))
    assert out.value is None and out.details["error_reason"] == "value_out_of_range" and not out.alternatives
    text = metric("numeric_metric").outcome(_case("0.25"))
    assert text.details["error_reason"] == "value_not_a_number" and text.alternatives == {"coercion": 0.25}
    assert metric("numeric_metric").outcome(_case("high")).alternatives == {}


def test_a_configured_range_is_the_reference_s():
    configured = metric("numeric_metric").configured(
        "legacy", "NumericMetric", (("name", "h"), ("prompt", "{response}"), ("allowed_values", (1, 10))))
    assert configured.outcome(_case(8)).value == 8
    assert configured.outcome(_case(0.5)).refused


def test_the_target_is_scored_with_its_llm_per_call_and_kept_out_of_evaluate():
    from ragas_compat.probe.evaluate import metric_sets
    from ragas_compat.probe.targets import Target

    spec = probe_targets()["legacy:NumericMetric"]
    assert spec["llm_per_call"] is True
    target = Target.from_spec(spec)
    assert target.llm_per_call and target.options["allowed_values"] == (0.0, 1.0)
    assert not any(t.name == target.name for _, group in metric_sets([target]) for t in group)


@pytest.mark.slow
def test_bundled_numeric_metric_cases_through_the_real_probe(tmp_path):
    from typer.testing import CliRunner

    from ragas_compat.cli import app

    suite = {"schema_version": 1, "suite": "nm", "cases": [
        case.raw for case in load_default_suite().cases if case.id.startswith("nm-")]}
    cases = tmp_path / "nm.json"
    cases.write_text(json.dumps(suite))
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(out), "--metric", "numeric_metric",
                                      "--workers", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    rows = {key: dict(zip(report["results"]["columns"], row, strict=True))
            for key, row in report["results"]["data"].items()}
    assert not [key for key, row in rows.items() if row["unexpected"]]
    assert rows["nm-in-range|legacy:NumericMetric"]["ragas_value"] == 0.8
    assert rows["nm-out-of-range|legacy:NumericMetric"]["ragas_value"] == 7.0
    assert rows["nm-out-of-range|legacy:NumericMetric"]["classification"] == "divergence"
    assert rows["nm-numeric-string|legacy:NumericMetric"]["classification"] == "coercion"
    (configured,) = [key for key in rows if key.startswith("nm-configured-scale|legacy:NumericMetric[name=helpfulness")]
    assert rows[configured]["ragas_value"] == 8.0 and rows[configured]["classification"] == "identical"
