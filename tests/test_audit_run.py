"""``ragas-compat audit-run``: a Ragas run someone else made, from its saved traces to a verdict.

The traces come from REAL Ragas ``evaluate()`` runs (``tests/data/audit_run/evaluate_and_save.py``, in a
subprocess with this interpreter: Ragas is never imported into the test process) over the bundled
suite's samples, judged by a scripted OpenAI-compatible server on 127.0.0.1 (``record_judge_server``),
and saved the way the README tells a user to (``ragas_traces`` as ``model_dump(mode="json")``,
``to_pandas()`` as CSV and Parquet). ``FailOnceJudge`` makes the first context-precision and the first
NLI reply unparseable once, so Ragas's fix_output_format retry runs and fixes them. The clean run takes the
first ``CLEAN_ROWS`` samples: over all 141 (3.5 times the Ragas work) the audit-run reader ran the same lines
and graded the same kinds of line. ``audit-run`` and ``run`` run in this process (typer's CliRunner: a
subprocess would only add an interpreter start and the CLI's imports; the replay's probe is a subprocess
either way).

``tests/data/audit_run/small/`` is such a run (two samples, the fail-once judge), kept so the input-error
tests need no Ragas: regenerate it with ``python tests/test_audit_run.py``. It also holds the run's
traces list and its LangSmith export (the chain runs only: the llm runs, which the reader ignores, are
dropped to keep it small); ``tests/test_audit_run_formats.py`` tests those.
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
from ragas_compat.tools.audit_run.rebuild import REDERIVABLE
from ragas_compat.values import decode_ragas_value

sys.path.insert(0, str(Path(__file__).parent))
from conftest import built_once
from record_judge_server import JudgeServer, parse_prompt

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "audit_run"
GENERATOR = DATA / "evaluate_and_save.py"
SMALL = DATA / "small"
BUNDLED = ROOT / "harness" / "cases" / "suites" / "default.json"
CLEAN_ROWS = 40
METRICS = ("context_precision", "llm_context_precision_without_reference", "context_recall", "faithfulness")
UNPARSEABLE = "UNPARSEABLE-ONCE"


class FailOnceJudge(JudgeServer):
    """The record tests' judge, except that the first context-precision reply and the first NLI reply
    are not valid JSON; asked to fix its output, it sends the reply it should have sent."""

    def __init__(self) -> None:
        super().__init__()
        self.failed: list[str] = []

    def reply(self, prompt: str) -> str:
        head, data = parse_prompt(prompt)
        if head.startswith("The output string did not satisfy") and UNPARSEABLE in data["output_string"]:
            return json.dumps({"text": super().reply(data["prompt_value"])})
        for kind, start in (("context_precision", "Given question, answer and context verify"),
                            ("nli", "Your task is to judge the faithfulness")):
            if head.startswith(start):
                with self.lock:
                    first = kind not in self.failed
                    if first:
                        self.failed.append(kind)
                if first:
                    return '{"reason": "' + UNPARSEABLE + '", "verdict": yes}'
        return super().reply(prompt)


def evaluate_and_save(out: Path, judge: JudgeServer, *args: str) -> Path:
    proc = subprocess.run([sys.executable, str(GENERATOR), str(BUNDLED), str(out), "--base-url", judge.base_url,
                           *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def cli(*args: str) -> Result:
    """``ragas-compat ARGS`` run in this process."""
    return CliRunner().invoke(app, list(args))


def audit(tmp: Path, traces: Path, *args: str) -> tuple[Result, dict | None]:
    """``audit-run`` run in this process from ``tmp``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp)
        result = cli("audit-run", str(traces), "--cases-out", str(tmp / "cases.json"), "--out", str(tmp / "report"),
                     "--format", "json", "--workers", "2", *args)
    return result, (json.loads(result.stdout) if result.exit_code in (0, 1) else None)


def csv_scores(path: Path) -> list[dict[str, float]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [{m: float(row[m]) if row[m] != "" else math.nan for m in METRICS} for row in csv.DictReader(handle)]


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> Path:
    with JudgeServer() as judge:
        return evaluate_and_save(tmp_path_factory.mktemp("clean-run"), judge, "--first", str(CLEAN_ROWS))


def evaluate_with_retries(out: Path) -> None:
    with FailOnceJudge() as judge:
        evaluate_and_save(out, judge, "--first", "8", "--only-complete")
        assert sorted(judge.failed) == ["context_precision", "nli"]


@pytest.fixture(scope="module")
def retry_run(tmp_path_factory) -> Path:
    """Made once per test run (pytest-xdist's workers share it); read by two tests."""
    return built_once(tmp_path_factory, "audit-run-retry", evaluate_with_retries)


def check_round_trip(run: Path, doc: dict) -> list[dict]:
    """Every (row, metric) graded; every re-derivable reported score reproduced bit for bit; the reported
    scores are the table's."""
    table = csv_scores(run / "scores.csv")
    assert doc["rows"] == len(table)
    lines = doc["lines"]
    assert sorted((line["row"], line["metric"]) for line in lines) == \
        sorted((row, metric) for row in range(len(table)) for metric in METRICS)
    rederivable = [line for line in lines if line["grade"] == REDERIVABLE]
    assert rederivable
    for line in rederivable:
        expected = table[line["row"]][line["metric"]]
        replayed = decode_ragas_value(line["replayed"])
        assert line["status"] == "reproduced", line
        assert isinstance(replayed, float) and (bits(replayed) == bits(expected) or
                                                (math.isnan(replayed) and math.isnan(expected))), line
    assert doc["reproduced"] == len(rederivable)
    assert not [f for f in doc["findings"] if f["kind"] != "subset_mean"]
    for metric in METRICS:
        nans = sum(1 for row in table if math.isnan(row[metric]))
        subset = [f for f in doc["findings"] if f["kind"] == "subset_mean" and f["metric"] == metric]
        assert len(subset) == (1 if nans else 0)
        if nans:
            assert f"over {len(table) - nans} of {len(table)} rows" in subset[0]["message"]
    return lines


@pytest.mark.slow
def test_clean_run_over_the_bundled_samples_round_trips(clean_run, tmp_path):
    proc, doc = audit(tmp_path, clean_run / "traces.json", "--scores", str(clean_run / "scores.csv"),
                      "--dataset", str(clean_run / "dataset.jsonl"))
    assert doc is not None, proc.stderr
    lines = check_round_trip(clean_run, doc)
    assert proc.exit_code == (1 if doc["findings"] else 0)
    # the samples hold a NaN (a mean over a subset of the rows) and rows of no, one and several contexts
    assert any(math.isnan(score) for row in csv_scores(clean_run / "scores.csv") for score in row.values())
    contexts = {len(json.loads(line)["retrieved_contexts"])
                for line in (clean_run / "dataset.jsonl").read_text().splitlines()}
    assert {0, 1} < contexts, contexts
    assert doc["grades"]["not rebuilt"] == 0
    # the dataset's ids name the cases; the case file is an ordinary one
    ids = [json.loads(line)["id"] for line in (clean_run / "dataset.jsonl").read_text().splitlines()]
    assert [line["case"] for line in lines[::len(METRICS)]] == ids
    cases = json.loads((tmp_path / "cases.json").read_text())["cases"]
    assert [case["id"] for case in cases] == ids
    for name in ("report.json", "report.md", "audit-run.md", "audit-run.json"):
        assert (tmp_path / "report" / name).is_file()


@pytest.mark.slow
def test_fix_output_format_retry_is_rederivable_and_run_replays_the_case_file(retry_run, tmp_path):
    proc, doc = audit(tmp_path, retry_run / "traces.json", "--scores", str(retry_run / "scores.csv"))
    assert doc is not None, proc.stderr
    lines = check_round_trip(retry_run, doc)
    assert proc.exit_code == 0, doc["findings"]
    retried = [line for line in lines if line["note"] and "fix_output_format" in line["note"]]
    assert {line["metric"] for line in retried} >= {"faithfulness"}
    assert any(line["metric"] in METRICS[:2] for line in retried)
    assert all(line["grade"] == REDERIVABLE for line in lines)
    # the Parquet table gives the same audit: audit-run reads the table only in plan_audit, and the plans are
    # the same (the case file, every grade, every reported and recorded score bit for bit)
    by_csv = plan_audit(retry_run / "traces.json", retry_run / "scores.csv")
    by_parquet = plan_audit(retry_run / "traces.json", retry_run / "scores.parquet")
    assert by_parquet.table.source.endswith("scores.parquet")
    assert json.loads(by_parquet.text)["cases"] == json.loads(by_csv.text)["cases"]
    assert (by_parquet.graded, by_parquet.columns, by_parquet.case_ids) == (by_csv.graded, by_csv.columns, by_csv.case_ids)
    for scores in ("reported", "recorded"):
        assert {k: bits(v) for k, v in getattr(by_parquet, scores).items()} == \
            {k: bits(v) for k, v in getattr(by_csv, scores).items()}
    assert len(by_parquet.reported) == len(lines)
    # run takes the case file from there: every reported score is a live score it reproduces
    rerun = cli("run", "--cases", str(tmp_path / "cases.json"), "--out", str(tmp_path / "rerun"), "--format", "json",
                "--workers", "2")
    assert rerun.exit_code == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    replay = json.loads(rerun.stdout)["replay"]
    assert replay["live"] == replay["reproduced"] == len(lines)


@pytest.mark.slow
def test_an_edited_reported_score_is_caught(retry_run, tmp_path):
    rows = list(csv.DictReader((retry_run / "scores.csv").open(newline="", encoding="utf-8")))
    edited_row = 3
    original = float(rows[edited_row]["faithfulness"])
    rows[edited_row]["faithfulness"] = repr(min(1.0, original + 0.25) if original < 1.0 else 0.75)
    edited = tmp_path / "edited.csv"
    with edited.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    # one run in the terminal's format: it names the row; audit-run.json holds what --format json prints
    proc = cli("audit-run", str(retry_run / "traces.json"), "--scores", str(edited), "--cases-out",
               str(tmp_path / "c2.json"), "--out", str(tmp_path / "r2"), "--workers", "2")
    assert proc.exit_code == 1, proc.stderr
    assert f"row {edited_row}, faithfulness" in " ".join(proc.stdout.split())
    doc = json.loads((tmp_path / "r2" / "audit-run.json").read_text(encoding="utf-8"))
    kinds = {(f["kind"], f["row"], f["metric"]) for f in doc["findings"]}
    assert kinds == {("not_reproduced", edited_row, "faithfulness"), ("table_differs", edited_row, "faithfulness")}


# --------------------------------------------------------------------------- bad input (no Ragas needed)

def small_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(SMALL, folder)
    return folder


def test_small_run_plans_without_ragas():
    planned = plan_audit(SMALL / "traces.json", SMALL / "scores.csv")
    assert len(planned.traces.rows) == 2
    assert {g.grade for g in planned.graded} == {REDERIVABLE}
    assert any(g.note and "fix_output_format" in g.note for g in planned.graded)
    # planning imports no Ragas: checked in a fresh interpreter (this process may hold Ragas from other tests),
    # one for both inputs (after each, the Ragas modules loaded so far)
    code = ("import sys\nfrom ragas_compat.tools.audit_run.audit import plan_audit\n"
            "for traces in ('traces.json', 'langsmith.json'):\n"
            f"    plan_audit({str(SMALL)!r} + '/' + traces, {str(SMALL / 'scores.csv')!r})\n"
            "    print(traces, sorted(m for m in sys.modules if m.split('.')[0] == 'ragas'))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout.splitlines()) == (0, ["traces.json []", "langsmith.json []"]), \
        proc.stdout + proc.stderr[-2000:]


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.97])
def test_truncated_dump_names_row_and_path(tmp_path, cut):
    run = small_copy(tmp_path)
    text = (run / "traces.json").read_text()
    (run / "traces.json").write_text(text[: int(len(text) * cut)])
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "traces.json", run / "scores.csv")
    message = caught.value.problems[0]
    assert "cut short (truncated)" in message and "$[" in message
    assert "row " in message or "the evaluation" in message


def test_truncated_dump_exits_2_and_writes_nothing(tmp_path):
    run = small_copy(tmp_path)
    text = (run / "traces.json").read_text()
    (run / "traces.json").write_text(text[: len(text) // 2])
    proc = cli("audit-run", str(run / "traces.json"), "--scores", str(run / "scores.csv"), "--cases-out",
               str(tmp_path / "cases.json"), "--out", str(tmp_path / "report"))
    assert proc.exit_code == 2, proc.stderr
    error = " ".join(proc.stderr.split())
    assert "traces.json: row " in error and "truncated" in error and '$["' in error
    assert not (tmp_path / "cases.json").exists() and not (tmp_path / "report").exists()


def test_a_run_none_of_whose_scores_can_be_replayed_is_refused_not_passed(tmp_path):
    """A scores table whose only metric column no trace can re-derive (answer_relevancy: embeddings) made a
    case file with no verdicts: the replay scored 0 rows, "Verdict: expected: 0 rows", exit 0, although
    nothing was checked (``run`` refuses such a case file, exit 2). A reported 7.0 passed as well."""
    run = small_copy(tmp_path)
    rows = list(csv.DictReader((run / "scores.csv").open(newline="", encoding="utf-8")))
    samples = ("user_input", "retrieved_contexts", "response", "reference")
    with (run / "scores.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*samples, "answer_relevancy"])
        writer.writeheader()
        writer.writerows({**{name: row[name] for name in samples}, "answer_relevancy": "7.0"} for row in rows)
    proc = cli("audit-run", str(run / "traces_list.json"), "--scores", str(run / "scores.csv"), "--cases-out",
               str(tmp_path / "cases.json"), "--out", str(tmp_path / "report"))
    assert proc.exit_code == 2, proc.stdout + proc.stderr
    error = " ".join(proc.stderr.split())
    assert "traces_list.json: no (row, metric) of the run can be replayed" in error and "unrecorded" in error
    assert not (tmp_path / "cases.json").exists() and not (tmp_path / "report").exists()


def test_bad_chains_are_named_by_row_and_path(tmp_path):
    run = small_copy(tmp_path)
    dump = json.loads((run / "traces.json").read_text())
    metric_id = next(k for k, v in dump.items() if v["metadata"].get("type") == "metric" and v["name"] == "faithfulness")
    prompt_id = next(k for k, v in dump.items() if v["metadata"].get("type") == "ragas_prompt")
    dump[metric_id]["outputs"]["output"] = "high"
    del dump[prompt_id]
    (run / "traces.json").write_text(json.dumps(dump))
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "traces.json", run / "scores.csv")
    problems = caught.value.problems
    assert any(f'row 0: $["{metric_id}"].outputs.output: expected the metric\'s score' in p or
               f'$["{metric_id}"].outputs.output' in p for p in problems), problems
    assert any("is not in the dump" in p and "row " in p for p in problems), problems


def test_table_of_another_run_is_refused(tmp_path):
    run = small_copy(tmp_path)
    rows = list(csv.DictReader((run / "scores.csv").open(newline="", encoding="utf-8")))
    rows[1]["user_input"] = "another question?"
    rows[0]["context_recall"] = "high"
    with (run / "scores.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(HarnessInputError) as caught:
        plan_audit(run / "traces.json", run / "scores.csv")
    problems = " ".join(caught.value.problems)
    assert "row 1" in problems and "user_input" in problems and "row 0" in problems and "context_recall" in problems


def test_a_nan_with_no_recorded_cause_is_unrecorded(tmp_path):
    """A metric chain that raised keeps outputs {} (the tracer has no error handler): the row's NaN is
    graded unrecorded, not replayed, and the case has no verdicts for it."""
    run = small_copy(tmp_path)
    dump = json.loads((run / "traces.json").read_text())
    metric_id = next(k for k, v in dump.items() if v["metadata"].get("type") == "metric" and v["name"] == "context_recall")
    row = next(v for v in dump.values() if metric_id in v["children"])
    dump[metric_id]["outputs"] = {}
    row["outputs"]["context_recall"] = None
    (run / "traces.json").write_text(json.dumps(dump))
    planned = plan_audit(run / "traces.json")
    graded = next(g for g in planned.graded if g.row == row["metadata"]["row_index"] and g.column == "context_recall")
    assert graded.grade == "unrecorded" and "records no error" in graded.reason
    case = json.loads(planned.text)["cases"][graded.row]
    assert "context_recall" not in case.get("verdicts", {})
    assert "legacy:LLMContextRecall" not in case["recording"]["live"]


def chain_runs_only(path: Path) -> None:
    """Keep only the chain runs of a nested LangSmith export (the reader ignores the llm runs, which hold
    most of its bytes: the rendered prompts and the client's serialized settings)."""
    def keep(run: dict) -> dict:
        return {**run, "child_runs": [keep(c) for c in run["child_runs"] or [] if c["run_type"] == "chain"],
                "child_run_ids": [c["id"] for c in run["child_runs"] or [] if c["run_type"] == "chain"]}
    path.write_text(json.dumps([keep(run) for run in json.loads(path.read_text())]))


if __name__ == "__main__":  # regenerate tests/data/audit_run/small/
    with FailOnceJudge() as server:
        target = SMALL
        shutil.rmtree(target, ignore_errors=True)
        evaluate_and_save(target, server, "--first", "2", "--only-complete")
        (target / "scores.parquet").unlink()
        (target / "langsmith_flat.json").unlink()
        chain_runs_only(target / "langsmith.json")
        print(f"wrote {target} (judge failed once: {server.failed})")


@pytest.mark.parametrize("existed", [True, False])
def test_an_interrupted_audit_run_leaves_the_case_file_as_it_was(tmp_path, monkeypatch, existed):
    """audit-run wrote --cases-out before the replay and the reports: a Ctrl-C mid-run (exit 130) left the new
    case file beside the old report set. The case file is now put back as it was (or removed) unless the
    reports were published."""
    import ragas_compat.cli.audit_run as command

    def interrupted(*args, **kwargs):
        assert (tmp_path / "cases.json").read_text(encoding="utf-8") != "old"  # written before the replay
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "run_audit", interrupted)
    if existed:
        (tmp_path / "cases.json").write_text("old", encoding="utf-8")
    proc = cli("audit-run", str(SMALL / "traces.json"), "--scores", str(SMALL / "scores.csv"), "--cases-out",
               str(tmp_path / "cases.json"), "--out", str(tmp_path / "report"))
    assert proc.exit_code == 130, proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "report") == (["cases.json"] if existed else [])
    assert not (tmp_path / "report").exists() or list((tmp_path / "report").iterdir()) == []
    if existed:
        assert (tmp_path / "cases.json").read_text(encoding="utf-8") == "old"


def test_a_finished_audit_run_keeps_no_copy_of_the_old_case_file(tmp_path):
    from ragas_compat.cli.audit_run import CaseFileKept

    path = tmp_path / "cases.json"
    path.write_text("old", encoding="utf-8")
    with CaseFileKept(path) as kept:
        path.write_text("new", encoding="utf-8")
        kept.done()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.json"] and path.read_text(encoding="utf-8") == "new"
