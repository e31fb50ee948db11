"""Which Ragas a run uses, and how it relates to the pin.

Three kinds of source:

* ``installed`` — the Ragas importable by a given Python. It is located by a small subprocess
  (``importlib.util.find_spec`` + ``importlib.metadata``), never imported here. Identity comes from
  its distribution version and from the git blob ids of the audited files, compared with every
  reference point recorded in the manifest.
* ``checkout`` — a git working tree of Ragas. HEAD must be the pinned commit; if it is not, the
  pinned commit is checked out when the tree is clean and the commit is present. A dirty tree or a
  missing commit is refused. ``allow_other_commit=True`` runs HEAD as it is and flags it. A
  checkout's ``ragas.__version__`` is "unknown version" (``_version.py`` is generated at build
  time), so its identity is the commit.
* ``git`` — a URL cloned into a cache folder (reused next time), then treated as a checkout.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from packaging.version import InvalidVersion, Version

from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.pin.blobs import blob_ids_under
from ragas_compat.pin.manifest import Constraint, PinManifest, load_manifest
from ragas_compat.pin.record import check_record, record_clause
from ragas_compat.probe.protocol import ENTRY_LOCATE, probe_command
from ragas_compat.runner import check_timeout, resolve_executable, run_in_own_group

if TYPE_CHECKING:  # GitPython is imported only where a checkout or a clone is involved
    import git

KINDS = ("installed", "checkout", "git")


class RagasSourceError(HarnessInputError):
    """A Ragas source cannot be used as asked (dirty checkout, missing commit, unreachable URL...)."""


class RagasNotInstalled(RagasUnavailable):
    """The interpreter has no importable Ragas: the run cannot happen at all (exit code 3)."""


class PythonUnusable(RagasUnavailable):
    """``--python`` cannot be used: missing, not executable, failing, too slow, or not answering as a
    Python interpreter. Ragas cannot be run at all (exit code 3), like an interpreter without Ragas."""


@dataclass(frozen=True)
class RagasSource:
    """The Ragas a run targets, resolved and compared with the pin.

    ``sys_path_prefix`` is what to put first on the probe's import path (the checkout's ``src/``;
    empty for ``installed``). ``file_comparison`` maps each audited file to its blob id here
    (None when absent) and the reference points whose recorded blob it equals.
    ``audited_vs_pin["status"]`` is "identical", "differ" or "unknown".
    """

    kind: str
    sys_path_prefix: list[str]
    version: str | None
    commit: str | None
    display_path: str
    is_pin: bool
    pin_status: str
    file_comparison: dict[str, dict]
    pinned_commit: str
    audited_vs_pin: dict
    identical_to: tuple[str, ...] = ()
    warning: str | None = None
    version_source: str | None = None
    url: str | None = None
    notes: tuple[str, ...] = ()
    manifest: PinManifest | None = field(default=None, repr=False, compare=False)
    # a checkout's place among the release tags (``git describe``) and the version versioned rules are
    # matched against there: the tag's version at a tag, else the next patch's .devN (as a build would say)
    release_position: str | None = None
    rules_version: str | None = None

    @property
    def files_status(self) -> str:
        """One sentence: are the audited files identical to the pin's, and if not which differ."""
        status = self.audited_vs_pin["status"]
        if status == "identical":
            return f"identical to the pin ({self.audited_vs_pin['reason']})"
        if status == "differ":
            return "differ from the pin: " + ", ".join(self.audited_vs_pin["differing_files"])
        return f"cannot be known: {self.audited_vs_pin['reason']}"

    def to_provenance(self) -> dict:
        """JSON-ready, deterministic provenance of the Ragas run; no machine-absolute paths."""
        return {
            "kind": self.kind,
            "version": self.version,
            "version_source": self.version_source,
            "commit": self.commit,
            "display_path": self.display_path,
            "url": self.url,
            "pinned_commit": self.pinned_commit,
            "is_pin": self.is_pin,
            "pin_status": self.pin_status,
            "warning": self.warning,
            "files_status": self.files_status,
            "audited_vs_pin": {
                "status": self.audited_vs_pin["status"],
                "differing_files": list(self.audited_vs_pin["differing_files"]),
                "unknown_files": list(self.audited_vs_pin["unknown_files"]),
                "reason": self.audited_vs_pin["reason"]},
            "identical_to_reference_points": list(self.identical_to),
            "file_comparison": {file: {"blob": entry["blob"], "matches": list(entry["matches"])}
                                for file, entry in self.file_comparison.items()},
            "notes": list(self.notes),
            "release_position": self.release_position,
            "rules_version": self.rules_version,
            "audited_coverage": self.audited_coverage(),
        }

    def audited_coverage(self) -> dict | None:
        """Which files were hashed and which registered targets they cover (``pin.modules.coverage``):
        a claim about the audited files holds for these targets only."""
        if self.manifest is None:
            return None
        from ragas_compat.pin.modules import coverage

        return coverage(self.manifest)


# ---------------------------------------------------------------- comparison with the manifest

def compare_with_reference_points(blobs: dict[str, str | None], manifest: PinManifest) -> dict[str, dict]:
    """For each audited file: its blob id and the reference points recording that same content
    (for an absent file: the points recording it as absent)."""
    comparison: dict[str, dict] = {}
    for file in manifest.audited_files:
        blob = blobs.get(file)
        matches = [point.name for point in manifest.reference_points
                   if (blob is not None and point.blobs.get(file) == blob)
                   or (blob is None and file in point.absent)]
        comparison[file] = {"blob": blob, "matches": matches}
    return comparison


def _fully_matching(comparison: dict[str, dict], manifest: PinManifest) -> tuple[str, ...]:
    return tuple(point.name for point in manifest.reference_points
                 if all(point.name in entry["matches"] for entry in comparison.values()))


def _audited_vs_pin(commit: str | None, blobs: dict[str, str | None], manifest: PinManifest) -> dict:
    pin = manifest.pin
    if commit == pin.commit:
        return {"status": "identical", "differing_files": [], "unknown_files": [],
                "reason": f"clean checkout at the pinned commit {pin.short}"}
    point = manifest.pin_reference_point()
    if point is None:
        return {"status": "unknown", "differing_files": [], "unknown_files": list(manifest.audited_files),
                "reason": f"the pinned commit's file hashes are not recorded in the manifest "
                          f"(record them with `ragas-compat pin record --ragas-checkout PATH` on a "
                          f"checkout of {pin.short})"}
    differing, unknown = [], []
    for file in manifest.audited_files:
        blob = blobs.get(file)
        if file in point.blobs:
            if blob != point.blobs[file]:
                differing.append(file)
        elif file in point.absent:
            if blob is not None:
                differing.append(file)
        else:
            unknown.append(file)
    if differing:
        status, reason = "differ", f"{len(differing)} audited file(s) differ from reference point {point.name}"
    elif unknown:
        status, reason = "unknown", f"reference point {point.name} does not record {len(unknown)} audited file(s)"
    else:
        status, reason = "identical", f"all audited files equal reference point {point.name} (the pinned commit)"
    return {"status": status, "differing_files": differing, "unknown_files": unknown, "reason": reason}


def _files_clause(comparison: dict[str, dict], identical_to: tuple[str, ...], manifest: PinManifest) -> str:
    if identical_to:
        with_commit = [p.name for p in manifest.reference_points if p.name in identical_to and p.commit]
        names = with_commit or list(identical_to)
        return (f"the {len(comparison)} audited files (hashed: the modules behind the registered targets) identical "
                f"to reference point{'s' * (len(names) > 1)} {' and '.join(names)}")
    if not manifest.reference_points:
        return "no reference points recorded to compare the audited files with"
    total = len(comparison)
    best = max(manifest.reference_points,
               key=lambda p: sum(p.name in e["matches"] for e in comparison.values()))
    same = sum(best.name in e["matches"] for e in comparison.values())
    differ = [Path(f).name for f, e in comparison.items() if best.name not in e["matches"]]
    return (f"audited files match no recorded reference point; closest is {best.name} "
            f"({same} of {total} identical; not: {', '.join(differ)})")


def _coverage_clause(manifest: PinManifest) -> str:
    """'' when the audited files cover every registered target; else which targets' files are not hashed."""
    from ragas_compat.pin.modules import unaudited_targets

    missing = unaudited_targets(manifest)
    if not missing:
        return ""
    shown = ", ".join(list(missing)[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return (f"; the files behind {len(missing)} registered target{'s' * (len(missing) != 1)} are not audited "
            f"(no claim about them): {shown}")


def _pin_clause(audited_vs_pin: dict) -> str:
    status = audited_vs_pin["status"]
    if status == "identical":
        return "audited files identical to the pin's"
    if status == "differ":
        return "audited files differ from the pin's: " + ", ".join(audited_vs_pin["differing_files"])
    return "identity with the pin's files unknown (" + audited_vs_pin["reason"].split(" (")[0] + ")"


# ---------------------------------------------------------------- installed

def locate_installed(python: str = sys.executable, distributions: tuple[str, ...] = (),
                     *, timeout: float = 60.0) -> dict:
    """Ask ``python`` (a subprocess in its own process group, killed with its children after
    ``timeout`` seconds) where ``ragas`` would be imported from, and the installed versions of
    ``distributions``; Ragas is not imported. ``PythonUnusable`` (exit 3) when ``python`` cannot be
    run, fails, times out or answers something else than the expected JSON."""
    timeout = check_timeout(timeout)
    try:
        completed = run_in_own_group(probe_command(resolve_executable(python), ENTRY_LOCATE, *distributions),
                                     timeout=timeout)
    except OSError as exc:
        raise PythonUnusable(f"cannot run Python {python!r} to locate Ragas: {exc.strerror or exc}") from None
    if completed.returncode is None:
        raise PythonUnusable(f"Python {python!r} did not say where Ragas is within {timeout:g} s")
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        raise PythonUnusable(f"Python {python!r} failed to locate Ragas (exit {completed.returncode}): {last}")
    located = _parsed_location(completed.stdout)
    if located is None:
        printed = completed.stdout.strip()
        what = f"printed {printed[:80]!r}" + ("..." if len(printed) > 80 else "") if printed else "printed nothing"
        raise PythonUnusable(f"Python {python!r} is not a Python interpreter ragas-compat can use: asked where "
                             f"Ragas is, it {what}")
    return located


def _parsed_location(text: str) -> dict | None:
    """The locating script's answer, or None when ``text`` is not that answer."""
    try:
        located = json.loads(text)
    except ValueError:
        return None
    if not (isinstance(located, dict) and isinstance(located.get("found"), bool)
            and isinstance(located.get("distributions"), dict)):
        return None
    if located["found"] and not isinstance(located.get("package_dir"), str):
        return None
    return located


def _version_label(version: str | None, manifest: PinManifest) -> str:
    if version is None:
        return "Ragas of unknown version"
    try:
        parsed = Version(version)
    except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
        return f"Ragas version {version!r} (not a PEP 440 version)"
    nearest = manifest.pin.nearest_version
    label = (f"development build {version}" if parsed.is_devrelease or parsed.local
             else f"pre-release {version}" if parsed.is_prerelease else f"release {version}")
    if parsed != nearest:
        side = "after" if parsed > nearest else "before"
        label += f" ({side} the pin's nearest release {manifest.pin.nearest_release})"
    return label


def _commit_hint(version: str | None) -> str | None:
    """The ``g<hex>`` commit prefix setuptools-scm puts in a development version's local part."""
    try:
        local = Version(version).local if version else None
    except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
        return None
    match = re.search(r"(?:^|\.)g([0-9a-f]{7,40})(?:\.|$)", local or "")
    return match.group(1) if match else None


def resolve_installed(manifest: PinManifest | None = None, *, python: str = sys.executable,
                      timeout: float = 60.0, located: dict | None = None) -> RagasSource:
    """The Ragas importable by ``python``, compared file by file with the manifest's reference points
    (``timeout``: seconds for the locating subprocess). ``located``: the answer of
    ``probe_locate.py`` already given (a started probe writes it), so no subprocess is run."""
    manifest = manifest or load_manifest()
    if located is None:
        located = locate_installed(python, timeout=timeout)
    elif _parsed_location(json.dumps(located)) is None:
        raise PythonUnusable(f"Python {python!r} answered where Ragas is with something unexpected: {located!r:.80}")
    if not located["found"]:
        raise RagasNotInstalled(
            f"no Ragas is importable by {python}; install it with "
            f"`pip install -c pinned/constraints.txt ragas langchain-community rapidfuzz`, "
            f"or use --ragas-checkout / --ragas-git")
    package = Path(located["package_dir"])
    # audited paths are repository-relative (src/ragas/...); the package's parent plays src/.
    relative = {file: file.removeprefix("src/") for file in manifest.audited_files}
    hashed = blob_ids_under(package.parent, list(relative.values()))
    blobs = {file: hashed[rel] for file, rel in relative.items()}
    version = located["version"]
    comparison = compare_with_reference_points(blobs, manifest)
    identical_to = _fully_matching(comparison, manifest)
    vs_pin = _audited_vs_pin(None, blobs, manifest)
    notes: list[str] = []
    hint = _commit_hint(version)
    commit_phrase = f"not the pinned commit {manifest.pin.short}"
    if hint is not None:
        same = manifest.pin.commit.startswith(hint)
        notes.append(f"its version names commit {hint}" + (" (a prefix of the pinned commit)" if same else ""))
        commit_phrase = (f"a build of commit {hint} per its version, unverified as the pinned commit"
                         if same else f"a build of commit {hint}, not the pinned commit {manifest.pin.short}")
    status = (f"{_version_label(version, manifest)}, {commit_phrase}; "
              f"{_files_clause(comparison, identical_to, manifest)}{_coverage_clause(manifest)}; "
              f"{record_clause(check_record(package))}; {_pin_clause(vs_pin)}")
    return RagasSource(
        kind="installed", sys_path_prefix=[], version=version, commit=None,
        display_path=f"{package.parent.name}/{package.name}", is_pin=False, pin_status=status,
        file_comparison=comparison, pinned_commit=manifest.pin.commit, audited_vs_pin=vs_pin,
        identical_to=identical_to, version_source=located["version_source"], notes=tuple(notes),
        manifest=manifest)


# ---------------------------------------------------------------- checkout

def _changed_paths(repo: git.Repo) -> list[str]:
    paths = {d.a_path for d in repo.index.diff(None)} | {d.a_path for d in repo.index.diff("HEAD")}
    return sorted(paths | set(repo.untracked_files))


def _commit_present(repo: git.Repo, commit: str) -> bool:
    import git

    try:
        return repo.commit(commit).hexsha == commit
    except (ValueError, git.BadName, git.BadObject):
        return False


def resolve_checkout(path: str | Path, manifest: PinManifest | None = None, *,
                     allow_other_commit: bool = False, option: str = "--ragas-checkout",
                     timeout: float | None = None) -> RagasSource:
    """A Ragas git working tree at the pinned commit (checked out if needed, when clean and present).

    Refused (RagasSourceError): not a git working tree, no ``src/ragas``, uncommitted or untracked
    changes, or HEAD is another commit and the pinned one is missing (unless ``allow_other_commit``).
    With ``allow_other_commit`` HEAD is used as it is, ``is_pin`` is False and ``warning`` says so.
    """
    import git

    manifest = manifest or load_manifest()
    pin = manifest.pin
    root = Path(path).expanduser()
    name = root.resolve().name
    if not root.is_dir():
        raise RagasSourceError(f"{option} {path}: no such directory", field=option, value=str(path))
    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise RagasSourceError(f"{option} {path}: not a git working tree (no .git here)",
                               field=option, value=str(path)) from None
    with repo:
        if repo.bare or repo.working_tree_dir is None:
            raise RagasSourceError(f"{option} {path}: a bare repository has no working tree to import from",
                                   field=option, value=str(path))
        if Path(repo.working_tree_dir).resolve() != root.resolve():
            raise RagasSourceError(f"{option} {path}: not the top of a git working tree "
                                   f"(pass the repository root)", field=option, value=str(path))
        if not repo.head.is_valid():
            raise RagasSourceError(f"{option} {path}: the repository has no commits", field=option, value=str(path))
        changed = _changed_paths(repo)
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            raise RagasSourceError(
                f"{option} {path}: the working tree has uncommitted or untracked changes ({shown}); "
                f"commit, stash or remove them so the Ragas that runs is exactly a commit",
                field=option, value=str(path), problems=[f"changed: {p}" for p in changed])
        head = repo.head.commit.hexsha
        notes: list[str] = []
        if head != pin.commit and not allow_other_commit:
            if not _commit_present(repo, pin.commit):
                raise RagasSourceError(
                    f"{option} {path}: HEAD is {head[:7]}, not the pinned commit {pin.short}, and the pinned "
                    f"commit is not in this repository; fetch it (git fetch origin {pin.commit}) or pass "
                    f"--allow-other-commit to run {head[:7]} anyway", field=option, value=str(path))
            previous = head[:7] if repo.head.is_detached else f"{repo.active_branch.name}@{head[:7]}"
            repo.git.checkout("--quiet", "--detach", pin.commit, kill_after_timeout=timeout)
            head = repo.head.commit.hexsha
            notes.append(f"checked out the pinned commit {pin.short} (was {previous})")
        src = root.resolve() / "src"
        if not (src / "ragas" / "__init__.py").is_file():
            raise RagasSourceError(f"{option} {path}: no src/ragas/__init__.py at {head[:7]}; "
                                   f"not a Ragas source tree", field=option, value=str(path))
        notes.append(_ensure_version_file(repo, src / "ragas" / "_version.py", option, path))
        described, rules_version = release_position(repo)
        if rules_version is None:  # no release tag in this clone: the pin's own reference points may place HEAD
            described, rules_version = _position_from_manifest(head, manifest) or (described, None)
    blobs = blob_ids_under(root, list(manifest.audited_files))
    comparison = compare_with_reference_points(blobs, manifest)
    identical_to = _fully_matching(comparison, manifest)
    vs_pin = _audited_vs_pin(head, blobs, manifest)
    is_pin = head == pin.commit
    warning = None
    if is_pin:
        status = f"checkout at the pinned commit {pin.short}"
    else:
        status = (f"checkout at {head[:7]}, NOT the pinned commit {pin.short}; "
                  f"{_files_clause(comparison, identical_to, manifest)}{_coverage_clause(manifest)}; "
                  f"{_pin_clause(vs_pin)}")
        warning = (f"NOT THE PIN: this run uses Ragas at commit {head} (checkout {name}), not the pinned "
                   f"commit {pin.commit}; its results describe that commit")
    notes.append("a checkout's own version is not used; its identity is the commit")
    if rules_version is not None:
        notes.append(f"release position {described}: versioned expectation rules are matched as Ragas {rules_version}")
    else:
        warning = f"{warning}; {NO_VERSIONED_RULES}" if warning else NO_VERSIONED_RULES
    return RagasSource(
        kind="checkout", sys_path_prefix=[str(src)], version=None, commit=head, display_path=name,
        is_pin=is_pin, pin_status=status, file_comparison=comparison, pinned_commit=pin.commit,
        audited_vs_pin=vs_pin, identical_to=identical_to, warning=warning,
        version_source="none: a checkout has no generated _version.py; identity is the commit",
        notes=tuple(notes), manifest=manifest, release_position=described, rules_version=rules_version)


NO_VERSIONED_RULES = ("NO VERSIONED RULE APPLIES: this checkout's place among Ragas's release tags is unknown "
                      "(git describe found no tag v<version> before HEAD), so every expectation rule with a `ragas` "
                      "range is skipped and rows they would explain read as drift; fetch the tags "
                      "(git fetch --tags) and rerun")


def release_position(repo: git.Repo) -> tuple[str | None, str | None]:
    """``(git describe of HEAD against the release tags, the version versioned rules see there)``: at a tag
    v0.4.3 "0.4.3"; 7 commits after it "0.4.4.dev7+g<short>" (setuptools-scm's guess for a build of that
    commit); (None, None) when no release tag precedes HEAD."""
    import git

    try:
        described = repo.git.describe("--tags", "--long", "--match", "v[0-9]*", "HEAD")
    except git.GitCommandError:
        return None, None
    match = re.match(r"^v(.+)-(\d+)-g([0-9a-f]+)$", described.strip())
    if match is None:
        return described, None
    try:
        tagged = Version(match.group(1))
    except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
        return described, None
    distance = int(match.group(2))
    if distance == 0:
        return described, str(tagged)
    major, minor, micro = (tagged.release + (0, 0))[:3]
    return described, f"{major}.{minor}.{micro + 1}.dev{distance}+g{match.group(3)}"


def _position_from_manifest(head: str, manifest: PinManifest) -> tuple[str, str] | None:
    """HEAD placed by the manifest when git cannot: a tag reference point recorded at HEAD ("v0.4.3"), or the
    pinned commit itself by its nearest release and relation (after 0.4.3: "0.4.4.dev0+g<short>")."""
    for point in manifest.reference_points:
        if point.commit == head and point.kind == "tag":
            try:
                return f"reference point {point.name}", str(Version(point.name.removeprefix("v")))
            except (InvalidVersion, ValueError):  # ValueError: a number of more than 4,300 digits
                continue
    pin = manifest.pin
    if head != pin.commit:
        return None
    nearest = pin.nearest_version
    major, minor, micro = (nearest.release + (0, 0))[:3]
    version = {"at": str(nearest), "after": f"{major}.{minor}.{micro + 1}.dev0+g{pin.short}",
               "before": f"{nearest.base_version}.dev0+g{pin.short}"}[pin.relation]
    return f"the pinned commit ({pin.relation} {pin.nearest_release}, pin.toml)", version


VERSION_FILE_MARKER = "# written by ragas-compat:"
_VERSION_FILE = f"""{VERSION_FILE_MARKER} Ragas imports ragas._version unconditionally (_analytics.py,
# prompt/*.py) but the file is generated at build time by setuptools-scm and gitignored, so a bare
# checkout cannot import Ragas without it. This stand-in mirrors Ragas's own fallback
# (__version__ = "unknown version"); the run's identity is the git commit, recorded by ragas-compat.
__version__ = version = "unknown version"
__version_tuple__ = version_tuple = ()
__commit_id__ = commit_id = None
"""


def _ensure_version_file(repo: git.Repo, version_file: Path, option: str, path: str | Path) -> str:
    """Make ``src/ragas/_version.py`` exist so the checkout imports; say what was done.

    Written only when absent (or ours) and gitignored, so the working tree stays clean; a file
    generated by a build is left alone (Ragas then reports that build's version, which may be stale).
    """
    relative = version_file.relative_to(Path(repo.working_tree_dir).resolve()).as_posix()
    if version_file.exists() and not version_file.read_text(encoding="utf-8").startswith(VERSION_FILE_MARKER):
        return (f"{relative} exists (generated by an earlier build): the version Ragas reports comes from it "
                f"and may be stale; the identity of this run is the commit")
    if not repo.ignored(relative):
        raise RagasSourceError(
            f"{option} {path}: {relative} is missing and not gitignored; Ragas cannot be imported without it "
            f"(generate it with `pip install -e . --no-deps` in the checkout)", field=option, value=str(path))
    version_file.write_text(_VERSION_FILE, encoding="utf-8")
    return (f"wrote the gitignored {relative} (Ragas imports it; a build generates it) with Ragas's fallback "
            f"version 'unknown version'; the identity of this run is the commit")


# ---------------------------------------------------------------- git URL

def public_url(url: str) -> str:
    """``url`` without user name, password or query (safe to print)."""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    return re.sub(r"^[^@/]+@", "", url)


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ragas-compat/git`` (default ``~/.cache/ragas-compat/git``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragas-compat" / "git"


def cache_folder_name(url: str) -> str:
    """A file-name-safe folder name for ``url``: readable part plus 8 hex digits of its SHA-1."""
    readable = re.sub(r"^[a-z+]+://", "", public_url(url))
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", readable).strip("._-")[:80] or "repository"
    return f"{readable}-{hashlib.sha1(url.encode('utf-8')).hexdigest()[:8]}"


def _git_environment(timeout: float) -> dict[str, str]:
    """No interactive prompts; give up on stalled HTTP transfers."""
    return {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND",
                                              f"ssh -o BatchMode=yes -o ConnectTimeout={max(1, int(timeout))}"),
            "GIT_HTTP_LOW_SPEED_LIMIT": "1", "GIT_HTTP_LOW_SPEED_TIME": str(max(1, int(timeout)))}


def _git_failure(action: str, url: str, exc: git.GitCommandError) -> RagasSourceError:
    text = str(exc.stderr or "")
    fatal = [line.strip().strip("'") for line in text.splitlines() if line.strip().startswith(("fatal:", "error:"))]
    detail = fatal[0] if fatal else (text.strip().splitlines() or [f"git exited with {exc.status}"])[-1]
    if "did not complete in" in str(exc) or exc.status in (-9, "-9"):
        detail = "timed out"
    return RagasSourceError(f"--ragas-git {public_url(url)}: cannot {action} ({detail}); check the URL and "
                            f"the network, or use --ragas-checkout PATH with a local clone",
                            field="--ragas-git", value=public_url(url))


def resolve_git(url: str, manifest: PinManifest | None = None, *, cache_dir: str | Path | None = None,
                allow_other_commit: bool = False, timeout: float = 300.0) -> RagasSource:
    """Clone ``url`` into the cache (or reuse the earlier clone, fetching when the pin is missing),
    then resolve it as a checkout."""
    import git

    manifest = manifest or load_manifest()
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    destination = cache / cache_folder_name(url)
    environment = _git_environment(timeout)
    if destination.exists():
        try:
            with git.Repo(destination) as repo:
                if not allow_other_commit and not _commit_present(repo, manifest.pin.commit):
                    try:
                        repo.git.fetch("--quiet", "origin", env=environment, kill_after_timeout=timeout)
                    except git.GitCommandError as exc:
                        raise _git_failure("fetch the pinned commit into the cached clone", url, exc) from None
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise RagasSourceError(f"--ragas-git {public_url(url)}: the cache folder {destination.name} exists "
                                   f"but is not a git repository; delete it and retry",
                                   field="--ragas-git", value=public_url(url)) from None
    else:
        cache.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=cache))
        try:
            git.Git().clone("--quiet", "--", url, str(staging / "repo"), env=environment,
                            kill_after_timeout=timeout)
            (staging / "repo").rename(destination)
        except git.GitCommandError as exc:
            raise _git_failure("clone", url, exc) from None
        finally:
            _remove_tree(staging)
    source = resolve_checkout(destination, manifest, allow_other_commit=allow_other_commit, option="--ragas-git",
                              timeout=timeout)
    shown = public_url(url)
    if urlsplit(shown).scheme == "file" or "://" not in shown:  # a local path: keep it portable
        shown = f"file://…/{Path(urlsplit(shown).path or shown).name}"
    return dataclasses.replace(
        source, kind="git", url=shown, display_path=shown,
        pin_status=source.pin_status.replace("checkout at", f"clone of {shown} at", 1),
        warning=source.warning and source.warning.replace(f"(checkout {source.display_path})", f"(clone of {shown})"))


def _remove_tree(path: Path) -> None:
    import shutil
    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------- choosing a source

def resolve_ragas_source(*, checkout: str | Path | None = None, git_url: str | None = None,
                         python: str = sys.executable, manifest: PinManifest | None = None,
                         allow_other_commit: bool = False, cache_dir: str | Path | None = None,
                         timeout: float | None = None, located: dict | None = None) -> RagasSource:
    """The source named by the CLI options: ``--ragas-checkout``, ``--ragas-git`` or (neither) installed.
    ``timeout`` (the command's ``--timeout``) bounds each subprocess started here; None keeps the defaults
    (60 s to locate an installed Ragas, 300 s per git network operation). ``located``: where a started
    probe found the installed Ragas (``resolve_installed``)."""
    if checkout is not None and git_url is not None:
        raise RagasSourceError("pass --ragas-checkout or --ragas-git, not both", field="--ragas-git", value=git_url)
    if timeout is not None:
        timeout = check_timeout(timeout)
    manifest = manifest or load_manifest()
    if checkout is not None:
        return resolve_checkout(checkout, manifest, allow_other_commit=allow_other_commit, timeout=timeout)
    if git_url is not None:
        return resolve_git(git_url, manifest, cache_dir=cache_dir, allow_other_commit=allow_other_commit,
                           timeout=300.0 if timeout is None else timeout)
    if allow_other_commit:
        raise RagasSourceError("--allow-other-commit applies only to --ragas-checkout / --ragas-git",
                               field="--allow-other-commit", value=True)
    return resolve_installed(manifest, python=python, timeout=60.0 if timeout is None else timeout, located=located)


# ---------------------------------------------------------------- constraints

@dataclass(frozen=True)
class ConstraintCheck:
    constraint: Constraint
    installed: str | None  # version installed for that Python; None = not installed
    satisfied: bool | None  # None when not installed


def check_constraints(constraints: list[Constraint], *, python: str = sys.executable) -> list[ConstraintCheck]:
    """Each constraint checked (packaging specifiers, pre-releases allowed) against ``python``'s packages."""
    names = tuple(c.requirement.name for c in constraints)
    installed = locate_installed(python, names)["distributions"] if names else {}
    checks = []
    for constraint in constraints:
        version = installed.get(constraint.requirement.name)
        satisfied = None
        if version is not None:
            satisfied = constraint.requirement.specifier.contains(version, prereleases=True)
        checks.append(ConstraintCheck(constraint=constraint, installed=version, satisfied=satisfied))
    return checks


# ---------------------------------------------------------------- measuring a reference point

def measure_reference_point(path: str | Path, manifest: PinManifest, *, name: str | None = None):
    """A reference point for the commit at HEAD of the checkout at ``path``: the blob ids of the
    audited files in that commit's tree (git's own ids, so uncommitted edits do not matter), files
    missing from the tree listed as absent.

    Name: ``name``, else "pin" for the pinned commit, else a tag pointing at HEAD, else
    "commit-<short>". Returns the point merged with any entry already recorded for that commit;
    refuses (RagasSourceError) a name already used for another commit, or blob ids that contradict
    ones already recorded for the same commit.
    """
    import git

    from ragas_compat.pin.manifest import ReferencePoint

    root = Path(path).expanduser()
    option = "--ragas-checkout"
    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise RagasSourceError(f"{option} {path}: not a git working tree (no .git here)",
                               field=option, value=str(path)) from None
    with repo:
        if not repo.head.is_valid():
            raise RagasSourceError(f"{option} {path}: the repository has no commits", field=option, value=str(path))
        commit = repo.head.commit
        blobs: dict[str, str] = {}
        absent: list[str] = []
        for file in manifest.audited_files:
            try:
                blobs[file] = (commit.tree / file).hexsha
            except KeyError:
                absent.append(file)
        tags = sorted(tag.name for tag in repo.tags if tag.commit.hexsha == commit.hexsha)
    if not blobs:
        raise RagasSourceError(f"{option} {path}: none of the audited files exist at {commit.hexsha[:7]}; "
                               f"not a Ragas repository", field=option, value=str(path))
    existing = next((p for p in manifest.reference_points if p.commit == commit.hexsha), None)
    if name is None:
        if existing is not None:
            name = existing.name
        elif commit.hexsha == manifest.pin.commit:
            name = "pin"
        else:
            name = tags[0] if tags else f"commit-{commit.hexsha[:7]}"
    same_name = manifest.reference_point(name)
    if same_name is not None and same_name.commit != commit.hexsha:
        raise RagasSourceError(f"reference point {name!r} already records "
                               f"{same_name.commit[:7] if same_name.commit else 'a ' + same_name.kind}; "
                               f"pass another --name", field="--name", value=name)
    if existing is not None:
        contradictions = [f for f, b in existing.blobs.items() if blobs.get(f, None) != b]
        contradictions += [f for f in existing.absent if f in blobs]
        if contradictions:
            raise RagasSourceError(
                f"reference point {existing.name!r} records other contents for commit {commit.hexsha[:7]} "
                f"than its tree has ({', '.join(contradictions)}); the recorded hashes are wrong — fix "
                f"pin.toml by hand", field="reference_points", value=existing.name)
    kind = "tag" if name in tags else "commit"
    date = commit.committed_datetime.astimezone(_dt.UTC).date()
    source = (f"ragas-compat pin record: git blob ids in the tree of commit {commit.hexsha[:7]} "
              f"(checkout {root.resolve().name})")
    return ReferencePoint(name=name, kind=kind, commit=commit.hexsha, date=date, source=source,
                          blobs=blobs, absent=tuple(absent))
