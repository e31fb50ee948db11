"""``report.html``: the audit on one self-contained page for a reviewer (no network, no CDN).

Verdict and summary cards first, then the first ranked findings (``Audit.headlines``; the rest fold
under them), an inline SVG chart of Ragas's ``evaluate()`` mean against the explicit-policy mean per
metric (the metrics with a mean gap first, each on its own range), the classification counts per
metric (one stacked bar each), the judge audit pooled over all claims (when cases have one), and
every row in a table that sorts (click a header) and filters (metric, target, category,
classification, free text) with exact values. At a 1,400 px wide window
the row table needs no sideways scrolling: the case, then Ragas's value, the reference, the
classification and the reason (long ones fold), in a fixed layout whose long texts wrap; the case
column stays in view if a narrower window scrolls. The rows are
rendered as HTML (the page reads without JavaScript); the small inline script only filters and sorts.
A Content-Security-Policy forbids every request and allows only the page's own inline script and style,
by their SHA-256 (``ragas_compat.report.csp``). Deterministic: no timestamps, no machine paths.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Iterator
from itertools import chain
from typing import Any

from ragas_compat.compare.audit import Audit
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.compare.headlines import Headline, gap_span, mean_gap_of, mean_gap_order
from ragas_compat.report.csp import policy_meta
from ragas_compat.report.text import judge_audit_summary_of, ragas_text, reference_texts
from ragas_compat.values import NON_NUMERIC, RagasError
from ragas_compat.vocabulary import Classification

COLORS: dict[str, str] = {
    "identical": "#4c9a2a", "epsilon": "#8fbf5a", "undefined_nan": "#7a8fa6", "empty_as_zero": "#e0a030",
    "dedup": "#b07cc6", "coercion": "#c98bb9", "rounding": "#a3c4dc", "variant": "#5bc0de", "divergence": "#d9534f", "error": "#8b1e1e",
}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
main{max-width:1280px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d5dae0;padding-bottom:4px}
.verdict{font-size:16px;font-weight:600;padding:10px 14px;border-radius:6px;margin:12px 0}
.ok{background:#e3f4dc;border:1px solid #9ccc86}.bad{background:#fbe3e1;border:1px solid #e09a94}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.card{background:#fff;border:1px solid #d5dae0;border-radius:6px;padding:8px 14px;min-width:110px}
.card b{display:block;font-size:22px}.card span{color:#5a6570;font-size:12px}
ol.findings li{margin:0 0 10px}.example{color:#4a5560;font-size:13px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #d5dae0;padding:3px 6px;vertical-align:top;text-align:left}
#rows{table-layout:fixed;width:100%}#rows td{overflow-wrap:anywhere;word-break:break-word}
#rows th:first-child,#rows td:first-child{position:sticky;left:0;z-index:1;background:#fff}#rows th:first-child{z-index:2;background:#eef1f4}
#rows details summary{cursor:pointer}#rows .sub{display:block;color:#6a7580;font-size:12px}
.rows-scroll{overflow-x:auto;max-width:100%}details.more{margin:4px 0 0}details.more summary{cursor:pointer;color:#3a5f8f}
#means-chart,#means-chart-equal{max-width:100%;height:auto}
th{background:#eef1f4;position:sticky;top:0}th.sortable{cursor:pointer;user-select:none}
th.sortable::after{content:" \\2195";color:#99a}td.num{text-align:right}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:end;margin:8px 0}
.filters label{font-size:12px;color:#4a5560;display:flex;flex-direction:column}
.badge{display:inline-block;border-radius:3px;padding:0 5px;color:#fff;font-size:12px;white-space:nowrap}
.why{font-size:12.5px}.muted{color:#6a7580}
.scroll{overflow-x:auto;max-width:100%}
.legend span{margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
"""

_SCRIPT = """
(function(){
  var table=document.getElementById('rows');
  var body=table.tBodies[0];
  var all=Array.prototype.slice.call(body.rows);
  var keys=['metric','target','category','classification'];
  var selects={};
  keys.forEach(function(key){
    var select=document.getElementById('filter-'+key);
    selects[key]=select;
    var values={};
    all.forEach(function(row){values[row.dataset[key]]=true;});
    Object.keys(values).sort().forEach(function(value){
      var option=document.createElement('option');option.value=value;option.textContent=value;select.appendChild(option);
    });
    select.addEventListener('change',apply);
  });
  var search=document.getElementById('filter-text');
  search.addEventListener('input',apply);
  function apply(){
    var text=search.value.toLowerCase();var shown=0;
    all.forEach(function(row){
      var ok=keys.every(function(key){var v=selects[key].value;return !v||row.dataset[key]===v;});
      if(ok&&text){ok=row.textContent.toLowerCase().indexOf(text)>=0;}
      row.hidden=!ok;if(ok){shown++;}
    });
    document.getElementById('shown').textContent=shown+' of '+all.length+' rows shown';
  }
  var direction={};
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(cell,index){
    if(!cell.classList.contains('sortable')){return;}
    cell.addEventListener('click',function(){
      var numeric=cell.dataset.type==='number';
      direction[index]=-(direction[index]||-1);
      var sign=direction[index];
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.cells[index].dataset.sort||a.cells[index].textContent;
        var y=b.cells[index].dataset.sort||b.cells[index].textContent;
        if(numeric){
          var p=parseFloat(x),q=parseFloat(y);
          if(isNaN(p)&&isNaN(q)){return 0;}if(isNaN(p)){return 1;}if(isNaN(q)){return -1;}
          return (p-q)*sign;
        }
        return x<y?-sign:(x>y?sign:0);
      });
      rows.forEach(function(row){body.appendChild(row);});
    });
  });
  apply();
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _badge(name: str) -> str:
    return f'<span class="badge" style="background:{COLORS.get(name, "#666")}">{_e(name)}</span>'


def _sort_key(value: Any) -> str:
    """A numeric sort key for a Ragas or reference value ("" when it has none: NaN, errors, undefined)."""
    if isinstance(value, float) and not math.isnan(value) and not math.isinf(value):
        return repr(value)
    return ""


def _cards(audit: Audit) -> list[str]:
    v = audit.verdict
    ragas = audit.provenance.get("ragas_version") or (audit.provenance.get("ragas") or {}).get("version") or "?"
    by_class = Counter(r.classification.name for r in audit.rows)
    harness_errors = sum(1 for r in audit.rows if isinstance(r.ragas_value, RagasError) and r.ragas_value.raised_by_harness)
    ragas_errors = by_class.get("error", 0) - harness_errors  # every row with an error value is classified error
    cards = [("rows", v.rows), ("identical", v.identical), ("explained", v.explained),
             ("unexplained", v.unexplained), ("unexplained errors", v.errors),
             ("Ragas errors (all)", ragas_errors), ("harness errors (all)", harness_errors),
             ("cases", len(audit.suite.cases)),
             ("Ragas", ragas), ("ragas-compat", audit.provenance.get("harness_version", "?"))]
    return ['<div class="cards">'] + [f'<div class="card"><b>{_e(value)}</b><span>{_e(label)}</span></div>'
                                      for label, value in cards] + ["</div>"]


FINDINGS_SHOWN = 10  # findings shown before the evaluate() mean chart; the rest fold under them


def _finding(finding: Headline) -> str:
    e = finding.example
    where = ", ".join(x for x in (f"case {e.case_id}" if e.case_id else "", e.metric or "", e.target or "") if x)
    by = f' <span class="muted">Explained by {_e(finding.explained_by)}.</span>' if finding.explained_by else ""
    return (f'<li data-kind="{_e(finding.kind)}">{_e(finding.sentence)}{by}<div class="example">Example: '
            f'<span class="mono">{_e(where)}</span>: Ragas <span class="mono">{_e(e.ragas)}</span>; reference '
            f'<span class="mono">{_e(e.reference)}</span></div></li>')


def _chart_svg(element_id: str, metrics: list[tuple[str, list[tuple[str, float | None, str, str]], tuple[float, float, bool]]]) -> list[str]:
    """One block per metric: a bar per distinct Ragas evaluate() mean and one for the explicit-policy mean,
    each on the metric's own range (``gap_span``), with the values written beside the bars."""
    label_w, bar_w, row_h, text_w = 250, 420, 14, 460
    height = 8 + sum(18 + row_h * len(bars) + 6 for _, bars, _ in metrics)
    out = [f'<svg id="{element_id}" role="img" aria-label="Ragas evaluate() mean against the explicit-policy mean '
           f'per metric" xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + text_w}" height="{height}" '
           f'viewBox="0 0 {label_w + bar_w + text_w} {height}" font-family="system-ui,sans-serif" font-size="12">']
    y = 4
    for metric, bars, (low, high, fixed) in metrics:
        scale = f"[{low:g}, {high:g}]" if fixed else f"[{low:g}, {high:g}] (values' span)"
        out.append(f'<text x="0" y="{y + 12}" font-weight="bold">{_e(metric)}</text>'
                   f'<text x="{label_w}" y="{y + 12}" fill="#6a7580">{_e(scale)}</text>')
        y += 18
        for label, value, color, note in bars:
            out.append(f'<text x="12" y="{y + 11}">{_e(label)}</text>')
            if value is None or not math.isfinite(value):
                out.append(f'<text x="{label_w}" y="{y + 11}" fill="#6a7580">{"undefined" if value is None else "NaN"}'
                           f' <tspan>{_e(note)}</tspan></text>')
            else:
                share = min(1.0, max(0.0, (value - low) / (high - low)))
                width = share * bar_w
                out.append(f'<rect x="{label_w}" y="{y + 2}" width="{width:.1f}" height="{row_h - 4}" fill="{color}">'
                           f'<title>{_e(label)}: {value!r}</title></rect>')
                out.append(f'<text x="{label_w + bar_w + 8}" y="{y + 11}" class="mono">{value:.3f} '
                           f'<tspan fill="#6a7580">{_e(note)}</tspan></text>')
            y += row_h
        y += 6
    return out + ["</svg>"]


def means_chart(audit: Audit) -> list[str]:
    """Per metric, each distinct Ragas evaluate() mean and the explicit-policy mean, on the metric's range:
    first the metrics with a mean-gap finding, in the findings' order (``mean_gap_order``: the metrics one
    finding names together stay together), then, folded, the metrics whose two means agree."""
    level = audit.dataset_level
    if level is None or not level.targets:
        return ['<p class="muted">No dataset-level run (evaluate() was not run).</p>']
    order = mean_gap_order(audit)
    gaps, equal = [], []
    for metric, aggs in level.by_metric().items():
        policy = aggs[0].policy
        means: dict[str, list[str]] = {}
        for agg in aggs:
            means.setdefault(repr(agg.ragas_mean), []).append(agg.target.split(":", 1)[-1])
        bars: list[tuple[str, float | None, str, str]] = [
            ("Ragas evaluate()", float(value), "#e0a030", f"({', '.join(targets)})") for value, targets in means.items()]
        exact = "" if policy.mean is None else (str(policy.mean) if len(str(policy.mean)) <= 21 else "exact in report.json")
        bars.append((f"explicit policy ({policy.defined} of {policy.cases} rows)",
                     None if policy.mean is None else float(policy.mean), "#4a78b0", f"= {exact}" if exact else ""))
        found = [g for g in map(mean_gap_of, aggs) if g is not None]
        if found:
            gaps.append((order.get(metric, (len(audit.headlines), 0)), metric, bars, gap_span(found[0].agg)))
        else:
            span = gap_span(aggs[0]) if policy.mean is not None and not math.isnan(aggs[0].ragas_mean) else (0.0, 1.0, True)
            equal.append((metric, bars, span))
    gaps.sort(key=lambda item: item[0])  # stable: labels no finding orders keep the registry order, last
    legend = ('<div class="legend"><span><i style="background:#e0a030"></i>Ragas evaluate() mean</span><span><i '
              'style="background:#4a78b0"></i>explicit policy: exact mean over defined rows</span><span>bars on each '
              "metric's range</span></div>")
    out = [legend]
    if gaps:
        out += _chart_svg("means-chart", [(metric, bars, span) for _, metric, bars, span in gaps])
    else:
        out.append('<p id="means-chart" class="muted">Every evaluate() mean equals the explicit policy\'s.</p>')
    if equal:
        out += [f'<details class="more"><summary>{len(equal)} metric{"" if len(equal) == 1 else "s"} whose '
                "evaluate() mean equals the explicit policy's (within a guard constant or rounding)</summary>"]
        out += _chart_svg("means-chart-equal", equal) + ["</details>"]
    return out


def counts_chart(audit: Audit) -> list[str]:
    """One stacked bar of classification counts per metric, with the counts in a table beside it."""
    counts = audit.counts(lambda r: r.spec.name)
    used = [c for c in CLASSIFICATIONS if any(r.classification.name == c for r in audit.rows)]
    lines = ['<div class="scroll"><table id="counts"><thead><tr><th>metric</th><th>rows</th><th>classifications</th>'
             + "".join(f"<th>{_e(name)}</th>" for name in used) + "</tr></thead><tbody>"]
    for metric, counter in sorted(counts.items()):
        total = sum(counter.values())
        x = 0.0
        rects = []
        for name in used:
            n = counter.get(name, 0)
            if not n:
                continue
            width = n / total * 300
            rects.append(f'<rect x="{x:.1f}" y="0" width="{width:.1f}" height="14" fill="{COLORS[name]}">'
                         f'<title>{_e(name)}: {n}</title></rect>')
            x += width
        svg = f'<svg width="300" height="14" xmlns="http://www.w3.org/2000/svg">{"".join(rects)}</svg>'
        lines.append(f"<tr><td>{_e(metric)}</td><td class=\"num\">{total}</td><td>{svg}</td>"
                     + "".join(f'<td class="num">{counter.get(name, 0) or ""}</td>' for name in used) + "</tr>")
    lines.append("</tbody></table></div>")
    lines.append('<div class="legend">' + "".join(f'<span><i style="background:{COLORS[n]}"></i>{_e(n)}</span>'
                                                  for n in used) + "</div>")
    return lines


REASON_SHOWN = 100  # characters of a row's reason shown before it folds (the rest on a click)


def _reason_cell(reason: str) -> str:
    if len(reason) <= REASON_SHOWN:
        return _e(reason)
    head, sep, _ = reason.partition(". ")
    summary = head + "." if sep and len(head) < REASON_SHOWN else reason[:REASON_SHOWN].rsplit(" ", 1)[0] + " ..."
    return f"<details><summary>{_e(summary)}</summary>{_e(reason)}</details>"


# (header, sort type, width): the case first (it stays in view when the table scrolls sideways), then what
# a reviewer compares: Ragas's value, the reference, the classification and why; then where the row is from.
ROW_COLUMNS = (("case", "text", 13), ("Ragas value (repr)", "number", 11), ("reference (exact, float)", "number", 12),
               ("classification", "text", 9), ("why", "text", 25), ("explained by", "text", 9),
               ("metric", "text", 8), ("Ragas target", "text", 8), ("category", "text", 5))


def rows_table(audit: Audit) -> Iterator[str]:
    """The filterable, sortable table of every row, one ``<tr>`` per row as it is written. At a 1,400 px
    wide window every column is in view (fixed layout, long texts wrap, long reasons fold)."""
    yield '<div class="filters">'
    for key in ("metric", "target", "category", "classification"):
        yield f'<label>{_e(key)}<select id="filter-{key}"><option value="">all</option></select></label>'
    yield ('<label>text<input id="filter-text" type="search" placeholder="case id, value, reason"></label>'
           '<span id="shown" class="muted"></span></div>')
    yield ('<div class="rows-scroll"><table id="rows"><colgroup>'
           + "".join(f'<col style="width:{width}%">' for _, _, width in ROW_COLUMNS) + "</colgroup><thead><tr>"
           + "".join(f'<th class="sortable" data-type="{kind}">{_e(name)}</th>' for name, kind, _ in ROW_COLUMNS)
           + "</tr></thead><tbody>")
    for r in audit.rows:
        exact, as_float = reference_texts(r)
        reference_value = None if r.reference.value is None or r.reference.refused \
            or isinstance(r.reference.value, NON_NUMERIC) else float(r.reference.value)
        float_line = f'<span class="sub">{_e(as_float)}</span>' if as_float and as_float not in ("—", exact) else ""
        name = r.classification.name
        mark = _badge(name) + ("" if not r.unexpected else f' <b>expected {_e(r.expected.classification)}</b>')
        by = r.expected.label or ("—" if name == "identical" else "nothing (unexplained)")
        reason = f"{r.classification.explanation}" + (f" Expected because: {r.expected.reason}"
                                                      if r.expected.reason and not r.unexpected else "")
        yield (
            f'<tr data-metric="{_e(r.spec.name)}" data-target="{_e(r.target)}" data-category="{_e(r.case.category)}" '
            f'data-classification="{_e(name)}">'
            f'<td data-column="case">{_e(r.case.id)}</td>'
            f'<td class="mono num" data-column="ragas" data-sort="{_sort_key(r.ragas_value)}">{_e(ragas_text(r))}</td>'
            f'<td class="mono" data-column="reference" data-sort="{_sort_key(reference_value)}">{_e(exact)}{float_line}'
            f'</td><td data-column="classification" data-sort="{_e(name)}">{mark}</td>'
            f'<td class="why" data-column="why">{_reason_cell(reason)}</td><td>{_e(by)}</td>'
            f'<td>{_e(r.spec.name)}</td><td class="mono">{_e(r.target)}</td><td>{_e(r.case.category)}</td></tr>')
    yield "</tbody></table></div>"


def judge_audit_section(audit: Audit) -> list[str]:
    """The judge audit pooled over every claim of every case, when the run has one (escaped)."""
    summary = judge_audit_summary_of(audit)
    if summary is None:
        return []
    rates = [rate.text() for rate in summary.rates()]
    parts = ['<h2 id="judge-audit">Judge audit over all claims</h2>', f"<p>{_e(summary.counts_text())}.</p>", '<ul class="mono">']
    parts += [f"<li>{_e(rate)}</li>" for rate in rates] + ["</ul>"]
    if summary.refused:
        parts.append(f'<p class="muted">Not counted (the reference refused their audit): '
                     f'{_e(", ".join(summary.refused))}</p>')
    return parts


def render_html(audit: Audit) -> str:
    """``report.html`` as one string (``html_chunks`` joined)."""
    return "".join(html_chunks(audit))


def html_chunks(audit: Audit) -> Iterator[str]:
    """``report.html``, one self-contained page, written as it is made (one line per part)."""
    v = audit.verdict
    suite = audit.suite.name
    ragas = audit.provenance.get("ragas", {}) or {}
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             # the inline script and <style> by their hashes; style attributes (badge colours, column widths)
             # through style-src-attr only (ragas_compat.report.csp)
             policy_meta(scripts=[_SCRIPT], styles=[_CSS], style_attributes=True, data_images=True),
             '<link rel="icon" href="data:,">',
             f"<title>Ragas compatibility audit: {_e(suite)}</title><style>{_CSS}</style></head><body><main>",
             f"<h1>Ragas compatibility audit: suite <code>{_e(suite)}</code></h1>",
             f'<p class="muted">Ragas {_e(ragas.get("version") or audit.provenance.get("ragas_version") or "?")} '
             f'({_e(ragas.get("kind", "?"))}); pin status: {_e(ragas.get("pin_status", "unknown"))}</p>',
             f'<div id="verdict" class="verdict {"ok" if v.ok else "bad"}">{_e(v.line())}</div>',
             *(f'<p class="muted">{_e(note)}</p>' for note in v.notes())]
    parts += _cards(audit)
    parts += ['<h2 id="findings">Findings</h2>',
              '<p class="muted">Most consequential first; each with one example row.</p><ol class="findings">']
    first, rest = audit.headlines[:FINDINGS_SHOWN], audit.headlines[FINDINGS_SHOWN:]
    parts += [_finding(f) for f in first] + ["</ol>"]
    if rest:
        parts += [f'<details class="more"><summary>{len(rest)} more findings</summary>'
                  f'<ol class="findings" start="{len(first) + 1}">'] + [_finding(f) for f in rest] + ["</ol></details>"]
    parts += ['<h2 id="means">Dataset level: Ragas evaluate() mean vs explicit-policy mean</h2>']
    parts += means_chart(audit)
    parts += ['<h2 id="classifications">Classifications per metric</h2>']
    parts += counts_chart(audit)
    parts += judge_audit_section(audit)
    parts += ['<h2 id="causes">What each classification means</h2><dl>']
    for name in CLASSIFICATIONS:
        if any(r.classification.name == name for r in audit.rows):
            parts.append(f"<dt>{_badge(name)}</dt><dd>{_e(Classification(name).cause)}</dd>")
    parts += ["</dl>", '<h2 id="rows-title">Every row</h2>']
    yield "\n".join(parts)
    for line in chain(rows_table(audit), [f"<script>{_SCRIPT}</script>", "</main></body></html>"]):
        yield "\n" + line
    yield "\n"
