"""Shared fixtures. The markers (``slow``, ``wheel``, ``matrix_e2e``) are declared in pyproject.toml.

``default_audit_run``: the default audit (the bundled suite, the pin's expectations, this interpreter's
Ragas), run once per test session in process, exactly as ``ragas-compat run`` runs it, and shared by
every module that only reads it (its audit, the probe's output, the four rendered reports). Tests must
not change what it holds; a test that needs another run (other expectations, ``--metric``, streaming)
makes its own.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

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


def pytest_collection_modifyitems(items) -> None:
    """The modules that hold slow tests first (each module kept whole, its fixtures made once), so that
    on several workers (pytest-xdist) the long tests start early and the quick ones fill the gaps,
    instead of one long test running alone at the end."""
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (item.path not in slow_modules, order[id(item)]))


@pytest.fixture(scope="session")
def default_audit_run() -> DefaultAuditRun:
    from ragas_compat.pin import resolve_ragas_source
    from ragas_compat.pipeline import load_run_expectations, load_suite, run_audit

    source = resolve_ragas_source(python=sys.executable)
    return DefaultAuditRun(run_audit(load_suite([]), load_run_expectations(None), source, python=sys.executable))


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder ``build`` fills once per test run: under pytest-xdist its workers share it (the first
    builds it under a lock, the others wait and reuse it: a wheel is built once, not once per worker);
    without xdist it is a fresh folder of this session."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run_id:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent / f"shared-{run_id}"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            folder.mkdir(exist_ok=True)
            build(folder)
            done.touch()
    return folder
