"""The report sections "Drift" and "Expectations applied" (data from ``ragas_compat.report.drift``)."""

from __future__ import annotations

from typing import Any

from ragas_compat.compare.findings import DRIFT_KINDS, counts
from ragas_compat.report.drift import KIND_MEANING, expectations_json
from ragas_compat.report.escape import md_text
from ragas_compat.report.markdown.table import markdown_table


def drift_markdown(audit: Any) -> list[str]:
    """The section "Drift" (no lines when there is none)."""
    found = audit.findings
    if not found:
        return []
    by_kind = counts(found)
    lines = ["## Drift", "",
             "Findings by kind (the exit code counts the kinds chosen with `--fail-on`, all by default): "
             + ", ".join(f"{n} {kind}" for kind, n in by_kind.items() if n) + ".", ""]
    lines += [f"- `{kind}`: {KIND_MEANING[kind]}" for kind in DRIFT_KINDS if by_kind.get(kind)]
    lines.append("")
    lines += markdown_table(["kind", "case", "Ragas target", "classification", "expected", "why"],
                            [[md_text(cell) for cell in (f.kind, f.case_id or "—", f.target or "—",
                                                         f.classification or "—", f.expected or "—", f.message)]
                             for f in found])
    return lines


def expectations_markdown(audit: Any) -> list[str]:
    """The section "Expectations applied": each rule or case entry that explained rows, with its reason."""
    used = expectations_json(audit)
    if not used:
        return []
    lines = ["## Expectations applied", "",
             f"Rows and legacy-vs-collections pairs that are not `identical` are expected when a rule (by what "
             f"produces the classification, whatever the case id) or a case entry explains them "
             f"({md_text(audit.provenance.get('expectations', '?'))}).", ""]
    lines += markdown_table(
        ["rule or entry", "classification", "rows", "pairs", "reason"],
        [[md_text(entry["by"]), md_text(entry["classification"]), entry["rows"], entry["pairs"],
          md_text(entry["reason"] + (f" ({entry['upstream']})" if entry["upstream"] else ""))] for entry in used])
    return lines
