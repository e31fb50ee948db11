"""pytest plugin ``ragas_compat`` (entry point ``pytest11``): fail CI when Ragas's semantics drift.

The ``ragas_compat`` fixture runs a case file through the installed Ragas (in the probe
subprocess; Ragas is never imported into the pytest process) and asserts that every
(case, Ragas target) classification equals the one expected by an expectations file in the
format of ``pinned/expectations.toml`` (a row named by no ``[[deviation]]`` is expected to be
``identical``)::

    def test_ragas_semantics(ragas_compat):
        ragas_compat.check("cases.json", "expectations.toml")

Relative paths are resolved against the directory of the test file. ``check`` returns the
``harness.compare.audit.Audit``; on drift it raises AssertionError listing each drifting row (case,
target, got, expected, explanation) and each problem of the expectations file (overlapping or
stale deviations). ``--ragas-compat-python`` picks the interpreter whose Ragas is checked
(default: the one running pytest).

Within one pytest session the probe runs once per (interpreter, case file contents): further
checks of the same case files against other expectations files reuse its output.

Importing this module imports only pytest: the harness is imported when the fixture is used,
so unrelated test suites pay nothing.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from harness.compare.audit import Audit

PYTHON_OPTION = "--ragas-compat-python"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragas-compat", "Ragas semantics checks (ragas-compat)")
    group.addoption(PYTHON_OPTION, default=None, metavar="PYTHON",
                    help="Interpreter whose installed Ragas the ragas_compat fixture checks "
                         "(default: the interpreter running pytest).")


def drift_message(audit: Audit) -> str:
    """One readable block: every unexpected row and every expectations-file problem."""
    ragas_version = audit.provenance.get("ragas_version") or "?"
    drifts = audit.unexpected
    count = len(drifts) + len(audit.expectation_problems)
    lines = [f"ragas-compat: {count} drift(s) in suite {audit.suite.name!r} ({audit.suite.source}) "
             f"against {audit.provenance.get('expectations', '?')} with Ragas {ragas_version}:"]
    for row in drifts:
        expected = row.expected.classification
        because = f" [expected because: {row.expected.reason}]" if row.expected.reason else ""
        lines.append(f"  - case {row.case.id!r}, target {row.target}: got {row.classification.name}, "
                     f"expected {expected}{because}; {row.classification.explanation}")
    for problem in audit.expectation_problems:
        lines.append(f"  - expectations: {problem}")
    return "\n".join(lines)


class RagasCompat:
    """What the ``ragas_compat`` fixture returns: runs case files through the installed Ragas."""

    def __init__(self, python: str, base_dir: Path, probe_cache: dict[Any, Any] | None = None) -> None:
        self.python = python
        self.base_dir = base_dir
        self._probe_cache = {} if probe_cache is None else probe_cache

    def _path(self, path: str | Path) -> Path:
        path = Path(path)
        return path if path.is_absolute() else self.base_dir / path

    def audit(self, cases: str | Path | list[str | Path], expectations: str | Path,
              *, timeout: float = 600.0) -> Audit:
        """Run the case file(s) through Ragas and classify every row against ``expectations``.

        Bad input (case file, expectations file) raises ``harness.errors.HarnessInputError``; a
        Ragas that cannot be run raises ``harness.pipeline.RagasUnavailable`` (or RagasNotInstalled).
        """
        from harness.compare.audit import build_audit
        from harness.compare.expectations import load_expectations
        from harness.pin import resolve_ragas_source
        from harness.pipeline import load_suite, provenance, run_audit

        case_files = [cases] if isinstance(cases, (str, Path)) else list(cases)
        paths = [self._path(p) for p in case_files]
        suite = load_suite(paths)
        expectations_path = self._path(expectations)
        if not expectations_path.exists():
            from harness.errors import HarnessInputError

            raise HarnessInputError(f"expectations file {expectations_path} does not exist",
                                    field="expectations", value=str(expectations_path))
        loaded = load_expectations(expectations_path)  # its source is the file name
        key = (self.python, tuple((str(p.resolve()), hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths))
        if key in self._probe_cache:  # same Ragas, same cases: classify the cached probe output anew
            source, probe = self._probe_cache[key]
            return build_audit(suite, probe.output, loaded, provenance(probe, source, suite, loaded))
        source = resolve_ragas_source(python=self.python)
        result = run_audit(suite, loaded, source, python=self.python, timeout=timeout)
        self._probe_cache[key] = (source, result.probe)
        return result.audit

    def check(self, cases: str | Path | list[str | Path], expectations: str | Path,
              *, timeout: float = 600.0) -> Audit:
        """``audit`` and assert there is no drift; the AssertionError lists every drift."""
        __tracebackhide__ = True
        audit = self.audit(cases, expectations, timeout=timeout)
        if audit.drift:
            raise AssertionError(drift_message(audit))
        return audit


@pytest.fixture(scope="session")
def _ragas_compat_probe_cache() -> dict[Any, Any]:
    """Probe outputs of this session, keyed by (interpreter, case file paths and contents)."""
    return {}


@pytest.fixture
def ragas_compat(request: pytest.FixtureRequest, _ragas_compat_probe_cache: dict[Any, Any]) -> RagasCompat:
    """Check case files against expected classifications with the installed Ragas."""
    python = request.config.getoption(PYTHON_OPTION) or sys.executable
    return RagasCompat(python, Path(request.path).parent, _ragas_compat_probe_cache)
