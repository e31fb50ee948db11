"""`ragas-compat explain` through the CLI (typer CliRunner). Three tests run the probe (~3-6 s
each): the worked context-precision example, IDs 1 vs "1", and empty faithfulness labels."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from ragas_compat.cli.explain import register
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.explain import explain_names, parse_id_list, parse_labels

app = typer.Typer()


@app.callback()
def _root() -> None:
    """A group, so `explain` stays a subcommand as in the real CLI."""


register(app)
runner = CliRunner()
WIDE = {"COLUMNS": "200"}


def invoke(*args: str):
    return runner.invoke(app, ["explain", *args], env=WIDE)


@pytest.mark.slow
def test_context_precision_worked_example_shows_ragas_beside_exact_values():
    result = invoke("context-precision", "1,0,1", "--corpus-relevant", "4")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "vs reference 5/6 = 0.8333333333333334" in out
    lines = out.splitlines()
    for cls, api in (("LLMContextPrecisionWithReference", "legacy"), ("ContextPrecision", "legacy"),
                     ("ContextPrecisionWithReference", "collections"), ("ContextPrecision", "collections")):
        index = next(i for i, line in enumerate(lines) if line.split()[:1] == [cls] and lines[i + 1].split() == [api])
        assert "0.8333333332916666" in lines[index] and "epsilon" in lines[index]
    assert "Ragas divides by (hits + 1e-10)" in out
    quantities = {name: line for line in lines for name in ("P@3", "corpus AP", "recall@3")
                  if line.strip().startswith(name + " ")}
    assert "2/3" in quantities["P@3"]
    assert "5/12" in quantities["corpus AP"]
    assert "1/2" in quantities["recall@3"]
    assert "AP (Ragas) = (1/1·1 + 2/3·1) / (2 + 1e-10) = 0.8333333332916666" in out
    assert "AP (exact) = 5/3 / 2 = 5/6" in out
    assert "corpus AP = 5/3 / R = 5/3 / 4 = 5/12" in out


@pytest.mark.slow
def test_id_lists_keep_int_and_string_ids_apart():
    result = invoke("id_context_precision", "--retrieved", '[1, "1"]', "--reference", '["1"]', "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["inputs"]["retrieved_context_ids"] == [1, "1"]
    (row,) = doc["rows"]
    assert row["target"] == "legacy:IDBasedContextPrecision"
    assert row["received"]["retrieved_context_ids"] == [1, "1"]
    assert row["ragas_value"] == 1.0
    assert row["classification"] == "dedup"
    assert doc["reference"]["value"] == "1/2"  # only the string "1" matches on the lists as given
    assert doc["reference"]["alternatives"]["dedup"] == "1"


def _no_bare_constants(name: str):
    raise AssertionError(f"bare {name} in --json output")


@pytest.mark.slow
def test_empty_faithfulness_labels_are_undefined_nan_in_report_encoding():
    result = invoke("faithfulness", "", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output, parse_constant=_no_bare_constants)  # strict JSON: no bare NaN
    assert [row["target"] for row in doc["rows"]] == ["legacy:Faithfulness", "collections:Faithfulness"]
    for row in doc["rows"]:  # every target of the metric, legacy and collections
        assert row["ragas_value"] == "NaN"
        assert row["classification"] == "undefined_nan"
    assert doc["reference"]["value"] is None and doc["reference"]["value_float"] is None
    assert doc["reference"]["undefined_reason"] == "zero_claims"
    assert doc["inputs"]["labels"] == []


def test_judge_audit_prints_the_reference_only():
    result = invoke("judge_audit", "--human", '{"c1": 1, "c2": 0}', "--judge", '{"c1": 1, "c2": 1}', "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["rows"] == [] and "no Ragas counterpart" in doc["note"]
    assert doc["reference"]["value"] == "1/2"


def test_unknown_metric_lists_the_valid_ones():
    result = invoke("context-precisoin", "1,0")
    assert result.exit_code == 2
    assert "unknown metric 'context-precisoin'" in result.output
    for name in explain_names():
        assert name in result.output


@pytest.mark.parametrize("labels, item, column, token", [
    ("1,x,0", 2, 3, "token 'x'"),
    ("1,0,", 3, 5, "an empty item"),
    ("1, 0.5", 2, 4, "token '0.5'"),
])
def test_malformed_labels_name_position_and_token(labels, item, column, token):
    result = invoke("context-precision", labels)
    assert result.exit_code == 2
    assert f"cannot parse {token} at item {item} (column {column})" in result.output
    with pytest.raises(HarnessInputError) as info:
        parse_labels(labels)
    assert info.value.field == f"LABELS[{item - 1}]"


def test_malformed_id_list_points_at_the_json_error():
    result = invoke("id-recall", "--retrieved", "[1, d1]", "--reference", "[]")
    assert result.exit_code == 2
    assert "not valid JSON" in result.output and "column 5" in result.output


def test_id_list_takes_any_scalar_like_a_case_file_and_rejects_non_lists():
    # booleans and null are IDs in a case file (run reports the reference refusing them): explain agrees
    assert parse_id_list('["a", true, null, 1.0]', "--retrieved") == ["a", True, None, 1.0]
    with pytest.raises(HarnessInputError, match="item 1 is"):
        parse_id_list('["a", [1]]', "--retrieved")
    with pytest.raises(HarnessInputError, match="expected a JSON array"):
        parse_id_list('"a"', "--retrieved")


def test_options_that_do_not_belong_to_the_metric_are_refused():
    assert invoke("faithfulness", "1", "--corpus-relevant", "3").exit_code == 2
    result = invoke("context-precision", "1,1", "--corpus-relevant", "1")
    assert result.exit_code == 2 and "cannot be smaller than the 2 relevant" in result.output
    assert invoke("context-precision").exit_code == 2


def test_exit_3_when_ragas_cannot_run(tmp_path):
    result = invoke("context-recall", "1,0", "--python", str(tmp_path / "no-such-python"))
    assert result.exit_code == 3
    assert "Ragas could not be run" in result.output
