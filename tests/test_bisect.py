"""``bisect`` on a small synthetic Ragas history built with GitPython: a tiny fake ``ragas`` package whose
ExactMatch changes at one known commit. The real probe scores it (no real Ragas history needed)."""

from __future__ import annotations

import json
import os
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


def test_release_env_nearest_uses_the_environment_of_the_tag_before_bad(history, monkeypatch):
    from typer.testing import CliRunner

    import ragas_compat.cli.bisect as cli_bisect
    from ragas_compat.cli.app import app
    from ragas_compat.tools.matrix.environments import Environment

    root, shas = history
    assert nearest_release(root, shas[-1]) == "0.3.0" and nearest_release(root, shas[3]) == "0.2.15"
    asked: dict = {}

    def environments(entries, **kwargs):
        asked["versions"] = [e.exact_version for e in entries]
        return [Environment(e.text, "release", e.exact_version, "/envs/0.3.0/bin/python", status="reused")
                for e in entries]

    def scorer(case, target, *, python, timeout):
        asked["python"] = python
        return fake_scorer({HONEST: Cell("value", 1.0), STRIPPED: Cell("value", 1.0), BROKEN: Cell("value", 0.5)},
                           root)

    monkeypatch.setattr(cli_bisect, "ensure_environments", environments)
    monkeypatch.setattr(cli_bisect, "locate_installed", lambda python, timeout: asked.setdefault("located", python))
    monkeypatch.setattr(cli_bisect, "probe_scorer", scorer)
    monkeypatch.setattr(cli_bisect, "prepare_checkout", prepare)
    result = CliRunner().invoke(app, ["bisect", "--ragas-checkout", str(root), "--good", "v0.2.15", "--bad",
                                      shas[-1], "--case", CASE, "--target", TARGET, "--release-env", "nearest",
                                      "--format", "json", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    assert asked == {"versions": ["0.3.0"], "python": "/envs/0.3.0/bin/python", "located": "/envs/0.3.0/bin/python"}
    assert json.loads(result.stdout)["first_bad"]["hexsha"] == shas[5]


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
