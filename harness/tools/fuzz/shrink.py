"""Pick the smallest example of a classification among the pairs a fuzz run produced.

This is *selection*: no new case is generated here. The selected example is the starting point
of the shrinker (``ragas_compat.tools.fuzz.delta_debug``), which reduces it further. Each pair is
reduced to the inputs its metric reads (the ``example_case``: a valid case holding only those
inputs, so it can be run alone with ``ragas-compat run --cases``), and the smallest one wins:

    size = total length of the lists in the example (contexts, labels, claims, IDs),
    ties broken by the example's canonical JSON (sorted keys; the per-case texts id,
    description, user_input, reference and response left out), then by case order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ragas_compat.compare.audit import AuditRow

# Case keys every case carries; they are texts, not inputs whose size matters.
_ALWAYS = ("id", "category", "description", "user_input", "reference", "response")
_IGNORED_IN_ORDER = ("id", "description", "user_input", "reference", "response")


def metric_inputs(row: AuditRow) -> tuple[str, ...]:
    """The case keys the row's metric reads (beyond the always-present texts): the fields its Ragas
    class read, then the metric's own inputs (``MetricSpec.case_inputs``)."""
    keys = [f for f in row.fields_read if f not in _ALWAYS] + list(row.spec.case_inputs)
    return tuple(dict.fromkeys(keys))


def example_case(row: AuditRow) -> dict[str, Any]:
    """The row's case reduced to what its metric reads; a valid case (retrieved_contexts is
    required, so it is [] when the metric does not read it)."""
    raw = row.case.raw
    example: dict[str, Any] = {key: raw[key] for key in _ALWAYS if key in raw}
    example["retrieved_contexts"] = []
    for key in metric_inputs(row):
        if key.startswith("verdicts."):
            verdict = key.split(".", 1)[1]
            if verdict in raw.get("verdicts", {}):
                example.setdefault("verdicts", {})[verdict] = raw["verdicts"][verdict]
        elif key in raw:
            example[key] = raw[key]
    return example


def example_size(example: dict[str, Any]) -> int:
    """Total length of the lists in an example case (verdict lists and claim sets included)."""
    size = sum(len(v) for v in example.values() if isinstance(v, list))
    return size + sum(len(v) for v in example.get("verdicts", {}).values())


def _order_key(row: AuditRow, position: int) -> tuple[int, str, int]:
    example = example_case(row)
    text = json.dumps({k: v for k, v in example.items() if k not in _IGNORED_IN_ORDER},
                      sort_keys=True, ensure_ascii=False)
    return example_size(example), text, position


def smallest(rows: Iterable[AuditRow]) -> AuditRow | None:
    """The smallest row (see module docstring), or None when there is none."""
    best: tuple[tuple[int, str, int], AuditRow] | None = None
    for position, row in enumerate(rows):
        key = _order_key(row, position)
        if best is None or key < best[0]:
            best = (key, row)
    return None if best is None else best[1]


def smallest_per_classification(rows: Iterable[AuditRow], classifications: Iterable[str]) -> dict[str, AuditRow]:
    """For each of ``classifications`` that occurs: its smallest row."""
    wanted = set(classifications)
    groups: dict[str, list[AuditRow]] = {}
    for row in rows:
        if row.classification.name in wanted:
            groups.setdefault(row.classification.name, []).append(row)
    return {name: smallest(group) for name, group in groups.items()}  # type: ignore[misc]


def smallest_per_target(rows: Iterable[AuditRow], classification: str) -> dict[str, AuditRow]:
    """For one classification: the smallest row of each Ragas target that produced it."""
    groups: dict[str, list[AuditRow]] = {}
    for row in rows:
        if row.classification.name == classification:
            groups.setdefault(row.target, []).append(row)
    return {target: smallest(group) for target, group in sorted(groups.items())}  # type: ignore[misc]
