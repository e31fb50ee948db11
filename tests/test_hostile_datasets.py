"""The dataset reader shared by ``import`` and ``record`` against hostile datasets: texts with form feeds
and U+2028 (which ``str.splitlines`` cuts), ragged CSV rows, deep or surrogate JSON, a Parquet file
that unpacks to 600,000 rows, a FIFO and an escaping ``state.json`` in a Hugging Face folder.

Each fails on the reader that split CSV text with ``splitlines``, parsed JSON with bare ``json.loads``
and materialised Arrow data before counting it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.record.dataset import read_dataset

CLI = [sys.executable, "-m", "ragas_compat"]
ROW = {"user_input": "When was Alderworks founded?", "retrieved_contexts": ["Alderworks was founded in 1900."],
       "response": "In 1900.", "reference": "Alderworks was founded in 1900."}


# Runs a command as its only child and writes the child's peak RSS (KiB) to argv[1]: measured in a process
# of its own, since this test process's RUSAGE_CHILDREN holds the largest child of every earlier test.
_PEAK_WRAPPER = ("import resource, subprocess, sys\n"
                 "code = subprocess.run(sys.argv[2:]).returncode\n"
                 "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
                 "sys.exit(code)\n")


def run_import(dataset: Path, tmp_path: Path, *, timeout: float = 120) -> tuple[subprocess.CompletedProcess, int]:
    """``ragas-compat import DATASET labels.csv --out case.json``; the process and its peak RSS (KiB)."""
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label\nrow-1,c1,1,1\n", encoding="utf-8")
    peak_file = tmp_path / "peak-kib.txt"
    command = [*CLI, "import", str(dataset), str(labels), "--out", str(tmp_path / "case.json")]
    proc = subprocess.run([sys.executable, "-c", _PEAK_WRAPPER, str(peak_file), *command],
                          capture_output=True, text=True, timeout=timeout)
    return subprocess.CompletedProcess(command, proc.returncode, proc.stdout, proc.stderr), int(peak_file.read_text())


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return " ".join(lines)


@pytest.mark.parametrize("breaker", ["\f", "\u2028", "\u2029", "\x0b", "\x1c", "\x85"],
                         ids=["form-feed", "line-separator", "paragraph-separator", "vertical-tab", "file-separator",
                              "next-line"])
def test_a_pandas_csv_with_unicode_line_breaks_in_texts_stays_two_rows(tmp_path, breaker):
    import pandas

    rows = [dict(ROW, response=f"Page one.{breaker}Page two.", retrieved_contexts=[f"A{breaker}B", "C"]),
            dict(ROW, user_input=f"Second{breaker}question", response="Fine.")]
    path = tmp_path / "rag.csv"
    pandas.DataFrame(rows).to_csv(path, index=False)
    assert breaker in path.read_text(encoding="utf-8")
    loaded = read_dataset(path, {"retrieved_contexts": ("x",)})
    assert len(loaded.samples) == 2
    assert loaded.samples[0].fields["response"] == f"Page one.{breaker}Page two."
    assert loaded.samples[0].fields["retrieved_contexts"] == [f"A{breaker}B", "C"]
    assert loaded.samples[1].fields["user_input"] == f"Second{breaker}question"


def test_import_keeps_a_form_feed_statement_in_its_cell(tmp_path):
    dataset = tmp_path / "rag.jsonl"
    dataset.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label,metric,statement\n"
                      "row-1,s1,1,1,faithfulness,\"Founded\fin 1900.\"\n", encoding="utf-8")
    proc = subprocess.run([*CLI, "import", str(dataset), str(labels), "--out", str(tmp_path / "c.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    case = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["cases"][0]
    assert case["verdicts"]["faithfulness"] == [{"statement": "Founded\fin 1900.", "verdict": 1}]


def test_ragged_csv_rows_are_refused_naming_file_and_row(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("user_input,response,reference\n"
                    "q1,a1,r1\n"
                    "q2,a2\n"           # fewer cells: the reference would silently go missing
                    "q3,a3,r3,extra\n", encoding="utf-8")
    proc, _ = run_import(path, tmp_path)
    assert proc.returncode == 2
    message = one_line(proc)
    assert "ragged.csv: row 2 (line 3): 2 cells for the header's 3 columns (fewer" in message
    assert "ragged.csv: row 3 (line 4): 4 cells for the header's 3 columns (more" in message
    assert not (tmp_path / "case.json").exists()


@pytest.mark.parametrize("content, expected", [
    ("[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 64"),
    ('{"user_input": "\\ud800", "response": "a", "reference": "r"}\n', "lone surrogate"),
    ('{"user_input": "q", "retrieved_context_ids": [' + "9" * 5000 + "]}\n", "5000 characters"),
], ids=["deep", "surrogate", "huge-number"])
def test_jsonl_datasets_go_through_the_case_file_limits(tmp_path, content, expected):
    path = tmp_path / "hostile.jsonl"
    path.write_text(content, encoding="utf-8")
    proc, _ = run_import(path, tmp_path)
    assert proc.returncode == 2, proc.stderr
    message = one_line(proc)
    assert "hostile.jsonl: line 1" in message and expected in message


def test_a_csv_python_literal_with_a_lone_surrogate_is_refused(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("user_input,retrieved_contexts\nq,\"['\\ud800']\"\n", encoding="utf-8")
    with pytest.raises(HarnessInputError) as caught:
        read_dataset(path, {})
    assert "s.csv: row 1 (line 2): column 'retrieved_contexts': item 0: a string with a lone surrogate" in \
        " ".join(caught.value.problems)


def test_a_parquet_bomb_is_refused_from_its_footer(tmp_path):
    import pyarrow
    import pyarrow.parquet

    n = 600_000
    table = pyarrow.table({"user_input": pyarrow.array(["When?"] * n), "response": pyarrow.array(["Then."] * n),
                           "reference": pyarrow.array(["Then."] * n)})
    path = tmp_path / "bomb.parquet"
    pyarrow.parquet.write_table(table, path, compression="zstd", use_dictionary=True)
    assert path.stat().st_size < 20_000
    started = time.monotonic()
    proc, peak_kib = run_import(path, tmp_path)
    seconds = time.monotonic() - started
    assert proc.returncode == 2
    assert "bomb.parquet: the dataset has 600,000 rows, more than the limit of 100,000 samples" in one_line(proc)
    assert peak_kib < 400 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"
    assert seconds < 60


@pytest.mark.parametrize("values", [[f"{i}" + "x" * 200_000 for i in range(20)], ["x" * 10_000] * 10_000],
                         ids=["footer-size", "dictionary-repeats"])
def test_a_parquet_file_whose_data_unpacks_past_the_input_limit_is_refused(tmp_path, monkeypatch, values):
    import pyarrow
    import pyarrow.parquet

    path = tmp_path / "wide.parquet"
    pyarrow.parquet.write_table(pyarrow.table({"user_input": pyarrow.array(values)}), path, compression="zstd")
    assert path.stat().st_size < 100_000
    monkeypatch.setenv("RAGAS_COMPAT_MAX_INPUT_BYTES", "1000000")
    with pytest.raises(HarnessInputError, match=r"unpacks to .* more than the input limit"):
        read_dataset(path, {})


def hf_folder(tmp_path: Path, rows: list[dict]) -> Path:
    import datasets

    folder = tmp_path / "hf"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    return folder


def test_a_fifo_in_a_hugging_face_folder_is_refused_without_opening_it(tmp_path):
    folder = hf_folder(tmp_path, [ROW])
    data = next(folder.glob("*.arrow"))
    data.unlink()
    os.mkfifo(data)  # nobody writes: opening it for reading would block
    proc, _ = run_import(folder, tmp_path, timeout=60)
    assert proc.returncode == 2
    assert f"hf: {data.name} is a FIFO; a dataset folder holds regular files only" in one_line(proc)


def test_a_state_json_pointing_outside_the_folder_is_refused(tmp_path):
    folder = hf_folder(tmp_path, [ROW])
    data = next(folder.glob("*.arrow"))
    outside = tmp_path / "outside"
    outside.mkdir()
    data.rename(outside / data.name)
    state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    state["_data_files"] = [{"filename": f"../outside/{data.name}"}]
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(HarnessInputError, match=r"hf/state.json: _data_files names '\.\./outside/.*not a file of the"):
        read_dataset(folder, {})


def test_a_symlink_in_a_hugging_face_folder_is_refused(tmp_path):
    folder = hf_folder(tmp_path, [ROW])
    (folder / "link.arrow").symlink_to("/dev/zero")
    with pytest.raises(HarnessInputError, match=r"link\.arrow is a symlink"):
        read_dataset(folder, {})


def test_hugging_face_rows_are_counted_before_they_are_materialised(tmp_path, monkeypatch):
    import datasets

    folder = hf_folder(tmp_path, [ROW] * 12)
    monkeypatch.setenv("RAGAS_COMPAT_MAX_CASES", "10")
    monkeypatch.setattr(datasets.Dataset, "to_list", lambda self: pytest.fail("materialised before the count"))
    with pytest.raises(HarnessInputError, match="the dataset has 12 rows, more than the limit of 10 samples"):
        read_dataset(folder, {})


def test_every_file_of_a_hugging_face_folder_is_hashed(tmp_path):
    folder = hf_folder(tmp_path, [ROW])
    before = read_dataset(folder, {}).sha256
    (folder / "notes.txt").write_text("x", encoding="utf-8")
    assert read_dataset(folder, {}).sha256 != before
