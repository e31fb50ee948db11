"""The report section "legacy vs collections at this Ragas" (pairs from ``harness.compare.api_paths``)."""

from __future__ import annotations

from typing import Any

from harness.compare.api_paths import COLLECTIONS, LEGACY, PathPair, path_differences, path_pairs, unpaired_metrics
from harness.compare.audit import Audit
from harness.compare.classify import CLASSIFICATIONS
from harness.values import encode_ragas_value
from harness.report.markdown.table import markdown_cell


def _pairs_of(audit: Audit) -> tuple[PathPair, ...]:
    return path_pairs(audit.rows, audit.expectations)


def api_paths_json(audit: Audit) -> dict[str, Any]:
    """The report's ``api_paths`` section."""
    pairs = _pairs_of(audit)
    counts = {name: sum(1 for p in pairs if p.classification.name == name) for name in CLASSIFICATIONS}
    return {
        "description": ("legacy vs collections at this Ragas: each legacy row paired with each collections "
                        "row of the same case and metric, classified with the legacy value in the place "
                        "of the reference"),
        "pairs": len(pairs),
        "unexpected": sum(1 for p in pairs if p.unexpected),
        "by_classification": counts,
        "unpaired_metrics": unpaired_metrics(audit.rows),
        "differences": [
            {"case_id": d.case.id, "category": d.case.category, "metric": d.metric,
             "classification": d.classification, "meaning": d.meaning,
             "legacy": [{"target": t, "value": v} for t, v in d.legacy],
             "collections": [{"target": t, "value": v} for t, v in d.collections]}
            for d in path_differences(pairs)],
        "results": [
            {"case_id": p.case.id, "metric": p.metric, "legacy_target": p.legacy.target,
             "collections_target": p.collections.target,
             "legacy_value": encode_ragas_value(p.legacy.ragas_value),
             "collections_value": encode_ragas_value(p.collections.ragas_value),
             "classification": p.classification.name, "explanation": p.classification.explanation,
             "expected_classification": p.expected.classification, "expected_reason": p.expected.reason,
             "upstream": p.expected.upstream, "unexpected": p.unexpected}
            for p in pairs],
    }


def api_paths_markdown(audit: Audit) -> list[str]:
    """The report's section "Legacy vs collections at this Ragas" (no lines when no pair exists)."""
    pairs = _pairs_of(audit)
    unpaired = unpaired_metrics(audit.rows)
    if not pairs and not unpaired["collections_only"]:
        return []
    lines = ["## Legacy vs collections at this Ragas", "",
             "Ragas ships two paths for the same metric names: the legacy classes (`ragas.metrics`) and "
             "`ragas.metrics.collections`. Each legacy row is paired with each collections row of the same "
             "case and metric and classified with the legacy value in the place of the reference.", ""]
    counts = {name: sum(1 for p in pairs if p.classification.name == name) for name in CLASSIFICATIONS}
    unexpected = [p for p in pairs if p.unexpected]
    lines.append(f"{len(pairs)} pairs: " + ", ".join(f"{n} {name}" for name, n in counts.items() if n)
                 + (f"; **{len(unexpected)} differ from the expected classification**" if unexpected else
                    "; all match their expected classification") + ".")
    if unpaired["legacy_only"]:
        lines.append(f"Legacy only (no collections class run): {', '.join(unpaired['legacy_only'])}.")
    if unpaired["collections_only"]:
        lines.append(f"Collections only (no legacy class run): {', '.join(unpaired['collections_only'])}.")
    lines.append("")
    differences = path_differences(pairs)
    if not differences:
        return lines + ["No behavioural difference between the two paths on this suite.", ""]
    lines += ["Behavioural differences, with the case that shows each:", "",
              "| case | metric | classification | legacy | collections | meaning |", "|---|---|---|---|---|---|"]
    for d in differences:
        legacy = "; ".join(f"`{t.removeprefix(LEGACY)}` {v}" for t, v in d.legacy)
        collections = "; ".join(f"`{t.removeprefix(COLLECTIONS)}` {v}" for t, v in d.collections)
        lines.append("| " + " | ".join(markdown_cell(c) for c in (d.case.id, d.metric, d.classification, legacy,
                                                           collections, d.meaning)) + " |")
    lines.append("")
    if unexpected:
        lines += ["Unexpected pairs:", ""]
        lines += [f"- {p.case.id}: {p.legacy.target} vs {p.collections.target}: {p.classification.name} "
                  f"(expected {p.expected.classification})" for p in unexpected]
        lines.append("")
    return lines
