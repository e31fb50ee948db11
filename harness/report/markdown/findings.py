"""The opening of report.md: the verdict line and the ranked findings (``Audit.verdict``, ``Audit.headlines``)."""

from __future__ import annotations

from ragas_compat.compare.audit import Audit
from ragas_compat.compare.headlines import Headline
from ragas_compat.report.escape import md_code, md_text


def example_text(finding: Headline) -> str:
    """``case `x`, metric, `target`: Ragas 0.83…; reference 5/6`` (one line, its user text escaped)."""
    e = finding.example
    where = ", ".join(part for part in (f"case {md_code(e.case_id)}" if e.case_id else None, md_text(e.metric or ""),
                                         md_code(e.target) if e.target else None) if part)
    return f"{where}: Ragas {md_text(e.ragas)}; reference {md_text(e.reference)}"


def findings_markdown(audit: Audit) -> list[str]:
    """``**Verdict: …**`` and the section "Findings", ranked by consequence."""
    lines = [f"**{md_text(audit.verdict.line())}**", "", *(f"{md_text(note)}  " for note in audit.verdict.notes()), "",
             "## Findings", "",
             "What this suite shows about Ragas's numbers, most consequential first (each with one example row; "
             "every row is in the sections below).", ""]
    for index, finding in enumerate(audit.headlines, start=1):
        by = f" Explained by {finding.explained_by}." if finding.explained_by else ""
        lines.append(f"{index}. {md_text(finding.sentence)}{md_text(by)}")
        lines.append(f"   Example: {example_text(finding)}")
    if len(lines) == 6:
        lines.append("Nothing to report: every row is `identical`.")
    return lines + [""]
