"""``report.json``: the audit for machines (schema: harness/report/report.schema.json).

Deterministic and portable: no timestamps, no absolute paths, keys in a fixed order,
values in the encoding of ``ragas_compat.values``. Streamed: ``json_chunks`` writes the sections as it
makes them, the per-case sections and the tables one entry at a time (``Items``, ``Table``).

Diffable: every row, pair, case, reference and text is one line under a key of its own, never an index
or a running number. A row is keyed ``"<case id>|<target>"`` (``row_key``), a legacy-vs-collections pair
``"<case id>|<legacy target> vs <collections target>"`` and names its two rows by their keys, a text by
a hash of its content (``text_key``); evaluate()'s rows are one per line too. Adding a case adds its
lines and changes only the lines that count it (summary, verdict, findings, dataset-level means).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, groupby
from typing import Any

from ragas_compat.compare.api_paths import path_differences, unpaired_metrics
from ragas_compat.compare.audit import Audit, AuditRow, ReferenceOnlyRow, metric_entries
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.compare.dataset_level import (
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
from ragas_compat.compare.findings import Finding, counts
from ragas_compat.compare.headlines import headline_json
from ragas_compat.compare.verdict import verdict_json
from ragas_compat.metrics.judge_audit import JudgeAuditSummary
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.report.drift import expectations_json, finding_json
from ragas_compat.report.text import judge_audit_summary_of
from ragas_compat.values import (
    NON_NUMERIC,
    RagasError,
    encode_detail,
    encode_float,
    encode_fraction,
    encode_non_numeric,
    encode_ragas_value,
)

# 2: references, received inputs, target fields and warning texts stored once;
# 3: rows, pairs and evaluate() rows as tables ({"columns", "data"}); pairs refer to rows by index;
# 4: rows and pairs keyed ("<case>|<target>"), pairs name their rows by key, texts keyed by a content hash,
#    the dataset-level section laid out one key and one evaluate() row per line
# 5: what a keyed table's key holds is not repeated in its rows: a results row has no case_id or ragas_target
#    column, a pair no legacy_row or collections_row (the table's "key" names its layout; ``table_rows``
#    puts the columns back). At 50,000 cases they were about a seventh of report.json.
REPORT_FORMAT = 5
READABLE_FORMATS = (4, 5)  # ``table_rows`` and ``ragas-compat diff`` read both

RESULT_COLUMNS = ("case_id", "metric", "ragas_target", "ragas_value", "ragas_repr", "classification", "explanation",
                  "expected_classification", "explained_by", "unexpected", "drift", "received", "prompts",
                  "expected_prompts", "warnings")
PAIR_COLUMNS = ("legacy_row", "collections_row", "classification", "explanation", "expected_classification",
                "explained_by", "unexpected", "drift")
# a keyed table's "key": the layout of its keys, and the columns each key holds (``key_columns``)
RESULT_KEY = "<case_id>|<ragas_target>"
PAIR_KEY = "<case_id>|<legacy_target> vs <collections_target>"
_REPEAT = re.compile(r"#[0-9]+$")  # ``KeyedTable``'s suffix of a key given again ("<key>#2")


def key_columns(layout: str, key: str) -> dict[str, str]:
    """The columns a key of a keyed table with the "key" ``layout`` holds: ``case_id`` and ``ragas_target``
    of a results row, ``legacy_row`` and ``collections_row`` (the rows' keys) of a pair. A case id may
    hold "|" (the key is split at its last one); a target holds neither "|", " vs " nor "#"."""
    case_id, _, rest = key.rpartition("|")
    rest = _REPEAT.sub("", rest)
    if layout == RESULT_KEY:
        return {"case_id": case_id, "ragas_target": rest}
    if layout == PAIR_KEY:
        legacy, _, collections = rest.partition(" vs ")
        return {"legacy_row": row_key(case_id, legacy), "collections_row": row_key(case_id, collections)}
    raise ValueError(f"unknown keyed table layout {layout!r}")


_KEYED_COLUMNS = {RESULT_KEY: ("case_id", "ragas_target"), PAIR_KEY: ("legacy_row", "collections_row")}

EVALUATE_ROW_COLUMNS = ("case_id", "reference_status", "reference_reason", "row_classification", "evaluate_value",
                        "single_turn_value", "explained_value", "evaluate_error")


class Table:
    """Rows of the same keys, laid out as ``{"columns": [...], "data": [[...], ...]}``: the keys once, a
    list per row (pandas reads it as ``DataFrame(table["data"], columns=table["columns"])``). The rows
    are made when the report is written, one at a time (``json_chunks`` streams them)."""

    def __init__(self, columns: Sequence[str], rows: Callable[[], Iterable[dict[str, Any]]]) -> None:
        self.columns = list(columns)
        self._rows = rows

    def data(self) -> Iterator[list[Any]]:
        return ([row[column] for column in self.columns] for row in self._rows())

    def to_json(self) -> dict[str, Any]:
        return {"columns": self.columns, "data": list(self.data())}


class KeyedTable:
    """A ``Table`` whose rows are keyed: ``{"columns": [...], "data": {"<key>": [...], ...}}``, one row per
    line under a key that names it (pandas: ``DataFrame.from_dict(t["data"], orient="index",
    columns=t["columns"])``). ``rows`` gives (key, row) pairs in order; a key given twice (a probe that
    answered twice for one case and target) is kept apart as ``"<key>#2"``, ``"<key>#3"``. With a
    ``key`` layout (``RESULT_KEY``, ``PAIR_KEY``) the table is ``{"key": layout, "columns", "data"}`` and
    the columns the key holds (``key_columns``) are left out of ``columns`` and of every row.

    Keys are ``"<case id>|..."`` (``row_key``, ``pair_key``) and come case by case, as an audit's rows and
    pairs do (``build_audit`` sorts the rows by the suite's case order; ``_by_case`` relies on it too), so
    a key can repeat only within its case's run: the keys seen are remembered for the current case only,
    and writing holds no state per row."""

    def __init__(self, columns: Sequence[str], rows: Callable[[], Iterable[tuple[str, dict[str, Any]]]],
                 key: str | None = None) -> None:
        self.key = key
        self.columns = [column for column in columns if column not in _KEYED_COLUMNS.get(key or "", ())]
        self._rows = rows

    def data(self) -> Iterator[tuple[str, list[Any]]]:
        case: str | None = None
        seen: Counter[str] = Counter()  # the current case's keys
        for key, row in self._rows():
            key_case = key.rpartition("|")[0]  # a case id may hold "|", a target never does
            if key_case != case:
                case, seen = key_case, Counter()
            seen[key] += 1
            yield (key if seen[key] == 1 else f"{key}#{seen[key]}"), [row[column] for column in self.columns]

    def head(self) -> list[tuple[str, Any]]:
        """The table's members before ``data``."""
        return ([("key", self.key)] if self.key is not None else []) + [("columns", self.columns)]

    def to_json(self) -> dict[str, Any]:
        return {**dict(self.head()), "data": dict(self.data())}


class Block(dict):
    """A JSON object laid out one key per line at any depth (a plain ``dict`` is compact below depth 3)."""


class Items:
    """A JSON object made key by key as the report is written (``cases``, ``references``: one entry
    per case)."""

    def __init__(self, items: Callable[[], Iterable[tuple[str, Any]]]) -> None:
        self.items = items

    def to_json(self) -> dict[str, Any]:
        return dict(self.items())


def table_rows(section: dict[str, Any]) -> list[dict[str, Any]]:
    """A parsed ``table`` (a ``Table`` or a ``KeyedTable``) back as one dict per row, in order, a keyed
    table's rows with the columns their key holds put back (``key_columns``; format 4 wrote them)."""
    data = section["data"]
    if "key" not in section:
        columns = section["columns"]
        return [dict(zip(columns, values, strict=True)) for values in (data.values() if isinstance(data, dict) else data)]
    return list(keyed_rows(section).values())


def keyed_rows(section: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A parsed ``KeyedTable`` as one dict per row under its key, in order (``table_rows``)."""
    columns, layout = section["columns"], section.get("key")
    if layout is None:
        return {key: dict(zip(columns, values, strict=True)) for key, values in section["data"].items()}
    order = {RESULT_KEY: RESULT_COLUMNS, PAIR_KEY: PAIR_COLUMNS}.get(layout)
    if order is None:
        raise ValueError(f"unknown keyed table layout {layout!r}")
    rows = {}
    for key, values in section["data"].items():
        row = {**key_columns(layout, key), **dict(zip(columns, values, strict=True))}
        rows[key] = {column: row[column] for column in order}
    return rows


def row_key(case_id: str, target: str) -> str:
    """The key of a row in ``results``: ``"<case id>|<target>"`` (a target never holds ``|``; a case id
    may, so a reader splits at the last one)."""
    return f"{case_id}|{target}"


def pair_key(case_id: str, legacy: str, collections: str) -> str:
    """The key of a legacy-vs-collections pair: ``"<case id>|<legacy target> vs <collections target>"``."""
    return f"{case_id}|{legacy} vs {collections}"


def reference_value_json(reference: ReferenceOutcome) -> Any:
    """The reference's value: a float, ``null`` when undefined, an error object when refused, or a label /
    a ranking object (``{"label": ...}``, ``{"ranking": [...]}``, as Ragas's values are encoded)."""
    if reference.refused is not None:
        return {"error": {"type": "refused", "message": reference.refused}}
    if isinstance(reference.value, NON_NUMERIC):
        return encode_non_numeric(reference.value)
    return None if reference.value is None else float(reference.value)


def _reference_json(reference: ReferenceOutcome) -> dict[str, Any]:
    return {
        "reference_value": reference_value_json(reference),
        "reference_exact": encode_fraction(reference.value),
        "reference_undefined_reason": reference.undefined_reason,
        "reference_denominator": reference.denominator,
        "reference_alternatives": encode_detail(dict(reference.alternatives)),
        # the details but the oracle, which is stored once, below
        "reference_details": encode_detail({key: value for key, value in reference.details.items() if key != "oracle"}),
        # an independent library's value of the same quantity (string metrics), or why it is absent
        "oracle": encode_detail(reference.details.get("oracle")),
    }


def text_key(text: str) -> str:
    """The key of a text in ``texts``: the first 16 hex digits of the SHA-256 of its UTF-8 bytes, so a
    text keeps its key whatever else the report holds."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class _Texts:
    """Long texts stored once (``report["texts"]``, sorted by key) and referred to by ``text_key``."""

    def __init__(self) -> None:
        self.keys: dict[str, str] = {}

    def key(self, text: str) -> str:
        key = self.keys.setdefault(text, text_key(text))
        return key

    def table(self) -> dict[str, str]:
        return dict(sorted((key, text) for text, key in self.keys.items()))


def row_json(row: AuditRow, found: Iterable[Finding], case_received: dict[str, Any], texts: _Texts) -> dict[str, Any]:
    """One (case, metric, target) row (a line of the ``results`` table), with its drift findings ``found``
    (``Audit.row_findings``) as their kinds. Stored once elsewhere: the
    case's category (``cases``), the reference (``references``), what
    Ragas received (``cases``; ``received`` holds only the fields this target received otherwise),
    the target's class and fields (``targets``), the rule's reason (``expectations``, by
    ``explained_by``), the explanation and warning texts (``texts``, by key)."""
    value = row.ragas_value
    received = encode_detail(row.received) or {}
    return {
        "case_id": row.case.id,
        "metric": row.spec.name,
        "ragas_target": row.target,
        "ragas_value": encode_ragas_value(value),
        "ragas_repr": None if isinstance(value, RagasError) else repr(value),
        "classification": row.classification.name,
        "explanation": texts.key(row.classification.explanation),
        "expected_classification": row.expected.classification,
        "explained_by": row.expected.label,
        "unexpected": row.unexpected,
        "drift": [finding.kind for finding in found],
        "received": {k: v for k, v in received.items() if case_received.get(k, _MISSING) != v},
        "prompts": row.prompts,
        "expected_prompts": row.expected_prompts,
        "warnings": [texts.key(text) for text in sorted(set(row.warnings))],
    }


_MISSING = object()


def _by_case(items: Iterable[Any]) -> Iterator[tuple[str, list[Any]]]:
    """Rows (or reference-only rows), which come case by case, as (case id, that case's rows)."""
    for case_id, group in groupby(items, key=lambda item: item.case.id):
        yield case_id, list(group)


def case_received(rows: Iterable[AuditRow]) -> dict[str, Any]:
    """What Ragas received for one case: each field as the first of its rows that read it received it."""
    received: dict[str, Any] = {}
    for row in rows:
        for field, value in (encode_detail(row.received) or {}).items():
            received.setdefault(field, value)
    return received


def case_entries(audit: Audit) -> Iterator[tuple[str, dict[str, Any]]]:
    """Per case, in suite order: its category and what Ragas received (``case_received``; rows list only
    the fields a target received otherwise)."""
    rows = _by_case(audit.rows)
    current = next(rows, None)
    for case in audit.suite.cases:
        received = {}
        if current is not None and current[0] == case.id:
            received = case_received(current[1])
            current = next(rows, None)
        yield case.id, {"category": case.category, "received": received}


def reference_entries(audit: Audit) -> Iterator[tuple[str, dict[str, Any]]]:
    """Per case and metric, the reference outcome (the same for every Ragas target of the metric): the
    cases with rows first, in row order, then the cases with reference-only metrics alone."""
    only = dict(_by_case(audit.reference_only))
    for case_id, rows in _by_case(audit.rows):
        entry: dict[str, Any] = {}
        for row in (*rows, *only.pop(case_id, ())):
            entry.setdefault(row.spec.name, _reference_json(row.reference))
        yield case_id, entry
    for case_id, rows in only.items():
        yield case_id, {row.spec.name: _reference_json(row.reference) for row in rows}


def result_entries(audit: Audit, texts: _Texts) -> Iterator[tuple[str, dict[str, Any]]]:
    """The ``results`` rows in order under their keys (``row_key``), each case's received inputs
    computed once for its rows."""
    for case_id, group in groupby(audit.rows_with_findings(), key=lambda judged: judged[0].case.id):
        rows = list(group)
        received = case_received(row for row, _ in rows)
        yield from ((row_key(case_id, row.target), row_json(row, found, received, texts)) for row, found in rows)


def targets_json(audit: Audit) -> dict[str, dict[str, Any]]:
    """Per Ragas target, the class that ran (null when it never resolved) and the sample fields it reads."""
    targets: dict[str, dict[str, Any]] = {}
    for row in audit.rows:
        entry = targets.setdefault(row.target, {"ragas_class": None, "fields_read": list(row.fields_read)})
        entry["ragas_class"] = entry["ragas_class"] or row.ragas_class
    return targets


def reference_only_json(row: ReferenceOnlyRow) -> dict[str, Any]:
    return {"case_id": row.case.id, "category": row.case.category, "metric": row.spec.name}


def judge_audit_summary_json(summary: JudgeAuditSummary | None) -> dict[str, Any] | None:
    """The ``judge_audit_summary`` section: the judge_audit outcomes pooled over every claim (null when
    no case has one). Each rate with its numerator and denominator, exact (a fraction string) and as a
    float, both null and ``undefined`` saying why when the denominator is 0."""
    if summary is None:
        return None
    section: dict[str, Any] = {"cases": summary.cases, "refused_cases": list(summary.refused),
                               "claims": summary.count, "tp": summary.tp, "fn": summary.fn, "fp": summary.fp,
                               "tn": summary.tn}
    for rate in summary.rates():
        value = rate.value
        section[rate.key] = {"formula": rate.formula, "numerator": rate.numerator, "denominator": rate.denominator,
                             "exact": encode_fraction(value), "value": None if value is None else float(value),
                             "undefined": None if value is not None else rate.undefined}
    return section


def _full_counts(counter: Counter) -> dict[str, int]:
    return {name: counter.get(name, 0) for name in CLASSIFICATIONS}


def summary_json(audit: Audit) -> dict[str, Any]:
    by_class = Counter(row.classification.name for row in audit.rows)
    return {
        "rows": len(audit.rows),
        "unexpected": len(audit.unexpected),
        "drift": audit.drift,
        "drift_by_kind": counts(audit.findings),
        "expectation_problems": list(audit.expectation_problems),
        "by_classification": _full_counts(by_class),
        "by_metric": {k: _full_counts(v) for k, v in sorted(audit.counts(lambda r: r.spec.name).items())},
        "by_target": {k: _full_counts(v) for k, v in sorted(audit.counts(lambda r: r.target).items())},
        "by_category": {k: _full_counts(v) for k, v in sorted(audit.counts(lambda r: r.case.category).items())},
        "cases_per_category": dict(sorted(Counter(c.category for c in audit.suite.cases).items())),
    }


# --------------------------------------------------------------------------- dataset level

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
        "case_id": row.case_id,
        "reference_status": status, "reference_reason": reason,
        "row_classification": row.row_classification,
        "evaluate_value": encode_float(row.evaluate_value),
        "single_turn_value": encode_ragas_value(row.single_turn_value),
        "explained_value": encode_float(explained_row_value(row)),
        "evaluate_error": (None if row.evaluate_error is None
                           else {"type": row.evaluate_error[0], "message": row.evaluate_error[1]}),
    }


def target_json(agg: TargetAggregate) -> dict[str, Any]:
    return Block({
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
        "rows": Table(EVALUATE_ROW_COLUMNS, lambda: (_row_json(r) for r in agg.rows)),
    })


def dataset_level_section(audit: Audit) -> dict[str, Any] | None:
    """The ``dataset_level`` section; its ``metrics`` made one metric at a time as they are written."""
    level = audit.dataset_level
    if level is None:
        return None
    return {"policy": POLICY, "settings": level.settings, "problems": list(level.problems),
            "metrics": _Rows(_metric_level_json(metric, aggs) for metric, aggs in level.by_metric().items())}


def _metric_level_json(metric: str, aggs: list[TargetAggregate]) -> dict[str, Any]:
    first = aggs[0]  # the reference policy depends on the metric, not on the Ragas class
    return Block({
        "metric": metric,
        "reference": policy_json(first.policy),
        "reference_by_category": {category: policy_json(policy)
                                  for category, (policy, _, _) in by_category(first).items()},
        "ragas": [target_json(agg) for agg in aggs],
    })


# --------------------------------------------------------------------------- legacy vs collections

def api_paths_json(audit: Audit, texts: _Texts | None = None) -> dict[str, Any]:
    """The report's ``api_paths`` section as one JSON value (``api_paths_section``)."""
    return _materialized(api_paths_section(audit, texts))


def api_paths_section(audit: Audit, texts: _Texts | None = None) -> dict[str, Any]:
    """The report's ``api_paths`` section (explanations in ``texts`` by key; without, the texts inline),
    its differences and pairs made as they are written. Each pair, keyed by ``pair_key``, refers to its
    legacy and its collections row by their keys in ``results`` (``row_key``)."""
    explanation = texts.key if texts is not None else str
    pairs = audit.pairs
    counts = {name: sum(1 for p in pairs if p.classification.name == name) for name in CLASSIFICATIONS}
    return {
        "description": ("legacy vs collections at this Ragas: each legacy row paired with each collections "
                        "row of the same case and metric, classified with the legacy value in the place "
                        "of the reference"),
        "pairs": len(pairs),
        "unexpected": sum(1 for p in pairs if p.unexpected),
        "by_classification": counts,
        "unpaired_metrics": unpaired_metrics(audit.rows),
        "differences": _Rows(
            {"case_id": d.case.id, "category": d.case.category, "metric": d.metric,
             "classification": d.classification, "meaning": d.meaning,
             "legacy": [{"target": t, "value": v} for t, v in d.legacy],
             "collections": [{"target": t, "value": v} for t, v in d.collections]}
            for d in path_differences(pairs)),
        "results": KeyedTable(PAIR_COLUMNS, lambda: (
            (pair_key(p.case.id, p.legacy.target, p.collections.target),
             {"legacy_row": row_key(p.case.id, p.legacy.target),
              "collections_row": row_key(p.case.id, p.collections.target),
              "classification": p.classification.name, "explanation": explanation(p.classification.explanation),
              "expected_classification": p.expected.classification, "explained_by": p.expected.label,
              "unexpected": p.unexpected,
              "drift": [finding.kind for finding in found]})
            for p, found in audit.pairs_with_findings()), key=PAIR_KEY),
    }


def json_sections(audit: Audit) -> dict[str, Any]:
    """report.json's sections in order; the ``results`` tables are ``Table``s, made row by row as the
    report is written. ``texts`` is last but one, filled while the tables before it are written."""
    texts = _Texts()
    return {
        "report_format": REPORT_FORMAT,
        "encoding": {"NaN": "the string \"NaN\"", "undefined": "null",
                     "error": "an object with key \"error\"", "exact": "a fraction string such as \"5/6\""},
        "provenance": audit.provenance,
        "verdict": verdict_json(audit),
        "findings": [headline_json(f) for f in audit.headlines],
        "summary": summary_json(audit),
        "metrics": metric_entries(audit),
        "cases": Items(lambda: case_entries(audit)),
        "references": Items(lambda: reference_entries(audit)),
        "targets": targets_json(audit),
        "results": KeyedTable(RESULT_COLUMNS, lambda: result_entries(audit, texts), key=RESULT_KEY),
        "reference_only": [reference_only_json(row) for row in audit.reference_only],
        "judge_audit_summary": judge_audit_summary_json(judge_audit_summary_of(audit)),
        "dataset_level": dataset_level_section(audit),
        "api_paths": api_paths_section(audit, texts),
        "expectations": expectations_json(audit),
        "texts": _Deferred(texts.table),
        "drift": _Rows(finding_json(finding) for finding in audit.findings),
    }


class _Deferred:
    """A section whose value is known only once the sections before it are written (``texts``)."""

    def __init__(self, value: Callable[[], Any]) -> None:
        self.value = value


def audit_to_json(audit: Audit) -> dict[str, Any]:
    """report.json as one JSON value (what ``json_chunks`` writes, parsed)."""
    return _materialized(json_sections(audit))


def _materialized(value: Any) -> Any:
    if isinstance(value, (Table, KeyedTable, Items)):
        return _materialized(value.to_json())
    if isinstance(value, _Rows):
        return [_materialized(item) for item in value.rows]
    if isinstance(value, list):
        return [_materialized(item) for item in value]
    if isinstance(value, _Deferred):
        return _materialized(value.value())
    if isinstance(value, dict):
        return {key: _materialized(item) for key, item in value.items()}
    return value


def render_json(audit: Audit) -> str:
    """``report.json`` as one string (``json_chunks`` joined)."""
    return "".join(json_chunks(audit))


def json_chunks(audit: Audit) -> Iterator[str]:
    """``report.json``, written as it is made: sections and their keys one per line, every item of a
    list or table (a row, a pair, a finding, a text) on one line of its own under a stable key, so a diff
    shows the rows that changed."""
    yield from _layout(json_sections(audit), 0)
    yield "\n"


def _compact(item: Any) -> str:
    return json.dumps(item, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def _layout(value: Any, depth: int) -> Iterator[str]:
    """``value`` laid out: objects above depth 3 (and every ``Block``) one key per line, lists of
    containers one item per line, a table one row per line, everything else compact. A ``Table``,
    ``KeyedTable`` or ``Items`` is laid out as its JSON value, made as it goes."""
    if isinstance(value, _Deferred):
        yield from _layout(value.value(), depth)
    elif isinstance(value, Table):
        yield from _members(iter([("columns", value.columns), ("data", _Rows(value.data()))]), depth)
    elif isinstance(value, KeyedTable):
        yield from _members(iter([*value.head(), ("data", _Keyed(value.data()))]), depth)
    elif isinstance(value, _Keyed):
        yield from _members(iter(value.items), depth, compact=True)
    elif isinstance(value, Items):
        yield from _members(iter(value.items()), depth)
    elif isinstance(value, Block) or (isinstance(value, dict) and depth < 3):
        yield from _members(iter(value.items()), depth)
    elif isinstance(value, _Rows):
        yield from _lines(value.rows, depth)
    elif isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        yield from _lines(iter(value), depth)
    else:
        yield _compact(value)


class _Rows:
    """A list made item by item as it is written, one item per line (a table's ``data``, findings,
    differences)."""

    def __init__(self, rows: Iterator[Any]) -> None:
        self.rows = rows


class _Keyed:
    """An object made entry by entry as it is written, one compact ``"key": value`` per line (a keyed
    table's ``data``)."""

    def __init__(self, items: Iterator[tuple[str, Any]]) -> None:
        self.items = items


def _members(items: Iterator[tuple[str, Any]], depth: int, compact: bool = False) -> Iterator[str]:
    """An object, one ``"key": value`` per line (``{}`` when empty); ``compact``: each value on its line."""
    first = next(items, _MISSING)
    if first is _MISSING:
        yield "{}"
        return
    pad = " " * (depth + 1)
    for index, (key, item) in enumerate(chain([first], items)):
        yield ("{\n" if index == 0 else ",\n") + f"{pad}{_compact(key)}: "
        if compact:
            yield _compact(item)
        else:
            yield from _layout(item, depth + 1)
    yield "\n" + " " * depth + "}"


_LAID_OUT = (Block, Table, KeyedTable, Items)  # list items laid out over lines of their own


def _lines(items: Iterator[Any], depth: int) -> Iterator[str]:
    """A list, one compact item per line (``[]`` when empty); a ``Block`` or table item laid out."""
    pad = " " * (depth + 1)
    first = next(items, _MISSING)
    if first is _MISSING:
        yield "[]"
        return
    for index, item in enumerate(chain([first], items)):
        yield ("[\n" if index == 0 else ",\n") + pad
        if isinstance(item, _LAID_OUT):
            yield from _layout(item, depth + 1)
        else:
            yield _compact(item)
    yield "\n" + " " * depth + "]"


def result_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``results`` table of a parsed report.json as one dict per row (``RESULT_COLUMNS``)."""
    return table_rows(report["results"])


def pair_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The legacy-vs-collections pairs of a parsed report.json, each with its rows joined in: ``case_id``,
    ``metric``, ``legacy_target``, ``collections_target``, ``legacy_value``, ``collections_value``."""
    rows = keyed_rows(report["results"])

    def cell(row: str, name: str) -> Any:
        return rows[row][name]

    return [{"case_id": cell(pair["legacy_row"], "case_id"), "metric": cell(pair["legacy_row"], "metric"),
             "legacy_target": cell(pair["legacy_row"], "ragas_target"),
             "collections_target": cell(pair["collections_row"], "ragas_target"),
             "legacy_value": cell(pair["legacy_row"], "ragas_value"),
             "collections_value": cell(pair["collections_row"], "ragas_value"), **pair}
            for pair in table_rows(report["api_paths"]["results"])]


def expanded_row(report: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """A ``results`` row (``result_rows``) of a parsed report.json (format 4 or 5) with what is stored once
    joined back in: the case's ``category``, the reference (``reference_*``, ``oracle``), ``ragas_class``
    and ``fields_read``, ``received`` in full, the rule's ``expected_reason`` and ``upstream``, and the
    explanation and warning texts."""
    texts = report["texts"]
    rules = {entry["label"]: entry for entry in report["expectations"]}
    rule = rules.get(row["explained_by"], {})
    target = report["targets"][row["ragas_target"]]
    case_received = report["cases"][row["case_id"]]["received"]
    received = {field: case_received[field] for field in target["fields_read"] if field in case_received}
    return {**row, "category": report["cases"][row["case_id"]]["category"],
            **report["references"][row["case_id"]][row["metric"]], **target,
            "received": {**received, **row["received"]},
            "explanation": texts[row["explanation"]], "warnings": [texts[key] for key in row["warnings"]],
            "expected_reason": rule.get("reason"), "upstream": rule.get("upstream")}


def expanded_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``results`` row of a parsed report.json, expanded (``expanded_row``)."""
    return [expanded_row(report, row) for row in result_rows(report)]
