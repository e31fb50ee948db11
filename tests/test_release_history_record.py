"""The recorder of pinned/release-history.toml (harness/tools/matrix/release_history.py): a git repository
built here with two tags and a release without one gives the expected entries; the committed file equals
what the recorder derives from the Ragas mirror."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from ragas_compat.tools.matrix.release_history import (
    Driven,
    Entry,
    GitDir,
    HistoryFile,
    audited_blobs,
    blob_id,
    derive,
    driven_from_registry,
    main,
    read_history,
    render,
)
from ragas_compat.tools.matrix.release_list import DEFAULT_HISTORY_FILE

MIRROR = Path(os.environ.get("RAGAS_COMPAT_RAGAS_GIT_DIR", "/nonexistent"))  # a git dir of Ragas's history
DRIVEN = Driven(frozenset({"ragas.metrics._alpha", "ragas.metrics._beta", "ragas.metrics.spans"}),
                frozenset({"Beta"}))
DAY = datetime.date(2025, 1, 1)
HEADER = "# a test history\n"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def write(repo: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def commit_and_tag(repo: Path, files: dict[str, str | None], tag: str) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", tag)
    git(repo, "tag", tag)
    return git(repo, "rev-parse", "HEAD")


def history(*versions: str) -> HistoryFile:
    entries = tuple(Entry(v, DAY, "placeholder", 0, None if i == 0 else (), commit=None if v == "0.1.1" else "x")
                    for i, v in enumerate(versions))
    return HistoryFile(HEADER, versions[0], versions[-1], ("src/ragas/metrics/_alpha.py",), entries)


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "ragas"
    repo.mkdir()
    git(repo, "init", "-q")
    first = commit_and_tag(repo, {
        "src/ragas/metrics/_alpha.py": "class Alpha: pass\n",
        "src/ragas/metrics/_unrelated.py": "class Gamma: pass\n",
        "src/ragas/metrics/base.py": "class Metric: pass\n",
        "src/ragas/evaluation.py": "def evaluate(): pass\n",
        "README.md": "v1\n",
    }, "v0.1.0")
    second = commit_and_tag(repo, {
        "src/ragas/metrics/_alpha.py": "class Alpha:\n    x = 2\n",                   # modified
        "src/ragas/metrics/_beta.py": "class Beta: pass\n",                          # added (legacy module)
        "src/ragas/metrics/_unrelated.py": "class Gamma:\n    x = 2\n",              # not audited
        "src/ragas/metrics/collections/base.py": "class BaseMetric: pass\n",
        "src/ragas/metrics/collections/beta/__init__.py": "from .metric import Beta\n",
        "src/ragas/metrics/collections/beta/metric.py": "class Beta(BaseMetric): pass\n",
        "src/ragas/metrics/collections/beta/util.py": "def helper(): pass\n",
        "src/ragas/metrics/collections/_other.py": "class Other: pass\n",           # defines no driven class
        "src/ragas/evaluation.py": None,                                            # removed
        "README.md": "v2\n",
    }, "v0.2.0")
    return repo, first, second


@needs_git
def test_two_tags_give_added_modified_and_removed_audited_files(repo):
    path, first, second = repo
    derived = derive(history("0.1.0", "0.2.0"), GitDir(path / ".git"), DRIVEN)
    assert [(e.version, e.commit, e.source, e.audited_files, e.changed) for e in derived.entries] == [
        ("0.1.0", first, "tag v0.1.0", 3, None),
        ("0.2.0", second, "tag v0.2.0", 7, (
            "src/ragas/evaluation.py",
            "src/ragas/metrics/_alpha.py",
            "src/ragas/metrics/_beta.py",
            "src/ragas/metrics/collections/base.py",
            "src/ragas/metrics/collections/beta/__init__.py",
            "src/ragas/metrics/collections/beta/metric.py",
            "src/ragas/metrics/collections/beta/util.py",
        )),
    ]
    assert derived.default_list == ("src/ragas/metrics/_alpha.py",) and derived.header == HEADER


@needs_git
def test_a_release_without_a_tag_takes_the_previous_files_or_its_wheel(repo, tmp_path):
    path, _first, _second = repo
    lines: list[str] = []
    derived = derive(history("0.1.0", "0.1.1", "0.2.0"), GitDir(path / ".git"), DRIVEN, log=lines.append)
    untagged = derived.entries[1]
    assert (untagged.commit, untagged.audited_files, untagged.changed) == (None, 3, ())
    assert untagged.source == "placeholder" and "v0.1.0's" in (untagged.note or "") and lines
    assert len(derived.entries[2].changed or ()) == 7

    wheel = tmp_path / "ragas-0.1.1-py3-none-any.whl"  # the wheel changed _alpha.py: read from it
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("ragas/metrics/_alpha.py", "class Alpha: 'wheel'\n")
        archive.writestr("ragas/metrics/base.py", "class Metric: pass\n")
        archive.writestr("ragas/evaluation.py", "def evaluate(): pass\n")
    derived = derive(history("0.1.0", "0.1.1", "0.2.0"), GitDir(path / ".git"), DRIVEN, {"0.1.1": wheel})
    assert derived.entries[1].changed == ("src/ragas/metrics/_alpha.py",)
    assert "read from the wheel" in (derived.entries[1].note or "")


@needs_git
def test_nested_package_paths_are_normalised(tmp_path):
    repo = tmp_path / "mono"
    repo.mkdir()
    git(repo, "init", "-q")
    commit_and_tag(repo, {"ragas/src/ragas/metrics/_alpha.py": "a\n", "ragas/src/ragas/metrics/spans.py": "s\n",
                          "experimental/ragas_experimental/metrics/base.py": "x\n"}, "v0.3.0")
    tree = GitDir(repo / ".git").tree("v0.3.0")
    assert audited_blobs(tree, lambda blob: "", DRIVEN) == {
        "src/ragas/metrics/_alpha.py": blob_id(b"a\n"), "src/ragas/metrics/spans.py": blob_id(b"s\n")}


@needs_git
def test_the_command_rewrites_and_then_checks_clean(repo, tmp_path, monkeypatch, capsys):
    path, _first, _second = repo
    file = tmp_path / "history.toml"
    file.write_text(render(history("0.1.0", "0.2.0")), encoding="utf-8")
    monkeypatch.setattr("ragas_compat.tools.matrix.release_history.driven_from_registry", lambda: DRIVEN)
    assert main(["--git-dir", str(path / ".git"), "--history", str(file), "--check"]) == 1
    assert "+audited_files = 7" in capsys.readouterr().out
    assert main(["--git-dir", str(path / ".git"), "--history", str(file)]) == 0
    assert main(["--git-dir", str(path / ".git"), "--history", str(file), "--check"]) == 0
    assert read_history(file).entries[1].audited_files == 7
    assert main(["--git-dir", str(tmp_path / "absent"), "--history", str(file)]) == 2


def test_the_committed_file_is_in_its_canonical_layout():
    assert render(read_history(DEFAULT_HISTORY_FILE)) == DEFAULT_HISTORY_FILE.read_text(encoding="utf-8")


@pytest.mark.slow
@needs_git
@pytest.mark.skipif(not MIRROR.is_dir(), reason="no Ragas git directory: set RAGAS_COMPAT_RAGAS_GIT_DIR to a clone of Ragas's history")
def test_the_committed_file_equals_the_derivation_from_the_ragas_mirror():
    recorded = read_history(DEFAULT_HISTORY_FILE)
    derived = render(derive(recorded, GitDir(MIRROR), driven_from_registry()))
    assert derived == DEFAULT_HISTORY_FILE.read_text(encoding="utf-8"), (
        "pinned/release-history.toml is stale: python -m ragas_compat.tools.matrix.release_history "
        f"--git-dir {MIRROR}")
