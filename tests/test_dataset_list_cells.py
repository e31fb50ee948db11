"""A CSV dataset's list cells (``retrieved_contexts`` and the like: a JSON list or a pandas-style Python
list literal) are bounded before a parser builds them.

``ast.literal_eval`` builds an object per token: a 4 MB cell ``['a','a',...]`` of a million items took
1.1 GB, and 8 million items ran out of memory, reported as "expected a list of strings, got a string".
Now a cell of more than ``MAX_LIST_ITEMS`` items, brackets nested deeper than the depth limit or too
many tokens is refused from a scan that builds nothing, naming the file, the row and the column; a
parser that runs out of memory or recursion says so; every cell that read before reads the same.
"""

from __future__ import annotations

import ast
import csv
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import MAX_DEPTH, MAX_LIST_ITEMS
from ragas_compat.tools.record.dataset import read_dataset

runner = CliRunner()
OLD = {"contexts": "retrieved_contexts"}


def write_csv(path: Path, cells: list[str], column: str = "retrieved_contexts") -> Path:
    """A CSV of one sample per cell (through the csv module, as pandas quotes it)."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "user_input", column])
        writer.writerows([f"s{i}", "When?", cell] for i, cell in enumerate(cells, 1))
    return path


def problems_of(path: Path) -> str:
    with pytest.raises(HarnessInputError) as caught:
        read_dataset(path, {})
    return " ".join(caught.value.problems)


def python_list(n: int, item: str = "'a'") -> str:
    return "[" + ", ".join([item] * n) + "]"


def test_one_item_over_the_limit_is_exit_2_naming_the_dataset_row_and_column(tmp_path):
    dataset = write_csv(tmp_path / "rag.csv", ["['fine']", python_list(MAX_LIST_ITEMS + 1)])
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label\ns1,c1,1,1\n", encoding="utf-8")
    out = tmp_path / "case.json"
    result = runner.invoke(app, ["import", str(dataset), str(labels), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert (f"rag.csv: row 2 (line 3): column 'retrieved_contexts': more than {MAX_LIST_ITEMS:,} items"
            in " ".join(result.output.split())), result.output
    assert "case.json" not in result.output
    assert not out.exists()


@pytest.mark.parametrize("cell", [python_list(MAX_LIST_ITEMS), python_list(MAX_LIST_ITEMS)[:-1] + ",]",
                                  json.dumps(["a"] * MAX_LIST_ITEMS)], ids=["python", "trailing-comma", "json"])
def test_a_list_at_the_limit_still_reads(tmp_path, cell):
    loaded = read_dataset(write_csv(tmp_path / "rag.csv", [cell]), {})
    assert loaded.samples[0].fields["retrieved_contexts"] == ["a"] * MAX_LIST_ITEMS


@pytest.mark.parametrize(("cell", "expected"), [
    (python_list(200_000), f"more than {MAX_LIST_ITEMS:,} items"),
    (json.dumps(["a"] * 200_000), f"more than {MAX_LIST_ITEMS:,} items"),
    ("[" + python_list(200_000) + "]", f"more than {MAX_LIST_ITEMS:,} items"),     # nested: every list counts
    (", ".join(["'a'"] * 200_000), f"more than {MAX_LIST_ITEMS:,} items"),          # a bare tuple
    ("[" + " ".join(["'a'"] * 200_000) + "]", "a list literal of more than"),       # one string, 200,000 tokens
    ("[" + "+".join(["1"] * 200_000) + "]", "a list literal of more than"),
], ids=["python", "json", "nested", "tuple", "concatenated", "sum"])
def test_a_cell_of_200000_items_is_refused_without_building_them(tmp_path, cell, expected):
    dataset = write_csv(tmp_path / "big.csv", [cell])
    tracemalloc.start()
    try:
        message = problems_of(dataset)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"big.csv: row 1 (line 2): column 'retrieved_contexts': {expected}" in message, message
    assert peak < 50 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize(("cell", "expected"), [
    ("[" * 100_000, f"brackets nested deeper than {MAX_DEPTH}"),
    ("['a', " + "[" * 100_000, f"brackets nested deeper than {MAX_DEPTH}"),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"brackets nested deeper than {MAX_DEPTH}"),
    ("[" + "-" * 30_000 + "1]", "a list literal too large or too deeply nested for Python's parser (MemoryError)"),
], ids=["open-brackets", "after-an-item", "one-past-the-limit", "parser-stack"])
def test_a_deeply_nested_cell_says_so(tmp_path, cell, expected):
    message = problems_of(write_csv(tmp_path / "deep.csv", [cell]))
    assert f"deep.csv: row 1 (line 2): column 'retrieved_contexts': {expected}" in message, message
    assert "got a string" not in message


@pytest.mark.parametrize(("cell", "column", "value"), [
    ("['first chunk', 'second, with comma']", "contexts", ["first chunk", "second, with comma"]),
    ('["json chunk", "with \\"quotes\\", [brackets] and # hash"]', "retrieved_contexts",
     ['json chunk', 'with "quotes", [brackets] and # hash']),
    ("[\"it's\", 'say \"hi\", ok', '''tri, ple''', r'raw\\', b]']", "retrieved_contexts",
     ["it's", 'say "hi", ok', "tri, ple", "raw\\', b]"]),
    ("['a', # a comment, with commas ]\n 'b',]", "retrieved_contexts", ["a", "b"]),
    ("['con' 'cat', 'x']", "reference_contexts", ["concat", "x"]),
    ("['line\\nbreak', '\\u00e9\\x41']", "retrieved_contexts", ["line\nbreak", "\u00e9A"]),
    ("[]", "retrieved_contexts", []),
    ("['d1', 2, -3, 4.5]", "retrieved_context_ids", ["d1", 2, -3, 4.5]),
], ids=["pandas", "json", "quotes", "comment", "concatenated", "escapes", "empty", "ids"])
def test_valid_cells_read_as_before(tmp_path, cell, column, value):
    loaded = read_dataset(write_csv(tmp_path / "ok.csv", [cell], column), {})
    assert loaded.samples[0].fields[OLD.get(column, column)] == value



@pytest.mark.parametrize(("cell", "expected"), [
    ("[f'{1, 2}']", "expected a list of strings, got a string"),       # an f-string is no literal
    ("['a'", "expected a list of strings, got a string"),
    ("[['a']]", "item 0: expected a string, got a list"),
])
def test_invalid_cells_keep_their_messages(tmp_path, cell, expected):
    message = problems_of(write_csv(tmp_path / "bad.csv", [cell]))
    assert f"bad.csv: row 1 (line 2): column 'retrieved_contexts': {expected}" in message, message


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.text(alphabet=st.sampled_from("ab '\"\\[](),#\n\tf{}é"), max_size=12), max_size=6))
def test_python_and_json_lists_of_any_text_read_back(tmp_path_factory, items):
    folder = tmp_path_factory.mktemp("lists")
    cells = [repr(items), json.dumps(items), json.dumps(items, ensure_ascii=False)]
    loaded = read_dataset(write_csv(folder / "any.csv", cells), {})
    assert [s.fields.get("retrieved_contexts", []) for s in loaded.samples] == [items] * 3
    assert ast.literal_eval(cells[0]) == items
