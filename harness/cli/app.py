"""``ragas-compat``: the one typer app and the registration of its commands.

Each command module has a ``register(app)`` that adds its command(s); every command turns a
``ragas_compat.errors.HarnessError`` into its exit code through ``ragas_compat.cli.common.exits_on_harness_errors``
(0 OK, 1 drift, 2 bad input or usage, 3 Ragas could not be run; 4 internal error, traceback saved; 130/143
interrupted by SIGINT/SIGTERM; see ``ragas_compat.errors.ExitCode``).
"""

from __future__ import annotations

import typer

from ragas_compat import __version__
from ragas_compat.cli import bench, bisect, expect, explain, fuzz, import_cmd, matrix, pin, record, run

COMMAND_MODULES = (run, expect, pin, explain, fuzz, matrix, bisect, bench, record, import_cmd)

app = typer.Typer(add_completion=True, no_args_is_help=True,
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


def main() -> None:  # pragma: no cover - console entry for python -m ragas_compat
    app(prog_name="ragas-compat")
