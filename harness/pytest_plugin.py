"""pytest plugin ``ragas_compat`` (entry point ``pytest11``): fail CI when Ragas's semantics drift.

The ``ragas_compat`` fixture runs a case file through the installed Ragas (in the probe
subprocess; Ragas is never imported into the pytest process) and asserts that the run has no
drift (``harness.compare.verdict``): every row is ``identical`` or explained by the pin's rules
(``pinned/expectations.toml``, shipped with the package), or by your expectations file (same format,
applied before the pin's rules; e.g. written by ``ragas-compat expect bless``)::

    def test_ragas_semantics(ragas_compat):
        ragas_compat.check("cases.json")                        # the pin's rules
        ragas_compat.check("cases.json", "expectations.toml")   # your entries, then the pin's rules

Relative paths are resolved against the directory of the test file. ``check`` returns the
``harness.compare.audit.Audit``; on drift it raises AssertionError listing each finding (kind, case,
target, got, expected, why). ``fail_on`` chooses the kinds that fail (default: all; see
``harness.compare.verdict``). ``--ragas-compat-python`` picks the interpreter whose Ragas is checked
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


def drift_message(audit: Audit, fail_on: frozenset[str] | None = None) -> str:
    """One readable block: every drift finding of a ``fail_on`` kind (default: all kinds)."""
    from harness.compare.verdict import FAIL_ON_DEFAULT, failing, findings

    ragas_version = audit.provenance.get("ragas_version") or "?"
    found = failing(findings(audit), FAIL_ON_DEFAULT if fail_on is None else fail_on)
    lines = [f"ragas-compat: {len(found)} drift(s) in suite {audit.suite.name!r} ({audit.suite.source}) "
             f"against {audit.provenance.get('expectations', '?')} with Ragas {ragas_version}:"]
    for finding in found:
        if finding.case_id is None:
            lines.append(f"  - {finding.kind}: expectations: {finding.message}")
            continue
        row = next((r for r in audit.rows if r.case.id == finding.case_id and r.target == finding.target), None)
        if row is None or finding.kind == "out_of_range":  # a pair, or a value out of range
            why = finding.message
        else:
            why = row.classification.explanation
        if row is not None and row.expected.explained:
            because = f" [expected because: {row.expected.reason}]" if row.expected.reason else ""
        else:
            because = " (no rule or case entry explains it)" if finding.kind != "out_of_range" else ""
        lines.append(f"  - {finding.kind}: case {finding.case_id!r}, target {finding.target}: got "
                     f"{finding.classification}, expected {finding.expected}{because}; {why}")
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

    def audit(self, cases: str | Path | list[str | Path], expectations: str | Path | None = None,
              *, timeout: float = 600.0) -> Audit:
        """Run the case file(s) through Ragas and classify every row against ``expectations``
        (None: the pin's rules; a file: its entries, then the pin's rules unless it says
        ``include_pin_rules = false``).

        Bad input (case file, expectations file) raises ``harness.errors.HarnessInputError``; a
        Ragas that cannot be run raises ``harness.errors.RagasUnavailable`` (``RagasNotInstalled``
        is one). Both are ``harness.errors.HarnessError``s, whose ``exit_code`` is what
        ``ragas-compat run`` exits with for them.
        """
        from harness.compare.audit import build_audit
        from harness.errors import HarnessInputError
        from harness.pin import resolve_ragas_source
        from harness.pipeline import load_run_expectations, load_suite, provenance, run_audit

        case_files = [cases] if isinstance(cases, (str, Path)) else list(cases)
        paths = [self._path(p) for p in case_files]
        suite = load_suite(paths)
        expectations_path = None if expectations is None else self._path(expectations)
        if expectations_path is not None and not expectations_path.exists():
            raise HarnessInputError(f"expectations file {expectations_path} does not exist",
                                    field="expectations", value=str(expectations_path))
        loaded = load_run_expectations(expectations_path)  # a file's source is its name
        key = (self.python, tuple((str(p.resolve()), hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths))
        if key in self._probe_cache:  # same Ragas, same cases: classify the cached probe output anew
            source, probe = self._probe_cache[key]
            return build_audit(suite, probe.output, loaded, provenance(probe, source, suite, loaded))
        source = resolve_ragas_source(python=self.python)
        result = run_audit(suite, loaded, source, python=self.python, timeout=timeout)
        self._probe_cache[key] = (source, result.probe)
        return result.audit

    def check(self, cases: str | Path | list[str | Path], expectations: str | Path | None = None,
              *, fail_on: str | list[str] | None = None, timeout: float = 600.0) -> Audit:
        """``audit`` and assert there is no drift of a ``fail_on`` kind (``"all"`` by default,
        ``"none"``, or kinds such as ``"divergence,error"``); the AssertionError lists each finding."""
        __tracebackhide__ = True
        from harness.compare.verdict import failing, findings, parse_fail_on

        kinds = parse_fail_on(fail_on)
        audit = self.audit(cases, expectations, timeout=timeout)
        if failing(findings(audit), kinds):
            raise AssertionError(drift_message(audit, kinds))
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
