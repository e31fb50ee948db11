"""The matrix's default version list: its derivation from a release history (hand-made histories and
properties) and the committed files (pinned/release-history.toml, default_versions in pinned/versions.toml)."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version
from typer.testing import CliRunner

import ragas_compat.cli.matrix as cli_matrix
from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import all_metrics
from ragas_compat.tools.matrix.environments import DEFAULT_VERSIONS_FILE, load_version_rules, requirements_for
from ragas_compat.tools.matrix.release_list import (
    DEFAULT_HISTORY_FILE,
    Release,
    changed_files,
    default_versions,
    final_releases,
    last_patches,
    load_default_versions,
    load_release_history,
)

DAY = datetime.date(2025, 1, 1)
CP = "src/ragas/metrics/_context_precision.py"
BLEU = "src/ragas/metrics/_bleu_score.py"


def history(*pairs):
    """("0.1.0", None), ("0.1.1", [paths]), ... -> Releases."""
    return [Release(Version(v), DAY, None if changed is None else tuple(changed)) for v, changed in pairs]


def strings(versions):
    return [str(v) for v in versions]


# ---------------------------------------------------------------- hand-made histories

def test_oldest_last_patches_and_changed_releases():
    releases = history(("0.1.0", None), ("0.1.1", []), ("0.1.2", []), ("0.2.0", [CP]), ("0.2.1", []),
                       ("0.2.2", [BLEU]), ("0.2.3", []), ("0.3.0", []))
    assert strings(default_versions(releases)) == ["0.1.0", "0.1.2", "0.2.0", "0.2.2", "0.2.3", "0.3.0"]


def test_audited_narrows_which_changes_count():
    releases = history(("0.1.0", None), ("0.1.1", [BLEU]), ("0.1.2", [CP]), ("0.1.3", []), ("0.1.4", []))
    assert strings(default_versions(releases, audited=[CP])) == ["0.1.0", "0.1.2", "0.1.4"]
    assert strings(default_versions(releases)) == ["0.1.0", "0.1.1", "0.1.2", "0.1.4"]


def test_unknown_changes_count_as_changed_and_order_is_by_version_not_input():
    releases = history(("0.2.1", []), ("0.1.9", None), ("0.2.0", None), ("0.1.8", []), ("0.2.2", []))
    assert strings(default_versions(releases)) == ["0.1.8", "0.1.9", "0.2.0", "0.2.2"]
    assert default_versions([]) == []


def test_final_releases_drop_prereleases_and_out_of_range():
    listed = ["0.2.0b0", "0.1.21", "0.1.20", "0.3.0rc2", "0.3.0", "0.4.4", "junk", "0.4.3", "0.4.3"]
    assert strings(final_releases(listed, "0.1.21", "0.4.3")) == ["0.1.21", "0.3.0", "0.4.3"]


def test_last_patches_per_minor_ignore_prereleases():
    versions = [Version(v) for v in ("0.1.21", "0.1.22", "0.2.0", "0.2.15", "0.2.9", "0.3.0", "0.3.10rc1", "1.0.0")]
    assert strings(last_patches(versions)) == ["0.1.22", "0.2.15", "0.3.0", "1.0.0"]


def test_changed_files_are_added_removed_and_modified():
    before = {"a.py": "1", "b.py": "2", "c.py": "3"}
    after = {"a.py": "1", "b.py": "9", "d.py": "4"}
    assert changed_files(before, after) == ("b.py", "c.py", "d.py")
    assert changed_files(after, after) == ()


# ---------------------------------------------------------------- properties

version_parts = st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(0, 12))
paths = st.sampled_from([CP, BLEU, "src/ragas/metrics/base.py"])


@st.composite
def histories(draw):
    parts = draw(st.lists(version_parts, min_size=1, max_size=25, unique=True))
    releases = []
    for index, (major, minor, patch) in enumerate(sorted(parts)):
        changed = None if index == 0 else tuple(draw(st.lists(paths, max_size=2, unique=True)))
        releases.append(Release(Version(f"{major}.{minor}.{patch}"), DAY, changed))
    return draw(st.permutations(releases))


@given(histories(), st.none() | st.lists(paths, max_size=2))
def test_default_list_properties(releases, audited):
    chosen = default_versions(releases, audited)
    assert chosen == sorted(set(chosen))
    assert set(last_patches(r.version for r in releases)) <= set(chosen)
    assert min(r.version for r in releases) in chosen
    assert set(chosen) <= {r.version for r in releases}
    for release in releases:  # a release outside the list is neither a last patch nor changed
        if release.version not in chosen:
            assert release.changed is not None
            assert not [p for p in release.changed if audited is None or p in audited]


# ---------------------------------------------------------------- the committed files

def test_committed_default_list_equals_the_derivation_over_the_committed_history():
    recorded = load_release_history()
    assert strings(recorded.default_versions()) == load_default_versions(DEFAULT_VERSIONS_FILE)
    versions = [r.version for r in recorded.releases]
    assert (versions[0], versions[-1]) == (recorded.first, recorded.last) == (Version("0.1.21"), Version("0.4.3"))
    assert recorded.releases[0].changed is None and all(r.changed is not None for r in recorded.releases[1:])


def test_committed_history_covers_every_audited_module_the_probe_drives():
    recorded = load_release_history()
    seen = {path for r in recorded.releases for path in (r.changed or ())}
    for module in {spec.ragas.legacy_module for spec in all_metrics() if spec.ragas and spec.ragas.legacy_module}:
        path = "src/" + module.replace(".", "/") + ".py"
        assert path in seen, f"{path} ({module}) never changes in pinned/release-history.toml: not recorded?"
    pin_audited = {"src/ragas/metrics/_context_precision.py", "src/ragas/metrics/_context_recall.py",
                   "src/ragas/metrics/_faithfulness.py", "src/ragas/metrics/base.py",
                   "src/ragas/metrics/collections/context_precision/metric.py",
                   "src/ragas/metrics/collections/context_recall/metric.py",
                   "src/ragas/metrics/collections/faithfulness/metric.py"}
    assert pin_audited <= set(recorded.audited)


@pytest.mark.parametrize(("extra", "needing", "not_needing"), [
    ("pillow", ("0.3.0", "0.3.1"), ("0.2.15", "0.3.2", "0.3.9")),                   # undeclared `from PIL import`
    ("llama-index-core>=0.11,<0.13", ("0.2.4",), ("0.2.3", "0.2.5")),             # evaluation.py imports llama_index
])
def test_rules_add_undeclared_imports_exactly_where_needed(extra, needing, not_needing):
    """(nltk, needed at import by 0.2.0-0.2.5's module-level ``BleuScore()``, is also one of the string
    metrics' optional imports that every release's environment installs.)"""
    rules = load_version_rules(DEFAULT_VERSIONS_FILE)
    for version in needing:
        assert extra in requirements_for(version, rules), version
    for version in not_needing:
        assert extra not in requirements_for(version, rules), version


# ---------------------------------------------------------------- bad files and the CLI default

def test_bad_history_names_the_field(tmp_path):
    path = tmp_path / "h.toml"
    path.write_text('[range]\nfirst = "0.1.0"\nlast = "0.2.0"\n[audited]\ndefault_list = []\n'
                    '[[release]]\nversion = "0.2.0"\ndate = 2025-01-01\n'
                    '[[release]]\nversion = "0.1.0"\ndate = 2025-01-01\nchanged = []\n', encoding="utf-8")
    with pytest.raises(HarnessInputError, match="ascending"):
        load_release_history(path)
    path.write_text(path.read_text(encoding="utf-8").replace('date = 2025-01-01\nchanged', 'date = "x"\nchanged'),
                    encoding="utf-8")
    with pytest.raises(HarnessInputError, match=r"release\[1\]\.date"):
        load_release_history(path)


def test_bad_default_versions_is_refused(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text('default_versions = ["0.2.15", "not a version"]\n', encoding="utf-8")
    with pytest.raises(HarnessInputError, match="default_versions"):
        load_default_versions(path)


def test_matrix_without_versions_uses_the_default_list(tmp_path, monkeypatch):
    versions_file = tmp_path / "versions.toml"
    versions_file.write_text('default_versions = ["0.2.3", "0.2.15"]\n', encoding="utf-8")
    seen = []

    def environments(entries, **kwargs):
        seen.extend(e.exact_version for e in entries)
        raise HarnessInputError("stop here", field="--versions")

    monkeypatch.setattr(cli_matrix, "ensure_environments", environments)
    found = CliRunner().invoke(app, ["matrix", "--versions-file", str(versions_file), "--out", str(tmp_path / "m"),
                                     "--cache-dir", str(tmp_path / "envs")])
    assert found.exit_code == 2 and seen == ["0.2.3", "0.2.15"], found.output
    assert DEFAULT_HISTORY_FILE.exists()


def test_every_release_that_changed_an_agent_metric_is_a_default_column():
    """ToolCallAccuracy, ToolCallF1, AgentGoalAccuracy* and TopicAdherenceScore changed meaning release by
    release (issue 36): every release that changed one of their files is a column of the default matrix."""
    recorded = load_release_history()
    agent = ("_tool_call_accuracy.py", "_tool_call_f1.py", "_goal_accuracy.py", "_topic_adherence.py",
             "/tool_call_accuracy/", "/tool_call_f1/", "/agent_goal_accuracy/", "/topic_adherence/")
    changed = {str(r.version) for r in recorded.releases
               if any(part in path and not path.endswith("__init__.py") for path in r.changed or () for part in agent)}
    assert {"0.2.6", "0.3.3", "0.3.6", "0.4.1"} <= changed  # #1685, #1894, #2300/#2307, #2476
    assert changed <= set(load_default_versions(DEFAULT_VERSIONS_FILE))
