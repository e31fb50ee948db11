"""Render a drift matrix as matrix.json, matrix.md and matrix.html (self-contained), written atomically.

The three files are deterministic for the same columns: no timestamps, no absolute paths, no
environment build state (built vs reused) and no timings - those go to the console only.

A cell the harness could not drive (``Cell.harness_limit``) says so in the harness's name, is drawn in
a neutral colour (never the Ragas-error colour), and its changes are listed apart from Ragas's drift.
Values are shown with 6 significant digits, except in a cell that changed from the previous column
and where 6 digits would hide a difference between adjacent columns: there the exact double (``repr``)
is shown (``cell_texts``).
"""

from __future__ import annotations

import html
import json
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragas_compat.compare.classify import CLASSIFICATIONS, same_float
from ragas_compat.report.atomic import write_reports_atomically
from ragas_compat.report.csp import policy_meta
from ragas_compat.report.escape import md_code, md_text
from ragas_compat.report.golden import write_golden_files
from ragas_compat.tools.matrix.drift import MISSING_CLASS, PROMPT_NOTE, ApiCell, Cell, Drift, Matrix, MatrixRow
from ragas_compat.values import encode_float

MATRIX_FORMAT = 2  # 2: explanations and error messages stored once under "texts", cells refer by key
REPORT_FILES = ("matrix.json", "matrix.md", "matrix.html")


# ---------------------------------------------------------------- JSON

def _value_json(cell: Cell) -> Any:
    return encode_float(cell.value) if cell.status == "value" else None


def _cell_json(cell: Cell, causes: tuple, text_key: Callable[[str | None], str | None]) -> dict:
    out: dict[str, Any] = {"status": cell.status, "text": cell.text}
    if cell.status == "value":
        out["value"] = _value_json(cell)
    if cell.status == "error":
        out["error"] = {"type": cell.error_type, "message": text_key(cell.error_message)}
        if cell.error_origin:
            out["error"]["origin"] = cell.error_origin
    if cell.not_run is not None:
        out["not_run"] = {"why": cell.not_run, "by": "harness" if cell.harness_limit else "ragas"}
    if cell.status == "unavailable":
        out["reason"] = cell.error_message
    if cell.classification is not None:
        out["classification"] = cell.classification
        out["explanation"] = text_key(cell.explanation)
    if cell.ragas_class:
        out["ragas_class"] = cell.ragas_class
    if cell.fields_dropped:
        out["fields_dropped"] = list(cell.fields_dropped)
    if cell.prompts is not None:
        out["prompts"] = cell.prompts
    if cell.prompt_hashes:
        out["prompt_hashes"] = dict(cell.prompt_hashes)
    if cell.telemetry_events:
        out["telemetry_events"] = list(cell.telemetry_events)
    if cell.warnings:
        out["warnings"] = list(cell.warnings)
    out["changed"] = bool(causes)
    out["causes"] = [{"kind": c.kind, "text": c.text, **({"rule": c.rule} if c.rule else {})} for c in causes]
    return out


def _api_json(cell: ApiCell | None) -> dict | None:
    if cell is None:
        return None
    return {"ragas_class": cell.ragas_class, "exported_from_ragas_metrics": cell.exported, "missing": cell.missing,
            "fields_accepted": list(cell.fields_accepted), "fields_dropped": list(cell.fields_dropped),
            "required_columns": list(cell.required_columns), "warnings": list(cell.warnings)}


def matrix_to_json(matrix: Matrix) -> dict:
    """The matrix for machines; a cell's ``explanation`` and error ``message`` are keys of ``texts``."""
    texts: dict[str, str] = {}

    def text_key(text: str | None) -> str | None:
        return None if text is None else texts.setdefault(text, f"t{len(texts) + 1}")

    document = {
        "matrix_format": MATRIX_FORMAT,
        "suite": matrix.suite,
        "columns": [{"label": c.label, "ragas_version": c.version, **({"python": c.python} if c.python else {}),
                     "kind": c.kind, "available": c.available,
                     "error": c.error, "sample_fields": list(c.sample_fields),
                     "import_warnings": list(c.import_warnings), "network_attempts": c.network_attempts}
                    for c in matrix.columns],
        "drifts": [{"from": d.before, "to": d.after, "kind": d.kind, "by": d.by, "cause": d.text,
                    **({"explained_by": d.rule, "reason": d.reason} if d.rule else {}),
                    "rows": [{"case_id": case, "target": target} for case, target in d.rows]}
                   for d in matrix.drifts],
        "rows": [{"case_id": r.case_id, "category": r.category, "metric": r.metric, "target": r.target,
                  "reference": r.reference,
                  "cells": {c.label: _cell_json(cell, () if i == 0 else r.changes[i - 1], text_key)
                            for i, (c, cell) in enumerate(zip(matrix.columns, r.cells, strict=True))}}
                 for r in matrix.rows],
        "api": {target: {c.label: _api_json(cell) for c, cell in zip(matrix.columns, cells, strict=True)}
                for target, cells in matrix.api.items()},
    }
    document["texts"] = {key: text for text, key in texts.items()}
    return document


def render_json(matrix: Matrix) -> str:
    """matrix.json: each section on its own lines, every item of a list (a column, a drift, a row with
    all its cells, a target's API cells) on one line, so a diff shows the rows that changed."""
    document = matrix_to_json(matrix)

    def line(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))

    def section(value: Any) -> str:
        if isinstance(value, list) and value:
            return "[\n" + ",\n".join("  " + line(item) for item in value) + "\n ]"
        if isinstance(value, dict) and value and all(isinstance(v, (dict, list)) for v in value.values()):
            return "{\n" + ",\n".join(f"  {line(k)}: {line(v)}" for k, v in value.items()) + "\n }"
        return line(value)

    return "{\n" + ",\n".join(f" {line(key)}: {section(value)}" for key, value in document.items()) + "\n}\n"


# ---------------------------------------------------------------- Markdown

def _md(text: Any) -> str:
    """User text (case ids, labels, errors, warnings) as inert Markdown: ``report.escape.md_text``."""
    return md_text(text)


def cases_text(cases: list[str], total: int) -> str:
    """The case ids of a drift, or "all N cases" when every case of the suite shows it ("the whole run"
    for a drift of the run, such as telemetry, that no row shows)."""
    if not cases:
        return "the whole run"
    unique = sorted(dict.fromkeys(cases))
    return f"all {total} cases" if total and len(unique) == total else ", ".join(unique)


def exact_text(number: float) -> str:
    """The double exactly: ``repr`` (shortest round-trip text); a NaN by its bit pattern; a label or a
    ranking by its repr."""
    if not isinstance(number, float):
        return repr(number)
    if math.isnan(number):
        return f"NaN 0x{struct.unpack('<Q', struct.pack('<d', number))[0]:016x}"
    return repr(number)


def cell_texts(row: MatrixRow) -> list[str]:
    """Each cell's display text: ``Cell.text``, but the exact double (``repr``) for a value whose
    6-significant-digit text equals an adjacent column's while the doubles differ (0.9999999999 vs 1),
    and for every value in a cell that changed from the previous column (a changed 0.9999999999666667
    never reads "1")."""
    texts = [cell.text for cell in row.cells]
    exact = [False] * len(texts)
    for i in range(1, len(texts)):
        a, b = row.cells[i - 1], row.cells[i]
        if a.status == b.status == "value" and texts[i - 1] == texts[i] and not same_float(a.value, b.value):
            exact[i - 1] = exact[i] = True
        if b.status == "value" and row.changes[i - 1]:
            exact[i] = True
    return [exact_text(cell.value) if shown_exact else text
            for cell, text, shown_exact in zip(row.cells, texts, exact, strict=True)]


def _cell_label(cell: Cell, text: str) -> str:
    if cell.classification is None or cell.status != "value":
        return text
    return f"{text} {cell.classification}"


def _cell_md(row: MatrixRow, index: int, texts: list[str] | None = None) -> str:
    cell = row.cells[index]
    text = _cell_label(cell, (texts or cell_texts(row))[index])
    if index and row.changes[index - 1]:
        replayed = " †" if any(c.kind == "prompt_changed" for c in row.changes[index - 1]) else ""
        return f"**{_md(text)}** Δ{replayed}"
    return _md(text)


def _api_parts(cell: ApiCell) -> tuple[str, list[str]]:
    """The class, and the texts that follow it, of an API cell (plain text)."""
    parts = ["" if cell.exported else " (not exported by ragas.metrics)"]
    parts.append("reads: " + (", ".join(cell.fields_accepted) or "?"))
    if cell.fields_dropped:
        parts.append("dropped: " + ", ".join(cell.fields_dropped))
    if cell.required_columns:
        parts.append("declares: " + ", ".join(cell.required_columns))
    if cell.warnings:
        parts.append(f"{len(cell.warnings)} warning(s)")
    return str(cell.ragas_class), parts


def _api_md(cell: ApiCell | None) -> str:
    if cell is None:
        return "unavailable"
    if cell.missing:
        return "missing"
    name, parts = _api_parts(cell)
    return md_code(name) + "; ".join(_md(part) for part in parts)


def _api_text(cell: ApiCell | None) -> str:
    """``_api_md`` as plain text (for the HTML page, which escapes it itself)."""
    if cell is None or cell.missing:
        return _api_md(cell)
    name, parts = _api_parts(cell)
    return name + "; ".join(parts)


def drift_what(drift: Drift) -> str:
    """A drift's text, and, when a drift rule explains it, the rule and its reason."""
    return drift.text if drift.rule is None else f"{drift.text}; explained by drift rule {drift.rule}: {drift.reason}"


def _drift_tables_md(drifts: list[Drift], suite: dict) -> list[str]:
    out: list[str] = []
    for pair in dict.fromkeys((d.before, d.after) for d in drifts):
        out += [f"### {_md(pair[0])} → {_md(pair[1])}", "", "| cause | what | rows | cases |", "|---|---|---|---|"]
        for d in (d for d in drifts if (d.before, d.after) == pair):
            cases = cases_text([case for case, _ in d.rows], suite.get("cases") or 0)
            out.append(f"| {_md(d.kind)} | {_md(drift_what(d))} | {len(d.rows)} | {_md(cases)} |")
        out.append("")
    return out


def render_markdown(matrix: Matrix) -> str:
    labels = [c.label for c in matrix.columns]
    suite = matrix.suite
    out = [f"# Ragas version matrix: suite {_md(suite.get('name'))} ({_md(suite.get('cases'))} cases)", "",
           "Each cell: Ragas's value (6 significant digits; the exact double in a changed cell and where 6 "
           "digits would hide a difference from the next column; exact doubles always in matrix.json) and "
           "its classification "
           "against the reference. **Bold** with Δ: changed from the previous column. `harness: ...`: the "
           "harness could not drive the class there (its limit, not Ragas's). † " + PROMPT_NOTE + " (the "
           "prompt text the judge was shown changed from the previous column).", "",
           "## Versions", "", "| column | Ragas | Python | status | fields accepted | import warnings | network attempts |",
           "|---|---|---|---|---|---|---|"]
    telemetry = "(telemetry on, blocked)" if suite.get("telemetry") else "(telemetry off)"
    for c in matrix.columns:
        status = "ok" if c.available else f"unavailable: {c.error}"
        out.append(f"| {_md(c.label)} | {_md(c.version or '?')} | {_md(c.python or '?')} | {_md(status)} | "
                   f"{_md(', '.join(c.sample_fields) or '—')} | {len(c.import_warnings)} | "
                   f"{c.network_attempts} {telemetry} |")
    ragas = [d for d in matrix.drifts if d.by == "ragas"]
    harness = [d for d in matrix.drifts if d.by == "harness"]
    out += ["", "## Drifts between adjacent versions", ""]
    if not ragas:
        out.append("No Ragas change between adjacent versions.")
    out += _drift_tables_md(ragas, suite)
    if harness:
        out += ["", "## Not compared: the harness's limits", "",
                "Cells the harness could not drive in one of two adjacent versions. These are limits of the "
                "harness (its scripted judge or its own code), not Ragas drift.", ""]
        out += _drift_tables_md(harness, suite)
    out += ["", "## Matrix", "", "| case | metric | target | reference | " + " | ".join(map(_md, labels)) + " |",
            "|---|---|---|---|" + "---|" * len(labels)]
    for row in matrix.rows:
        texts = cell_texts(row)
        out.append(f"| {_md(row.case_id)} | {_md(row.metric)} | {_md(row.target)} | {_md(row.reference)} | "
                   + " | ".join(_cell_md(row, i, texts) for i in range(len(labels))) + " |")
    out += ["", "## API drift", "", "Per target and version: where the class comes from, the SingleTurnSample "
            "fields it was given and accepted, those the version dropped, the columns the class declares it "
            "reads, and warnings raised while scoring.", "",
            "| target | " + " | ".join(map(_md, labels)) + " |", "|---|" + "---|" * len(labels)]
    for target, cells in matrix.api.items():
        out.append(f"| {_md(target)} | " + " | ".join(_api_md(cell) for cell in cells) + " |")
    out += ["", "### Warnings seen", ""]
    any_warning = False
    for index, c in enumerate(matrix.columns):
        texts = list(c.import_warnings)
        for cells in matrix.api.values():
            cell = cells[index]
            for text in (cell.warnings if cell else ()):
                if text not in texts:
                    texts.append(text)
        if texts:
            any_warning = True
            out.append(f"- **{_md(c.label)}**")
            out += [f"  - {_md(text)}" for text in texts]
    if not any_warning:
        out.append("None.")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- HTML

_COLORS = {
    "identical": "#c8e6c9", "epsilon": "#dcedc8", "rounding": "#f0f4c3", "undefined_nan": "#fff9c4",
    "empty_as_zero": "#ffe0b2", "dedup": "#e1bee7", "coercion": "#d1c4e9", "variant": "#b3e5fc", "divergence": "#ffcdd2",
    "error": "#ef9a9a", "unavailable": "#e0e0e0", "absent": "#f5f5f5",
    # neutral: not scored, and not a Ragas error
    "harness": "#eceff1", "missing": "#fafafa",
}
_LEGEND_EXTRA = {"unavailable": "unavailable", "harness": "harness: could not drive", "missing": "missing class"}
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em;color:#212121}
table{border-collapse:collapse;font-size:13px;margin-bottom:1.5em}
th,td{border:1px solid #bdbdbd;padding:3px 6px;vertical-align:top}
th{background:#eeeeee;position:sticky;top:0}
td.v{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.changed{outline:3px solid #d32f2f;outline-offset:-3px;font-weight:bold}
span.c{display:block;font-size:11px;color:#424242;font-weight:normal}
span.why{display:block;font-size:11px;color:#b71c1c;font-weight:normal;white-space:normal;max-width:22em}
.legend span{display:inline-block;padding:2px 6px;margin:2px;border:1px solid #bdbdbd}
code{font-size:12px}
td.k-harness,td.k-missing{color:#546e7a;font-style:italic}
.legend span.changed{outline:3px solid #d32f2f;outline-offset:-3px}
""" + "".join(f"td.k-{name}{{background:{color}}}\n.legend span.k-{name}{{background:{color}}}\n"
             for name, color in _COLORS.items())


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell_kind(cell: Cell) -> str:
    """The colour class: the classification, but neutral for a cell that was not scored."""
    if cell.harness_limit:
        return "harness"
    if cell.not_run == MISSING_CLASS:
        return "missing"
    return cell.classification or cell.status


def _cell_html(row: MatrixRow, index: int, texts: list[str] | None = None) -> str:
    cell = row.cells[index]
    kind = _cell_kind(cell)
    causes = row.changes[index - 1] if index else ()
    classes = f"v k-{kind}" + (" changed" if causes else "")
    title = cell.explanation or cell.error_message or ""
    if cell.harness_limit and cell.error_message:
        title = f"the harness could not drive this class: {cell.error_type}: {cell.error_message}"
    body = f"{_e((texts or cell_texts(row))[index])}"
    if cell.classification and cell.status == "value":
        body += f'<span class="c">{_e(cell.classification)}</span>'
    if causes:
        body += "".join(f'<span class="why">{_e(c.kind)}: {_e(c.text)}</span>' for c in causes)
    return f'<td class="{classes}" title="{_e(title)}">{body}</td>'


def _drift_table_html(drifts: list[Drift], suite: dict) -> list[str]:
    parts = ["<table><tr><th>from → to</th><th>cause</th><th>what</th><th>cases</th></tr>"]
    for d in drifts:
        cases = cases_text([case for case, _ in d.rows], suite.get("cases") or 0)
        parts.append(f"<tr><td>{_e(d.before)} → {_e(d.after)}</td><td>{_e(d.kind)}</td><td>{_e(drift_what(d))}</td>"
                     f"<td>{_e(cases)} ({len(d.rows)} rows)</td></tr>")
    parts.append("</table>")
    return parts


def render_html(matrix: Matrix) -> str:
    labels = [c.label for c in matrix.columns]
    suite = matrix.suite
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             policy_meta(styles=[_CSS]),  # nothing fetched, no script, the <style> by its hash
             f"<title>Ragas version matrix: {_e(suite.get('name'))}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>Ragas version matrix: suite {_e(suite.get('name'))} ({_e(suite.get('cases'))} cases)</h1>",
             '<p class="legend">' + "".join(f'<span class="k-{k}">{_e(k)}</span>' for k in CLASSIFICATIONS)
             + "".join(f'<span class="k-{k}">{_e(text)}</span>' for k, text in _LEGEND_EXTRA.items()),
             ' &nbsp; <span class="changed">changed from the previous column</span></p>',
             "<h2>Versions</h2><table><tr><th>column</th><th>Ragas</th><th>Python</th><th>status</th><th>fields accepted</th>"
             "<th>network attempts</th></tr>"]
    telemetry = "(telemetry on, blocked)" if suite.get("telemetry") else "(telemetry off)"
    for c in matrix.columns:
        status = "ok" if c.available else f"unavailable: {c.error}"
        parts.append(f"<tr><td>{_e(c.label)}</td><td>{_e(c.version or '?')}</td><td>{_e(c.python or '?')}</td>"
                     f"<td>{_e(status)}</td>"
                     f"<td>{_e(', '.join(c.sample_fields) or '—')}</td><td>{c.network_attempts} {_e(telemetry)}</td></tr>")
    parts.append("</table><h2>Drifts between adjacent versions</h2>")
    ragas = [d for d in matrix.drifts if d.by == "ragas"]
    harness = [d for d in matrix.drifts if d.by == "harness"]
    parts += _drift_table_html(ragas, suite) if ragas else ["<p>No Ragas change between adjacent versions.</p>"]
    if harness:
        parts.append("<h2>Not compared: the harness's limits</h2><p>Cells the harness could not drive in one of "
                     "two adjacent versions: limits of the harness, not Ragas drift.</p>")
        parts += _drift_table_html(harness, suite)
    parts.append("<h2>Matrix</h2><table><tr><th>case</th><th>metric</th><th>target</th><th>reference</th>"
                 + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>")
    for row in matrix.rows:
        texts = cell_texts(row)
        parts.append(f"<tr><td>{_e(row.case_id)}</td><td>{_e(row.metric)}</td><td>{_e(row.target)}</td>"
                     f"<td>{_e(row.reference)}</td>" + "".join(_cell_html(row, i, texts) for i in range(len(labels)))
                     + "</tr>")
    parts.append("</table><h2>API drift</h2><table><tr><th>target</th>"
                 + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>")
    for target, cells in matrix.api.items():
        parts.append(f"<tr><td>{_e(target)}</td>" + "".join(f"<td>{_e(_api_text(cell))}</td>"
                                                            for cell in cells) + "</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


def render_reports(matrix: Matrix) -> dict[str, str]:
    return {"matrix.json": render_json(matrix), "matrix.md": render_markdown(matrix),
            "matrix.html": render_html(matrix)}


def write_matrix_reports(matrix: Matrix, out: Path, *, golden: bool = False) -> list[Path]:
    """The matrix reports as one atomic set in ``out``; ``golden``: as plain files (the committed ones)."""
    if golden:
        return write_golden_files(out, render_reports(matrix))
    return write_reports_atomically(out, render_reports(matrix))
