"""Two report.json files (format 4), or two matrix.json files, compared row by row (``ragas-compat diff``).

Rows are matched by key: a report.json row by its ``"<case>|<target>"`` key (``json_report.row_key``), a
matrix.json cell by ``"<case>|<target> @ <column>"``. For each key present on both sides:

- the value is compared exactly: two numbers are the same only when their doubles are bit-equal (0.0
  and -0.0 differ; one ulp is a change), everything else by its encoded form, so ``"NaN"``, ``null``
  (undefined), ``"Infinity"`` and an error object are four different values, and an error whose type or
  message changed is a change;
- the classification is compared as a name;
- the explanation (report.json only) is compared as the row states it: the expected classification, the
  rule or case entry that explains the row (``explained_by``), whether it is unexpected, and its drift
  kinds. A row explained in A and unexplained in B is a change, shown with both sides.

The reports' verdicts (report.json ``verdict``: its status and counts; ``line`` and ``meaning`` are
written from them) are compared too: a different verdict is a change, shown with the expectations each
report was judged by (``provenance.expectations``), which is usually why.

Keys on one side only are listed with their value and classification. The provenance fields that say
what ran (harness, Ragas version and commit, Python, platform, suite; per matrix column its Ragas and
Python) are compared and shown when they differ; they describe the runs and do not count as a change of
the results. Any changed row, a row on one side only, or a different verdict is a change.

Invalid input (unreadable, not JSON, not a report.json of format 4 nor a matrix.json, a table whose rows
do not fit its columns, one report.json and one matrix.json) raises ``HarnessInputError`` naming the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragas_compat.compare.classify import same_float, ulps_between
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import READ_BACK_FACTOR, read_text
from ragas_compat.report.json_report import READABLE_FORMATS, result_rows

DIFF_FORMAT = 1
REPORT = "report.json"
MATRIX = "matrix.json"

# report.json provenance fields compared, as (label, path in the provenance)
REPORT_PROVENANCE = (
    ("harness version", ("harness_version",)),
    ("Ragas version", ("ragas_version",)),
    ("Ragas source", ("ragas", "kind")),
    ("Ragas commit", ("ragas", "commit")),
    ("Ragas repository", ("ragas", "url")),
    ("Python", ("python", "version")),
    ("Python implementation", ("python", "implementation")),
    ("platform", ("platform",)),
    ("suite", ("suite", "source")),
    ("suite cases", ("suite", "cases")),
    ("expectations", ("expectations",)),
)
MATRIX_COLUMN_PROVENANCE = ("ragas_version", "kind", "python", "available")
# report.json verdict fields compared (``line`` and ``meaning`` are written from these)
VERDICT_FIELDS = ("status", "rows", "identical", "explained", "unexplained", "errors", "harness_errors", "replay")
# report.json row columns that say whether and by what a row is explained
EXPLANATION_COLUMNS = ("expected_classification", "explained_by", "unexpected", "drift")


@dataclass(frozen=True)
class Row:
    """One row (report.json) or cell (matrix.json): its key, encoded value and classification, and
    (report.json) its explanation: the values of ``EXPLANATION_COLUMNS``, None for a matrix cell."""

    key: str
    case_id: str
    target: str
    value: Any
    classification: str | None
    column: str | None = None
    explanation: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class Change:
    """A key on both sides whose value (bit for bit), classification or explanation differs."""

    a: Row
    b: Row
    value_changed: bool
    classification_changed: bool
    explanation_changed: bool = False

    @property
    def key(self) -> str:
        return self.a.key

    @property
    def ulps(self) -> int | None:
        """Doubles between the two values, when both are finite numbers."""
        x, y = self.a.value, self.b.value
        if _is_number(x) and _is_number(y) and math.isfinite(float(x)) and math.isfinite(float(y)):
            return ulps_between(float(x), float(y))
        return None


@dataclass(frozen=True)
class ProvenanceChange:
    field: str
    a: Any
    b: Any


@dataclass(frozen=True)
class Loaded:
    path: str
    kind: str  # REPORT | MATRIX
    doc: dict[str, Any]


@dataclass(frozen=True)
class Diff:
    kind: str
    a_path: str
    b_path: str
    a_rows: int
    b_rows: int
    changes: tuple[Change, ...] = ()
    only_in_a: tuple[Row, ...] = ()
    only_in_b: tuple[Row, ...] = ()
    provenance: tuple[ProvenanceChange, ...] = field(default=())
    verdict: tuple[ProvenanceChange, ...] = field(default=())  # the verdict fields that differ
    a_verdict: str | None = None  # report.json: each side's verdict status and expectations source
    b_verdict: str | None = None
    a_expectations: Any = None
    b_expectations: Any = None

    @property
    def changed(self) -> bool:
        """Any row changed or present on one side only, or the verdicts differ (provenance differences
        alone are not a change)."""
        return bool(self.changes or self.only_in_a or self.only_in_b or self.verdict)


# ---------------------------------------------------------------- values

def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_value(a: Any, b: Any) -> bool:
    """Encoded values equal exactly: numbers bit for bit as doubles, anything else (``"NaN"``, ``null``,
    ``"Infinity"``, an error object) by its encoded form; a number never equals a non-number."""
    if _is_number(a) and _is_number(b):
        return same_float(float(a), float(b))
    if _is_number(a) or _is_number(b):
        return False
    return a == b


def value_text(value: Any) -> str:
    """An encoded value as a reader should see it: a number as the repr of its double (every digit),
    ``NaN``, ``undefined (null)``, ``error: Type: message``, a matrix cell's status."""
    if _is_number(value):
        return repr(float(value))
    if value is None:
        return "undefined (null)"
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        error = value["error"]
        origin = " (harness)" if error.get("origin") == "harness" else ""
        return f"error{origin}: {error.get('type')}: {error.get('message')}"
    if isinstance(value, dict) and "status" in value:
        return f"{value['status']}: {value.get('text')}"
    return str(value)


def explanation_text(row: Row) -> str:
    """A row's explanation in one phrase: ``expected epsilon, explained by rule ap-epsilon (file)`` or
    ``unexpected (expected identical), explained by nothing; drift: unexplained``; empty for a matrix cell."""
    if row.explanation is None:
        return ""
    expected, by, unexpected, drift = row.explanation
    head = f"unexpected (expected {expected})" if unexpected else f"expected {expected}"
    kinds = drift if isinstance(drift, tuple) else () if drift is None else (drift,)
    drift_text = f"; drift: {', '.join(map(str, kinds))}" if kinds else ""
    return f"{head}, explained by {by if by is not None else 'nothing'}{drift_text}"


# ---------------------------------------------------------------- reading

def _bare_constant(name: str) -> Any:
    raise ValueError(f"bare {name} is not JSON (the reports write it as the string \"{name}\")")


def load(path: str | Path) -> Loaded:
    """A report.json (a format of ``READABLE_FORMATS``: the rows are read alike) or matrix.json, parsed; HarnessInputError naming ``path``.
    Read as every file from outside is (``input_limits``): a regular file (never a FIFO or device), of at most
    ``READ_BACK_FACTOR`` times the input limit, UTF-8."""
    name = str(path)
    text = read_text(path, "report", source=name, allow_stdin=False, factor=READ_BACK_FACTOR)
    try:
        doc = json.loads(text, parse_constant=_bare_constant)
    except RecursionError:
        raise HarnessInputError(f"{name}: not JSON this Python parses (nested deeper than its recursion limit)",
                                field="report", value=name) from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise HarnessInputError(f"{name}: not JSON ({exc})", field="report", value=name) from None
    if not isinstance(doc, dict):
        raise HarnessInputError(f"{name}: not a report.json or matrix.json (a JSON {type(doc).__name__}, "
                                f"not an object)", field="report", value=name)
    if "report_format" in doc:
        if doc["report_format"] not in READABLE_FORMATS:
            raise HarnessInputError(f"{name}: report.json format {doc['report_format']!r}; diff reads formats "
                                    f"{', '.join(map(str, READABLE_FORMATS))} (run the audit again with this "
                                    f"harness)",
                                    field="report_format", value=doc["report_format"])
        return Loaded(name, REPORT, doc)
    if "matrix_format" in doc:
        return Loaded(name, MATRIX, doc)
    raise HarnessInputError(f"{name}: not a report.json or matrix.json (no report_format or matrix_format)",
                            field="report", value=name)


def rows(loaded: Loaded) -> dict[str, Row]:
    """Every row of ``loaded`` by key; HarnessInputError naming the file when its tables are malformed."""
    try:
        return dict((row.key, row) for row in (_report_rows(loaded.doc) if loaded.kind == REPORT
                                               else _matrix_rows(loaded.doc)))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise HarnessInputError(f"{loaded.path}: not a valid {loaded.kind} ({detail})", field="report",
                                value=loaded.path) from None


def _report_rows(doc: dict[str, Any]) -> Iterator[Row]:
    data = doc["results"]["data"]
    if not isinstance(data, dict):
        raise ValueError(f"results.data is a {type(data).__name__}, not an object keyed by row")
    for key, row in zip(data, result_rows(doc), strict=True):
        yield Row(key, str(row["case_id"]), str(row["ragas_target"]), row["ragas_value"], row["classification"],
                  explanation=tuple(_frozen(row.get(name)) for name in EXPLANATION_COLUMNS))


def _frozen(value: Any) -> Any:
    """A list cell (``drift``) as a tuple, so that a Row stays hashable."""
    return tuple(value) if isinstance(value, list) else value


def _cell_value(cell: dict[str, Any]) -> Any:
    if cell["status"] == "value":
        return cell["value"]
    if cell["status"] == "error":
        return {"error": cell["error"]}
    return {"status": cell["status"], "text": cell.get("text")}


def _matrix_rows(doc: dict[str, Any]) -> Iterator[Row]:
    for row in doc["rows"]:
        for label, cell in row["cells"].items():
            key = f"{row['case_id']}|{row['target']} @ {label}"
            yield Row(key, str(row["case_id"]), str(row["target"]), _cell_value(cell), cell.get("classification"),
                      column=label)


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


def provenance_changes(a: Loaded, b: Loaded) -> list[ProvenanceChange]:
    """The provenance fields that differ (a field absent on a side reads ``None``)."""
    if a.kind == REPORT:
        pa, pb = a.doc.get("provenance") or {}, b.doc.get("provenance") or {}
        pairs = [(label, _at(pa, path), _at(pb, path)) for label, path in REPORT_PROVENANCE]
    else:
        cols_a = {c.get("label"): c for c in a.doc.get("columns") or [] if isinstance(c, dict)}
        cols_b = {c.get("label"): c for c in b.doc.get("columns") or [] if isinstance(c, dict)}
        pairs = [(f"suite {name}", _at(a.doc, ("suite", name)), _at(b.doc, ("suite", name)))
                 for name in ("source", "cases")]
        for label in dict.fromkeys([*cols_a, *cols_b]):
            ca, cb = cols_a.get(label), cols_b.get(label)
            if ca is None or cb is None:
                pairs.append((f"column {label}", "present" if ca else None, "present" if cb else None))
                continue
            pairs += [(f"column {label}: {name}", ca.get(name), cb.get(name)) for name in MATRIX_COLUMN_PROVENANCE]
    return [ProvenanceChange(label, x, y) for label, x, y in pairs if x != y]


def verdict_changes(a: Loaded, b: Loaded) -> list[ProvenanceChange]:
    """The report.json verdict fields that differ (a field or verdict absent on a side reads ``None``);
    none for matrix.json, which has no verdict."""
    if a.kind != REPORT:
        return []
    va, vb = a.doc.get("verdict"), b.doc.get("verdict")
    pairs = [(f"verdict {name}", _at(va, (name,)), _at(vb, (name,))) for name in VERDICT_FIELDS]
    return [ProvenanceChange(label, x, y) for label, x, y in pairs if x != y]


def diff_files(a_path: str | Path, b_path: str | Path) -> Diff:
    """Compare two report.json (or two matrix.json) files row by row."""
    a, b = load(a_path), load(b_path)
    if a.kind != b.kind:
        raise HarnessInputError(f"{b.path} is a {b.kind} but {a.path} is a {a.kind}: diff compares two of a kind",
                                field="report", value=b.path)
    return diff_loaded(a, b)


def diff_loaded(a: Loaded, b: Loaded) -> Diff:
    rows_a, rows_b = rows(a), rows(b)
    changes = []
    for key, row_a in rows_a.items():
        row_b = rows_b.get(key)
        if row_b is None:
            continue
        value_changed = not same_value(row_a.value, row_b.value)
        class_changed = row_a.classification != row_b.classification
        explanation_changed = row_a.explanation != row_b.explanation
        if value_changed or class_changed or explanation_changed:
            changes.append(Change(row_a, row_b, value_changed, class_changed, explanation_changed))
    verdict = () if a.kind != REPORT else (_at(a.doc, ("verdict", "status")), _at(b.doc, ("verdict", "status")),
                                           _at(a.doc, ("provenance", "expectations")),
                                           _at(b.doc, ("provenance", "expectations")))
    return Diff(a.kind, a.path, b.path, len(rows_a), len(rows_b), tuple(changes),
                tuple(row for key, row in rows_a.items() if key not in rows_b),
                tuple(row for key, row in rows_b.items() if key not in rows_a),
                tuple(provenance_changes(a, b)), tuple(verdict_changes(a, b)), *verdict)


# ---------------------------------------------------------------- output

def verdict_line(diff: Diff) -> str:
    """The two verdicts and the expectations each was judged by, in one line (shown when they differ)."""
    return (f"verdict changed: A {diff.a_verdict} (expectations {diff.a_expectations}), "
            f"B {diff.b_verdict} (expectations {diff.b_expectations})")


def summary_line(diff: Diff) -> str:
    if not diff.changed:
        explanations = " and explanation" if diff.kind == REPORT else ""
        verdict = ", and the same verdict" if diff.kind == REPORT else ""
        return (f"no change: {diff.a_rows} rows, every value bit-equal and every classification{explanations} "
                f"the same{verdict}")
    explanations = (f", {sum(c.explanation_changed for c in diff.changes)} explanations"
                    if diff.kind == REPORT else "")
    verdict = f"{verdict_line(diff)}; " if diff.verdict else ""
    return (f"{verdict}{len(diff.changes)} rows changed ({sum(c.value_changed for c in diff.changes)} values, "
            f"{sum(c.classification_changed for c in diff.changes)} classifications{explanations}), "
            f"{len(diff.only_in_a)} only in A, {len(diff.only_in_b)} only in B "
            f"(A: {diff.a_rows} rows, B: {diff.b_rows} rows)")


def _side_json(row: Row) -> dict[str, Any]:
    out = {"value": row.value, "value_text": value_text(row.value), "classification": row.classification}
    if row.explanation is not None:
        out |= {**dict(zip(EXPLANATION_COLUMNS, row.explanation, strict=True)),
                "explanation_text": explanation_text(row)}
    return out


def _row_json(row: Row) -> dict[str, Any]:
    out: dict[str, Any] = {"key": row.key, "case_id": row.case_id, "target": row.target}
    if row.column is not None:
        out["column"] = row.column
    return {**out, **_side_json(row)}


def diff_json(diff: Diff) -> dict[str, Any]:
    return {
        "diff_format": DIFF_FORMAT,
        "kind": diff.kind,
        "a": {"path": diff.a_path, "rows": diff.a_rows},
        "b": {"path": diff.b_path, "rows": diff.b_rows},
        "changed": diff.changed,
        "summary": summary_line(diff),
        "provenance": [{"field": p.field, "a": p.a, "b": p.b} for p in diff.provenance],
        **({"verdict": {"a": {"status": diff.a_verdict, "expectations": diff.a_expectations},
                        "b": {"status": diff.b_verdict, "expectations": diff.b_expectations},
                        "changed": [{"field": p.field, "a": p.a, "b": p.b} for p in diff.verdict]}}
           if diff.kind == REPORT else {}),
        "changes": [{"key": c.key, "case_id": c.a.case_id, "target": c.a.target,
                     **({"column": c.a.column} if c.a.column is not None else {}),
                     "changed": [name for name, flag in (("value", c.value_changed),
                                                         ("classification", c.classification_changed),
                                                         ("explanation", c.explanation_changed)) if flag],
                     "a": _side_json(c.a), "b": _side_json(c.b),
                     "ulps": c.ulps}
                    for c in diff.changes],
        "only_in_a": [_row_json(row) for row in diff.only_in_a],
        "only_in_b": [_row_json(row) for row in diff.only_in_b],
    }
