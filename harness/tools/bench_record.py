"""``record`` against Ragas's own ``evaluate()``, for ``ragas-compat bench`` (issue 40).

Both sides score the same samples with the same judged metrics against one loopback
OpenAI-compatible chat-completions server (``LatencyJudge``, standard library, in a thread of this
process) that waits a fixed latency before every reply (default 100 ms), as a hosted model does:

- ``record``: ``ragas-compat record DATASET --out X --openai-base-url URL --model M`` with its defaults
  (concurrency = Ragas's ``RunConfig.max_workers``, batches of 16 samples), in a subprocess;
- ``evaluate()``: a subprocess that imports Ragas and runs ``ragas.evaluate`` on the same samples with the
  same legacy classes, ``LangchainLLMWrapper(ChatOpenAI(...))`` pointed at the same server, Ragas's
  default ``RunConfig``.

Each side's wall time includes its start-up (a user waits for the whole command). The row's ratio is
record's samples per second over evaluate()'s (= evaluate's seconds over record's), the two sides
alternating in each repetition; target >= 0.9. The judge answers every prompt from its content (word
overlap), so both sides get the same replies whatever the order of the calls.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ragas_compat.tools.bench_rows import BenchRow

RECORD_TARGET = 0.9
LATENCY_SECONDS = 0.1
METRICS = ("context_precision_with_reference", "faithfulness", "context_recall")
KEY_ENV = "RAGAS_COMPAT_BENCH_JUDGE_KEY"
MODEL = "bench-judge"
INPUT_MARKER = "\nNow perform the same with the following input\ninput: "
OUTPUT_SUFFIX = "\nOutput: "
_STOP = {"the", "a", "an", "is", "are", "was", "of", "in", "on", "and", "to", "it", "its", "for", "by", "with",
         "what", "which", "when", "how", "does", "did", "at", "as", "be", "that", "this", "from"}


def _words(text: Any) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", str(text).lower()) if w not in _STOP and len(w) > 2}


def _sentences(text: Any) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", str(text).strip()) if s.strip()]


def judge_reply(prompt: str) -> str:
    """The judge's reply to one of the legacy prompts of ``METRICS``, from the prompt's content alone."""
    head, _, tail = prompt.rpartition(INPUT_MARKER)
    data = json.loads(tail[: -len(OUTPUT_SUFFIX)] if tail.endswith(OUTPUT_SUFFIX) else tail)
    if head.startswith("Given question, answer and context verify"):  # context precision
        useful = int(bool(_words(data["context"]) & _words(data["answer"])))
        return json.dumps({"reason": "overlap" if useful else "unrelated", "verdict": useful})
    if head.startswith("Given a context, and an answer, analyze each sentence"):  # context recall
        context = _words(data["context"])
        return json.dumps({"classifications": [
            {"statement": s, "reason": "checked", "attributed": int(len(_words(s) & context) >= 2)}
            for s in _sentences(data["answer"])]})
    if head.startswith("Given a question and an answer, analyze"):  # faithfulness: statements
        return json.dumps({"statements": _sentences(data["answer"])})
    if head.startswith("Your task is to judge the faithfulness"):  # faithfulness: verdicts
        context = _words(data["context"])
        return json.dumps({"statements": [
            {"statement": s, "reason": "checked", "verdict": int(len(_words(s) & context) >= 2)}
            for s in data["statements"]]})
    return "I do not understand the question."


class _Server(ThreadingHTTPServer):
    """The loopback judge's server with a listen backlog for Ragas's 16 concurrent jobs: the standard
    library's default of 5 refuses connections under load, and evaluate() (max_retries=0) turns each
    refusal into a NaN."""

    request_queue_size = 128


class LatencyJudge:
    """A loopback chat-completions server answering ``judge_reply`` after ``latency`` seconds per call."""

    def __init__(self, latency: float = LATENCY_SECONDS) -> None:
        self.latency = latency
        self.requests = 0
        self.unknown = 0
        self.lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a hosted endpoint

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(min(length, 1 << 24)) or b"{}")
                started = time.monotonic()
                prompt = next((m["content"] for m in reversed(body.get("messages", []))
                               if isinstance(m.get("content"), str) and INPUT_MARKER in m["content"]), "")
                try:
                    content = judge_reply(prompt)
                except (ValueError, KeyError, TypeError):
                    content = "I do not understand the question."
                with judge.lock:
                    judge.requests += 1
                    judge.unknown += content.startswith("I do not")
                time.sleep(max(0.0, judge.latency - (time.monotonic() - started)))
                self._send(200, {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": MODEL,
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                              "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> LatencyJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def bench_samples(count: int) -> list[dict[str, Any]]:
    """``count`` deterministic RAG samples (3 retrieved contexts each, one of them unrelated)."""
    out = []
    for i in range(count):
        name, year = f"Company{i}", 1900 + i % 120
        contexts = [f"{name} was founded in {year} by engineer Person{i}.",
                    f"{name} builds industrial pumps and valves in factory {i % 7}.",
                    f"Weather report number {i}: rain expected tomorrow."]
        out.append({"user_input": f"When was {name} founded?", "retrieved_contexts": contexts,
                    "response": f"{name} was founded in {year}. It builds pumps.",
                    "reference": f"{name} was founded in {year}. Its founder was Person{i}."})
    return out


# Ragas's own evaluate() on the same samples, metrics and judge (runs with the bench's interpreter).
EVALUATE_SCRIPT = """
import json, os, sys, time
os.environ["RAGAS_DO_NOT_TRACK"] = "true"
started = time.perf_counter()
from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, evaluate
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import Faithfulness, LLMContextPrecisionWithReference, LLMContextRecall
dataset_path, base_url, model, key_env = sys.argv[1:5]
samples = [json.loads(line) for line in open(dataset_path, encoding="utf-8") if line.strip()]
llm = LangchainLLMWrapper(ChatOpenAI(model=model, base_url=base_url, api_key=os.environ[key_env], max_retries=0,
                                     timeout=30))
result = evaluate(EvaluationDataset.from_list(samples), metrics=[LLMContextPrecisionWithReference(),
                  Faithfulness(), LLMContextRecall()], llm=llm, show_progress=False)
scores = result.to_pandas()
print(json.dumps({"rows": len(scores), "nan": int(scores[["llm_context_precision_with_reference", "faithfulness",
                  "context_recall"]].isna().sum().sum()), "seconds": time.perf_counter() - started}))
"""


def _environment() -> dict[str, str]:
    return {**os.environ, "RAGAS_DO_NOT_TRACK": "true", KEY_ENV: "sk-loopback-bench"}


def _record_once(python: str, dataset: Path, out: Path, judge: LatencyJudge, extra: tuple[str, ...] = ()) -> float:
    command = [python, "-m", "ragas_compat", "record", str(dataset), "--out", str(out), "--openai-base-url",
               judge.base_url, "--model", MODEL, "--api-key-env", KEY_ENV, "--allow-endpoint", judge.base_url,
               *(arg for name in METRICS for arg in ("--metric", name)), *extra]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=_environment(), timeout=1800)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"record exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return seconds


def _evaluate_once(python: str, dataset: Path, judge: LatencyJudge) -> float:
    started = time.perf_counter()
    proc = subprocess.run([python, "-c", EVALUATE_SCRIPT, str(dataset), judge.base_url, MODEL, KEY_ENV],
                          capture_output=True, text=True, env=_environment(), timeout=1800)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"Ragas's evaluate() exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["nan"]:
        raise RuntimeError(f"Ragas's evaluate() left {result['nan']} scores NaN (a judge call failed or its "
                           "reply did not parse)")
    return seconds


def measure_record_vs_evaluate(repetitions: int, *, samples: int = 96, latency: float = LATENCY_SECONDS,
                               python: str = sys.executable, record_args: tuple[str, ...] = ()) -> BenchRow:
    """The ``record_vs_evaluate`` row (the module docstring): ``repetitions`` alternated pairs."""
    row = BenchRow("record_vs_evaluate", f"record samples/s / Ragas evaluate() samples/s ({samples} samples, "
                   f"{len(METRICS)} judged metrics, {latency * 1000:.0f} ms per judge call)",
                   target=RECORD_TARGET, at_least=True)
    with tempfile.TemporaryDirectory(prefix="ragas-compat-bench-record-") as tmp, LatencyJudge(latency) as judge:
        dataset = Path(tmp) / "samples.jsonl"
        dataset.write_text("".join(json.dumps(s) + "\n" for s in bench_samples(samples)), encoding="utf-8")
        try:
            for index in range(repetitions):
                sides = [("record", lambda i=index: _record_once(python, dataset, Path(tmp) / f"cases-{i}.json",
                                                                 judge, record_args)),
                         ("evaluate", lambda: _evaluate_once(python, dataset, judge))]
                measured = {}
                for name, once in sides if index % 2 == 0 else sides[::-1]:
                    before = judge.requests
                    measured[name] = once()
                    row.extra.setdefault(f"{name}_judge_calls", judge.requests - before)
                row.samples.append(measured["record"])
                row.baseline.append(measured["evaluate"])
                row.ratios.append(measured["evaluate"] / measured["record"])
        except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
            return BenchRow(row.id, row.measurement, reason=str(exc))
        row.extra.update(sample_count=samples, latency_seconds=latency, metrics=list(METRICS),
                         unanswered_prompts=judge.unknown, record_args=list(record_args))
    return row
