"""One isolated virtualenv per Ragas release, built once in a cache folder and reused.

An environment lives in ``<cache>/<version>/`` (default cache ``~/.cache/ragas-compat/envs``).
It is built with one install of ``ragas==<version> <extras>`` into a new virtualenv, where the
extras come from the rules in ``pinned/versions.toml``, by an installer (``ragas_compat.tools.matrix.installers``):
``uv venv`` + ``uv pip install`` when uv is found (seconds; files hard-linked from uv's cache, so
environments share their disk), else ``python -m venv`` + ``pip install`` (pip's own download/wheel
cache is used as usual, so a rebuild downloads nothing). A build succeeds only when, after the install, the new
interpreter imports Ragas and the modules the probe needs (``PROBE_IMPORTS``); only then is the marker
file written, last. An environment without it (a build that was interrupted, or one that installed
but does not import) or whose recorded requirements differ from today's rules is deleted and built
again. A failed build is never reused: its folder is removed, it is retried on the next run, and
its reason (stage, first error line, the tail of the installer's log) is kept in ``<cache>/.failed/<version>.json``
until a build of that version succeeds. Builds of different versions run in parallel (``jobs``); builds of the same version by
two processes are serialised by a lock file.

A matrix entry is a release specifier (``0.3.9``, ``==0.3.9``, ``>=0.3,<0.4``: a range is resolved
to its newest matching release with one ``pip index versions ragas``), optionally on another Python
(``0.4.3@3.13``; ``with_pythons`` expands ``--pythons 3.11,3.13``), or ``checkout:PATH`` (a Ragas
git working tree run as it is, with the harness's own interpreter and ``PATH/src`` first on the path).

Python is an axis: an environment is cached per (release, Python) in ``<cache>/<version>@<MAJOR.MINOR>/``
(``environment_dir``; ``<cache>/<version>/`` still holds one built before, for the Python its marker
names), built from an interpreter of that Python (``find_python``: ``PATH``, pyenv, ``uv python find``),
under ``<locks>/<version>@<MAJOR.MINOR>.txt`` when a lock was recorded for that Python, else
``<locks>/<version>.txt`` (a failure under a lock recorded on another Python says so). A per-Python
lock may instead declare that the release has no environment on that Python (no set of distributions
its own requirements allow installs from wheels there): the column is then unavailable with
``no environment for Python X.Y: <why>`` and nothing is built (``no_environment_reason``).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import read_bytes, read_toml, source_name
from ragas_compat.resources import pinned
from ragas_compat.tools.matrix.installers import (  # noqa: F401  (re-exported: callers import the installers from here)
    _IMPORT_CHECK,
    ImportFailed,
    Installer,
    InstallFailed,
    PipInstaller,
    UvInstaller,
    choose_installer,
    first_line,
    import_failure_text,
)
from ragas_compat.tools.matrix.offline_data import needs_offline_data, seed_offline_data

DEFAULT_VERSIONS_FILE = pinned("versions.toml")
DEFAULT_LOCK_DIR = pinned("matrix-locks")
MARKER_NAME = "ragas-compat-env.json"
MARKER_FORMAT = 2  # 2: written only after the import check; format-1 markers predate it and are rebuilt
FAILED_DIR = ".failed"
# What must import in a built environment before it is marked built: Ragas, its metrics, and what the
# probe's scripted judge subclasses (run_probe.py, probe_legacy_stub.py).
PROBE_IMPORTS: tuple[str, ...] = ("ragas", "ragas.metrics", "ragas.llms.base", "ragas.run_config",
                                  "langchain_core.outputs")
CHECKOUT_PREFIX = "checkout:"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ragas-compat/envs`` (``~/.cache/ragas-compat/envs`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragas-compat" / "envs"


# ---------------------------------------------------------------- rules (pinned/versions.toml)

@dataclass(frozen=True)
class VersionRule:
    versions: SpecifierSet
    requirements: tuple[str, ...]
    reason: str


def load_version_rules(path: Path = DEFAULT_VERSIONS_FILE) -> tuple[VersionRule, ...]:
    """The ``[[rule]]`` tables of a versions file; bad entries raise HarnessInputError."""
    data = read_toml(path, "versions file", field="versions")  # a regular file (or -), bounded
    table = data.get("rule", [])
    if not isinstance(table, list):
        raise HarnessInputError(f"{source_name(path)}: rule: expected [[rule]] tables", field="rule", value=table)
    rules = []
    for index, entry in enumerate(table):
        where = f"{source_name(path)}: rule[{index}]"
        if not isinstance(entry, dict):
            raise HarnessInputError(f"{where}: expected a table", field=where, value=entry)
        try:
            if not isinstance(entry.get("versions", ""), str):
                raise InvalidSpecifier(repr(entry.get("versions")))
            versions = SpecifierSet(entry.get("versions", ""))
        except InvalidSpecifier:
            raise HarnessInputError(f"{where}.versions: {entry.get('versions')!r} is not a PEP 440 specifier set",
                                    field=f"{where}.versions", value=entry.get("versions")) from None
        requirements = entry.get("requirements")
        if not isinstance(requirements, list) or not all(isinstance(r, str) and r for r in requirements):
            raise HarnessInputError(f"{where}.requirements: expected a list of requirement strings",
                                    field=f"{where}.requirements", value=requirements)
        rules.append(VersionRule(versions, tuple(requirements), str(entry.get("reason", ""))))
    return tuple(rules)


def requirements_for(version: str, rules: Sequence[VersionRule]) -> tuple[str, ...]:
    """``ragas==version`` and the extras of every rule containing ``version`` (pre-releases included)."""
    extras: list[str] = []
    for rule in rules:
        if rule.versions.contains(version, prereleases=True):
            extras.extend(r for r in rule.requirements if r not in extras)
    return (f"ragas=={version}", *extras)


# ---------------------------------------------------------------- matrix entries

@dataclass(frozen=True)
class MatrixEntry:
    """One column of the matrix as the user wrote it."""

    text: str
    kind: str  # "release" | "checkout"
    specifier: SpecifierSet | None = None
    path: Path | None = None
    python: str | None = None  # "3.13" from ``0.4.3@3.13``; None: the harness's own Python

    @property
    def release_text(self) -> str:
        """The entry without its ``@PYTHON`` part."""
        return self.text.rsplit("@", 1)[0] if self.python else self.text

    @property
    def exact_version(self) -> str | None:
        """The version when the specifier pins exactly one release (``==X``), else None."""
        specs = list(self.specifier or ())
        if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
            return specs[0].version
        return None


MAX_VERSION_CHARS = 200  # one --versions entry's release or specifier text


def parse_entries(text: str) -> list[MatrixEntry]:
    """``"0.2.15,0.3.9,checkout:../ragas"`` -> entries; a bare version means ``==version``;
    ``">=0.3,<0.4;<0.2"`` is two ranges."""
    entries: list[MatrixEntry] = []
    # Split on commas, but keep "a>=0.3,<0.4" style ranges together: a piece starting with an
    # operator continues the previous specifier.
    # operator continues the previous range; ";" always starts a new entry.
    pieces: list[str] = []
    for group in text.split(";"):
        started = len(pieces)
        for piece in (p.strip() for p in group.split(",")):
            if not piece:
                continue
            if len(pieces) > started and piece[0] in "<>=!~" and pieces[-1][0] in "<>=!~":
                pieces[-1] += "," + piece
            else:
                pieces.append(piece)
    for piece in pieces:
        python = None
        if "@" in piece and not piece.startswith(CHECKOUT_PREFIX):
            release_part, python = (part.strip() for part in piece.rsplit("@", 1))
            python = parse_python_tag(python, piece)
            piece = f"{release_part}@{python}"
        else:
            release_part = piece
        if piece.startswith(CHECKOUT_PREFIX):
            path = piece[len(CHECKOUT_PREFIX):]
            if not path:
                raise HarnessInputError("--versions: 'checkout:' needs a path", field="--versions", value=piece)
            entries.append(MatrixEntry(piece, "checkout", path=Path(path)))
            continue
        spec_text = release_part.removeprefix("ragas").removeprefix("v").strip()
        if len(spec_text) > MAX_VERSION_CHARS:  # a 5,000-digit "version" fails deep inside packaging
            raise HarnessInputError(f"--versions: {piece[:40]!r}... ({len(piece):,} characters) is not a Ragas release "
                                    f"or specifier (at most {MAX_VERSION_CHARS} characters)", field="--versions",
                                    value=piece[:200])
        try:
            spec_text = f"=={Version(spec_text)}"
        except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
            pass
        try:
            specifier = SpecifierSet(spec_text)
        except InvalidSpecifier:
            raise HarnessInputError(f"--versions: {piece!r} is neither a Ragas release (0.3.9), a specifier "
                                    f"(>=0.3,<0.4) nor checkout:PATH", field="--versions", value=piece) from None
        entries.append(MatrixEntry(piece, "release", specifier=specifier, python=python))
    if not entries:
        raise HarnessInputError("--versions: give at least one Ragas release or checkout:PATH", field="--versions")
    labels = [e.text for e in entries]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise HarnessInputError(f"--versions: {', '.join(duplicates)} given twice", field="--versions")
    return entries


_PYTHON_TAG = re.compile(r"^(?:py(?:thon)?)?(\d+)\.(\d+)$")


def parse_python_tag(text: str, entry: str = "") -> str:
    """``3.13`` (also ``py3.13``, ``python3.13``) -> ``"3.13"``; anything else is bad input."""
    found = _PYTHON_TAG.match(text.strip().lower())
    if not found:
        raise HarnessInputError(f"--versions: {entry or text!r}: the Python after '@' must be MAJOR.MINOR "
                                "(0.4.3@3.13)", field="--versions", value=entry or text)
    return f"{int(found.group(1))}.{int(found.group(2))}"


def with_pythons(entries: Sequence[MatrixEntry], pythons: str | None) -> list[MatrixEntry]:
    """``--pythons 3.11,3.13``: every release entry without its own ``@PYTHON`` once per Python, in the
    order release by release (``0.4.3@3.11, 0.4.3@3.13, ...``); checkouts run with the harness's own
    interpreter and stay single. None or "" leaves the entries as they are."""
    if not pythons or not pythons.strip():
        return list(entries)
    tags = [parse_python_tag(p, p) for p in pythons.split(",") if p.strip()]
    if len(set(tags)) != len(tags):
        raise HarnessInputError(f"--pythons: {pythons!r} names a Python twice", field="--pythons", value=pythons)
    expanded: list[MatrixEntry] = []
    for entry in entries:
        if entry.kind != "release" or entry.python is not None:
            expanded.append(entry)
            continue
        expanded += [MatrixEntry(f"{entry.text}@{tag}", "release", entry.specifier, entry.path, tag) for tag in tags]
    labels = [e.text for e in expanded]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise HarnessInputError(f"--versions/--pythons: {', '.join(duplicates)} given twice", field="--pythons")
    return expanded


def find_python(tag: str) -> str | None:
    """An interpreter of Python ``tag`` (``"3.13"``): the harness's own when it is that version, else
    ``python3.13`` on ``PATH``, else the newest ``3.13.*`` of pyenv (``$PYENV_ROOT`` or ``~/.pyenv``),
    else what ``uv python find 3.13`` finds (uv's discovery; nothing is downloaded). Each candidate is
    asked its version (a pyenv shim of a version not selected fails and is passed over). None when
    none is found."""
    if tag == _python_tag():
        return sys.executable
    for python in _python_candidates(tag):
        if interpreter_tag(python) == tag:
            return python
    return None


def _python_candidates(tag: str):
    found = shutil.which(f"python{tag}")
    if found:
        yield found
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    versions = []
    for folder in root.glob(f"{tag}.*"):
        try:
            versions.append((Version(folder.name), folder / "bin" / f"python{tag}"))
        except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
            continue
    for _, python in sorted(versions, reverse=True):
        if python.exists():
            yield str(python)
    from ragas_compat.tools.matrix.installers import find_uv

    uv = find_uv()
    if uv:
        try:
            proc = subprocess.run([uv, "python", "find", "--no-python-downloads", tag], capture_output=True,
                                  text=True, check=False, timeout=60, stdin=subprocess.DEVNULL,
                                  cwd=Path.home())
        except (OSError, subprocess.SubprocessError):
            return
        lines = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and lines:
            yield lines[-1]


def interpreter_tag(python: str, timeout: float = 60.0) -> str | None:
    """``MAJOR.MINOR`` of an interpreter, asked from the interpreter itself (None when it does not run)."""
    try:
        proc = subprocess.run([python, "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, check=False, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def newest_matching(specifier: SpecifierSet, available: Sequence[str]) -> str | None:
    """The newest release in ``available`` matching ``specifier`` (pre-releases only if nothing else)."""
    versions = []
    for text in available:
        try:
            versions.append(Version(text))
        except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
            continue
    chosen = list(specifier.filter(versions))
    return str(max(chosen)) if chosen else None


def pip_index_versions(python: str = sys.executable, timeout: float = 120.0) -> list[str]:
    """Ragas releases on the index (one ``pip index versions ragas`` call)."""
    proc = subprocess.run([python, "-m", "pip", "index", "versions", "ragas", "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=timeout, check=False)
    for line in proc.stdout.splitlines():
        if line.strip().startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    raise HarnessInputError(f"cannot list Ragas releases: {first_line(proc.stderr or proc.stdout)}",
                            field="--versions")


# ---------------------------------------------------------------- environments

@dataclass(frozen=True)
class Environment:
    """Where one matrix column's Ragas runs.

    status: "reused" (marker found and current), "built" (built in this run), "checkout"
    (a working tree, no environment), "unavailable" (``error`` says why, first line only).
    installer: what built a release's environment ("uv", "pip"; None when not recorded).
    """

    label: str
    kind: str
    version: str | None
    python: str | None
    sys_path_prefix: tuple[str, ...] = ()
    status: str = "unavailable"
    error: str | None = None
    requirements: tuple[str, ...] = ()
    build_seconds: float | None = None
    size_bytes: int | None = None
    path: Path | None = field(default=None, compare=False)
    notes: tuple[str, ...] = ()
    installer: str | None = None
    python_tag: str | None = None  # MAJOR.MINOR of the column's interpreter (a release's or the harness's)

    @property
    def available(self) -> bool:
        return self.status != "unavailable"


def tree_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (symlinks not followed)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                stat = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if not os.path.islink(os.path.join(root, name)):
                total += stat.st_size
    return total


def read_marker(env_dir: Path) -> dict | None:
    try:
        return json.loads((env_dir / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _python_tag() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def lock_digest(lock: Path | None) -> str | None:
    """sha256 of a lock file's text (None when there is none): a changed lock rebuilds the environment."""
    if lock is None or not lock.exists():
        return None
    return hashlib.sha256(read_bytes(lock, "matrix lock file", allow_stdin=False)).hexdigest()  # regular, bounded


def marker_is_current(marker: dict | None, requirements: Sequence[str], env_dir: Path,
                      lock: Path | None = None, python_tag: str | None = None) -> bool:
    return (marker is not None and marker.get("format") == MARKER_FORMAT
            and marker.get("requirements") == list(requirements)
            and marker.get("python") == (python_tag or _python_tag())
            and marker.get("imports_checked") == list(PROBE_IMPORTS)
            and marker.get("lock") == lock_digest(lock) and (env_dir / "bin" / "python").exists())


def _write_marker(env_dir: Path, marker: dict) -> None:
    partial = env_dir / (MARKER_NAME + ".partial")
    partial.write_text(json.dumps(marker, indent=1), encoding="utf-8")
    os.replace(partial, env_dir / MARKER_NAME)


def lock_name(version: str, python_tag: str | None = None) -> str:
    """``0.4.3.txt`` for the harness's own Python, ``0.4.3@3.13.txt`` for another one."""
    return f"{version}.txt" if python_tag in (None, _python_tag()) else f"{version}@{python_tag}.txt"


_LOCK_PYTHON = re.compile(r"\(Python (\d+\.\d+)\)")


def find_lock(lock_dir: Path | None, version: str, python_tag: str | None = None) -> Path | None:
    """The lock a build of ``version`` on ``python_tag`` uses: ``<version>@<tag>.txt`` when one was
    recorded for that Python (wheels differ between Pythons: numpy 1.26.4 has none for 3.13), else
    ``<version>.txt``; None when neither exists."""
    if lock_dir is None:
        return None
    for name in dict.fromkeys((f"{version}@{python_tag or _python_tag()}.txt", f"{version}.txt")):
        if (lock_dir / name).exists():
            return lock_dir / name
    return None


NO_ENVIRONMENT_HEADER = re.compile(r"# no environment for Python (\d+\.\d+): (\S.*)")


def no_environment_reason(lock: Path | None, python_tag: str) -> str | None:
    """When ``lock`` (what ``find_lock`` chose) declares that its release has no environment on
    ``python_tag``, the column's reason: ``no environment for Python 3.13: <why>``; else None.

    Such a declaration is a per-Python lock (``<version>@<tag>.txt``) whose first line is
    ``# no environment for Python <tag>: <why>`` and which pins nothing (only ``#`` comments, the
    evidence, follow): no set of distributions the release's own requirements allow installs from
    wheels on that Python, so nothing is built. A declaration for another Python than its file name's,
    or one that also pins distributions, is bad input (HarnessInputError naming the file)."""
    if lock is None:
        return None
    text = read_bytes(lock, "matrix lock file", allow_stdin=False).decode("utf-8", errors="replace")
    lines = text.splitlines()
    found = NO_ENVIRONMENT_HEADER.fullmatch(lines[0].strip()) if lines else None
    if found is None:
        return None
    where = source_name(lock)
    if not lock.name.endswith(f"@{found.group(1)}.txt") or found.group(1) != python_tag:
        raise HarnessInputError(f"{where}: declares no environment for Python {found.group(1)}, but the file is "
                                f"the lock of {lock.stem} (write it as <version>@{found.group(1)}.txt)",
                                field=where, value=lines[0])
    pins = [line for line in lines[1:] if line.strip() and not line.lstrip().startswith("#")]
    if pins:
        raise HarnessInputError(f"{where}: declares no environment for Python {python_tag} but pins "
                                f"{pins[0].strip()!r}; a declaration holds only # comments after its first line",
                                field=where, value=pins[0])
    return f"no environment for Python {python_tag}: {found.group(2).strip()}"


def lock_python(lock: Path | None) -> str | None:
    """The Python a lock was recorded on, from its header line (None when it does not say)."""
    if lock is None:
        return None
    try:
        with open(lock, encoding="utf-8") as handle:
            found = _LOCK_PYTHON.search(handle.readline())
    except OSError:
        return None
    return found.group(1) if found else None


def record_lock(environment: Environment, installer: Installer, lock_dir: Path = DEFAULT_LOCK_DIR) -> Path:
    """Write ``<lock_dir>/<version>.txt`` (a freeze of a built environment) so later builds resolve
    to exactly these distributions (used as constraints), and mark the environment as built from it.
    The environment is frozen by what built it (a uv environment has no pip), else by ``installer``;
    a freeze that finds nothing raises InstallFailed rather than writing an empty lock."""
    freezer = choose_installer(environment.installer) if environment.installer else installer
    lines = freezer.freeze(Path(environment.python))
    if not lines:
        raise InstallFailed(f"{getattr(freezer, 'name', 'the installer')} freeze of {environment.path} found no "
                            "distributions; no lock written")
    lock_dir.mkdir(parents=True, exist_ok=True)
    tag = environment.python_tag or _python_tag()
    lock = lock_dir / lock_name(environment.version, tag)
    header = (f"# {getattr(freezer, 'name', 'pip')} freeze of a working Ragas {environment.version} environment "
              f"(Python {tag}); constraints for `ragas-compat matrix`\n")
    lock.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    marker = read_marker(environment.path)
    if marker is not None:
        _write_marker(environment.path, {**marker, "lock": lock_digest(lock)})
    return lock


class _Lock:
    """An exclusive ``flock`` on ``<cache>/.<version>.lock`` for the duration of a build."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> _Lock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "w")
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def failure_record_path(cache_dir: Path, version: str) -> Path:
    return cache_dir / FAILED_DIR / f"{version}.json"


def read_failure(cache_dir: Path, version: str) -> dict | None:
    """The kept reason of the last failed build of ``version`` (None after a success or never failed)."""
    try:
        found = json.loads(failure_record_path(cache_dir, version).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _log_tail(log: Path, lines: int = 40) -> list[str]:
    """The last ``lines`` lines of pip's log that are not ``WARNING:`` lines (pip writes its warnings last)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if not line.startswith("WARNING:")][-lines:]


def _keep_failure(cache_dir: Path, version: str, requirements: Sequence[str], stage: str, reason: str,
                  log: Path, seconds: float, python_tag: str | None = None) -> None:
    record = failure_record_path(cache_dir, version)
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_suffix(".partial")
    partial.write_text(json.dumps({"version": version, "requirements": list(requirements), "stage": stage,
                                   "reason": reason, "python": python_tag or _python_tag(), "seconds": seconds,
                                   "size_bytes": tree_size(log.parent), "log_tail": _log_tail(log)},
                                  indent=1), encoding="utf-8")
    os.replace(partial, record)


def environment_dir(cache_dir: Path, version: str, python_tag: str) -> Path:
    """Where the environment of (``version``, Python ``python_tag``) lives: ``<cache>/<version>@<tag>``,
    or ``<cache>/<version>``, the folder of environments built before Python was an axis, when that
    one was built for this Python, or is no built environment of another Python and ``python_tag`` is
    the harness's own. So a run from another Python, or a column of another Python, builds beside an
    environment, never over it."""
    tagged = cache_dir / f"{version}@{python_tag}"
    plain = cache_dir / version
    if tagged.exists():
        return tagged
    marker = read_marker(plain)
    owner = marker.get("python") if isinstance(marker, dict) else None
    if owner == python_tag or (owner is None and python_tag == _python_tag()):
        return plain
    return tagged


def installer_for(installer: Installer, base_python: str) -> Installer:
    """``installer`` creating its virtualenvs from ``base_python`` (an installer with a ``base_python``
    field, as both of ours have); InstallFailed for one that cannot be told."""
    if getattr(installer, "base_python", None) == base_python:
        return installer
    if dataclasses.is_dataclass(installer) and "base_python" in {f.name for f in dataclasses.fields(installer)}:
        return dataclasses.replace(installer, base_python=base_python)
    raise InstallFailed(f"{type(installer).__name__} cannot build an environment for another Python "
                        f"({base_python})")


def ensure_release(label: str, version: str, cache_dir: Path, rules: Sequence[VersionRule],
                   installer: Installer, lock_dir: Path | None = DEFAULT_LOCK_DIR,
                   python_tag: str | None = None) -> Environment:
    """The environment for one release on one Python (``python_tag``, default the harness's own):
    reused when its marker is current, else (re)built (under the lock ``find_lock`` names, as pip
    constraints) and import-checked.

    Never raises for a failed build: the result is then ``unavailable`` with the stage and the first
    error line (``install: ERROR: ...`` or ``import: import ragas.metrics: ModuleNotFoundError: ...``),
    the folder is removed (so the next run retries) and the reason is kept (``read_failure`` of the
    folder's name). A Python that is not found is ``unavailable`` too (``python: ...``)."""
    tag = python_tag or _python_tag()
    requirements = requirements_for(version, rules)
    lock = find_lock(lock_dir, version, tag)
    declared = no_environment_reason(lock, tag)
    if declared is not None:  # nothing to build: the lock for this Python says why (no_environment_reason)
        return Environment(label, "release", version, None, (), "unavailable", declared, requirements,
                           path=environment_dir(cache_dir, version, tag), python_tag=tag)
    with _Lock(cache_dir / f".{version}.lock"):
        env_dir = environment_dir(cache_dir, version, tag)
        key = env_dir.name
        marker = read_marker(env_dir)
        if marker_is_current(marker, requirements, env_dir, lock, tag):
            return Environment(label, "release", version, str(env_dir / "bin" / "python"), (), "reused", None,
                               requirements, marker.get("seconds"), marker.get("size_bytes"), env_dir,
                               installer=marker.get("installer"), python_tag=tag)
        previous = read_failure(cache_dir, key)
        notes = (f"retried: the previous build failed at {previous.get('stage')}: {previous.get('reason')}",) \
            if previous else ()
        base_python = find_python(tag)
        if base_python is None:
            return Environment(label, "release", version, None, (), "unavailable",
                               f"python: no Python {tag} found (python{tag} on PATH, pyenv's versions, "
                               f"uv python find {tag})", requirements, path=env_dir, notes=notes, python_tag=tag)
        if env_dir.exists():
            shutil.rmtree(env_dir)  # half-built, never import-checked, or built for other requirements
        started = time.perf_counter()
        log = env_dir / "pip-install.log"
        try:
            builder = installer if tag == _python_tag() else installer_for(installer, base_python)
            env_dir.mkdir(parents=True)
            python = builder.create(env_dir)
            builder.install(python, requirements, log, lock)
            if needs_offline_data(requirements):  # what the release would download at import (offline_data)
                seed_offline_data(python)
            builder.check_imports(python, PROBE_IMPORTS)
        except (InstallFailed, OSError, subprocess.SubprocessError) as exc:
            stage = getattr(exc, "stage", "install")
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            recorded_on = lock_python(lock)
            if stage == "install" and lock is not None and recorded_on not in (None, tag):
                reason += (f" (under the lock {lock.name}, recorded on Python {recorded_on}: its pins may have no "
                           f"wheels for Python {tag}; a lock for {tag} would be {lock_name(version, tag)})")
            _keep_failure(cache_dir, key, requirements, stage, reason, log,
                          round(time.perf_counter() - started, 1), tag)
            shutil.rmtree(env_dir, ignore_errors=True)
            return Environment(label, "release", version, None, (), "unavailable", f"{stage}: {reason}",
                               requirements, path=env_dir, notes=notes, python_tag=tag)
        seconds = round(time.perf_counter() - started, 1)
        size = tree_size(env_dir)
        name = getattr(installer, "name", None)  # information only: marker_is_current does not look at it
        _write_marker(env_dir, {"format": MARKER_FORMAT, "version": version, "requirements": list(requirements),
                                "python": tag, "base_python": base_python, "lock": lock_digest(lock),
                                "lock_file": lock.name if lock else None,
                                "imports_checked": list(PROBE_IMPORTS), "seconds": seconds, "size_bytes": size,
                                "installer": name})
        failure_record_path(cache_dir, key).unlink(missing_ok=True)
        return Environment(label, "release", version, str(python), (), "built", None, requirements, seconds, size,
                           env_dir, notes, installer=name, python_tag=tag)


def checkout_environment(entry: MatrixEntry, python: str = sys.executable) -> Environment:
    """A ``checkout:PATH`` column: HEAD as it is, with the harness's interpreter; unavailable when refused."""
    from ragas_compat.pin import RagasSourceError, resolve_checkout

    try:
        source = resolve_checkout(entry.path, allow_other_commit=True, option="checkout:")
    except RagasSourceError as exc:
        return Environment(entry.text, "checkout", None, None, status="unavailable", error=str(exc).splitlines()[0])
    label = entry.text if source.commit is None else f"checkout@{source.commit[:7]}"
    return Environment(label, "checkout", source.version, python, tuple(source.sys_path_prefix), "checkout",
                       notes=tuple(n for n in (source.warning,) if n), python_tag=_python_tag())


Progress = Callable[[str, str], None]  # (label, event) with event "start" | "done"


def ensure_environments(entries: Sequence[MatrixEntry], *, cache_dir: Path | None = None,
                        rules: Sequence[VersionRule] | None = None, installer: Installer | None = None,
                        jobs: int = 2, available: Callable[[], Sequence[str]] | None = None,
                        lock_dir: Path | None = DEFAULT_LOCK_DIR,
                        progress: Progress | None = None) -> list[Environment]:
    """One environment per entry, in the entries' order; releases built ``jobs`` at a time by
    ``installer`` (default ``choose_installer("auto")``: uv when found, else pip)."""
    cache_dir = Path(cache_dir or default_cache_dir())
    rules = load_version_rules() if rules is None else rules
    installer = choose_installer("auto") if installer is None else installer
    progress = progress or (lambda label, event: None)
    listed: list[str] | None = None

    def resolve(entry: MatrixEntry) -> str | Environment:
        nonlocal listed
        if entry.exact_version is not None:
            return entry.exact_version
        if listed is None:
            try:
                listed = list((available or pip_index_versions)())
            except (HarnessInputError, OSError, subprocess.SubprocessError) as exc:
                return Environment(entry.text, "release", None, None, error=str(exc).splitlines()[0])
        version = newest_matching(entry.specifier, listed)
        if version is None:
            return Environment(entry.text, "release", None, None,
                               error=f"no Ragas release matches {entry.specifier} (index lists {len(listed)})")
        return version

    resolved = [None if entry.kind == "checkout" else resolve(entry) for entry in entries]

    def build(pair: tuple[MatrixEntry, str | Environment | None]) -> Environment:
        entry, version = pair
        progress(entry.text, "start")
        try:
            if entry.kind == "checkout":
                return checkout_environment(entry)
            if isinstance(version, Environment):
                return version
            return ensure_release(entry.text, version, cache_dir, rules, installer, lock_dir, entry.python)
        finally:
            progress(entry.text, "done")

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(build, zip(entries, resolved, strict=True)))
