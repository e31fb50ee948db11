"""User text made inert where it is shown: in Markdown (report.md and every Markdown table) and on a
terminal. Standard library only.

User text is anything a case file, an expectations file, Ragas or the judge put into a report: case ids,
categories, suite names, texts, error messages, rule reasons and labels, warnings. The template's own
Markdown is never passed through here; everything a user wrote is, at the place the renderer inserts it.

- ``md_text(value)``: the one escape for Markdown. The result is plain text in every inline position
  (a paragraph, a list item, a table cell), in CommonMark, GitHub, Python-Markdown (mkdocs) and pandoc,
  with raw HTML on or off:

  * ``&``, ``<``, ``>`` become ``&amp;``, ``&lt;``, ``&gt;``: no raw HTML element, comment or autolink;
  * ``|`` and ``~`` become ``&#124;`` and ``&#126;``: no table parser splits a cell on an entity (a
    backslash-escaped ``\\|`` prints its backslash outside tables in Python-Markdown), and ``~~`` cannot
    strike through;
  * the backslash, the backtick, ``*`` and ``{`` are backslash-escaped (an already-escaped
    ``\\|`` in the text becomes ``\\\\&#124;``: both characters print), and so are ``_`` unless it
    stands between two letters or digits (intraword, where it never emphasises) and the ``(`` of
    ``](`` (an inline link or image; brackets alone link nothing, since user text never starts the
    line a link definition would need): no code span, emphasis, link, image or attribute list
    (Python-Markdown's ``{: onclick=...}``, which needs its ``{``) comes from user text;
  * line breaks (LF, CR, CRLF, VT, FF, FS, GS, RS, NEL, U+2028, U+2029) and TAB become one space: a
    table row stays one line and no text starts a new block;
  * every other C0 and C1 control, DEL and the bidirectional overrides and isolates are shown as
    ``\\xNN`` / ``\\uNNNN``.

  Quotes are left as they are: user text is never placed in an HTML attribute by these renderers.
- ``md_code(value)``: ``value`` as a code span when it has nothing ``md_text`` would change (a
  plain case id keeps its code look), else ``md_text(value)``: a backtick in user text never closes
  the template's code span, and entities (which code spans show literally) are never needed inside one.
- ``terminal_text(value)``: ``value`` for a terminal: line breaks (the Unicode ones too), every C0/C1
  control (ESC, so no ANSI sequence), DEL and the bidirectional controls shown as ``\\xNN`` /
  ``\\uNNNN``; one line in, one line out. Rich markup is escaped on top of it where markup is on
  (``ragas_compat.cli.common.shown``).
"""

from __future__ import annotations

import re
from typing import Any

# Line breaks as str.splitlines() and the Markdown dialects know them, and TAB: one space in Markdown.
LINE_BREAK = re.compile("\r\n|[\t\n\x0b\x0c\r\x1c\x1d\x1e\x85\u2028\u2029]")
# What no reader should receive raw: C0 and C1 controls, DEL, the bidirectional embeddings, overrides
# and isolates (they reorder what is shown), and the line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;", "~": "&#126;"}
_BACKSLASHED = frozenset("\\`*{")


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _markdown_char(text: str, index: int) -> str:
    char = text[index]
    if char in _ENTITY:
        return _ENTITY[char]
    if char in _BACKSLASHED:
        return "\\" + char
    if char == "(":  # "](" opens an inline link or image; "]" alone makes none (no definition can follow)
        return "\\(" if index == 0 or text[index - 1] == "]" else char
    if char == "_":
        intraword = 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()
        return char if intraword else "\\_"
    return char


_SIGNIFICANT = re.compile(r"[&<>|~\\`*{_(]")


def md_text(value: Any) -> str:
    """``str(value)`` as inert Markdown text (see the module's docstring for what is escaped and how)."""
    text = LINE_BREAK.sub(" ", str(value))
    text = _CONTROL.sub(lambda m: _visible(m.group()), text)
    return _SIGNIFICANT.sub(lambda m: _markdown_char(text, m.start()), text)


def md_code(value: Any) -> str:
    """``value`` as a code span if Markdown would show it as it is, else ``md_text(value)``."""
    text = str(value)
    if text and text == text.strip(" ") and md_text(text) == text:
        return f"`{text}`"
    return md_text(text)


def terminal_text(value: Any) -> str:
    """``str(value)`` with every line break and control character shown as ``\\xNN`` / ``\\uNNNN``."""
    return _CONTROL.sub(lambda m: _visible(m.group()), str(value))
