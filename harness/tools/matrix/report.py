"""Render a drift matrix as matrix.json, matrix.md and matrix.html (self-contained), written atomically.

The three files are deterministic for the same columns: no timestamps, no absolute paths, no
environment build state (built vs reused) and no timings - those go to the console only.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from harness.compare.classify import CLASSIFICATIONS
from harness.report.atomic import write_reports_atomically
from harness.tools.matrix.drift import ApiCell, Cell, Matrix, MatrixRow
from harness.values import encode_float

MATRIX_FORMAT = 1
REPORT_FILES = ("matrix.json", "matrix.md", "matrix.html")


# ---------------------------------------------------------------- JSON

def _value_json(cell: Cell) -> Any:
    return encode_float(cell.value) if cell.status == "value" else None


def _cell_json(cell: Cell, causes: tuple) -> dict:
    out: dict[str, Any] = {"status": cell.status, "text": cell.text}
    if cell.status == "value":
        out["value"] = _value_json(cell)
    if cell.status == "error":
        out["error"] = {"type": cell.error_type, "message": cell.error_message}
    if cell.status == "unavailable":
        out["reason"] = cell.error_message
    if cell.classification is not None:
        out["classification"] = cell.classification
        out["explanation"] = cell.explanation
    if cell.ragas_class:
        out["ragas_class"] = cell.ragas_class
    if cell.fields_dropped:
        out["fields_dropped"] = list(cell.fields_dropped)
    if cell.prompts is not None:
        out["prompts"] = cell.prompts
    out["changed"] = bool(causes)
    out["causes"] = [{"kind": c.kind, "text": c.text} for c in causes]
    return out


def _api_json(cell: ApiCell | None) -> dict | None:
    if cell is None:
        return None
    return {"ragas_class": cell.ragas_class, "exported_from_ragas_metrics": cell.exported, "missing": cell.missing,
            "fields_accepted": list(cell.fields_accepted), "fields_dropped": list(cell.fields_dropped),
            "required_columns": list(cell.required_columns), "warnings": list(cell.warnings)}


def matrix_to_json(matrix: Matrix) -> dict:
    return {
        "matrix_format": MATRIX_FORMAT,
        "suite": matrix.suite,
        "columns": [{"label": c.label, "ragas_version": c.version, "kind": c.kind, "available": c.available,
                     "error": c.error, "sample_fields": list(c.sample_fields),
                     "import_warnings": list(c.import_warnings), "network_attempts": c.network_attempts}
                    for c in matrix.columns],
        "drifts": [{"from": d.before, "to": d.after, "kind": d.kind, "cause": d.text,
                    "rows": [{"case_id": case, "target": target} for case, target in d.rows]}
                   for d in matrix.drifts],
        "rows": [{"case_id": r.case_id, "category": r.category, "metric": r.metric, "target": r.target,
                  "reference": r.reference,
                  "cells": {c.label: _cell_json(cell, () if i == 0 else r.changes[i - 1])
                            for i, (c, cell) in enumerate(zip(matrix.columns, r.cells, strict=True))}}
                 for r in matrix.rows],
        "api": {target: {c.label: _api_json(cell) for c, cell in zip(matrix.columns, cells, strict=True)}
                for target, cells in matrix.api.items()},
    }


def render_json(matrix: Matrix) -> str:
    return json.dumps(matrix_to_json(matrix), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# ---------------------------------------------------------------- Markdown

def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def cases_text(cases: list[str], total: int) -> str:
    """The case ids of a drift, or "all N cases" when every case of the suite shows it."""
    unique = sorted(dict.fromkeys(cases))
    return f"all {total} cases" if total and len(unique) == total else ", ".join(unique)


def _cell_label(cell: Cell) -> str:
    if cell.classification is None or cell.status != "value":
        return cell.text
    return f"{cell.text} {cell.classification}"


def _cell_md(row: MatrixRow, index: int) -> str:
    cell = row.cells[index]
    text = _cell_label(cell)
    if index and row.changes[index - 1]:
        return f"**{_md(text)}** Δ"
    return _md(text)


def _api_md(cell: ApiCell | None) -> str:
    if cell is None:
        return "unavailable"
    if cell.missing:
        return "missing"
    parts = [f"`{cell.ragas_class}`" + ("" if cell.exported else " (not exported by ragas.metrics)")]
    parts.append("reads: " + (", ".join(cell.fields_accepted) or "?"))
    if cell.fields_dropped:
        parts.append("dropped: " + ", ".join(cell.fields_dropped))
    if cell.required_columns:
        parts.append("declares: " + ", ".join(cell.required_columns))
    if cell.warnings:
        parts.append(f"{len(cell.warnings)} warning(s)")
    return _md("; ".join(parts))


def render_markdown(matrix: Matrix) -> str:
    labels = [c.label for c in matrix.columns]
    suite = matrix.suite
    out = [f"# Ragas version matrix: suite {suite.get('name')} ({suite.get('cases')} cases)", "",
           "Each cell: Ragas's value (6 significant digits; exact doubles in matrix.json) and its classification "
           "against the reference. **Bold** with Δ: changed from the previous column.", "",
           "## Versions", "", "| column | Ragas | status | fields accepted | import warnings |",
           "|---|---|---|---|---|"]
    for c in matrix.columns:
        status = "ok" if c.available else f"unavailable: {c.error}"
        out.append(f"| {_md(c.label)} | {_md(c.version or '?')} | {_md(status)} | "
                   f"{_md(', '.join(c.sample_fields) or '—')} | {len(c.import_warnings)} |")
    out += ["", "## Drifts between adjacent versions", ""]
    if not matrix.drifts:
        out.append("No cell changes between adjacent versions.")
    for pair in dict.fromkeys((d.before, d.after) for d in matrix.drifts):
        out += [f"### {pair[0]} → {pair[1]}", "", "| cause | what | rows | cases |", "|---|---|---|---|"]
        for d in (d for d in matrix.drifts if (d.before, d.after) == pair):
            cases = cases_text([case for case, _ in d.rows], suite.get("cases") or 0)
            out.append(f"| {d.kind} | {_md(d.text)} | {len(d.rows)} | {_md(cases)} |")
        out.append("")
    out += ["## Matrix", "", "| case | metric | target | reference | " + " | ".join(map(_md, labels)) + " |",
            "|---|---|---|---|" + "---|" * len(labels)]
    for row in matrix.rows:
        out.append(f"| {_md(row.case_id)} | {row.metric} | {_md(row.target)} | {_md(row.reference)} | "
                   + " | ".join(_cell_md(row, i) for i in range(len(labels))) + " |")
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
}
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
""" + "".join(f"td.k-{name}{{background:{color}}}\n" for name, color in _COLORS.items())


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell_html(row: MatrixRow, index: int) -> str:
    cell = row.cells[index]
    kind = cell.classification or cell.status
    causes = row.changes[index - 1] if index else ()
    classes = f"v k-{kind}" + (" changed" if causes else "")
    title = cell.explanation or cell.error_message or ""
    body = f"{_e(cell.text)}"
    if cell.classification and cell.status == "value":
        body += f'<span class="c">{_e(cell.classification)}</span>'
    if causes:
        body += "".join(f'<span class="why">{_e(c.kind)}: {_e(c.text)}</span>' for c in causes)
    return f'<td class="{classes}" title="{_e(title)}">{body}</td>'


def render_html(matrix: Matrix) -> str:
    labels = [c.label for c in matrix.columns]
    suite = matrix.suite
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>Ragas version matrix: {_e(suite.get('name'))}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>Ragas version matrix: suite {_e(suite.get('name'))} ({_e(suite.get('cases'))} cases)</h1>",
             '<p class="legend">' + "".join(f'<span style="background:{_COLORS[k]}">{_e(k)}</span>'
                                             for k in (*CLASSIFICATIONS, "unavailable")),
             ' &nbsp; <span style="outline:3px solid #d32f2f;outline-offset:-3px">changed from the previous column</span></p>',
             "<h2>Versions</h2><table><tr><th>column</th><th>Ragas</th><th>status</th><th>fields accepted</th></tr>"]
    for c in matrix.columns:
        status = "ok" if c.available else f"unavailable: {c.error}"
        parts.append(f"<tr><td>{_e(c.label)}</td><td>{_e(c.version or '?')}</td><td>{_e(status)}</td>"
                     f"<td>{_e(', '.join(c.sample_fields) or '—')}</td></tr>")
    parts.append("</table><h2>Drifts between adjacent versions</h2>")
    if matrix.drifts:
        parts.append("<table><tr><th>from → to</th><th>cause</th><th>what</th><th>cases</th></tr>")
        for d in matrix.drifts:
            cases = cases_text([case for case, _ in d.rows], suite.get("cases") or 0)
            parts.append(f"<tr><td>{_e(d.before)} → {_e(d.after)}</td><td>{_e(d.kind)}</td><td>{_e(d.text)}</td>"
                         f"<td>{_e(cases)} ({len(d.rows)} rows)</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No cell changes between adjacent versions.</p>")
    parts.append("<h2>Matrix</h2><table><tr><th>case</th><th>metric</th><th>target</th><th>reference</th>"
                 + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>")
    for row in matrix.rows:
        parts.append(f"<tr><td>{_e(row.case_id)}</td><td>{_e(row.metric)}</td><td>{_e(row.target)}</td>"
                     f"<td>{_e(row.reference)}</td>" + "".join(_cell_html(row, i) for i in range(len(labels)))
                     + "</tr>")
    parts.append("</table><h2>API drift</h2><table><tr><th>target</th>"
                 + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>")
    for target, cells in matrix.api.items():
        parts.append(f"<tr><td>{_e(target)}</td>" + "".join(f"<td>{_e(_api_md(cell)).replace('`', '')}</td>"
                                                            for cell in cells) + "</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


def render_reports(matrix: Matrix) -> dict[str, str]:
    return {"matrix.json": render_json(matrix), "matrix.md": render_markdown(matrix),
            "matrix.html": render_html(matrix)}


def write_matrix_reports(matrix: Matrix, out: Path) -> list[Path]:
    return write_reports_atomically(out, render_reports(matrix))
