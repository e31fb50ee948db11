"""``ragas-compat import`` stays bounded on hostile labels CSVs (``harness/tools/record/importer.py``).

- a file of many bad rows (the same row over and over): only the problems a message shows are kept,
  the rest counted ("... and N more problems"), so memory does not grow with the rows;
- a sample's claim past ``MAX_LIST_ITEMS`` in one list of its case is refused at that row, naming the
  labels file, the row and the sample (before: every row was held, and the case loader refused the
  output file's list at the end);
- text from the file (a column name, a label cell, a claim or sample id) is quoted to its first
  characters and its length, never echoed whole;
- a header of many columns: its problems bounded like the rows' (before: one per column, and time
  quadratic in the columns).

The limits are lowered (``MAX_PROBLEMS``, ``MAX_LIST_ITEMS`` of the importer module) so that a few
thousand rows stand for millions. Every refusal is exit 2 and nothing is written at ``--out``.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.record import importer

runner = CliRunner()
HEADER = "sample_id,claim_id,human_label,judge_label"
SAMPLE = {"id": "s1", "user_input": "q", "retrieved_contexts": ["c0", "c1"], "response": "a", "reference": "r"}


def write_inputs(folder: Path, labels: str) -> tuple[Path, Path, Path]:
    data = folder / "eval.jsonl"
    data.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
    csv_path = folder / "labels.csv"
    csv_path.write_text(labels, encoding="utf-8")
    return data, csv_path, folder / "out.json"


def run_import(data: Path, labels: Path, out: Path):
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    assert sorted(p.name for p in out.parent.iterdir()) == ["eval.jsonl", "labels.csv"]  # no temp file either
    return result


def test_a_row_repeated_thousands_of_times_keeps_only_the_problems_shown(tmp_path, monkeypatch):
    monkeypatch.setattr(importer, "MAX_PROBLEMS", 5)
    rows = 3_000
    data, labels, out = write_inputs(tmp_path, HEADER + "\n" + "s1,c,1,0\n" * rows)
    with pytest.raises(HarnessInputError, match=f"^labels.csv: {rows - 1} problem"):  # every duplicate counted
        importer.import_labels(data, labels, out)
    result = run_import(data, labels, out)
    lines = [" ".join(line.split()) for line in result.output.strip().splitlines()]
    assert lines[0] == ("error: labels.csv: row 2 (line 3): column 'claim_id': 'c' of sample 's1' (judge_audit) "
                        "given twice (first in row 1 (line 2))")
    assert lines[-1] == f"error: labels.csv: ... and {rows - 1 - 5} more problems"
    assert len(lines) == 6


def test_duplicate_rows_are_not_held_row_by_row(tmp_path, monkeypatch):
    """Memory does not grow with duplicates: 20,000 copies of one row take about what 100 do (the file's
    text aside: 180 kB). Holding a row and a problem per copy took about 350 bytes each."""
    monkeypatch.setattr(importer, "MAX_PROBLEMS", 5)

    def peak(rows: int) -> int:
        data, labels, out = write_inputs(tmp_path, HEADER + "\n" + "s1,c,1,0\n" * rows)
        tracemalloc.start()
        try:
            with pytest.raises(HarnessInputError, match=f"^labels.csv: {rows - 1} problem"):
                importer.import_labels(data, labels, out)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(100), peak(20_000)
    assert large < small + 2_000_000, (small, large)


@pytest.mark.parametrize("metric", ["", "faithfulness"])
def test_a_samples_claim_past_the_list_limit_is_refused_at_its_row(tmp_path, monkeypatch, metric):
    monkeypatch.setattr(importer, "MAX_LIST_ITEMS", 2_000)
    body = "".join(f"s1,c{i},1,0,{metric}\n" for i in range(3_000))
    data, labels, out = write_inputs(tmp_path, HEADER + ",metric\n" + body)
    result = run_import(data, labels, out)
    output = result.output.strip()
    assert "\n" not in output, output  # one line
    listed = "judge_audit" if metric == "" else "verdicts.faithfulness"
    assert " ".join(output.split()) == (
        f"error: labels.csv: row 2001 (line 2002): column 'claim_id': sample 's1' has more than 2000 claims for "
        f"{listed} (a case's lists hold at most 2000 items)")


def test_claims_at_the_list_limit_import(tmp_path, monkeypatch):
    monkeypatch.setattr(importer, "MAX_LIST_ITEMS", 50)
    body = "".join(f"s1,c{i},1,0,\n" for i in range(50)) + "".join(f"s1,f{i},,1,faithfulness\n" for i in range(50))
    data, labels, out = write_inputs(tmp_path, HEADER + ",metric\n" + body)
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(out)])
    assert result.exit_code == 0, result.output
    case = json.loads(out.read_text(encoding="utf-8"))["cases"][0]
    assert len(case["judge_audit"]["judge"]) == 50 and len(case["verdicts"]["faithfulness"]) == 50


LONG = "x" * 100_000


@pytest.mark.parametrize(("labels", "expected"), [
    (f"{HEADER},{LONG}\ns1,c,1,0,z\n", f"labels.csv: line 1: unknown column '{'x' * 80}'... (100,000 characters)"),
    (f"{HEADER}\ns1,c,{LONG},0\n", "labels.csv: row 1 (line 2): column 'human_label': expected 0, 1, true or "
                                   f"false, got '{'x' * 80}'... (100,000 characters)"),
    (f"{HEADER}\n{LONG},c,1,0\n", f"labels.csv: row 1 (line 2): column 'sample_id': unknown sample id "
                                  f"'{'x' * 80}'... (100,000 characters) (the dataset's ids: 's1')"),
    (f"{HEADER},metric\ns1,c,1,0,{LONG}\n", f"row 1 (line 2): column 'metric': '{'x' * 80}'... (100,000 "
                                            "characters) is not importable"),
    (f"{HEADER},metric\ns1,{LONG},1,0,context_precision_with_reference\n",
     f"row 1 (line 2): column 'claim_id': expected a context index (0, 1, ... plain decimal) for "
     f"context_precision_with_reference, got '{'x' * 80}'... (100,000 characters)"),
    (f"{HEADER}\ns1,{LONG},1,0\ns1,{LONG},1,0\n",
     f"row 2 (line 3): column 'claim_id': '{'x' * 80}'... (100,000 characters) of sample 's1' (judge_audit) "
     "given twice"),
])
def test_long_text_is_quoted_short(tmp_path, labels, expected):
    data, csv_path, out = write_inputs(tmp_path, labels)
    result = run_import(data, csv_path, out)
    assert len(result.output) < 2_000, len(result.output)
    assert expected in " ".join(result.output.split()), result.output


def test_a_header_of_many_columns_is_reported_short_and_fast(tmp_path, monkeypatch):
    """20,000 one-letter columns: each unknown, every one a duplicate; the message stays a few lines."""
    monkeypatch.setattr(importer, "MAX_PROBLEMS", 5)
    data, labels, out = write_inputs(tmp_path, HEADER + ",z" * 20_000 + "\n")
    with pytest.raises(HarnessInputError) as caught:
        importer.import_labels(data, labels, out)
    assert caught.value.problems[-1] == "labels.csv: ... and 19995 more problems"
    assert len(caught.value.problems) == 6 and not out.exists()
