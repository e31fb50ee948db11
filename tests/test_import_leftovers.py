"""Leftovers of a hostile-input sweep of ``ragas-compat import`` and the dataset reader.

- a labels file's valid rows are held as slotted records (no ``__dict__`` per row: a file of millions
  of rows holds one per claim);
- a sample that leaves contexts unlabelled for context precision is told the first ``SHOWN_INDICES``
  missing indices and how many more (before: every one of up to ``MAX_LIST_ITEMS`` indices);
- a CSV list cell holding a number Python refuses to parse (more than 4,300 digits) is reported as a
  number over ``MAX_NUMBER_CHARS`` characters, naming the file, row and column (before: "expected a
  list of IDs, got a string").
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.errors import CappedProblems, HarnessInputError
from ragas_compat.input_limits import MAX_LIST_ITEMS, MAX_NUMBER_CHARS
from ragas_compat.tools.record import importer
from ragas_compat.tools.record.dataset import read_dataset

runner = CliRunner()
HEADER = "sample_id,claim_id,human_label,judge_label,metric"
LONG = "9" * 4_301  # one digit more than int() parses


def flat(text: str) -> str:
    return " ".join(text.split())


def test_label_rows_are_held_without_a_dict_each(tmp_path):
    data = tmp_path / "eval.jsonl"
    data.write_text(json.dumps({"id": "s1", "user_input": "q", "retrieved_contexts": ["c0"]}) + "\n",
                    encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label\n" + "".join(f"s1,c{i},1,0\n" for i in range(3)),
                      encoding="utf-8")
    samples = {s.id: s for s in read_dataset(data, {}).samples}
    problems = CappedProblems(importer.MAX_PROBLEMS)
    rows = importer._read_rows(labels, samples, problems)
    assert len(rows) == 3 and not problems
    assert not any(hasattr(row, "__dict__") for row in rows)
    assert rows[0].where == "labels.csv: row 1 (line 2)" and rows[0].sample is samples["s1"]


def test_missing_context_indices_are_listed_short(tmp_path):
    """A sample of ``MAX_LIST_ITEMS`` contexts labelled at index 0 only: 20 indices and a count."""
    data = tmp_path / "eval.jsonl"
    sample = {"id": "s1", "user_input": "q", "retrieved_contexts": ["c"] * MAX_LIST_ITEMS, "response": "a",
              "reference": "r"}
    data.write_text(json.dumps(sample) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text(f"{HEADER}\ns1,0,1,1,context_precision_with_reference\n", encoding="utf-8")
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(out)])
    assert result.exit_code == 2, result.output
    shown = ", ".join(str(i) for i in range(1, importer.SHOWN_INDICES + 1))
    assert flat(result.output) == (
        f"error: labels.csv: row 1 (line 2): column 'claim_id': sample 's1' (context_precision_with_reference) "
        f"labels 1 of its {MAX_LIST_ITEMS} contexts; missing index(es) {shown}, ... and "
        f"{MAX_LIST_ITEMS - 1 - importer.SHOWN_INDICES} more"), result.output
    assert not out.exists()


def test_a_few_missing_context_indices_are_all_listed(tmp_path):
    data = tmp_path / "eval.jsonl"
    data.write_text(json.dumps({"id": "s1", "user_input": "q", "retrieved_contexts": ["c"] * 4, "reference": "r"}) + "\n",
                    encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text(f"{HEADER}\ns1,2,1,1,context_precision_with_reference\n", encoding="utf-8")
    with pytest.raises(HarnessInputError) as caught:
        importer.import_labels(data, labels, tmp_path / "out.json")
    assert caught.value.problems[0].endswith("labels 1 of its 4 contexts; missing index(es) 0, 1, 3")


def write_csv(path: Path, cells: list[str], column: str = "retrieved_context_ids") -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "user_input", "retrieved_contexts", column])
        writer.writerows([f"s{i}", "q", "['c']", cell] for i, cell in enumerate(cells, 1))
    return path


TOO_LONG = (f"a number of {len(LONG)} characters ({LONG[:12]}...); numbers are limited to "
            f"{MAX_NUMBER_CHARS} characters")


@pytest.mark.parametrize("cell", [f"['a', {LONG}]", f"({LONG},)", LONG, f"['a', -{LONG}]", f"['x', {LONG}, 'y']"],
                         ids=["list", "tuple", "bare", "negative", "middle"])
def test_an_id_cell_with_a_number_python_refuses_says_so(tmp_path, cell):
    dataset = write_csv(tmp_path / "rag.csv", ["['fine']", cell])
    with pytest.raises(HarnessInputError) as caught:
        read_dataset(dataset, {})
    assert caught.value.problems == [f"rag.csv: row 2 (line 3): column 'retrieved_context_ids': {TOO_LONG}"]


def test_a_long_number_in_an_id_cell_is_exit_2_naming_the_dataset_row_and_column(tmp_path):
    dataset = write_csv(tmp_path / "rag.csv", ["['fine']", f"['a', {LONG}]"])
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label\ns1,c1,1,1\n", encoding="utf-8")
    out = tmp_path / "case.json"
    result = runner.invoke(app, ["import", str(dataset), str(labels), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert f"rag.csv: row 2 (line 3): column 'retrieved_context_ids': {TOO_LONG}" in flat(result.output)
    assert "got a string" not in result.output and "case.json" not in result.output
    assert not out.exists()


@pytest.mark.parametrize(("cell", "expected"), [
    (f"['a', '{LONG}']", ["a", LONG]),   # in a string: text, not a number
    ("['a', 12]", ["a", 12]),
])
def test_id_cells_python_reads_read_as_before(tmp_path, cell, expected):
    dataset = write_csv(tmp_path / "rag.csv", [cell])
    assert read_dataset(dataset, {}).samples[0].fields["retrieved_context_ids"] == expected


@pytest.mark.parametrize(("cell", "expected"), [
    ("['a' 12]", "expected a list of IDs, got a string"),  # not a literal
    (f"['a', 1{'0' * 150}]", "item 1: an integer ID of more than 100 digits"),
])
def test_other_id_cells_keep_their_messages(tmp_path, cell, expected):
    """Only a cell Python refuses is reported by its long number; a cell it reads keeps its message."""
    dataset = write_csv(tmp_path / "rag.csv", [cell])
    with pytest.raises(HarnessInputError) as caught:
        read_dataset(dataset, {})
    assert caught.value.problems == [f"rag.csv: row 1 (line 2): column 'retrieved_context_ids': {expected}"]
