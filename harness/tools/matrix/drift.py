"""The drift matrix: rows (case, metric, Ragas target), one column per version, and what changed.

A cell holds the version's Ragas value and its classification against the reference (the same
``classify`` a single run uses), or the error Ragas raised, or ``unavailable`` with the reason the
whole version could not run. Between adjacent columns a cell *changes* when its value (bit for bit),
error, classification or received inputs differ; each change names its causes where they can be
named:

* ``unavailable``      - one of the two versions could not be installed or imported;
* ``class_missing`` / ``class_added`` - the target class does not exist in one of them;
* ``not_scripted`` / ``stub_mismatch`` / ``harness_error`` / ``dependency_missing`` - the harness cannot
  drive the class in one of them: the matrix environment lacks a dependency the class imports when used
  (``ImportError``) or that dependency's data (nltk's tokenizer models, a ``LookupError``: they come from
  nltk's downloader, not the package index); it asks its judge through an interface the scripted judge does not know (0.3.x collections
  API), the scripted judge could not answer its prompts (``StubMismatch``: the frozen verdicts are laid
  out for another prompt generation), or the harness's own code failed (an error the probe marks
  ``origin: harness``). These are the harness's limits, never a Ragas drift: such a cell is labelled
  ``harness: ...``, drawn in a neutral colour, and its changes are listed apart (``Drift.by``);
* ``field_dropped``    - a field the target reads is not a ``SingleTurnSample`` field of that version
  (it was silently dropped or renamed), so the metric received something else; or the version's sample
  declares the field under another name, under which the probe passed it (``fields_renamed``: Ragas
  0.2.0-0.2.5's ``rubric``, ``rubrics`` from 0.2.6), and the other version does not;
* ``class_renamed``    - a class some releases only have (``RagasTargets.releases``) is gone and the class
  declared to replace it scores the case in the later version: the change is the two classes' cells
  compared (its other causes follow), not "class missing". Outside its releases such a target makes no
  row in the probe; its cell there reads ``missing class``;
* ``exception`` / ``exception_fixed`` / ``exception_changed`` - Ragas raised in one of them;
* ``value_changed``    - both returned a number and the numbers differ;
* ``classification_changed`` - the classification against the reference differs;
* ``class_moved``      - the class lives in another module;
* ``prompts_changed``  - the judge was asked a different number of prompts;
* ``prompt_changed``   - the prompt text the judge was shown (instruction, few-shot examples, output schema,
  the input block's layout: ``probe.prompt_hash``) differs for a prompt kind both columns asked: the frozen
  verdicts were replayed under another prompt, so the judge's answer there is assumed, not shown (a note on
  the cell, no finding by itself: the matrix cannot show what a judge would answer);
* ``warnings_changed`` - scoring the cell raised other warnings;
* ``telemetry``        - a row queued other telemetry events for Ragas's analytics (``probe.telemetry_events``:
  counted per row, whether telemetry is on or off); or (a column pair, no row) the probe blocked a
  different number of network attempts: with ``matrix --telemetry`` Ragas's telemetry is left on and
  every attempt is counted.

A change a drift rule explains (``pinned/matrix-drift.toml``, ``drift_rules.py``) is shown under the
rule's kind and cause instead, with the rule's id and reason, and is no finding: e.g. the same Ragas
release on Python 3.11 and 3.13 giving a context-precision value 1-2 ulps apart is
``summation_order``, "summation order under Python ≥ 3.12". Columns may differ in Python
(``0.4.3@3.11``, ``0.4.3@3.13``); each column records the interpreter version its probe reported.

The API table records, per target and version: the module the class comes from and whether
``ragas.metrics`` exports it, the sample fields the version accepted and dropped, the columns the
class declares it reads (``_required_columns``) and the warnings raised while scoring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ragas_compat.compare.audit import UNSTABLE_WARNINGS, AuditRow
from ragas_compat.compare.classify import same_float
from ragas_compat.compare.rows import reference_text
from ragas_compat.metrics.registry import release_bounds
from ragas_compat.probe.protocol import HARNESS_ORIGIN, UNAVAILABLE_TYPE
from ragas_compat.tools.matrix.drift_rules import ColumnFacts, DriftRule, load_drift_rules, ulps_between
from ragas_compat.tools.matrix.run import VersionColumn, message_line
from ragas_compat.values import RagasError

MISSING_CLASS_ERROR = UNAVAILABLE_TYPE
NOT_SCRIPTED_ERROR = "TargetNotScripted"  # the class exists; the probe's scripted judge cannot drive it
STUB_MISMATCH_ERROR = "StubMismatch"  # the scripted judge was asked a prompt its frozen verdicts do not answer

# Why a cell was not scored: a fact about Ragas (the class does not exist) or a limit of the harness.
MISSING_CLASS = "missing_class"
HARNESS_LIMITS: dict[str, str] = {
    "not_scripted": "harness: not scripted",
    "stub_mismatch": "harness: judge cannot answer",
    "harness_error": "harness: own error",
    "dependency_missing": "harness: dependency not installed",
}
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")
# A dependency's data files the environment does not hold: nltk's tokenizer models (0.2.0-0.2.4 BleuScore's
# ``word_tokenize`` needs ``punkt_tab``) come from nltk's own downloader, not from the package index.
DATA_MISSING = (("LookupError", re.compile(r"Resource '[^']+' not found")),)  # nltk.data.find's message
NOT_RUN_LABELS = {MISSING_CLASS: "missing class", **HARNESS_LIMITS}
HARNESS_CAUSES = frozenset(HARNESS_LIMITS)  # cause kinds that are the harness's, never Ragas drift


@dataclass(frozen=True)
class Cell:
    """One (row, version). status: "value" | "error" | "unavailable" | "absent"."""

    status: str
    value: float | None = None
    error_type: str | None = None
    error_message: str | None = None
    classification: str | None = None
    explanation: str | None = None
    ragas_class: str | None = None
    received: dict[str, Any] = field(default_factory=dict)
    fields_dropped: tuple[str, ...] = ()
    prompts: int | None = None
    error_origin: str | None = None  # "harness" when the harness's own code raised the error
    warnings: tuple[str, ...] = ()  # raised while scoring the cell (unstable ones left out)
    prompt_hashes: tuple[tuple[str, str], ...] = ()  # (prompt kind, template digest) the judge was shown
    telemetry_events: tuple[str, ...] | None = None  # events queued for Ragas's analytics (None: not recorded)
    fields_renamed: tuple[tuple[str, str], ...] = ()  # (case field, the name this version's sample declares it under)

    @property
    def not_run(self) -> str | None:
        """Why the class was not scored: ``missing_class`` or a ``HARNESS_LIMITS`` key; None otherwise."""
        if self.status != "error":
            return None
        if self.error_type == NOT_SCRIPTED_ERROR:
            return "not_scripted"
        if self.error_type == MISSING_CLASS_ERROR:
            return MISSING_CLASS
        if self.error_type == STUB_MISMATCH_ERROR:
            return "stub_mismatch"
        if self.error_origin == HARNESS_ORIGIN:
            return "harness_error"
        if self.error_type in IMPORT_ERRORS or any(
                self.error_type == kind and marker.search(self.error_message or "") for kind, marker in DATA_MISSING):
            return "dependency_missing"
        return None

    @property
    def harness_limit(self) -> str | None:
        """The ``HARNESS_LIMITS`` key when the harness could not drive this cell, else None."""
        return self.not_run if self.not_run in HARNESS_LIMITS else None

    @property
    def text(self) -> str:
        """Short display text: the value (6 significant digits), ``NaN``, the error type, or status;
        a cell the harness could not drive says so in the harness's name."""
        if self.status == "value":
            if not isinstance(self.value, float):  # a label or a ranking (values.NON_NUMERIC)
                return repr(self.value)
            return "NaN" if math.isnan(self.value) else f"{self.value:.6g}"
        if self.status == "error":
            if self.not_run == "harness_error":
                return f"{HARNESS_LIMITS['harness_error']} ({self.error_type})"
            return NOT_RUN_LABELS.get(self.not_run, f"error: {self.error_type}")
        return self.status


@dataclass(frozen=True)
class Cause:
    kind: str
    text: str
    rule: str | None = None  # the id of the drift rule (pinned/matrix-drift.toml) that explains it


@dataclass(frozen=True)
class MatrixRow:
    case_id: str
    category: str
    metric: str
    target: str
    reference: str  # the reference value as text ("5/6", "undefined (zero_claims)", "refused: ...")
    cells: tuple[Cell, ...]
    changes: tuple[tuple[Cause, ...], ...]  # one per adjacent column pair (i-1, i); () = unchanged


@dataclass(frozen=True)
class ApiCell:
    """How one version offers one target class."""

    ragas_class: str | None
    exported: bool | None  # importable as ``ragas.metrics.<Class>``
    missing: str | None
    fields_accepted: tuple[str, ...]
    fields_dropped: tuple[str, ...]
    required_columns: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class ColumnInfo:
    label: str
    version: str | None
    kind: str
    environment: str  # "built" | "reused" | "checkout" | "unavailable"
    available: bool
    error: str | None
    import_warnings: tuple[str, ...]
    network_attempts: int
    sample_fields: tuple[str, ...]  # the input fields this version's sample (or 0.1.x row) accepted, any target
    python: str | None = None  # the column's interpreter, "3.13.0" (the probe's own report)


@dataclass(frozen=True)
class Drift:
    """One kind of change between two adjacent versions, with the rows that show it."""

    before: str
    after: str
    kind: str
    text: str
    rows: tuple[tuple[str, str], ...]  # (case_id, target)
    rule: str | None = None  # the drift rule that explains it (no finding then)
    reason: str | None = None  # that rule's reason

    @property
    def by(self) -> str:
        """``harness`` for a limit of the harness (never a Ragas drift), else ``ragas``."""
        return "harness" if self.kind in HARNESS_CAUSES else "ragas"


@dataclass(frozen=True)
class Matrix:
    suite: dict[str, Any]
    columns: tuple[ColumnInfo, ...]
    rows: tuple[MatrixRow, ...]
    api: dict[str, tuple[ApiCell | None, ...]]  # target -> one cell per column (None: column unavailable)
    drifts: tuple[Drift, ...]


def _warnings(items: Any) -> tuple[str, ...]:
    texts = []
    for item in items or ():
        text = f"{item.get('category', 'Warning')}: {item.get('message', '')}" if isinstance(item, dict) else str(item)
        if not text.startswith(UNSTABLE_WARNINGS) and text not in texts:
            texts.append(text)
    return tuple(texts)


def cell_from(row: AuditRow, result: dict) -> Cell:
    common = dict(classification=row.classification.name, explanation=row.classification.explanation,
                  ragas_class=result.get("ragas_class"), received=dict(result.get("received") or {}),
                  fields_dropped=tuple(result.get("fields_dropped") or ()), prompts=result.get("prompts"),
                  warnings=_warnings(result.get("warnings")), prompt_hashes=_prompt_hashes(result),
                  telemetry_events=_telemetry_events(result), fields_renamed=_fields_renamed(result))
    if isinstance(row.ragas_value, RagasError):
        error = result.get("value", {}).get("error", {}) if isinstance(result.get("value"), dict) else {}
        return Cell("error", None, row.ragas_value.type, message_line(row.ragas_value.message),
                    error_origin=error.get("origin"), **common)
    return Cell("value", row.ragas_value, **common)


def _fields_renamed(result: dict) -> tuple[tuple[str, str], ...]:
    found = result.get("fields_renamed")
    return tuple(sorted((str(k), str(v)) for k, v in found.items())) if isinstance(found, dict) else ()


def _prompt_hashes(result: dict) -> tuple[tuple[str, str], ...]:
    found = result.get("prompt_hashes")
    if not isinstance(found, dict):
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in found.items()))


def _telemetry_events(result: dict) -> tuple[str, ...] | None:
    events = result.get("telemetry_events")
    if not isinstance(events, list):
        return None
    return tuple(f"{e.get('event_type', 'event')} {','.join(map(str, e.get('metrics') or ()))} "
                 f"{e.get('evaluation_type', '')}".strip() if isinstance(e, dict) else str(e) for e in events)


PROMPT_NOTE = "verdicts replayed under a different prompt: the judge's answer is assumed, not shown"


def prompt_changes(before: Cell, after: Cell) -> list[str]:
    """The prompt kinds both cells asked whose template digests differ (sorted)."""
    old, new = dict(before.prompt_hashes), dict(after.prompt_hashes)
    return sorted(kind for kind in old.keys() & new.keys() if old[kind] != new[kind])


def _same_value(a: Cell, b: Cell) -> bool:
    if a.status != b.status:
        return False
    if a.status == "value":
        return same_float(a.value, b.value)
    if a.status == "error":
        return (a.error_type, a.error_message) == (b.error_type, b.error_message)
    return True


def _short_class(name: str | None) -> str:
    return name or "?"


def causes_between(before: Cell, after: Cell, before_label: str, after_label: str) -> tuple[Cause, ...]:
    """Why a cell differs between two adjacent versions; () when it does not."""
    if before.status == "unavailable" or after.status == "unavailable":
        if before.status == after.status:
            return ()
        which = after_label if after.status == "unavailable" else before_label
        return (Cause("unavailable", f"{which} could not be installed or imported"),)
    if before.status == "absent" or after.status == "absent":
        if before.status == after.status:
            return ()
        return (Cause("absent", f"the probe produced no result in {after_label if after.status == 'absent' else before_label}"),)
    causes: list[Cause] = []
    missing_before = before.error_type == MISSING_CLASS_ERROR
    missing_after = after.error_type == MISSING_CLASS_ERROR
    if missing_after and not missing_before:
        causes.append(Cause("class_missing", f"{after_label} has no such class"))
    elif missing_before and not missing_after:
        causes.append(Cause("class_added", f"the class first exists in {after_label}"))
    limit_before, limit_after = before.harness_limit, after.harness_limit
    if limit_before != limit_after:
        for limit, which, cell in ((limit_before, before_label, before), (limit_after, after_label, after)):
            if limit is not None:
                causes.append(Cause(limit, harness_limit_text(limit, which, cell)))
    if missing_before or missing_after or limit_before or limit_after:
        return tuple(causes)
    for name in sorted(set(after.fields_dropped) - set(before.fields_dropped)):
        causes.append(Cause("field_dropped", f"SingleTurnSample of {after_label} has no field {name!r} "
                                             "(dropped or renamed; the metric never sees it)"))
    for name in sorted(set(before.fields_dropped) - set(after.fields_dropped)):
        causes.append(Cause("field_dropped", f"field {name!r} is accepted from {after_label} on "
                                             f"(dropped in {before_label})"))
    causes.extend(renamed_field_causes(before, after, before_label, after_label))
    if after.status == "error" and before.status != "error":
        causes.append(Cause("exception", f"{after.error_type}: {after.error_message}"))
    elif before.status == "error" and after.status != "error":
        causes.append(Cause("exception_fixed", f"{before_label} raised {before.error_type}: {before.error_message}"))
    elif before.status == after.status == "error" and not _same_value(before, after):
        causes.append(Cause("exception_changed", f"{before.error_type} -> {after.error_type}: {after.error_message}"))
    elif before.status == after.status == "value" and not _same_value(before, after):
        causes.append(Cause("value_changed", f"{before.text} -> {after.text} "
                                             f"({before.value!r} -> {after.value!r})"))
    if before.classification != after.classification:
        causes.append(Cause("classification_changed", f"{before.classification} -> {after.classification}"))
    if before.ragas_class and after.ragas_class and before.ragas_class != after.ragas_class:
        causes.append(Cause("class_moved", f"{before.ragas_class} -> {after.ragas_class}"))
    if before.prompts is not None and after.prompts is not None and before.prompts != after.prompts:
        causes.append(Cause("prompts_changed", f"judge prompts {before.prompts} -> {after.prompts}"))
    if before.telemetry_events is not None and after.telemetry_events is not None \
            and before.telemetry_events != after.telemetry_events:
        old, new = before.telemetry_events, after.telemetry_events
        causes.append(Cause("telemetry", f"telemetry events queued for the row: {len(old)} -> {len(new)} "
                                         f"({'; '.join(new) or 'none'}"
                                         + (f"; before: {'; '.join(old)})" if len(old) == len(new) else ")")))
    changed_prompts = prompt_changes(before, after)
    if changed_prompts:
        causes.append(Cause("prompt_changed", f"{PROMPT_NOTE} (the text of the {', '.join(changed_prompts)} "
                                              f"prompt changed in {after_label})"))
    if before.warnings != after.warnings:
        causes.append(Cause("warnings_changed", _warnings_change(before.warnings, after.warnings)))
    return tuple(causes)


def renamed_field_causes(before: Cell, after: Cell, before_label: str, after_label: str) -> list[Cause]:
    """``field_dropped`` for each case field one version's sample declares under another name and the
    other does not (``Cell.fields_renamed``): a rename of the sample's field between the two."""
    old, new = dict(before.fields_renamed), dict(after.fields_renamed)
    causes = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) == new.get(name):
            continue
        if name in old and name not in new:
            text = (f"SingleTurnSample of {after_label} has no field {old[name]!r}: renamed {name!r} (the case's "
                    f"{name} went in as {old[name]!r} in {before_label}, as {name!r} from {after_label} on)")
        elif name in new and name not in old:
            text = (f"SingleTurnSample of {after_label} has no field {name!r}: it declares {new[name]!r} (the "
                    f"case's {name} goes in as {new[name]!r} there, as {name!r} in {before_label})")
        else:
            text = f"the case's {name} goes in as {new[name]!r} in {after_label} ({old[name]!r} in {before_label})"
        causes.append(Cause("field_dropped", text))
    return causes


def _warnings_change(before: tuple[str, ...], after: tuple[str, ...], width: int = 160) -> str:
    """``+ added; - removed`` warnings, each text cut to ``width`` characters."""
    def short(text: str) -> str:
        return text if len(text) <= width else text[: width - 3] + "..."

    added = [f"+ {short(t)}" for t in after if t not in before]
    removed = [f"- {short(t)}" for t in before if t not in after]
    return "; ".join(added + removed) or "the same warnings in another order"


def telemetry_drifts(columns: tuple[ColumnInfo, ...]) -> tuple[Drift, ...]:
    """A ``telemetry`` drift between adjacent available columns whose probes blocked a different number
    of network attempts (the attempts are the probe's, per column: Ragas batches its telemetry)."""
    drifts = []
    for before, after in pairwise(columns):
        if before.available and after.available and before.network_attempts != after.network_attempts:
            drifts.append(Drift(before.label, after.label, "telemetry",
                                f"network attempts blocked: {before.network_attempts} -> {after.network_attempts}",
                                ()))
    return tuple(drifts)


def harness_limit_text(limit: str, label: str, cell: Cell) -> str:
    """Why the harness could not drive ``label``'s class, in the harness's name (never "Ragas raised")."""
    if limit == "not_scripted":
        return (f"the harness's scripted judge cannot drive {label}'s class (a prompt interface it does not "
                "know): not compared there, not a Ragas change")
    if limit == "stub_mismatch":
        return (f"the harness's scripted judge could not answer {label}'s prompts (its frozen verdicts are laid "
                "out for another prompt generation): not compared there, not a Ragas change")
    if limit == "dependency_missing":
        return (f"{label}'s matrix environment does not install a dependency the class needs "
                f"({cell.error_message}): not compared there, not a Ragas change")
    return (f"the harness's own code failed on {label} ({cell.error_type}): not compared there, "
            "not a Ragas change")


def _api_cell(results: list[dict]) -> ApiCell:
    first = results[0]
    missing = next((r["value"]["error"]["message"] for r in results
                    if isinstance(r.get("value"), dict) and r["value"].get("error", {}).get("type") == MISSING_CLASS_ERROR),
                   None)
    warnings: list[str] = []
    for result in results:
        for text in _warnings(result.get("warnings")):
            if text not in warnings:
                warnings.append(text)
    return ApiCell(
        ragas_class=first.get("ragas_class"),
        exported=first.get("exported"),
        missing=missing.splitlines()[0] if missing else None,
        fields_accepted=tuple(first.get("fields_accepted") or first.get("fields_read") or ()),
        fields_dropped=tuple(first.get("fields_dropped") or ()),
        required_columns=tuple(first.get("required_columns") or ()),
        warnings=tuple(warnings),
    )


def column_python(column: VersionColumn) -> str | None:
    """The interpreter version the column's probe reported (``python.version``), else the environment's
    MAJOR.MINOR, else None."""
    reported = (column.probe_output.get("python") or {}).get("version")
    return reported if isinstance(reported, str) and reported else column.environment.python_tag


def explain_causes(causes: tuple[Cause, ...], before: Cell, after: Cell, metric: str, target: str,
                   facts: tuple[ColumnFacts, ColumnFacts], rules: Sequence[DriftRule]) -> tuple[Cause, ...]:
    """``causes`` with each one a drift rule explains replaced by the rule's cause (first rule wins)."""
    explained = []
    for cause in causes:
        errors = (before.error_type if before.status == "error" else None,
                  after.error_type if after.status == "error" else None)
        rule = next((r for r in rules if r.explains_change(cause.kind, target, metric, *facts,
                                                              before.value, after.value, errors)), None)
        if rule is None:
            explained.append(cause)
            continue
        ulps = ulps_between(before.value, after.value) if rule.max_ulps is not None else None
        detail = (f"{before.value!r} -> {after.value!r}, {ulps} ulp" if ulps is not None
                  else f"{before.value!r} -> {after.value!r}" if cause.kind == "value_changed" else cause.text)
        explained.append(Cause(rule.kind, f"{rule.cause} ({detail})", rule.id))
    return tuple(explained)


def build_matrix(columns: list[VersionColumn], suite_info: dict[str, Any],
                 drift_rules: Sequence[DriftRule] | None = None) -> Matrix:
    """Assemble rows, adjacent changes, the API table and the drift summary from the columns; a change
    a drift rule explains (``drift_rules``, default pinned/matrix-drift.toml) carries the rule."""
    rules = load_drift_rules() if drift_rules is None else tuple(drift_rules)
    facts = [ColumnFacts(c.label, c.version, column_python(c)) for c in columns]
    keyed: list[dict[tuple[str, str], tuple[AuditRow, dict]]] = []
    order: dict[tuple[str, str], tuple] = {}
    info: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    case_order: dict[str, int] = {}
    for column in columns:
        mapping: dict[tuple[str, str], tuple[AuditRow, dict]] = {}
        if column.audit is not None:
            for index, case in enumerate(column.audit.suite.cases):
                case_order.setdefault(case.id, index)
            results = {(r["case_id"], r["target"]): r for r in column.probe_output.get("results", [])}
            for row in column.audit.rows:
                key = (row.case.id, row.target)
                mapping[key] = (row, results.get(key, {}))
                info.setdefault(key, (row.case.category, row.spec.name, row.target, reference_text(row)))
                order.setdefault(key, (case_order[row.case.id], row.spec.name, row.target))
        keyed.append(mapping)

    labels = [c.label for c in columns]
    cells_by_key: dict[tuple[str, str], list[Cell]] = {}
    for key in sorted(order, key=order.get):
        cells = []
        for column, mapping in zip(columns, keyed, strict=True):
            if not column.available:
                cells.append(Cell("unavailable", error_message=column.error))
            elif key in mapping:
                cells.append(cell_from(*mapping[key]))
            else:
                cells.append(outside_releases(key[1]) or Cell("absent"))
        cells_by_key[key] = cells
    rows = []
    for key, cells in cells_by_key.items():
        category, metric_name, target, reference = info[key]
        changes = tuple(explain_causes(renamed_causes(key, cells_by_key, i, labels)
                                       or causes_between(cells[i - 1], cells[i], labels[i - 1], labels[i]),
                                       cells[i - 1], cells[i], metric_name, target, (facts[i - 1], facts[i]), rules)
                        for i in range(1, len(cells)))
        rows.append(MatrixRow(key[0], category, metric_name, target, reference, tuple(cells), changes))

    targets = sorted(dict.fromkeys(row.target for row in rows), key=lambda t: (not t.startswith("legacy:"), t))
    api: dict[str, tuple[ApiCell | None, ...]] = {}
    for target in targets:
        per_column = []
        for column in columns:
            results = [r for r in column.probe_output.get("results", []) if r.get("target") == target]
            per_column.append(_api_cell(results) if column.available and results else None)
        api[target] = tuple(per_column)

    info_columns = tuple(
        ColumnInfo(
            label=c.label, version=c.version, kind=c.environment.kind, environment=c.environment.status,
            available=c.available, error=c.error,
            import_warnings=_warnings((c.probe_output.get("ragas") or {}).get("import_warnings")),
            network_attempts=len(c.probe_output.get("network_attempts") or ()),
            sample_fields=tuple(sorted({f for r in c.probe_output.get("results", [])
                                        for f in r.get("fields_accepted") or ()})),
            python=column_python(c),
        ) for c in columns)
    return Matrix(suite_info, info_columns, tuple(rows), api,
                  summarise_drifts(rows, labels, rules) + telemetry_drifts(info_columns))


def outside_releases(target: str) -> Cell | None:
    """The cell of a target the probe left out because this Ragas lacks its class, a class some releases
    only have (``registry.release_bounds``): ``missing class``, naming them; None for any other target."""
    bounds = release_bounds(target)
    if bounds is None:
        return None
    first, below, successor = bounds
    ragas_class = target.partition(":")[2]
    return Cell("error", error_type=MISSING_CLASS_ERROR,
                error_message=f"this Ragas has no {ragas_class} (a class of Ragas {first} to before {below} only"
                              + (f"; {successor} from {below})" if successor else ")"))


def _scored(cell: Cell) -> bool:
    return cell.status in ("value", "error") and cell.error_type != MISSING_CLASS_ERROR


def renamed_causes(key: tuple[str, str], cells_by_key: dict[tuple[str, str], list[Cell]], index: int,
                   labels: Sequence[str]) -> tuple[Cause, ...]:
    """The change of a renamed class's row between columns ``index - 1`` and ``index``, where it is gone
    and its successor (``registry.release_bounds``) scores the same case: ``class_renamed``, then the
    causes between its last cell and the successor's first (``causes_between``: e.g. the sample's field
    renamed, the exception fixed). () when that is not the case (the change is then the row's own)."""
    case_id, target = key
    cells = cells_by_key[key]
    before, after = cells[index - 1], cells[index]
    bounds = release_bounds(target)
    if bounds is None or not bounds[2] or not _scored(before) or after.error_type != MISSING_CLASS_ERROR:
        return ()
    api, _, old_class = target.partition(":")
    successor = cells_by_key.get((case_id, f"{api}:{bounds[2]}"))
    if successor is None or not _scored(successor[index]):
        return ()
    causes = causes_between(before, successor[index], labels[index - 1], labels[index])
    return (Cause("class_renamed", f"{old_class} is {bounds[2]} from {labels[index]} (its {labels[index]} cell "
                                   f"compared: {api}:{bounds[2]})"),
            *(cause for cause in causes if cause.kind != "class_moved"))


def summarise_drifts(rows: list[MatrixRow], labels: list[str],
                     rules: Sequence[DriftRule] = ()) -> tuple[Drift, ...]:
    """Group the changes by (adjacent pair, cause) and list the rows that show each; a change a drift
    rule explains is grouped under the rule's cause (without the values) and carries the rule and
    its reason."""
    by_id = {rule.id: rule for rule in rules}
    grouped: dict[tuple[int, str, str, str], list[tuple[str, str]]] = {}
    for row in rows:
        for index, causes in enumerate(row.changes):
            for cause in causes:
                if cause.rule in by_id:
                    text = by_id[cause.rule].cause
                else:
                    text = cause.text if cause.kind not in ("value_changed",) else "value changed"
                grouped.setdefault((index, cause.kind, text, cause.rule or ""), []).append((row.case_id, row.target))
    return tuple(Drift(labels[index], labels[index + 1], kind, text, tuple(found), rule or None,
                       by_id[rule].reason if rule in by_id else None)
                 for (index, kind, text, rule), found in sorted(grouped.items(), key=lambda item: item[0]))
