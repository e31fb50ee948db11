"""A user's DiscreteMetric and RankingMetric (Ragas's generic builders): values that are not numbers, a label and a
ranking. The reference on frozen judge values, their encoding (probe protocol, report.json) apart from floats, NaN,
undefined and errors, their exact comparison (a label is never compared as a number, a ranking never as a set), and
the bundled dm-* / rm-* cases through the real probe."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.registry import metric, probe_targets
from ragas_compat.probe import protocol
from ragas_compat.report.json_report import keyed_rows
from ragas_compat.values import Label, RagasError, Ranking, decode_ragas_value, encode_ragas_value
from ragas_compat.vocabulary import Classification


def _case(key, value, targets=None):
    raw = {"id": "g", "category": "edge", "user_input": "q", "reference": "", "response": "r",
           "retrieved_contexts": ["a", "b"], "verdicts": {key: [{"value": value}]}}
    if targets:
        raw["targets"] = targets
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t").cases[0]


def _reference(value) -> ReferenceOutcome:
    return ReferenceOutcome("m", value, None, None, {}, {}, "none")


# --------------------------------------------------------------------------- the references

def test_a_label_in_allowed_values_is_the_reference_exactly():
    assert metric("discrete_metric").outcome(_case("discrete_metric", "pass")).value == Label("pass")
    assert metric("discrete_metric").outcome(_case("discrete_metric", "fail")).value == Label("fail")


@pytest.mark.parametrize("value", ["PASS", " pass", "pass ", "maybe", "", 1, True, None, ["pass"]])
def test_any_other_value_is_refused_case_sensitively(value):
    out = metric("discrete_metric").outcome(_case("discrete_metric", value))
    assert out.value is None and out.refused and out.details["error_reason"] == "value_not_allowed"
    assert not out.alternatives  # nothing is coerced: Ragas's Literal refuses it too


def test_a_configured_discrete_metric_takes_its_own_labels():
    configured = metric("discrete_metric").configured(
        "legacy", "DiscreteMetric", (("name", "q"), ("prompt", "{response}"), ("allowed_values", ("good", "poor"))))
    assert configured.outcome(_case("discrete_metric", "good")).value == Label("good")
    assert configured.outcome(_case("discrete_metric", "pass")).refused


def test_a_ranking_is_the_list_as_given_in_its_order():
    assert metric("ranking_metric").outcome(_case("ranking_metric", ["2", "1"])).value == Ranking(("2", "1"))
    assert metric("ranking_metric").outcome(_case("ranking_metric", ["1", "2"])).value == Ranking(("1", "2"))


@pytest.mark.parametrize(("value", "reason"), [
    (["1"], "ranking_wrong_length"), (["2", "1", "3"], "ranking_wrong_length"), ([], "ranking_wrong_length"),
    ("2,1", "value_not_a_ranking"), ([2, 1], "value_not_a_ranking"), (["1", 2], "value_not_a_ranking"),
    (None, "value_not_a_ranking")])
def test_a_ranking_of_another_length_or_not_a_list_of_strings_is_refused_and_named(value, reason):
    out = metric("ranking_metric").outcome(_case("ranking_metric", value))
    assert out.value is None and out.refused and out.details["error_reason"] == reason


def test_a_configured_ranking_length_is_the_reference_s():
    configured = metric("ranking_metric").configured(
        "legacy", "RankingMetric", (("name", "k"), ("prompt", "{user_input}"), ("allowed_values", 3)))
    assert configured.outcome(_case("ranking_metric", ["b", "c", "a"])).value == Ranking(("b", "c", "a"))
    assert configured.outcome(_case("ranking_metric", ["b", "c"])).details["error_reason"] == "ranking_wrong_length"


# --------------------------------------------------------------------------- encoding

def test_labels_and_rankings_are_encoded_apart_from_floats_nan_undefined_and_errors():
    assert protocol.encode_score("pass", protocol.VALUE_LABEL) == {"label": "pass"}
    assert protocol.encode_score(["2", "1"], protocol.VALUE_RANKING) == {"ranking": ["2", "1"]}
    # the string "NaN" is a label here, never the float NaN
    assert decode_ragas_value(protocol.encode_score("NaN", protocol.VALUE_LABEL)) == Label("NaN")
    for value in (Label("pass"), Label("NaN"), Label(""), Ranking(("2", "1")), Ranking(())):
        encoded = encode_ragas_value(value)
        assert decode_ragas_value(json.loads(json.dumps(encoded))) == value
        assert encoded not in (None, "NaN") and "error" not in encoded
    assert decode_ragas_value("NaN") != decode_ragas_value({"label": "NaN"})


def test_only_a_target_that_declares_the_kind_returns_it():
    assert protocol.encode_score("pass")["error"]["type"] == "UnexpectedScoreType"  # a number target
    assert protocol.encode_score(["a"], protocol.VALUE_LABEL)["error"]["type"] == "UnexpectedScoreType"
    assert protocol.encode_score("a", protocol.VALUE_RANKING)["error"]["type"] == "UnexpectedScoreType"
    assert protocol.encode_score([1], protocol.VALUE_RANKING)["error"]["type"] == "UnexpectedScoreType"
    for malformed in ({"label": 1}, {"ranking": "a"}, {"ranking": [1]}, {"label": "a", "extra": 1}):
        decoded = decode_ragas_value(malformed)
        assert isinstance(decoded, RagasError) and decoded.type == "ProbeFormatError" and decoded.raised_by_harness


def test_the_registry_declares_the_kinds_and_the_probe_checks_them():
    targets = probe_targets()
    assert targets["legacy:DiscreteMetric"]["value_kind"] == "label"
    assert targets["legacy:RankingMetric"]["value_kind"] == "ranking"
    assert "value_kind" not in targets["legacy:NumericMetric"]
    assert protocol.target_problem(targets["legacy:DiscreteMetric"]) is None
    assert "value_kind" in protocol.target_problem({**targets["legacy:DiscreteMetric"], "value_kind": "set"})


# --------------------------------------------------------------------------- exact comparison

def test_the_same_label_or_the_same_list_in_the_same_order_is_identical():
    assert classify(Label("pass"), _reference(Label("pass"))).name is Classification.IDENTICAL
    assert classify(Ranking(("2", "1")), _reference(Ranking(("2", "1")))).name is Classification.IDENTICAL


@pytest.mark.parametrize(("ragas", "reference", "says"), [
    (Label("PASS"), Label("pass"), "case"),                      # a label is compared case-sensitively
    (Label("fail"), Label("pass"), "another value"),
    (Ranking(("1", "2")), Ranking(("2", "1")), "order"),         # a ranking is compared in order, not as a set
    (Ranking(("a", "a", "b")), Ranking(("a", "b", "b")), "another value"),
    (Ranking(("1",)), Ranking(("1", "2")), "1 items"),
    (Label("1"), Fraction(1), "different kinds"),                # a label is never compared as a number
    (1.0, Label("1"), "different kinds"),
    (Label("2"), Ranking(("2",)), "different kinds"),
    (Ranking(("1", "2")), Fraction(1), "different kinds"),
])
def test_anything_else_is_a_divergence_never_rounding(ragas, reference, says):
    diagnosis = classify(ragas, _reference(reference))
    assert diagnosis.name is Classification.DIVERGENCE and says in diagnosis.explanation


def test_a_label_where_the_reference_refuses_or_is_undefined_is_a_divergence():
    refused = ReferenceOutcome("m", None, None, "not one of allowed_values", {"coercion": 1.0}, {}, "none")
    assert classify(Ranking(("1",)), refused).name is Classification.DIVERGENCE
    assert classify(Label("pass"), ReferenceOutcome("m", None, "no_x", None, {}, {}, "none")).name \
        is Classification.DIVERGENCE
    assert classify(RagasError("ValidationError", "x"), refused).name is Classification.ERROR


def test_the_report_keeps_the_value_and_its_repr():
    from ragas_compat.report.json_report import reference_value_json
    from ragas_compat.report.text import reference_texts

    class Row:
        reference = _reference(Ranking(("2", "1")))

    assert reference_value_json(Row.reference) == {"ranking": ["2", "1"]}
    assert reference_texts(Row) == ("['2', '1']", "—")
    assert repr(Label("pass")) == "'pass'" and repr(Ranking(("2", "1"))) == "['2', '1']"


# --------------------------------------------------------------------------- through the real probe

@pytest.mark.slow
def test_bundled_discrete_and_ranking_cases_through_the_real_probe(tmp_path):
    import jsonschema
    from typer.testing import CliRunner

    from ragas_compat.cli import app
    from ragas_compat.resources import REPORT_SCHEMA, package_text

    suite = {"schema_version": 1, "suite": "dr", "cases": [
        case.raw for case in load_default_suite().cases if case.id.startswith(("dm-", "rm-"))]}
    assert len(suite["cases"]) >= 8
    cases = tmp_path / "dr.json"
    cases.write_text(json.dumps(suite))
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(out), "--metric", "discrete_metric",
                                      "--metric", "ranking_metric", "--workers", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    jsonschema.validate(report, json.loads(package_text(REPORT_SCHEMA)))
    rows = {key.split("|")[0]: row for key, row in keyed_rows(report["results"]).items()}
    assert not [key for key, row in rows.items() if row["unexpected"]]
    assert rows["dm-in-range"]["ragas_value"] == {"label": "pass"} and rows["dm-in-range"]["ragas_repr"] == "'pass'"
    assert rows["dm-in-range"]["classification"] == "identical"
    for refused in ("dm-out-of-range", "dm-case-mismatch"):
        assert rows[refused]["ragas_value"]["error"]["type"] == "ValidationError"
        assert rows[refused]["explained_by"].startswith("rule discrete-metric-value-not-allowed")
    assert rows["dm-configured-labels"]["ragas_value"] == {"label": "good"}
    assert rows["rm-reordered"]["ragas_value"] == {"ranking": ["2", "1"]}
    assert rows["rm-reordered"]["classification"] == "identical"
    assert rows["rm-shorter"]["ragas_value"] == {"ranking": ["1"]} and rows["rm-shorter"]["classification"] == "divergence"
    assert rows["rm-longer"]["explained_by"].startswith("rule ranking-metric-length-unchecked")
    assert rows["rm-not-a-list"]["classification"] == "error"
    assert rows["rm-configured-length"]["ragas_value"] == {"ranking": ["b", "c", "a"]}
    references = report["references"]
    assert references["rm-reordered"]["ranking_metric"]["reference_value"] == {"ranking": ["2", "1"]}
    assert references["dm-in-range"]["discrete_metric"]["reference_exact"] is None


def test_matrix_cells_and_replays_compare_labels_and_rankings_exactly():
    from ragas_compat.compare.replay import same_value
    from ragas_compat.tools.matrix.drift import Cell, causes_between
    from ragas_compat.tools.matrix.report import exact_text
    from ragas_compat.values import encode_float

    assert Cell("value", Label("pass")).text == "'pass'" and Cell("value", Ranking(("2", "1"))).text == "['2', '1']"
    assert causes_between(Cell("value", Label("pass")), Cell("value", Label("pass")), "x", "y") == ()
    changed = causes_between(Cell("value", Ranking(("1", "2"))), Cell("value", Ranking(("2", "1"))), "x", "y")
    assert changed and changed[0].kind == "value_changed"
    assert causes_between(Cell("value", Label("1")), Cell("value", 1.0), "x", "y")[0].kind == "value_changed"
    assert exact_text(Label("pass")) == "'pass'" and encode_float(Label("pass")) == {"label": "pass"}
    assert same_value(Label("pass"), Label("pass")) and not same_value(Label("PASS"), Label("pass"))
    assert not same_value(Ranking(("1", "2")), Ranking(("2", "1"))) and not same_value(Label("1"), 1.0)
