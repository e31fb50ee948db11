"""Matrix environments with a fake installer (no pip, no network)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.matrix.environments import (
    MARKER_NAME,
    PROBE_IMPORTS,
    ImportFailed,
    InstallFailed,
    PipInstaller,
    ensure_environments,
    ensure_release,
    first_line,
    load_version_rules,
    newest_matching,
    parse_entries,
    read_failure,
    read_marker,
    record_lock,
    requirements_for,
)


class FakeInstaller:
    """Creates bin/python as a plain file; fails for versions in ``fail``; its import check fails for
    versions in ``broken`` (installs, does not import); records every call."""

    def __init__(self, fail: dict[str, str] | None = None, delay: float = 0.0,
                 broken: dict[str, str] | None = None) -> None:
        self.fail = fail or {}
        self.broken = broken or {}
        self.checks: list[tuple[str, tuple[str, ...]]] = []
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

    def check_imports(self, python: Path, modules) -> None:
        version = python.parent.parent.name
        self.checks.append((version, tuple(modules)))
        if version in self.broken:
            raise ImportFailed(self.broken[version])


RULES = load_version_rules()


def build(tmp_path, text, installer, **kwargs):
    return ensure_environments(parse_entries(text), cache_dir=tmp_path / "envs", rules=RULES,
                               installer=installer, lock_dir=kwargs.pop("lock_dir", tmp_path / "locks"), **kwargs)


def test_pinned_rules_give_the_measured_extras():
    optional = ("sacrebleu>=2.4", "rouge-score>=0.1.2", "nltk", "datacompy==0.7.3")  # string/table metrics' imports
    assert requirements_for("0.4.3", RULES) == ("ragas==0.4.3", "rapidfuzz>=3", *optional, "langchain-community<0.4")
    assert set(optional) <= set(requirements_for("0.1.21", RULES))
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
    assert envs[0].error == "install: ERROR: Could not find a version that satisfies the requirement ragas==9.9.9"
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


# ---------------------------------------------------------------- integrity: built means importable

NLTK = "import ragas.metrics: ModuleNotFoundError: No module named 'nltk'"


def test_an_environment_that_installs_but_does_not_import_is_not_cached_as_good(tmp_path):
    installer = FakeInstaller(broken={"0.2.2": NLTK})
    [env] = build(tmp_path, "0.2.2", installer)
    assert env.status == "unavailable" and env.error == f"import: {NLTK}" and env.python is None
    assert installer.checks == [("0.2.2", PROBE_IMPORTS)]
    env_dir = tmp_path / "envs" / "0.2.2"
    assert not env_dir.exists() and read_marker(env_dir) is None  # nothing left to be reused
    kept = read_failure(tmp_path / "envs", "0.2.2")
    assert kept["stage"] == "import" and kept["reason"] == NLTK and kept["requirements"][0] == "ragas==0.2.2"
    assert kept["seconds"] >= 0 and kept["size_bytes"] >= 100  # what the failed build cost, measured

    [again] = build(tmp_path, "0.2.2", installer)  # retried (installed again), never reused
    assert again.status == "unavailable" and [v for v, _, _ in installer.installs] == ["0.2.2", "0.2.2"]
    assert again.notes == (f"retried: the previous build failed at import: {NLTK}",)

    fixed = FakeInstaller()  # e.g. a version rule now adds nltk
    [good] = build(tmp_path, "0.2.2", fixed)
    assert good.status == "built" and read_marker(env_dir)["imports_checked"] == list(PROBE_IMPORTS)
    assert read_failure(tmp_path / "envs", "0.2.2") is None
    [reused] = build(tmp_path, "0.2.2", fixed)
    assert reused.status == "reused" and len(fixed.installs) == 1


def test_a_marker_from_before_the_import_check_is_rebuilt(tmp_path):
    installer = FakeInstaller()
    build(tmp_path, "0.2.3", installer)
    env_dir = tmp_path / "envs" / "0.2.3"
    marker = read_marker(env_dir)
    old = {k: v for k, v in marker.items() if k != "imports_checked"} | {"format": 1}
    (env_dir / MARKER_NAME).write_text(json.dumps(old))
    [env] = build(tmp_path, "0.2.3", installer)
    assert env.status == "built" and len(installer.installs) == 2 and len(installer.checks) == 2


class FakeRagasInstaller(PipInstaller):
    """A real virtualenv (no pip, so no network) whose "install" writes a tiny ``ragas`` package;
    the import check is PipInstaller's own, run by the new interpreter."""

    def __init__(self, ragas_init: str) -> None:
        super().__init__(timeout=120.0)
        self.ragas_init = ragas_init

    def create(self, env_dir: Path) -> Path:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
        return env_dir / "bin" / "python"

    def install(self, python: Path, requirements, log: Path, constraints: Path | None = None) -> None:
        site = python.parent.parent / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
        for module in ("ragas", "ragas/metrics", "ragas/llms", "langchain_core"):
            (site / module).mkdir(parents=True, exist_ok=True)
            (site / module / "__init__.py").write_text("")
        for module in ("ragas/llms/base.py", "ragas/run_config.py", "langchain_core/outputs.py"):
            (site / module).write_text("")
        (site / "ragas" / "metrics" / "__init__.py").write_text(self.ragas_init)
        log.write_text("Successfully installed ragas\nWARNING: Location 'file:///x' is ignored\n")


def test_real_import_check_in_a_minimal_environment(tmp_path):
    broken = FakeRagasInstaller("import nltk_not_installed_here\n")
    env = ensure_release("0.2.2", "0.2.2", tmp_path / "envs", RULES, broken, lock_dir=None)
    assert env.status == "unavailable"
    assert env.error == ("import: import ragas.metrics: ModuleNotFoundError: "
                         "No module named 'nltk_not_installed_here'")
    assert not (tmp_path / "envs" / "0.2.2").exists()
    assert read_failure(tmp_path / "envs", "0.2.2")["log_tail"] == ["Successfully installed ragas"]

    good = ensure_release("0.2.2", "0.2.2", tmp_path / "envs", RULES, FakeRagasInstaller(""), lock_dir=None)
    assert good.status == "built" and Path(good.python).exists()
    assert read_failure(tmp_path / "envs", "0.2.2") is None


def test_import_check_names_the_first_module_that_fails():
    PipInstaller(timeout=60).check_imports(Path(sys.executable), ["json", "fractions"])
    with pytest.raises(ImportFailed, match=r"^import no_such_module_x: ModuleNotFoundError"):
        PipInstaller(timeout=60).check_imports(Path(sys.executable), ["json", "no_such_module_x", "also_missing"])
