"""How every subcommand prints its result: ``--format table|md|json``, ``--quiet``, metric names, and
rich tables that stay readable at 80 columns and in a pipe.

- ``FORMAT_OPTION`` / ``QUIET_OPTION``: the shared options (``table``, the default, is rich tables for a
  terminal; ``md`` is Markdown for a pull request or a wiki; ``json`` is one JSON document on stdout).
- ``narrow_table(...)``: a rich Table whose columns wrap (``overflow="fold"``) instead of truncating
  with "…", and never shrink to nothing (each column keeps ``min_width``).
- ``resolve_metrics(names, option)``: registry names for what the user typed, with a hint on stderr for
  another spelling and "did you mean" for an unknown name (``ragas_compat.metrics.names``); every
  ``--metric`` goes through it.
- ``print_json(doc)``: JSON as the reports encode it (no bare NaN).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from ragas_compat.cli.common import json_text, shown, stderr
from ragas_compat.metrics.names import resolve


class OutputFormat(StrEnum):
    TABLE = "table"
    MD = "md"
    JSON = "json"


def format_option(default: OutputFormat = OutputFormat.TABLE) -> Any:
    return typer.Option(default, "--format", case_sensitive=False,
                        help="Output on stdout: table (terminal), md (Markdown) or json.")


def quiet_option() -> Any:
    return typer.Option(False, "--quiet", "-q", help="Print only the one-line result (errors still go to stderr).")


def narrow_table(*columns: str | tuple[str, dict[str, Any]], title: str | None = None,
                 lines: bool = False) -> Table:
    """A table for 80-column terminals and pipes: wrapping cells, no vertical rules, no "…"."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_lines=lines, pad_edge=False,
                  collapse_padding=True)
    for column in columns:
        name, options = (column, {}) if isinstance(column, str) else column
        table.add_column(name, overflow="fold", min_width=options.pop("min_width", min(len(name), 6)), **options)
    return table


def pruned(table: Table) -> Table:
    """``table`` without the columns that have no text in any row (no empty columns on screen)."""
    table.columns = [column for column in table.columns if any(str(cell).strip() for cell in column._cells)]
    return table


def resolve_metrics(names: list[str] | None, option: str = "--metric") -> list[str]:
    """The registry names of ``names``, for every command's ``--metric`` (and explain's METRIC): another
    spelling is accepted with a hint on stderr; an unknown name is a usage error (exit 2) that names the
    closest registered spelling (``did you mean 'faithfulness'?``, ``ragas_compat.metrics.names.resolve``,
    difflib) and the valid names."""
    out = []
    for name in names or ():
        spec, hint = resolve(name, option=option)
        if hint:
            stderr().print(f"[yellow]hint:[/] {shown(hint)}", highlight=False)
        out.append(spec.name)
    return out


def print_json(doc: Any) -> None:
    typer.echo(json_text(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)))


def print_markdown(lines: list[str], console: Console | None = None) -> None:
    typer.echo("\n".join(lines).rstrip() + "\n")
