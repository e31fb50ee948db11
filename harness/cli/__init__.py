"""The ``ragas-compat`` command line: one typer app (``ragas_compat.cli.app``)."""

from ragas_compat.cli.app import app, main

__all__ = ["app", "main"]
