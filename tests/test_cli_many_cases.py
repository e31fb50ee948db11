"""``--cases A B`` (issue 38): the README's ``--cases FILE...`` works in run, matrix, bisect and expect bless,
as ``--cases A --cases B`` does; a stray argument after another option is still refused, and a command
with positional arguments is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.cli.many_values import spread_values


def _command(*path: str):
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


def _parsed(path: tuple[str, ...], args: list[str]) -> dict:
    command = _command(*path)
    with command.make_context(path[-1], list(args)) as ctx:
        return ctx.params


@pytest.mark.parametrize("path", [("run",), ("matrix",), ("expect", "bless")])
def test_several_files_after_one_cases(path):
    params = _parsed(path, ["--cases", "a.json", "b.json", "c.json"])
    assert params["cases"] == [Path("a.json"), Path("b.json"), Path("c.json")]
    assert _parsed(path, ["--cases", "a.json", "--cases", "b.json"])["cases"] == [Path("a.json"), Path("b.json")]
    assert _parsed(path, ["--cases=a.json", "b.json"])["cases"] == [Path("a.json"), Path("b.json")]
    assert _parsed(path, ["--cases", "a.json", "-"])["cases"] == [Path("a.json"), Path("-")]


def test_values_end_at_the_next_option():
    params = _parsed(("run",), ["--cases", "a.json", "b.json", "--out", "folder", "--metric", "faithfulness"])
    assert params["cases"] == [Path("a.json"), Path("b.json")] and params["out"] == Path("folder")
    result = CliRunner().invoke(app, ["run", "--cases", "a.json", "--out", "folder", "stray.json"])
    assert result.exit_code == 2 and "stray.json" in result.output


def test_matrix_several_files(tmp_path):
    params = _parsed(("matrix",), ["--versions", "0.4.3", "--cases", "x.json", "y.json", "--fail-on", "none"])
    assert params["cases"] == [Path("x.json"), Path("y.json")]


def test_spread_only_where_no_positional_argument_could_be_taken():
    explain_params = _command("explain").params
    args = ["--cases", "a.json", "b.json"]
    if any(getattr(p, "param_type_name", "") == "argument" for p in explain_params):
        assert spread_values(args, explain_params) == args
    assert spread_values(["--cases", "a", "b", "--", "c"], _command("run").params) == \
        ["--cases", "a", "--cases", "b", "--", "c"]
    assert spread_values(["--cases", "a", "b"], []) == ["--cases", "a", "b"]


def test_run_reads_both_files(tmp_path):
    """The two files reach the suite loader: a duplicate case id across them is named (exit 2, no probe)."""
    case_file = Path(__file__).resolve().parents[1] / "harness" / "cases" / "suites" / "default.json"
    result = CliRunner().invoke(app, ["run", "--cases", str(case_file), str(case_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "duplicate of a case in" in " ".join(result.output.split())
