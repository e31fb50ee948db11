"""The "dataset level" report section: Ragas's evaluate() mean next to the reference policy.

``dataset_level_markdown(audit)`` renders one table per metric with
the policy counts and both means, the sentence "Ragas's mean of X is over N of M cases; K were
dropped: …" per Ragas target, and the per-category breakdown. Deterministic: no timings.
"""

from __future__ import annotations

import math
from typing import Any

from ragas_compat.compare.audit import Audit
from ragas_compat.compare.dataset_level import (
    POLICY,
    PolicyCounts,
    TargetAggregate,
    by_category,
    sentence,
)
from ragas_compat.report.escape import md_text
from ragas_compat.report.markdown.table import markdown_table


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{md_text(reason)}: {n}" for reason, n in counts.items()) or "—"


def _exact_mean(policy: PolicyCounts) -> str:
    return "—" if policy.mean is None else f"{policy.mean} = {float(policy.mean)!r}"


def _float(value: float) -> str:
    return "NaN" if math.isnan(value) else repr(value)


def _ragas_counts(agg: TargetAggregate) -> tuple[str, str]:
    """(NaN returned by the metric, errors turned into NaN) among evaluate()'s dropped rows."""
    nan_rows = [r for r in agg.dropped_rows if r.evaluate_error is None]
    errors: dict[str, int] = {}
    for r in agg.dropped_rows:
        if r.evaluate_error is not None:
            errors[r.evaluate_error[0]] = errors.get(r.evaluate_error[0], 0) + 1
    return (f"NaN: {len(nan_rows)}" if nan_rows else "—"), _reasons(errors)


def _metric_tables(metric: str, aggs: list[TargetAggregate]) -> list[str]:
    policy = aggs[0].policy
    share = policy.dropped_share
    rows: list[list[Any]] = [[
        "reference policy", policy.cases, policy.defined, _reasons(policy.undefined), _reasons(policy.errors),
        f"{policy.dropped} ({share})" if share is not None else policy.dropped, _exact_mean(policy), "—"]]
    for agg in aggs:
        undefined, errors = _ragas_counts(agg)
        mark = agg.classification.name
        rows.append([f"Ragas `{agg.target}` evaluate()", len(agg.rows), len(agg.kept), undefined, errors,
                     len(agg.dropped_rows), _float(agg.ragas_mean), mark])
    lines = [f"### {metric}", ""]
    lines += markdown_table(["", "cases M", "defined / kept N", "undefined", "errors", "dropped K", "mean",
                     "classification"], rows)
    for agg in aggs:
        lines.append(f"- `{agg.target}`: {md_text(sentence(agg))}")
        recomputed = "bit-equal" if agg.mean_recomputed_exactly else f"NOT equal ({_float(agg.recomputed_mean)})"
        lines.append(f"  numpy nanmean of Ragas's own rows: {recomputed}; recomputed from the reference "
                     f"under the per-row semantics: {_float(agg.explained_mean)}; "
                     f"{agg.classification.name}: {md_text(agg.classification.explanation)}.")
        if not agg.apis_agree:
            lines.append(f"  evaluate() and aevaluate() disagree: {md_text(agg.apis)}.")
        if agg.single_turn_mismatches:
            lines.append(f"  evaluate() rows differ from single_turn_ascore for: "
                         f"{md_text(', '.join(agg.single_turn_mismatches))}.")
        lines += [f"  Problem: {md_text(p)}" for p in agg.run_problems]
    lines.append("")
    categories = by_category(aggs[0])
    per_target = [by_category(agg) for agg in aggs]
    header = ["category", "cases", "defined", "undefined", "errors", "reference mean"]
    header += [f"Ragas `{agg.target.split(':', 1)[-1]}` (N, nanmean)" for agg in aggs]
    table = []
    for category, (cat_policy, _, _) in categories.items():
        table.append([md_text(category), cat_policy.cases, cat_policy.defined, _reasons(cat_policy.undefined),
                      _reasons(cat_policy.errors), _exact_mean(cat_policy)]
                     + [f"{t[category][1]}, {_float(t[category][2])}" for t in per_target])
    return lines + ["Per case category:", ""] + list(markdown_table(header, table))


def dataset_level_markdown(audit: Audit) -> list[str]:
    level = audit.dataset_level
    if level is None:
        return []
    settings = level.settings
    lines = ["## Dataset level", "",
             f"Ragas's own `evaluate()` (and `aevaluate()`) ran on the whole suite with the scripted judges "
             f"(apis {', '.join(settings.get('apis', []))}; raise_exceptions={settings.get('raise_exceptions')}, "
             f"max_workers={settings.get('max_workers')}, batch_size={settings.get('batch_size')}). "
             f"Policy: {POLICY}", ""]
    lines += [f"- Problem: {md_text(p)}" for p in level.problems]
    for metric, aggs in audit.dataset_level.by_metric().items():
        lines += _metric_tables(metric, aggs)
    return lines
