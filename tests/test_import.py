"""``ragas-compat import``: a dataset plus a CSV of labels made elsewhere -> a case file ``run`` audits.

The mapping (``harness/tools/record/importer.py``): judge_audit rows -> ``judge_audit.human/judge``;
context-precision rows (claim_id = context index) -> ``verdicts.<metric>`` lists; context_recall /
faithfulness rows -> claim lists; rows of those with both labels also into the judge audit under
``<metric>:<claim_id>``. Bad input: exit 2, every problem named by file, row and column, nothing written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragas_compat.cases import parse_suite
from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.report.json_report import expanded_rows
from ragas_compat.tools.record.importer import import_labels

CLI = [sys.executable, "-m", "ragas_compat"]
runner = CliRunner()

DATASET = [  # old column names on the first sample, new ones on the second, default id on the third
    {"id": "q1", "question": "When was Oakworks founded?",
     "contexts": ["Oakworks was founded in 1900.", "Rain today.", "Oakson started Oakworks."],
     "answer": "Oakworks was founded in 1900.", "ground_truth": "Oakworks was founded in 1900 by Oakson."},
    {"id": "q2", "user_input": "Who founded Elmworks?", "retrieved_contexts": ["Elmworks was founded by Elmson."],
     "response": "Elmson. He was born in 1850.", "reference": "Elmson founded Elmworks."},
    {"user_input": "Unlabelled?", "retrieved_contexts": ["x"], "response": "y", "reference": "z",
     "retrieved_context_ids": ["d1"], "reference_context_ids": ["d1", "d2"]},
]
LABELS = """sample_id,claim_id,human_label,judge_label,metric,statement
q1,c1,1,1,,
q1,c2,0,TRUE,judge_audit,
q1,2,1,1,context_precision_with_reference,
q1,0,1,1,context_precision_with_reference,
q1,1,0,1,context_precision_with_reference,
q1,s1,1,0,context_recall,Oakworks was founded in 1900.
q1,s2,1,1,context_recall,Its founder was Oakson.
q2,f1,1,1,faithfulness,Elmson founded Elmworks.
q2,f2,,0,faithfulness,Elmson was born in 1850.
"""


def write_inputs(folder: Path, labels: str = LABELS, dataset: list[dict] | None = None) -> tuple[Path, Path]:
    data = folder / "eval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in (DATASET if dataset is None else dataset)),
                    encoding="utf-8")
    csv_path = folder / "labels.csv"
    csv_path.write_text(labels, encoding="utf-8")
    return data, csv_path


def test_import_maps_each_row_to_its_case_key(tmp_path):
    data, labels = write_inputs(tmp_path)
    out = tmp_path / "imported.json"
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 cases" in result.output and "2 with labels from 9 rows" in " ".join(result.output.split())
    document = json.loads(out.read_text(encoding="utf-8"))
    parse_suite(document, source="imported.json")
    q1, q2, q3 = document["cases"]
    assert q1["user_input"] == "When was Oakworks founded?" and q1["reference"].endswith("by Oakson.")
    assert q1["verdicts"] == {
        "context_precision_with_reference": [1, 1, 1],  # by context index, not row order; judge labels
        "context_recall": [{"statement": "Oakworks was founded in 1900.", "attributed": 0},
                           {"statement": "Its founder was Oakson.", "attributed": 1}]}
    assert q1["judge_audit"] == {
        "human": {"c1": 1, "c2": 0, "context_precision_with_reference:2": 1, "context_precision_with_reference:0": 1,
                  "context_precision_with_reference:1": 0, "context_recall:s1": 1, "context_recall:s2": 1},
        "judge": {"c1": 1, "c2": 1, "context_precision_with_reference:2": 1, "context_precision_with_reference:0": 1,
                  "context_precision_with_reference:1": 1, "context_recall:s1": 0, "context_recall:s2": 1}}
    assert q2["verdicts"] == {"faithfulness": [{"statement": "Elmson founded Elmworks.", "verdict": 1},
                                               {"statement": "Elmson was born in 1850.", "verdict": 0}]}
    # f2 has no human label: it is a verdict but not an audited claim
    assert q2["judge_audit"] == {"human": {"faithfulness:f1": 1}, "judge": {"faithfulness:f1": 1}}
    assert q3["id"] == "row-3" and "verdicts" not in q3 and "judge_audit" not in q3
    assert q3["retrieved_context_ids"] == ["d1"]
    assert "eval.jsonl" in document["description"] and "labels.csv" in document["description"]


def test_verdicts_from_human(tmp_path):
    data, labels = write_inputs(tmp_path, LABELS.replace("q2,f2,,0,faithfulness,Elmson was born in 1850.\n", ""))
    out = tmp_path / "human.json"
    import_labels(data, labels, out, verdicts_from="human", suite="by-humans")
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["suite"] == "by-humans"
    assert document["cases"][0]["verdicts"]["context_precision_with_reference"] == [1, 0, 1]
    assert [c["attributed"] for c in document["cases"][0]["verdicts"]["context_recall"]] == [1, 1]
    data, labels = write_inputs(tmp_path)
    with pytest.raises(HarnessInputError) as caught:  # f2 has no human label to take the verdict from
        import_labels(data, labels, tmp_path / "never.json", verdicts_from="human")
    assert "labels.csv: row 9 (line 10): column 'human_label': empty" in caught.value.problems[0]
    assert not (tmp_path / "never.json").exists()


@pytest.mark.slow
def test_run_audits_the_imported_file(tmp_path):
    """The imported file goes through `ragas-compat run` (Ragas's classes on the imported verdicts,
    the reference, the judge audit)."""
    data, labels = write_inputs(tmp_path)
    out = tmp_path / "imported.json"
    import_labels(data, labels, out)
    proc = subprocess.run([*CLI, "run", "--cases", str(out), "--out", str(tmp_path / "report"), "--fail-on", "none"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    rows = {(r["case_id"], r["ragas_target"]): r for r in expanded_rows(report)}
    assert rows[("q1", "legacy:LLMContextRecall")]["ragas_value"] == 0.5
    assert rows[("q1", "legacy:LLMContextRecall")]["reference_exact"] == "1/2"
    assert rows[("q2", "legacy:Faithfulness")]["ragas_value"] == 0.5
    assert rows[("q1", "legacy:LLMContextPrecisionWithReference")]["reference_exact"] == "1"
    assert rows[("row-3", "legacy:IDBasedContextRecall")]["ragas_value"] == 0.5
    assert {r["case_id"] for r in report["reference_only"] if r["metric"] == "judge_audit"} == {"q1", "q2"}
    audits = {case: metrics["judge_audit"] for case, metrics in report["references"].items() if "judge_audit" in metrics}
    # q1: 7 audited claims, fp = 2 (c2, cp:1), fn = 1 (recall s1): mean bias (2 - 1) / 7
    assert audits["q1"]["reference_exact"] == "1/7"
    assert audits["q1"]["reference_details"]["fp"] == 2 and audits["q1"]["reference_details"]["fn"] == 1
    assert audits["q2"]["reference_exact"] == "0"


def test_a_csv_dataset_with_old_names_and_a_parquet_file_import(tmp_path):
    import pyarrow
    import pyarrow.parquet

    labels = "sample_id,claim_id,human_label,judge_label\nrow-1,c1,1,0\nrow-2,c1,0,0\n"
    csv_data = tmp_path / "old.csv"
    csv_data.write_text('question,contexts,answer,ground_truth\nQ?,"[\'a\', \'b\']",A.,R.\nQ2?,"[""c""]",A2.,R2.\n',
                        encoding="utf-8")
    rows = [{"user_input": "Q?", "retrieved_contexts": ["a", "b"], "response": "A.", "reference": "R."},
            {"user_input": "Q2?", "retrieved_contexts": ["c"], "response": "A2.", "reference": "R2."}]
    parquet = tmp_path / "eval.parquet"
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), parquet)
    (tmp_path / "labels.csv").write_text(labels, encoding="utf-8")
    for data in (csv_data, parquet):
        out = tmp_path / f"{data.stem}.json"
        import_labels(data, tmp_path / "labels.csv", out)
        cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
        assert [c["retrieved_contexts"] for c in cases] == [["a", "b"], ["c"]]
        assert cases[0]["judge_audit"] == {"human": {"c1": 1}, "judge": {"c1": 0}}


BAD_LABELS = [
    ("sample_id,claim_id,human_label\nq1,c1,1\n", "labels.csv: line 1: missing column 'judge_label'"),
    ("sample_id,claim_id,human_label,judge_label,verdict\nq1,c1,1,1,1\n", "line 1: unknown column 'verdict'"),
    ("", "labels.csv: the labels file is empty"),
    ("sample_id,claim_id,human_label,judge_label\n", "labels.csv: no label rows (only a header)"),
    ("sample_id,claim_id,human_label,judge_label\nq1,c1,1,1\nq9,c1,1,1\n",
     "labels.csv: row 2 (line 3): column 'sample_id': unknown sample id 'q9'"),
    ("sample_id,claim_id,human_label,judge_label\nq1,c1,yes,1\n",
     "labels.csv: row 1 (line 2): column 'human_label': expected 0, 1, true or false, got 'yes'"),
    ("sample_id,claim_id,human_label,judge_label\nq1,c1,1,0.5\n",
     "row 1 (line 2): column 'judge_label': expected 0, 1, true or false, got '0.5'"),
    ("sample_id,claim_id,human_label,judge_label\nq1,c1,1,\n",
     "row 1 (line 2): column 'judge_label': empty; a judge_audit row needs both labels"),
    ("sample_id,claim_id,human_label,judge_label\nq1,c1,1,1\nq1,c1,0,0\n",
     "row 2 (line 3): column 'claim_id': 'c1' of sample 'q1' (judge_audit) given twice (first in row 1 (line 2))"),
    ("sample_id,claim_id,human_label,judge_label,metric\nq1,c1,1,1,answer_relevancy\n",
     "row 1 (line 2): column 'metric': 'answer_relevancy' is not importable"),
    ("sample_id,claim_id,human_label,judge_label,metric\nq1,3,1,1,context_precision_with_reference\n",
     "row 1 (line 2): column 'claim_id': context index 3 is out of range; sample 'q1' has 3 retrieved context(s)"),
    ("sample_id,claim_id,human_label,judge_label,metric\nq1,01,1,1,context_precision_with_reference\n",
     "row 1 (line 2): column 'claim_id': expected a context index"),
    ("sample_id,claim_id,human_label,judge_label,metric\nq1,0,1,1,context_precision_with_reference\n"
     "q1,2,1,1,context_precision_with_reference\n",
     "row 1 (line 2): column 'claim_id': sample 'q1' (context_precision_with_reference) labels 2 of its 3 "
     "contexts; missing index(es) 1"),
    ("sample_id,claim_id,human_label,judge_label\nq1,c1,1,1,extra\n", "row 1 (line 2): more cells than columns"),
    ("sample_id,claim_id,human_label,judge_label,metric\nrow-3,0,1,1,context_recall\n",
     "row 1 (line 2): column 'metric': context_recall needs the dataset column(s) user_input"),
]


@pytest.mark.parametrize(("labels", "expected"), BAD_LABELS)
def test_bad_labels_exit_2_naming_file_row_and_column_and_write_nothing(tmp_path, labels, expected):
    dataset = [dict(DATASET[0]), dict(DATASET[1]), {"retrieved_contexts": ["x"], "reference": "z"}]
    data, csv_path = write_inputs(tmp_path, labels, dataset)
    out = tmp_path / "kept.json"
    out.write_text("the old file\n", encoding="utf-8")
    result = runner.invoke(app, ["import", str(data), str(csv_path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.output.split()), result.output
    assert out.read_text(encoding="utf-8") == "the old file\n"  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.jsonl", "kept.json", "labels.csv"]  # no temp file


@pytest.mark.parametrize(("content", "expected"), [
    ('{"id": "q1", "question": 3, "contexts": ["c"]}\n', "eval.jsonl: row 1 (line 1): column 'question': "
                                                         "expected a string, got an integer"),
    ("", "eval.jsonl: the dataset is empty (no samples)"),
    ('{"id": "q1", "contexts": "c"}\n', "row 1 (line 1): column 'contexts': expected a list of strings"),
])
def test_bad_dataset_exits_2_and_writes_nothing(tmp_path, content, expected):
    data = tmp_path / "eval.jsonl"
    data.write_text(content, encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text("sample_id,claim_id,human_label,judge_label\nq1,c1,1,1\n", encoding="utf-8")
    result = runner.invoke(app, ["import", str(data), str(labels), "--out", str(tmp_path / "never.json")])
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.output.split()), result.output
    assert not (tmp_path / "never.json").exists()


def test_every_problem_is_reported_at_once(tmp_path):
    labels = ("sample_id,claim_id,human_label,judge_label\nq1,c1,2,1\nq7,c1,1,1\nq1,c3,1,maybe\n")
    data, csv_path = write_inputs(tmp_path, labels)
    with pytest.raises(HarnessInputError) as caught:
        import_labels(data, csv_path, tmp_path / "never.json")
    assert [p.split(": ", 2)[1] for p in caught.value.problems] == ["row 1 (line 2)", "row 2 (line 3)",
                                                                     "row 3 (line 4)"]


@settings(max_examples=40, deadline=None)
@given(labels=st.lists(st.sampled_from(["0", "1", "true", "False"]), min_size=1, max_size=6), data=st.data())
def test_context_labels_land_at_their_index_whatever_the_row_order(tmp_path_factory, labels, data):
    folder = tmp_path_factory.mktemp("prop")
    sample = {"id": "s", "user_input": "q", "retrieved_contexts": [f"c{i}" for i in range(len(labels))],
              "response": "a", "reference": "r"}
    order = data.draw(st.permutations(range(len(labels))))
    rows = "".join(f"s,{i},,{labels[i]},context_precision_without_reference\n" for i in order)
    data_path, csv_path = write_inputs(folder, "sample_id,claim_id,human_label,judge_label,metric\n" + rows, [sample])
    out = folder / "out.json"
    import_labels(data_path, csv_path, out)
    case = json.loads(out.read_text(encoding="utf-8"))["cases"][0]
    assert case["verdicts"]["context_precision_without_reference"] == [int(x.lower() in ("1", "true")) for x in labels]
    assert "judge_audit" not in case  # no human label: nothing audited
