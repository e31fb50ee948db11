"""``ragas-compat``: the one typer app and the registration of its commands.

Each command module has a ``register(app)`` that adds its command(s); every command turns a
``ragas_compat.errors.HarnessError`` into its exit code through ``ragas_compat.cli.common.exits_on_harness_errors``
(0 OK, 1 drift, 2 bad input or usage, 3 Ragas could not be run; 4 internal error, traceback saved; 130/143
interrupted by SIGINT/SIGTERM; see ``ragas_compat.errors.ExitCode``).

``ragas-compat --help`` lists every command with one line (``SUMMARIES``; a command's own ``--help`` has
its full text, e.g. explain's input grammar), and no help shows a ``<bool>`` beside a flag (a flag takes
no value: ``plain_flags``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandInfo, DefaultPlaceholder, TyperInfo

from ragas_compat import __version__
from ragas_compat.cli import bench, bisect, diff, expect, explain, fuzz, import_cmd, matrix, merge, pin, record, run
from ragas_compat.cli.many_values import spread_values

COMMAND_MODULES = (run, merge, expect, pin, explain, fuzz, matrix, bisect, bench, record, import_cmd, diff)
COMMAND_MODULES += (import_module("ragas_compat.cli.audit_run"),)  # audit-run (tools/audit_run)

# One line per command in ``ragas-compat --help``.
SUMMARIES: dict[str, str] = {
    "run": "Run the audit: Ragas and the reference on the same frozen verdicts, classified and reported.",
    "merge": "Merge the shards of one run (run --shard K/N) into the unsharded run's report set.",
    "explain": "Explain one input: Ragas and the reference side by side, with the formulas.",
    "fuzz": "Generate cases from a seed, compare Ragas and the reference, shrink each unexplained finding.",
    "matrix": "Run the frozen cases through several Ragas releases and report what drifted between them.",
    "bisect": "Name the first Ragas commit between --good and --bad where one cell changes.",
    "bench": "Measure the harness against its floors (run, probe, reference scaling, matrix).",
    "record": "Record a live Ragas run on your dataset as a case file that run replays offline.",
    "import": "Turn your dataset and a CSV of judge or human labels into a case file.",
    "expect": "Expectations files: bless the current classifications.",
    "pin": "The Ragas pin: show it against this environment, record a checkout's file hashes.",
    "diff": "Compare two report.json (or matrix.json) files row by row: values bit for bit, classifications.",
}


def plain_flags(params: list[Any]) -> list[Any]:
    """``params`` with every boolean flag's metavar empty, so help shows ``--quiet  Print ...``, not
    ``--quiet <bool>``."""
    for param in params:
        if getattr(param, "is_flag", False) and getattr(param, "metavar", "") is None:
            param.metavar = ""
    return params


class PlainFlagsCommand(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return plain_flags(super().get_params(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # --cases A B as --cases A --cases B
        return super().parse_args(ctx, spread_values(args, self.params))


class PlainFlagsGroup(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return plain_flags(super().get_params(ctx))


def first_sentence(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    head, sep, _ = flat.partition(". ")
    return head + "." if sep else flat


def finish(typer_app: typer.Typer) -> None:
    """Every command and group of ``typer_app`` (recursively) with plain flags; every top-level entry with
    its one-line summary."""
    for command in typer_app.registered_commands:
        _finish_command(command)
    for group in typer_app.registered_groups:
        _finish_group(group)


def _plain_class(cls: Any, default: type, plain: type) -> Any:
    """``plain`` where typer would use its own ``default`` class (unset, or typer's placeholder for it)."""
    value = cls.value if isinstance(cls, DefaultPlaceholder) else cls
    return plain if value is None or value is default else cls


def _finish_command(command: CommandInfo) -> None:
    command.cls = _plain_class(command.cls, TyperCommand, PlainFlagsCommand)
    if command.short_help is None and command.name in SUMMARIES:
        command.short_help = SUMMARIES[command.name]
    elif command.short_help is None:
        command.short_help = first_sentence(command.help or (command.callback.__doc__ if command.callback else None))


def _finish_group(group: TyperInfo) -> None:
    sub = group.typer_instance
    if sub is None:
        return
    sub.info.cls = _plain_class(sub.info.cls, TyperGroup, PlainFlagsGroup)
    group.cls = _plain_class(group.cls, TyperGroup, PlainFlagsGroup)
    if group.name in SUMMARIES:
        group.short_help = SUMMARIES[group.name]
    for command in sub.registered_commands:
        command.cls = _plain_class(command.cls, TyperCommand, PlainFlagsCommand)
    for nested in sub.registered_groups:
        _finish_group(nested)


app = typer.Typer(add_completion=True, no_args_is_help=True, cls=PlainFlagsGroup,
                  help="Verify Ragas metric semantics against reference implementations on frozen verdicts.")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ragas-compat {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    pass


for module in COMMAND_MODULES:
    module.register(app)
finish(app)


def main() -> None:  # pragma: no cover - console entry for python -m ragas_compat
    app(prog_name="ragas-compat")
