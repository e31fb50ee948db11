"""The recording probe's budget and reply cap: a hostile judge costs one metric of one sample, not the
recording.

- a judge answering 20 MB (legacy ChatOpenAI and collections AsyncOpenAI): the reply is refused at the
  probe's 4 MiB reply cap before Ragas sees it; the probe's peak RSS stays under 1 GiB (was 2.2 GB), the
  metric is kept as not replayable with the cap's reason, the record exits 0 (every sample recorded);
- a gzip bomb (64 MiB of zeros in 64 kB): refused at the decompressed cap, by the transport itself;
- ``--case-judge-calls``: the call past the cap is never sent, the metric is "Ragas did not finish
  (N judge calls)"; ``--case-timeout``: a judge slower than it is "(time)"; the other samples and metrics
  are recorded as usual;
- ``--case-memory``: a judge that allocates past the memory budget is "(memory)".

Fault servers listen on 127.0.0.1 only; every subprocess and wait has a timeout.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from ragas_compat.cases import parse_suite_text
from ragas_compat.cli.app import app
from ragas_compat.probe.record import reply_cap

sys.path.insert(0, str(Path(__file__).parent))
from hostile_servers import FaultServer, answer
from record_judge_server import JudgeServer

CLI = [sys.executable, "-m", "ragas_compat"]
KEY_ENV = "RAGAS_COMPAT_TEST_JUDGE_KEY"
BIG = 20 * 2**20
# runs the command given after it and prints its children's peak RSS (the recording probe is one of them)
MEASURE = ("import resource, subprocess, sys\n"
           "proc = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=600)\n"
           "sys.stdout.write(proc.stdout)\nsys.stderr.write(proc.stderr)\n"
           "print('PEAK_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
           "sys.exit(proc.returncode)\n")


def env() -> dict[str, str]:
    return {**os.environ, KEY_ENV: "sk-loopback-test", "SOURCE_DATE_EPOCH": "1767225600"}


def record_in_process(argv: list[str]):
    """``ragas-compat record`` in process (CliRunner): the budgets are the recording probe's, which runs in its
    own process as usual."""
    return CliRunner().invoke(app, ["record", *argv], env={KEY_ENV: "sk-loopback-test",
                                                           "SOURCE_DATE_EPOCH": "1767225600"})


def _read_body(conn, head: bytes) -> None:
    match = re.search(rb"content-length: *(\d+)", head, re.I)
    want = int(match.group(1)) if match else 0
    got = len(head.partition(b"\r\n\r\n")[2])
    while got < want:  # bounded by the request's length
        chunk = conn.recv(65536)
        if not chunk:
            return
        got += len(chunk)


def _completion(content: str) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "judge-1",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()


def huge_judge(conn, head: bytes, server: FaultServer) -> None:
    """Lists judge-1 on /models; answers every completion with a 20 MB message."""
    if head.startswith(b"GET"):
        answer(conn, "200 OK", json.dumps({"object": "list", "data": [{"id": "judge-1"}]}).encode(),
               {"Content-Type": "application/json"})
        return
    _read_body(conn, head)
    answer(conn, "200 OK", _completion("x" * BIG), {"Content-Type": "application/json"})


# --------------------------------------------------------------------------- the reply cap
@pytest.mark.slow
@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_a_20_mb_reply_is_refused_at_the_cap_and_the_probe_stays_small(tmp_path, api):
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"user_input": "When was Alder founded?", "response": "In 1900.",
                                   "reference": "Alder was founded in 1900.",
                                   "retrieved_contexts": ["Alder was founded in 1900."],
                                   "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}) + "\n",
                       encoding="utf-8")
    out = tmp_path / "recorded.json"
    with FaultServer(huge_judge) as server:
        proc = subprocess.run([sys.executable, "-c", MEASURE, *CLI, "record", str(dataset), "--out", str(out),
                               "--openai-base-url", server.base_url, "--model", "judge-1", "--api-key-env", KEY_ENV,
                               "--api", api, "--metric", "context_precision_with_reference",
                               "--metric", "id_context_precision", "--concurrency", "1", "--request-timeout", "60",
                               "--max-retries", "0"],  # one attempt is the point: no client back-off to wait on
                              env=env(), capture_output=True, text=True, timeout=660)
    peak = int(re.search(r"PEAK_KIB (\d+)", proc.stderr).group(1)) * 1024
    print(f"record with a 20 MB judge reply ({api}): peak RSS {peak / 2**20:.0f} MiB, exit {proc.returncode}")
    assert proc.returncode == 0, proc.stderr  # every sample recorded (the README's exit 0)
    assert peak < 2**30, f"peak RSS {peak / 2**20:.0f} MiB"
    text = out.read_text(encoding="utf-8")
    assert len(text) < 2**20
    parse_suite_text(text, source=out.name)  # `run` reads it
    case = json.loads(text)["cases"][0]
    reasons = case["recording"]["not_replayable"]
    target = next(t for t in reasons if t.endswith("ContextPrecisionWithReference"))
    assert "over the probe's reply cap of 4,194,304 bytes" in reasons[target]
    assert "not replayed" in reasons[target]
    assert "context_precision_with_reference" not in case.get("verdicts", {})
    attempts = case["recording"]["replies"]["context_precision_with_reference"][0]["failed_attempts"]
    assert any(a.startswith("ReplyTooLarge: ") for a in attempts)
    assert case["recording"]["live"]["legacy:IDBasedContextPrecision"] == 1.0  # the other metric goes on


def _serve_once(body: bytes, headers: dict[str, str]):
    def handler(conn, head: bytes, server: FaultServer) -> None:
        _read_body(conn, head)
        answer(conn, "200 OK", body, headers)
    return FaultServer(handler)


def test_a_gzip_bomb_is_refused_at_the_decompressed_cap_and_a_small_gzip_reply_passes():
    bomb = gzip.compress(b"\0" * (64 * 2**20), compresslevel=9)
    assert len(bomb) < 2**20
    seen: list[str] = []

    async def fetch(url: str) -> httpx.Response:
        async with reply_cap.async_client(10.0, on_too_large=lambda exc: seen.append(str(exc))) as client:
            return await client.post(url, content=b"{}")

    with _serve_once(bomb, {"Content-Encoding": "gzip"}) as server:
        with pytest.raises(reply_cap.ReplyTooLarge, match="decompressed"):
            asyncio.run(asyncio.wait_for(fetch(server.base_url), 30))
        with reply_cap.sync_client(10.0) as client, pytest.raises(reply_cap.ReplyTooLarge):
            client.post(server.base_url, content=b"{}")
    assert len(seen) == 1 and "4,194,304" in seen[0]
    assert all(b"gzip, deflate" in head for head in server.requests)
    small = _completion("fine")
    with _serve_once(gzip.compress(small), {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as server:
        response = asyncio.run(asyncio.wait_for(fetch(server.base_url), 30))
    assert response.json()["choices"][0]["message"]["content"] == "fine"


def test_a_plain_body_over_the_cap_is_refused_without_reading_it_all():
    body = b"y" * (6 * 2**20)
    with _serve_once(body, {}) as server, reply_cap.sync_client(10.0, cap=2**20) as client:
        with pytest.raises(reply_cap.ReplyTooLarge) as caught:
            client.post(server.base_url, content=b"{}")
    assert 2**20 < caught.value.size < 2 * 2**20


# --------------------------------------------------------------------------- the budget
def _row(i: int, contexts: list[str]) -> dict:
    name = ["Alder", "Birch", "Cedar"][i]
    return {"user_input": f"When was {name}works founded?", "response": f"{name}works was founded in 1900.",
            "reference": f"{name}works was founded in 1900.", "retrieved_contexts": contexts,
            "retrieved_context_ids": [f"d{k}" for k in range(len(contexts))], "reference_context_ids": ["d0"]}


@pytest.mark.slow
def test_judge_call_cap_and_deadline_stop_one_metric_of_one_sample(tmp_path):
    rows = [_row(0, [f"Alderworks was founded in 1900 (source {k})." for k in range(3)]),  # 3 calls > cap 2
            _row(1, ["SLOW Birchworks was founded in 1900."]),                           # slower than 2 s
            _row(2, ["Cedarworks was founded in 1900."])]                                # as usual
    dataset = tmp_path / "three.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "recorded.json"
    with JudgeServer(slow_seconds=6.0) as server:
        proc = record_in_process([str(dataset), "--out", str(out), "--openai-base-url", server.base_url,
                                  "--model", server.model, "--api-key-env", KEY_ENV, "--max-retries", "0",
                                  "--metric", "context_precision_with_reference", "--metric", "id_context_precision",
                                  "--concurrency", "3", "--case-judge-calls", "2", "--case-timeout", "2"])
        asked = server.requests
    assert proc.exit_code == 0, proc.output
    cases = {c["id"]: c for c in json.loads(out.read_text(encoding="utf-8"))["cases"]}
    target = "legacy:LLMContextPrecisionWithReference"
    capped = cases["row-1"]["recording"]
    assert capped["live"][target]["error"]["type"] == "BudgetExceeded"
    assert capped["live"][target]["error"]["message"].startswith("Ragas did not finish (3 judge calls)")
    assert "not replayed" in capped["not_replayable"][target]
    prompts = capped["replies"]["context_precision_with_reference"]
    assert [len(p["replies"]) for p in prompts] == [1, 1, 0]  # Ragas asked a third time; it was never sent
    slow = cases["row-2"]["recording"]
    assert slow["live"][target]["error"]["message"].startswith("Ragas did not finish (time)")
    assert target in slow["not_replayable"]
    assert asked == 2 + 1 + 1  # row-1: 2 calls; row-2: 1 (stopped); row-3: 1
    usual = cases["row-3"]
    assert usual["verdicts"]["context_precision_with_reference"] == [1]
    assert not usual["recording"].get("not_replayable")
    assert {i: c["recording"]["live"]["legacy:IDBasedContextPrecision"] for i, c in cases.items()} == {
        "row-1": 1 / 3, "row-2": 1.0, "row-3": 1.0}  # the judge-free metric is scored on every sample


FACTORY = '''
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class Hoarder(BaseChatModel):
    @property
    def _llm_type(self):
        return "hoarder"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if "ALLOCATE" in str(messages[-1].content):
            block = bytearray(4 * 2**30)  # over 3 GiB of memory (never touched: no RSS without a limit)
            block[-1] = 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content='{"reason": "r", "verdict": 1}'))])


def make_judge():
    return Hoarder()
'''


@pytest.mark.slow
def test_a_judge_past_the_memory_budget_is_one_memory_value(tmp_path, monkeypatch):
    (tmp_path / "hoarding_judge.py").write_text(FACTORY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # --llm names a module of the current folder
    rows = [_row(0, ["ALLOCATE Alderworks was founded in 1900."]), _row(1, ["Birchworks was founded in 1900."])]
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "recorded.json"
    proc = record_in_process([str(dataset), "--out", str(out), "--llm", "hoarding_judge:make_judge",
                              "--metric", "context_precision_with_reference", "--concurrency", "1",
                              "--case-memory", "3"])
    assert proc.exit_code == 0, proc.output
    cases = {c["id"]: c for c in json.loads(out.read_text(encoding="utf-8"))["cases"]}
    target = "legacy:LLMContextPrecisionWithReference"
    value = cases["row-1"]["recording"]["live"][target]
    assert value["error"]["type"] == "BudgetExceeded"
    assert value["error"]["message"].startswith("Ragas did not finish (memory)")
    assert "the 3 GiB of memory" in value["error"]["message"]
    assert cases["row-2"]["verdicts"]["context_precision_with_reference"] == [1]


def test_a_malformed_budget_is_refused_by_the_recording_probe(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"samples": [], "metrics": [], "targets": [], "budget": {"judge_calls": 0},
                                   "output": str(tmp_path / "out.json")}), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "ragas_compat.probe.record", str(request)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "record error: 'budget.judge_calls' must be a positive integer" in proc.stderr


def test_the_record_options_travel_in_the_request(tmp_path, monkeypatch):
    from ragas_compat.errors import RagasUnavailable
    from ragas_compat.tools.record import probe_stream, session

    seen: dict = {}

    def capture(command, **kwargs):
        seen.update(json.loads(Path(command[-1]).read_text(encoding="utf-8")))
        raise OSError("not started")

    monkeypatch.setattr(probe_stream, "GroupProcess", capture)
    budget = session.record_budget(judge_calls=7, case_seconds=3.5, memory_gib=1.5)
    with pytest.raises(RagasUnavailable, match="not started"), \
            probe_stream.RecordingProbe([{"id": "a"}], ("id_context_precision",), None, python=sys.executable,
                                        concurrency=3, batch_size=5, timeout=10, budget=budget):
        pass
    assert seen["budget"] == {"judge_calls": 7, "judge_chars": 16 * 2**20, "case_seconds": 3.5,
                              "memory": int(1.5 * 2**30)}
    assert (seen["concurrency"], seen["batch_size"], seen["samples"]) == (3, 5, [{"id": "a"}])
    defaults = session.record_budget()
    assert (defaults["judge_calls"], defaults["case_seconds"]) == (session.RECORD_JUDGE_CALLS,
                                                                   session.RECORD_CASE_SECONDS)
    from ragas_compat.runner import case_budget
    assert case_budget()["judge_calls"] == 50  # record's budget leaves run's as it was
