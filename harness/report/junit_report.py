"""``junit.xml``: one test case per (case, Ragas target) and per legacy-vs-collections pair that has a
drift finding; a failure for each row or pair with a finding (ragas_compat.compare.findings: unexplained,
divergence or error no rule explains, value out of range, not scored) and for each expectations-file problem;
and a failing test case of its own for every other finding of the audit: a recorded score the replay does not
reproduce (classname ``replay.<target>``, named by its case), a dataset-level finding (classname
``dataset level``) or any other finding attached to no row or pair (classname ``findings``), in the order of
``Audit.findings``. So CI systems show drift natively, and the suite's ``failures`` is the number of failing
test cases (a row's one failure names each of its findings; the verdict counts each finding): ``failures="0"``
exactly when the verdict is green.

The file is always well-formed XML 1.0: every character XML 1.0 forbids (C0 controls but tab,
newline and carriage return; lone surrogates; U+FFFE and U+FFFF), and the discouraged DEL and C1
controls, are written as the text ``\\xNN`` / ``\\uNNNN`` wherever they occur (ids, suite names,
messages), so the standard library's parser reads it and a CI page shows them visibly."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from itertools import chain

from ragas_compat.compare.api_paths import PathPair
from ragas_compat.compare.audit import Audit, AuditRow
from ragas_compat.compare.findings import Finding
from ragas_compat.report.text import ragas_text, reference_texts

# Not allowed by XML 1.0 (https://www.w3.org/TR/xml/#charsets), or allowed but discouraged (DEL, C1).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids (and DEL, C1) written as ``\\xNN`` / ``\\uNNNN``."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


def _xml_safe(element: ET.Element) -> None:
    for node in element.iter():
        node.attrib = {xml_text(key): xml_text(value) for key, value in node.attrib.items()}
        if node.text:
            node.text = xml_text(node.text)
        if node.tail:
            node.tail = xml_text(node.tail)


def render_junit(audit: Audit) -> str:
    """``junit.xml`` as one string (``junit_chunks`` joined)."""
    return "".join(junit_chunks(audit))


def junit_chunks(audit: Audit) -> Iterator[str]:
    """``junit.xml``, written as it is made: the suite's start tag with its counts, then one indented
    ``<testcase>`` at a time (the layout of ``ET.indent`` on the whole tree)."""
    failing_pairs = [(pair, found) for pair, found in audit.pairs_with_findings() if found]
    row_failures = sum(1 for _, found in audit.rows_with_findings() if found)
    others = audit.unattached_findings()
    failures = row_failures + len(failing_pairs) + len(audit.expectation_problems) + len(others)
    suite = ET.Element("testsuite", name=f"ragas-compat.{audit.suite.name}",
                       tests=str(len(audit.rows) + len(failing_pairs) + len(audit.expectation_problems) + len(others)),
                       failures=str(failures), errors="0", skipped="0")
    _xml_safe(suite)
    yield '<?xml version="1.0" encoding="utf-8"?>\n'
    cases = chain((_row_case(row, found) for row, found in audit.rows_with_findings()),
                  (_pair_case(*failing) for failing in failing_pairs),
                  (_problem_case(index, problem) for index, problem in enumerate(audit.expectation_problems)),
                  (_finding_case(index, finding) for index, finding in enumerate(others)))
    first = next(cases, None)
    if first is None:
        yield ET.tostring(suite, encoding="unicode") + "\n"
        return
    yield ET.tostring(suite, encoding="unicode", short_empty_elements=False).removesuffix("</testsuite>")
    for case in chain([first], cases):
        _xml_safe(case)
        ET.indent(case, level=1)
        yield "\n  " + ET.tostring(case, encoding="unicode")
    yield "\n</testsuite>\n"


def _row_case(row: AuditRow, found: tuple[Finding, ...]) -> ET.Element:
    case = ET.Element("testcase", classname=f"{row.spec.name}.{row.target}", name=row.case.id)
    if found:
        failure = ET.SubElement(case, "failure", type="drift",
                                message="; ".join(f"{f.kind}: classified {row.classification.name}, expected "
                                                  f"{row.expected.classification}" if f.kind != "out_of_range"
                                                  else f"{f.kind}: {f.message}" for f in found))
        failure.text = (f"Ragas {ragas_text(row)}; reference {reference_texts(row)[0]}; "
                        f"{row.classification.explanation}")
    return case


def _pair_case(pair: PathPair, found: tuple[Finding, ...]) -> ET.Element:
    case = ET.Element("testcase", classname=f"{pair.metric}.{pair.legacy.target} vs {pair.collections.target}",
                      name=pair.case.id)
    failure = ET.SubElement(case, "failure", type="drift",
                            message="; ".join(f"{f.kind}: classified {f.classification}, expected {f.expected}"
                                              for f in found))
    failure.text = pair.classification.explanation
    return case


def _problem_case(index: int, problem: str) -> ET.Element:
    case = ET.Element("testcase", classname="expectations", name=f"problem-{index}")
    ET.SubElement(case, "failure", type="expectations", message=problem)
    return case


def _finding_case(index: int, finding: Finding) -> ET.Element:
    if finding.kind == "replay_mismatch" and finding.case_id is not None:
        case = ET.Element("testcase", classname=f"replay.{finding.target}", name=finding.case_id)
    else:
        classname = "dataset level" if finding.message.startswith("dataset level: ") else "findings"
        case = ET.Element("testcase", classname=classname, name=f"finding-{index}")
    ET.SubElement(case, "failure", type=finding.kind, message=finding.line())
    return case
