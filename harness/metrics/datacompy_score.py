"""DataCompyScore: response vs reference as CSV tables, matched rows or matched columns.

One metric per configuration of the class (``mode`` x ``metric``): ``datacompy_<rows|columns>_<precision|recall|f1>``.
They run on cases with ``"table_metrics": true``; ``response`` and ``reference`` are CSV texts.

The reference reads each text as a table with the standard library's ``csv`` (strict quoting): the first
record is the header, every further non-blank record a row; a cell is its field's text. Rows are paired
by position (datacompy's ``on_index=True`` over pandas' 0, 1, 2 ... index):

- rows: row i matches when both tables have a row i and its cells are equal in every column the two
  headers share; P = matched rows / response rows, R = matched rows / reference rows;
- columns: a column matches when both headers have it and its cells are equal in every row both
  tables have; P = matched columns / response columns, R = matched columns / reference columns;
- F1 = 2PR / (P + R).

Undefined policy: a text that is not a table (no header, an unclosed quote: ``unparseable_csv``; a row
with another field count than the header: ``ragged_csv``; a repeated column name: ``duplicate_column``);
a table with no row (rows mode: ``empty_response_rows`` / ``empty_reference_rows``); F1 when P or R is
undefined. F1 with both tables non-empty and nothing matched is 0 (P = R = 0: the harmonic mean of two
zeros, the limit of 2PR/(P+R); not undefined, since neither P nor R is).

Ragas reads both texts with ``pandas.read_csv`` and compares with ``datacompy.Compare``: column names
lower-cased, each column typed by pandas (integers, floats, booleans, text; ``""``, ``NA``, ``null`` ...
missing, and two missing cells equal) and, as datacompy's ``columns_equal`` does, cells compared as
numbers when both columns are numeric or every compared cell converts to a float (``"1"`` and ``"1.0"``
are then one value), else cell by cell: the named variant ``datacompy_typed_values`` recomputes the
counts under that reading (modelled on datacompy 0.7.3, the release the pinned pandas admits). The oracle
(``ragas_compat.metrics.oracles.datacompy_oracle``) is datacompy itself on pandas' tables.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics import oracles
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, ExplainInput, FuzzDraw, MetricSpec, Quantity, RagasTargets

FIELDS = ("reference", "response")
REQUIRES = ("table_metrics",)
MODES = ("rows", "columns")
SCORES = ("precision", "recall", "f1")
TEXTS_HELP = ("--retrieved JSON-LIST --reference JSON-LIST: the response and the reference CSV text, each a "
              "one-item list (e.g. --retrieved '[\"id,name\\n1,Alice\"]' --reference '[\"id,name\\n1,Alice\\n2,Bob\"]')")

TYPED_VALUES = ("Ragas reads both texts with pandas.read_csv and compares them with datacompy.Compare: column names "
                "lower-cased, each column typed by pandas (integers, floats, booleans or text; '', 'NA', 'null' ... "
                "are missing and two missing cells are equal), and cells compared as numbers when both columns are "
                "numeric or every compared cell converts to a float, so '2.5' and '2.50' are one value")


# details key: under datacompy's reading nothing matches (so Ragas's F1 is 0/0: NaN, ZeroDivisionError or 0.0)
READS_NO_MATCH = "datacompy_reads_no_match"


class TableError(ValueError):
    """The text is not a table; ``reason`` is the undefined reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Table:
    """A CSV table: the header's column names and the rows' cells (one tuple per row)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]

    def column(self, name: str) -> tuple[object, ...]:
        i = self.columns.index(name)
        return tuple(row[i] for row in self.rows)


def read_table(text: str) -> Table:
    """The table in ``text`` (cells as written); TableError when it is not one."""
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline=""), strict=True) if r]
    except csv.Error as exc:
        raise TableError("unparseable_csv", f"not CSV: {exc}") from None
    if not records:
        raise TableError("unparseable_csv", "no header row")
    header, *rows = records
    if len(set(header)) != len(header):
        raise TableError("duplicate_column", f"a column name is repeated in the header {header!r}")
    for n, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise TableError("ragged_csv", f"row {n} has {len(row)} fields, the header {len(header)}")
    return Table(tuple(header), tuple(tuple(r) for r in rows))


# --------------------------------------------------------------------------- pandas' reading (the variant)

# pandas.read_csv's default missing-value strings (keep_default_na=True)
PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_INT = re.compile(r"\s*[+-]?\d+\s*")
_FLOAT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_BOOLS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}


NUMERIC = ("int", "float", "bool")


def _typed_column(cells: Sequence[object]) -> tuple[str, tuple[object, ...]]:
    """One column as pandas types it: (dtype kind, values); missing cells None. Integers (a missing cell
    makes the column float), floats, booleans (only without a missing cell), else text ("object")."""
    present = [c for c in cells if c not in PANDAS_NA]
    typed = [None if c in PANDAS_NA else c for c in cells]
    if present and all(_INT.fullmatch(str(c)) for c in present):
        return "int" if len(present) == len(cells) else "float", tuple(None if v is None else int(str(v)) for v in typed)
    if not present or all(_FLOAT.fullmatch(str(c)) for c in present):
        return "float", tuple(None if v is None else float(str(v)) for v in typed)
    if all(c in _BOOLS for c in present):
        return "bool" if len(present) == len(cells) else "object", tuple(
            None if v is None else _BOOLS[str(v)] for v in typed)
    return "object", tuple(typed)


@dataclass(frozen=True)
class TypedTable:
    """A table as pandas reads it and datacompy names its columns: lower-cased names, (kind, values) per column."""

    columns: tuple[str, ...]
    data: tuple[tuple[str, tuple[object, ...]], ...]
    n_rows: int


def as_pandas_reads(table: Table) -> TypedTable:
    """``table`` as datacompy sees it: lower-cased column names, each column typed by pandas."""
    return TypedTable(tuple(str(c).lower() for c in table.columns),
                      tuple(_typed_column([row[i] for row in table.rows]) for i in range(len(table.columns))),
                      len(table.rows))


def _as_float(value: object) -> float:
    return float("nan") if value is None else float(value)  # type: ignore[arg-type]


def _numeric_equal(a: Sequence[object], b: Sequence[object]) -> list[bool]:
    fa, fb = [_as_float(v) for v in a], [_as_float(v) for v in b]
    return [x == y or (x != x and y != y) for x, y in zip(fa, fb, strict=True)]


def datacompy_column_equal(a: tuple[str, tuple[object, ...]], b: tuple[str, tuple[object, ...]],
                           rows: int) -> list[bool]:
    """datacompy's ``columns_equal`` (absolute and relative tolerance 0) on the first ``rows`` cells of two
    typed columns: two numeric columns compare as numbers (two missing cells equal); otherwise, when every
    one of those cells converts to a float, as floats; else cell by cell (a text never equals a number)."""
    (kind_a, values_a), (kind_b, values_b) = a, b
    va, vb = values_a[:rows], values_b[:rows]
    if kind_a in NUMERIC and kind_b in NUMERIC:
        return _numeric_equal(va, vb)
    try:
        return _numeric_equal([_as_float(v) for v in va], [_as_float(v) for v in vb])
    except (TypeError, ValueError):
        pass
    return [(x is None and y is None) or (x is not None and y is not None and isinstance(x, str) == isinstance(y, str)
                                          and x == y) for x, y in zip(va, vb, strict=True)]


# --------------------------------------------------------------------------- the counts

@dataclass(frozen=True)
class Counts:
    """Matched units and each table's units (rows or columns)."""

    matched: int
    response: int
    reference: int


def counts(mode: str, reference: Table, response: Table) -> Counts:
    """Matched rows (cells equal in every shared column) or matched columns (cells equal in every shared row)."""
    shared = [c for c in reference.columns if c in response.columns]
    overlap = min(len(reference.rows), len(response.rows))
    equal = {c: [x == y for x, y in zip(reference.column(c)[:overlap], response.column(c)[:overlap], strict=True)]
             for c in shared}
    return _matched(mode, equal, overlap, reference, response)


def typed_counts(mode: str, reference: TypedTable, response: TypedTable) -> Counts:
    """The counts as datacompy makes them from pandas' reading (``as_pandas_reads``)."""
    shared = [c for c in reference.columns if c in response.columns]
    overlap = min(reference.n_rows, response.n_rows)
    equal = {c: datacompy_column_equal(reference.data[reference.columns.index(c)],
                                       response.data[response.columns.index(c)], overlap) for c in shared}
    return _matched(mode, equal, overlap, reference, response)


def _matched(mode: str, equal: dict[str, list[bool]], overlap: int, reference: Table | TypedTable,
             response: Table | TypedTable) -> Counts:
    if mode == "rows":
        n_resp = response.n_rows if isinstance(response, TypedTable) else len(response.rows)
        n_ref = reference.n_rows if isinstance(reference, TypedTable) else len(reference.rows)
        return Counts(sum(all(flags[i] for flags in equal.values()) for i in range(overlap)), n_resp, n_ref)
    return Counts(sum(all(flags) for flags in equal.values()), len(response.columns), len(reference.columns))


def score(mode: str, metric: str, c: Counts) -> tuple[Fraction | None, str | None]:
    """(value, undefined reason) of ``metric`` from the counts."""
    precision = Fraction(c.matched, c.response) if c.response else None
    recall = Fraction(c.matched, c.reference) if c.reference else None
    empty = {"precision": f"empty_response_{mode}", "recall": f"empty_reference_{mode}"}
    if metric == "precision":
        return precision, None if precision is not None else empty["precision"]
    if metric == "recall":
        return recall, None if recall is not None else empty["recall"]
    if precision is None or recall is None:
        return None, empty["precision"] if precision is None else empty["recall"]
    if precision + recall == 0:  # both defined and 0: nothing matched in two non-empty tables
        return Fraction(0), None
    return 2 * precision * recall / (precision + recall), None


def _unit_denominator(mode: str, metric: str) -> str:
    return {"precision": f"response {mode}", "recall": f"reference {mode}", "f1": "P + R (harmonic mean)"}[metric]


def _outcome(mode: str, metric: str) -> Callable[[Case], ReferenceOutcome]:
    name = f"datacompy_{mode}_{metric}"
    denominator = _unit_denominator(mode, metric)

    def compute(case: Case) -> ReferenceOutcome:
        details: dict[str, Any] = {"oracle": oracles.datacompy_oracle(mode, metric, case.reference, case.response)}
        try:
            reference, response = read_table(case.reference), read_table(case.response)
        except TableError as exc:
            details["table_error"] = str(exc)
            return ReferenceOutcome(name, None, exc.reason, None, {}, details, denominator)
        c = counts(mode, reference, response)
        value, undefined = score(mode, metric, c)
        details.update({"matched": c.matched, f"response_{mode}": c.response, f"reference_{mode}": c.reference})
        alternatives: dict[str, Any] = {}
        typed = typed_counts(mode, as_pandas_reads(reference), as_pandas_reads(response))
        details[READS_NO_MATCH] = typed.matched == 0
        if typed != c:
            typed_value, _ = score(mode, metric, typed)
            if typed_value is not None:
                alternatives["variant:datacompy_typed_values"] = typed_value
                details["variants"] = {"datacompy_typed_values": TYPED_VALUES}
                details["typed_matched"] = typed.matched
        if value is not None:
            # Ragas divides in doubles (matched / rows, then 2pr / (p + r)): recomputing that
            p = c.matched / c.response if c.response else 0.0
            r = c.matched / c.reference if c.reference else 0.0
            alternatives["rounding"] = {"precision": p, "recall": r}.get(metric, 2 * (p * r) / (p + r) if p + r else 0.0)
            details["ragas_semantics"] = {"rounding": "Ragas divides in doubles (2 * (p * r) / (p + r))"}
        return ReferenceOutcome(name, value, undefined, None, alternatives, details, denominator)
    return compute


# --------------------------------------------------------------------------- fuzz and explain

_HEADERS = ("id", "name", "city", "score", "ok")
_CELLS = ("1", "2", "3", "1.0", "01", "2.5", "Alice", "Bob", "alice", "Paris", "", "NA", "null", "True", "false",
          " x", "x", "a,b", 'say "hi"', "naïve", "東京", "-0", "1e3")


def _table(rng: random.Random) -> tuple[list[str], list[list[str]]]:
    columns = rng.sample(_HEADERS, rng.randint(1, 4))
    if rng.random() < 0.03:   # two names equal once lower-cased (datacompy refuses the table)
        columns.append(columns[0].upper())
    rows = [[rng.choice(_CELLS) for _ in columns] for _ in range(rng.choice((0, 1, 2, 2, 3, 4)))]
    return columns, rows


def _csv(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def fuzz_tables(draw: FuzzDraw) -> dict[str, Any]:
    """Two CSV tables: independent, identical, one row or column changed, added or dropped, or a column
    name upper-cased; rarely a table with two names equal once lower-cased."""
    rng = draw.rng
    columns, rows = _table(rng)
    shape = rng.random()
    r_columns, r_rows = list(columns), [list(r) for r in rows]
    if shape < 0.15:
        pass
    elif shape < 0.35 and r_rows:
        row = rng.choice(r_rows)
        row[rng.randrange(len(row))] = rng.choice(_CELLS)
    elif shape < 0.5:
        r_rows.append([rng.choice(_CELLS) for _ in r_columns])
    elif shape < 0.6 and r_rows:
        r_rows.pop(rng.randrange(len(r_rows)))
    elif shape < 0.7:
        extra = rng.choice([h for h in _HEADERS if h not in r_columns] or ["extra"])
        r_columns.append(extra)
        r_rows = [r + [rng.choice(_CELLS)] for r in r_rows]
    elif shape < 0.8:
        r_columns = [c.upper() if rng.random() < 0.5 else c for c in r_columns]
        if len(set(r_columns)) != len(r_columns):
            r_columns = list(columns)
    else:
        r_columns, r_rows = _table(rng)
    reference, response = _csv(columns, rows), _csv(r_columns, r_rows)
    if rng.random() < 0.5:
        reference, response = response, reference
    return {"table_metrics": True, "reference": reference, "response": response}


def explain_tables(given: ExplainInput) -> dict[str, Any]:
    response = str(given.retrieved[0]) if given.retrieved else ""
    reference = str(given.reference[0]) if given.reference else ""
    return {"table_metrics": True, "response": response, "reference": reference}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    quantities = [Quantity(reference.metric, reference.number)]
    formulas = [f"{reference.metric} = {reference.value if reference.value is not None else 'undefined'}"
                f" ({reference.undefined_reason or reference.denominator})"]
    if "matched" in reference.details:
        formulas.append(", ".join(f"{k} = {v}" for k, v in reference.details.items()
                                  if k == "matched" or k.startswith(("response_", "reference_"))))
    oracle = reference.details.get("oracle")
    if isinstance(oracle, dict):
        quantities.append(Quantity("oracle", oracle.get("value"), oracle.get("library", "")))
        formulas.append(f"oracle: {oracle.get('call')} = {oracle.get('value', oracle.get('absent'))}")
    for key, value in reference.alternatives.items():
        quantities.append(Quantity(key, value if value is None or isinstance(value, Fraction) else float(value)))
    return quantities, formulas


def _spec(mode: str, metric: str) -> MetricSpec:
    name = f"datacompy_{mode}_{metric}"
    ragas = RagasTargets(("DataCompyScore",), ("DataCompyScore",), "ragas.metrics._datacompy_score",
                         (("mode", mode), ("metric", metric)))
    unit = "rows (paired by position; cells equal in every shared column)" if mode == "rows" else \
        "columns (in both headers; cells equal in every row both tables have)"
    return MetricSpec(
        name=name,
        reference_on=f"{metric} of matched {unit}, CSV read with the csv module (cells as written); oracle datacompy",
        ragas=ragas, fields_read=FIELDS, denominator=_unit_denominator(mode, metric),
        undefined_policy=("None when a text is not a table ('unparseable_csv', 'ragged_csv', 'duplicate_column'; "
                          "Ragas: NaN when pandas cannot read it), when the divided-by table has no "
                          f"{mode} ('empty_response_{mode}' / 'empty_reference_{mode}'); F1 with nothing matched in two "
                          "non-empty tables is 0 (P = R = 0)."),
        compute=_outcome(mode, metric), requires=REQUIRES, fuzz_inputs=fuzz_tables,
        explain=ExplainAdapter(command=name.replace("_", "-"), takes="texts", inputs_help=TEXTS_HELP, targets=ragas.ids(),
                               case_inputs=explain_tables, quantities=_quantities),
        configure=_configure(mode, metric))


# the constructor defaults of DataCompyScore (both APIs, Ragas 0.4.3)
DEFAULT_MODE, DEFAULT_METRIC = "rows", "f1"


def _configure(mode: str, metric: str) -> Callable[..., Any]:
    """Options as data: the metric of one (mode, metric) reads the configurations naming them (an option not
    given is the class's default: rows, f1)."""
    compute = _outcome(mode, metric)

    def configure(options: Any) -> Any:
        own = options.get("mode", DEFAULT_MODE) == mode and options.get("metric", DEFAULT_METRIC) == metric
        return compute if own else None
    return configure


SPECS: tuple[MetricSpec, ...] = tuple(_spec(mode, metric) for mode in MODES for metric in SCORES)
