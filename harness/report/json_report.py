"""``report.json``: the audit for machines (schema: harness/report/report.schema.json).

Deterministic and portable: no timestamps, no absolute paths, keys in a fixed order,
values in the encoding of ``harness.values``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from harness.compare.audit import Audit, AuditRow, ReferenceOnlyRow
from harness.compare.classify import CLASSIFICATIONS
from harness.values import RagasError
from harness.values import encode_detail, encode_fraction, encode_ragas_value
from harness.metrics.outcome import ReferenceOutcome
from harness.report.markdown.api_paths import api_paths_json
from harness.report.markdown.dataset_level import dataset_level_json

REPORT_FORMAT = 1


def reference_value_json(reference: ReferenceOutcome) -> Any:
    """The reference's value: a float, ``null`` when undefined, or an error object when refused."""
    if reference.refused is not None:
        return {"error": {"type": "refused", "message": reference.refused}}
    return None if reference.value is None else float(reference.value)


def _reference_json(reference: ReferenceOutcome) -> dict[str, Any]:
    return {
        "reference_value": reference_value_json(reference),
        "reference_exact": encode_fraction(reference.value),
        "reference_undefined_reason": reference.undefined_reason,
        "reference_denominator": reference.denominator,
        "reference_alternatives": encode_detail(dict(reference.alternatives)),
        "reference_details": encode_detail(dict(reference.details)),
    }


def row_json(row: AuditRow) -> dict[str, Any]:
    value = row.ragas_value
    return {
        "case_id": row.case.id,
        "category": row.case.category,
        "metric": row.spec.name,
        "ragas_target": row.target,
        "ragas_class": row.ragas_class,
        "fields_read": list(row.fields_read),
        "ragas_value": encode_ragas_value(value),
        "ragas_repr": None if isinstance(value, RagasError) else repr(value),
        **_reference_json(row.reference),
        "classification": row.classification.name,
        "explanation": row.classification.explanation,
        "expected_classification": row.expected.classification,
        "expected_reason": row.expected.reason,
        "upstream": row.expected.upstream,
        "unexpected": row.unexpected,
        "received": encode_detail(row.received),
        "prompts": row.prompts,
        "expected_prompts": row.expected_prompts,
        "warnings": sorted(set(row.warnings)),
    }


def reference_only_json(row: ReferenceOnlyRow) -> dict[str, Any]:
    return {"case_id": row.case.id, "category": row.case.category, "metric": row.spec.name,
            **_reference_json(row.reference)}


def _full_counts(counter: Counter) -> dict[str, int]:
    return {name: counter.get(name, 0) for name in CLASSIFICATIONS}


def summary_json(audit: Audit) -> dict[str, Any]:
    by_class = Counter(row.classification.name for row in audit.rows)
    return {
        "rows": len(audit.rows),
        "unexpected": len(audit.unexpected),
        "drift": audit.drift,
        "expectation_problems": list(audit.expectation_problems),
        "by_classification": _full_counts(by_class),
        "by_metric": {k: _full_counts(v) for k, v in sorted(audit.counts(lambda r: r.spec.name).items())},
        "by_target": {k: _full_counts(v) for k, v in sorted(audit.counts(lambda r: r.target).items())},
        "by_category": {k: _full_counts(v) for k, v in sorted(audit.counts(lambda r: r.case.category).items())},
        "cases_per_category": dict(sorted(Counter(c.category for c in audit.suite.cases).items())),
    }


def metrics_json(audit: Audit) -> list[dict[str, Any]]:
    """Each metric with its denominator, missing-value policy and the Ragas classes run for it."""
    targets: dict[str, dict[str, dict[str, Any]]] = {}
    for row in audit.rows:
        targets.setdefault(row.spec.name, {})[row.target] = {
            "target": row.target, "ragas_class": row.ragas_class, "fields_read": list(row.fields_read)}
    specs = {row.spec.name: row.spec for row in audit.rows}
    specs.update({row.spec.name: row.spec for row in audit.reference_only})
    return [
        {"metric": name, "denominator": spec.denominator, "undefined_policy": spec.undefined_policy,
         "ragas_targets": [targets[name][t] for t in sorted(targets.get(name, {}))]}
        for name, spec in sorted(specs.items())
    ]


def audit_to_json(audit: Audit) -> dict[str, Any]:
    return {
        "report_format": REPORT_FORMAT,
        "encoding": {"NaN": "the string \"NaN\"", "undefined": "null",
                     "error": "an object with key \"error\"", "exact": "a fraction string such as \"5/6\""},
        "provenance": audit.provenance,
        "summary": summary_json(audit),
        "metrics": metrics_json(audit),
        "results": [row_json(row) for row in audit.rows],
        "reference_only": [reference_only_json(row) for row in audit.reference_only],
        "dataset_level": dataset_level_json(audit),
        "api_paths": api_paths_json(audit),
    }


def render_json(audit: Audit) -> str:
    return json.dumps(audit_to_json(audit), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

