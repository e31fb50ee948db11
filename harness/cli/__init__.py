"""The ``ragas-compat`` command line: one typer app (``harness.cli.app``); ``harness.cli.launch``
is the console entry.

``app`` and ``main`` (the typer app and its entry) are loaded on first use, so that importing
``harness.cli.launch`` stays cheap."""

from __future__ import annotations

import importlib

__all__ = ["app", "main"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'harness.cli' has no attribute {name!r}")
    module = importlib.import_module("harness.cli.app")
    # importing the submodule bound ``harness.cli.app`` to it: bind the names to the app's objects
    globals().update(app=module.app, main=module.main)
    return globals()[name]
