"""Datasets of RAG samples in: Ragas ``EvaluationDataset`` JSONL / JSON / CSV, old column names too;
a Parquet file (``pyarrow``) or a folder written by Hugging Face ``datasets``' ``save_to_disk``.

``read_dataset(path, required)`` returns the samples (``Sample``: the row number, the sample id and
its fields under Ragas's single-turn names) or raises one ``HarnessInputError`` listing every
problem, each naming the file, the row (1-based, as a person counts data rows; CSV also gives the
line) and the column: a missing column, a wrong type, an unreadable line, an empty dataset,
duplicate ids. Nothing is read half-way: all rows are valid or none is used.

Column names: Ragas's single-turn names (``user_input``, ``retrieved_contexts``,
``reference_contexts``, ``response``, ``reference``, ``retrieved_context_ids``,
``reference_context_ids``) and the old ones (``question``, ``contexts``, ``answer``,
``ground_truth``). An optional ``id`` column names the case (default ``row-N``), an optional
``category`` its case category. Other columns are ignored (listed in ``Dataset.ignored``).

CSV cells of list columns hold a JSON list or a Python list literal (what
``EvaluationDataset.to_csv`` writes through pandas), read with ``json`` or ``ast.literal_eval``.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragas_compat.cases import CATEGORIES
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import read_bytes

TEXT_COLUMNS = ("user_input", "response", "reference")
LIST_COLUMNS = ("retrieved_contexts", "reference_contexts")
ID_COLUMNS = ("retrieved_context_ids", "reference_context_ids")
COLUMNS = TEXT_COLUMNS + LIST_COLUMNS + ID_COLUMNS
OLD_NAMES = {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response",
             "ground_truth": "reference"}
META_COLUMNS = ("id", "category")
MAX_PROBLEMS = 50


@dataclass(frozen=True)
class Sample:
    row: int                    # 1-based data row
    id: str
    category: str | None
    fields: dict[str, Any]      # Ragas single-turn names -> value (only the columns present)


@dataclass(frozen=True)
class Dataset:
    name: str                   # file name (never a machine path)
    sha256: str
    samples: tuple[Sample, ...]
    columns: tuple[str, ...]    # the columns present, under Ragas's names
    ignored: tuple[str, ...]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                       (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _rows_jsonl(text: str, name: str, problems: list[str]) -> list[tuple[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((f"row {len(rows) + 1} (line {number})", json.loads(line)))
        except ValueError as exc:
            problems.append(f"{name}: line {number}: not valid JSON: {exc}")
            rows.append((f"line {number}", None))
    return rows


def _rows_json(text: str, name: str, problems: list[str]) -> list[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append(f"{name}: not valid JSON: {exc}")
        return []
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data = data["samples"]  # EvaluationDataset.to_dict()-like documents
    if not isinstance(data, list):
        problems.append(f"{name}: expected a JSON list of samples, got {_json_type(data)}")
        return []
    return [(f"row {i}", row) for i, row in enumerate(data, 1)]


def _list_cell(cell: str) -> Any:
    text = cell.strip()
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return cell  # reported as "expected a list, got a string"


def _rows_csv(text: str, name: str, problems: list[str]) -> list[tuple[str, Any]]:
    reader = csv.DictReader(text.splitlines(keepends=True))
    rows = []
    try:
        for i, raw in enumerate(reader, 1):
            row: dict[str, Any] = {}
            for key, cell in raw.items():
                if key is None:
                    problems.append(f"{name}: row {i} (line {reader.line_num}): more cells than columns")
                    continue
                column = OLD_NAMES.get(key, key)
                if cell is None:
                    continue
                row[key] = _list_cell(cell) if column in LIST_COLUMNS + ID_COLUMNS else cell
            rows.append((f"row {i} (line {reader.line_num})", row))
    except csv.Error as exc:
        problems.append(f"{name}: line {reader.line_num}: not valid CSV: {exc}")
    return rows


def _check_value(column: str, value: Any) -> str | None:
    """What is wrong with ``value`` for ``column`` (None: fine)."""
    if column in TEXT_COLUMNS:
        return None if isinstance(value, str) else f"expected a string, got {_json_type(value)}"
    if column in LIST_COLUMNS:
        if not isinstance(value, list):
            return f"expected a list of strings, got {_json_type(value)}"
        bad = next((i for i, item in enumerate(value) if not isinstance(item, str)), None)
        return None if bad is None else f"item {bad}: expected a string, got {_json_type(value[bad])}"
    if column in ID_COLUMNS:
        if not isinstance(value, list):
            return f"expected a list of IDs, got {_json_type(value)}"
        for i, item in enumerate(value):
            if not isinstance(item, (str, int, float)) or isinstance(item, bool) or (
                    isinstance(item, float) and not math.isfinite(item)):
                return f"item {i}: expected a string or number ID, got {_json_type(item)}"
    return None


def read_dataset(path: Path, required: dict[str, tuple[str, ...]]) -> Dataset:
    """Read and check ``path``; ``required`` maps each column a chosen metric needs to the metrics
    needing it (for the messages). Raises HarnessInputError (exit 2) listing every problem."""
    name = path.name
    problems: list[str] = []
    suffix = path.suffix.lower()
    if path.is_dir() or suffix == ".parquet":
        rows, digest = _rows_arrow(path, name)
        return _checked(name, digest, rows, problems, required)
    data = read_bytes(path, "dataset", allow_stdin=False)  # a regular file, within the input size limit
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HarnessInputError(f"{name}: not UTF-8 text ({exc})", field="dataset") from None
    if suffix in (".jsonl", ".ndjson"):
        rows = _rows_jsonl(text, name, problems)
    elif suffix == ".json":
        rows = _rows_json(text, name, problems)
    elif suffix == ".csv":
        rows = _rows_csv(text, name, problems)
    else:
        raise HarnessInputError(f"{name}: unknown dataset format {suffix or '(no extension)'!r}; expected .jsonl, "
                                ".json, .csv (Ragas EvaluationDataset), .parquet or a folder saved by Hugging Face "
                                "datasets' save_to_disk", field="dataset")
    return _checked(name, hashlib.sha256(data).hexdigest(), rows, problems, required)


def _rows_arrow(path: Path, name: str) -> tuple[list[tuple[str, Any]], str]:
    """Rows of a Parquet file (pyarrow) or a Hugging Face dataset folder (``datasets.load_from_disk``),
    and a hash of the bytes they were read from. Both libraries are optional (Ragas installs them)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        if path.is_dir():  # a folder: names and contents; a file: its bytes, as for the text formats
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        digest.update(read_bytes(file, "dataset", allow_stdin=False))
    try:
        if path.is_dir():
            import datasets

            loaded = datasets.load_from_disk(str(path))
            if isinstance(loaded, datasets.DatasetDict):
                if len(loaded) != 1:
                    raise HarnessInputError(f"{name}: a dataset with splits {', '.join(loaded)}; save the one "
                                            "split to record with save_to_disk", field="dataset")
                loaded = next(iter(loaded.values()))
            records = loaded.to_list()
        else:
            import pyarrow.parquet

            records = pyarrow.parquet.read_table(str(path)).to_pylist()
    except ImportError as exc:
        raise HarnessInputError(f"{name}: reading it needs {exc.name} (pip install datasets pyarrow)",
                                field="dataset") from None
    except HarnessInputError:
        raise
    except Exception as exc:  # the libraries' own errors: not a dataset they can read
        raise HarnessInputError(f"{name}: cannot read the dataset: {type(exc).__name__}: {exc}", field="dataset") from None
    return [(f"row {i}", record) for i, record in enumerate(records, 1)], digest.hexdigest()


def _checked(name: str, digest: str, rows: list[tuple[str, Any]], problems: list[str],
             required: dict[str, tuple[str, ...]]) -> Dataset:
    """Check every row; the Dataset, or HarnessInputError listing every problem."""
    if not rows and not problems:
        problems.append(f"{name}: the dataset is empty (no samples)")
    samples: list[Sample] = []
    present: set[str] = set()
    ignored: set[str] = set()
    seen_ids: dict[str, str] = {}
    for index, (where, raw) in enumerate(rows, 1):
        if raw is None:
            continue
        if not isinstance(raw, dict):
            problems.append(f"{name}: {where}: expected an object (one sample), got {_json_type(raw)}")
            continue
        fields: dict[str, Any] = {}
        reported: set[str] = set()
        for key, value in raw.items():
            column = OLD_NAMES.get(key, key)
            if column in COLUMNS:
                if column in fields:
                    problems.append(f"{name}: {where}: column {column!r} given twice (as {key!r} and its other name)")
                    continue
                if value is None or (value == "" and column not in TEXT_COLUMNS):
                    continue  # an absent value (pandas writes NaN/None for missing cells)
                wrong = _check_value(column, value)
                if wrong:
                    problems.append(f"{name}: {where}: column {key!r}: {wrong}")
                    reported.add(column)
                    continue
                fields[column] = value
            elif key not in META_COLUMNS:
                ignored.add(key)
        for column, metrics in required.items():
            if column not in fields and column not in reported:
                problems.append(f"{name}: {where}: missing column {column!r} (needed by {', '.join(metrics)})")
        sample_id = raw.get("id", f"row-{index}")
        if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)) or str(sample_id) == "":
            problems.append(f"{name}: {where}: column 'id': expected a non-empty string or an integer, "
                            f"got {_json_type(sample_id)}")
            continue
        sample_id = str(sample_id)
        if sample_id in seen_ids:
            problems.append(f"{name}: {where}: column 'id': duplicate id {sample_id!r} (first in {seen_ids[sample_id]})")
        seen_ids.setdefault(sample_id, where)
        category = raw.get("category")
        if category is not None and category not in CATEGORIES:
            problems.append(f"{name}: {where}: column 'category': expected one of {', '.join(CATEGORIES)}, "
                            f"got {category!r}")
        present.update(fields)
        samples.append(Sample(index, sample_id, category, fields))
    if problems:
        shown = problems[:MAX_PROBLEMS]
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"{name}: ... and {len(problems) - MAX_PROBLEMS} more problems")
        raise HarnessInputError(f"{name}: {len(problems)} problem(s) in the dataset", field="dataset", problems=shown)
    return Dataset(name, digest, tuple(samples),
                   tuple(c for c in COLUMNS if c in present), tuple(sorted(ignored)))
