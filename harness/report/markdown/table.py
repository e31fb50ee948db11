"""Markdown tables for every report (cells escaped so a ``|`` or a newline cannot break a row)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def markdown_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: list[str], rows: Iterable[list[Any]]) -> Iterator[str]:
    """The table's lines, followed by one blank line; made one row at a time as they are read."""
    yield "| " + " | ".join(header) + " |"
    yield "|" + "---|" * len(header)
    for row in rows:
        yield "| " + " | ".join(markdown_cell(c) for c in row) + " |"
    yield ""
