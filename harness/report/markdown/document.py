"""``report.md``: the audit for a reviewer.

Provenance first, then the summary (and the judge audit over all claims when cases have one), then one section per classification (the cause in
one paragraph, with the concrete rows), then one table per metric with full values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import chain
from typing import Any

from ragas_compat.compare.audit import Audit, metric_entries
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.compare.findings import counts as drift_counts
from ragas_compat.report.escape import md_code, md_text
from ragas_compat.report.markdown.api_paths import api_paths_markdown
from ragas_compat.report.markdown.dataset_level import dataset_level_markdown
from ragas_compat.report.markdown.drift import drift_markdown, expectations_markdown
from ragas_compat.report.markdown.findings import findings_markdown
from ragas_compat.report.markdown.table import markdown_table
from ragas_compat.report.text import judge_audit_summary_of, ragas_text, reference_texts
from ragas_compat.vocabulary import Classification


def _provenance(audit: Audit) -> list[str]:
    p = audit.provenance
    ragas = p.get("ragas", {})
    pin = p.get("pin", {})
    warning = [f"> **Warning:** {md_text(ragas['warning'])}", ""] if ragas.get("warning") else []
    rows = [
        ["Ragas run", md_text(f"{ragas.get('version') or ragas.get('imported_version') or 'unknown'} "
                              f"({ragas.get('kind', '?')}), commit {ragas.get('commit') or 'not known (release)'}, "
                              f"{ragas.get('display_path', '?')}")],
        ["Pinned commit", md_text(f"{pin.get('commit')} ({pin.get('repository')}, {pin.get('date')})")],
        ["Pin status", md_text(ragas.get("pin_status", "unknown"))],
        ["Audited files vs pin", ragas.get("files_status", "unknown")],
        ["Hashed modules", _hashed_modules(ragas.get("audited_coverage"), pin.get("audited_files", []))],
        ["Python", p.get("python", {}).get("version", "?") + " " + p.get("python", {}).get("implementation", "")],
        ["ragas-compat", p.get("harness_version", "?")],
        ["Suite", f"{md_text(audit.suite.name)} ({md_text(audit.suite.source)}), {len(audit.suite.cases)} cases"],
        ["Expectations", md_text(p.get("expectations", "?"))],
        ["Network", p.get("network", "?")],
    ]
    if "oracles" in p:
        rows.append(["Oracles", ", ".join(f"{name} {version}" if version else f"{name} absent"
                                          for name, version in p["oracles"].items())])
    return ["## Provenance", ""] + warning + list(markdown_table(["", ""], rows))


def _hashed_modules(coverage: dict | None, files: list[str]) -> str:
    """Which Ragas files the provenance claims were hashed, and the targets they cover."""
    if not files:
        return "none"
    shown = ", ".join(f"`{f.removeprefix('src/ragas/metrics/')}`" for f in files)
    if not coverage:
        return f"{len(files)} files under src/ragas/metrics/: {shown}"
    missing = coverage["unaudited_targets"]
    covered = (f"all {coverage['targets']} registered targets ({coverage['classes']} classes)" if not missing else
               f"{coverage['targets_covered']} of {coverage['targets']} registered targets; not hashed, so no "
               f"claim about: {', '.join(f'`{t}`' for t in missing)}")
    return f"{len(files)} files under src/ragas/metrics/, behind {covered}: {shown}"


def _summary(audit: Audit) -> list[str]:
    lines = ["## Summary", ""]
    found = audit.findings
    explained = sum(1 for r in audit.rows if r.expected.explained and not r.unexpected)
    if found:
        lines.append(f"**Drift:** {len(found)} finding{'' if len(found) == 1 else 's'} ("
                     + ", ".join(f"{n} {kind}" for kind, n in drift_counts(found).items() if n)
                     + f"); {len(audit.unexpected)} of {len(audit.rows)} rows differ from their expected "
                       f"classification, {len(audit.expectation_problems)} expectation-file problems.")
    else:
        lines.append(f"No drift: each of the {len(audit.rows)} rows is `identical` or explained by a rule or case "
                     f"entry ({explained} explained).")
    lines.append("")
    used = [c for c in CLASSIFICATIONS if any(r.classification.name == c for r in audit.rows)]
    for title, key in (("metric", lambda r: r.spec.name), ("case category", lambda r: md_text(r.case.category))):
        counts = audit.counts(key)
        lines += [f"Classifications per {title}:", ""]
        lines += markdown_table([title] + used + ["total"],
                        [[k] + [c.get(name, 0) for name in used] + [sum(c.values())]
                         for k, c in sorted(counts.items())])
    per_category = Counter(case.category for case in audit.suite.cases)
    lines += ["Cases per category:", ""]
    lines += markdown_table(["category", "cases"], [[md_text(k), v] for k, v in sorted(per_category.items())])
    return lines


def _judge_audit_summary(audit: Audit) -> list[str]:
    """The judge audit pooled over every claim of every case (an imported dataset's), when the run has one."""
    summary = judge_audit_summary_of(audit)
    if summary is None:
        return []
    rates = [rate.text() for rate in summary.rates()]
    lines = ["## Judge audit over all claims", "", md_text(summary.counts_text()) + ".", ""]
    lines += [f"- {md_text(rate)}" for rate in rates]
    if summary.refused:
        lines.append(f"- Not counted (the reference refused their audit): {', '.join(md_code(c) for c in summary.refused)}")
    return lines + [""]


def _by_classification(audit: Audit) -> Iterator[str]:
    """One section per classification: its cause, then its rows grouped by what explains them, each
    group's reason right above the rows it explains (unexplained rows first)."""
    yield from ["## Causes, by classification", ""]
    for name in CLASSIFICATIONS:
        rows = [r for r in audit.rows if r.classification.name == name]
        if not rows or name == "identical":
            continue
        yield from [f"### `{name}` ({len(rows)} rows)", "", Classification(name).cause, ""]
        groups: dict[tuple[str, str, str], list] = {}
        for r in rows:
            key = ("", "", "") if r.unexpected or not r.expected.explained else \
                (r.expected.label or "", r.expected.reason or "", r.expected.upstream or "")
            groups.setdefault(key, []).append(r)
        for (label, reason, upstream), members in sorted(groups.items()):
            if label:
                yield (f"**Expected because** ({md_text(label)}, {len(members)} rows): {md_text(reason)}"
                       + (f" ({md_text(upstream)})" if upstream else ""))
            else:
                yield f"**Not explained** by any rule or case entry ({len(members)} rows):"
            yield ""
            yield from markdown_table(["case", "Ragas target", "Ragas value", "reference", "why"],
                                      ([md_text(r.case.id), r.target, md_text(ragas_text(r)),
                                        md_text(reference_texts(r)[0]), md_text(r.classification.explanation)]
                                       for r in members))
    identical = sum(1 for r in audit.rows if r.classification.name == "identical")
    yield from [f"### `identical` ({identical} rows)", "", Classification.IDENTICAL.cause, ""]


def _per_metric(audit: Audit) -> Iterator[str]:
    yield from ["## Per metric", ""]
    for entry in metric_entries(audit):
        rows = [r for r in audit.rows if r.spec.name == entry["metric"]]
        if not rows:
            continue
        yield from [f"### {entry['metric']}", "",
                    f"- Denominator: {entry['denominator']}",
                    f"- Missing-value policy: {entry['undefined_policy']}"]
        yield from [f"- `{t['ragas_class']}` reads {', '.join(f'`{f}`' for f in t['fields_read'])}"
                    for t in entry["ragas_targets"]]
        yield ""
        oracle = any(isinstance(r.reference.details.get("oracle"), dict) for r in rows)
        if oracle:
            yield oracle_line(rows)
        yield from markdown_table(["case", "category", "Ragas target", "Ragas value (repr)", "reference (exact)",
                                   "reference (float)", "classification"] + (["oracle"] if oracle else []),
                                  (_per_metric_cells(r, oracle) for r in rows))


def _per_metric_cells(r: Any, oracle: bool) -> list[Any]:
    exact, as_float = reference_texts(r)
    mark = r.classification.name if not r.unexpected else \
        f"**{r.classification.name}** (expected {md_text(r.expected.classification)})"
    return [md_text(r.case.id), md_text(r.case.category), r.target, md_text(ragas_text(r)), md_text(exact),
            md_text(as_float), mark] + ([md_text(oracle_text(r.reference.details.get("oracle")))] if oracle else [])


def _reference_only(audit: Audit) -> Iterator[str]:
    if not audit.reference_only:
        return
    yield from ["## Reference only (no Ragas counterpart)", ""]
    for name in sorted({r.spec.name for r in audit.reference_only}):
        rows = [r for r in audit.reference_only if r.spec.name == name]
        keys = sorted({k for r in rows for k in r.reference.details})
        yield from [f"### {name}", "", f"- Denominator: {rows[0].spec.denominator}", ""]
        yield from markdown_table(["case"] + keys,
                                  ([md_text(r.case.id)] + [md_text(_detail(r.reference.details.get(k))) for k in keys]
                                   for r in rows))


def _detail(value: Any) -> str:
    return "undefined" if value is None else str(value)


def render_markdown(audit: Audit) -> str:
    """``report.md`` as one string (``markdown_chunks`` joined)."""
    return "".join(markdown_chunks(audit))


def markdown_chunks(audit: Audit) -> Iterator[str]:
    """``report.md``, written as it is made: its lines joined by newlines, trailing white space
    dropped, one final newline."""
    lines = chain([f"# Ragas compatibility audit: suite {md_code(audit.suite.name)}", "",
                   "Ragas's own scoring classes and the reference implementations ran on identical frozen "
                   "judge verdicts; every difference is classified below.", ""],
                  *(part(audit) for part in (findings_markdown, _provenance, _summary, _judge_audit_summary,
                                             drift_markdown,
                                             _by_classification, expectations_markdown, api_paths_markdown,
                                             _per_metric, dataset_level_markdown, _reference_only)))
    yield from _right_stripped(chain([next(lines)], ("\n" + line for line in lines)))
    yield "\n"


def _right_stripped(chunks: Iterator[str]) -> Iterator[str]:
    """The text ``"".join(chunks).rstrip()``, chunk by chunk (white space is held back until text follows)."""
    held = ""
    for chunk in chunks:
        text = chunk.rstrip()
        if text:
            yield held + text
            held = chunk[len(text):]
        else:
            held += chunk


def oracle_text(oracle: Any) -> str:
    """An oracle's value (full repr), or why it is absent."""
    if not isinstance(oracle, dict):
        return ""
    return repr(oracle["value"]) if "value" in oracle else f"absent ({oracle.get('library')})"


def oracle_line(rows: list[Any]) -> str:
    """The oracle library and call behind the metric's oracle column."""
    oracle = next(r.reference.details["oracle"] for r in rows if isinstance(r.reference.details.get("oracle"), dict))
    return f"Oracle: {oracle.get('library')}, `{oracle.get('call')}`.\n"
