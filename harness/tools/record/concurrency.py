"""``record``'s default concurrency: Ragas's own ``RunConfig.max_workers``, read from the installed Ragas.

Ragas's ``evaluate()`` runs ``RunConfig().max_workers`` jobs at once (16 in 0.4.3), so a recording
that scores fewer samples at once waits longer on the judge than the plain Ragas run it records.
``ragas_max_workers(python)`` reads the default from the Ragas that ``python`` would import, without
importing it: the ``max_workers`` field of ``class RunConfig`` in ``ragas/run_config.py`` (located by
``pin.locate_installed``), as an integer literal. When that cannot be read (no Ragas there, another
layout, a computed default) it is FALLBACK_MAX_WORKERS, Ragas's value since ``RunConfig`` has had the
field, and ``source`` says so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ragas_compat.errors import HarnessError
from ragas_compat.pin.sources import locate_installed

FALLBACK_MAX_WORKERS = 16  # RunConfig.max_workers in Ragas 0.1 to 0.4.3


@dataclass(frozen=True)
class Concurrency:
    value: int
    source: str  # where the value comes from, for the terminal and the tests


def max_workers_in_source(text: str) -> int | None:
    """The integer default of ``max_workers`` in ``class RunConfig`` of ``text`` (run_config.py), or None."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "RunConfig":
            for item in node.body:
                if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                        and item.target.id == "max_workers" and isinstance(item.value, ast.Constant)
                        and type(item.value.value) is int and item.value.value >= 1):
                    return item.value.value
    return None


def ragas_max_workers(python: str, *, timeout: float = 60.0) -> Concurrency:
    """``RunConfig.max_workers`` of the Ragas ``python`` imports (the module docstring)."""
    try:
        located = locate_installed(python, timeout=timeout)
    except HarnessError as exc:  # the recording probe says what is wrong with python when it runs
        return Concurrency(FALLBACK_MAX_WORKERS, f"Ragas's usual default ({exc.__class__.__name__} locating Ragas)")
    if not located.get("found"):
        return Concurrency(FALLBACK_MAX_WORKERS, "Ragas's usual default (no Ragas found)")
    path = Path(located["package_dir"]) / "run_config.py"
    try:
        value = max_workers_in_source(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        value = None
    if value is None:
        return Concurrency(FALLBACK_MAX_WORKERS, f"Ragas's usual default ({path} has no literal max_workers)")
    return Concurrency(value, f"RunConfig.max_workers of Ragas {located.get('version')} ({path})")
