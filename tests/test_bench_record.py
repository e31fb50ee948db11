"""The record-against-evaluate() bench row (``ragas_compat.tools.bench_record``) and ``bench --row``: shape only.

No timing is asserted: the row's numbers are for the issue note. Both sides run for real (``record`` and
Ragas's ``evaluate()`` in subprocesses, against the loopback judge, on a few samples) in the ``bench --quick``
run that tests/test_bench.py shares among its tests: ``test_record_and_evaluate_ask_the_judge_the_same_calls``
there reads that row.
"""

from __future__ import annotations

import json
import urllib.request

from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.tools import bench
from ragas_compat.tools.bench_record import (
    INPUT_MARKER,
    MODEL,
    LatencyJudge,
    bench_samples,
    judge_reply,
)
from ragas_compat.tools.bench_rows import BenchRow


def prompt(instruction: str, data: dict) -> str:
    return f"{instruction} ...{INPUT_MARKER}{json.dumps(data)}\nOutput: "


def test_the_judge_answers_each_prompt_of_the_benched_metrics_from_its_content():
    sample = bench_samples(3)[2]
    useful = json.loads(judge_reply(prompt("Given question, answer and context verify if the context was useful",
                                           {"question": "q", "context": sample["retrieved_contexts"][0],
                                            "answer": sample["reference"]})))
    unrelated = json.loads(judge_reply(prompt("Given question, answer and context verify if ...",
                                              {"question": "q", "context": sample["retrieved_contexts"][2],
                                               "answer": sample["reference"]})))
    assert (useful["verdict"], unrelated["verdict"]) == (1, 0)
    recall = json.loads(judge_reply(prompt("Given a context, and an answer, analyze each sentence in the answer",
                                           {"question": "q", "context": " ".join(sample["retrieved_contexts"]),
                                            "answer": sample["reference"]})))
    assert [c["attributed"] for c in recall["classifications"]] == [1, 0]
    statements = json.loads(judge_reply(prompt("Given a question and an answer, analyze the complexity",
                                               {"question": "q", "answer": sample["response"]})))
    assert statements == {"statements": ["Company2 was founded in 1902.", "It builds pumps."]}
    verdicts = json.loads(judge_reply(prompt("Your task is to judge the faithfulness of a series of statements",
                                             {"context": sample["retrieved_contexts"][0],
                                              "statements": statements["statements"]})))
    assert [v["verdict"] for v in verdicts["statements"]] == [1, 0]
    assert judge_reply(prompt("Something else entirely", {})) == "I do not understand the question."


def test_the_loopback_judge_serves_chat_completions_and_counts_calls():
    with LatencyJudge(latency=0.0) as judge:
        body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": prompt(
            "Given a question and an answer, analyze", {"question": "q", "answer": "One. Two."})}]}).encode()
        request = urllib.request.Request(f"{judge.base_url}/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            reply = json.loads(response.read())
        assert json.loads(reply["choices"][0]["message"]["content"]) == {"statements": ["One.", "Two."]}
        assert (judge.requests, judge.unknown) == (1, 0)


def test_bench_row_selects_the_measurements_and_refuses_unknown_rows(monkeypatch):
    made = []
    monkeypatch.setattr(bench, "measure_probe_overhead", lambda *a, **k: made.append("probe") or
                        [BenchRow("probe_overhead", "probe")][0])
    rows = bench.run_bench(True, only=["probe_overhead"])
    assert [row.id for row in rows] == ["probe_overhead"] and made == ["probe"]
    assert bench.ROW_IDS[-1] == "record_vs_evaluate"
    result = CliRunner().invoke(app, ["bench", "--row", "record_vs_evaluat"])
    assert result.exit_code == 2 and "no such bench row" in result.output
