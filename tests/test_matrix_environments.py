"""Matrix environments with a fake installer (no pip, no network)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from harness.errors import HarnessInputError
from harness.tools.matrix.environments import (
    MARKER_NAME,
    InstallFailed,
    ensure_environments,
    first_line,
    load_version_rules,
    newest_matching,
    parse_entries,
    record_lock,
    requirements_for,
)


class FakeInstaller:
    """Creates bin/python as a plain file; fails for versions in ``fail``; records every call."""

    def __init__(self, fail: dict[str, str] | None = None, delay: float = 0.0) -> None:
        self.fail = fail or {}
        self.delay = delay
        self.installs: list[tuple[str, tuple[str, ...], Path | None]] = []
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()

    def create(self, env_dir: Path) -> Path:
        (env_dir / "bin").mkdir(parents=True)
        python = env_dir / "bin" / "python"
        python.write_text("fake")
        return python

    def install(self, python: Path, requirements, log: Path, constraints: Path | None = None) -> None:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay)
            self.installs.append((python.parent.parent.name, tuple(requirements), constraints))
            version = requirements[0].split("==")[1]
            if version in self.fail:
                raise InstallFailed(self.fail[version])
            (python.parent.parent / "lib").mkdir()
            (python.parent.parent / "lib" / "ragas.py").write_text("x" * 100)
        finally:
            with self._lock:
                self.active -= 1

    def freeze(self, python: Path) -> list[str]:
        return ["langchain-community==0.3.31", f"ragas=={python.parent.parent.name}"]


RULES = load_version_rules()


def build(tmp_path, text, installer, **kwargs):
    return ensure_environments(parse_entries(text), cache_dir=tmp_path / "envs", rules=RULES,
                               installer=installer, lock_dir=kwargs.pop("lock_dir", tmp_path / "locks"), **kwargs)


def test_pinned_rules_give_the_measured_extras():
    assert requirements_for("0.4.3", RULES) == ("ragas==0.4.3", "rapidfuzz>=3", "langchain-community<0.4")
    assert "pillow" in requirements_for("0.3.0", RULES) and "pillow" not in requirements_for("0.3.9", RULES)
    assert {"langchain-core<1", "langchain<1", "langchain-openai<1", "nltk"} <= set(requirements_for("0.2.0", RULES))
    old = requirements_for("0.1.21", RULES)
    assert "pyarrow<18" in old and "langchain-community<0.4" not in old and "rapidfuzz>=3" in old


def test_entries_parse_releases_ranges_and_checkouts():
    entries = parse_entries("0.2.15, v0.3.9, >=0.3,<0.4; ==0.4.3, checkout:../ragas")
    assert [e.kind for e in entries] == ["release"] * 4 + ["checkout"]
    assert [e.exact_version for e in entries] == ["0.2.15", "0.3.9", None, "0.4.3", None]
    assert str(entries[2].specifier) == "<0.4,>=0.3" and entries[4].path == Path("../ragas")
    with pytest.raises(HarnessInputError, match="given twice"):
        parse_entries("0.3.9,0.3.9")
    with pytest.raises(HarnessInputError, match="neither a Ragas release"):
        parse_entries("latest")
    with pytest.raises(HarnessInputError, match="at least one"):
        parse_entries(" , ")


def test_newest_matching_skips_prereleases_and_junk():
    assert newest_matching(parse_entries(">=0.3,<0.4")[0].specifier, ["0.2.15", "0.3.9", "0.3.10", "0.4.0rc1", "x"]) == "0.3.10"
    assert newest_matching(parse_entries("<0.1")[0].specifier, ["0.2.15"]) is None


def test_built_once_then_reused(tmp_path):
    installer = FakeInstaller()
    first = build(tmp_path, "0.3.9,0.4.3", installer)
    assert [e.status for e in first] == ["built", "built"] and len(installer.installs) == 2
    assert first[0].size_bytes >= 100 and (tmp_path / "envs" / "0.3.9" / MARKER_NAME).exists()
    second = build(tmp_path, "0.3.9,0.4.3", installer)
    assert [e.status for e in second] == ["reused", "reused"] and len(installer.installs) == 2
    assert second[0].python == str(tmp_path / "envs" / "0.3.9" / "bin" / "python")


def test_half_built_environment_is_rebuilt(tmp_path):
    env_dir = tmp_path / "envs" / "0.3.9"
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / "bin" / "python").write_text("interrupted")
    (env_dir / "leftover").write_text("from the interrupted build")
    installer = FakeInstaller()
    [env] = build(tmp_path, "0.3.9", installer)
    assert env.status == "built" and len(installer.installs) == 1 and not (env_dir / "leftover").exists()


def test_changed_rules_rebuild(tmp_path):
    installer = FakeInstaller()
    build(tmp_path, "0.3.9", installer)
    other = tmp_path / "versions.toml"
    other.write_text('[[rule]]\nversions = ""\nrequirements = ["rapidfuzz>=3", "pillow"]\n')
    [env] = ensure_environments(parse_entries("0.3.9"), cache_dir=tmp_path / "envs", rules=load_version_rules(other),
                                installer=installer, lock_dir=None)
    assert env.status == "built" and installer.installs[-1][1] == ("ragas==0.3.9", "rapidfuzz>=3", "pillow")


def test_failed_install_is_an_unavailable_column_with_the_first_error_line_and_not_cached(tmp_path):
    message = "ERROR: Could not find a version that satisfies the requirement ragas==9.9.9\nERROR: No matching distribution"
    installer = FakeInstaller(fail={"9.9.9": message.split("\n")[0]})
    envs = build(tmp_path, "9.9.9,0.4.3", installer)
    assert envs[0].status == "unavailable" and not envs[0].available
    assert envs[0].error == "ERROR: Could not find a version that satisfies the requirement ragas==9.9.9"
    assert envs[1].status == "built" and not (tmp_path / "envs" / "9.9.9").exists()
    build(tmp_path, "9.9.9", installer)
    assert [name for name, _, _ in installer.installs].count("9.9.9") == 2


def test_first_line_prefers_pip_error_lines():
    assert first_line("Collecting ragas\nERROR: boom\nERROR: more") == "ERROR: boom"
    assert first_line("warning\nTraceback\nOSError: disk full\n") == "OSError: disk full"
    assert first_line("") == "(no output)"


def test_lock_is_used_as_constraints_and_a_changed_lock_rebuilds(tmp_path):
    installer = FakeInstaller()
    [env] = build(tmp_path, "0.3.9", installer)
    lock = record_lock(env, installer, tmp_path / "locks")
    assert lock.read_text().splitlines()[1:] == ["langchain-community==0.3.31", "ragas==0.3.9"]
    [env] = build(tmp_path, "0.3.9", installer)
    assert env.status == "reused"  # recording the lock marks the environment as built from it
    lock.write_text(lock.read_text() + "rapidfuzz==3.9.0\n")
    [env] = build(tmp_path, "0.3.9", installer)
    assert env.status == "built" and installer.installs[-1][2] == lock


def test_ranges_resolve_to_the_newest_listed_release(tmp_path):
    installer = FakeInstaller()
    envs = build(tmp_path, ">=0.3,<0.4;<0.1", installer, available=lambda: ["0.2.15", "0.3.8", "0.3.9", "0.4.3"])
    assert envs[0].version == "0.3.9" and envs[0].label == ">=0.3,<0.4" and envs[0].status == "built"
    assert envs[1].status == "unavailable" and "no Ragas release matches <0.1" in envs[1].error


def test_builds_run_in_parallel_up_to_jobs(tmp_path):
    installer = FakeInstaller(delay=0.3)
    build(tmp_path, "0.2.15,0.3.9,0.4.0,0.4.3", installer, jobs=2)
    assert installer.max_active == 2
    serial = FakeInstaller(delay=0.05)
    ensure_environments(parse_entries("0.2.15,0.3.9"), cache_dir=tmp_path / "other", rules=RULES,
                        installer=serial, lock_dir=None, jobs=1)
    assert serial.max_active == 1


def test_checkout_that_is_not_a_git_tree_is_unavailable(tmp_path):
    [env] = build(tmp_path, f"checkout:{tmp_path}", FakeInstaller())
    assert env.status == "unavailable" and "not a git working tree" in env.error
