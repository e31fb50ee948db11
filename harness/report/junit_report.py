"""``junit.xml``: one test case per (case, Ragas target); a failure where the
classification differs from the expectation, so CI systems show drift natively."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from harness.compare.audit import Audit
from harness.report.markdown.document import ragas_text, reference_texts


def render_junit(audit: Audit) -> str:
    failures = len(audit.unexpected) + len(audit.expectation_problems)
    suite = ET.Element("testsuite", name=f"ragas-compat.{audit.suite.name}",
                       tests=str(len(audit.rows) + len(audit.expectation_problems)),
                       failures=str(failures), errors="0", skipped="0")
    for row in audit.rows:
        case = ET.SubElement(suite, "testcase", classname=f"{row.spec.name}.{row.target}", name=row.case.id)
        if row.unexpected:
            failure = ET.SubElement(case, "failure", type="drift",
                                    message=f"classified {row.classification.name}, expected "
                                            f"{row.expected.classification}")
            failure.text = (f"Ragas {ragas_text(row)}; reference {reference_texts(row)[0]}; "
                            f"{row.classification.explanation}")
    for index, problem in enumerate(audit.expectation_problems):
        case = ET.SubElement(suite, "testcase", classname="expectations", name=f"problem-{index}")
        ET.SubElement(case, "failure", type="expectations", message=problem)
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
