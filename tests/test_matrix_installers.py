"""The matrix installers: choosing one, uv's error lines, and small real uv builds.

The real builds (``six`` into a fresh virtualenv, seconds) need the uv binary and the package index;
they are skipped, saying which, when either is missing. Everything else runs offline, with a stand-in
``uv`` script where a binary is needed.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragas_compat.cli.matrix as cli_matrix
import ragas_compat.tools.matrix.environments as environments
from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.matrix.environments import (
    MARKER_NAME,
    PROBE_IMPORTS,
    Environment,
    ensure_environments,
    ensure_release,
    load_version_rules,
    parse_entries,
    read_marker,
    record_lock,
)
from ragas_compat.tools.matrix.installers import (
    ImportFailed,
    InstallFailed,
    PipInstaller,
    UvInstaller,
    choose_installer,
    find_uv,
    first_line,
)

RULES = load_version_rules()


def fake_uv(folder: Path, script: str) -> Path:
    """An executable ``uv`` in ``folder`` running ``script`` (sh)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "uv"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def no_uv(monkeypatch, tmp_path):
    """Neither the uv package nor a uv on PATH."""
    monkeypatch.setitem(sys.modules, "uv", None)  # `import uv` raises ImportError
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))


# ---------------------------------------------------------------- choosing

def test_without_uv_auto_is_pip_and_uv_is_an_input_error_saying_how_to_get_it(no_uv):
    assert find_uv() is None
    assert isinstance(choose_installer("auto"), PipInstaller) and isinstance(choose_installer("pip"), PipInstaller)
    with pytest.raises(HarnessInputError, match="pip install uv") as raised:
        choose_installer("uv")
    assert raised.value.field == "--installer" and "matrix" in str(raised.value)
    with pytest.raises(HarnessInputError, match="pip install uv"):
        UvInstaller()


def test_uv_on_path_is_found_when_the_package_is_not(no_uv, monkeypatch, tmp_path):
    binary = fake_uv(tmp_path / "bin", "exit 0\n")
    monkeypatch.setenv("PATH", str(binary.parent))
    assert find_uv() == str(binary)
    for name in ("auto", "uv"):
        chosen = choose_installer(name)
        assert isinstance(chosen, UvInstaller) and chosen.uv == str(binary) and chosen.name == "uv"
    assert choose_installer("pip").name == "pip"


def test_the_uv_package_binary_comes_first(monkeypatch, tmp_path):
    uv = pytest.importorskip("uv", reason="the uv package is not installed (pip install uv)")
    monkeypatch.setenv("PATH", str(fake_uv(tmp_path / "bin", "exit 0\n").parent))
    assert find_uv() == uv.find_uv_bin()


def test_an_unknown_installer_names_the_option():
    with pytest.raises(HarnessInputError, match="--installer: 'conda' is not one of auto, uv, pip") as raised:
        choose_installer("conda")
    assert raised.value.field == "--installer"


# ---------------------------------------------------------------- uv's error lines (output captured from uv runs)

UV_0_13_NO_SOLUTION = """\
Using Python 3.11.7 environment at: e1
error: No solution found when resolving dependencies
  cause: Because there is no version of six==99 and you require six==99, we can conclude that your requirements are unsatisfiable.
"""
UV_0_13_NETWORK = """\
Using Python 3.11.7 environment at: e1
error: Request failed after 3 retries in 11.4s
  cause: Failed to fetch: http://127.0.0.1:9/simple/attrs/
  cause: error sending request for url (http://127.0.0.1:9/simple/attrs/)
  cause: client error (Connect)
  cause: tcp connect error
  cause: Connection refused (os error 111)
"""
UV_0_13_BAD_REQUIREMENT = """\
error: Failed to parse: `not a requirement!!`
  cause: Expected one of `@`, `(`, `<`, `=`, `>`, `~`, `!`, `;`, found `a`
         not a requirement!!
             ^
"""
UV_0_9_NO_SOLUTION = """\
Using Python 3.11.7 environment at: e1
  × No solution found when resolving dependencies:
  ╰─▶ Because ragas-compat-no-such-x7 was not found in the package registry
      and you require ragas-compat-no-such-x7, we can conclude that your
      requirements are unsatisfiable.
"""
UV_0_9_NETWORK = """\
Using Python 3.11.7 environment at: e1
error: Failed to fetch: `http://127.0.0.1:9/simple/attrs/`
  Caused by: Request failed after 3 retries
  Caused by: error sending request for url (http://127.0.0.1:9/simple/attrs/)
  Caused by: tcp connect error
  Caused by: Connection refused (os error 111)
"""


def test_first_line_of_uv_output_is_the_error_with_its_root_cause():
    assert first_line(UV_0_13_NO_SOLUTION) == (
        "error: No solution found when resolving dependencies: Because there is no version of six==99 and you "
        "require six==99, we can conclude that your requirements are unsatisfiable.")
    assert first_line(UV_0_13_NETWORK) == ("error: Request failed after 3 retries in 11.4s: "
                                           "Connection refused (os error 111)")
    assert first_line(UV_0_13_BAD_REQUIREMENT) == ("error: Failed to parse: `not a requirement!!`: Expected one of "
                                                   "`@`, `(`, `<`, `=`, `>`, `~`, `!`, `;`, found `a`")
    assert first_line(UV_0_9_NO_SOLUTION) == (  # the boxed form's wrapped cause is one line again
        "× No solution found when resolving dependencies: Because ragas-compat-no-such-x7 was not found in the "
        "package registry and you require ragas-compat-no-such-x7, we can conclude that your requirements are "
        "unsatisfiable.")
    assert first_line(UV_0_9_NETWORK) == ("error: Failed to fetch: `http://127.0.0.1:9/simple/attrs/`: "
                                          "Connection refused (os error 111)")
    assert first_line("error: Failed to create virtualenv\n") == "error: Failed to create virtualenv"


def test_pip_error_lines_still_come_first():
    pip = ("  error: subprocess-exited-with-error\n\n  × Getting requirements to build wheel did not run successfully.\n"
           "  ╰─> [3 lines of output]\nERROR: Failed to build installable wheels for some pyproject.toml projects\n")
    assert first_line(pip) == "ERROR: Failed to build installable wheels for some pyproject.toml projects"
    assert first_line("Collecting six\nwarning: something\nOSError: disk full\n") == "OSError: disk full"


# ---------------------------------------------------------------- UvInstaller with a stand-in uv (offline)

def test_install_passes_the_interpreter_and_constraints_logs_everything_and_hides_pythonpath(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/harness/own/path")
    monkeypatch.chdir(tmp_path)
    uv = fake_uv(tmp_path / "bin", 'echo "args: $*"; echo "cwd: $(pwd)"; echo "PYTHONPATH=${PYTHONPATH-unset}" >&2\n')
    env_dir = tmp_path / "envs" / "1.0"
    (env_dir / "bin").mkdir(parents=True)
    (tmp_path / "lock.txt").write_text("six==1.17.0\n")
    log = env_dir / "pip-install.log"
    UvInstaller(uv=str(uv)).install(Path("envs/1.0/bin/python"), ["six", "attrs>=23"], log, Path("lock.txt"))
    text = log.read_text()
    python = tmp_path / "envs" / "1.0" / "bin" / "python"
    assert f"args: --no-progress --color never pip install --python {python} -c {tmp_path / 'lock.txt'} six attrs>=23\n" in text
    assert f"cwd: {env_dir}" in text  # not the caller's folder: its project configuration does not apply
    assert "PYTHONPATH=unset" in text


def test_a_failed_install_raises_with_uv_first_line_and_keeps_the_output(tmp_path):
    uv = fake_uv(tmp_path / "bin", f"cat >&2 <<'EOF'\n{UV_0_13_NO_SOLUTION}EOF\nexit 1\n")
    (tmp_path / "env" / "bin").mkdir(parents=True)
    log = tmp_path / "env" / "pip-install.log"
    with pytest.raises(InstallFailed, match=r"^error: No solution found when resolving dependencies: Because there "
                                            r"is no version of six==99"):
        UvInstaller(uv=str(uv)).install(tmp_path / "env" / "bin" / "python", ["six==99"], log)
    assert "cause: Because there is no version of six==99" in log.read_text()


def test_a_hanging_install_times_out(tmp_path):
    uv = fake_uv(tmp_path / "bin", "exec sleep 30\n")
    (tmp_path / "env" / "bin").mkdir(parents=True)
    with pytest.raises(InstallFailed, match=r"^uv pip install timed out after 0.5 s$"):
        UvInstaller(uv=str(uv), timeout=0.5).install(tmp_path / "env" / "bin" / "python", ["six"],
                                                     tmp_path / "env" / "log")


def test_a_failed_venv_is_a_venv_error(tmp_path):
    uv = fake_uv(tmp_path / "bin", "echo 'error: No interpreter found at path `/nope`' >&2\nexit 2\n")
    with pytest.raises(InstallFailed, match=r"^venv: error: No interpreter found at path `/nope`$"):
        UvInstaller(uv=str(uv), base_python="/nope").create(tmp_path / "env")


# ---------------------------------------------------------------- the marker records the installer (information only)

class NamedFake:
    """A fake installer (plain files, no processes) with a name, as the real ones have."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.installs = 0

    def create(self, env_dir: Path) -> Path:
        (env_dir / "bin").mkdir(parents=True)
        (env_dir / "bin" / "python").write_text("fake")
        return env_dir / "bin" / "python"

    def install(self, python: Path, requirements, log: Path, constraints: Path | None = None) -> None:
        self.installs += 1

    def freeze(self, python: Path) -> list[str]:
        return ["ragas==0.3.9"]

    def check_imports(self, python: Path, modules) -> None:
        pass


def test_the_installer_is_recorded_but_never_makes_an_environment_stale(tmp_path):
    pip = NamedFake("pip")
    [built] = ensure_environments(parse_entries("0.3.9"), cache_dir=tmp_path, rules=RULES, installer=pip,
                                  lock_dir=None)
    assert built.status == "built" and built.installer == "pip"
    assert read_marker(tmp_path / "0.3.9")["installer"] == "pip"
    uv = NamedFake("uv")
    [reused] = ensure_environments(parse_entries("0.3.9"), cache_dir=tmp_path, rules=RULES, installer=uv,
                                   lock_dir=None)
    assert reused.status == "reused" and reused.installer == "pip" and uv.installs == 0
    marker_file = tmp_path / "0.3.9" / MARKER_NAME  # a marker written before installers were recorded
    marker_file.write_text(json.dumps({k: v for k, v in read_marker(tmp_path / "0.3.9").items() if k != "installer"}))
    [old] = ensure_environments(parse_entries("0.3.9"), cache_dir=tmp_path, rules=RULES, installer=uv, lock_dir=None)
    assert old.status == "reused" and old.installer is None and uv.installs == 0


def test_the_default_installer_is_the_auto_choice(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(environments, "choose_installer", lambda name: asked.append(name) or NamedFake("uv"))
    [env] = ensure_environments(parse_entries("0.3.9"), cache_dir=tmp_path, rules=RULES, lock_dir=None)
    assert asked == ["auto"] and env.installer == "uv" and read_marker(tmp_path / "0.3.9")["installer"] == "uv"


# ---------------------------------------------------------------- the command line option

@pytest.fixture
def matrix_calls(monkeypatch):
    """``ragas-compat matrix`` with no environments built and no probe run: records the installer."""
    seen: dict = {}

    def fake_environments(entries, **kwargs):
        seen["installer"] = kwargs.get("installer")
        raise HarnessInputError("stopped after the installer was chosen")

    monkeypatch.setattr(cli_matrix, "ensure_environments", fake_environments)
    return seen


def invoke_matrix(tmp_path, *extra):
    return CliRunner().invoke(app, ["matrix", "--versions", "0.3.9", "--out", str(tmp_path / "m"),
                                    "--cache-dir", str(tmp_path / "envs"), *extra])


def test_cli_installer_option_reaches_the_builds(tmp_path, matrix_calls, no_uv):
    result = invoke_matrix(tmp_path, "--installer", "uv")
    assert result.exit_code == 2 and "pip install uv" in result.output and not matrix_calls
    result = invoke_matrix(tmp_path, "--installer", "conda")
    assert result.exit_code == 2 and "--installer" in result.output and not matrix_calls
    result = invoke_matrix(tmp_path, "--installer", "pip")
    assert "stopped after the installer was chosen" in result.output
    assert isinstance(matrix_calls.pop("installer"), PipInstaller)
    invoke_matrix(tmp_path)  # auto, and no uv here
    assert isinstance(matrix_calls.pop("installer"), PipInstaller)


def test_cli_auto_takes_uv_when_found(tmp_path, matrix_calls, no_uv, monkeypatch):
    binary = fake_uv(tmp_path / "bin", "exit 0\n")
    monkeypatch.setenv("PATH", str(binary.parent))
    invoke_matrix(tmp_path)
    assert isinstance(matrix_calls["installer"], UvInstaller) and matrix_calls["installer"].uv == str(binary)


# ---------------------------------------------------------------- real builds with uv (the index, seconds)

UV = find_uv()
NETWORK_SIGNS = ("Failed to fetch", "Request failed", "error sending request", "dns error", "connect error",
                 "Could not connect", "timed out", "offline", "network")


def real_uv() -> UvInstaller:
    if UV is None:
        pytest.skip("uv is not installed (pip install uv, or the test extra)")
    return UvInstaller(uv=UV, timeout=120.0)


@pytest.fixture(scope="module")
def six_env(tmp_path_factory) -> Path:
    """A real virtualenv made by ``uv venv`` with ``six`` installed by ``uv pip install``."""
    installer = real_uv()
    env_dir = tmp_path_factory.mktemp("uv") / "env"
    env_dir.mkdir()
    python = installer.create(env_dir)
    try:
        installer.install(python, ["six"], env_dir / "install.log")
    except InstallFailed as exc:
        if any(sign.lower() in str(exc).lower() for sign in NETWORK_SIGNS):
            pytest.skip(f"the package index is unreachable: {exc}")
        raise
    return python


def test_uv_builds_a_real_environment_and_freezes_it(six_env):
    assert six_env.exists() and not (six_env.parent / "pip").exists()  # uv venv: no pip in it
    frozen = real_uv().freeze(six_env)
    assert [line.split("==")[0] for line in frozen] == ["six"] and frozen[0].startswith("six==1.")
    assert "six==" in (six_env.parent.parent / "install.log").read_text()


def test_uv_environment_import_check(six_env):
    installer = real_uv()
    installer.check_imports(six_env, ["six", "json"])
    with pytest.raises(ImportFailed, match=r"^import ragas_compat_absent_x7: ModuleNotFoundError: "
                                           r"No module named 'ragas_compat_absent_x7'$"):
        installer.check_imports(six_env, ["six", "ragas_compat_absent_x7", "json"])


def test_uv_install_of_a_missing_distribution_fails_with_uv_error_line(six_env, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal (or pytest-xdist's workers) must not cut the cause
    log = six_env.parent.parent / "missing.log"
    with pytest.raises(InstallFailed) as raised:
        real_uv().install(six_env, ["ragas-compat-no-such-distribution-x7"], log)
    message = str(raised.value)
    assert message.startswith(("error: No solution found when resolving dependencies: Because ",
                               "× No solution found when resolving dependencies: Because ")), message
    assert "ragas-compat-no-such-distribution-x7 was not found in the package registry" in message
    assert "ragas-compat-no-such-distribution-x7" in log.read_text()  # uv's whole output is kept


class SixOnlyUv(UvInstaller):
    """The real uv installer, but it installs and import-checks ``six`` instead of Ragas."""

    def install(self, python: Path, requirements, log: Path, constraints: Path | None = None) -> None:
        super().install(python, ["six"], log, constraints)

    def check_imports(self, python: Path, modules) -> None:
        super().check_imports(python, ["six"])


def test_ensure_release_with_uv_records_it_in_the_marker(six_env, tmp_path):
    installer = SixOnlyUv(uv=UV, timeout=120.0)
    env = ensure_release("0.3.9", "0.3.9", tmp_path / "envs", RULES, installer, lock_dir=None)
    assert env.status == "built" and env.installer == "uv", env.error
    marker = read_marker(tmp_path / "envs" / "0.3.9")
    assert marker["installer"] == "uv" and marker["imports_checked"] == list(PROBE_IMPORTS)
    assert "six==" in (tmp_path / "envs" / "0.3.9" / "pip-install.log").read_text()
    # --record-locks freezes with what built the environment (it has no pip), whatever installer is chosen
    lock = record_lock(env, PipInstaller(), tmp_path / "locks")
    assert lock.read_text().startswith("# uv freeze of a working Ragas 0.3.9 environment")
    assert [line.split("==")[0] for line in lock.read_text().splitlines()[1:]] == ["six"]
    again = ensure_release("0.3.9", "0.3.9", tmp_path / "envs", RULES, installer, lock_dir=tmp_path / "locks")
    assert again.status == "reused" and again.installer == "uv"


class NothingInstalled(SixOnlyUv):
    def freeze(self, python: Path) -> list[str]:
        return []


def test_a_freeze_that_finds_nothing_writes_no_lock(tmp_path):
    env = Environment("0.3.9", "release", "0.3.9", str(tmp_path / "bin" / "python"), status="reused", path=tmp_path)
    with pytest.raises(InstallFailed, match="found no distributions; no lock written"):
        record_lock(env, NothingInstalled(uv=UV), tmp_path / "locks")
    assert not (tmp_path / "locks").exists()
