"""Writing TOML values by hand (the standard library reads TOML but does not write it)."""

from __future__ import annotations

from collections.abc import Iterable

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_inline_list(values: Iterable[str]) -> str:
    """``["a", "b"]`` on one line."""
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


def toml_block_list(values: Iterable[str]) -> str:
    """A list with one string per line (``[]`` when empty)."""
    items = [f"    {toml_string(v)},\n" for v in values]
    return "[\n" + "".join(items) + "]" if items else "[]"
