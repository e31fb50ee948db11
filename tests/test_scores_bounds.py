"""``audit-run --scores``: the scores table is bounded before it is built.

A scores table has one row per dataset sample, so at most ``RAGAS_COMPAT_MAX_CASES`` rows: a CSV is refused
at the first row past the limit, as it is read; a Parquet file from its footer (row count, uncompressed
size) before any row is decoded, and from what its decoded batches take. Before, an 84 KB Parquet file of
one row repeated 1,000,000 times ended in MemoryError (exit 4), and an 8,000,000-row CSV built a dict per
row (2.3 GB) before being refused. The limits are lowered here so that a few hundred rows exceed them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow
import pyarrow.parquet
import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.audit_run.scores import read_scores

SMALL = Path(__file__).parent / "data" / "audit_run" / "small"
HEADER = "user_input,retrieved_contexts,response,reference,context_precision,faithfulness\n"
ROW = "q,['c'],r,ref,0.5,1.0\n"


def audit_run_exits_2(tmp_path: Path, scores: Path) -> str:
    """``audit-run`` over the small run's traces with ``scores``: exit 2, nothing written; its error, one line."""
    traces = tmp_path / "traces.json"
    shutil.copyfile(SMALL / "traces.json", traces)
    out, cases_out = tmp_path / "report", tmp_path / "cases.json"
    result = CliRunner().invoke(app, ["audit-run", str(traces), "--scores", str(scores), "--cases-out",
                                      str(cases_out), "--out", str(out)])
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert not out.exists() and not cases_out.exists()
    return " ".join(result.stderr.split())


def write_parquet(path: Path, table: pyarrow.Table, **options) -> pyarrow.parquet.FileMetaData:
    pyarrow.parquet.write_table(table, path, compression="zstd", **options)
    return pyarrow.parquet.ParquetFile(path).metadata


def unpacked(meta: pyarrow.parquet.FileMetaData) -> int:
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def test_csv_past_the_row_limit_exits_2_at_the_row_after_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAS_COMPAT_MAX_CASES", "50")
    scores = tmp_path / "scores.csv"
    # a ragged last row: reading every row would report it instead of the limit
    scores.write_text(HEADER + ROW * 299 + "cut,short\n", encoding="utf-8")
    error = audit_run_exits_2(tmp_path, scores)
    assert "scores.csv: the scores table has more than 50 rows (line 52 is past them)" in error
    assert "RAGAS_COMPAT_MAX_CASES=N" in error and "at most 50" in error


def test_csv_at_the_row_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAS_COMPAT_MAX_CASES", "50")
    scores = tmp_path / "scores.csv"
    scores.write_text(HEADER + ROW * 50, encoding="utf-8")
    assert len(read_scores(scores).rows) == 50
    scores.write_text(HEADER + ROW * 51, encoding="utf-8")
    with pytest.raises(HarnessInputError, match=r"scores\.csv: .*more than 50 rows \(line 52"):
        read_scores(scores)


def test_parquet_past_the_row_limit_is_refused_from_its_footer(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAS_COMPAT_MAX_CASES", "50")
    scores = tmp_path / "scores.parquet"
    rows = 300
    write_parquet(scores, pyarrow.table({"user_input": pyarrow.array(["q"] * rows, pyarrow.large_string()),
                                         "faithfulness": [1.0] * rows}))
    error = audit_run_exits_2(tmp_path, scores)
    assert "scores.parquet: the scores table has 300 rows" in error
    assert "RAGAS_COMPAT_MAX_CASES=N" in error and "at most 50" in error

    def no_decoding(*args, **kwargs):
        raise AssertionError("a row was decoded")

    monkeypatch.setattr(pyarrow.parquet.ParquetFile, "iter_batches", no_decoding)
    monkeypatch.setattr(pyarrow.parquet, "read_table", no_decoding)
    with pytest.raises(HarnessInputError, match=r"scores\.parquet: the scores table has 300 rows"):
        read_scores(scores)


def test_parquet_at_the_row_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAS_COMPAT_MAX_CASES", "50")
    scores = tmp_path / "scores.parquet"
    write_parquet(scores, pyarrow.table({"user_input": ["q"] * 50, "faithfulness": [1.0] * 50,
                                         "__index_level_0__": list(range(50))}))
    table = read_scores(scores)
    assert table.columns == ("user_input", "faithfulness") and len(table.rows) == 50
    assert table.score(49, "faithfulness") == (1.0, None)


def test_parquet_unpacking_past_the_input_limit_is_refused_from_its_footer(tmp_path, monkeypatch):
    limit = 40_000       # the small run's traces.json (30 KB) is read within it
    monkeypatch.setenv("RAGAS_COMPAT_MAX_INPUT_BYTES", str(limit))
    scores = tmp_path / "scores.parquet"
    meta = write_parquet(scores, pyarrow.table({"user_input": ["x" * 10_000] * 10, "faithfulness": [1.0] * 10}),
                         use_dictionary=False)
    assert scores.stat().st_size < limit < unpacked(meta)    # the file is read; its data would not be
    error = audit_run_exits_2(tmp_path, scores)
    assert f"scores.parquet: the Parquet data unpacks to {unpacked(meta)} bytes" in error
    assert f"the input limit of {limit} bytes" in error and "RAGAS_COMPAT_MAX_INPUT_BYTES=BYTES" in error


def test_parquet_dictionary_bomb_is_refused_while_decoding(tmp_path, monkeypatch):
    """One long value for every row: the footer counts its dictionary page once, the decoded rows hold it
    in every row; the batches are counted as they are decoded."""
    limit = 50_000
    monkeypatch.setenv("RAGAS_COMPAT_MAX_INPUT_BYTES", str(limit))
    scores = tmp_path / "scores.parquet"
    rows = 40
    long = pyarrow.array(["y" * 2_000] * rows, pyarrow.large_string())
    meta = write_parquet(scores, pyarrow.table({f"s{i}": long for i in range(4)}
                                               | {"faithfulness": [1.0] * rows}))
    assert max(scores.stat().st_size, unpacked(meta)) < limit < rows * 4 * 2_000
    error = audit_run_exits_2(tmp_path, scores)
    assert "scores.parquet: the Parquet data unpacks to more than" in error and "after 0 rows" in error
    assert "RAGAS_COMPAT_MAX_INPUT_BYTES=BYTES" in error
