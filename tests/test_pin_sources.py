"""Ragas sources: installed (compared file by file), git checkouts verified by commit, git URLs.

Offline: checkouts are throwaway git repositories built from the installed Ragas sources
(``src/ragas/...``, without the build-generated ``_version.py``, like a real checkout).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import git
import pytest

from ragas_compat.pin.manifest import load_manifest
from ragas_compat.pin.sources import (
    PythonUnusable,
    RagasNotInstalled,
    RagasSourceError,
    cache_folder_name,
    public_url,
    resolve_checkout,
    resolve_git,
    resolve_installed,
    resolve_ragas_source,
)

SITE_RAGAS = Path(importlib.util.find_spec("ragas").submodule_search_locations[0])  # found, not imported
ACTOR = git.Actor("ragas-compat tests", "tests@example.invalid")
CP = "src/ragas/metrics/_context_precision.py"


def commit_all(repo: git.Repo, message: str) -> str:
    repo.git.add("--all")
    return repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("template") / "ragas"
    shutil.copytree(SITE_RAGAS, root / "src" / "ragas",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_version.py"))
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\nsrc/ragas/_version.py\n")
    repo = git.Repo.init(root)
    first = commit_all(repo, "ragas sources as installed")
    repo.close()
    return root, first


@pytest.fixture
def ragas_repo(template_repo, tmp_path) -> tuple[Path, str]:
    """A private copy of the template repository and its first commit."""
    root = tmp_path / "ragas"
    shutil.copytree(template_repo[0], root)
    return root, template_repo[1]


def add_second_commit(root: Path) -> str:
    with git.Repo(root) as repo:
        with open(root / CP, "a", encoding="utf-8") as handle:
            handle.write("\n# a later change\n")
        return commit_all(repo, "a later change")


def manifest_pinned_at(commit: str):
    manifest = load_manifest()
    return dataclasses.replace(manifest, pin=dataclasses.replace(manifest.pin, commit=commit))


def head_of(root: Path) -> str:
    with git.Repo(root) as repo:
        return repo.head.commit.hexsha


# ---------------------------------------------------------------- installed

def test_installed_release_is_reported_honestly_with_file_comparison():
    manifest = load_manifest()
    source = resolve_installed(manifest)
    assert source.kind == "installed" and source.sys_path_prefix == []
    assert source.version == "0.4.3" and source.commit is None and not source.is_pin
    assert source.display_path == "site-packages/ragas"
    assert source.pin_status.startswith("release 0.4.3, not the pinned commit 298b682; "
                                        f"the {len(manifest.audited_files)} audited files (hashed: the modules "
                                        "behind the registered targets) identical to reference point v0.4.3")
    assert set(source.file_comparison) == set(manifest.audited_files)
    for entry in source.file_comparison.values():
        assert "v0.4.3" in entry["matches"] and "wheel ragas-0.4.3" in entry["matches"]
    # the two files rewritten on main before the pin (db8eb679) do not match main@2b38724
    assert "main@2b38724" not in source.file_comparison[CP]["matches"]
    assert "v0.4.3" in source.identical_to and "main@2b38724" not in source.identical_to
    # the pin's own hashes are not recorded in the repository manifest: unknown, not guessed
    if manifest.pin_reference_point() is None:
        assert source.audited_vs_pin["status"] == "unknown"
        assert source.files_status.startswith("cannot be known")


def test_installed_blobs_equal_git_hash_object():
    source = resolve_installed(load_manifest())
    for file, entry in source.file_comparison.items():
        path = SITE_RAGAS.parent / file.removeprefix("src/")
        expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True,
                                  check=True).stdout.strip()
        assert entry["blob"] == expected


def test_installed_against_recorded_pin_hashes_lists_differing_files():
    base = load_manifest()
    recorded = dict(base.reference_point("main@2b38724").blobs)
    pin_point = dataclasses.replace(base.reference_point("main@2b38724"), name="pin", commit=base.pin.commit)
    manifest = dataclasses.replace(base, reference_points=base.reference_points + (pin_point,))
    source = resolve_installed(manifest)
    assert source.audited_vs_pin["status"] == "differ"
    assert source.audited_vs_pin["differing_files"] == [
        CP, "src/ragas/metrics/collections/context_precision/metric.py"]
    assert source.files_status == ("differ from the pin: " + CP
                                   + ", src/ragas/metrics/collections/context_precision/metric.py")
    assert recorded[CP] != source.file_comparison[CP]["blob"]


def test_installed_provenance_is_json_and_portable():
    source = resolve_installed(load_manifest())
    text = json.dumps(source.to_provenance(), sort_keys=True)
    assert str(SITE_RAGAS) not in text and str(Path.home()) not in text
    assert json.loads(text)["display_path"] == "site-packages/ragas"
    assert source.to_provenance() == resolve_installed(load_manifest()).to_provenance()


def test_unusable_python_is_a_clean_error(tmp_path):
    # a missing interpreter is "Ragas could not be run" (exit 3), like one without Ragas
    with pytest.raises(PythonUnusable, match="cannot run Python") as raised:
        resolve_installed(load_manifest(), python=str(tmp_path / "no-python"))
    assert raised.value.exit_code == 3


@pytest.mark.parametrize("script, message", [
    ("echo hello", "it printed 'hello'"),
    ("true", "it printed nothing"),
    ("echo '[1, 2]'", "it printed '[1, 2]'"),
    ("echo 'broken' >&2; exit 7", "failed to locate Ragas (exit 7): broken"),
])
def test_a_python_that_answers_something_else_is_exit_3(tmp_path, script, message):
    python = tmp_path / "not-python"
    python.write_text(f"#!/bin/sh\n{script}\n")
    python.chmod(0o755)
    with pytest.raises(PythonUnusable, match=re.escape(message)) as raised:
        resolve_installed(load_manifest(), python=str(python))
    assert raised.value.exit_code == 3


def test_python_without_ragas_is_a_clean_error(tmp_path):
    python = tmp_path / "python-without-ragas"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} -S -I \"$@\"\n")  # no site-packages
    python.chmod(0o755)
    with pytest.raises(RagasNotInstalled, match="no Ragas is importable") as raised:
        resolve_installed(load_manifest(), python=str(python))
    assert raised.value.exit_code == 3


# ---------------------------------------------------------------- checkout

def test_checkout_at_the_pin_is_verified_by_commit(ragas_repo):
    root, first = ragas_repo
    source = resolve_checkout(root, manifest_pinned_at(first))
    assert (source.kind, source.commit, source.is_pin, source.warning) == ("checkout", first, True, None)
    assert source.version is None
    assert source.sys_path_prefix == [str(root.resolve() / "src")]
    assert source.display_path == "ragas"
    assert source.pin_status == f"checkout at the pinned commit {first[:7]}"
    assert source.audited_vs_pin["status"] == "identical"
    assert "v0.4.3" in source.identical_to  # built from the installed 0.4.3 files
    text = json.dumps(source.to_provenance())
    assert str(root.parent) not in text


def test_present_pinned_commit_is_checked_out(ragas_repo):
    root, first = ragas_repo
    second = add_second_commit(root)
    assert head_of(root) == second
    source = resolve_checkout(root, manifest_pinned_at(first))
    assert head_of(root) == first and source.commit == first and source.is_pin
    assert any("checked out the pinned commit" in note for note in source.notes)
    assert source.file_comparison[CP]["blob"] == load_manifest().reference_point("v0.4.3").blobs[CP]


def test_dirty_tree_is_refused_and_left_alone(ragas_repo):
    root, first = ragas_repo
    second = add_second_commit(root)
    (root / CP).write_text("edited\n")
    with pytest.raises(RagasSourceError, match=r"uncommitted or untracked changes .*_context_precision\.py"):
        resolve_checkout(root, manifest_pinned_at(first))
    assert head_of(root) == second and (root / CP).read_text() == "edited\n"


def test_untracked_file_is_refused(ragas_repo):
    root, first = ragas_repo
    (root / "src" / "ragas" / "shadow.py").write_text("x = 1\n")
    with pytest.raises(RagasSourceError, match=r"shadow\.py"):
        resolve_checkout(root, manifest_pinned_at(first))


def test_missing_pinned_commit_is_refused(ragas_repo):
    root, first = ragas_repo
    with pytest.raises(RagasSourceError) as info:
        resolve_checkout(root, manifest_pinned_at("1234567" + "0" * 33))
    message = str(info.value)
    assert "not in this repository" in message and "--allow-other-commit" in message
    assert head_of(root) == first


def test_other_commit_only_with_the_flag_and_then_flagged(ragas_repo):
    root, first = ragas_repo
    second = add_second_commit(root)
    manifest = manifest_pinned_at("1234567" + "0" * 33)
    with pytest.raises(RagasSourceError):
        resolve_checkout(root, manifest)
    source = resolve_checkout(root, manifest, allow_other_commit=True)
    assert source.commit == second and not source.is_pin and head_of(root) == second
    assert source.pin_status.startswith(f"checkout at {second[:7]}, NOT the pinned commit 1234567")
    assert source.warning.startswith("NOT THE PIN") and second in source.warning
    assert "v0.4.3" not in source.file_comparison[CP]["matches"]
    # the flag keeps HEAD even when the pinned commit is present
    kept = resolve_checkout(root, manifest_pinned_at(first), allow_other_commit=True)
    assert kept.commit == second and not kept.is_pin and head_of(root) == second


def test_not_a_repository_or_not_ragas_is_refused(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(RagasSourceError, match="not a git working tree"):
        resolve_checkout(tmp_path / "plain", load_manifest())
    with pytest.raises(RagasSourceError, match="no such directory"):
        resolve_checkout(tmp_path / "absent", load_manifest())
    other = tmp_path / "other"
    other.mkdir()
    (other / "README").write_text("not ragas\n")
    repo = git.Repo.init(other)
    sha = commit_all(repo, "x")
    repo.close()
    with pytest.raises(RagasSourceError, match="not a Ragas source tree"):
        resolve_checkout(other, manifest_pinned_at(sha))


@pytest.mark.slow
def test_probe_imports_ragas_from_the_checkout(ragas_repo):
    from ragas_compat.runner import run_probe

    root, first = ragas_repo
    source = resolve_checkout(root, manifest_pinned_at(first))
    run = run_probe([], sys_path_prefix=source.sys_path_prefix, targets=[], timeout=300)
    assert run.ok, run.error
    imported = Path(run.output["ragas"]["file"]).resolve()
    assert imported.is_relative_to(root.resolve() / "src")
    assert imported != (SITE_RAGAS / "__init__.py").resolve()
    # a checkout has no generated _version.py: identity must come from the commit
    assert run.output["ragas"]["version"] == "unknown version"


def test_missing_generated_version_file_is_supplied_gitignored(ragas_repo):
    """Ragas imports ragas._version unconditionally; a checkout lacks it (setuptools-scm writes it)."""
    root, first = ragas_repo
    version_file = root / "src" / "ragas" / "_version.py"
    assert not version_file.exists()
    source = resolve_checkout(root, manifest_pinned_at(first))
    assert version_file.read_text().startswith("# written by ragas-compat:")
    assert any("wrote the gitignored src/ragas/_version.py" in note for note in source.notes)
    with git.Repo(root) as repo:
        assert not repo.is_dirty(untracked_files=True)
    resolve_checkout(root, manifest_pinned_at(first))  # ours is rewritten, not refused


def test_version_file_from_a_build_is_left_alone(ragas_repo):
    root, first = ragas_repo
    version_file = root / "src" / "ragas" / "_version.py"
    version_file.write_text("__version__ = version = '0.4.4.dev1+gdeadbee'\n")
    source = resolve_checkout(root, manifest_pinned_at(first))
    assert version_file.read_text() == "__version__ = version = '0.4.4.dev1+gdeadbee'\n"
    assert any("may be stale" in note for note in source.notes)


def test_version_file_not_gitignored_is_refused(ragas_repo):
    root, _first = ragas_repo
    with git.Repo(root) as repo:
        (root / ".gitignore").write_text("__pycache__/\n*.pyc\n")
        second = commit_all(repo, "stop ignoring _version.py")
    with pytest.raises(RagasSourceError, match="missing and not gitignored"):
        resolve_checkout(root, manifest_pinned_at(second))
    assert not (root / "src" / "ragas" / "_version.py").exists()


def test_resolve_ragas_source_dispatch(ragas_repo):
    root, first = ragas_repo
    assert resolve_ragas_source(checkout=root, manifest=manifest_pinned_at(first)).kind == "checkout"
    assert resolve_ragas_source(manifest=load_manifest()).kind == "installed"
    with pytest.raises(RagasSourceError, match="not both"):
        resolve_ragas_source(checkout=root, git_url="file:///x")
    with pytest.raises(RagasSourceError, match="only to --ragas-checkout"):
        resolve_ragas_source(allow_other_commit=True, manifest=load_manifest())


# ---------------------------------------------------------------- git URL

def test_git_url_is_cloned_into_the_cache_and_reused(ragas_repo, tmp_path):
    root, first = ragas_repo
    cache = tmp_path / "cache"
    url = root.resolve().as_uri()
    source = resolve_git(url, manifest_pinned_at(first), cache_dir=cache)
    assert source.kind == "git" and source.is_pin and source.commit == first
    assert source.display_path == source.url == "file://…/ragas"  # a local path is not printed
    assert source.pin_status == f"clone of file://…/ragas at the pinned commit {first[:7]}"
    assert str(tmp_path) not in json.dumps(source.to_provenance())
    clone = cache / cache_folder_name(url)
    assert source.sys_path_prefix == [str(clone.resolve() / "src")]
    (clone / ".git" / "reuse-marker").write_text("1")
    # a new commit upstream becomes the pin: the cached clone is fetched, not re-cloned
    second = add_second_commit(root)
    again = resolve_git(url, manifest_pinned_at(second), cache_dir=cache)
    assert again.commit == second and again.is_pin
    assert (clone / ".git" / "reuse-marker").exists()
    assert [p.name for p in cache.iterdir()] == [clone.name]


@pytest.mark.parametrize("url", ["file:///nonexistent/ragas-compat/ragas.git",
                                 "http://127.0.0.1:9/vibrantlabsai/ragas.git"])
def test_unreachable_git_url_is_a_clean_error(tmp_path, url):
    cache = tmp_path / "cache"
    with pytest.raises(RagasSourceError) as info:
        resolve_git(url, load_manifest(), cache_dir=cache, timeout=20)
    message = str(info.value)
    assert message.startswith(f"--ragas-git {url}: cannot clone (")
    assert "Traceback" not in message and "check the URL and the network" in message
    assert list(cache.iterdir()) == []  # no half-made clone left in the cache


def test_urls_are_printed_without_credentials():
    assert public_url("https://user:secret@example.com:8443/r.git?token=x") == "https://example.com:8443/r.git"
    assert public_url("git@github.com:vibrantlabsai/ragas.git") == "github.com:vibrantlabsai/ragas.git"
    name = cache_folder_name("https://user:secret@github.com/vibrantlabsai/ragas")
    assert name.startswith("github.com_vibrantlabsai_ragas-") and "secret" not in name
    assert cache_folder_name("https://a/b") != cache_folder_name("https://a/b/")
