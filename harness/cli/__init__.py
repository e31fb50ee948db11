"""The ``ragas-compat`` command line: one typer app (``harness.cli.app``)."""

from harness.cli.app import app, main

__all__ = ["app", "main"]
