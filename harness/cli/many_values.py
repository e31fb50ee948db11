"""``--cases A B C``: an option that takes several values after one flag.

Click gives a repeatable option one value per flag (``--cases A --cases B``) and reads ``--cases A B``
as a stray argument ``B``. ``spread_values`` rewrites the command line before click parses it: after one
of ``SPREAD_OPTIONS`` (given as ``--cases A`` or ``--cases=A``), every following token that is not an
option (does not start with ``-``, or is ``-``, standard input) is another value of it, up to the next option or ``--``. Only for a
command whose option is repeatable and that takes no positional argument, so no positional value can be
taken for a case file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

SPREAD_OPTIONS = ("--cases",)


def spread_names(params: Iterable[Any], options: Sequence[str] = SPREAD_OPTIONS) -> frozenset[str]:
    """The names of ``options`` that ``params`` (a click command's) declare repeatable; none when the
    command takes a positional argument."""
    params = list(params)  # click's parameters, or those of the click that typer vendors: read by duck typing
    if any(getattr(param, "param_type_name", None) == "argument" for param in params):
        return frozenset()
    return frozenset(name for param in params
                     if getattr(param, "param_type_name", None) == "option" and getattr(param, "multiple", False)
                     for name in getattr(param, "opts", ()) if name in options)


def spread_values(args: list[str], params: Iterable[Any], options: Sequence[str] = SPREAD_OPTIONS) -> list[str]:
    """``args`` with ``--cases A B`` written as ``--cases A --cases B`` (see the module docstring)."""
    names = spread_names(params, options)
    if not names:
        return list(args)
    out: list[str] = []
    current: str | None = None  # the spread option whose values are being read
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            out += [token, *tokens]
            break
        if token in names:
            out.append(token)
            value = next(tokens, None)
            if value is not None:
                out.append(value)
            current = token
        elif any(token.startswith(name + "=") for name in names):
            out.append(token)
            current = token.partition("=")[0]
        elif current is not None and (token == "-" or not token.startswith("-")):  # "-": standard input
            out += [current, token]
        else:
            out.append(token)
            current = None
    return out
