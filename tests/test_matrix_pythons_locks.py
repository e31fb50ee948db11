"""Locks per Python: which lock a (release, Python) column builds under, and a per-Python lock that
declares "no environment for Python X.Y" (Ragas 0.1.x on 3.13: langchain-community<0.3 needs numpy<2,
which has no cp313 wheel).

The fast tests use a fake installer. The ``matrix_e2e`` ones ask the real resolver (uv, PyPI) whether each
committed declaration still holds, and run the CLI over 0.1.21@3.13 and 0.1.21@3.11 on two bundled cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.matrix import environments
from ragas_compat.tools.matrix.environments import (
    DEFAULT_LOCK_DIR,
    NO_ENVIRONMENT_HEADER,
    ensure_environments,
    find_lock,
    find_python,
    load_version_rules,
    no_environment_reason,
    parse_entries,
)
from ragas_compat.tools.matrix.installers import find_uv

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"
OTHER = "3.99"  # a Python no machine has
RULES = load_version_rules()
DECLARATIONS = sorted(p for p in DEFAULT_LOCK_DIR.glob("*@*.txt")
                      if NO_ENVIRONMENT_HEADER.fullmatch(p.read_text(encoding="utf-8").splitlines()[0]))


@dataclass
class CountingInstaller:
    base_python: str = sys.executable
    built: list = field(default_factory=list)
    name = None

    def create(self, env_dir: Path) -> Path:
        (env_dir / "bin").mkdir(parents=True)
        (env_dir / "bin" / "python").write_text("")
        return env_dir / "bin" / "python"

    def install(self, python: Path, requirements, log: Path, constraints: Path | None = None) -> None:
        self.built.append((python.parent.parent.name, constraints.name if constraints else None))

    def freeze(self, python: Path) -> list[str]:
        return ["numpy==2.4.6"]

    def check_imports(self, python: Path, modules) -> None:
        pass


def _declare(locks: Path, name: str, tag: str, *extra: str) -> Path:
    path = locks / name
    path.write_text("\n".join([f"# no environment for Python {tag}: numpy<2 has no cp{tag.replace('.', '')} wheel",
                               "# evidence: a resolver's answer", *extra]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def locks(tmp_path) -> Path:
    folder = tmp_path / "locks"
    folder.mkdir()
    (folder / "0.1.21.txt").write_text(f"# uv freeze ... (Python {HERE}); ...\nnumpy==1.26.4\n")
    return folder


@pytest.fixture
def other_python(monkeypatch):
    monkeypatch.setattr(environments, "find_python", lambda tag: sys.executable if tag == HERE else f"/fake/python{tag}")


# ---------------------------------------------------------------- which lock

def test_lock_selection_per_python(locks):
    assert find_lock(locks, "0.1.21", OTHER) == locks / "0.1.21.txt"  # no lock of its own: the general one
    assert find_lock(locks, "0.1.21") == find_lock(locks, "0.1.21", HERE) == locks / "0.1.21.txt"
    (locks / f"0.1.21@{OTHER}.txt").write_text(f"# (Python {OTHER})\nnumpy==2.4.6\n")
    assert find_lock(locks, "0.1.21", OTHER) == locks / f"0.1.21@{OTHER}.txt"
    assert find_lock(locks, "0.1.21", HERE) == locks / "0.1.21.txt"  # another Python's lock is not taken
    (locks / f"0.1.21@{HERE}.txt").write_text(f"# (Python {HERE})\nnumpy==1.26.4\n")
    assert find_lock(locks, "0.1.21", HERE) == locks / f"0.1.21@{HERE}.txt"
    assert find_lock(locks, "0.2.0", OTHER) is None and find_lock(None, "0.1.21", OTHER) is None


def test_the_committed_locks_of_0_1_x_on_3_13_are_declarations():
    for version in ("0.1.21", "0.1.22"):
        lock = find_lock(DEFAULT_LOCK_DIR, version, "3.13")
        assert lock is not None and lock.name == f"{version}@3.13.txt"
        reason = no_environment_reason(lock, "3.13")
        assert reason.startswith("no environment for Python 3.13: ")
        assert f"Ragas {version} requires langchain-community<0.3" in reason and "numpy<2" in reason
        assert no_environment_reason(find_lock(DEFAULT_LOCK_DIR, version, "3.11"), "3.11") is None
    assert [p.name for p in DECLARATIONS] == ["0.1.21@3.13.txt", "0.1.22@3.13.txt"]


# ---------------------------------------------------------------- a declaration in ensure_release

def test_a_declared_python_builds_nothing_and_says_why(tmp_path, locks, other_python):
    _declare(locks, f"0.1.21@{OTHER}.txt", OTHER)
    installer = CountingInstaller()
    envs = ensure_environments(parse_entries(f"0.1.21@{OTHER},0.1.21@{HERE}"), cache_dir=tmp_path / "envs",
                               rules=RULES, installer=installer, lock_dir=locks, jobs=1)
    assert [e.status for e in envs] == ["unavailable", "built"]
    assert envs[0].error == f"no environment for Python {OTHER}: numpy<2 has no cp{OTHER.replace('.', '')} wheel"
    assert envs[0].python_tag == OTHER and envs[0].python is None
    assert installer.built == [("0.1.21", "0.1.21.txt")]  # only the other Python's column was built
    assert not (tmp_path / "envs" / f"0.1.21@{OTHER}").exists()
    assert not (tmp_path / "envs" / ".failed" / f"0.1.21@{OTHER}.json").exists()  # no failed build to retry


def test_a_declaration_is_said_even_without_that_python(tmp_path, locks, monkeypatch):
    monkeypatch.setattr(environments, "find_python", lambda tag: None)
    _declare(locks, f"0.1.21@{OTHER}.txt", OTHER)
    [env] = ensure_environments(parse_entries(f"0.1.21@{OTHER}"), cache_dir=tmp_path, rules=RULES,
                                installer=CountingInstaller(), lock_dir=locks)
    assert env.error.startswith(f"no environment for Python {OTHER}: ")


def test_a_lock_that_is_not_a_declaration_builds(tmp_path, locks, other_python):
    (locks / f"0.1.21@{OTHER}.txt").write_text(f"# uv freeze ... (Python {OTHER})\n# no environment for Python "
                                               f"{OTHER}: not on the first line\nnumpy==2.4.6\n")
    installer = CountingInstaller()
    [env] = ensure_environments(parse_entries(f"0.1.21@{OTHER}"), cache_dir=tmp_path / "envs", rules=RULES,
                                installer=installer, lock_dir=locks)
    assert env.status == "built" and installer.built == [(f"0.1.21@{OTHER}", f"0.1.21@{OTHER}.txt")]


@pytest.mark.parametrize(("name", "tag", "extra", "match"), [
    (f"0.1.21@{HERE}.txt", OTHER, (), "declares no environment for Python 3.99, but the file is the lock of"),
    ("0.1.21.txt", OTHER, (), "write it as <version>@3.99.txt"),
    (f"0.1.21@{OTHER}.txt", OTHER, ("numpy==2.4.6",), "pins 'numpy==2.4.6'"),
])
def test_a_bad_declaration_is_bad_input_naming_the_file(tmp_path, name, tag, extra, match):
    lock = _declare(tmp_path, name, tag, *extra)
    asked = lock.stem.split("@")[1] if "@" in lock.stem else OTHER
    with pytest.raises(HarnessInputError, match=match) as raised:
        no_environment_reason(lock, asked)
    assert lock.name in str(raised.value)


# ---------------------------------------------------------------- the real thing (matrix_e2e)

def _compile(uv: str, requirement: str, python: str, tmp_path: Path) -> subprocess.CompletedProcess:
    tmp_path.mkdir(exist_ok=True)
    wanted = tmp_path / "in.txt"
    wanted.write_text(requirement + "\n")
    return subprocess.run([uv, "--no-progress", "--color", "never", "pip", "compile", "--no-python-downloads",
                           "--python-version", python,
                           "--python-platform", "x86_64-manylinux_2_28", "--only-binary", ":all:", "--no-header",
                           str(wanted)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})


def _check_declaration(declaration: Path, refused: subprocess.CompletedProcess,
                       accepted: subprocess.CompletedProcess) -> None:
    version, tag = declaration.stem.split("@")
    name = declaration.name
    assert accepted.returncode == 0, (name, accepted.stderr)
    assert "numpy==1.26.4" in accepted.stdout.split() and "langchain-community==0.2.19" in accepted.stdout.split(), \
        (name, accepted.stdout)
    assert refused.returncode != 0, f"{name}: ragas=={version} now resolves from wheels on {tag}: {refused.stdout}"
    assert "unsatisfiable" in refused.stderr, (name, refused.stderr)
    assert f"ragas=={version} depends on langchain-community<0.3" in " ".join(refused.stderr.split()), \
        (name, refused.stderr)
    assert "numpy>=1.26.0,<=1.26.4 has no usable wheels" in " ".join(refused.stderr.split()), (name, refused.stderr)


@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_each_declaration_still_holds_on_the_index(tmp_path):
    """Each declared release alone, wheels only: unsatisfiable on the declared Python because of
    langchain-community<0.3, and resolvable on 3.12 (so the index answers, and 3.13 is the difference).
    Every resolution waits on the index, not the processor: all of them run at once."""
    uv = find_uv()
    if uv is None:
        pytest.skip("no uv binary (pip install uv, or the matrix extra)")
    assert DECLARATIONS  # test_the_committed_locks_of_0_1_x_on_3_13_are_declarations names them
    with ThreadPoolExecutor(2 * len(DECLARATIONS)) as pool:
        pending = {}
        for declaration in DECLARATIONS:
            version, tag = declaration.stem.split("@")
            pending[declaration] = (
                pool.submit(_compile, uv, f"ragas=={version}", tag, tmp_path / f"{declaration.stem}-declared"),
                pool.submit(_compile, uv, f"ragas=={version}", "3.12", tmp_path / f"{declaration.stem}-3.12"))
        answers = {declaration: (refusing.result(), accepting.result())
                   for declaration, (refusing, accepting) in pending.items()}
    for declaration, (_, accepted) in answers.items():
        if accepted.returncode != 0 and "unsatisfiable" not in accepted.stderr:
            pytest.skip(f"the package index did not answer ({declaration.name}): "
                        f"{accepted.stderr.strip().splitlines()[-1:]}")
    for declaration, (refused, accepted) in answers.items():
        _check_declaration(declaration, refused, accepted)


BUNDLED = Path(__file__).parent.parent / "harness" / "cases" / "suites" / "default.json"
CASES = ("cp-worked-example", "recall-four-claims")


@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_matrix_says_no_environment_for_3_13_and_scores_3_11(tmp_path):
    """Builds (once, into the matrix cache) or reuses Ragas 0.1.21's Python 3.11 environment."""
    if find_python("3.11") is None:
        pytest.skip("no Python 3.11 found (python3.11 on PATH, pyenv, uv python find)")
    suite = json.loads(BUNDLED.read_text(encoding="utf-8"))
    suite["cases"] = [case for case in suite["cases"] if case["id"] in CASES]
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(suite), encoding="utf-8")
    cache = os.environ.get("RAGAS_COMPAT_MATRIX_CACHE")
    out = tmp_path / "matrix"
    result = CliRunner().invoke(app, ["matrix", "--versions", "0.1.21@3.13,0.1.21@3.11", "--cases", str(cases),
                                      "--out", str(out), "--fail-on", "none",
                                      *(["--cache-dir", cache] if cache else [])],
                                env={**os.environ, "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    columns = {c["label"]: c for c in json.loads((out / "matrix.json").read_text())["columns"]}
    assert columns["0.1.21@3.13"]["available"] is False
    assert columns["0.1.21@3.13"]["error"].startswith(
        "no environment for Python 3.13: Ragas 0.1.21 requires langchain-community<0.3")
    assert columns["0.1.21@3.11"]["available"] is True and columns["0.1.21@3.11"]["python"].startswith("3.11")
    assert columns["0.1.21@3.11"]["ragas_version"] == "0.1.21"
    markdown = (out / "matrix.md").read_text()
    assert "| 0.1.21@3.13 | 0.1.21 | 3.13 | unavailable: no environment for Python 3.13: Ragas 0.1.21" in markdown
