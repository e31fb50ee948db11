"""``ragas-compat audit-run`` on the other things a reviewer receives: the traces list
(``EvaluationResult.traces``), a LangSmith export, and the judged metrics beyond precision, recall and
faithfulness.

The slow tests make ONE real Ragas ``evaluate()`` run (``tests/data/audit_run/evaluate_and_save.py
--wide``, a subprocess: Ragas is never imported here) over the first ``WIDE_ROWS`` bundled samples with eight
legacy metrics (the four of ``test_audit_run`` plus FactualCorrectness, ContextEntityRecall, NoiseSensitivity,
AnswerRelevancy with LangChain's deterministic fake embeddings, an AspectCritic, a SimpleCriteriaScore and
RubricsScore), judged by ``WideJudge`` on 127.0.0.1.
One row's reference carries ``GARBLED`` (``--garble``), so the judge's labels for it are refused and
several of its metrics raise (NaN). The run is saved the ways a user can save it: the ``ragas_traces``
dump, the traces list (``json.dump(result.traces, f, default=...)``: a bare ``json.dump`` raises, which
the generator checks), a LangSmith export (LangChain's ``RunCollectorCallbackHandler`` given to
``evaluate(callbacks=[...])``, its runs as the LangSmith client's ``Run`` model, nested and flat) and
``to_pandas()``.

The first 40 samples hold every shape the whole suite's 141 gave (no, one, several contexts; empty texts; NaN
rows; both sides of FactualCorrectness's claims): over all 141 (3.5 times the Ragas work) the audit-run
reader ran the same lines and graded the same kinds of line (metric, grade, reason, note); the tests assert
that the kinds they check occur. The ragas_traces dump's audit is made once and read by two tests.

The fast tests read ``tests/data/audit_run/small/`` (a real two-row run, ``test_audit_run``).
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.audit_run.audit import plan_audit
from ragas_compat.tools.audit_run.rebuild import LOSSY, REDERIVABLE, UNRECORDED
from ragas_compat.values import decode_ragas_value

sys.path.insert(0, str(Path(__file__).parent))
from conftest import built_once
from record_judge_server import JudgeServer, parse_prompt, sentences, words

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "audit_run"
GENERATOR = DATA / "evaluate_and_save.py"
SMALL = DATA / "small"
BUNDLED = ROOT / "harness" / "cases" / "suites" / "default.json"
GARBLED_ROW = 2
WIDE_ROWS = 40
UNPARSEABLE = "UNPARSEABLE-ONCE"
NEW = ("factual_correctness(mode=f1)", "context_entity_recall", "noise_sensitivity(mode=relevant)", "names_a_command",
       "clarity", "domain_specific_rubrics")


class WideJudge(JudgeServer):
    """The record tests' judge, also answering FactualCorrectness's claim decomposition, ContextEntityRecall's
    entity extraction, AnswerRelevancy's question generation, the two criteria prompts and RubricsScore's,
    deterministically from the input. Its first claim decomposition and first entity extraction are not valid
    JSON; asked to fix its output, it sends the reply it should have sent (Ragas's fix_output_format retry
    fixes them)."""

    def __init__(self) -> None:
        super().__init__()
        self.failed: list[str] = []

    def fails_once(self, kind: str) -> bool:
        with self.lock:
            first = kind not in self.failed
            if first:
                self.failed.append(kind)
        return first

    def reply(self, prompt: str) -> str:
        head, data = parse_prompt(prompt)
        head = head.lstrip()
        if head.startswith("The output string did not satisfy") and UNPARSEABLE in data["output_string"]:
            return json.dumps({"text": self.reply(data["prompt_value"])})   # asked to fix it: the right reply
        if head.startswith("Decompose and break down each of the input sentences"):
            if self.fails_once("claims"):
                return '{"claims": [' + UNPARSEABLE + ']}'
            return json.dumps({"claims": sentences(data["response"])})
        if head.startswith("Given a text, extract unique entities"):
            if self.fails_once("entities"):
                return '{"entities": [' + UNPARSEABLE + ']}'
            return json.dumps({"entities": sorted(w for w in words(data["text"]) if w[0].isalpha())[:6]})
        if head.startswith("Evaluate the Input based on the criterial defined"):   # AspectCritic
            return json.dumps({"reason": "checked", "verdict": int("tern" in str(data.get("response")).lower())})
        if head.startswith("Evaluate the input based on the criteria defined"):    # SimpleCriteriaScore
            return json.dumps({"reason": "checked", "score": 1 + len(words(data.get("response") or "")) % 5})
        if head.startswith("Your task is to assign an appropriate score and provide feedback"):   # RubricsScore
            return json.dumps({"feedback": "checked", "score": 1 + len(words(data.get("response") or "")) % 5})
        if head.startswith("Generate a question for the given answer"):
            return json.dumps({"question": "what about " + " ".join(sorted(words(data["response"]))[:3]) + "?",
                               "noncommittal": int("not know" in data["response"].lower())})
        return super().reply(prompt)


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def audit(tmp: Path, traces: Path, *args: str) -> tuple[Result, dict | None]:
    """``audit-run`` run in this process from ``tmp`` (the CLI's own command: a subprocess would only add an
    interpreter start and the CLI's imports to each audit; the replay's probe is a subprocess either way)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp)
        result = CliRunner().invoke(app, ["audit-run", str(traces), "--cases-out", str(tmp / "cases.json"), "--out",
                                          str(tmp / "report"), "--format", "json", "--workers", "2", *args])
    return result, (json.loads(result.stdout) if result.exit_code in (0, 1) else None)


def table(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def score(cell: str) -> float:
    return float(cell) if cell != "" else math.nan


def evaluate_wide(out: Path) -> None:
    with WideJudge() as judge:
        proc = subprocess.run([sys.executable, str(GENERATOR), str(BUNDLED), str(out), "--base-url", judge.base_url,
                               "--wide", "--first", str(WIDE_ROWS), "--garble", str(GARBLED_ROW)],
                              capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(judge.failed) == ["claims", "entities"]
    (out / "printed.json").write_text(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def wide_run(tmp_path_factory) -> tuple[Path, dict]:
    """The run (made once per test run: pytest-xdist's workers share it) and what the generator printed."""
    out = built_once(tmp_path_factory, "audit-run-wide", evaluate_wide)
    printed = json.loads((out / "printed.json").read_text())
    assert printed["rows"] == WIDE_ROWS
    return out, printed


@pytest.fixture(scope="module")
def dump_audit(wide_run, tmp_path_factory) -> tuple[Path, dict]:
    """``audit-run`` on the ragas_traces dump with the scores table and the dataset: its folder (the case file
    ``cases.json``) and what it printed. Read, never changed, by two tests."""
    run, _ = wide_run
    folder = tmp_path_factory.mktemp("wide-dump-audit")
    proc, doc = audit(folder, run / "traces.json", "--scores", str(run / "scores.csv"), "--dataset",
                      str(run / "dataset.jsonl"))
    assert doc is not None, proc.stderr
    return folder, doc


def check_reproduced(run: Path, doc: dict) -> list[dict]:
    """Every (row, column) of the table graded; every re-derivable reported score reproduced bit for bit."""
    rows = table(run / "scores.csv")
    columns = [c for c in rows[0] if c not in ("user_input", "retrieved_contexts", "response", "reference")]
    lines = doc["lines"]
    assert sorted((line["row"], line["metric"]) for line in lines) == \
        sorted((i, c) for i in range(len(rows)) for c in columns)
    for line in lines:
        if line["grade"] == REDERIVABLE:
            replayed = decode_ragas_value(line["replayed"])
            expected = score(rows[line["row"]][line["metric"]])
            assert line["status"] == "reproduced" and bits(replayed) == bits(expected), line
    assert doc["reproduced"] == sum(1 for line in lines if line["grade"] == REDERIVABLE)
    assert {f["kind"] for f in doc["findings"]} <= {"subset_mean"}
    return lines


@pytest.mark.slow
def test_other_judged_metrics_are_rebuilt_from_ragas_traces(wide_run, dump_audit, tmp_path):
    run, _ = wide_run
    folder, doc = dump_audit
    lines = check_reproduced(run, doc)
    rows = table(run / "scores.csv")
    nan_rows = 0
    for column in NEW:
        mine = [line for line in lines if line["metric"] == column]
        scored = [line for line in mine if not math.isnan(score(rows[line["row"]][column]))]
        # every row Ragas scored is rebuilt and reproduced; a NaN row is unrecorded (the tracer keeps no error)
        assert scored and all(line["grade"] == REDERIVABLE for line in scored), [line for line in scored
                                                                                if line["grade"] != REDERIVABLE]
        assert all(line["grade"] == UNRECORDED and "records no error" in line["reason"]
                   for line in mine if line not in scored)
        nan_rows += len(mine) - len(scored)
    assert nan_rows, "the samples hold no row a new metric gave NaN"
    retried = {line["metric"] for line in lines if line["note"] and "fix_output_format retry fixed it" in line["note"]}
    assert {"factual_correctness(mode=f1)", "context_entity_recall"} <= retried, retried
    garbled = {line["metric"]: line for line in lines if line["row"] == GARBLED_ROW}
    assert garbled["context_recall"]["grade"] == UNRECORDED
    relevancy = [line for line in lines if line["metric"] == "answer_relevancy"]
    assert relevancy and all(line["grade"] == UNRECORDED and "embeddings" in line["reason"] for line in relevancy)
    assert doc["grades"]["not rebuilt"] == 0 and doc["grades"]["lossy"] == 0
    # the case file holds the new verdict keys; run replays it: every reported score of those metrics a live
    # score reproduced bit for bit (the others left out with --metric, to keep the test short)
    cases = json.loads((folder / "cases.json").read_text())["cases"]
    assert any({"factual_correctness", "context_entity_recall", "noise_sensitivity", "aspect_critic",
                "simple_criteria", "rubrics_score"} <= set(c.get("verdicts", {})) for c in cases)
    metrics = ("factual_correctness_f1", "context_entity_recall", "noise_sensitivity_relevant", "aspect_critic",
               "simple_criteria", "rubrics_score")
    rerun = CliRunner().invoke(app, ["run", "--cases", str(folder / "cases.json"), "--out", str(tmp_path / "rerun"),
                                     "--format", "json", "--workers", "2", *(x for m in metrics for x in ("--metric", m))])
    assert rerun.exit_code == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    replay = json.loads(rerun.stdout)["replay"]
    assert replay["reproduced"] == sum(1 for line in lines if line["metric"] in NEW and line["grade"] == REDERIVABLE)
    assert replay["reproduced"] + replay["unchecked"] == replay["live"] == doc["reproduced"]


@pytest.mark.slow
def test_langsmith_export_round_trips_and_records_the_error_behind_a_nan(wide_run, dump_audit, tmp_path):
    run, _ = wide_run
    _, reference_doc = dump_audit    # the dump's audit (its --dataset names the cases, not the lines compared)
    (tmp_path / "ls").mkdir()
    proc, doc = audit(tmp_path / "ls", run / "langsmith.json", "--scores", str(run / "scores.csv"))
    assert doc is not None, proc.stderr
    check_reproduced(run, doc)

    def outcome(d: dict) -> list[tuple]:
        return [(x["row"], x["metric"], x["grade"], x["replayed"], x["status"]) for x in d["lines"]]

    assert outcome(doc) == outcome(reference_doc)
    raised = [line for line in doc["lines"] if line["grade"] == UNRECORDED and "embeddings" not in line["reason"]]
    assert raised and all("the export records the error: " in line["reason"] for line in raised)
    recall = next(line for line in raised if line["row"] == GARBLED_ROW and line["metric"] == "context_recall")
    assert "maybe" in recall["reason"] or "parse" in recall["reason"].lower(), recall["reason"]
    # the flat export (Client.list_runs: linked by parent_run_id) gives the same case file
    nested = json.loads((tmp_path / "ls" / "cases.json").read_text())["cases"]
    flat = json.loads(plan_audit(run / "langsmith_flat.json", run / "scores.csv").text)["cases"]
    assert flat == nested


@pytest.mark.slow
def test_traces_list_grades_what_it_loses(wide_run, tmp_path):
    run, printed = wide_run
    assert printed["bare_traces_dump"].startswith("TypeError: Object of type")   # what a bare json.dump does
    proc, doc = audit(tmp_path, run / "traces_list.json", "--scores", str(run / "scores.csv"))
    assert doc is not None, proc.stderr
    lines = check_reproduced(run, doc)
    rows = table(run / "scores.csv")
    dataset = [json.loads(x) for x in (run / "dataset.jsonl").read_text().splitlines()]
    for line in lines:
        nan = math.isnan(score(rows[line["row"]][line["metric"]]))
        contexts = len(dataset[line["row"]]["retrieved_contexts"])
        if line["metric"] == "answer_relevancy":
            assert line["grade"] == UNRECORDED and "embeddings" in line["reason"]
        elif nan:
            assert line["grade"] == UNRECORDED and "neither the score nor the error" in line["reason"], line
        elif line["metric"] in ("context_precision", "llm_context_precision_without_reference"):
            if contexts > 1:
                assert line["grade"] == LOSSY and line["reason"].startswith(
                    f"only the last retrieved context's verdict (context {contexts - 1} of 0..{contexts - 1})"), line
            else:
                assert line["grade"] == REDERIVABLE, line
        elif line["metric"] in ("context_recall", "faithfulness", "names_a_command", "clarity",
                                "domain_specific_rubrics"):
            assert line["grade"] == REDERIVABLE and "fix_output_format" in line["note"], line
        else:
            expected = {"factual_correctness(mode=f1)": "only one side's claims and verdicts (here the ",
                        "context_entity_recall": "only the retrieved contexts' entities",
                        "noise_sensitivity(mode=relevant)": "only the response's statements and their verdicts"}
            assert line["grade"] == LOSSY and line["reason"].startswith(expected[line["metric"]]), line
    assert doc["grades"][REDERIVABLE] > 0 and doc["grades"][LOSSY] > 0
    # the samples hold each case checked above: one and several contexts, both sides' claims, a NaN
    assert {line["grade"] for line in lines if line["metric"] == "context_precision"} == {REDERIVABLE, LOSSY}
    sides = {line["reason"].split(")", 1)[0] for line in lines
             if line["metric"] == "factual_correctness(mode=f1)" and line["grade"] == LOSSY}
    assert sides == {f"only one side's claims and verdicts (here the {side}'s" for side in ("reference", "response")}
    assert any("neither the score nor the error" in (line["reason"] or "") for line in lines)


# --------------------------------------------------------------------------- no Ragas: tests/data/audit_run/small/

def small_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(SMALL, folder)
    return folder


def graded(planned) -> list[tuple]:
    return [(g.row, g.column, g.grade, g.metric, g.target, g.reason, g.note) for g in planned.graded]


def test_small_langsmith_export_plans_like_the_dump():
    dump = plan_audit(SMALL / "traces.json", SMALL / "scores.csv")
    export = plan_audit(SMALL / "langsmith.json", SMALL / "scores.csv")
    assert export.traces.kind == "LangSmith runs"
    assert graded(export) == graded(dump)
    # the fail-once judge's fix_output_format retries are chain runs too: the same notes
    assert any(g.note and "fix_output_format retry fixed it" in g.note for g in export.graded)
    assert json.loads(export.text)["cases"] == json.loads(dump.text)["cases"]
    # that planning imports no Ragas is checked in a fresh interpreter: tests/test_audit_run.py


def test_small_traces_list_plans_from_the_table():
    planned = plan_audit(SMALL / "traces_list.json", SMALL / "scores.csv")
    assert planned.traces.kind == "traces list"
    by = {(g.row, g.column): g for g in planned.graded}
    assert by[(0, "context_recall")].grade == REDERIVABLE
    assert by[(0, "context_precision")].grade == LOSSY
    assert "only the last retrieved context's verdict" in by[(0, "context_precision")].reason
    with pytest.raises(HarnessInputError, match="holds no scores and no samples: give the run's scores table"):
        plan_audit(SMALL / "traces_list.json")


def test_truncated_langsmith_export_exits_2_naming_row_and_path(tmp_path):
    run = small_copy(tmp_path)
    text = (run / "langsmith.json").read_text()
    (run / "langsmith.json").write_text(text[: int(len(text) * 0.7)])
    result = CliRunner().invoke(app, ["audit-run", str(run / "langsmith.json"), "--scores", str(run / "scores.csv"),
                                      "--cases-out", str(tmp_path / "cases.json"), "--out", str(tmp_path / "report")])
    assert result.exit_code == 2, result.stderr
    error = " ".join(result.stderr.split())
    assert "langsmith.json: row 1" in error and "truncated" in error and "$[0].child_runs[" in error, error
    assert not (tmp_path / "cases.json").exists() and not (tmp_path / "report").exists()


def test_bad_langsmith_runs_are_named_by_row_and_path(tmp_path):
    run = small_copy(tmp_path)
    runs = json.loads((run / "langsmith.json").read_text())
    row1 = runs[0]["child_runs"][1]
    metric = next(m for m in row1["child_runs"] if m["name"] == "faithfulness")
    metric["outputs"] = {"output": "high"}
    row1["child_runs"][0]["extra"] = "not an object"
    (run / "langsmith.json").write_text(json.dumps(runs))
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "langsmith.json", run / "scores.csv")
    problems = caught.value.problems
    assert any("row 1: $[0].child_runs[1].child_runs[0].extra: expected object or null, got string" in p
               for p in problems), problems
    metric["outputs"] = {"output": "high"}
    row1["child_runs"][0]["extra"] = {"metadata": {"type": "metric"}}
    (run / "langsmith.json").write_text(json.dumps(runs))
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "langsmith.json", run / "scores.csv")
    index = row1["child_runs"].index(metric)
    assert any(f"row 1: $[0].child_runs[1].child_runs[{index}].outputs.output: expected the metric's score" in p
               for p in caught.value.problems), caught.value.problems


def test_langsmith_error_is_the_recorded_cause(tmp_path):
    run = small_copy(tmp_path)
    runs = json.loads((run / "langsmith.json").read_text())
    row0 = runs[0]["child_runs"][0]
    metric = next(m for m in row0["child_runs"] if m["name"] == "context_recall")
    metric["outputs"], metric["error"] = None, "RagasOutputParserException('The output parser failed to parse')"
    row0["outputs"]["context_recall"] = None
    (run / "langsmith.json").write_text(json.dumps(runs))
    planned = plan_audit(run / "langsmith.json")
    line = next(g for g in planned.graded if g.row == 0 and g.column == "context_recall")
    assert line.grade == UNRECORDED and "the export records the error: RagasOutputParserException" in line.reason
    assert "legacy:LLMContextRecall" not in json.loads(planned.text)["cases"][0]["recording"]["live"]


def test_traces_list_problems_are_named_by_row_and_path(tmp_path):
    run = small_copy(tmp_path)
    items = json.loads((run / "traces_list.json").read_text())
    items[1]["faithfulness"]["n_l_i_statement_prompt"]["output"] = "supported"
    (run / "traces_list.json").write_text(json.dumps(items))
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "traces_list.json", run / "scores.csv")
    assert any(p.startswith("traces_list.json: row 1: $[1].faithfulness.n_l_i_statement_prompt: expected")
               for p in caught.value.problems), caught.value.problems
    (run / "traces_list.json").write_text(json.dumps(items[:1]))
    with pytest.raises(HarnessInputError, match=r"the traces list has 1 rows, but scores\.csv has 2"):
        plan_audit(run / "traces_list.json", run / "scores.csv")
    text = json.dumps(json.loads((SMALL / "traces_list.json").read_text()))
    (run / "traces_list.json").write_text(text[: int(len(text) * 0.8)])
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "traces_list.json", run / "scores.csv")
    assert "traces_list.json: row 1: $[1]" in str(caught.value) and "truncated" in str(caught.value)


def test_a_rating_metric_has_no_traced_reply(tmp_path):
    """The NVIDIA-style ratings ask their judge with agenerate_text, with no Ragas prompt and no callbacks: a
    ragas_traces dump holds none of their replies, and neither does a LangChain tracer's export (no llm run
    under their metric chain: checked with RunCollectorCallbackHandler at Ragas 0.4.3)."""
    run = small_copy(tmp_path)
    dump = json.loads((run / "traces.json").read_text())
    for chain in dump.values():
        if chain["metadata"].get("type") == "metric" and chain["name"] == "context_recall":
            chain["name"], chain["children"] = "nv_accuracy", []
        if chain["metadata"].get("type") == "row":
            chain["outputs"]["nv_accuracy"] = chain["outputs"].pop("context_recall")
    (run / "traces.json").write_text(json.dumps(dump))
    planned = plan_audit(run / "traces.json")
    lines = [g for g in planned.graded if g.column == "nv_accuracy"]
    assert len(lines) == 2 and all(g.grade == UNRECORDED and "agenerate_text" in g.reason for g in lines)
    runs = json.loads((run / "langsmith.json").read_text())
    for row in runs[0]["child_runs"]:
        row["outputs"]["nv_accuracy"] = row["outputs"].pop("context_recall")
        for metric in row["child_runs"]:
            if metric["name"] == "context_recall":
                metric["name"], metric["child_runs"] = "nv_accuracy", []
    (run / "langsmith.json").write_text(json.dumps(runs))
    planned = plan_audit(run / "langsmith.json")
    lines = [g for g in planned.graded if g.column == "nv_accuracy"]
    assert len(lines) == 2 and all(g.grade == UNRECORDED and "separate root runs" in g.reason for g in lines)


def test_two_chains_of_one_name_are_lossy_not_refused(tmp_path):
    """One class evaluated twice in a run (two FactualCorrectness modes) gives a row two metric chains of one
    name: which scored which column is not recorded, so the column is lossy (before: exit 2)."""
    run = small_copy(tmp_path)
    dump = json.loads((run / "traces.json").read_text())
    for chain in dump.values():
        if chain["metadata"].get("type") == "metric" and chain["name"] == "faithfulness":
            chain["name"] = "context_recall"
    (run / "traces.json").write_text(json.dumps(dump))
    planned = plan_audit(run / "traces.json", run / "scores.csv")
    recall = [g for g in planned.graded if g.column == "context_recall"]
    assert len(recall) == 2 and all(g.grade == LOSSY and "more than one metric chain" in g.reason for g in recall)


def test_an_export_of_two_evaluations_is_refused(tmp_path):
    run = small_copy(tmp_path)
    runs = json.loads((run / "langsmith.json").read_text())

    def renamed(value):
        if isinstance(value, dict):
            return {k: (v + "-b" if k in ("id", "parent_run_id") and isinstance(v, str) else renamed(v))
                    for k, v in value.items()}
        return [renamed(v) for v in value] if isinstance(value, list) else value

    (run / "langsmith.json").write_text(json.dumps(runs + renamed(runs)))
    with pytest.raises(HarnessInputError, match=r"expected one evaluation chain .* found 2 "):
        plan_audit(run / "langsmith.json", run / "scores.csv")


def test_flat_langsmith_runs_in_any_order(tmp_path):
    """Client.list_runs gives no particular order: the rows are put in their row_index order and other
    siblings in their dotted_order (here the rows' dotted_order are made equal and the list reversed: a stable
    sort by dotted_order alone would put row 1 first)."""
    run = small_copy(tmp_path)
    flat: list[dict] = []

    def walk(node: dict) -> None:
        flat.append({**node, "child_runs": None})
        for child in node["child_runs"] or []:
            walk(child)

    for root in json.loads((run / "langsmith.json").read_text()):
        walk(root)
    for node in flat:
        if (node["extra"] or {}).get("metadata", {}).get("type") == "row":
            node["dotted_order"] = node["dotted_order"].rsplit(".", 1)[0] + ".20260101T000000000000Z" + "f" * 36
    (run / "langsmith.json").write_text(json.dumps(flat[::-1]))
    assert graded(plan_audit(run / "langsmith.json", run / "scores.csv")) == \
        graded(plan_audit(SMALL / "traces.json", SMALL / "scores.csv"))
