"""Markdown tables for every report.

User text in a cell is escaped by its renderer with ``ragas_compat.report.escape.md_text`` (no ``|``,
line break or control character is left in it). ``markdown_cell`` keeps the structure of any cell:
every line break (CR and the Unicode ones too, ``escape.LINE_BREAK``) becomes a space, and a ``|`` is escaped with the
backslashes before it doubled, so ``\\|`` in a cell cannot close it either."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ragas_compat.report.escape import LINE_BREAK

_PIPE = re.compile(r"(\\*)\|")


def markdown_cell(text: Any) -> str:
    return _PIPE.sub(lambda m: m.group(1) * 2 + "\\|", LINE_BREAK.sub(" ", str(text)))


def markdown_table(header: list[str], rows: Iterable[list[Any]]) -> Iterator[str]:
    """The table's lines, followed by one blank line; made one row at a time as they are read."""
    yield "| " + " | ".join(header) + " |"
    yield "|" + "---|" * len(header)
    for row in rows:
        yield "| " + " | ".join(markdown_cell(c) for c in row) + " |"
    yield ""
