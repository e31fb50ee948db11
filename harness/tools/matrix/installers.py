"""How a matrix environment is made: a virtualenv, one install into it, an import check.

Two installers do the same four steps (``Installer``): ``PipInstaller`` (``python -m venv`` +
``pip install``, pip's cache reused) and ``UvInstaller`` (``uv venv`` + ``uv pip install``: the same
requirements and constraints, resolved and installed by uv, whose files are hard-linked from uv's
cache, so environments share their disk and a warm rebuild takes seconds). The import check is the
same code for both. ``choose_installer("auto")`` takes uv when its binary is found (the ``uv``
package, ``pip install uv`` or the ``matrix`` extra, else ``uv`` on ``PATH``), pip otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from ragas_compat.errors import HarnessInputError

INSTALLER_CHOICES: tuple[str, ...] = ("auto", "uv", "pip")


class InstallFailed(Exception):
    """Creating the virtualenv or installing into it failed; ``str()`` is the error's first line."""

    stage = "install"


class ImportFailed(InstallFailed):
    """The environment installed but a module the probe needs does not import in it."""

    stage = "import"


# Run by the new environment's interpreter (``-I``: no user site, no PYTHONPATH): import each module
# in order, stop at the first failure, print one JSON line {"module", "error"} for it, exit 1.
_IMPORT_CHECK = """
import importlib, json, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        print(json.dumps({"module": name, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}))
        sys.exit(1)
"""


class Installer(Protocol):
    """What builds one matrix environment. ``name`` ("pip", "uv") is recorded in the environment's
    marker as information; an installer without one records nothing."""

    def create(self, env_dir: Path) -> Path:
        """Create a virtualenv at ``env_dir``; return its interpreter."""

    def install(self, python: Path, requirements: Sequence[str], log: Path, constraints: Path | None = None) -> None:
        """Install ``requirements`` (under pip-style ``constraints`` if given) into that interpreter's
        environment, writing the installer's output to ``log``; raise InstallFailed."""

    def freeze(self, python: Path) -> list[str]:
        """``name==version`` of every distribution installed in the environment."""

    def check_imports(self, python: Path, modules: Sequence[str]) -> None:
        """Import ``modules`` with that interpreter; raise ImportFailed naming the first that fails."""


# uv's error chains: ``error: <what>`` then ``cause: ...`` (0.13) or ``Caused by: ...`` (0.9) lines,
# or the boxed form ``× <what>`` then ``├─▶ ...`` / ``╰─▶ ...`` lines wrapped at 80 columns.
_UV_HEADS = ("error:", "× ")
_UV_CAUSES = ("cause:", "Caused by:", "├─▶", "╰─▶")
_UV_STOPS = ("help:", "hint:", "warning:")


def first_line(text: str) -> str:
    """The line a reader needs first: pip's first ``ERROR:`` line; else uv's first ``error:`` (or
    ``×``) line joined with the last cause of its chain (the root cause: ``error: No solution found
    when resolving dependencies: Because there is no version of six==99 ...``); else the last
    non-empty line."""
    lines = [line.strip() for line in (text or "").splitlines()]
    present = [line for line in lines if line]
    for line in present:
        if line.startswith("ERROR:"):
            return line
    head = next((i for i, line in enumerate(lines) if line.startswith(_UV_HEADS)), None)
    if head is not None:
        causes: list[list[str]] = []
        for line in lines[head + 1:]:
            if not line or line.startswith(_UV_STOPS) or line.startswith(_UV_HEADS):
                break
            marker = next((m for m in _UV_CAUSES if line.startswith(m)), None)
            if marker is not None:
                causes.append([line[len(marker):].strip()])
            elif causes and lines[head].startswith("×"):
                causes[-1].append(line)  # the boxed form wraps a long cause onto indented lines
        found = lines[head]
        if causes:
            found = f"{found.rstrip(':')}: {' '.join(causes[-1])}"
        return found
    return present[-1] if present else "(no output)"


def import_failure_text(stdout: str, stderr: str) -> str:
    """``import ragas.metrics: ModuleNotFoundError: No module named 'nltk'`` from the check's output."""
    for line in reversed((stdout or "").splitlines()):
        try:
            found = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict) and "module" in found:
            return f"import {found['module']}: {found.get('error')}"
    return f"import check failed: {first_line(stderr or stdout)}"


def _child_env(*drop: str) -> dict[str, str]:
    """This process's environment without PYTHONPATH / PYTHONHOME (and ``drop``): the new
    environment must not see the harness's own path. Without COLUMNS / LINES too: uv wraps its
    error chain at COLUMNS when its output is a pipe, and ``first_line`` must read the same error
    whatever the user's terminal width (a cause wrapped at 80 columns lost its end)."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "COLUMNS", "LINES", *drop)
    return {k: v for k, v in os.environ.items() if k not in dropped}


def check_imports(python: Path, modules: Sequence[str], timeout: float) -> None:
    """Import ``modules`` in order with ``python -I``; raise ImportFailed naming the first that fails
    (every installer's ``check_imports``)."""
    env = _child_env()
    env["RAGAS_DO_NOT_TRACK"] = "true"
    try:
        proc = subprocess.run([str(python), "-I", "-c", _IMPORT_CHECK, *modules], capture_output=True,
                              text=True, check=False, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ImportFailed(f"import check timed out after {timeout:g} s") from None
    if proc.returncode != 0:
        raise ImportFailed(import_failure_text(proc.stdout, proc.stderr))


def _freeze_lines(output: str) -> list[str]:
    """``name==version`` lines of a freeze, without the packaging tools, sorted case-insensitively."""
    return sorted((line.strip() for line in output.splitlines()
                   if "==" in line and not line.startswith(("pip==", "setuptools==", "wheel=="))),
                  key=str.lower)


def _run_logged(command: list[str], log: Path, timeout: float, what: str, **kwargs) -> None:
    """Run ``command`` with its stdout and stderr in ``log``; raise InstallFailed with the first line of
    its stderr when it fails or times out."""
    with open(log, "w", encoding="utf-8") as handle:
        try:
            proc = subprocess.run(command, stdout=handle, stderr=subprocess.PIPE, text=True, check=False,
                                  timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
        except subprocess.TimeoutExpired:
            raise InstallFailed(f"{what} timed out after {timeout:g} s") from None
        handle.write(proc.stderr or "")
    if proc.returncode != 0:
        raise InstallFailed(first_line(proc.stderr))


@dataclass
class PipInstaller:
    """``python -m venv`` with the harness's base interpreter, then ``pip install`` (pip cache reused)."""

    name: ClassVar[str] = "pip"
    base_python: str = sys.executable
    timeout: float = 1800.0

    def create(self, env_dir: Path) -> Path:
        proc = subprocess.run([self.base_python, "-m", "venv", str(env_dir)], capture_output=True, text=True,
                              check=False, timeout=self.timeout)
        if proc.returncode != 0:
            raise InstallFailed(f"venv: {first_line(proc.stderr or proc.stdout)}")
        return env_dir / "bin" / "python"

    def install(self, python: Path, requirements: Sequence[str], log: Path, constraints: Path | None = None) -> None:
        command = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                   "--progress-bar", "off", *(["-c", str(constraints)] if constraints else []), *requirements]
        _run_logged(command, log, self.timeout, "pip install", env=_child_env("PIP_NO_CACHE_DIR"))

    def freeze(self, python: Path) -> list[str]:
        proc = subprocess.run([str(python), "-m", "pip", "freeze", "--all", "--disable-pip-version-check"],
                              capture_output=True, text=True, check=False, timeout=self.timeout)
        return _freeze_lines(proc.stdout)

    def check_imports(self, python: Path, modules: Sequence[str]) -> None:
        check_imports(python, modules, self.timeout)


def find_uv() -> str | None:
    """The uv binary: the ``uv`` package's (``pip install uv``), else ``uv`` on ``PATH``, else None."""
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def _uv_not_found() -> HarnessInputError:
    return HarnessInputError("--installer uv: the uv binary was not found; install it with `pip install uv` "
                             "(or the matrix extra: pip install 'ragas-compat[matrix]'), or use --installer pip",
                             field="--installer", value="uv")


@dataclass
class UvInstaller:
    """``uv venv`` with the harness's base interpreter (no pip in it), then ``uv pip install`` (files
    hard-linked from uv's cache, ``UV_CACHE_DIR`` or uv's default). uv runs from the environment's
    folder so no project configuration of the caller's current folder applies (user-level uv
    configuration and ``UV_*`` variables do)."""

    name: ClassVar[str] = "uv"
    uv: str | None = None  # the binary; found with find_uv() when not given
    base_python: str = sys.executable
    timeout: float = 1800.0

    def __post_init__(self) -> None:
        self.uv = self.uv or find_uv()
        if self.uv is None:
            raise _uv_not_found()

    def _command(self, *args: str) -> list[str]:
        return [str(self.uv), "--no-progress", "--color", "never", *args]

    def create(self, env_dir: Path) -> Path:
        env_dir = env_dir.absolute()
        try:
            proc = subprocess.run(self._command("venv", "--quiet", "--python", self.base_python, str(env_dir)),
                                  capture_output=True, text=True, check=False, timeout=self.timeout,
                                  env=_child_env(), cwd=env_dir.parent, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise InstallFailed(f"uv venv timed out after {self.timeout:g} s") from None
        if proc.returncode != 0:
            raise InstallFailed(f"venv: {first_line(proc.stderr or proc.stdout)}")
        return env_dir / "bin" / "python"

    def install(self, python: Path, requirements: Sequence[str], log: Path, constraints: Path | None = None) -> None:
        python = python.absolute()
        command = self._command("pip", "install", "--python", str(python),
                                *(["-c", str(constraints.absolute())] if constraints else []), *requirements)
        _run_logged(command, log, self.timeout, "uv pip install", env=_child_env(), cwd=python.parent.parent)

    def freeze(self, python: Path) -> list[str]:
        python = python.absolute()
        proc = subprocess.run(self._command("pip", "freeze", "--python", str(python)), capture_output=True,
                              text=True, check=False, timeout=self.timeout, env=_child_env(),
                              cwd=python.parent.parent, stdin=subprocess.DEVNULL)
        return _freeze_lines(proc.stdout)

    def check_imports(self, python: Path, modules: Sequence[str]) -> None:
        check_imports(python, modules, self.timeout)


def choose_installer(name: str) -> Installer:
    """``--installer``: "uv" (HarnessInputError when its binary is not found), "pip", or "auto"
    (uv when found, else pip)."""
    if name not in INSTALLER_CHOICES:
        raise HarnessInputError(f"--installer: {name!r} is not one of {', '.join(INSTALLER_CHOICES)}",
                                field="--installer", value=name)
    if name == "pip":
        return PipInstaller()
    found = find_uv()
    if found is not None:
        return UvInstaller(uv=found)
    if name == "uv":
        raise _uv_not_found()
    return PipInstaller()
