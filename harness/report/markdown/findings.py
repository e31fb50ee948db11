"""The opening of report.md: the verdict line and the ranked findings (``Audit.verdict``, ``Audit.headlines``)."""

from __future__ import annotations

from ragas_compat.compare.audit import Audit
from ragas_compat.compare.headlines import Headline
from ragas_compat.report.markdown.table import markdown_cell


def example_text(finding: Headline) -> str:
    """``case `x`, metric, `target`: Ragas 0.83…; reference 5/6`` (one line)."""
    e = finding.example
    where = ", ".join(part for part in (f"case `{e.case_id}`" if e.case_id else None, e.metric,
                                         f"`{e.target}`" if e.target else None) if part)
    return f"{where}: Ragas {e.ragas}; reference {e.reference}"


def findings_markdown(audit: Audit) -> list[str]:
    """``**Verdict: …**`` and the section "Findings", ranked by consequence."""
    lines = [f"**{audit.verdict.line()}**", "", *(f"{note}  " for note in audit.verdict.notes()), "", "## Findings", "",
             "What this suite shows about Ragas's numbers, most consequential first (each with one example row; "
             "every row is in the sections below).", ""]
    for index, finding in enumerate(audit.headlines, start=1):
        by = f" Explained by {finding.explained_by}." if finding.explained_by else ""
        lines.append(f"{index}. {markdown_cell(finding.sentence)}{markdown_cell(by)}")
        lines.append(f"   Example: {markdown_cell(example_text(finding))}")
    if len(lines) == 6:
        lines.append("Nothing to report: every row is `identical`.")
    return lines + [""]
