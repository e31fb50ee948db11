from pathlib import Path

import pytest

from harness.errors import HarnessInputError
from harness.expectations import load_expectations, parse_expectations

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
    from harness.run import DEFAULT_EXPECTATIONS
    assert load_expectations(DEFAULT_EXPECTATIONS).deviations
