"""``bisect`` on a small synthetic Ragas history built with GitPython: a tiny fake ``ragas`` package whose
ExactMatch changes at one known commit. The real probe scores it (no real Ragas history needed)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import git
import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.bisect import bisect_cell, nearest_release, probe_scorer
from ragas_compat.tools.matrix.drift import Cell

CASE = "strings-identical"  # response == reference: the honest ExactMatch is 1.0
TARGET = "legacy:ExactMatch"
AUDITED = ("src/ragas/metrics/_string.py", "src/ragas/metrics/_faithfulness.py")

FAKE_RAGAS = {
    ".gitignore": "src/ragas/_version.py\n__pycache__/\n",
    "src/ragas/__init__.py": "from ragas._version import __version__\n",
    "src/ragas/run_config.py": "class RunConfig:\n    def __init__(self, **kwargs):\n        self.__dict__.update(kwargs)\n",
    "src/ragas/llms/__init__.py": "",
    "src/ragas/llms/base.py": ("class BaseRagasLLM:\n    def __init__(self, run_config=None):\n"
                               "        self.run_config = run_config\n\n\nclass InstructorBaseRagasLLM:\n    pass\n"),
    "src/ragas/dataset_schema.py": ("from pydantic import BaseModel\n\n\nclass SingleTurnSample(BaseModel):\n"
                                    "    response: str | None = None\n    reference: str | None = None\n"),
    "src/ragas/metrics/__init__.py": "from ragas.metrics._string import ExactMatch\n",
}


def exact_match(expression: str) -> str:
    return ("class ExactMatch:\n"
            "    async def _single_turn_ascore(self, sample, callbacks=None):\n"
            f"        return {expression}\n\n"
            "    async def single_turn_ascore(self, sample, callbacks=None):\n"
            "        return await self._single_turn_ascore(sample, callbacks)\n")


HONEST = exact_match("float(sample.response == sample.reference)")
STRIPPED = exact_match("float(sample.response.strip() == sample.reference.strip())")  # same value here
BROKEN = exact_match("float(sample.response == sample.reference) * 0.9999999999")   # the known change


def commit(repo: git.Repo, message: str, files: dict[str, str]) -> str:
    root = Path(repo.working_tree_dir)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        repo.index.add([name])
    return repo.index.commit(message).hexsha


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str]]:
    """good (0) ... the change (5) ... bad (9); other commits touch other files or keep the value."""
    root = tmp_path_factory.mktemp("ragas-history") / "ragas"
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "test").set_value("user", "email", "test@example.org")
    shas = [commit(repo, "initial fake ragas", {**FAKE_RAGAS, "src/ragas/metrics/_string.py": HONEST})]
    shas.append(commit(repo, "docs: readme", {"README.md": "fake ragas\n"}))
    shas.append(commit(repo, "strip before comparing", {"src/ragas/metrics/_string.py": STRIPPED}))
    shas.append(commit(repo, "docs: more", {"README.md": "fake ragas, more\n"}))
    shas.append(commit(repo, "add faithfulness module", {"src/ragas/metrics/_faithfulness.py": "X = 1\n"}))
    shas.append(commit(repo, "scale exact match", {"src/ragas/metrics/_string.py": BROKEN,
                                                   "docs/changes.md": "scaled\n"}))
    for index in range(6, 10):
        shas.append(commit(repo, f"later change {index}", {f"docs/later{index}.md": f"{index}\n"}))
    repo.create_tag("v0.2.15", ref=shas[0])
    repo.create_tag("v0.3.0", ref=shas[4])
    return root, shas


def state_of(root: Path) -> dict:
    """What a user would notice: HEAD, the branch, the tree's status, every file under .git but objects."""
    repo = git.Repo(root)
    status = repo.git.status("--porcelain", "--ignored")  # first: it may refresh the index's stat data
    files = {}
    for folder, _, names in os.walk(root / ".git"):
        if "objects" in Path(folder).relative_to(root / ".git").parts:
            continue
        for name in names:
            path = Path(folder) / name
            files[str(path.relative_to(root))] = path.read_bytes()
    worktree = sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.parts)
    return {"head": repo.head.commit.hexsha, "branch": repo.active_branch.name,
            "status": status, "git": files, "tree": worktree}


def test_the_real_probe_finds_the_first_bad_commit_and_leaves_the_checkout_alone(history):
    root, shas = history
    before = state_of(root)
    case = load_default_suite().case(CASE)
    messages: list[str] = []
    result = bisect_cell(root, shas[0], shas[-1], case, TARGET, audited=AUDITED, progress=messages.append,
                         score=probe_scorer(case, TARGET, python=sys.executable, timeout=120))
    assert result.status == "found", result
    assert result.first_bad.hexsha == shas[5]
    assert result.first_bad.subject == "scale exact match"
    assert result.first_bad.audited_touched == ("src/ragas/metrics/_string.py",)
    assert result.first_bad.files_touched == ("docs/changes.md", "src/ragas/metrics/_string.py")
    assert result.first_bad.date.endswith("+00:00")
    assert (result.good_cell.value, result.good_cell.classification) == (1.0, "identical")
    assert result.first_bad_cell.value == 0.9999999999 and result.bad_cell.value == 0.9999999999
    assert "value_changed" in {c.kind for c in result.causes}
    # git's bisection order over 9 candidates: a handful of steps, each a real probe run, none skipped
    assert 2 <= len(result.steps) <= 4 and all(step.verdict in ("good", "bad") for step in result.steps)
    assert {step.hexsha for step in result.steps} <= set(shas[1:-1])
    assert any("scoring" in m for m in messages)
    assert state_of(root) == before  # not a file of the user's checkout or its .git changed


def fake_scorer(values: dict[str, Cell], root: Path):
    """Scores by the commit the clone is at (read from the fake source) without running the probe."""
    def score(prefix) -> Cell:
        text = (Path(prefix[0]) / "ragas" / "metrics" / "_string.py").read_text()
        return values[text]
    return score


def prepare(tree: Path):
    return (str(tree / "src"),)


def test_unscorable_commits_are_skipped_and_an_ambiguous_answer_lists_the_candidates(history):
    root, shas = history
    case = load_default_suite().case(CASE)
    limit = Cell("error", error_type="StubMismatch", error_message="prompt layout", classification="error")
    # every commit scorable: the answer is the commit that changed the value
    values = {HONEST: Cell("value", 1.0), STRIPPED: Cell("value", 1.0), BROKEN: Cell("value", 0.5)}
    result = bisect_cell(root, shas[0], shas[-1], case, TARGET, audited=AUDITED, prepare=prepare,
                         score=fake_scorer(values, root))
    assert result.status == "found" and result.first_bad.hexsha == shas[5]

    skipping = {**values, STRIPPED: limit}  # commits 2..4 are a harness limit: skipped, never "bad"
    result = bisect_cell(root, shas[0], shas[5], case, TARGET, audited=AUDITED, prepare=prepare,
                         score=fake_scorer(skipping, root))
    skipped = {s.hexsha for s in result.steps if s.verdict == "skip"}
    assert skipped and skipped <= set(shas[2:5])
    assert result.status == "ambiguous" and result.first_bad is None
    assert [c.hexsha for c in result.candidates] and {c.hexsha for c in result.candidates} == set(shas[2:6])
    assert "harness: judge cannot answer" in {s.cell.text for s in result.steps if s.verdict == "skip"}


def test_unchanged_and_bad_input(history):
    root, shas = history
    case = load_default_suite().case(CASE)
    same = {HONEST: Cell("value", 1.0), STRIPPED: Cell("value", 1.0), BROKEN: Cell("value", 1.0)}
    result = bisect_cell(root, shas[0], shas[-1], case, TARGET, prepare=prepare, score=fake_scorer(same, root))
    assert result.status == "unchanged" and result.steps == ()
    moved = {**same, BROKEN: Cell("value", 1.0, ragas_class="ragas.metrics._new.ExactMatch")}
    for text in (HONEST, STRIPPED):
        moved[text] = Cell("value", 1.0, ragas_class="ragas.metrics._string.ExactMatch")
    found = bisect_cell(root, shas[0], shas[-1], case, TARGET, prepare=prepare, score=fake_scorer(moved, root))
    assert found.status == "found" and [c.kind for c in found.causes] == ["class_moved"]
    ignored = bisect_cell(root, shas[0], shas[-1], case, TARGET, prepare=prepare, score=fake_scorer(moved, root),
                          ignore={"class_moved"})
    assert ignored.status == "unchanged"
    with pytest.raises(HarnessInputError, match="not an ancestor"):
        bisect_cell(root, shas[5], shas[1], case, TARGET, prepare=prepare, score=fake_scorer(same, root))
    with pytest.raises(HarnessInputError, match="--good 'nope': no such commit"):
        bisect_cell(root, "nope", shas[1], case, TARGET, prepare=prepare, score=fake_scorer(same, root))
    limit = {HONEST: Cell("error", error_type="TargetNotScripted", error_message="x")}
    with pytest.raises(HarnessInputError, match="cannot be scored there"):
        bisect_cell(root, shas[0], shas[1], case, TARGET, prepare=prepare, score=fake_scorer(limit, root))


def test_cli_prints_the_first_bad_commit_and_exits_by_fail_on(history, monkeypatch):
    from typer.testing import CliRunner

    import ragas_compat.cli.bisect as cli_bisect
    from ragas_compat.cli.app import app

    root, shas = history
    values = {HONEST: Cell("value", 1.0, classification="identical"),
              STRIPPED: Cell("value", 1.0, classification="identical"),
              BROKEN: Cell("value", 0.5, classification="divergence")}
    monkeypatch.setattr(cli_bisect, "probe_scorer", lambda *a, **k: fake_scorer(values, root))
    monkeypatch.setattr(cli_bisect, "prepare_checkout", prepare)
    monkeypatch.setattr(cli_bisect, "_audited_files", lambda: AUDITED)  # the pin manifest's list, here ours
    args = ["bisect", "--ragas-checkout", str(root), "--good", shas[0], "--bad", shas[-1], "--case", CASE,
            "--target", TARGET]
    found = CliRunner().invoke(app, [*args, "--format", "json"])
    assert found.exit_code == 1, found.output
    doc = json.loads(found.output)
    assert doc["status"] == "found" and doc["first_bad"]["hexsha"] == shas[5]
    assert doc["first_bad"]["subject"] == "scale exact match" and doc["fails"] is True
    assert doc["finding_kinds"] == ["divergence", "unexplained"]
    quiet = CliRunner().invoke(app, [*args, "--fail-on", "none"])
    assert quiet.exit_code == 0 and shas[5][:10] in quiet.output and "scale exact match" in quiet.output
    error_only = CliRunner().invoke(app, [*args, "--fail-on", "error"])
    assert error_only.exit_code == 0
    md = CliRunner().invoke(app, [*args, "--format", "md", "--fail-on", "divergence"])
    assert md.exit_code == 1 and f"**First bad commit** `{shas[5]}`" in md.stdout
    assert "Audited files touched: `src/ragas/metrics/_string.py`" in md.stdout
    bad_target = CliRunner().invoke(app, [*args[:-1], "legacy:NoSuchClass"])
    assert bad_target.exit_code == 2 and "--target" in bad_target.output


def test_release_env_nearest_tries_the_good_environment_then_the_bad_one(history, monkeypatch):
    """The release before --good (0.2.15) scores what it can import; a commit it cannot (a dependency
    dropped there, as pysbd at 0.2.11) is scored in the release before --bad (0.3.0)."""
    from typer.testing import CliRunner

    import ragas_compat.cli.bisect as cli_bisect
    from ragas_compat.cli.app import app
    from ragas_compat.tools.matrix.environments import Environment

    root, shas = history
    assert nearest_release(root, shas[-1]) == "0.3.0" and nearest_release(root, shas[3]) == "0.2.15"
    asked: dict = {"located": [], "scored": []}

    def environments(entries, **kwargs):
        asked["versions"] = [e.exact_version for e in entries]
        return [Environment(e.text, "release", e.exact_version, f"/envs/{e.exact_version}/bin/python",
                            status="reused") for e in entries]

    def scorer(case, target, *, python, timeout):
        good_env = python == "/envs/0.2.15/bin/python"
        cannot_import = Cell("unavailable", error_message="ModuleNotFoundError: No module named 'newdep'")
        values = {HONEST: Cell("value", 1.0), STRIPPED: Cell("value", 1.0),
                  BROKEN: cannot_import if good_env else Cell("value", 0.5)}
        inner = fake_scorer(values, root)

        def score(prefix):
            asked["scored"].append(python)
            return inner(prefix)
        return score

    monkeypatch.setattr(cli_bisect, "ensure_environments", environments)
    monkeypatch.setattr(cli_bisect, "locate_installed", lambda python, timeout: asked["located"].append(python))
    monkeypatch.setattr(cli_bisect, "probe_scorer", scorer)
    monkeypatch.setattr(cli_bisect, "prepare_checkout", prepare)
    result = CliRunner().invoke(app, ["bisect", "--ragas-checkout", str(root), "--good", "v0.2.15", "--bad",
                                      shas[-1], "--case", CASE, "--target", TARGET, "--release-env", "nearest",
                                      "--format", "json", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    assert asked["versions"] == ["0.2.15", "0.3.0"]
    assert asked["located"] == ["/envs/0.2.15/bin/python", "/envs/0.3.0/bin/python"]
    assert asked["scored"][0] == "/envs/0.2.15/bin/python"  # --good in the good environment
    assert "/envs/0.3.0/bin/python" in asked["scored"]        # the later commits fall back to the bad one
    doc = json.loads(result.stdout)
    assert doc["first_bad"]["hexsha"] == shas[5] and doc["first_bad_cell"]["value"] == 0.5


def _monorepo_history(root: Path) -> list[str]:
    """The monorepo years in small: src/ragas (0-1), moved to ragas/src/ragas (2), the change (4)."""
    repo = git.Repo.init(root)
    with repo.config_writer() as config:
        config.set_value("user", "name", "test").set_value("user", "email", "test@example.org")
    shas = [commit(repo, "initial fake ragas", {**FAKE_RAGAS, "src/ragas/metrics/_string.py": HONEST})]
    shas.append(commit(repo, "docs", {"README.md": "fake ragas\n"}))
    moved = {("ragas/" + name if name.startswith("src/") else name): text for name, text in FAKE_RAGAS.items()}
    moved[".gitignore"] = "ragas/src/ragas/_version.py\n__pycache__/\n"
    repo.index.remove([name for name in FAKE_RAGAS if name.startswith("src/")] + ["src/ragas/metrics/_string.py"],
                      working_tree=True)
    shas.append(commit(repo, "monorepo: move the package under ragas/",
                       {**moved, "ragas/src/ragas/metrics/_string.py": HONEST}))
    shas.append(commit(repo, "monorepo: docs", {"docs/more.md": "x\n"}))
    shas.append(commit(repo, "scale exact match", {"ragas/src/ragas/metrics/_string.py": BROKEN}))
    shas.append(commit(repo, "later", {"docs/later.md": "y\n"}))
    repo.create_tag("v0.2.15", ref=shas[0])
    repo.create_tag("v0.3.0", ref=shas[2])
    return shas


@pytest.mark.slow
def test_the_monorepo_layout_is_found_and_scored_by_the_real_probe(tmp_path):
    """Commits that keep the package under ragas/src/ragas (tags v0.3.0-v0.3.2 of the real history) are
    prepared and scored like src/ragas ones, and their audited files are named as the manifest names them."""
    root = tmp_path / "ragas"
    shas = _monorepo_history(root)
    case = load_default_suite().case(CASE)
    result = bisect_cell(root, "v0.2.15", shas[-1], case, TARGET, audited=AUDITED,
                         score=probe_scorer(case, TARGET, python=sys.executable, timeout=120))
    assert result.status == "found", result
    assert result.first_bad.hexsha == shas[4]
    assert result.first_bad.files_touched == ("ragas/src/ragas/metrics/_string.py",)
    assert result.first_bad.audited_touched == ("ragas/src/ragas/metrics/_string.py",)
    assert result.first_bad_cell.value == 0.9999999999
    assert all(step.verdict in ("good", "bad") for step in result.steps)  # no commit skipped for its layout
    assert {s.hexsha for s in result.steps if s.verdict == "good"} & set(shas[2:4])  # a monorepo commit scored


def test_prepare_checkout_finds_either_layout(tmp_path):
    from ragas_compat.tools.bisect import package_root, prepare_checkout

    root = tmp_path / "ragas"
    _monorepo_history(root)
    assert package_root(root) == "ragas/src"
    [prefix] = prepare_checkout(root)
    assert prefix == str(root / "ragas" / "src")
    assert (root / "ragas/src/ragas/_version.py").read_text().startswith("# written by ragas-compat")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert package_root(empty) is None
    with pytest.raises(HarnessInputError, match=re.escape("no src/ragas/__init__.py nor ragas/src/ragas/__init__.py")):
        prepare_checkout(empty)


def _bisect_cli(repository_args: list[str], shas: list[str], root: Path, monkeypatch, *extra: str):
    from typer.testing import CliRunner

    import ragas_compat.cli.bisect as cli_bisect
    from ragas_compat.cli.app import app

    values = {HONEST: Cell("value", 1.0), STRIPPED: Cell("value", 1.0), BROKEN: Cell("value", 0.5)}
    monkeypatch.setattr(cli_bisect, "probe_scorer", lambda *a, **k: fake_scorer(values, root))
    monkeypatch.setattr(cli_bisect, "prepare_checkout", prepare)
    monkeypatch.setattr(cli_bisect, "_audited_files", lambda: AUDITED)
    return CliRunner().invoke(app, ["bisect", *repository_args, "--good", shas[0], "--bad", shas[-1],
                                    "--case", CASE, "--target", TARGET, "--fail-on", "none", *extra])


def test_a_bare_repository_without_a_config_file_bisects(history, tmp_path, monkeypatch):
    root, shas = history
    bare = tmp_path / "mirror.git"
    git.Repo.clone_from(str(root), str(bare), bare=True).close()
    (bare / "config").unlink()  # as a mirror that keeps only HEAD, objects, refs and packed-refs
    result = _bisect_cli(["--ragas-checkout", str(bare)], shas, root, monkeypatch, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["first_bad"]["hexsha"] == shas[5]
    assert nearest_release(bare, shas[-1]) == "0.3.0"


def test_an_unreadable_repository_is_exit_2_never_4(history, tmp_path, monkeypatch):
    root, shas = history
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    for folder in (not_a_repo, tmp_path / "absent"):
        result = _bisect_cli(["--ragas-checkout", str(folder)], shas, root, monkeypatch)
        assert result.exit_code == 2, result.output
        assert str(folder) in " ".join(result.stderr.split()) and "internal error" not in result.output
    if os.geteuid() != 0:
        return  # only root can hand a repository to another user here
    import pwd
    import shutil

    foreign = tmp_path / "foreign"
    shutil.copytree(root, foreign)
    nobody = pwd.getpwnam("nobody")
    for folder, _, names in os.walk(foreign):
        for name in [".", *names]:
            os.chown(Path(folder) / name, nobody.pw_uid, nobody.pw_gid)
    result = _bisect_cli(["--ragas-checkout", str(foreign)], shas, root, monkeypatch)
    assert result.exit_code == 2, result.output
    assert "cannot read the git repository" in result.stderr and "dubious ownership" in result.stderr


def test_a_url_is_cloned_into_the_cache_and_bisected(history, tmp_path, monkeypatch):
    root, shas = history
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = root.as_uri()
    result = _bisect_cli(["--ragas-git", url], shas, root, monkeypatch, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["first_bad"]["hexsha"] == shas[5]
    [cached] = list((tmp_path / "cache" / "ragas-compat" / "git").iterdir())
    assert git.Repo(cached).head.commit.hexsha == shas[-1]
    again = _bisect_cli(["--ragas-git", url], shas, root, monkeypatch, "--format", "json")  # reuses it
    assert again.exit_code == 0, again.output
    missing = _bisect_cli(["--ragas-git", (tmp_path / "nowhere").as_uri()], shas, root, monkeypatch)
    assert missing.exit_code == 2 and "cannot clone" in missing.stderr
    both = _bisect_cli(["--ragas-git", url, "--ragas-checkout", str(root)], shas, root, monkeypatch)
    assert both.exit_code == 2 and "one of them" in both.stderr


def test_only_src_is_checked_out_so_a_clone_missing_large_doc_blobs_still_bisects(tmp_path):
    """Like a partial mirror of Ragas whose docs' GIFs are absent: the blobs outside src/ are never needed."""
    repo = git.Repo.init(tmp_path / "partial")
    with repo.config_writer() as config:
        config.set_value("user", "name", "test").set_value("user", "email", "test@example.org")
    shas = [commit(repo, "initial", {**FAKE_RAGAS, "src/ragas/metrics/_string.py": HONEST,
                                     "docs/big.gif": "GIF89a not really"})]
    shas.append(commit(repo, "docs", {"docs/other.md": "x\n"}))
    shas.append(commit(repo, "the change", {"src/ragas/metrics/_string.py": BROKEN}))
    shas.append(commit(repo, "later", {"docs/later.md": "y\n"}))
    blob = repo.commit(shas[0]).tree / "docs" / "big.gif"
    (Path(repo.git_dir) / "objects" / blob.hexsha[:2] / blob.hexsha[2:]).unlink()  # the blob is gone
    case = load_default_suite().case(CASE)
    values = {HONEST: Cell("value", 1.0), BROKEN: Cell("value", 0.5)}
    result = bisect_cell(tmp_path / "partial", shas[0], shas[-1], case, TARGET, prepare=prepare,
                         score=fake_scorer(values, tmp_path))
    assert result.status == "found" and result.first_bad.hexsha == shas[2]
