"""pinned/pin.toml: loads, validates, round-trips; constraints.txt parses."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.pin.manifest import (
    DEFAULT_MANIFEST_PATH,
    ReferencePoint,
    dump_manifest,
    load_constraints,
    load_manifest,
    parse_manifest,
    write_manifest,
)

PIN = "298b68274234c060deacab3cf5fb52aa3a20e885"
V043 = "4ecab384fda829ca50bec3f07cc49589d756e172"

VALID = f"""
[pin]
commit = "{PIN}"
repository = "https://github.com/vibrantlabsai/ragas"
former_repositories = ["https://github.com/explodinggradients/ragas"]
date = 2026-02-24
nearest_release = "0.4.3"
relation = "after"

[audited]
files = ["src/ragas/metrics/base.py", "src/ragas/metrics/_faithfulness.py"]

[[reference_points]]
name = "v0.4.3"
kind = "tag"
commit = "{V043}"
date = 2026-01-13
source = "measured"
[reference_points.blobs]
"src/ragas/metrics/base.py" = "ada9bcfd3cedde34dc550d8293d066a925e49664"
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(HarnessInputError) as info:
        parse_manifest(text, origin="pin.toml")
    return info.value.problems


def test_repository_manifest_loads_with_the_pin_and_measured_points():
    manifest = load_manifest()
    assert manifest.pin.commit == PIN
    assert manifest.pin.repository == "https://github.com/vibrantlabsai/ragas"
    assert manifest.pin.former_repositories == ("https://github.com/explodinggradients/ragas",)
    assert manifest.pin.date == dt.date(2026, 2, 24)
    assert (manifest.pin.nearest_release, manifest.pin.relation) == ("0.4.3", "after")
    # every audited file stands behind some registered class (the classes themselves: test_provenance_coverage)
    assert set(manifest.audited_files) == set().union(*manifest.target_modules.values())
    tag = manifest.reference_point("v0.4.3")
    assert tag.kind == "tag" and tag.commit == V043 and set(tag.blobs) == set(manifest.audited_files)
    assert tag.blobs["src/ragas/metrics/_context_precision.py"] == "ea68dc82051c66d5a36189c2b922f7563f101c8c"
    main = manifest.reference_point("main@2b38724")
    assert main.blobs["src/ragas/metrics/_context_precision.py"] == "782cd5eb29268053ef93b474ae482cda6839123b"
    assert manifest.constraints_path.name == "constraints.txt"


def test_repository_manifest_is_in_canonical_layout():
    assert dump_manifest(load_manifest()) == DEFAULT_MANIFEST_PATH.read_text(encoding="utf-8")


def test_valid_text_parses():
    manifest = parse_manifest(VALID)
    assert manifest.reference_points[0].blobs == {"src/ragas/metrics/base.py": "ada9bcfd3cedde34dc550d8293d066a925e49664"}
    assert manifest.pin_reference_point() is None


@pytest.mark.parametrize("old, new, expected", [
    (f'commit = "{PIN}"', 'commit = "298b682"', "pin.commit: expected a full 40-hex-digit"),
    ('relation = "after"', 'relation = "later"', "pin.relation: expected one of"),
    ('nearest_release = "0.4.3"', 'nearest_release = "zero point four"', "pin.nearest_release: not a PEP 440"),
    ("date = 2026-02-24", 'date = "2026-02-24"', "pin.date: expected date"),
    ('repository = "https://github.com/vibrantlabsai/ragas"', 'repository = "vibrantlabsai/ragas"',
     "pin.repository: expected a URL"),
    ('"src/ragas/metrics/_faithfulness.py"]', '"../ragas/metrics/x.py"]', "audited.files[1]"),
    ('"src/ragas/metrics/_faithfulness.py"]', '"src/ragas/metrics/base.py"]', "listed more than once"),
    ('kind = "tag"', 'kind = "branch"', "reference_points[0].kind"),
    (f'commit = "{V043}"\n', "", "reference_points[0].commit: missing"),
    ('"ada9bcfd3cedde34dc550d8293d066a925e49664"', '"ada9bcf"', "expected a 40-hex-digit git blob id"),
    ('"src/ragas/metrics/base.py" = ', '"src/ragas/metrics/other.py" = ', "is not an audited file"),
    ('source = "measured"', 'source = "measured"\nsha = "x"', "reference_points[0].sha: unknown key"),
])
def test_validation_names_the_field(old, new, expected):
    assert old in VALID
    problems = problems_of(VALID.replace(old, new, 1))
    assert any(expected in problem for problem in problems), problems
    assert all(problem.startswith("pin.toml: ") for problem in problems)


def test_every_problem_is_reported_together():
    text = VALID.replace('relation = "after"', 'relation = "x"').replace('kind = "tag"', 'kind = "y"')
    problems = problems_of(text)
    assert len(problems) == 2


def test_duplicate_reference_point_names_are_refused():
    text = VALID + VALID[VALID.index("[[reference_points]]"):]
    assert any("duplicate reference point name 'v0.4.3'" in p for p in problems_of(text))


def test_missing_tables_and_bad_toml():
    assert any("pin: missing table" in p for p in problems_of("[audited]\nfiles = ['src/ragas/a.py']\n"))
    with pytest.raises(HarnessInputError, match="not valid TOML"):
        parse_manifest("[pin\n")


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(HarnessInputError, match="cannot read pin manifest"):
        load_manifest(tmp_path / "nope.toml")


def test_write_round_trips_awkward_strings_and_replaces_by_name(tmp_path):
    manifest = parse_manifest(VALID)
    awkward = ReferencePoint(name='odd "name" \\ here', kind="commit", commit="1" * 40, date=dt.date(2026, 1, 1),
                             source="line one\nline two\ttab \x01 ctl ✓",
                             blobs={"src/ragas/metrics/base.py": "2" * 40},
                             absent=("src/ragas/metrics/_faithfulness.py",))
    path = write_manifest(dataclasses.replace(manifest.with_reference_point(awkward), path=tmp_path / "pin.toml"))
    reloaded = load_manifest(path)
    assert reloaded.reference_point(awkward.name) == awkward
    updated = dataclasses.replace(awkward, blobs={"src/ragas/metrics/base.py": "3" * 40})
    assert reloaded.with_reference_point(updated).reference_points[-1] == updated
    assert len(reloaded.with_reference_point(updated).reference_points) == 2


def test_constraints_file_pins_ragas_and_langchain_community_with_reasons():
    constraints = load_constraints(load_manifest().constraints_path)
    by_name = {c.requirement.name: c for c in constraints}
    assert str(by_name["ragas"].requirement.specifier) == "==0.4.3"
    assert by_name["langchain-community"].requirement.specifier.contains("0.3.31")
    assert not by_name["langchain-community"].requirement.specifier.contains("0.4.0")
    assert all(c.reason for c in constraints)


def test_constraints_bad_line(tmp_path):
    path = tmp_path / "constraints.txt"
    path.write_text("ragas==0.4.3  # ok\nthis is not ===\n")
    with pytest.raises(HarnessInputError, match=r"constraints\.txt:2"):
        load_constraints(path)
