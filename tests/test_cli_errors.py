"""The one error path of the command line (``harness.cli.common``): every ``HarnessError`` exits with
its own code, user-provided text is printed literally (no markup, no raw control characters),
``--version``, and no command module keeps its own stderr console or exit constants."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness import __version__
from harness.cli import app
from harness.cli.common import exits_on_harness_errors, plain, shown
from harness.errors import ExitCode, HarnessError, HarnessInputError, RagasUnavailable
from harness.pin.sources import RagasNotInstalled, RagasSourceError
from harness.tools.fuzz.runner import FuzzProbeFailed

CLI_DIR = Path(__file__).resolve().parents[1] / "harness" / "cli"
HELPER_MODULE = CLI_DIR / "common.py"
runner = CliRunner()


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


# Every subclass defined by the modules imported here (harness.cli imports all of its commands).
HARNESS_ERRORS = sorted({HarnessError, *_subclasses(HarnessError)}, key=lambda c: f"{c.__module__}.{c.__qualname__}")


def throwaway_app(exc: BaseException) -> typer.Typer:
    """An app with one command that raises ``exc`` through the shared error path."""
    small = typer.Typer()

    @small.command()
    @exits_on_harness_errors()
    def boom() -> None:
        raise exc

    return small


def test_the_known_error_classes_are_all_covered():
    assert {HarnessInputError, RagasUnavailable, RagasNotInstalled, RagasSourceError,
            FuzzProbeFailed} <= set(HARNESS_ERRORS)
    assert issubclass(FuzzProbeFailed, RagasUnavailable) and FuzzProbeFailed.exit_code == ExitCode.NO_RAGAS
    assert RagasNotInstalled.exit_code == ExitCode.NO_RAGAS
    assert RagasSourceError.exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize("cls", HARNESS_ERRORS, ids=lambda c: c.__qualname__)
def test_every_harness_error_exits_with_its_own_code(cls):
    result = runner.invoke(throwaway_app(cls("it went wrong")), [])
    assert result.exit_code == cls.exit_code, result.output
    assert not isinstance(result.exception, HarnessError)  # handled, not a traceback
    prefix = "Ragas could not be run: " if issubclass(cls, RagasUnavailable) else ""
    assert result.output == f"error: {prefix}it went wrong\n"


def test_every_problem_gets_its_own_error_line():
    exc = HarnessInputError("2 problems", problems=["a.json: case 'x': bad", "a.json: case 'y': worse"])
    result = runner.invoke(throwaway_app(exc), [])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.output == "error: a.json: case 'x': bad\nerror: a.json: case 'y': worse\n"


def test_other_exceptions_are_not_swallowed():
    result = runner.invoke(throwaway_app(KeyError("bug")), [])
    assert isinstance(result.exception, KeyError)


def test_markup_in_an_error_message_is_printed_literally():
    result = runner.invoke(throwaway_app(HarnessInputError("case id [red]x[/red] and [bold]y \\[z]")), [])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.output == "error: case id [red]x[/red] and [bold]y \\[z]\n"


def test_control_characters_in_an_error_message_are_escaped():
    message = "id a\x1b[31mb\x07c\td\re\x00f\x9bg\x7fh"
    result = runner.invoke(throwaway_app(RagasUnavailable(message)), [])
    assert result.exit_code == ExitCode.NO_RAGAS
    assert result.output == ("error: Ragas could not be run: id a\\x1b[31mb\\x07c\\x09d\\x0de\\x00f\\x9bg\\x7fh\n")
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", result.output)


def test_plain_and_shown():
    assert plain("a\nb\x1bc\x85") == "a\nb\\x1bc\\x85"
    assert plain(3) == "3"
    assert plain("ünïcode — ×") == "ünïcode — ×"
    assert shown("[red]x\x1b") == "\\[red]x\\x1b"


# Every real command, with input that makes it raise a HarnessError before any real work.
def _bad_inputs(tmp_path: Path) -> dict[tuple[str, ...], tuple[list[str], int, str]]:
    missing = tmp_path / "[red]no\x1bsuch.toml"
    return {
        ("run",): (["run", "--out", "/proc/ragas-compat-out"], 2, "not writable"),
        ("expect", "bless"): (["expect", "bless", "--out", "/proc/ragas-compat-out/e.toml"], 2, "not writable"),
        ("pin", "show"): (["pin", "show", "--manifest", str(missing)], 2, "[red]no\\x1bsuch.toml"),
        ("pin", "record"): (["pin", "record", "--ragas-checkout", str(tmp_path), "--manifest", str(missing)], 2,
                            "[red]no\\x1bsuch.toml"),
        ("explain",): (["explain", "[red]x"], 2, "unknown metric '[red]x'"),
        ("fuzz",): (["fuzz", "--n", "2", "--metric", "[red]x", "--out", str(tmp_path / "fuzz")], 2,
                    "cannot fuzz '[red]x'"),
        ("matrix",): (["matrix", "--versions", "latest", "--out", str(tmp_path / "m")], 2,
                      "neither a Ragas release"),
        ("bench",): (["bench", "--json", "/proc/ragas-compat/[red]bench.json"], 2,
                     "cannot write /proc/ragas-compat/[red]bench.json"),
    }


def _command_paths(group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    paths = set()
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group
            paths |= _command_paths(command, (*prefix, name))
        else:
            paths.add((*prefix, name))
    return paths


def test_bad_input_covers_every_command(tmp_path):
    # a new command gets a row in _bad_inputs: input that makes it fail through the one error path
    assert _command_paths(typer.main.get_group(app)) == set(_bad_inputs(tmp_path))


@pytest.mark.parametrize("command", sorted(_bad_inputs(Path("/tmp"))), ids="-".join)
def test_every_real_command_reports_bad_input_through_the_one_path(command, tmp_path, monkeypatch):
    import harness.cli.bench as cli_bench

    monkeypatch.setattr(cli_bench, "run_bench", lambda quick, progress: [])  # no measuring here
    args, code, text = _bad_inputs(tmp_path)[command]
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, HarnessError)
    assert "error: " in result.output and text in result.output, result.output


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"ragas-compat {__version__}\n"
    proc = subprocess.run([sys.executable, "-m", "harness", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == f"ragas-compat {__version__}\n"


def test_only_the_helper_module_writes_to_stderr_or_defines_exit_codes():
    modules = sorted(CLI_DIR.glob("*.py"))
    assert HELPER_MODULE in modules and len(modules) > 5
    stderr_console = re.compile(r"Console\([^)]*stderr\s*=\s*True")
    for module in modules:
        text = module.read_text(encoding="utf-8")
        if module != HELPER_MODULE:
            assert not stderr_console.search(text), f"{module.name} constructs Console(stderr=True)"
            assert "sys.stderr" not in text, f"{module.name} writes to sys.stderr"
        assert not re.search(r"^\s*EXIT_\w+\s*(,|=)", text, re.M), f"{module.name} defines EXIT_* constants"
        assert not re.search(r"^\s*def _?fail\(", text, re.M), f"{module.name} defines its own fail()"
        assert not re.search(r"typer\.Exit\(\s*[1-9]", text), f"{module.name} exits with a literal code"
    assert stderr_console.search(HELPER_MODULE.read_text(encoding="utf-8"))
