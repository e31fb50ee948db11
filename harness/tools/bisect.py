"""Find the first Ragas commit where one matrix cell (case, target) changes, with ``git bisect``.

The user's repository is never touched and never opened in place: git clones it into a temporary
folder (a local clone shares its object files by hard link, read-only; a bare repository, one without a
``config`` file, works), refs are resolved and ``git bisect`` runs in that clone, so the commits are
visited in git's own bisection order. A repository git cannot read (no repository there, owned by
another user) is a ``HarnessInputError`` with git's reason (exit 2). A URL (``--ragas-git``) is cloned
once into the cache ``run --ragas-git`` uses (``mirror_git``) and bisected from there.

At each commit the Ragas package is found where that commit keeps it (``PACKAGE_ROOTS``: ``src/ragas``,
or ``ragas/src/ragas`` in the monorepo years, v0.2.15..v0.3.5 on and off): with ``src/ragas`` the clone is
prepared exactly as ``run --ragas-checkout`` prepares a checkout (``ragas_compat.pin.resolve_checkout``),
with ``ragas/src/ragas`` that folder goes first on the probe's import path with the same ``_version.py``
stand-in; the probe scores the one cell, and the cell is compared with the cell at ``--good``:

* the same value bit for bit (or the same exception type and message) -> ``good``;
* anything else Ragas did -> ``bad`` (the cell changed);
* a cell the harness cannot score there (the probe could not run or import that commit, or the
  cell is one of the harness's limits: not scripted, the scripted judge cannot answer, the harness's
  own error) -> ``skip``: it says nothing about Ragas.

The answer is the first bad commit (hash, date, subject, the audited files it touched and the
cell's change), or - when skipped commits hide it - the commits it could be.
"""

from __future__ import annotations

import datetime as _dt
import re
import shutil
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragas_compat.cases import Case, Suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.findings import out_of_range
from ragas_compat.errors import HarnessInputError
from ragas_compat.runner import run_probe
from ragas_compat.tools.matrix.drift import Cause, Cell, causes_between, cell_from
from ragas_compat.tools.matrix.run import NO_EXPECTATIONS
from ragas_compat.values import encode_float

if TYPE_CHECKING:
    import git

# Score the cell with Ragas importable from these folders (first on the path); never raises for
# a Ragas failure (an unavailable Cell says why).
Scorer = Callable[[Sequence[str]], Cell]
Progress = Callable[[str], None]

# Where a commit keeps the Ragas package (the folder that goes first on the probe's path), in order.
PACKAGE_ROOTS = ("src", "ragas/src")
MONOREPO_PREFIX = "ragas/"  # ragas/src/ragas/x.py is the audited src/ragas/x.py of the monorepo years
FIRST_BAD = re.compile(r"^([0-9a-f]{40}) is the first bad commit", re.MULTILINE)
ONLY_SKIPPED = "only 'skip'ped commits left"
MAX_STEPS = 64  # 2**64 commits; a guard against a bisection that does not end


@dataclass(frozen=True)
class CommitInfo:
    """One commit as the report names it; ``audited_touched``: the audited files it changed
    (against its first parent; every file for a root commit)."""

    hexsha: str
    date: str  # committer date, ISO 8601 in UTC
    subject: str
    files_touched: tuple[str, ...] = ()
    audited_touched: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        return self.hexsha[:10]


@dataclass(frozen=True)
class Step:
    """One commit scored during the bisection."""

    hexsha: str
    subject: str
    verdict: str  # "good" | "bad" | "skip"
    cell: Cell
    why: str


@dataclass(frozen=True)
class BisectResult:
    """status: ``found`` (first_bad is the answer), ``unchanged`` (the cell is the same at good and
    bad: nothing to bisect) or ``ambiguous`` (skipped commits hide the answer: ``candidates``)."""

    case_id: str
    target: str
    status: str
    good: CommitInfo
    bad: CommitInfo
    good_cell: Cell
    bad_cell: Cell
    first_bad: CommitInfo | None = None
    first_bad_cell: Cell | None = None
    causes: tuple[Cause, ...] = ()
    candidates: tuple[CommitInfo, ...] = ()
    steps: tuple[Step, ...] = field(default=())


def unscorable(cell: Cell) -> str | None:
    """Why the harness cannot say anything about Ragas from this cell (None when it can)."""
    if cell.status in ("unavailable", "absent"):
        return f"not scored: {cell.error_message or cell.status}"
    if cell.harness_limit:
        return f"{cell.text}: {cell.error_type}: {cell.error_message}"
    return None


def commit_info(repo: git.Repo, rev: str, audited: Sequence[str]) -> CommitInfo:
    commit = repo.commit(rev)
    if commit.parents:
        touched = sorted({d.b_path or d.a_path for d in commit.parents[0].diff(commit)})
    else:
        touched = sorted(item.path for item in commit.tree.traverse() if item.type == "blob")
    date = _dt.datetime.fromtimestamp(commit.committed_date, tz=_dt.UTC).isoformat()
    subject = (commit.message if isinstance(commit.message, str) else commit.message.decode()).splitlines()
    audited_set = set(audited)
    return CommitInfo(commit.hexsha, date, subject[0] if subject else "", tuple(touched),
                      tuple(path for path in touched if _audited_path(path) in audited_set))


def _audited_path(path: str) -> str:
    """``path`` as the manifest names audited files: a monorepo path ``ragas/src/ragas/...`` as ``src/ragas/...``."""
    if path.startswith(MONOREPO_PREFIX + "src/ragas/"):
        return path[len(MONOREPO_PREFIX):]
    return path


def _resolve(repo: git.Repo, ref: str, option: str, source: str) -> str:
    """``ref`` in the clone: as given, as the source's branch (``origin/<ref>``), or fetched from the
    source (a commit no branch or tag reaches)."""
    import git

    for candidate in (ref, f"origin/{ref}"):
        try:
            return repo.commit(candidate).hexsha
        except (git.BadName, git.BadObject, ValueError, LookupError):  # LookupError: HEAD@{99999}
            continue
    try:
        repo.git.fetch("--quiet", source, ref, env=NO_PROMPT)
        return repo.commit("FETCH_HEAD").hexsha
    except (git.GitCommandError, git.BadName, git.BadObject, ValueError) as exc:
        detail = _git_reason(exc) if isinstance(exc, git.GitCommandError) else str(exc)
        raise HarnessInputError(f"{option} {ref!r}: no such commit in the repository ({detail})", field=option,
                                value=ref) from None


NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}


def _git_reason(exc: Exception) -> str:
    """git's own reason (its first ``fatal:``/``error:`` line), or the exception's last line."""
    text = str(getattr(exc, "stderr", "") or exc)
    lines = [line.strip().strip("'").strip() for line in text.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return fatal[0] if fatal else (lines[-1] if lines else type(exc).__name__)


def _clone(source: str, into: Path, option: str) -> git.Repo:
    """A clone of ``source`` (a local repository: objects hard-linked; bare or not) without a checkout,
    checking out only the top-level files and the package folders of ``PACKAGE_ROOTS``; nothing is
    written in ``source``. A repository git cannot read is a HarnessInputError with git's reason."""
    import git

    try:
        clone = git.Repo.clone_from(source, str(into), no_checkout=True, env=NO_PROMPT)
    except (git.GitCommandError, OSError) as exc:
        raise HarnessInputError(f"{option} {source}: cannot read the git repository ({_git_reason(exc)})",
                                field=option, value=source) from None
    clone.git.config("advice.detachedHead", "false")
    # Only the top-level files and the package folders are materialised: all the probe imports, and far
    # less to check out at each commit (docs' large binaries need not even be present in the clone).
    clone.git.sparse_checkout("set", "--no-cone", "/*", "!/*/", *(f"/{root}/" for root in PACKAGE_ROOTS))
    return clone


def _bisect(clone: git.Repo, *args: str) -> str:
    """``git bisect ARGS`` in the clone; its output (stdout of a failing call too: git exits non-zero
    when only skipped commits are left)."""
    import git

    try:
        return clone.git.bisect(*args)
    except git.GitCommandError as exc:
        output = f"{exc.stdout or ''}\n{exc.stderr or ''}"
        if ONLY_SKIPPED in output:
            return output
        raise HarnessInputError(f"git bisect {' '.join(args)} failed: {str(exc).strip()}", field="--good") from None


def _candidates(output: str) -> list[str]:
    if ONLY_SKIPPED not in output:
        return []
    return re.findall(r"^\s*(?:stdout: ')?([0-9a-f]{40})\b", output, re.MULTILINE)


def bisect_cell(checkout: str | Path, good: str, bad: str, case: Case, target: str, *, score: Callable[..., Cell],
                audited: Sequence[str] = (), progress: Progress | None = None,
                prepare: Callable[[Path], Sequence[str]] | None = None,
                ignore: Collection[str] = ()) -> BisectResult:
    """Bisect ``checkout`` between ``good`` and ``bad`` for the cell (``case``, ``target``).

    A commit is bad when the cell differs from the ``good`` cell by any cause the matrix names
    (``causes_between``) but those in ``ignore`` (e.g. ``class_moved``: a class only relocated).

    ``score(sys_path_prefix)`` scores the cell with the Ragas in those folders; ``prepare(tree)``
    makes the clone's tree at the current commit importable and returns those folders (default:
    ``resolve_checkout``, as ``run --ragas-checkout`` does). HarnessInputError for bad refs, for
    ``good`` not an ancestor of ``bad``, and for a ``good`` cell the harness cannot score.
    """
    progress = progress or (lambda message: None)
    prepare = prepare or prepare_checkout
    root = Path(checkout).expanduser()
    option = "--ragas-checkout"
    if not root.exists():
        raise HarnessInputError(f"{option} {checkout}: no such directory", field=option, value=str(checkout))
    scratch = Path(tempfile.mkdtemp(prefix="ragas-compat-bisect-"))
    try:
        with _clone(str(root), scratch / "ragas", option) as clone:
            good_sha = _resolve(clone, good, "--good", str(root))
            bad_sha = _resolve(clone, bad, "--bad", str(root))
            if good_sha == bad_sha:
                raise HarnessInputError("--good and --bad are the same commit", field="--bad", value=bad)
            if not clone.is_ancestor(good_sha, bad_sha):
                raise HarnessInputError(f"--good {good} ({good_sha[:10]}) is not an ancestor of --bad {bad} "
                                        f"({bad_sha[:10]})", field="--good", value=good)
            return _run_bisection(clone, good_sha, bad_sha, case, target, score, prepare, audited, progress,
                                  frozenset(ignore))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _score_at(clone: git.Repo, sha: str, score: Callable[..., Cell],
              prepare: Callable[[Path], Sequence[str]]) -> Cell:
    import git

    try:
        clone.git.checkout("--quiet", "--force", "--detach", sha)
    except git.GitCommandError as exc:  # e.g. a blob missing from a partial clone: skipped, with the reason
        lines = [line.strip() for line in str(exc.stderr or exc).splitlines() if line.strip()]
        return Cell("unavailable", error_message=f"cannot check out {sha[:10]}: {lines[-1] if lines else exc}")
    clone.git.clean("-fdxq")  # leftovers of the previous commit (caches, our _version.py) go
    try:
        prefix = prepare(Path(clone.working_tree_dir))
    except HarnessInputError as exc:
        return Cell("unavailable", error_message=str(exc).splitlines()[0])
    return score(prefix)


def _run_bisection(clone: git.Repo, good_sha: str, bad_sha: str, case: Case, target: str,
                   score: Callable[..., Cell], prepare: Callable[[Path], Sequence[str]], audited: Sequence[str],
                   progress: Progress, ignore: frozenset[str]) -> BisectResult:
    def changes(cell: Cell, label: str) -> tuple[Cause, ...]:
        return tuple(c for c in causes_between(good_cell, cell, "good", label) if c.kind not in ignore)

    good_info, bad_info = commit_info(clone, good_sha, audited), commit_info(clone, bad_sha, audited)
    progress(f"scoring --good {good_info.short}")
    good_cell = _score_at(clone, good_sha, score, prepare)
    why = unscorable(good_cell)
    if why:
        raise HarnessInputError(f"--good {good_info.short}: the cell ({case.id}, {target}) cannot be scored there "
                                f"({why}); choose a --good commit where it can", field="--good", value=good_sha)
    progress(f"scoring --bad {bad_info.short}")
    bad_cell = _score_at(clone, bad_sha, score, prepare)
    common = dict(case_id=case.id, target=target, good=good_info, bad=bad_info, good_cell=good_cell,
                  bad_cell=bad_cell)
    if unscorable(bad_cell):
        raise HarnessInputError(f"--bad {bad_info.short}: the cell ({case.id}, {target}) cannot be scored there "
                                f"({unscorable(bad_cell)})", field="--bad", value=bad_sha)
    if not changes(bad_cell, "bad"):
        return BisectResult(status="unchanged", **common)

    cells: dict[str, Cell] = {good_sha: good_cell, bad_sha: bad_cell}
    steps: list[Step] = []
    output = _bisect(clone, "start", "--no-checkout", bad_sha, good_sha)
    for _ in range(MAX_STEPS):
        if FIRST_BAD.search(output) or ONLY_SKIPPED in output:
            break
        sha = clone.git.rev_parse("BISECT_HEAD")
        subject = commit_info(clone, sha, ()).subject
        progress(f"scoring {sha[:10]} {subject}")
        cell = cells.get(sha) or _score_at(clone, sha, score, prepare)
        cells[sha] = cell
        why = unscorable(cell)
        if why:
            verdict = "skip"
        else:
            found_changes = changes(cell, sha[:10])
            verdict = "bad" if found_changes else "good"
            why = "; ".join(f"{c.kind}: {c.text}" for c in found_changes) or "same as --good"
        steps.append(Step(sha, subject, verdict, cell, why))
        output = _bisect(clone, verdict)
    else:  # pragma: no cover - git bisect always ends within log2(commits) steps
        raise HarnessInputError("git bisect did not end", field="--bad")

    found = FIRST_BAD.search(output)
    if found:
        sha = found.group(1)
        cell = cells.get(sha) or _score_at(clone, sha, score, prepare)
        return BisectResult(status="found", first_bad=commit_info(clone, sha, audited), first_bad_cell=cell,
                            causes=changes(cell, sha[:10]), steps=tuple(steps), **common)
    candidates = tuple(commit_info(clone, sha, audited) for sha in dict.fromkeys(_candidates(output)))
    return BisectResult(status="ambiguous", candidates=candidates, steps=tuple(steps), **common)


# ---------------------------------------------------------------- the real scorer

def package_root(tree: Path) -> str | None:
    """The folder of ``PACKAGE_ROOTS`` that holds ``ragas/__init__.py`` in ``tree`` (None: neither)."""
    return next((root for root in PACKAGE_ROOTS if (tree / root / "ragas" / "__init__.py").is_file()), None)


def prepare_checkout(tree: Path) -> Sequence[str]:
    """The clone's tree at this commit made importable: with ``src/ragas`` as ``run --ragas-checkout``
    makes a checkout; with the monorepo's ``ragas/src/ragas`` that folder, with the same ``_version.py``
    stand-in when the commit has none. HarnessInputError when the commit holds neither."""
    from ragas_compat.pin import resolve_checkout
    from ragas_compat.pin.sources import _VERSION_FILE

    root = package_root(tree)
    if root is None:
        raise HarnessInputError(f"no {' nor '.join(f'{r}/ragas/__init__.py' for r in PACKAGE_ROOTS)} at this "
                                f"commit", field="--ragas-checkout", value=str(tree))
    if root == "src":
        return tuple(resolve_checkout(tree, allow_other_commit=True, option="--ragas-checkout").sys_path_prefix)
    version_file = tree / root / "ragas" / "_version.py"
    if not version_file.exists():
        version_file.write_text(_VERSION_FILE, encoding="utf-8")
    return (str(tree / root),)


def probe_scorer(case: Case, target: str, *, python: str, timeout: float = 600.0) -> Callable[..., Cell]:
    """Score (case, target) with the probe run by ``python`` and the sources first on its path,
    classified against the reference exactly as a matrix column is."""
    suite = Suite("bisect", "bisect", (case,))

    def score(sys_path_prefix: Sequence[str]) -> Cell:
        result = run_probe([case.raw], python=python, sys_path_prefix=list(sys_path_prefix), targets=[target],
                           timeout=timeout)
        if not result.ok:
            lines = [line for line in (result.error or "the probe failed").splitlines() if line.strip()]
            return Cell("unavailable", error_message=lines[0] if lines else "the probe failed")
        audit = build_audit(suite, result.output, NO_EXPECTATIONS, {"matrix_column": "bisect"})
        results = {(r["case_id"], r["target"]): r for r in result.output.get("results", [])}
        for row in audit.rows:
            if (row.case.id, row.target) == (case.id, target):
                return cell_from(row, results.get((case.id, target), {}))
        return Cell("absent", error_message=f"the probe gave no result for {target} on {case.id}")

    return score


# ---------------------------------------------------------------- findings and JSON

def finding_kinds(result: BisectResult, metric_name: str | None) -> list[str]:
    """The ``--fail-on`` kinds the change shows, as ``run`` would name them for the changed cell: none
    when the cell is unchanged; else ``unexplained`` (no rule explains a change between commits), plus
    ``divergence`` / ``error`` / ``out_of_range`` when the changed cell is one against the reference."""
    if result.status == "unchanged":
        return []
    cell = result.first_bad_cell or result.bad_cell
    kinds = {"unexplained"}
    if cell.classification == "divergence":
        kinds.add("divergence")
    if cell.status == "error":
        kinds.add("error")
    if cell.status == "value" and metric_name is not None and out_of_range(metric_name, cell.value):
        kinds.add("out_of_range")
    return sorted(kinds)


def cell_json(cell: Cell | None) -> dict[str, Any] | None:
    if cell is None:
        return None
    out: dict[str, Any] = {"status": cell.status, "text": cell.text}
    if cell.status == "value":
        out["value"] = encode_float(cell.value)
    if cell.status == "error":
        out["error"] = {"type": cell.error_type, "message": cell.error_message}
    if cell.status in ("unavailable", "absent"):
        out["reason"] = cell.error_message
    if cell.classification is not None:
        out["classification"] = cell.classification
    return out


def commit_json(info: CommitInfo | None) -> dict[str, Any] | None:
    if info is None:
        return None
    return {"hexsha": info.hexsha, "date": info.date, "subject": info.subject,
            "files_touched": list(info.files_touched), "audited_files_touched": list(info.audited_touched)}


def result_json(result: BisectResult, kinds: list[str], fail_on: frozenset[str]) -> dict[str, Any]:
    return {
        "case_id": result.case_id, "target": result.target, "status": result.status,
        "good": commit_json(result.good), "bad": commit_json(result.bad),
        "good_cell": cell_json(result.good_cell), "bad_cell": cell_json(result.bad_cell),
        "first_bad": commit_json(result.first_bad), "first_bad_cell": cell_json(result.first_bad_cell),
        "causes": [{"kind": c.kind, "text": c.text} for c in result.causes],
        "candidates": [commit_json(c) for c in result.candidates],
        "steps": [{"hexsha": s.hexsha, "subject": s.subject, "verdict": s.verdict, "cell": cell_json(s.cell),
                   "why": s.why} for s in result.steps],
        "finding_kinds": kinds, "fails": bool(set(kinds) & fail_on),
    }


# ---------------------------------------------------------------- which environment

def nearest_release(checkout: str | Path, ref: str) -> str:
    """The release tag nearest before ``ref`` (``git describe --tags --abbrev=0``), as a version
    (``v0.3.0`` -> ``0.3.0``): whose environment's dependencies the commits are run with."""
    import git
    from packaging.version import InvalidVersion, Version

    folder = Path(checkout).expanduser()
    if not folder.is_dir():
        raise HarnessInputError(f"--ragas-checkout {checkout}: no such directory", field="--ragas-checkout",
                                value=str(checkout))
    try:  # git run in the folder (not git.Repo): a bare repository without a config file is read too
        tag = git.Git(str(folder)).describe("--tags", "--abbrev=0", "--match", "v[0-9]*", ref, env=NO_PROMPT)
    except (git.GitCommandError, OSError) as exc:
        raise HarnessInputError(f"--release-env nearest: no release tag before {ref} ({_git_reason(exc)})",
                                field="--release-env", value=ref) from None
    try:
        return str(Version(tag.removeprefix("ragas-").removeprefix("v")))
    except InvalidVersion:
        raise HarnessInputError(f"--release-env nearest: the nearest tag {tag!r} is not a release version",
                                field="--release-env", value=tag) from None


def nearest_releases(checkout: str | Path, good: str, bad: str) -> list[str]:
    """``--release-env nearest``: the release nearest before ``good``, then the one before ``bad`` (once
    when they are the same): the environments a commit is tried in, in that order."""
    return list(dict.fromkeys([nearest_release(checkout, good), nearest_release(checkout, bad)]))


def needs_other_environment(cell: Cell) -> bool:
    """The cell says nothing about Ragas in this environment and another may run it: the probe could not
    run or import that commit, the class is missing (an import of a dependency failing looks so too) or a
    dependency is missing."""
    return unscorable(cell) is not None or cell.not_run in ("missing_class", "dependency_missing")


def first_scorable(scorers: Sequence[tuple[str, Callable[..., Cell]]],
                   progress: Progress | None = None) -> Callable[..., Cell]:
    """A scorer trying each (label, scorer) in order until one gives a cell ``needs_other_environment``
    does not refuse (else the last one's cell); says on ``progress`` when it moves to the next."""
    progress = progress or (lambda message: None)

    def score(sys_path_prefix: Sequence[str]) -> Cell:
        cell = Cell("unavailable", error_message="no environment to score in")
        for index, (label, scorer) in enumerate(scorers):
            cell = scorer(sys_path_prefix)
            if not needs_other_environment(cell) or index == len(scorers) - 1:
                return cell
            progress(f"not scorable in the {label} environment ({cell.text}); trying {scorers[index + 1][0]}")
        return cell

    return score


# ---------------------------------------------------------------- a URL

def mirror_git(url: str, *, cache_dir: str | Path | None = None, timeout: float = 300.0,
               progress: Progress | None = None) -> Path:
    """A local clone of ``url`` to bisect from: the one ``run --ragas-git`` keeps in its cache (cloned
    there when absent; when present, its tags and branches fetched, and used as it is if that fails).
    HarnessInputError (exit 2) when it cannot be cloned."""
    import git

    from ragas_compat.pin.sources import cache_folder_name, default_cache_dir, public_url

    progress = progress or (lambda message: None)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    destination = cache / cache_folder_name(url)
    shown = public_url(url)
    if destination.exists():
        try:
            git.Git(str(destination)).fetch("--quiet", "--tags", "origin", env=NO_PROMPT, kill_after_timeout=timeout)
        except (git.GitCommandError, OSError) as exc:
            progress(f"--ragas-git {shown}: fetch into the cached clone failed ({_git_reason(exc)}); using it as it is")
        return destination
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=cache))
    try:
        progress(f"cloning {shown}")
        git.Git().clone("--quiet", "--", url, str(staging / "repo"), env=NO_PROMPT, kill_after_timeout=timeout)
        (staging / "repo").rename(destination)
    except (git.GitCommandError, OSError) as exc:
        raise HarnessInputError(f"--ragas-git {shown}: cannot clone ({_git_reason(exc)})", field="--ragas-git",
                                value=shown) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return destination
