"""Shared fixtures. The markers (``slow``, ``wheel``, ``matrix_e2e``) are declared in pyproject.toml.

``default_audit_run``: the default audit (the bundled suite, the pin's expectations, this interpreter's
Ragas), run once per test session in process, exactly as ``ragas-compat run`` runs it, and shared by
every module that only reads it (its audit, the probe's output, the four rendered reports). Tests must
not change what it holds; a test that needs another run (other expectations, ``--metric``, streaming)
makes its own.
"""

from __future__ import annotations

import sys
from functools import cached_property

import pytest

pytest_plugins = ["pytester"]


class DefaultAuditRun:
    """The default audit's result, computed once: ``audit`` and ``probe`` (``pipeline.RunResult``),
    ``reports`` (each report file's text, rendered once on first use)."""

    def __init__(self, result) -> None:
        self.result = result
        self.audit = result.audit
        self.probe = result.probe

    @cached_property
    def reports(self) -> dict[str, str]:
        from ragas_compat.pipeline import render_reports

        return render_reports(self.audit)


@pytest.fixture(scope="session")
def default_audit_run() -> DefaultAuditRun:
    from ragas_compat.pin import resolve_ragas_source
    from ragas_compat.pipeline import load_run_expectations, load_suite, run_audit

    source = resolve_ragas_source(python=sys.executable)
    return DefaultAuditRun(run_audit(load_suite([]), load_run_expectations(None), source, python=sys.executable))
