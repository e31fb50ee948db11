"""Versioned rules for checkouts: a checkout reports no version ("unknown version"), so its place among
the release tags (git describe) decides which versioned rules apply; a checkout of the v0.4.3 tag is
audited with the 0.4.3 rules, like the 0.4.3 wheel, and a run where none can apply says so loudly."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.pin.manifest import load_manifest
from ragas_compat.pin.sources import NO_VERSIONED_RULES, resolve_checkout
from ragas_compat.pipeline import pin_expectations


def commit_all(repo: git.Repo, message: str) -> str:
    repo.git.add("-A")
    repo.git.commit("-q", "-m", message, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                                             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    return repo.head.commit.hexsha


@pytest.fixture
def checkout(tmp_path: Path):
    root = tmp_path / "ragas"
    (root / "src" / "ragas").mkdir(parents=True)
    (root / "src" / "ragas" / "__init__.py").write_text("__all__ = []\n", encoding="utf-8")
    (root / ".gitignore").write_text("src/ragas/_version.py\n", encoding="utf-8")
    repo = git.Repo.init(root)
    commit_all(repo, "first")
    yield root, repo
    repo.close()


def test_a_checkout_of_a_release_tag_is_matched_as_that_release(checkout):
    root, repo = checkout
    repo.create_tag("v0.4.2")
    (root / "src" / "ragas" / "metrics.py").write_text("x = 1\n", encoding="utf-8")
    commit_all(repo, "release")
    repo.create_tag("v0.4.3")
    source = resolve_checkout(root, load_manifest(), allow_other_commit=True)
    assert source.rules_version == "0.4.3" and source.release_position.startswith("v0.4.3-0-g")
    assert NO_VERSIONED_RULES not in (source.warning or "")
    assert source.to_provenance()["rules_version"] == "0.4.3"


def test_a_commit_after_a_tag_is_the_next_patch_s_development_build(checkout):
    root, repo = checkout
    repo.create_tag("v0.4.3")
    (root / "src" / "ragas" / "later.py").write_text("y = 2\n", encoding="utf-8")
    head = commit_all(repo, "later")
    source = resolve_checkout(root, load_manifest(), allow_other_commit=True)
    assert source.rules_version == f"0.4.4.dev1+g{head[:7]}"
    assert pin_expectations().at_release_position(source.rules_version).for_ragas("unknown version") \
        .applies_versioned_rules()


def test_without_a_release_tag_the_run_warns_that_no_versioned_rule_applies(checkout):
    root, repo = checkout
    repo.create_tag("not-a-release")
    source = resolve_checkout(root, load_manifest(), allow_other_commit=True)
    assert source.rules_version is None
    assert NO_VERSIONED_RULES in source.warning and "NOT THE PIN" in source.warning
    assert not pin_expectations().at_release_position(None).for_ragas("unknown version").applies_versioned_rules()


def _epsilon_audit(expectations):
    case = {"id": "c1", "category": "single_source", "user_input": "q", "reference": "r", "response": "a",
            "retrieved_contexts": ["x", "y", "z"], "verdicts": {"context_precision_with_reference": [1, 0, 1]}}
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    probe = {"ragas": {"version": "unknown version"},
             "results": [{"case_id": "c1", "target": "legacy:ContextPrecision", "value": 0.8333333332916666,
                          "received": {}}]}
    return build_audit(suite, probe, expectations, {})


def test_versioned_pin_rules_explain_a_checkout_s_rows_at_its_release_position():
    # ap-epsilon has ragas = ">=0.2.15,<0.5": with the checkout's "unknown version" it never applied
    without = _epsilon_audit(pin_expectations())
    assert [r.unexpected for r in without.rows if r.spec.name == "context_precision_with_reference"] == [True]
    at_tag = _epsilon_audit(pin_expectations().at_release_position("0.4.3"))
    rows = [r for r in at_tag.rows if r.spec.name == "context_precision_with_reference"]
    assert [(r.classification.name.value, r.unexpected) for r in rows] == [("epsilon", False)]
    # a version the probe does report is never overridden
    assert pin_expectations().at_release_position("0.4.3").for_ragas("0.3.9").ragas_version == "0.3.9"


def test_the_pinned_commit_without_tags_is_placed_by_the_pin(checkout):
    import dataclasses

    root, repo = checkout
    manifest = load_manifest()
    pinned_here = dataclasses.replace(manifest, pin=dataclasses.replace(manifest.pin, commit=repo.head.commit.hexsha))
    source = resolve_checkout(root, pinned_here)
    assert source.is_pin and source.warning is None
    assert source.rules_version == f"0.4.4.dev0+g{pinned_here.pin.short}"
    assert "after 0.4.3" in source.release_position
