from pathlib import Path

import pytest

from harness.errors import HarnessInputError
from harness.compare.expectations import load_expectations, parse_expectations

GOOD = {"deviation": [{"classification": "epsilon", "targets": ["legacy:A", "legacy:B"], "cases": ["c1"],
                       "reason": "1e-10 in the denominator", "upstream": "https://example.invalid/1"}]}


def test_rows_default_to_identical_and_deviations_name_rows():
    exp = parse_expectations(GOOD, "x.toml")
    assert exp.expected("c1", "legacy:A").classification == "epsilon"
    assert exp.expected("c1", "legacy:A").upstream == "https://example.invalid/1"
    assert exp.expected("c2", "legacy:A").classification == "identical"


def test_coverage_reports_stale_and_overlapping_entries():
    data = {"deviation": GOOD["deviation"] + [dict(GOOD["deviation"][0], classification="rounding")]}
    exp = parse_expectations(data, "x.toml")
    problems = exp.check_coverage([("c1", "legacy:A"), ("c2", "legacy:B")], {"c1", "c2"})
    assert any("more than one deviation" in p for p in problems)
    assert any("(c1, legacy:B)" in p and "did not produce" in p for p in problems)
    # cases outside the run are not stale
    assert parse_expectations(GOOD, "x.toml").check_coverage([], {"other"}) == []


@pytest.mark.parametrize("entry,field", [
    ({"classification": "nonsense"}, "classification"),
    ({"classification": "identical"}, "classification"),
    ({"reason": ""}, "reason"),
    ({"targets": []}, "targets"),
    ({"cases": "c1"}, "cases"),
    ({"upstream": 3}, "upstream"),
])
def test_bad_entries_name_the_field(entry, field):
    bad = {"deviation": [dict(GOOD["deviation"][0], **entry)]}
    with pytest.raises(HarnessInputError) as err:
        parse_expectations(bad, "x.toml")
    assert f"deviation[0].{field}" in str(err.value)


def test_unparseable_file_names_the_file(tmp_path: Path):
    path = tmp_path / "bad.toml"
    path.write_text("[[deviation]\n")
    with pytest.raises(HarnessInputError, match="bad.toml"):
        load_expectations(path)


def test_the_pinned_expectations_file_parses():
    from harness.pipeline import DEFAULT_EXPECTATIONS
    assert load_expectations(DEFAULT_EXPECTATIONS).deviations


PATHS = {"path_deviation": [{"classification": "error", "legacy_targets": ["legacy:A", "legacy:B"],
                             "collections_targets": ["collections:C"], "cases": ["c1"],
                             "reason": "collections raises", "upstream": "https://example.invalid/2"}]}


def test_path_deviations_name_pairs_and_default_to_identical():
    exp = parse_expectations(PATHS, "x.toml")
    assert exp.expected_path("c1", "legacy:B", "collections:C").classification == "error"
    assert exp.expected_path("c1", "legacy:B", "collections:C").upstream == "https://example.invalid/2"
    assert exp.expected_path("c1", "legacy:X", "collections:C").classification == "identical"
    assert exp.expected("c1", "legacy:A").classification == "identical"  # rows and pairs are separate


def test_path_coverage_reports_stale_and_overlapping_entries():
    data = {"path_deviation": PATHS["path_deviation"] + [dict(PATHS["path_deviation"][0], classification="coercion",
                                                               legacy_targets=["legacy:A"])]}
    problems = parse_expectations(data, "x.toml").check_path_coverage(
        [("c1", "legacy:A", "collections:C")], {"c1"})
    assert any("(c1, legacy:A vs collections:C) is named by more than one path_deviation" in p for p in problems)
    assert parse_expectations(PATHS, "x.toml").check_path_coverage(
        [("c1", "legacy:A", "collections:C"), ("c2", "legacy:B", "collections:C")], {"c1", "c2"}) == [
        "x.toml: path_deviation[0] names (c1, legacy:B vs collections:C), which the run did not produce"]


@pytest.mark.parametrize("entry,field", [
    ({"classification": "identical"}, "classification"),
    ({"legacy_targets": []}, "legacy_targets"),
    ({"collections_targets": "collections:C"}, "collections_targets"),
    ({"reason": " "}, "reason"),
])
def test_bad_path_entries_name_the_field(entry, field):
    bad = {"path_deviation": [dict(PATHS["path_deviation"][0], **entry)]}
    with pytest.raises(HarnessInputError) as err:
        parse_expectations(bad, "x.toml")
    assert f"path_deviation[0].{field}" in str(err.value)
