"""A real package: a non-editable wheel carries everything read at run time and works from any folder.

The wheel is built once per session (``pip wheel --no-deps`` with build isolation, from a clean copy
of the source tree: pyproject.toml, README.md, harness/, pinned/) into a temporary folder and installed
non-editable with ``pip install --no-deps`` (this interpreter's pip, ``--python`` the venv's) into a fresh
virtualenv made by this interpreter without pip of its own. Ragas and
the other dependencies come from the outer environment (this virtualenv) through a ``.pth`` file naming
its site-packages: ``python -m venv --system-site-packages`` would expose the *base* interpreter's
packages, not this virtualenv's, and installing Ragas itself takes minutes. Set
``RAGAS_COMPAT_WHEEL_FULL_INSTALL=1`` to install the wheel with its real dependencies instead
(``pip install -c pinned/constraints.txt 'WHEEL[ragas,test]'``, no outer environment).

From an empty folder, the installed ``ragas-compat run``, ``pin show`` and ``explain`` work, and a
user's test using the ``ragas_compat`` fixture passes with and without an expectations file.
Marked ``wheel`` and ``slow`` (runs by default, as in CI; deselect with ``-m 'not wheel'`` or ``-m 'not slow'``).
Also: ``python -m pytest`` in a project that has its own ``harness/`` package starts and passes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import built_once
from user_cases import JUDGE_SAID_TWO, write_suite

from ragas_compat.report.json_report import result_rows
from ragas_compat.resources import CHECKOUT_ROOT

SOURCE_ITEMS = ("pyproject.toml", "README.md", "harness", "pinned")
FULL_INSTALL = os.environ.get("RAGAS_COMPAT_WHEEL_FULL_INSTALL") == "1"


def test_the_explicit_package_list_matches_the_packages_on_disk():
    from setuptools import find_packages

    config = tomllib.loads((CHECKOUT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {"ragas_compat" + name.removeprefix("harness")
               for name in find_packages(where=str(CHECKOUT_ROOT), include=["harness*"])}
    assert set(config["packages"]) == on_disk | {"ragas_compat.pinned"}, (
        "pyproject.toml [tool.setuptools] packages must list every package under harness/ (and ragas_compat.pinned)")
    assert config["package-dir"] == {"ragas_compat": "harness", "ragas_compat.pinned": "pinned"}


def _build_wheel(out: Path) -> None:
    source = out / "source"
    source.mkdir()
    for item in SOURCE_ITEMS:
        origin = CHECKOUT_ROOT / item
        if origin.is_dir():
            shutil.copytree(origin, source / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, source / item)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
                   check=True, capture_output=True, text=True)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built once per test run (shared by pytest-xdist's workers: conftest.built_once)."""
    [built] = built_once(tmp_path_factory, "wheel", _build_wheel).glob("ragas_compat-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed non-editable (once per test run); its bin/ folder."""

    def install(folder: Path) -> None:
        env = folder / "venv"
        # without pip (ensurepip is most of a venv's creation) unless the venv's own pip installs the dependencies
        subprocess.run([sys.executable, "-m", "venv", *(() if FULL_INSTALL else ("--without-pip",)), str(env)],
                       check=True)
        python = env / "bin" / "python"
        if FULL_INSTALL:
            constraints = CHECKOUT_ROOT / "pinned" / "constraints.txt"
            subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(constraints),
                            f"{wheel}[ragas,test]"], check=True)
        else:
            purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     check=True, capture_output=True, text=True).stdout.strip()
            Path(purelib, "outer-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
            # this interpreter's pip installs into the venv (``pip --python``): the venv's console script and
            # site-packages, as the venv's own pip would
            subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                            str(wheel)], check=True)

    return built_once(tmp_path_factory, "wheel-env", install) / "venv" / "bin"


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


pytestmark = [pytest.mark.wheel, pytest.mark.slow]


def test_the_wheel_carries_the_runtime_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("ragas_compat/pinned/pin.toml", "ragas_compat/pinned/expectations.toml", "ragas_compat/pinned/versions.toml",
                   "ragas_compat/pinned/constraints.txt", "ragas_compat/pinned/matrix-locks/0.4.3.txt",
                   "ragas_compat/cases/cases.schema.json", "ragas_compat/cases/suites/default.json",
                   "ragas_compat/report/report.schema.json"):
        assert needed in names, needed


def test_the_installed_package_is_the_wheel_not_the_checkout(installed, empty):
    result = run([str(installed / "python"), "-c",
                  "import ragas_compat, ragas_compat.resources as r; print(ragas_compat.__file__); print(r.pinned_dir())"], empty)
    module, pinned = result.stdout.split()
    assert str(CHECKOUT_ROOT) not in module and str(CHECKOUT_ROOT) not in pinned
    assert pinned.endswith("ragas_compat/pinned")


def test_cli_works_from_an_empty_folder(installed, empty):
    cli = str(installed / "ragas-compat")
    result = run([cli, "run"], empty)
    assert result.returncode == 0, result.stdout + result.stderr
    out = empty / "ragas-compat-report"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "junit.xml", "report.html", "report.json", "report.md"]
    report = json.loads((out / "report.json").read_text())
    version = run([cli, "--version"], empty).stdout.strip()  # one source: ragas_compat.__version__
    assert version == f"ragas-compat {report['provenance']['harness_version']}"
    assert report["provenance"]["expectations"] == "pinned/expectations.toml"
    assert report["summary"]["drift"] is False
    assert all(r["explained_by"] for r in result_rows(report) if r["classification"] != "identical")

    pin = run([cli, "pin", "show"], empty)
    assert pin.returncode == 0, pin.stdout + pin.stderr
    assert "298b682" in pin.stdout

    explain = run([cli, "explain", "context-precision", "1,0,1"], empty)
    assert explain.returncode == 0, explain.stdout + explain.stderr
    assert "0.8333333332916666" in explain.stdout and "5/6" in explain.stdout
    assert sorted(p.name for p in empty.iterdir()) == ["ragas-compat-report"]  # nothing else written


FOREIGN_TEST = '''\
import harness
from harness.tools import double


def test_their_harness_is_theirs():
    assert harness.OWNER == "another project"
    assert double(21) == 42


def test_the_ragas_compat_plugin_is_loaded(request):
    plugin = request.config.pluginmanager.get_plugin("ragas_compat")
    assert plugin is not None and plugin.__name__ == "ragas_compat.pytest_plugin"
    assert not plugin.__file__.startswith(CHECKOUT)  # the wheel's plugin, not this checkout's
    assert "harness.pytest_plugin" not in __import__("sys").modules
'''


def a_project_with_its_own_harness(folder: Path) -> Path:
    """A user's project whose own top-level package is called ``harness`` (a common name)."""
    (folder / "harness").mkdir()
    (folder / "harness" / "__init__.py").write_text('OWNER = "another project"\n')
    (folder / "harness" / "tools.py").write_text("def double(x):\n    return 2 * x\n")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_theirs.py").write_text(f"CHECKOUT = {str(CHECKOUT_ROOT)!r}\n" + FOREIGN_TEST)
    return folder


USERS_TEST = """\
import sys

import pytest


def test_pin_rules(ragas_compat):
    audit = ragas_compat.check('cases.json')
    assert audit.rows and 'ragas' not in sys.modules


def test_own_expectations(ragas_compat):
    ragas_compat.check('cases_two.json', 'mine.toml')


def test_drift_without_them(ragas_compat):
    with pytest.raises(AssertionError, match="out_of_range: case 'judge-said-two'"):
        ragas_compat.check('cases_two.json')
"""


def test_pytest_starts_in_a_project_with_its_own_harness_package_and_a_users_fixture_tests_pass(installed, empty):
    """The ``pytest11`` entry loads ``ragas_compat.pytest_plugin``: a project's own ``harness/`` package
    neither hides the plugin (pytest would not start) nor is hidden by it; and in that project (one
    pytest run for both), a user's tests using the ``ragas_compat`` fixture pass with and without an
    expectations file."""
    project = a_project_with_its_own_harness(empty)
    tests = project / "tests"
    write_suite(tests / "cases.json")
    write_suite(tests / "cases_two.json", [JUDGE_SAID_TWO])
    (tests / "mine.toml").write_text(
        '[[case]]\ncase = "judge-said-two"\ntargets = ["collections:ContextRecall"]\n'
        'classification = "divergence"\nallow_out_of_range = true\n'
        'reason = "our judge sometimes answers 2; we know recall goes above 1 there"\n')
    (tests / "test_ragas_semantics.py").write_text(USERS_TEST)
    result = run([str(installed / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "tests"],
                 project)
    assert "Error while loading plugin" not in result.stdout + result.stderr, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout
    for name in ("test_theirs.py::test_their_harness_is_theirs", "test_theirs.py::test_the_ragas_compat_plugin_is_loaded",
                 "test_ragas_semantics.py::test_pin_rules", "test_ragas_semantics.py::test_own_expectations",
                 "test_ragas_semantics.py::test_drift_without_them"):
        assert f"PASSED tests/{name}" in result.stdout, (name, result.stdout)
