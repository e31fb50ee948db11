"""Read the scores table a Ragas run reported: ``EvaluationResult.to_pandas()`` saved as CSV
(``to_csv(path, index=False)``) or Parquet (``to_parquet(path)``).

One row per dataset row, in the dataset's order; the sample's columns (``user_input``,
``retrieved_contexts`` ...) and one column per metric (``metric.name``, ``name(mode=...)`` for a mode
metric). A score cell is a float; an empty cell (CSV) or a null (Parquet) is NaN, as pandas writes
them. pandas writes a float by its shortest round-trip ``repr``, so ``float(cell)`` is bit-exact.
Problems (a cell that is not a number, a row count that differs from the traces, a ``user_input`` that
is not the traced row's) are ``HarnessInputError``s naming the file, row and column; nothing is written.

The table is bounded before it is built: the file is read within the input size limit
(``input_limits.read_bytes``), and it has one row per dataset sample, so at most ``Limits.max_cases`` rows
(``RAGAS_COMPAT_MAX_CASES``). A CSV is refused at the first row past that limit, as it is read; a Parquet
file from its footer's row count and uncompressed size before any row is decoded, then batch by batch
from what the decoded rows take (a dictionary page can repeat one long value for every row).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import (
    MAX_CASES_ENV,
    MAX_NUMBER_CHARS,
    Limits,
    decode_utf8,
    read_bytes,
    source_name,
)
from ragas_compat.tools.record.dataset import csv_field_limit, parquet_records

MAX_PROBLEMS = 20


@dataclass(frozen=True)
class ScoresTable:
    source: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]      # column -> cell (text for CSV, the value for Parquet)

    def score(self, row: int, column: str) -> tuple[float | None, str | None]:
        """The score in ``column`` of ``row`` (NaN for an empty cell), or (None, why it is not a number)."""
        cell = self.rows[row].get(column)
        if cell is None or cell == "":
            return math.nan, None
        if isinstance(cell, bool):
            return None, f"{cell!r} is not a score"
        if isinstance(cell, (int, float)):
            return float(cell), None
        text = str(cell).strip()
        if len(text) > MAX_NUMBER_CHARS:
            return None, f"a cell of {len(text)} characters is not a score"
        try:
            return float(text), None
        except ValueError:
            return None, f"{text[:40]!r} is not a number"

    def where(self, row: int, column: str) -> str:
        line = f" (line {self.rows[row]['__line__']})" if "__line__" in self.rows[row] else ""
        return f"{self.source}: row {row}{line}, column {column!r}"


def read_scores(path: Path, limits: Limits | None = None) -> ScoresTable:
    """The table at ``path`` (``.csv`` or ``.parquet``)."""
    limits = limits or Limits.current()
    source = source_name(path)
    data = read_bytes(path, "scores", limits=limits, allow_stdin=False)
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return _parquet(data, source, limits)
    if suffix != ".csv":
        raise HarnessInputError(f"{source}: expected the scores table as .csv or .parquet (to_pandas().to_csv(...) "
                                "or .to_parquet(...))", field="--scores")
    text = decode_utf8(data, source, "scores")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    try:
        with csv_field_limit(limits.max_input_bytes):
            header = reader.fieldnames
            if not header:
                raise HarnessInputError(f"{source}: the scores table is empty (expected to_pandas()'s header)",
                                        field="--scores")
            for number, raw in enumerate(reader):
                if number >= limits.max_cases:
                    raise _too_many(source, limits, f"more than {limits.max_cases:,} rows (line {reader.line_num} "
                                    "is past them)")
                if None in raw or any(v is None for v in raw.values()):
                    raise HarnessInputError(f"{source}: row {number} (line {reader.line_num}): the cells do not "
                                            "match the header (a cut or edited table)", field="--scores")
                rows.append({**raw, "__line__": reader.line_num})
    except csv.Error as exc:
        raise HarnessInputError(f"{source}: line {reader.line_num}: not valid CSV: {exc}", field="--scores") from None
    return ScoresTable(source, tuple(header), tuple(rows))


def _too_many(source: str, limits: Limits, has: str) -> HarnessInputError:
    return HarnessInputError(f"{source}: the scores table has {has}; it has one row per dataset sample, at most "
                             f"{limits.max_cases:,} (raise it with {MAX_CASES_ENV}=N)", field="--scores")


def _parquet(data: bytes, source: str, limits: Limits) -> ScoresTable:
    """The rows of a Parquet file's bytes, bounded as the dataset reader reads a Parquet dataset
    (``record.dataset.parquet_records``)."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise HarnessInputError(f"{source}: reading Parquet needs {exc.name} (pip install pyarrow), or save the "
                                "table as CSV", field="--scores") from None

    def too_many(count: int | None) -> NoReturn:
        raise _too_many(source, limits, f"{count:,} rows" if count is not None else
                        f"more than {limits.max_cases:,} rows")

    try:
        names, records = parquet_records(data, source, limits, field="--scores", too_many=too_many)
    except HarnessInputError:
        raise
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        raise HarnessInputError(f"{source}: not a readable Parquet file: {exc}", field="--scores") from None
    columns = tuple(name for name in names if not name.startswith("__index_level_"))
    rows = tuple({name: record.get(name) for name in columns} for record in records)
    return ScoresTable(source, columns, rows)
