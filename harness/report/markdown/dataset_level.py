"""The "dataset level" report section: Ragas's evaluate() mean next to the reference policy.

``dataset_level_json(audit)`` is report.json's top-level ``"dataset_level"`` (null when the run
did not include evaluate()); ``dataset_level_markdown(audit)`` renders one table per metric with
the policy counts and both means, the sentence "Ragas's mean of X is over N of M cases; K were
dropped: …" per Ragas target, and the per-category breakdown. Deterministic: no timings.
"""

from __future__ import annotations

import math
from typing import Any

from harness.compare.dataset_level import (
    POLICY,
    AggregationRow,
    PolicyCounts,
    TargetAggregate,
    by_category,
    drop_cause,
    explained_row_value,
    row_status,
    sentence,
)
from harness.compare.audit import Audit
from harness.values import encode_float, encode_fraction, encode_ragas_value
from harness.report.markdown.table import markdown_table


def _mean_json(value: Any) -> Any:
    return None if value is None else float(value)


def policy_json(policy: PolicyCounts) -> dict[str, Any]:
    return {
        "cases": policy.cases, "defined": policy.defined, "undefined": policy.undefined,
        "errors": policy.errors, "dropped": policy.dropped,
        "dropped_share": encode_fraction(policy.dropped_share),
        "mean_exact": encode_fraction(policy.mean), "mean": _mean_json(policy.mean),
    }


def _row_json(row: AggregationRow) -> dict[str, Any]:
    status, reason = row_status(row.reference)
    return {
        "case_id": row.case_id, "category": row.category,
        "reference_status": status, "reference_reason": reason,
        "row_classification": row.row_classification,
        "evaluate_value": encode_float(row.evaluate_value),
        "single_turn_value": encode_ragas_value(row.single_turn_value),
        "explained_value": encode_float(explained_row_value(row)),
        "evaluate_error": (None if row.evaluate_error is None
                           else {"type": row.evaluate_error[0], "message": row.evaluate_error[1]}),
    }


def target_json(agg: TargetAggregate) -> dict[str, Any]:
    return {
        "target": agg.target,
        "mean": encode_float(agg.ragas_mean),
        "means_by_api": {api: encode_float(v) for api, v in agg.apis.items()},
        "apis_agree": agg.apis_agree,
        "cases": len(agg.rows),
        "kept": len(agg.kept),
        "dropped": len(agg.dropped_rows),
        "dropped_rows": [{"case_id": r.case_id, "category": r.category, "cause": drop_cause(r)}
                         for r in agg.dropped_rows],
        "kept_but_dropped_by_reference": [r.case_id for r in agg.kept_but_dropped_by_reference],
        "recomputed_mean": encode_float(agg.recomputed_mean),
        "mean_recomputed_exactly": agg.mean_recomputed_exactly,
        "explained_mean": encode_float(agg.explained_mean),
        "alternative": agg.alternative_key,
        "classification": agg.classification.name,
        "explanation": agg.classification.explanation,
        "sentence": sentence(agg),
        "single_turn_mismatches": list(agg.single_turn_mismatches),
        "problems": list(agg.run_problems),
        "by_category": {category: {"cases": policy.cases, "kept": kept, "mean": encode_float(mean)}
                        for category, (policy, kept, mean) in by_category(agg).items()},
        "rows": [_row_json(r) for r in agg.rows],
    }


def _grouped(audit: Audit) -> dict[str, list[TargetAggregate]]:
    grouped: dict[str, list[TargetAggregate]] = {}
    for agg in audit.dataset_level.targets if audit.dataset_level else ():
        grouped.setdefault(agg.metric, []).append(agg)
    return grouped


def dataset_level_json(audit: Audit) -> dict[str, Any] | None:
    level = audit.dataset_level
    if level is None:
        return None
    metrics = []
    for metric, aggs in _grouped(audit).items():
        first = aggs[0]  # the reference policy depends on the metric, not on the Ragas class
        metrics.append({
            "metric": metric,
            "reference": policy_json(first.policy),
            "reference_by_category": {category: policy_json(policy)
                                      for category, (policy, _, _) in by_category(first).items()},
            "ragas": [target_json(agg) for agg in aggs],
        })
    return {"policy": POLICY, "settings": level.settings, "problems": list(level.problems), "metrics": metrics}


# --------------------------------------------------------------------------- markdown

def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}: {n}" for reason, n in counts.items()) or "—"


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
        lines.append(f"- `{agg.target}`: {sentence(agg)}")
        recomputed = "bit-equal" if agg.mean_recomputed_exactly else f"NOT equal ({_float(agg.recomputed_mean)})"
        lines.append(f"  numpy nanmean of Ragas's own rows: {recomputed}; recomputed from the reference "
                     f"under the per-row semantics: {_float(agg.explained_mean)}; "
                     f"{agg.classification.name}: {agg.classification.explanation}.")
        if not agg.apis_agree:
            lines.append(f"  evaluate() and aevaluate() disagree: {agg.apis}.")
        if agg.single_turn_mismatches:
            lines.append(f"  evaluate() rows differ from single_turn_ascore for: {', '.join(agg.single_turn_mismatches)}.")
        lines += [f"  Problem: {p}" for p in agg.run_problems]
    lines.append("")
    categories = by_category(aggs[0])
    per_target = [by_category(agg) for agg in aggs]
    header = ["category", "cases", "defined", "undefined", "errors", "reference mean"]
    header += [f"Ragas `{agg.target.split(':', 1)[-1]}` (N, nanmean)" for agg in aggs]
    table = []
    for category, (cat_policy, _, _) in categories.items():
        table.append([category, cat_policy.cases, cat_policy.defined, _reasons(cat_policy.undefined),
                      _reasons(cat_policy.errors), _exact_mean(cat_policy)]
                     + [f"{t[category][1]}, {_float(t[category][2])}" for t in per_target])
    return lines + ["Per case category:", ""] + markdown_table(header, table)


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
    lines += [f"- Problem: {p}" for p in level.problems]
    for metric, aggs in _grouped(audit).items():
        lines += _metric_tables(metric, aggs)
    return lines
