"""The one error path of the command line (``ragas_compat.cli.common``): every ``HarnessError`` exits with
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

from ragas_compat import __version__
from ragas_compat.cli import app
from ragas_compat.cli.common import Terminated, exits_on_harness_errors, plain, shown
from ragas_compat.errors import ExitCode, HarnessError, HarnessInputError, RagasUnavailable
from ragas_compat.pin.sources import RagasNotInstalled, RagasSourceError
from ragas_compat.tools.fuzz.runner import FuzzProbeFailed

CLI_DIR = Path(__file__).resolve().parents[1] / "harness" / "cli"
HELPER_MODULE = CLI_DIR / "common.py"
SMALL_AUDIT = Path(__file__).resolve().parent / "data" / "audit_run" / "small"  # a saved Ragas run (traces, scores)
runner = CliRunner()


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


# Every subclass defined by the modules imported here (ragas_compat.cli imports all of its commands).
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


def _saved_tracebacks(cache: Path) -> list[Path]:
    return sorted((cache / "ragas-compat" / "tracebacks").glob("ragas-compat-traceback-*.txt"))


def test_an_unexpected_exception_is_exit_4_one_line_and_a_saved_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = runner.invoke(throwaway_app(KeyError("bug")), [])
    assert result.exit_code == 4 and result.output.startswith("internal error: KeyError: 'bug'; traceback saved to ")
    result = runner.invoke(throwaway_app(RuntimeError("bug [red]x\x1b")), [])
    assert result.exit_code == ExitCode.INTERNAL == 4
    assert isinstance(result.exception, SystemExit)  # handled: no exception escapes the command
    saved = Path(result.output.rsplit("traceback saved to ", 1)[-1].strip())
    assert saved in _saved_tracebacks(tmp_path) and len(_saved_tracebacks(tmp_path)) == 2
    assert result.output == f"internal error: RuntimeError: bug [red]x\\x1b; traceback saved to {saved}\n"
    text = saved.read_text(encoding="utf-8")
    assert text.startswith("Traceback (most recent call last):") and "RuntimeError: bug [red]x\x1b" in text


def test_an_internal_error_message_is_cut_to_one_short_line(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = runner.invoke(throwaway_app(ValueError("first line " + "x" * 500 + "\nsecond line")), [])
    assert result.exit_code == 4
    [line] = result.output.splitlines()
    assert line.startswith("internal error: ValueError: first line xxx") and "second line" not in line
    assert "...; traceback saved to " in line


def test_the_traceback_goes_to_the_temporary_folder_when_the_cache_is_unusable(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = runner.invoke(throwaway_app(RuntimeError("bug")), [])
    assert result.exit_code == 4
    [saved] = tmp_path.glob("ragas-compat-traceback-*.txt")
    assert result.output == f"internal error: RuntimeError: bug; traceback saved to {saved}\n"


def test_ctrl_c_is_exit_130_with_one_line():
    result = runner.invoke(throwaway_app(KeyboardInterrupt()), [])
    assert result.exit_code == ExitCode.INTERRUPTED == 130
    assert result.output == "interrupted (SIGINT)\n"


def test_sigterm_is_exit_143_with_one_line():
    result = runner.invoke(throwaway_app(Terminated()), [])
    assert result.exit_code == ExitCode.TERMINATED == 143
    assert result.output == "terminated (SIGTERM)\n"


def test_typer_exits_and_usage_errors_pass_through():
    assert runner.invoke(throwaway_app(typer.Exit(7)), []).exit_code == 7
    result = runner.invoke(throwaway_app(typer.BadParameter("nope")), [])
    assert result.exit_code == 2 and "nope" in result.output


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
    assert plain("a\nb\x1bc\x85\r\u2028") == "a\\x0ab\\x1bc\\x85\\x0d\\u2028"  # one line: no break reaches the terminal
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
                    "unknown metric '[red]x'"),
        ("matrix",): (["matrix", "--versions", "latest", "--out", str(tmp_path / "m")], 2,
                      "neither a Ragas release"),
        ("bisect",): (["bisect", "--ragas-checkout", str(tmp_path), "--good", "a", "--bad", "b", "--case",
                       "cp-worked-example", "--target", "legacy:[red]x"], 2, "--target 'legacy:[red]x'"),
        ("bench",): (["bench", "--json", "/proc/ragas-compat/[red]bench.json"], 2,
                     "--json /proc/ragas-compat/[red]bench.json: not writable"),
        ("record",): (["record", str(tmp_path / "[red]no\x1bsuch.jsonl"), "--out", str(tmp_path / "r.json")], 2,
                      "[red]no\\x1bsuch.jsonl: dataset not found"),
        ("import",): (["import", str(tmp_path / "[red]no\x1bsuch.jsonl"), str(tmp_path / "l.csv"), "--out",
                       str(tmp_path / "i.json")], 2, "[red]no\\x1bsuch.jsonl: dataset not found"),
        ("diff",): (["diff", str(tmp_path / "[red]no\x1bsuch.json"), str(tmp_path / "b.json")], 2,
                    "[red]no\\x1bsuch.json: report not found"),
        ("merge",): (["merge", str(tmp_path / "[red]no\x1bsuch"), "--out", str(tmp_path / "merged")], 2,
                     "[red]no\\x1bsuch: no shard file"),
        ("audit-run",): (["audit-run", str(tmp_path / "[red]no\x1bsuch.json"), "--cases-out", str(tmp_path / "c.json"),
                          "--out", str(tmp_path / "audit")], 2, "[red]no\\x1bsuch.json: traces not found"),
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
    import ragas_compat.cli.bench as cli_bench

    monkeypatch.setattr(cli_bench, "run_bench", lambda quick, only, progress: [])  # no measuring here
    args, code, text = _bad_inputs(tmp_path)[command]
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, HarnessError)
    assert "error: " in result.output and text in result.output, result.output


# Every real command, and a function it calls that is made to raise (an internal error, a bug).
INJECTED = {
    ("run",): ("ragas_compat.cli.run.load_suite", ["run"]),
    ("expect", "bless"): ("ragas_compat.cli.expect.load_suite", ["expect", "bless"]),
    ("pin", "show"): ("ragas_compat.cli.pin.load_manifest", ["pin", "show"]),
    ("pin", "record"): ("ragas_compat.cli.pin.load_manifest", ["pin", "record", "--ragas-checkout", "."]),
    ("explain",): ("ragas_compat.cli.explain.explain", ["explain", "context-precision", "1,0"]),
    ("fuzz",): ("ragas_compat.cli.fuzz.run_fuzz", ["fuzz", "--n", "2"]),
    ("matrix",): ("ragas_compat.cli.matrix.parse_entries", ["matrix", "--versions", "0.4.3"]),
    ("bisect",): ("ragas_compat.cli.bisect.bisect_cell", ["bisect", "--ragas-checkout", ".", "--good", "a", "--bad", "b", "--case", "cp-worked-example", "--target", "legacy:Faithfulness"]),
    ("bench",): ("ragas_compat.cli.bench.run_bench", ["bench", "--quick"]),
    ("record",): ("ragas_compat.cli.record.record", ["record", "d.jsonl", "--out", "rec.json"]),
    ("import",): ("ragas_compat.cli.import_cmd.import_labels", ["import", "d.jsonl", "l.csv", "--out", "imp.json"]),
    ("diff",): ("ragas_compat.cli.diff.diff_files", ["diff", "a.json", "b.json"]),
    ("merge",): ("ragas_compat.cli.merge.merge_shards", ["merge", "shard-1", "shard-2"]),
    ("audit-run",): ("ragas_compat.cli.audit_run.plan_audit", ["audit-run", "traces.json", "--cases-out", "c.json"]),
}


def test_internal_errors_cover_every_command():
    assert _command_paths(typer.main.get_group(app)) == set(INJECTED)


@pytest.mark.parametrize("command", sorted(INJECTED), ids="-".join)
def test_an_injected_internal_error_in_every_command_is_exit_4_without_a_traceback(command, tmp_path, monkeypatch):
    target, args = INJECTED[command]

    def broken(*args, **kwargs):
        raise RuntimeError("injected [bold]fault")

    monkeypatch.setattr(target, broken)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # default output folders land here
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")] if command in (("run",), ("fuzz",), ("matrix",))
                           else args)
    assert result.exit_code == ExitCode.INTERNAL, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    [saved] = _saved_tracebacks(tmp_path / "cache")
    assert result.output.splitlines()[-1] == (f"internal error: RuntimeError: injected [bold]fault; "
                                              f"traceback saved to {saved}")
    assert "RuntimeError: injected [bold]fault" in saved.read_text(encoding="utf-8")


def _options(command_path: tuple[str, ...]) -> set[str]:
    group = typer.main.get_group(app)
    command = group
    for name in command_path:
        command = command.commands[name]
    return {opt for param in command.params for opt in getattr(param, "opts", [])}


# Every command with --timeout, with arguments that would otherwise pass the options' parsing.
TIMEOUT_COMMANDS = {
    ("run",): ["run"],
    ("expect", "bless"): ["expect", "bless"],
    ("explain",): ["explain", "context-precision", "1,0"],
    ("fuzz",): ["fuzz", "--n", "2"],
    ("matrix",): ["matrix", "--versions", "0.4.3"],
    ("bisect",): ["bisect", "--ragas-checkout", ".", "--good", "a", "--bad", "b", "--case", "cp-worked-example", "--target", "legacy:Faithfulness"],
    ("record",): ["record", "d.jsonl", "--out", "rec.json"],
    ("audit-run",): ["audit-run", "traces.json", "--cases-out", "c.json"],
}


def test_timeout_validation_covers_every_command_with_a_timeout():
    with_timeout = {path for path in _command_paths(typer.main.get_group(app)) if "--timeout" in _options(path)}
    assert with_timeout == set(TIMEOUT_COMMANDS)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "0.0"])
@pytest.mark.parametrize("command", sorted(TIMEOUT_COMMANDS), ids="-".join)
def test_a_timeout_that_is_not_positive_and_finite_is_exit_2_naming_the_option(command, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*TIMEOUT_COMMANDS[command], f"--timeout={value}"])
    assert result.exit_code == 2, result.output
    assert "--timeout" in result.output and "positive, finite" in result.output
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())  # nothing written


# Every command with --python: a --python that is missing, or that is no Python interpreter, is exit 3.
PYTHON_COMMANDS = {
    ("run",): ["run"],
    ("expect", "bless"): ["expect", "bless"],
    ("explain",): ["explain", "id-recall", "--retrieved", "[1]", "--reference", "[1]"],
    ("fuzz",): ["fuzz", "--n", "2", "--metric", "id_context_recall"],
    ("pin", "show"): ["pin", "show"],
    ("record",): ["record", "d.jsonl", "--out", "rec.json", "--metric", "id_context_recall"],
    ("bisect",): ["bisect", "--ragas-checkout", ".", "--good", "a", "--bad", "b", "--case", "cp-worked-example", "--target", "legacy:Faithfulness"],
    ("audit-run",): ["audit-run", str(SMALL_AUDIT / "traces.json"), "--scores", str(SMALL_AUDIT / "scores.csv"),
                     "--cases-out", "c.json"],
}
ID_SAMPLE = ('{"user_input": "q", "retrieved_contexts": ["a"], "response": "r", "reference": "x", '
             '"retrieved_context_ids": ["d1"], "reference_context_ids": ["d1"]}\n')


def test_bad_python_covers_every_command_with_a_python():
    with_python = {path for path in _command_paths(typer.main.get_group(app)) if "--python" in _options(path)}
    assert with_python == set(PYTHON_COMMANDS)


@pytest.mark.parametrize("kind", ["missing", "prints-hello", "not-executable"])
@pytest.mark.parametrize("command", sorted(PYTHON_COMMANDS), ids="-".join)
def test_an_unusable_python_is_exit_3_ragas_could_not_be_run(command, kind, tmp_path, monkeypatch):
    python = tmp_path / f"py-{kind}"
    if kind == "prints-hello":
        python.write_text("#!/bin/sh\necho hello\n")
        python.chmod(0o755)
    elif kind == "not-executable":
        python.write_text("not a program\n")
    (tmp_path / "d.jsonl").write_text(ID_SAMPLE)  # a dataset for `record`
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*PYTHON_COMMANDS[command], "--python", python.name, "--timeout", "60"]
                           if "--timeout" in _options(command) else [*PYTHON_COMMANDS[command], "--python", python.name])
    assert result.exit_code == ExitCode.NO_RAGAS, result.output
    assert "error: Ragas could not be run: " in result.output and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
    assert not (tmp_path / "c.json").exists()  # audit-run: --python is checked before its case file is written


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"ragas-compat {__version__}\n"
    proc = subprocess.run([sys.executable, "-m", "ragas_compat", "--version"], capture_output=True, text=True)
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
