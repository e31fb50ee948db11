"""report.json format 5: a keyed table's rows leave out what their key holds, and readers put it back.

A results row is keyed ``"<case_id>|<ragas_target>"`` and a legacy-vs-collections pair
``"<case_id>|<legacy_target> vs <collections_target>"``; format 4 also wrote ``case_id`` and
``ragas_target`` in every row and the two rows' keys in every pair (about a seventh of report.json at
50,000 cases). ``table_rows`` / ``keyed_rows`` / ``pair_rows`` give the rows of either format alike.
"""

from __future__ import annotations

import json

import pytest

from ragas_compat.report.json_report import (
    PAIR_COLUMNS,
    PAIR_KEY,
    RESULT_COLUMNS,
    RESULT_KEY,
    KeyedTable,
    _layout,
    keyed_rows,
    pair_key,
    pair_rows,
    row_key,
    table_rows,
)


def _written(table: KeyedTable) -> dict:
    """The table as report.json lays it out, parsed again."""
    return json.loads("".join(_layout({"table": table}, 0)))["table"]


def _result(case_id: str, target: str, value: float) -> dict:
    row = {column: None for column in RESULT_COLUMNS}
    return {**row, "case_id": case_id, "ragas_target": target, "metric": "m", "ragas_value": value, "drift": []}


def test_results_rows_are_written_without_the_key_columns_and_read_back_whole():
    rows = [_result("a|b", "legacy:X", 0.5), _result("a|b", "legacy:X", 0.25), _result("a|b", "collections:Y", 1.0),
            _result("c~12", "legacy:X[mode=precision]", 0.0)]
    table = KeyedTable(RESULT_COLUMNS, lambda: ((row_key(r["case_id"], r["ragas_target"]), r) for r in rows),
                       key=RESULT_KEY)
    section = _written(table)
    assert section["key"] == RESULT_KEY
    assert "case_id" not in section["columns"] and "ragas_target" not in section["columns"]
    assert all(len(values) == len(RESULT_COLUMNS) - 2 for values in section["data"].values())
    assert list(section["data"]) == ["a|b|legacy:X", "a|b|legacy:X#2", "a|b|collections:Y",
                                     "c~12|legacy:X[mode=precision]"]
    assert table_rows(section) == rows  # a case id holding "|" and a repeated key read back as written
    assert [list(row) for row in table_rows(section)] == [list(RESULT_COLUMNS)] * len(rows)  # in column order


def test_pairs_name_their_rows_by_the_pair_key_alone():
    pair = {"legacy_row": row_key("q|1", "legacy:L"), "collections_row": row_key("q|1", "collections:C"),
            "classification": "identical", "explanation": "0123456789abcdef", "expected_classification": None,
            "explained_by": None, "unexpected": False, "drift": []}
    table = KeyedTable(PAIR_COLUMNS, lambda: [(pair_key("q|1", "legacy:L", "collections:C"), pair)], key=PAIR_KEY)
    section = _written(table)
    assert section["columns"] == list(PAIR_COLUMNS[2:])
    assert table_rows(section) == [pair]
    results = KeyedTable(RESULT_COLUMNS, lambda: [(row_key("q|1", r["ragas_target"]), r) for r in (
        _result("q|1", "legacy:L", 0.5), _result("q|1", "collections:C", 0.75))], key=RESULT_KEY)
    [joined] = pair_rows({"results": _written(results), "api_paths": {"results": section}})
    assert (joined["case_id"], joined["legacy_target"], joined["collections_target"]) == \
        ("q|1", "legacy:L", "collections:C")
    assert (joined["legacy_value"], joined["collections_value"]) == (0.5, 0.75)


def test_a_format_4_table_is_read_as_it_was_written():
    row = _result("a", "legacy:X", 0.5)
    section = {"columns": list(RESULT_COLUMNS), "data": {"a|legacy:X": [row[c] for c in RESULT_COLUMNS]}}
    assert table_rows(section) == [row]
    assert keyed_rows(section) == {"a|legacy:X": row}


def test_an_unknown_key_layout_is_refused():
    with pytest.raises(ValueError, match="unknown keyed table layout"):
        table_rows({"key": "<something else>", "columns": ["v"], "data": {"a|b": [1]}})
