"""Markdown tables for every report (cells escaped so a ``|`` or a newline cannot break a row)."""

from __future__ import annotations

from typing import Any


def markdown_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """The table's lines, followed by one blank line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]
