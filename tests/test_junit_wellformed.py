"""junit.xml is always well-formed XML 1.0: control characters, lone surrogates, U+FFFE/U+FFFF and
rich markup in case ids, suite names and messages never break the standard library's parser."""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner
from user_cases import USER_SUITE

from ragas_compat.cases import parse_suite
from ragas_compat.cli import app
from ragas_compat.compare.audit import build_audit, judged
from ragas_compat.compare.expectations import Expectations
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import metric
from ragas_compat.report.junit_report import render_junit, xml_text

# every C0 control, DEL, two C1 controls, rich markup, XML's own specials
HOSTILE = "".join(chr(c) for c in range(32)) + "\x7f\x85\x9b [red]x[/red] [bold] <&>\"' é 𝄞"
NOT_XML_1_0 = "\ud800\udfff\ufffe\uffff"  # lone surrogates and the two non-characters


def _xml_ok(text: str) -> ET.Element:
    text.encode("utf-8")  # writable as UTF-8 (no lone surrogate left)
    return ET.fromstring(text.encode("utf-8"))


def test_xml_text_escapes_exactly_what_xml_forbids_or_discourages():
    assert xml_text("a\tb\nc\rd") == "a\tb\nc\rd"  # allowed whitespace kept
    assert xml_text("\x00\x08\x0b\x0c\x1b\x1f\x7f\x85\x9f") == "\\x00\\x08\\x0b\\x0c\\x1b\\x1f\\x7f\\x85\\x9f"
    assert xml_text(NOT_XML_1_0) == "\\ud800\\udfff\\ufffe\\uffff"
    assert xml_text("[red]x[/red] <&> é 𝄞 \ue000 \ufffd") == "[red]x[/red] <&> é 𝄞 \ue000 \ufffd"


def _id_recall_audit(case_id: str, suite_name: str):
    """An audit of one ID-recall case (no LLM involved) with a made-up Ragas value that diverges, built
    directly: the case loader need not accept the hostile id."""
    case = copy.deepcopy(USER_SUITE["cases"][0])
    case["id"] = "placeholder"
    suite = parse_suite({"schema_version": 1, "suite": "placeholder", "cases": [case]}, source="hostile.json")
    built = suite.cases[0]
    hostile_case = dataclasses.replace(built, id=case_id, raw={**built.raw, "id": case_id})
    suite = dataclasses.replace(suite, name=suite_name, cases=(hostile_case,))
    spec = metric("id_context_recall")
    results = [{"case_id": case_id, "target": target, "metric": spec.name, "ragas_class": target,
                "fields_read": list(spec.fields_read), "received": None, "value": 0.123,
                "warnings": [f"warning with {case_id}"]} for target in spec.ragas_targets]
    output = {"probe_format": 1, "python": {"version": "3.11"}, "ragas": {"version": "fake"},
              "network_attempts": [], "results": results}
    audit = build_audit(suite, output, Expectations("hostile", ()), {}, metrics=[spec.name])
    return judged(dataclasses.replace(audit, expectation_problems=(f"problem naming {case_id}",)))


@pytest.mark.parametrize("hostile", [HOSTILE, HOSTILE + NOT_XML_1_0], ids=["controls-markup", "surrogates"])
def test_junit_parses_with_control_characters_and_markup_in_ids_and_suite_names(hostile):
    audit = _id_recall_audit(f"case {hostile}", f"suite {hostile}")
    assert audit.rows and all(row.case.id == f"case {hostile}" for row in audit.rows)
    root = _xml_ok(render_junit(audit))
    assert root.get("name") == f"ragas-compat.suite {xml_text(hostile)}"
    cases = root.findall("testcase")
    assert {case.get("name") for case in cases if case.get("classname") != "expectations"} == {
        f"case {xml_text(hostile)}"}
    failures = [case.find("failure") for case in cases]
    assert all(failure is not None for failure in failures)  # the made-up value is drift
    assert [case.find("failure").get("message") for case in cases if case.get("classname") == "expectations"] == [
        f"problem naming case {xml_text(hostile)}"]
    assert "[red]x[/red]" in root.get("name") and "<&>" in root.get("name")  # markup and specials kept literally


@pytest.mark.slow
def test_the_loader_refuses_or_the_whole_run_writes_a_junit_that_parses(tmp_path: Path):
    """The full command line path. Whether the case loader accepts control characters in ids is its own
    decision: if it refuses them, that is a clean exit 2 naming the problem; if it accepts them, junit.xml
    must parse."""
    suite = copy.deepcopy(USER_SUITE)
    suite["suite"] = "suite \x01\x1b[31m[red]red[/red]\x7f"
    suite["cases"][0]["id"] = "case \x00\x08\x1b[2J[bold]x[/bold]\x0c\x9b"
    cases = tmp_path / "hostile.json"
    cases.write_text(json.dumps(suite), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(out), "--python", sys.executable,
                                      "--fail-on", "none"])
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit | None)
    if result.exit_code == 2:
        with pytest.raises(HarnessInputError):
            parse_suite(suite, source="hostile.json")
        assert "hostile.json" in result.output and not out.exists()
        assert "\x1b" not in result.output and "\x00" not in result.output
        return
    assert result.exit_code == 0, result.output
    root = _xml_ok((out / "junit.xml").read_text(encoding="utf-8"))
    assert root.get("name") == "ragas-compat.suite \\x01\\x1b[31m[red]red[/red]\\x7f"
    assert "case \\x00\\x08\\x1b[2J[bold]x[/bold]\\x0c\\x9b" in {case.get("name") for case in root.iter("testcase")}
    assert "\x1b" not in result.output  # the terminal summary escapes them too
