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
``EvaluationDataset.to_csv`` writes through pandas), read with ``json`` or ``ast.literal_eval``
once a scan of the cell's tokens, which builds nothing, finds no list of more than
``MAX_LIST_ITEMS`` items, no brackets nested deeper than the depth limit and at most
``_PARTS_PER_ITEM`` tokens per allowed item in all (the parsers build an object per token: a
4 MB cell of a million items took 1.1 GB); a parser that still runs out of memory or recursion
is reported as such, and a cell Python refuses for a number of more than 4,300 digits as a number
longer than ``MAX_NUMBER_CHARS`` characters, as a JSON cell's is (not as "a string").

The reader is bounded and strict whatever the input (every problem is exit 2 naming the file):

- a text file is read through ``input_limits.read_bytes`` (a regular file within the input size
  limit: no FIFO, device or folder) and decoded as strict UTF-8; its bytes are the ones hashed;
- CSV goes through the ``csv`` module over the text opened with ``newline=""``, so a form feed, a
  vertical tab or U+2028 inside a quoted cell stays in its cell (``str.splitlines`` would cut the
  row there); a row with fewer or more cells than the header is refused, naming row and line;
- JSON and JSONL go through ``input_limits.loads_json`` (depth, number length, lone surrogates),
  JSONL split at ``\n`` only; a CSV cell's Python list literal is checked for lone surrogates too;
- at most ``Limits.max_cases`` rows: Parquet row counts and uncompressed sizes come from the file's
  footer, a Hugging Face folder's from its Arrow files, both before any row is materialised;
- a Hugging Face folder: every entry in it must be a regular file or a folder (a FIFO, a device or
  a symlink is refused before anything opens it), every file is hashed, and the data files its
  ``state.json`` names must be plain names of files in it.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import math
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ragas_compat.cases import CATEGORIES
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import Limits, decode_utf8, loads_json, read_bytes, size_text

TEXT_COLUMNS = ("user_input", "response", "reference")
LIST_COLUMNS = ("retrieved_contexts", "reference_contexts")
ID_COLUMNS = ("retrieved_context_ids", "reference_context_ids")
COLUMNS = TEXT_COLUMNS + LIST_COLUMNS + ID_COLUMNS
OLD_NAMES = {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response",
             "ground_truth": "reference"}
META_COLUMNS = ("id", "category")
MAX_PROBLEMS = 50
PARQUET_BATCH_ROWS = 256
MAX_FOLDER_ENTRIES = 1_000          # files and folders of a Hugging Face dataset folder
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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


def _rows_jsonl(text: str, name: str, problems: list[str], limits: Limits) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for number, line in enumerate(text.split("\n"), 1):  # "\n" only: U+2028 and friends are text
        if not line.strip():
            continue
        if len(rows) >= limits.max_cases:
            _too_many(name, limits)
        try:
            rows.append((f"row {len(rows) + 1} (line {number})",
                         loads_json(line, f"{name}: line {number}", limits=limits, field="dataset")))
        except HarnessInputError as exc:
            problems.append(str(exc))
            rows.append((f"line {number}", None))
    return rows


def _rows_json(text: str, name: str, problems: list[str], limits: Limits) -> list[tuple[str, Any]]:
    try:
        data = loads_json(text, name, limits=limits, field="dataset")
    except HarnessInputError as exc:
        problems.append(str(exc))
        return []
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data = data["samples"]  # EvaluationDataset.to_dict()-like documents
    if not isinstance(data, list):
        problems.append(f"{name}: expected a JSON list of samples, got {_json_type(data)}")
        return []
    if len(data) > limits.max_cases:
        _too_many(name, limits)
    return [(f"row {i}", row) for i, row in enumerate(data, 1)]


def _too_many(name: str, limits: Limits, count: int | None = None) -> NoReturn:
    has = f"{count:,} rows, more" if count is not None else "more rows"
    raise HarnessInputError(f"{name}: the dataset has {has} than the limit of {limits.max_cases:,} samples "
                            "(raise it with RAGAS_COMPAT_MAX_CASES=N)", field="dataset")


_PARTS_PER_ITEM = 8  # tokens per allowed item: a string or signed number, its comma, room for 'a' 'b'
# One token of a list cell, to count (never to parse): a whole string literal by Python's quoting
# rules (JSON's strings follow them too), a quote that opens no string, a comment, a string prefix,
# a bracket, a comma, a word or number, any other character; whitespace is skipped. The repeats are
# possessive: a plain one keeps a backtracking point per escape (457 MB for 4 million escapes).
_CELL_TOKEN = re.compile(r"""
    (?P<string>'{3}[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'{3}
              |"{3}[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"{3}
              |'(?!'')[^'\\]*+(?:\\.[^'\\]*+)*+'
              |"(?!"")[^"\\]*+(?:\\.[^"\\]*+)*+")
   |(?P<quote>['"])
   |(?P<comment>\#[^\r\n]*)
   |(?P<prefix>[A-Za-z]{1,2})(?=['"])
   |(?P<open>[\[({])|(?P<close>[\])}])|(?P<comma>,)
   |\w+|[^\s\w]""", re.VERBOSE | re.DOTALL)
_NOT_A_LITERAL = object()


def _scan_list_cell(text: str, limits: Limits) -> str | object | None:
    """Why the cell ``text`` is refused before a parser builds it (a list, tuple, set or dict of more
    than ``limits.max_list_items`` items, brackets nested deeper than ``limits.max_depth``, more than
    ``_PARTS_PER_ITEM`` tokens per allowed item), ``_NOT_A_LITERAL`` for an f-string (never a literal:
    the parser would parse the code inside it), or None: parse it. Tokens are streamed and counted,
    nothing is built; the scan stops at a quote that opens no string, where both parsers stop too."""
    most = limits.max_list_items
    budget = _PARTS_PER_ITEM * most
    too_many = f"more than {most:,} items; a case's lists hold at most {most:,} items"
    ended = [0]         # items ended by a comma, per open bracket (the first: outside every bracket)
    pending = [False]   # an item begun since the last comma, per open bracket
    parts = 0
    for match in _CELL_TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            continue
        if kind == "quote":
            return None
        if kind == "prefix" and set(match.group().lower()) & {"f", "t"}:
            return _NOT_A_LITERAL
        parts += 1
        if parts > budget:
            return (f"a list literal of more than {budget:,} tokens (strings, numbers, signs, commas, brackets); "
                    f"a case's lists hold at most {most:,} items")
        if kind == "comma":
            if pending[-1]:
                ended[-1] += 1
                pending[-1] = False
                if ended[-1] > most:
                    return too_many
        elif kind == "close":
            if len(ended) > 1 and ended.pop() + pending.pop() > most:
                return too_many
        else:
            pending[-1] = True
            if kind == "open":
                if len(ended) > limits.max_depth:
                    return f"brackets nested deeper than {limits.max_depth}"
                ended.append(0)
                pending.append(False)
    return too_many if any(count + begun > most for count, begun in zip(ended, pending, strict=True)) else None


def _long_number(text: str, limits: Limits) -> str | None:
    """The refusal of the first number token of the cell ``text`` longer than ``limits.max_number_chars``
    (outside strings, up to where the parsers stop), worded as ``loads_json`` words a JSON cell's; None
    if there is none."""
    for match in _CELL_TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group()
        if kind == "quote":
            return None
        if kind is None and token[0] in "0123456789" and len(token) > limits.max_number_chars:
            return (f"a number of {len(token)} characters ({token[:12]}...); numbers are limited to "
                    f"{limits.max_number_chars} characters")
    return None


def _list_cell(cell: str, limits: Limits) -> Any:
    text = cell.strip()
    if text == "":
        return None
    scanned = _scan_list_cell(text, limits)
    if scanned is _NOT_A_LITERAL:
        return cell  # reported as "expected a list, got a string", as ast.literal_eval refuses it
    if isinstance(scanned, str):
        return _Refused(scanned)
    try:
        if text[:1] in "[{":
            try:
                return loads_json(text, "cell", limits=limits)
            except HarnessInputError as exc:
                if "not valid JSON" not in str(exc):
                    return _Refused(str(exc).removeprefix("cell: "))
        try:
            return ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError):
            long_number = _long_number(text, limits)  # Python refuses more than 4,300 digits: not "a string"
            return cell if long_number is None else _Refused(long_number)  # else "expected a list, got a string"
    except (MemoryError, RecursionError) as exc:
        return _Refused(f"a list literal too large or too deeply nested for Python's parser ({type(exc).__name__})")


class _Refused:
    """A cell over a limit: too many items or tokens, too deep, a long number, a lone surrogate."""

    def __init__(self, why: str) -> None:
        self.why = why


@contextmanager
def csv_field_limit(limit: int) -> Iterator[None]:
    """The csv module's cell size limit raised to the input limit for one read (a context is long)."""
    previous = csv.field_size_limit()
    csv.field_size_limit(max(previous, limit))
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _rows_csv(text: str, name: str, problems: list[str], limits: Limits) -> list[tuple[str, Any]]:
    """Rows of a CSV text, through the csv module over the text with ``newline=""`` (line breaks inside
    quoted cells, form feeds and U+2028 included, stay in their cell); ragged rows are problems."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[str, Any]] = []
    with csv_field_limit(limits.max_input_bytes):
        try:
            header = next(reader, None)
            if header is None:
                return []
            for i, cells in enumerate(reader, 1):
                where = f"row {i} (line {reader.line_num})"
                if not cells:
                    continue  # a blank line
                if len(rows) >= limits.max_cases:
                    _too_many(name, limits)
                if len(cells) != len(header):
                    problems.append(f"{name}: {where}: {len(cells)} cells for the header's {len(header)} columns "
                                    f"({'more' if len(cells) > len(header) else 'fewer'} cells than columns)")
                    rows.append((where, None))
                    continue
                row: dict[str, Any] = {}
                for key, cell in zip(header, cells, strict=True):
                    column = OLD_NAMES.get(key, key)
                    row[key] = _list_cell(cell, limits) if column in LIST_COLUMNS + ID_COLUMNS else cell
                rows.append((where, row))
        except csv.Error as exc:
            problems.append(f"{name}: line {reader.line_num}: not valid CSV: {exc}")
    return rows


def _check_value(column: str, value: Any) -> str | None:
    """What is wrong with ``value`` for ``column`` (None: fine)."""
    if isinstance(value, _Refused):
        return value.why
    if column in TEXT_COLUMNS:
        if not isinstance(value, str):
            return f"expected a string, got {_json_type(value)}"
        return "a string with a lone surrogate (an unpaired \\ud800-\\udfff)" if _LONE_SURROGATE.search(value) else None
    if column in LIST_COLUMNS:
        if not isinstance(value, list):
            return f"expected a list of strings, got {_json_type(value)}"
        bad = next((i for i, item in enumerate(value) if not isinstance(item, str)), None)
        if bad is None:
            bad = next((i for i, item in enumerate(value) if _LONE_SURROGATE.search(item)), None)
            return None if bad is None else f"item {bad}: a string with a lone surrogate (an unpaired \\ud800-\\udfff)"
        return f"item {bad}: expected a string, got {_json_type(value[bad])}"
    if column in ID_COLUMNS:
        if not isinstance(value, list):
            return f"expected a list of IDs, got {_json_type(value)}"
        for i, item in enumerate(value):
            if not isinstance(item, (str, int, float)) or isinstance(item, bool) or (
                    isinstance(item, float) and not math.isfinite(item)):
                return f"item {i}: expected a string or number ID, got {_json_type(item)}"
            if isinstance(item, str) and _LONE_SURROGATE.search(item):
                return f"item {i}: a string with a lone surrogate (an unpaired \\ud800-\\udfff)"
            if isinstance(item, int) and abs(item) >= 10 ** 100:
                return f"item {i}: an integer ID of more than 100 digits"
    return None


def read_dataset(path: Path, required: dict[str, tuple[str, ...]]) -> Dataset:
    """Read and check ``path``; ``required`` maps each column a chosen metric needs to the metrics
    needing it (for the messages). Raises HarnessInputError (exit 2) listing every problem."""
    name = path.name
    limits = Limits.current()
    problems: list[str] = []
    suffix = path.suffix.lower()
    if path.is_dir():
        rows, digest = _rows_folder(path, name, limits)
        return _checked(name, digest, rows, problems, required)
    if suffix not in (".jsonl", ".ndjson", ".json", ".csv", ".parquet"):
        raise HarnessInputError(f"{name}: unknown dataset format {suffix or '(no extension)'!r}; expected .jsonl, "
                                ".json, .csv (Ragas EvaluationDataset), .parquet or a folder saved by Hugging Face "
                                "datasets' save_to_disk", field="dataset")
    data = read_bytes(path, "dataset", allow_stdin=False, limits=limits)  # a regular file, within the size limit
    digest = hashlib.sha256(data).hexdigest()
    if suffix == ".parquet":
        return _checked(name, digest, _rows_parquet(data, name, limits), problems, required)
    text = decode_utf8(data, name, "dataset")
    if suffix in (".jsonl", ".ndjson"):
        rows = _rows_jsonl(text, name, problems, limits)
    elif suffix == ".json":
        rows = _rows_json(text, name, problems, limits)
    else:
        rows = _rows_csv(text, name, problems, limits)
    return _checked(name, digest, rows, problems, required)


def _library_error(name: str, exc: Exception) -> HarnessInputError:
    if isinstance(exc, ImportError):
        return HarnessInputError(f"{name}: reading it needs {exc.name} (pip install datasets pyarrow)", field="dataset")
    return HarnessInputError(f"{name}: cannot read the dataset: {type(exc).__name__}: {exc}", field="dataset")


def _rows_parquet(data: bytes, name: str, limits: Limits) -> list[tuple[str, Any]]:
    """Rows of a Parquet file's bytes (the ones hashed), bounded as ``parquet_records`` reads them."""
    try:
        _, records = parquet_records(data, name, limits, field="dataset",
                                     too_many=lambda count: _too_many(name, limits, count))
    except HarnessInputError:
        raise
    except Exception as exc:  # ImportError, or the library's own errors: not a file it can read
        raise _library_error(name, exc) from None
    return [(f"row {i}", record) for i, record in enumerate(records, 1)]


def parquet_records(data: bytes, name: str, limits: Limits, *, field: str,
                    too_many: Callable[[int | None], NoReturn]) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, one dict per row) of a Parquet file's bytes (the dataset's, ``audit-run --scores``'),
    bounded before and while they are decoded: the footer's row count (``too_many(count)`` raises past
    ``limits.max_cases``) and uncompressed size are checked before any row is decoded; then, since the
    footer's size counts a dictionary page once however many rows repeat its values, what each decoded
    batch takes, and the rows counted again (a footer that undercounts: ``too_many(None)``). The library's
    own errors (ImportError without pyarrow, a file it cannot read) are the caller's to word."""
    import pyarrow
    import pyarrow.parquet

    parquet = pyarrow.parquet.ParquetFile(pyarrow.BufferReader(data))
    meta = parquet.metadata
    if meta.num_rows > limits.max_cases:
        too_many(meta.num_rows)
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if unpacked > limits.max_input_bytes:
        _unpacks_too_far(name, limits, size_text(unpacked), field)
    records: list[dict[str, Any]] = []
    decoded = 0
    for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS):
        decoded += batch.nbytes
        if decoded > limits.max_input_bytes:
            _unpacks_too_far(name, limits, f"more than {size_text(decoded)} after {len(records):,} rows", field)
        if len(records) + batch.num_rows > limits.max_cases:
            too_many(None)
        records.extend(batch.to_pylist())
    return list(parquet.schema_arrow.names), records


def _unpacks_too_far(name: str, limits: Limits, size: str, field: str) -> NoReturn:
    raise HarnessInputError(f"{name}: the Parquet data unpacks to {size}, more than the input limit of "
                            f"{size_text(limits.max_input_bytes)} (raise it with RAGAS_COMPAT_MAX_INPUT_BYTES=BYTES)",
                            field=field)


def _folder_files(folder: Path, name: str, limits: Limits) -> list[str]:
    """The relative names of the regular files under ``folder`` (sorted); a FIFO, a device, a socket
    or a symlink anywhere in it is refused from ``lstat``, before anything opens it."""
    files: list[str] = []
    pending = [""]
    seen = 0
    while pending:
        relative = pending.pop()
        try:
            entries = sorted(os.scandir(folder / relative), key=lambda e: e.name)
        except OSError as exc:
            raise HarnessInputError(f"{name}: cannot list {relative or 'the folder'}: {exc.strerror or exc}",
                                    field="dataset") from None
        for entry in entries:
            seen += 1
            if seen > MAX_FOLDER_ENTRIES:
                raise HarnessInputError(f"{name}: more than {MAX_FOLDER_ENTRIES} entries; not a dataset folder "
                                        "saved by save_to_disk", field="dataset")
            inner = f"{relative}/{entry.name}" if relative else entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                pending.append(inner)
            elif stat.S_ISREG(mode):
                files.append(inner)
            else:
                kind = "a symlink" if stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
                    "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" \
                    if stat.S_ISSOCK(mode) else "not a regular file"
                raise HarnessInputError(f"{name}: {inner} is {kind}; a dataset folder holds regular files only",
                                        field="dataset", value=inner)
    return sorted(files)


def _check_state(folder: Path, name: str, files: list[str], limits: Limits) -> None:
    """Every ``state.json`` of the folder names only data files that are in it (plain names)."""
    for state in (f for f in files if f == "state.json" or f.endswith("/state.json")):
        base = state.rpartition("/")[0]
        source = f"{name}/{state}"
        document = loads_json(decode_utf8(read_bytes(folder / state, "dataset", source=source, limits=limits),
                                          source, "dataset"), source, limits=limits, field="dataset")
        entries = document.get("_data_files") if isinstance(document, dict) else None
        if not isinstance(entries, list) or not entries:
            raise HarnessInputError(f"{source}: no _data_files list; not a folder saved by save_to_disk",
                                    field="dataset")
        for entry in entries:
            filename = entry.get("filename") if isinstance(entry, dict) else None
            inside = f"{base}/{filename}" if base else filename
            if not isinstance(filename, str) or "/" in filename or "\\" in filename or filename in ("", ".", "..") \
                    or inside not in files:
                raise HarnessInputError(f"{source}: _data_files names {filename!r}, which is not a file of the folder; "
                                        "only files inside the dataset folder are read", field="dataset",
                                        value=filename)


def _rows_folder(path: Path, name: str, limits: Limits) -> tuple[list[tuple[str, Any]], str]:
    """Rows of a Hugging Face dataset folder (``datasets.load_from_disk``) and a hash of every file in it
    (names and contents); the folder is checked (``_folder_files``, ``_check_state``) and the row
    count taken from the memory-mapped Arrow data before any row is materialised."""
    files = _folder_files(path, name, limits)
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(read_bytes(path / file, "dataset", source=f"{name}/{file}", limits=limits))
    _check_state(path, name, files, limits)
    try:
        import datasets

        loaded = datasets.load_from_disk(str(path))
        if isinstance(loaded, datasets.DatasetDict):
            if len(loaded) != 1:
                raise HarnessInputError(f"{name}: a dataset with splits {', '.join(loaded)}; save the one "
                                        "split to record with save_to_disk", field="dataset")
            loaded = next(iter(loaded.values()))
        if loaded.num_rows > limits.max_cases:
            _too_many(name, limits, loaded.num_rows)
        records = loaded.to_list()
    except HarnessInputError:
        raise
    except Exception as exc:  # ImportError, or the library's own errors: not a dataset it can read
        raise _library_error(name, exc) from None
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
