"""``ragas-compat import``: a dataset plus a CSV of labels made elsewhere (human labels, a judge's
verdicts) -> a case file that ``ragas-compat run`` replays.

The dataset is read by ``dataset.read_dataset`` (the readers ``record`` uses). The labels CSV has
one row per label pair and these columns (header names exact; others are an error):

- ``sample_id`` (required): the sample's id in the dataset (its ``id`` column, else ``row-N``);
- ``claim_id`` (required): what the row labels (see ``metric``);
- ``human_label``, ``judge_label`` (both columns required; a cell may be empty where the mapping
  below allows it): ``0``, ``1``, ``true`` or ``false`` (any case), written to the case as 0 / 1;
- ``metric`` (optional; an empty cell means ``judge_audit``): which case key the row fills;
- ``statement`` (optional): the claim text of a ``context_recall`` / ``faithfulness`` row
  (default: the ``claim_id``).

What each row becomes (``LABEL`` is the column ``--verdicts-from`` names, ``judge`` by default):

=========================================  ===============================================================
``metric``                                 case keys
=========================================  ===============================================================
``judge_audit`` (or empty)                 ``judge_audit.human[claim_id]`` = human_label and
                                           ``judge_audit.judge[claim_id]`` = judge_label (both required)
``context_precision_with_reference``,      ``verdicts.<metric>[i]`` = LABEL, where ``claim_id`` is the
``context_precision_without_reference``    0-based index i of the context in ``retrieved_contexts``
                                           (plain decimal); every index of the sample exactly once
``context_recall``                         ``verdicts.context_recall``: ``{"statement", "attributed": LABEL}``
``faithfulness``                           ``verdicts.faithfulness``: ``{"statement", "verdict": LABEL}``
                                           (claims in the CSV's row order)
=========================================  ===============================================================

A non-``judge_audit`` row with both labels also goes into the judge audit, under the claim ID
``<metric>:<claim_id>``, so the report shows the judge's bias against the human on those labels
as well; ``ImportResult.judge_audit`` pools those audits over all claims of all cases (agreement,
sensitivity, false-positive rate, mean bias with their counts). Every dataset sample becomes a case (with no verdicts when no row names it); a text the
dataset lacks is written as an empty string.

Every problem (the dataset's, then the CSV's: a missing column, an unknown sample id, a label that
is not 0/1, a duplicate row, a context index out of range or missing) is collected and raised at
once as a ``HarnessInputError`` naming the file, the row (1-based, and its line) and the column;
nothing is written. Only the first ``MAX_PROBLEMS`` problems are kept (the rest are counted: "... and
N more"), a sample's missing context indices to the first ``SHOWN_INDICES``, and text from the files
is quoted to its first ``QUOTE_CHARS`` characters, so a file of millions of bad rows or a cell of
megabytes gives a short message in bounded memory. A sample's
``MAX_LIST_ITEMS`` + 1-th claim for one list of its case (``judge_audit``, ``verdicts.<metric>``) is
refused at once, naming the labels file and row: the case loader would refuse the list anyway, and
only after every row was held. The output is checked by the case loader and written atomically.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import ragas_compat
from ragas_compat.atomic_file import write_atomically
from ragas_compat.cases import parse_suite_text
from ragas_compat.errors import CappedProblems, HarnessInputError
from ragas_compat.input_limits import MAX_LIST_ITEMS, Limits, decode_utf8, read_bytes
from ragas_compat.metrics.judge_audit import JudgeAuditSummary, judge_audit, judge_audit_summary
from ragas_compat.metrics.registry import metric as metric_spec
from ragas_compat.tools.record.cases import CP_KEYS, DEFAULT_CATEGORY, repeated_prompt_warnings
from ragas_compat.tools.record.dataset import MAX_PROBLEMS, Dataset, Sample, csv_field_limit, read_dataset
from ragas_compat.write_preflight import check_output_file

REQUIRED_COLUMNS = ("sample_id", "claim_id", "human_label", "judge_label")
OPTIONAL_COLUMNS = ("metric", "statement")
JUDGE_AUDIT = "judge_audit"
CLAIM_KEYS = {"context_recall": "attributed", "faithfulness": "verdict"}
IMPORTABLE = (JUDGE_AUDIT, *CP_KEYS, *CLAIM_KEYS)
LABELS = {"0": 0, "1": 1, "false": 0, "true": 1}
VERDICTS_FROM = ("judge", "human")
QUOTE_CHARS = 80        # characters of a text from the files quoted in a message
SHOWN_INDICES = 20      # missing context indices of a sample a message lists (the rest counted)


@dataclass(frozen=True)
class ImportResult:
    path: Path
    cases: int
    labelled: int          # cases with at least one verdict or audited claim
    rows: int              # CSV rows read
    audited: int           # claims in judge_audit maps, all cases
    warnings: tuple[str, ...] = ()  # the file's warnings (identical prompts labelled differently)
    judge_audit: JudgeAuditSummary | None = None  # every audited claim of every case pooled


@dataclass(frozen=True, slots=True)
class _Row:
    """One label row that passed ``_parse_rows``; slotted (no ``__dict__`` per row), as a file may
    hold millions of rows."""

    where: str             # "labels.csv: row 3 (line 4)"
    sample: Sample
    metric: str
    claim_id: str
    human: int | None
    judge: int | None
    statement: str


def _quoted(text: str) -> str:
    """``repr(text)``; past ``QUOTE_CHARS`` characters only the first ones and the length (a message
    names a 20 MB cell without echoing it)."""
    if len(text) <= QUOTE_CHARS:
        return repr(text)
    return f"{text[:QUOTE_CHARS]!r}... ({len(text):,} characters)"


def _label(cell: str | None, where: str, column: str, problems: CappedProblems) -> int | None:
    text = (cell or "").strip()
    if text == "":
        return None
    value = LABELS.get(text.lower())
    if value is None:
        problems.append(f"{where}: column {column!r}: expected 0, 1, true or false, got {_quoted(cell or '')}")
    return value


def _read_rows(path: Path, samples: dict[str, Sample], problems: CappedProblems) -> list[_Row]:
    name = path.name
    text = decode_utf8(read_bytes(path, "labels", allow_stdin=False), name, "labels")
    with csv_field_limit(Limits.current().max_input_bytes):
        return _parse_rows(name, text, samples, problems)


def _parse_rows(name: str, text: str, samples: dict[str, Sample], problems: CappedProblems) -> list[_Row]:
    """The rows without problems, each (sample, metric, claim ID) once; the problems go to ``problems``.
    A sample's list past ``MAX_LIST_ITEMS`` claims is a ``HarnessInputError`` at that row."""
    # the csv module over the text with newline="": a form feed or U+2028 in a statement stays in its cell
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise HarnessInputError(f"{name}: line 1: not valid CSV: {exc}", field="labels") from None
    if not header:
        raise HarnessInputError(f"{name}: the labels file is empty (expected a header: "
                                f"{', '.join(REQUIRED_COLUMNS)})", field="labels")
    header_problems = CappedProblems(MAX_PROBLEMS)
    for column in REQUIRED_COLUMNS:
        if column not in header:
            header_problems.append(f"{name}: line 1: missing column {column!r}")
    for column in header:
        if column not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS:
            header_problems.append(f"{name}: line 1: unknown column {_quoted(column)} (columns: "
                                   f"{', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)})")
    for column in REQUIRED_COLUMNS + OPTIONAL_COLUMNS:  # an unknown column given twice is unknown already
        if header.count(column) > 1:
            header_problems.append(f"{name}: line 1: column {column!r} given twice")
    if header_problems:
        raise HarnessInputError(f"{name}: {len(header_problems)} problem(s) in the labels header",
                                field="labels", problems=header_problems.shown(name))
    rows: list[_Row] = []
    seen: dict[tuple[str, str, str], str] = {}  # (sample, metric, claim ID) -> its row's where
    claims: dict[tuple[str, str], int] = {}     # (sample, list of its case) -> claims in it
    known = ", ".join(_quoted(s) for s in list(samples)[:5]) + (" ..." if len(samples) > 5 else "")
    try:
        for number, raw in enumerate(reader, 1):
            where = f"{name}: row {number} (line {reader.line_num})"
            if None in raw:
                problems.append(f"{where}: more cells than columns")
                continue
            if any(cell is None for cell in raw.values()):
                problems.append(f"{where}: fewer cells than columns")
                continue
            sample_id, claim_id = raw["sample_id"].strip(), raw["claim_id"].strip()
            metric = (raw.get("metric") or "").strip() or JUDGE_AUDIT
            before = len(problems)
            human = _label(raw["human_label"], where, "human_label", problems)
            judge = _label(raw["judge_label"], where, "judge_label", problems)
            if not sample_id:
                problems.append(f"{where}: column 'sample_id': empty")
            elif sample_id not in samples:
                problems.append(f"{where}: column 'sample_id': unknown sample id {_quoted(sample_id)} "
                                f"(the dataset's ids: {known})")
            if not claim_id:
                problems.append(f"{where}: column 'claim_id': empty")
            if metric not in IMPORTABLE:
                problems.append(f"{where}: column 'metric': {_quoted(metric)} is not importable; expected one of "
                                f"{', '.join(IMPORTABLE)} (empty: {JUDGE_AUDIT})")
                continue
            if not (sample_id in samples and claim_id and len(problems) == before):  # a bad row goes no further
                continue
            sample = samples[sample_id]
            key = (sample.id, metric, claim_id)  # the sample's own id string, not one more per row
            if key in seen:
                first = seen[key].removeprefix(f"{name}: ")
                problems.append(f"{where}: column 'claim_id': {_quoted(claim_id)} of sample {_quoted(sample_id)} "
                                f"({metric}) given twice (first in {first})")
                continue
            seen[key] = where
            _count_claim(claims, where, sample_id, metric, human, judge)
            statement = (raw.get("statement") or "").strip() or claim_id
            rows.append(_Row(where, sample, metric, claim_id, human, judge, statement))
    except csv.Error as exc:
        problems.append(f"{name}: line {reader.line_num}: not valid CSV: {exc}")
    if not rows and not problems:
        problems.append(f"{name}: no label rows (only a header)")
    return rows


def _count_claim(claims: dict[tuple[str, str], int], where: str, sample_id: str, metric: str,
                 human: int | None, judge: int | None) -> None:
    """Count the row's claim in each list of its sample's case it can fill (``verdicts.<metric>``;
    ``judge_audit`` for a judge_audit row or a row with both labels); past ``MAX_LIST_ITEMS`` in one
    list, refuse it here, before the rest of the file is held. A row counted that does not land in
    its list is a problem of ``_fill``, so the count never refuses a file that would import."""
    lists = [] if metric == JUDGE_AUDIT else [f"verdicts.{metric}"]
    if metric == JUDGE_AUDIT or (human is not None and judge is not None):
        lists.append(JUDGE_AUDIT)
    for name in lists:
        count = claims[sample_id, name] = claims.get((sample_id, name), 0) + 1
        if count > MAX_LIST_ITEMS:
            raise HarnessInputError(f"{where}: column 'claim_id': sample {_quoted(sample_id)} has more than "
                                    f"{MAX_LIST_ITEMS} claims for {name} (a case's lists hold at most "
                                    f"{MAX_LIST_ITEMS} items)", field="labels")


def _case(sample: Sample) -> dict[str, Any]:
    fields = sample.fields
    case: dict[str, Any] = {"id": sample.id, "category": sample.category or DEFAULT_CATEGORY}
    for text in ("user_input", "reference", "response"):
        case[text] = fields.get(text, "")
    case["retrieved_contexts"] = list(fields.get("retrieved_contexts") or [])
    for optional in ("reference_contexts", "retrieved_context_ids", "reference_context_ids"):
        if optional in fields:
            case[optional] = fields[optional]
    return case


def _fill(rows: list[_Row], verdicts_from: str, problems: CappedProblems) -> dict[str, dict[str, Any]]:
    """Per sample id: ``{"verdicts": {...}, "judge_audit": {"human": {...}, "judge": {...}}}``
    (``rows`` holds each sample, metric and claim ID once: ``_parse_rows``)."""
    out: dict[str, dict[str, Any]] = {}
    indices: dict[tuple[str, str], tuple[Sample, str, dict[int, int]]] = {}  # -> sample, first row, labels
    for row in rows:
        entry = out.setdefault(row.sample.id, {"verdicts": {}, "judge_audit": {"human": {}, "judge": {}}})
        audit = entry["judge_audit"]
        if row.metric == JUDGE_AUDIT:
            for column, value in (("human_label", row.human), ("judge_label", row.judge)):
                if value is None:
                    problems.append(f"{row.where}: column {column!r}: empty; a judge_audit row needs both labels")
            if row.human is not None and row.judge is not None:
                audit["human"][row.claim_id], audit["judge"][row.claim_id] = row.human, row.judge
            continue
        label = row.judge if verdicts_from == "judge" else row.human
        if label is None:
            problems.append(f"{row.where}: column '{verdicts_from}_label': empty; the {row.metric} verdicts are "
                            f"taken from it (--verdicts-from {verdicts_from})")
            continue
        lacking = [f for f in metric_spec(row.metric).fields_read if f not in row.sample.fields]
        if lacking:
            problems.append(f"{row.where}: column 'metric': {row.metric} needs the dataset column(s) "
                            f"{', '.join(lacking)}, which sample {_quoted(row.sample.id)} (dataset row "
                            f"{row.sample.row}) lacks")
            continue
        if row.human is not None and row.judge is not None:
            audit["human"][f"{row.metric}:{row.claim_id}"] = row.human
            audit["judge"][f"{row.metric}:{row.claim_id}"] = row.judge
        if row.metric in CP_KEYS:
            count = len(row.sample.fields.get("retrieved_contexts") or [])
            if not (row.claim_id.isdigit() and row.claim_id.isascii() and str(int(row.claim_id)) == row.claim_id):
                problems.append(f"{row.where}: column 'claim_id': expected a context index (0, 1, ... plain "
                                f"decimal) for {row.metric}, got {_quoted(row.claim_id)}")
            elif int(row.claim_id) >= count:
                problems.append(f"{row.where}: column 'claim_id': context index {row.claim_id} is out of range; "
                                f"sample {_quoted(row.sample.id)} has {count} retrieved context(s)")
            else:
                indices.setdefault((row.sample.id, row.metric), (row.sample, row.where, {}))[2][int(row.claim_id)] = label
            continue
        entry["verdicts"].setdefault(row.metric, []).append(
            {"statement": row.statement, CLAIM_KEYS[row.metric]: label})
    for (sample_id, metric), (sample, first, labelled) in indices.items():
        count = len(sample.fields.get("retrieved_contexts") or [])
        if len(labelled) < count:  # every index labelled is in range (checked above)
            absent = list(islice((i for i in range(count) if i not in labelled), SHOWN_INDICES))
            more = count - len(labelled) - len(absent)
            problems.append(f"{first}: column 'claim_id': sample {_quoted(sample_id)} ({metric}) labels "
                            f"{len(labelled)} of its {count} contexts; missing index(es) "
                            f"{', '.join(map(str, absent))}" + (f", ... and {more} more" if more else ""))
            continue
        out[sample_id]["verdicts"][metric] = [labelled[i] for i in range(count)]
    return out


def import_labels(dataset_path: Path, labels_path: Path, out: Path, *, verdicts_from: str = "judge",
                  suite: str | None = None) -> ImportResult:
    """Write the case file ``out`` from ``dataset_path`` and ``labels_path`` (module docstring)."""
    if verdicts_from not in VERDICTS_FROM:
        raise HarnessInputError(f"--verdicts-from {verdicts_from!r}: expected one of {', '.join(VERDICTS_FROM)}",
                                field="--verdicts-from", value=verdicts_from)
    check_output_file(out)  # before reading anything: a folder, a device, a read-only or full file system
    dataset = read_dataset(dataset_path, {})
    samples = {s.id: s for s in dataset.samples}
    problems = CappedProblems(MAX_PROBLEMS)
    rows = _read_rows(labels_path, samples, problems)
    filled = _fill(rows, verdicts_from, problems)
    if problems:
        raise HarnessInputError(f"{labels_path.name}: {len(problems)} problem(s) in the labels", field="labels",
                                problems=problems.shown(labels_path.name))
    cases = []
    for sample in dataset.samples:
        case = _case(sample)
        entry = filled.get(sample.id) or {}
        if entry.get("verdicts"):
            case["verdicts"] = {k: entry["verdicts"][k] for k in IMPORTABLE if k in entry["verdicts"]}
        if entry.get("judge_audit", {}).get("human"):
            case["judge_audit"] = entry["judge_audit"]
        cases.append(case)
    text = _document_text(dataset, labels_path, cases, verdicts_from, suite)
    parse_suite_text(text, source=out.name)  # never write a file `run` would refuse
    write_atomically(out, text)
    labelled = sum(1 for c in cases if "verdicts" in c or "judge_audit" in c)
    audited = sum(len(c.get("judge_audit", {}).get("human", {})) for c in cases)
    summary = judge_audit_summary((c["id"], judge_audit(c["judge_audit"]["human"], c["judge_audit"]["judge"]))
                                  for c in cases if "judge_audit" in c)
    return ImportResult(out, len(cases), labelled, len(rows), audited, tuple(repeated_prompt_warnings(cases)),
                        summary)


def _document_text(dataset: Dataset, labels_path: Path, cases: list[dict[str, Any]], verdicts_from: str,
                   suite: str | None) -> str:
    labels_sha = hashlib.sha256(read_bytes(labels_path, "labels", allow_stdin=False)).hexdigest()
    document = {
        "schema_version": 1,
        "suite": suite or f"{Path(dataset.name).stem}-imported",
        "description": (f"Imported by ragas-compat {ragas_compat.__version__} import from the dataset {dataset.name} "
                        f"(sha256 {dataset.sha256}) and the labels {labels_path.name} (sha256 {labels_sha}); "
                        f"verdict lists from the {verdicts_from}_label column, judge_audit from rows with both "
                        "labels."),
        "cases": cases,
    }
    warnings = repeated_prompt_warnings(cases)
    if warnings:
        document["warnings"] = warnings
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
