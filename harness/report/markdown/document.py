"""``report.md``: the audit for a reviewer.

Provenance first, then the summary, then one section per classification (the cause in
one paragraph, with the concrete rows), then one table per metric with full values.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.compare.audit import Audit, AuditRow
from harness.compare.classify import CLASSIFICATIONS
from harness.values import RagasError
from harness.report.markdown.api_paths import api_paths_markdown
from harness.report.markdown.dataset_level import dataset_level_markdown
from harness.report.json_report import metrics_json
from harness.report.markdown.table import markdown_table

CAUSES: dict[str, str] = {
    "identical": "Ragas's float is bit-equal to the reference value.",
    "epsilon": (
        "Ragas's average precision divides the numerator by (relevant retrieved + 1e-10), so a "
        "value such as 5/6 comes out as 0.8333333332916666. The harness recomputes Ragas's "
        "formula with the epsilon and finds it bit-equal to Ragas's value (or within a few "
        "ulps, from summation order): the gap is the epsilon, not a different definition."
    ),
    "undefined_nan": (
        "The reference value is undefined (an empty denominator: zero claims, or an empty ID "
        "set) and Ragas returns NaN. Same meaning, different encoding; note that Ragas's "
        "evaluate() then drops the row from its NaN-skipping mean."
    ),
    "empty_as_zero": (
        "The reference value is undefined (nothing retrieved, or no relevant context "
        "retrieved, so the AP denominator is zero) and Ragas returns 0.0: the 1e-10 keeps its "
        "denominator non-zero. \"The retriever returned nothing\", \"every chunk was useless\" "
        "and a real score of zero all read as 0.0."
    ),
    "dedup": (
        "Ragas's ID-based metrics pass every ID through str() and into a set: duplicates "
        "collapse, and 1 and \"1\" become one ID. The reference counts the lists as given; "
        "the value under Ragas's set semantics is bit-equal to Ragas's."
    ),
    "coercion": (
        "The input holds a value the reference refuses (a verdict that is not 0/1). Ragas "
        "accepts it and maps it to 0/1 by truthiness (2 counts as 1); the value under that "
        "coercion is bit-equal to Ragas's."
    ),
    "rounding": (
        "Ragas's float differs from the exact value by a few units in the last place, from "
        "float summation order rather than meaning (Python 3.12 made sum() compensated, so "
        "the Python version is part of the provenance)."
    ),
    "divergence": (
        "A difference none of the known semantics explains: Ragas measures something other "
        "than the reference definition on this input."
    ),
    "error": "Ragas (or the probe around it) raised instead of returning a value; the message is kept.",
}


def ragas_text(row: AuditRow) -> str:
    value = row.ragas_value
    if isinstance(value, RagasError):
        return f"error: {value.type}: {value.message}"
    return repr(value)


def reference_texts(row) -> tuple[str, str]:
    """(exact, float) texts of the reference value: 'undefined (reason)' or 'refused: …'."""
    reference = row.reference
    if reference.refused is not None:
        return f"refused: {reference.refused}", "—"
    if reference.value is None:
        return f"undefined ({reference.undefined_reason})", "—"
    return str(reference.value), repr(float(reference.value))


def _provenance(audit: Audit) -> list[str]:
    p = audit.provenance
    ragas = p.get("ragas", {})
    pin = p.get("pin", {})
    warning = [f"> **Warning:** {ragas['warning']}", ""] if ragas.get("warning") else []
    rows = [
        ["Ragas run", f"{ragas.get('version') or ragas.get('imported_version') or 'unknown'} ({ragas.get('kind', '?')}), "
                      f"commit {ragas.get('commit') or 'not known (release)'}, {ragas.get('display_path', '?')}"],
        ["Pinned commit", f"{pin.get('commit')} ({pin.get('repository')}, {pin.get('date')})"],
        ["Pin status", ragas.get("pin_status", "unknown")],
        ["Audited files vs pin", ragas.get("files_status", "unknown")],
        ["Python", p.get("python", {}).get("version", "?") + " " + p.get("python", {}).get("implementation", "")],
        ["ragas-compat", p.get("harness_version", "?")],
        ["Suite", f"{audit.suite.name} ({audit.suite.source}), {len(audit.suite.cases)} cases"],
        ["Expectations", p.get("expectations", "?")],
        ["Network", p.get("network", "?")],
    ]
    return ["## Provenance", ""] + warning + markdown_table(["", ""], rows)


def _summary(audit: Audit) -> list[str]:
    lines = ["## Summary", ""]
    if audit.drift:
        lines.append(f"**Drift:** {len(audit.unexpected)} of {len(audit.rows)} rows differ from the "
                     f"expected classification; {len(audit.expectation_problems)} expectation-file problems.")
    else:
        lines.append(f"All {len(audit.rows)} rows match their expected classification.")
    lines.append("")
    used = [c for c in CLASSIFICATIONS if any(r.classification.name == c for r in audit.rows)]
    for title, key in (("metric", lambda r: r.spec.name), ("case category", lambda r: r.case.category)):
        counts = audit.counts(key)
        lines += [f"Classifications per {title}:", ""]
        lines += markdown_table([title] + used + ["total"],
                        [[k] + [c.get(name, 0) for name in used] + [sum(c.values())]
                         for k, c in sorted(counts.items())])
    per_category = Counter(case.category for case in audit.suite.cases)
    lines += ["Cases per category:", ""]
    lines += markdown_table(["category", "cases"], [[k, v] for k, v in sorted(per_category.items())])
    return lines


def _unexpected(audit: Audit) -> list[str]:
    if not audit.drift:
        return []
    lines = ["## Unexpected classifications", ""]
    lines += markdown_table(["case", "Ragas target", "classification", "expected", "why"],
                    [[r.case.id, r.target, r.classification.name, r.expected.classification,
                      r.classification.explanation] for r in audit.unexpected])
    lines += [f"- {problem}" for problem in audit.expectation_problems]
    return lines + ([""] if audit.expectation_problems else [])


def _by_classification(audit: Audit) -> list[str]:
    lines = ["## Causes, by classification", ""]
    for name in CLASSIFICATIONS:
        rows = [r for r in audit.rows if r.classification.name == name]
        if not rows or name == "identical":
            continue
        lines += [f"### `{name}` ({len(rows)} rows)", "", CAUSES[name], ""]
        reasons = sorted({(r.expected.reason, r.expected.upstream) for r in rows if r.expected.reason})
        for reason, upstream in reasons:
            lines.append(f"Expected because: {reason}" + (f" ({upstream})" if upstream else ""))
        if reasons:
            lines.append("")
        lines += markdown_table(["case", "Ragas target", "Ragas value", "reference", "why"],
                        [[r.case.id, r.target, ragas_text(r), reference_texts(r)[0], r.classification.explanation]
                         for r in rows])
    identical = sum(1 for r in audit.rows if r.classification.name == "identical")
    lines += [f"### `identical` ({identical} rows)", "", CAUSES["identical"], ""]
    return lines


def _per_metric(audit: Audit) -> list[str]:
    lines = ["## Per metric", ""]
    for entry in metrics_json(audit):
        rows = [r for r in audit.rows if r.spec.name == entry["metric"]]
        if not rows:
            continue
        lines += [f"### {entry['metric']}", "",
                  f"- Denominator: {entry['denominator']}",
                  f"- Missing-value policy: {entry['undefined_policy']}"]
        lines += [f"- `{t['ragas_class']}` reads {', '.join(f'`{f}`' for f in t['fields_read'])}"
                  for t in entry["ragas_targets"]]
        lines.append("")
        table = []
        for r in rows:
            exact, as_float = reference_texts(r)
            mark = r.classification.name if not r.unexpected else f"**{r.classification.name}** (expected {r.expected.classification})"
            table.append([r.case.id, r.case.category, r.target, ragas_text(r),
                          exact, as_float, mark])
        lines += markdown_table(["case", "category", "Ragas target", "Ragas value (repr)", "reference (exact)",
                         "reference (float)", "classification"], table)
    return lines


def _reference_only(audit: Audit) -> list[str]:
    if not audit.reference_only:
        return []
    lines = ["## Reference only (no Ragas counterpart)", ""]
    for name in sorted({r.spec.name for r in audit.reference_only}):
        rows = [r for r in audit.reference_only if r.spec.name == name]
        keys = sorted({k for r in rows for k in r.reference.details})
        lines += [f"### {name}", "", f"- Denominator: {rows[0].spec.denominator}", ""]
        lines += markdown_table(["case"] + keys,
                        [[r.case.id] + [_detail(r.reference.details.get(k)) for k in keys] for r in rows])
    return lines


def _detail(value: Any) -> str:
    return "undefined" if value is None else str(value)


def render_markdown(audit: Audit) -> str:
    lines = [f"# Ragas compatibility audit: suite `{audit.suite.name}`", "",
             "Ragas's own scoring classes and the reference implementations ran on identical frozen "
             "judge verdicts; every difference is classified below.", ""]
    for part in (_provenance, _summary, _unexpected, _by_classification, api_paths_markdown, _per_metric,
                 dataset_level_markdown, _reference_only):
        lines += part(audit)
    return "\n".join(lines).rstrip() + "\n"
