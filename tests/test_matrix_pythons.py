"""Python as a matrix axis: ``0.4.3@3.13`` / ``--pythons``, environments per (release, Python), locks
per Python, and last-bit changes between Pythons explained by a drift rule (pinned/matrix-drift.toml).

The fast tests use fake installers and fake probe outputs; the slow one builds (or reuses) the real
0.4.3 environments for Python 3.11 and 3.13 in the matrix cache and runs the CLI on
tests/data/python_sum_order_cases.json."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.pipeline import load_suite
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.matrix import environments
from ragas_compat.tools.matrix.drift import build_matrix
from ragas_compat.tools.matrix.drift_rules import ColumnFacts, load_drift_rules, parse_drift_rules, ulps_between
from ragas_compat.tools.matrix.environments import (
    MARKER_NAME,
    Environment,
    InstallFailed,
    ensure_environments,
    find_python,
    load_version_rules,
    parse_entries,
    read_failure,
    read_marker,
    with_pythons,
)
from ragas_compat.tools.matrix.report import render_reports
from ragas_compat.tools.matrix.run import run_matrix
from ragas_compat.tools.matrix.verdict import matrix_findings

DATA = Path(__file__).parent / "data" / "python_sum_order_cases.json"
HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
OTHER = "3.99"  # a Python no machine has: every test that needs it fakes its interpreter
RULES = load_version_rules()


# ---------------------------------------------------------------- entries

def test_entries_take_a_python_after_the_release():
    entries = parse_entries("0.4.3@3.11, 0.4.3@py3.13, 0.3.9, checkout:../r@x")
    assert [(e.text, e.exact_version, e.python) for e in entries] == [
        ("0.4.3@3.11", "0.4.3", "3.11"), ("0.4.3@3.13", "0.4.3", "3.13"), ("0.3.9", "0.3.9", None),
        ("checkout:../r@x", None, None)]
    assert entries[3].path == Path("../r@x")  # a checkout path keeps its '@'
    with pytest.raises(HarnessInputError, match=r"MAJOR\.MINOR"):
        parse_entries("0.4.3@3")
    with pytest.raises(HarnessInputError, match="given twice"):
        parse_entries("0.4.3@3.13,0.4.3@py3.13")


def test_pythons_option_makes_one_column_per_release_and_python():
    entries = with_pythons(parse_entries("0.3.9,0.4.3@3.12,checkout:../r"), "3.11, 3.13")
    assert [e.text for e in entries] == ["0.3.9@3.11", "0.3.9@3.13", "0.4.3@3.12", "checkout:../r"]
    assert [e.python for e in entries] == ["3.11", "3.13", "3.12", None]
    assert with_pythons(parse_entries("0.4.3"), None)[0].python is None
    with pytest.raises(HarnessInputError, match="twice"):
        with_pythons(parse_entries("0.4.3"), "3.13,3.13")
    with pytest.raises(HarnessInputError, match="twice"):
        with_pythons(parse_entries("0.4.3@3.13,0.4.3"), "3.13")


def test_find_python_checks_what_each_candidate_is(tmp_path, monkeypatch):
    assert find_python(HERE) == sys.executable
    shim = tmp_path / "bin" / f"python{OTHER}"  # a pyenv-style shim that fails when run
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\nexit 127\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", str(shim.parent))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setattr("ragas_compat.tools.matrix.installers.find_uv", lambda: None)
    assert find_python(OTHER) is None
    real = tmp_path / "no-pyenv" / "versions" / f"{OTHER}.1" / "bin" / f"python{OTHER}"
    real.parent.mkdir(parents=True)
    real.write_text(f"#!/bin/sh\necho {OTHER}\n")
    real.chmod(0o755)
    assert find_python(OTHER) == str(real)


# ---------------------------------------------------------------- environments per (release, Python)

@dataclass
class BaseInstaller:
    """A fake installer that, like ours, builds from ``base_python``; records what it built from."""

    base_python: str = sys.executable
    fail: str | None = None
    built: list = field(default_factory=list)
    name = None  # record_lock freezes with this installer itself

    def create(self, env_dir: Path) -> Path:
        (env_dir / "bin").mkdir(parents=True)
        (env_dir / "bin" / "python").write_text(self.base_python)
        return env_dir / "bin" / "python"

    def install(self, python: Path, requirements, log: Path, constraints: Path | None = None) -> None:
        self.built.append((python.parent.parent.name, self.base_python, constraints.name if constraints else None))
        if self.fail:
            raise InstallFailed(self.fail)

    def freeze(self, python: Path) -> list[str]:
        return ["numpy==2.4.6"]

    def check_imports(self, python: Path, modules) -> None:
        pass


@pytest.fixture
def other_python(monkeypatch):
    monkeypatch.setattr(environments, "find_python", lambda tag: sys.executable if tag == HERE else f"/fake/python{tag}")


def test_each_python_gets_its_own_environment_beside_the_old_one(tmp_path, other_python):
    cache, installer = tmp_path / "envs", BaseInstaller()
    first = ensure_environments(parse_entries(f"0.4.3,0.4.3@{OTHER}"), cache_dir=cache, rules=RULES,
                                installer=installer, lock_dir=None, jobs=1)
    assert [e.status for e in first] == ["built", "built"]
    assert [e.python_tag for e in first] == [HERE, OTHER]
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == ["0.4.3", f"0.4.3@{OTHER}"]
    assert read_marker(cache / "0.4.3")["python"] == HERE and read_marker(cache / f"0.4.3@{OTHER}")["python"] == OTHER
    assert installer.built == [("0.4.3", sys.executable, None), (f"0.4.3@{OTHER}", f"/fake/python{OTHER}", None)]
    again = ensure_environments(parse_entries(f"0.4.3@{HERE},0.4.3@{OTHER}"), cache_dir=cache, rules=RULES,
                                installer=installer, lock_dir=None, jobs=1)
    assert [e.status for e in again] == ["reused", "reused"] and len(installer.built) == 2


def test_a_run_from_another_python_does_not_rebuild_over_the_environment(tmp_path, other_python, monkeypatch):
    cache = tmp_path / "envs"
    ensure_environments(parse_entries("0.4.3"), cache_dir=cache, rules=RULES, installer=BaseInstaller(),
                        lock_dir=None)
    before = (cache / "0.4.3" / MARKER_NAME).read_text()
    monkeypatch.setattr(environments, "_python_tag", lambda: OTHER)  # the harness now runs on another Python
    installer = BaseInstaller(base_python=f"/fake/python{OTHER}")
    [env] = ensure_environments(parse_entries("0.4.3"), cache_dir=cache, rules=RULES, installer=installer,
                                lock_dir=None)
    assert env.status == "built" and env.path == cache / f"0.4.3@{OTHER}"
    assert (cache / "0.4.3" / MARKER_NAME).read_text() == before  # the first Python's environment is untouched


def test_locks_per_python_and_an_honest_reason_when_one_does_not_fit(tmp_path, other_python):
    locks, cache = tmp_path / "locks", tmp_path / "envs"
    locks.mkdir()
    (locks / "0.1.21.txt").write_text(f"# uv freeze of a working Ragas 0.1.21 environment (Python {HERE}); ...\n"
                                      "numpy==1.26.4\n")
    installer = BaseInstaller(fail="error: Distribution numpy==1.26.4 can't be installed because it doesn't "
                                   "have a source distribution or wheel for the current platform")
    [env] = ensure_environments(parse_entries(f"0.1.21@{OTHER}"), cache_dir=cache, rules=RULES,
                                installer=installer, lock_dir=locks)
    assert env.status == "unavailable" and env.error.startswith("install: error: Distribution numpy==1.26.4")
    assert f"under the lock 0.1.21.txt, recorded on Python {HERE}" in env.error
    assert f"a lock for {OTHER} would be 0.1.21@{OTHER}.txt" in env.error
    assert read_failure(cache, f"0.1.21@{OTHER}")["python"] == OTHER and not (cache / f"0.1.21@{OTHER}").exists()
    (locks / f"0.1.21@{OTHER}.txt").write_text(f"# (Python {OTHER})\nnumpy==2.4.6\n")
    installer.fail = None
    [env] = ensure_environments(parse_entries(f"0.1.21@{OTHER}"), cache_dir=cache, rules=RULES,
                                installer=installer, lock_dir=locks)
    assert env.status == "built" and installer.built[-1][2] == f"0.1.21@{OTHER}.txt"
    assert read_marker(env.path)["lock_file"] == f"0.1.21@{OTHER}.txt"
    assert environments.record_lock(env, installer, tmp_path / "new").name == f"0.1.21@{OTHER}.txt"


def test_a_python_that_is_not_found_is_an_unavailable_column(tmp_path, monkeypatch):
    monkeypatch.setattr(environments, "find_python", lambda tag: None)
    [env] = ensure_environments(parse_entries(f"0.4.3@{OTHER}"), cache_dir=tmp_path, rules=RULES,
                                installer=BaseInstaller(), lock_dir=None)
    assert env.status == "unavailable" and env.error.startswith(f"python: no Python {OTHER} found")


# ---------------------------------------------------------------- drift between Pythons

def _ap(labels: list[int]) -> float:
    """Ragas 0.4.3's _calculate_average_precision, with this interpreter's sum()."""
    denominator = sum(labels) + 1e-10
    numerator = sum([(sum(labels[: i + 1]) / (i + 1)) * labels[i] for i in range(len(labels))])
    return numerator / denominator


def _outputs(suite, python: str, shift: int, ragas: str = "0.4.3", targets=None) -> dict:
    """Fake probe output: every case's AP, ``shift`` doubles away from this interpreter's value."""
    results = []
    for case in suite.cases:
        value = _ap(case.raw["verdicts"]["context_precision_with_reference"])
        if not case.id.endswith("-101"):  # the control list keeps its value
            for _ in range(shift):
                value = math.nextafter(value, 2.0)
        for target in targets or ("legacy:LLMContextPrecisionWithReference",):
            results.append({"case_id": case.id, "target": target, "api": target.split(":")[0],
                            "metric": "context_precision_with_reference", "value": value, "ragas_class": "x.Y",
                            "prompts": len(case.raw["retrieved_contexts"]), "warnings": [], "exported": True,
                            "fields_accepted": ["retrieved_contexts"], "fields_dropped": [], "received": {}})
    return {"probe_format": 1, "ragas": {"version": ragas, "import_error": None, "import_warnings": []},
            "python": {"version": python, "implementation": "CPython"}, "network_attempts": [], "results": results}


def _matrix(outputs: dict, labels=("0.4.3@3.11", "0.4.3@3.13")):
    suite = load_suite([DATA])

    def probe(cases, *, python, sys_path_prefix, timeout):
        return ProbeRun(True, None, outputs[python], "", 1.0)

    envs = [Environment(label, "release", "0.4.3", label, status="reused") for label in labels]
    columns, _ = run_matrix(envs, suite, probe=probe, jobs=1)
    return build_matrix(columns, {"name": suite.name, "cases": len(suite.cases)})


def test_last_bit_changes_between_pythons_are_explained_by_the_rule():
    suite = load_suite([DATA])
    matrix = _matrix({"0.4.3@3.11": _outputs(suite, "3.11.7", 0), "0.4.3@3.13": _outputs(suite, "3.13.0", 1)})
    assert [c.python for c in matrix.columns] == ["3.11.7", "3.13.0"]
    [drift] = matrix.drifts
    assert (drift.kind, drift.text, drift.rule) == ("summation_order", "summation order under Python ≥ 3.12",
                                                    "python-312-compensated-sum")
    assert sorted(case for case, _ in drift.rows) == sorted(c.id for c in suite.cases if not c.id.endswith("-101"))
    assert matrix_findings(matrix) == []  # explained: no finding
    row = next(r for r in matrix.rows if r.case_id == "ap-python-sum-00111")
    [cause] = row.changes[0]
    assert cause.rule == "python-312-compensated-sum" and "1 ulp" in cause.text
    files = render_reports(matrix)
    document = json.loads(files["matrix.json"])
    assert document["drifts"][0]["explained_by"] == "python-312-compensated-sum"
    assert [c["python"] for c in document["columns"]] == ["3.11.7", "3.13.0"]
    assert "summation order under Python ≥ 3.12; explained by drift rule python-312-compensated-sum" in files["matrix.md"]


@pytest.mark.parametrize(("before", "after", "shift", "ragas", "target", "why"), [
    ("3.11.7", "3.11.9", 1, "0.4.3", None, "same side of 3.12"),
    ("3.12.1", "3.13.0", 1, "0.4.3", None, "both compensated"),
    ("3.11.7", "3.13.0", 5, "0.4.3", None, "more than max_ulps apart"),
    ("3.11.7", "3.13.0", 1, "0.4.2", None, "another Ragas release"),
])
def test_the_rule_explains_nothing_else(before, after, shift, ragas, target, why):
    suite = load_suite([DATA])
    targets = (target,) if target else None
    matrix = _matrix({"a": _outputs(suite, before, 0, targets=targets),
                      "b": _outputs(suite, after, shift, ragas=ragas, targets=targets)}, labels=("a", "b"))
    assert matrix.drifts and all(d.rule is None for d in matrix.drifts), why
    assert any(f.kind == "unexplained" for f in matrix_findings(matrix)), why


def test_drift_rules_file_is_checked():
    rule = next(r for r in load_drift_rules() if r.id == "python-312-compensated-sum")
    assert rule.max_ulps and rule.python_crosses and rule.same_ragas
    old, new = ColumnFacts("a", "0.4.3", "3.11.7"), ColumnFacts("b", "0.4.3", "3.13.0")
    value = 0.47777777776185176
    assert rule.explains_change("value_changed", "collections:ContextUtilization", "context_precision_without_reference",
                                old, new, value, math.nextafter(value, 1))
    for kind, target, metric, facts in (
            ("value_changed", "legacy:Faithfulness", "faithfulness", (old, new)),  # no sum() of that kind there
            ("exception", "legacy:ContextUtilization", "context_precision_without_reference", (old, new)),
            ("value_changed", "legacy:ContextUtilization", "context_precision_without_reference",
             (old, ColumnFacts("b", "0.4.3", None)))):  # a Python not known explains nothing
        assert not rule.explains_change(kind, target, metric, *facts, value, math.nextafter(value, 1))
    with pytest.raises(HarnessInputError, match="unknown key"):
        parse_drift_rules({"drift_rule": [{"id": "x", "kind": "k", "explains": ["value_changed"], "cause": "c",
                                           "reason": "r", "python": "3.12"}]}, "t.toml")
    with pytest.raises(HarnessInputError, match="unknown table"):
        parse_drift_rules({"rule": []}, "t.toml")
    assert ulps_between(0.1, math.nextafter(0.1, 1)) == 1 and ulps_between(-0.0, 0.0) == 0
    assert ulps_between(float("nan"), 0.1) is None


# ---------------------------------------------------------------- the real thing (slow)

def _ragas_ap_with(python: str, lists: list[list[int]]) -> list[float]:
    """Ragas's AP arithmetic on ``lists`` computed by another interpreter (its own sum())."""
    code = ("import json,sys\nout=[]\nfor v in json.loads(sys.argv[1]):\n"
            "    d=sum(v)+1e-10\n    n=sum([(sum(v[:i+1])/(i+1))*v[i] for i in range(len(v))])\n"
            "    out.append(repr(n/d))\nprint(json.dumps(out))")
    proc = subprocess.run([python, "-I", "-c", code, json.dumps(lists)], capture_output=True, text=True,
                          check=True, timeout=60)
    return [float(x) for x in json.loads(proc.stdout)]


@pytest.mark.slow
def test_matrix_over_two_pythons_shows_the_last_bit_drift_with_its_cause(tmp_path):
    """Builds (once, into the matrix cache) or reuses the 0.4.3 environments of Python 3.11 and 3.13."""
    pythons = {tag: find_python(tag) for tag in ("3.11", "3.13")}
    missing = [tag for tag, found in pythons.items() if found is None]
    if missing:
        pytest.skip(f"no Python {' or '.join(missing)} found (python3.X on PATH, pyenv, uv python find): "
                    "the matrix over 0.4.3@3.11 and 0.4.3@3.13 needs both")
    out = tmp_path / "matrix"
    result = CliRunner().invoke(app, ["matrix", "--versions", "0.4.3", "--pythons", "3.11,3.13", "--cases",
                                      str(DATA), "--out", str(out), "--format", "json"],
                                env={**os.environ, "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    document = json.loads((out / "matrix.json").read_text())
    columns = document["columns"]
    assert [c["label"] for c in columns] == ["0.4.3@3.11", "0.4.3@3.13"] and all(c["available"] for c in columns)
    assert [c["python"][:4] for c in columns] == ["3.11", "3.13"]
    [drift] = document["drifts"]
    assert (drift["kind"], drift["cause"], drift["explained_by"]) == (
        "summation_order", "summation order under Python ≥ 3.12", "python-312-compensated-sum")
    suite = json.loads(DATA.read_text())
    lists = [case["verdicts"]["context_precision_with_reference"] for case in suite["cases"]]
    expected = {tag: dict(zip((c["id"] for c in suite["cases"]), _ragas_ap_with(python, lists), strict=True))
                for tag, python in pythons.items()}
    changed = {case for case in expected["3.11"] if expected["3.11"][case] != expected["3.13"][case]}
    assert len(changed) == 4  # the data file's four lists differ, its control does not
    assert {row["case_id"] for row in drift["rows"]} == changed
    for row in document["rows"]:
        if not row["metric"].startswith("context_precision"):
            continue
        cells = row["cells"]
        got = {tag: cells[f"0.4.3@{tag}"]["value"] for tag in ("3.11", "3.13")}
        assert got == {tag: expected[tag][row["case_id"]] for tag in got}, row["target"]
        assert cells["0.4.3@3.13"]["changed"] == (row["case_id"] in changed)
