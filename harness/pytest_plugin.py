"""pytest plugin ``ragas_compat`` (entry point ``pytest11``): fail CI when Ragas's semantics drift.

The ``ragas_compat`` fixture runs a case file through the installed Ragas (in the probe
subprocess; Ragas is never imported into the pytest process) and asserts that the run has no
drift (``ragas_compat.compare.findings``): every row is ``identical`` or explained by the pin's rules
(``pinned/expectations.toml``, shipped with the package), or by your expectations file (same format,
applied before the pin's rules; e.g. written by ``ragas-compat expect bless``)::

    def test_ragas_semantics(ragas_compat):
        ragas_compat.check("cases.json")                        # the pin's rules
        ragas_compat.check("cases.json", "expectations.toml")   # your entries, then the pin's rules

Relative paths are resolved against the directory of the test file. ``check`` returns the
``ragas_compat.compare.audit.Audit``; on drift it raises AssertionError listing each finding (kind, case,
target, got, expected, why). ``fail_on`` chooses the kinds that fail (default: all; see
``ragas_compat.compare.verdict``); a suite that scores no row fails too. ``--ragas-compat-python`` picks the interpreter whose Ragas is checked
(default: the one running pytest).

Within one pytest session the probe runs once per (interpreter, case file contents): further
checks of the same case files against other expectations files reuse its output.

**One test item per (case, Ragas target).** List case files in the ini option ``ragas_compat_cases``
(``cases.json`` or ``cases.json::expectations.toml``, relative to the rootdir) and pytest collects
each file as one item per row, named ``<case id>[<Ragas target>:<classification>]``, e.g.
``cp-worked-example[legacy:ContextPrecision:epsilon]``; an item fails when its row has drift (of a
``ragas_compat_fail_on`` kind, default all) with "expected X, got Y" and why. What else makes ``run``'s
verdict is an item too, as in junit.xml: a legacy-vs-collections pair with findings
(``<case id>[<legacy> vs <collections>:<classification>]``), an expectations-file problem
(``expectations[problem-N]``), a recorded score the replay does not reproduce (``<case id>[replay
<target>]``) and a dataset-level finding (``findings[finding-N]``); each fails when of a fail-on kind,
so the items pass exactly when ``run`` with the same kinds exits 0. The probe runs once per file, at
collection. The gate cannot pass vacuously: a listed file that is missing, unreadable, not a
``.json`` file, outside what pytest collects (testpaths) or that scores no row is a failing item
naming it::

    # pytest.ini / [tool.pytest.ini_options]
    ragas_compat_cases = ["tests/ragas_cases.json::tests/ragas_expectations.toml"]

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
    from ragas_compat.compare.audit import Audit

PYTHON_OPTION = "--ragas-compat-python"


CASES_INI = "ragas_compat_cases"
FAIL_ON_INI = "ragas_compat_fail_on"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragas-compat", "Ragas semantics checks (ragas-compat)")
    group.addoption(PYTHON_OPTION, default=None, metavar="PYTHON",
                    help="Interpreter whose installed Ragas the ragas_compat fixture checks "
                         "(default: the interpreter running pytest).")
    parser.addini(CASES_INI, type="linelist", default=[],
                  help="Case files collected as one test item per (case, Ragas target): 'cases.json' or "
                       "'cases.json::expectations.toml', relative to the rootdir.")
    parser.addini(FAIL_ON_INI, default="all",
                  help="Drift kinds that fail a collected item: all (default), none, or e.g. divergence,error.")


def _configured(config: pytest.Config) -> dict[Path, Path | None]:
    """Case file -> its expectations file (None: the pin's rules), from ``ragas_compat_cases``."""
    root = Path(str(config.rootpath))
    out: dict[Path, Path | None] = {}
    for entry in config.getini(CASES_INI):
        cases, _, expectations = str(entry).partition("::")
        out[(root / cases.strip()).resolve()] = (root / expectations.strip()).resolve() if expectations.strip() \
            else None
    return out


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".json" and file_path.resolve() in _configured(parent.config):
        return RagasCompatFile.from_parent(parent, path=file_path)
    return None


_COLLECTED_KEY = pytest.StashKey[set]()  # configured case files pytest collected in this session


def _config_problem(path: Path) -> str | None:
    """Why a configured case file cannot be collected at all (None: it can)."""
    if not path.exists():
        return "does not exist"
    if not path.is_file():
        return "is not a regular file"
    if path.suffix != ".json":
        return f"does not end in .json (it ends in {path.suffix or 'nothing'!r}; pytest collects only .json)"
    try:
        with path.open("rb") as handle:
            handle.read(1)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None


def _selected(config: pytest.Config, path: Path) -> bool:
    """Would this session collect ``path`` if it were collectable? With no paths on the command
    line, every configured file must be (pytest reads testpaths, or the rootdir); with paths given,
    only files under one of them."""
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return True
    for arg in config.args:
        given = (Path(str(config.invocation_params.dir)) / arg.split("::")[0]).resolve()
        if path == given or given in path.parents:
            return True
    return False


class RagasCompatGate(pytest.Item):
    """A configured case file that produced no test item: the session fails instead of passing."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        raise RagasDrift(f"ragas-compat: {CASES_INI}: {self.reason}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"ragas-compat {CASES_INI}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[Any]) -> None:
    """A gate that cannot pass vacuously: a configured case file that is missing, unreadable, not a
    ``.json`` file, or outside what pytest collects (testpaths) adds a failing item naming it."""
    collected = config.stash.get(_COLLECTED_KEY, set())
    for path, _expectations in _configured(config).items():
        if path in collected:
            continue
        problem = _config_problem(path)
        if problem is None and not _selected(config, path):
            continue  # the command line narrowed the session to other paths
        reason = (f"{path} {problem}" if problem is not None else
                  f"{path} was not collected: it lies outside the paths pytest collects (testpaths "
                  f"{config.getini('testpaths') or '(none: the rootdir)'}, or --ignore), so none of its rows is checked")
        items.append(RagasCompatGate.from_parent(session, name=f"{CASES_INI}[{path.name}]", reason=reason))


class RagasDrift(AssertionError):
    """A collected row's drift: the message says expected vs got and why."""


def row_message(row: Any, found: list[Any]) -> str:
    """``expected X, got Y`` for one row and why (its classification's explanation, the rule or entry)."""
    expected = row.expected
    because = (f"; {expected.label} expects {expected.classification}: {expected.reason}"
               if expected.explained and expected.reason else "; no rule or case entry explains it")
    lines = [f"ragas-compat: case {row.case.id!r}, {row.target} ({row.spec.name}): expected "
             f"{expected.classification}, got {row.classification.name}{because}",
             f"  why: {row.classification.explanation}"]
    lines += [f"  {f.kind}: {f.message}" for f in found if f.kind == "out_of_range"]
    return "\n".join(lines)


class RagasCompatFile(pytest.File):
    """A case file listed in ``ragas_compat_cases``: one item per (case, Ragas target)."""

    def collect(self):
        from ragas_compat.compare.findings import Finding
        from ragas_compat.pipeline import may_score_a_row, no_row_message

        cache = self.config.stash.setdefault(_CACHE_KEY, {})
        python = self.config.getoption(PYTHON_OPTION) or sys.executable
        expectations = _configured(self.config).get(Path(self.path).resolve())
        self.config.stash.setdefault(_COLLECTED_KEY, set()).add(Path(self.path).resolve())
        checker = RagasCompat(python, Path(self.path).parent, cache)
        paths, suite, loaded = checker._loaded(Path(self.path), expectations)
        if not may_score_a_row(suite):  # known before a probe is started
            yield RagasCompatGate.from_parent(self, name="no-rows", reason=f"{self.path} yields no items: "
                                              + no_row_message(suite))
            return
        audit = checker._audited(paths, suite, loaded, timeout=600.0)
        if not audit.rows:
            yield RagasCompatGate.from_parent(self, name="no-rows", reason=(
                f"{self.path} yields no items: no (case, Ragas target) row was scored, so nothing was checked"))
        for row in audit.rows:
            yield RagasCompatItem.from_parent(self, name=f"{row.case.id}[{row.target}:{row.classification.name}]",
                                              row=row)
        # what else makes run's verdict, as junit.xml shows it: a pair with findings, an expectations problem,
        # a recorded score the replay does not reproduce, a dataset-level finding (the verdict counts them all)
        for pair, found in audit.pairs_with_findings():
            if found:
                yield RagasCompatFinding.from_parent(
                    self, name=f"{pair.case.id}[{pair.legacy.target} vs {pair.collections.target}:"
                               f"{pair.classification.name}]", found=found,
                    message=f"ragas-compat: case {pair.case.id!r}, {pair.legacy.target} vs {pair.collections.target}: "
                            + "; ".join(f"{f.kind}: {f.message}" for f in found))
        for index, problem in enumerate(audit.expectation_problems):  # each an ``unexplained`` finding (findings.py)
            yield RagasCompatFinding.from_parent(self, name=f"expectations[problem-{index}]",
                                                 found=(Finding("unexplained", None, None, None, None, problem),),
                                                 message=f"ragas-compat: expectations file problem: {problem}")
        named: dict[str, int] = {}
        for index, finding in enumerate(audit.unattached_findings()):
            name = (f"{finding.case_id}[replay {finding.target}]" if finding.kind == "replay_mismatch"
                    and finding.case_id is not None else f"findings[finding-{index}]")
            named[name] = named.get(name, 0) + 1  # one (case, target) may have two replay findings
            yield RagasCompatFinding.from_parent(self, name=name if named[name] == 1 else f"{name}-{named[name]}",
                                                 found=(finding,), message=f"ragas-compat: {finding.line()}")


class RagasCompatItem(pytest.Item):
    def __init__(self, *, row: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row = row

    def runtest(self) -> None:
        from ragas_compat.compare.findings import row_findings
        from ragas_compat.compare.verdict import failing, parse_fail_on

        found = failing(row_findings(self.row), parse_fail_on(self.config.getini(FAIL_ON_INI)))
        if found:
            raise RagasDrift(row_message(self.row, found))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RagasDrift):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"ragas-compat {self.row.case.id} {self.row.target}"


class RagasCompatFinding(pytest.Item):
    """A finding no row item shows (a legacy-vs-collections pair's, an expectations problem, a replay
    mismatch, a dataset-level one): fails when one of ``found`` is of a ``ragas_compat_fail_on`` kind."""

    def __init__(self, *, found: tuple[Any, ...], message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.found, self.message = found, message

    def runtest(self) -> None:
        from ragas_compat.compare.verdict import failing, parse_fail_on

        if failing(list(self.found), parse_fail_on(self.config.getini(FAIL_ON_INI))):
            raise RagasDrift(self.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RagasDrift):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"ragas-compat {self.name}"


_CACHE_KEY = pytest.StashKey[dict]()


def drift_message(audit: Audit, fail_on: frozenset[str] | None = None) -> str:
    """One readable block: every drift finding of a ``fail_on`` kind (default: all kinds)."""
    from ragas_compat.compare.verdict import FAIL_ON_DEFAULT, failing

    ragas_version = audit.provenance.get("ragas_version") or "?"
    found = failing(audit.findings, FAIL_ON_DEFAULT if fail_on is None else fail_on)
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

        Bad input (case file, expectations file) raises ``ragas_compat.errors.HarnessInputError``; a
        Ragas that cannot be run raises ``ragas_compat.errors.RagasUnavailable`` (``RagasNotInstalled``
        is one). Both are ``ragas_compat.errors.HarnessError``s, whose ``exit_code`` is what
        ``ragas-compat run`` exits with for them.
        """
        return self._audited(*self._loaded(cases, expectations), timeout=timeout)

    def _loaded(self, cases: str | Path | list[str | Path],
                expectations: str | Path | None) -> tuple[list[Path], Any, Any]:
        """The case files' paths, their suite and the expectations, read and checked (no probe yet). The
        suite's raw objects are packed (``cases.loader.packed``, as ``run`` holds them): read whole only for
        the probe's request, and the collected items keep their rows' cases for the whole session."""
        from ragas_compat.cases.loader import packed
        from ragas_compat.errors import HarnessInputError
        from ragas_compat.pipeline import load_run_expectations, load_suite

        case_files = [cases] if isinstance(cases, (str, Path)) else list(cases)
        paths = [self._path(p) for p in case_files]
        suite = packed(load_suite(paths))
        expectations_path = None if expectations is None else self._path(expectations)
        if expectations_path is not None and not expectations_path.exists():
            raise HarnessInputError(f"expectations file {expectations_path} does not exist",
                                    field="expectations", value=str(expectations_path))
        return paths, suite, load_run_expectations(expectations_path)  # a file's source is its name

    def _audited(self, paths: list[Path], suite: Any, loaded: Any, *, timeout: float) -> Audit:
        from ragas_compat.compare.audit import build_audit
        from ragas_compat.pin import resolve_ragas_source
        from ragas_compat.pipeline import provenance, run_audit

        key = (self.python, tuple((str(p.resolve()), hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths))
        if key in self._probe_cache:  # same Ragas, same cases: classify the cached probe output anew
            source, probe = self._probe_cache[key]
            return build_audit(suite, probe.output, loaded, provenance(probe, source, suite, loaded))
        source = resolve_ragas_source(python=self.python, timeout=timeout)
        result = run_audit(suite, loaded, source, python=self.python, timeout=timeout)
        self._probe_cache[key] = (source, result.probe)
        return result.audit

    def check(self, cases: str | Path | list[str | Path], expectations: str | Path | None = None,
              *, fail_on: str | list[str] | None = None, timeout: float = 600.0) -> Audit:
        """``audit`` and assert there is no drift of a ``fail_on`` kind (``"all"`` by default,
        ``"none"``, or kinds such as ``"divergence,error"``); the AssertionError lists each finding."""
        __tracebackhide__ = True
        from ragas_compat.compare.verdict import failing, parse_fail_on
        from ragas_compat.pipeline import may_score_a_row, no_row_message

        kinds = parse_fail_on(fail_on)
        paths, suite, loaded = self._loaded(cases, expectations)
        if not may_score_a_row(suite):  # known before a probe is started
            raise AssertionError(f"ragas-compat: suite {suite.name!r} ({suite.source}): {no_row_message(suite)}")
        audit = self._audited(paths, suite, loaded, timeout=timeout)
        if not audit.rows:
            raise AssertionError(f"ragas-compat: suite {audit.suite.name!r} ({audit.suite.source}): no (case, Ragas "
                                 "target) row was scored, so nothing was checked")
        if failing(audit.findings, kinds):
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
