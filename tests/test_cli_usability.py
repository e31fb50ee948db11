"""A newcomer's first commands (issue 39): a Ragas EvaluationDataset given to ``run --cases`` is named as
such, with the command that turns it into cases (exit 2); a mistyped ``--metric`` gets "did you mean"
in every command; the top-level ``--help`` lists the commands in one line each (explain's input grammar
stays in ``explain --help``); no help shows ``<bool>`` beside a flag."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ragas_compat.cases.loader import load_cases, parse_suite_text
from ragas_compat.cli.app import SUMMARIES, app
from ragas_compat.errors import HarnessInputError
from ragas_compat.resources import DEFAULT_SUITE, package_text

SAMPLES = [
    {"user_input": "When was it founded?", "response": "In 1998.", "retrieved_contexts": ["Founded in 1998."],
     "reference": "1998"},
    {"user_input": "Who founded it?", "response": "Ann.", "retrieved_contexts": ["Ann founded it."],
     "reference": "Ann"},
]
OLD_NAMES = [{"question": "q", "answer": "a", "contexts": ["c"], "ground_truth": "g"}]

DATASETS = {
    "ds.jsonl": ("JSONL", "\n".join(json.dumps(s) for s in SAMPLES) + "\n"),
    "one.jsonl": ("JSONL, one sample", json.dumps(SAMPLES[0]) + "\n"),
    "ds.json": ("a JSON list of samples", json.dumps(SAMPLES)),
    "old.json": ("a JSON list of samples", json.dumps(OLD_NAMES)),
    "dict.json": ('a {"samples": [...]} document', json.dumps({"samples": SAMPLES})),
    "ds.csv": ("CSV", "user_input,retrieved_contexts,response,reference\nq,\"['c']\",a,r\n"),
}


def _runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_an_evaluation_dataset_is_named_with_the_commands_that_turn_it_into_cases(name, tmp_path):
    form, text = DATASETS[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HarnessInputError) as caught:
        load_cases(path)
    [problem] = caught.value.problems
    assert f"{name} is a Ragas EvaluationDataset ({form};" in problem
    assert f"ragas-compat record {name} --out cases.json" in problem
    assert f"ragas-compat import {name} LABELS.csv --out cases.json" in problem
    assert "not valid JSON" not in problem and "expected an object" not in problem


def test_run_refuses_a_dataset_with_exit_2_and_says_which_command(tmp_path):
    path = tmp_path / "eval.jsonl"
    path.write_text(DATASETS["ds.jsonl"][1], encoding="utf-8")
    result = _runner().invoke(app, ["run", "--cases", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "eval.jsonl is a Ragas EvaluationDataset (JSONL;" in text
    assert "ragas-compat record eval.jsonl" in text and "ragas-compat import eval.jsonl" in text
    assert not (tmp_path / "out").exists()


def test_a_broken_case_file_still_gets_its_own_problems():
    """Detection does not swallow a case file's own errors (JSON syntax, schema)."""
    with pytest.raises(HarnessInputError) as caught:
        parse_suite_text('{"schema_version": 1, "suite": "x", "cases": [}', "x.json")
    assert "not valid JSON" in str(caught.value) and "EvaluationDataset" not in str(caught.value)
    document = json.loads(package_text(DEFAULT_SUITE))
    document["cases"][0]["user_inptu"] = "typo"
    with pytest.raises(HarnessInputError) as caught:
        parse_suite_text(json.dumps(document), "typo.json")
    assert "did you mean 'user_input'" in str(caught.value) and "EvaluationDataset" not in str(caught.value)
    assert parse_suite_text(package_text(DEFAULT_SUITE), "default.json").cases  # a case file still loads


@pytest.mark.parametrize("command", [
    ["run", "--metric", "faithfullness"],
    ["fuzz", "--metric", "faithfullness", "--n", "1"],
    ["record", "DATASET.jsonl", "--out", "OUT.json", "--metric", "faithfullness"],
    ["explain", "faithfullness", "1,0"],
])
def test_a_mistyped_metric_gets_did_you_mean_in_every_command(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DATASET.jsonl").write_text(DATASETS["ds.jsonl"][1], encoding="utf-8")
    result = _runner().invoke(app, [*command, *(["--out", str(tmp_path / "o")] if command[0] == "fuzz" else [])])
    assert result.exit_code == 2, result.output
    assert "did you mean 'faithfulness'?" in " ".join(result.output.split()), result.output


def test_the_top_level_help_is_one_line_per_command(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = _runner().invoke(app, ["--help"], env={"COLUMNS": "100", "TERM": "dumb"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) <= 40, len(lines)
    for name in SUMMARIES:
        assert any(line.strip("│ ").startswith(name + " ") for line in lines), name
    assert "LABELS" not in result.output  # explain's grammar is in explain --help
    explained = _runner().invoke(app, ["explain", "--help"], env={"COLUMNS": "100", "TERM": "dumb"})
    assert "Inputs:" in explained.output and "context_precision_with_reference: LABELS" in " ".join(
        explained.output.replace("│", " ").split())


def _help_texts():
    yield []
    for command in app.registered_commands:
        yield [command.name]
    for group in app.registered_groups:
        yield [group.name]
        for command in group.typer_instance.registered_commands:
            yield [group.name, command.name]


def test_no_help_shows_bool_beside_a_flag():
    seen = 0
    for path in _help_texts():
        result = _runner().invoke(app, [*path, "--help"], env={"COLUMNS": "120", "TERM": "dumb"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, path
        seen += 1
    assert seen >= 13
    result = _runner().invoke(app, ["run", "--help"], env={"COLUMNS": "120", "TERM": "dumb"})
    assert "--golden" in result.output and "<path>" in result.output  # values keep their metavar
