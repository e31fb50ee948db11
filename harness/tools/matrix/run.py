"""Run the probe on one suite with each matrix environment's interpreter and classify each column.

Each column is classified with ``ragas_compat.compare.audit.build_audit`` exactly as a single ``run`` is (no
expectations: a matrix compares versions with the reference and with each other). A column whose
environment is unavailable, or whose Ragas cannot be imported, keeps its first error line and no
audit - it never stops the other columns. Machine paths in what Ragas said (an error message naming a
file of the environment or the checkout) are replaced by ``<env LABEL>`` / ``<checkout LABEL>``, and the
home folder by ``~`` (nltk lists its data search path, ``~/nltk_data`` first), so the reports stay portable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragas_compat.cases import Suite
from ragas_compat.compare.audit import Audit, build_audit
from ragas_compat.compare.expectations import Expectations
from ragas_compat.runner import ProbeRun, run_probe
from ragas_compat.tools.matrix.environments import Environment

NO_EXPECTATIONS = Expectations("none (version matrix)", ())

ProbeFunction = Callable[..., ProbeRun]


@dataclass(frozen=True)
class VersionColumn:
    """One version's outcome: its environment, the probe output and the classified rows."""

    environment: Environment
    audit: Audit | None
    probe_output: dict
    error: str | None  # first line of why the column is unavailable
    probe_seconds: float | None

    @property
    def label(self) -> str:
        return self.environment.label

    @property
    def version(self) -> str | None:
        imported = (self.probe_output.get("ragas") or {}).get("version")
        return imported or self.environment.version

    @property
    def available(self) -> bool:
        return self.audit is not None


def message_line(message: str | None) -> str:
    """The line of an error message a cell or column shows: its first line with a letter or digit
    (nltk's LookupError opens with an empty line and a row of asterisks), stripped; "" when none."""
    return next((line.strip() for line in (message or "").splitlines() if any(c.isalnum() for c in line)), "")


def portable(value: Any, replacements: Sequence[tuple[str, str]]) -> Any:
    """``value`` (JSON data) with every string's machine paths replaced (longest first)."""
    if isinstance(value, str):
        for path, name in replacements:
            value = value.replace(path, name)
        return value
    if isinstance(value, list):
        return [portable(item, replacements) for item in value]
    if isinstance(value, dict):
        return {key: portable(item, replacements) for key, item in value.items()}
    return value


def _replacements(environment: Environment) -> list[tuple[str, str]]:
    pairs = [(str(environment.path), f"<env {environment.label}>")] if environment.path else []
    pairs += [(prefix, f"<checkout {environment.label}>") for prefix in environment.sys_path_prefix]
    pairs.append((str(Path.home()), "~"))  # what a library names under the home folder (nltk's data search path)
    return sorted(((path, name) for path, name in pairs if len(path) > 1), key=lambda pair: -len(pair[0]))


def run_column(environment: Environment, suite: Suite, *, timeout: float = 600.0,
               probe: ProbeFunction = run_probe, telemetry: bool = False) -> VersionColumn:
    """The probe with this environment's interpreter on ``suite``; never raises for a probe failure.
    ``telemetry``: Ragas's telemetry left on, every network attempt blocked and counted."""
    if not environment.available:
        return VersionColumn(environment, None, {}, environment.error or "environment unavailable", None)
    options = {"telemetry": True} if telemetry else {}
    result = probe([case.raw for case in suite.cases], python=environment.python,
                   sys_path_prefix=list(environment.sys_path_prefix), timeout=timeout, **options)
    replacements = _replacements(environment)
    if not result.ok:
        return VersionColumn(environment, None, portable(result.output, replacements),
                             portable(message_line(result.error) or "probe failed", replacements), result.seconds)
    output = portable(result.output, replacements)
    provenance = {"ragas_version": output.get("ragas", {}).get("version"), "matrix_column": environment.label}
    audit = build_audit(suite, output, NO_EXPECTATIONS, provenance)
    return VersionColumn(environment, audit, output, None, result.seconds)


def run_matrix(environments: Sequence[Environment], suite: Suite, *, timeout: float = 600.0, jobs: int = 2,
               probe: ProbeFunction = run_probe, telemetry: bool = False,
               progress: Callable[[str, str], None] | None = None) -> tuple[list[VersionColumn], float]:
    """Every column (in the given order), probes run ``jobs`` at a time; returns (columns, wall seconds)."""
    progress = progress or (lambda label, event: None)
    started = time.perf_counter()

    def one(environment: Environment) -> VersionColumn:
        progress(environment.label, "start")
        try:
            return run_column(environment, suite, timeout=timeout, probe=probe, telemetry=telemetry)
        finally:
            progress(environment.label, "done")

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        columns = list(pool.map(one, environments))
    return columns, time.perf_counter() - started
