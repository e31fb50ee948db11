"""What the reports say about expectations: the drift findings and the rules that explained rows.

Shared by ``report.json`` (``finding_json``, ``expectations_json``) and ``report.md``
(``ragas_compat.report.markdown.drift`` renders them).
The findings are listed whatever ``--fail-on`` says; the exit code applies the policy
(``ragas_compat.compare.verdict``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragas_compat.compare.findings import Finding

KIND_MEANING: dict[str, str] = {
    "unexplained": "a row no rule explains (or whose case entry expects another classification), or a "
                   "problem of the expectations file",
    "divergence": "a divergence no rule explains",
    "out_of_range": "a Ragas value outside the metric's range",
    "error": "an error no rule explains",
    "harness_error": "a row not scored: the harness raised its own error driving Ragas (no rule or case entry "
                     "explains it)",
    "replay_mismatch": "a recorded case whose offline replay does not reproduce the live Ragas score bit for bit",
}


def finding_json(finding: Finding) -> dict[str, Any]:
    return {"kind": finding.kind, "case_id": finding.case_id, "target": finding.target,
            "classification": finding.classification, "expected": finding.expected, "message": finding.message}


def _explained(audit: Any) -> Iterator[tuple[Any, str]]:
    """(expectation, "row"|"pair") for every row and pair a rule or case entry explains."""
    for row in audit.rows:
        if row.expected.explained and str(row.classification.name) == row.expected.classification:
            yield row.expected, "row"
    for pair in audit.pairs:
        if pair.expected.explained and str(pair.classification.name) == pair.expected.classification:
            yield pair.expected, "pair"


def expectations_json(audit: Any) -> list[dict[str, Any]]:
    """Each rule or case entry that explained rows or pairs of this run, with how many, in first-use order."""
    used: dict[tuple[str, str | None], dict[str, Any]] = {}
    for expectation, kind in _explained(audit):
        entry = used.setdefault((expectation.by, expectation.origin), {
            "by": expectation.by, "origin": expectation.origin, "label": expectation.label,
            "classification": expectation.classification,
            "reason": expectation.reason, "upstream": expectation.upstream,
            "allow_out_of_range": expectation.allow_out_of_range, "rows": 0, "pairs": 0})
        entry["rows" if kind == "row" else "pairs"] += 1
    order = audit.expectations.order() if audit.expectations is not None else {}
    return sorted(used.values(), key=lambda e: (order.get(e["by"], len(order)), e["by"] or ""))
