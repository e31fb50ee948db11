"""`ragas-compat pin show` and `pin record` (the `pin` command group of the app, offline)."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import subprocess
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from ragas_compat.cli import app
from ragas_compat.pin.manifest import DEFAULT_MANIFEST_PATH, load_manifest, write_manifest
from ragas_compat.pin.sources import resolve_installed

SITE_RAGAS = Path(importlib.util.find_spec("ragas").submodule_search_locations[0])
ACTOR = git.Actor("ragas-compat tests", "tests@example.invalid")
runner = CliRunner()


@pytest.fixture
def ragas_repo(tmp_path) -> tuple[Path, str]:
    root = tmp_path / "ragas-checkout"
    shutil.copytree(SITE_RAGAS, root / "src" / "ragas",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_version.py"))
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\nsrc/ragas/_version.py\n")
    with git.Repo.init(root) as repo:
        repo.git.add("--all")
        return root, repo.index.commit("ragas sources", author=ACTOR, committer=ACTOR).hexsha


@pytest.fixture
def manifest_copy(tmp_path) -> Path:
    """A writable copy of the repository manifest (and its constraints file)."""
    folder = tmp_path / "pinned"
    folder.mkdir()
    shutil.copy(DEFAULT_MANIFEST_PATH, folder / "pin.toml")
    shutil.copy(DEFAULT_MANIFEST_PATH.parent / "constraints.txt", folder / "constraints.txt")
    return folder / "pin.toml"


def git_hash_object(path: Path) -> str:
    return subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_show_prints_the_pin_and_the_installed_comparison():
    result = runner.invoke(app, ["pin", "show"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "298b68274234c060deacab3cf5fb52aa3a20e885" in result.output
    assert "release 0.4.3, not the pinned commit 298b682" in result.output
    assert "langchain-community<0.4" in result.output
    assert "src/ragas/metrics/_context_precision.py" in result.output


def test_show_bad_manifest_exits_2(tmp_path):
    bad = tmp_path / "pin.toml"
    bad.write_text("[pin]\ncommit = 'x'\n")
    result = runner.invoke(app, ["pin", "show", "--manifest", str(bad)])
    assert result.exit_code == 2
    assert "pin.commit" in result.output and "Traceback" not in result.output


def test_record_writes_measured_hashes_for_the_head_commit(ragas_repo, manifest_copy):
    root, commit = ragas_repo
    result = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(root), "--manifest", str(manifest_copy)])
    assert result.exit_code == 0, result.output
    manifest = load_manifest(manifest_copy)
    point = manifest.reference_point(f"commit-{commit[:7]}")
    assert point.kind == "commit" and point.commit == commit and point.absent == ()
    for file in manifest.audited_files:
        assert point.blobs[file] == git_hash_object(root / file)
    assert point.blobs == dict(manifest.reference_point("v0.4.3").blobs)  # built from 0.4.3 files
    # recording again is idempotent
    again = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(root), "--manifest", str(manifest_copy)])
    assert again.exit_code == 0 and load_manifest(manifest_copy) == manifest


def test_recording_the_pin_makes_identity_with_the_pin_knowable(ragas_repo, manifest_copy):
    root, commit = ragas_repo
    base = load_manifest(manifest_copy)
    write_manifest(dataclasses.replace(base, pin=dataclasses.replace(base.pin, commit=commit)))
    before = resolve_installed(load_manifest(manifest_copy))
    assert before.audited_vs_pin["status"] == "unknown"
    result = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(root), "--manifest", str(manifest_copy)])
    assert result.exit_code == 0, result.output
    manifest = load_manifest(manifest_copy)
    assert manifest.pin_reference_point().name == "pin"
    after = resolve_installed(manifest)
    assert after.audited_vs_pin["status"] == "identical"
    assert after.files_status.startswith("identical to the pin")


def test_record_uses_a_tag_name_and_lists_absent_files(ragas_repo, manifest_copy):
    root, _ = ragas_repo
    with git.Repo(root) as repo:
        repo.index.remove(["src/ragas/metrics/_faithfulness.py"], working_tree=True)
        sha = repo.index.commit("drop faithfulness", author=ACTOR, committer=ACTOR).hexsha
        repo.create_tag("v9.9.9")
    result = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(root), "--manifest", str(manifest_copy)])
    assert result.exit_code == 0, result.output
    point = load_manifest(manifest_copy).reference_point("v9.9.9")
    assert point.kind == "tag" and point.commit == sha
    assert point.absent == ("src/ragas/metrics/_faithfulness.py",)


def test_record_refuses_a_name_used_for_another_commit(ragas_repo, manifest_copy):
    root, _ = ragas_repo
    before = manifest_copy.read_text()
    result = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(root), "--manifest", str(manifest_copy),
                                     "--name", "v0.4.3"])
    assert result.exit_code == 2
    assert "already records 4ecab38" in result.output
    assert manifest_copy.read_text() == before


def test_record_refuses_contradicting_hashes(ragas_repo, manifest_copy):
    root, commit = ragas_repo
    base = load_manifest(manifest_copy)
    wrong = dataclasses.replace(base.reference_point("main@2b38724"), name="wrong", commit=commit)
    write_manifest(base.with_reference_point(wrong))
    result = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(root), "--manifest", str(manifest_copy)])
    assert result.exit_code == 2
    assert "records other contents" in result.output and "_context_precision.py" in result.output


def test_record_on_a_non_repository_exits_2(tmp_path, manifest_copy):
    result = runner.invoke(app, ["pin", "record", "--ragas-checkout", str(tmp_path), "--manifest", str(manifest_copy)])
    assert result.exit_code == 2
    assert "not a git working tree" in result.output
