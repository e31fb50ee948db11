"""``ragas-compat record``: a live Ragas run against a real OpenAI-compatible server, replayed offline.

Real components: a chat-completions server on 127.0.0.1 (``record_judge_server.JudgeServer``, standard
library, in a thread), LangChain's ``ChatOpenAI`` pointed at it by ``--openai-base-url`` (inside the
recording probe, through Ragas's ``LangchainLLMWrapper``), Ragas 0.4.3's own metric classes, and
``GenericFakeChatModel`` for the ``--llm module:factory`` route; with ``--api collections``, Ragas's
``llm_factory`` over ``openai.AsyncOpenAI`` at the same server. Only loopback addresses; every
subprocess and wait has a timeout.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.compare.replay import same_value
from ragas_compat.errors import HarnessInputError
from ragas_compat.report.json_report import result_rows
from ragas_compat.tools.record.dataset import read_dataset
from ragas_compat.values import decode_ragas_value

sys.path.insert(0, str(Path(__file__).parent))
from record_judge_server import JudgeServer

pytestmark = pytest.mark.slow  # recordings against a local judge server, replays, kills and resumes

CLI = [sys.executable, "-m", "ragas_compat"]
EPOCH = "1767225600"  # SOURCE_DATE_EPOCH: 2026-01-01, so two recordings can be compared byte for byte
KEY_ENV = "RAGAS_COMPAT_TEST_JUDGE_KEY"
runner = CliRunner()

NAMES = ["Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Ginkgo", "Hazel", "Ivy", "Juniper", "Kapok",
         "Larch", "Maple", "Nutmeg", "Oak", "Poplar", "Quince", "Rowan", "Spruce", "Teak", "Umbrella", "Vine"]
MALFORMED_ROW, SLOW_ROW, EMPTY_RESPONSE_ROW, FLAKY_ROW = 5, 7, 9, 2


def sample(i: int) -> dict:
    """Sample i: varied relevance patterns; old column names on even rows, new on odd ones."""
    name, year, founder = f"{NAMES[i]}works", 1900 + i, f"{NAMES[i]}son"
    relevant = f"{name} was founded in {year} by {founder}."
    relevant2 = f"The founder of {name}, {founder}, started it in {year}."
    other = f"Weather report number {i}: light rain and wind over the harbour."
    pattern = [[relevant, other, relevant2], [other, relevant], [other, other], [relevant]][i % 4]
    contexts = list(pattern)
    if i == MALFORMED_ROW:
        contexts = [f"MALFORMED {relevant}", other]
    if i == SLOW_ROW:
        contexts = [f"SLOW {relevant}"]
    if i == FLAKY_ROW:  # in the first batch of the interrupted run, so both runs see the same retry
        contexts = [f"FLAKY {contexts[0]}", *contexts[1:]]
    response = f"{name} was founded in {year}." + (f" It employs {i * 10} engineers worldwide." if i % 2 else "")
    if i == EMPTY_RESPONSE_ROW:
        response = ""
    reference = f"{name} was founded in {year}. Its founder was {founder}."
    row = {"user_input": f"When was {name} founded?", "retrieved_contexts": contexts, "response": response,
           "reference": reference, "retrieved_context_ids": [f"d{i}-{k}" for k in range(len(contexts))],
           "reference_context_ids": [f"d{i}-0", f"d{i}-9"] if i % 3 else [f"d{i}-0"]}
    if i % 2 == 0:  # Ragas's old names
        for new, old in (("user_input", "question"), ("retrieved_contexts", "contexts"), ("response", "answer"),
                         ("reference", "ground_truth")):
            row[old] = row.pop(new)
    return row


def write_dataset(path: Path, n: int = 22) -> Path:
    path.write_text("".join(json.dumps(sample(i)) + "\n" for i in range(n)), encoding="utf-8")
    return path


def record_args(dataset: Path, out: Path, server: JudgeServer, *extra: str) -> list[str]:
    # --max-retries 0: ChatOpenAI does not retry on its own, so Ragas's retries (RunConfig) are the ones seen
    return ["record", str(dataset), "--out", str(out), "--openai-base-url", server.base_url, "--model",
            server.model, "--api-key-env", KEY_ENV, "--request-timeout", "30", "--max-retries", "0", *extra]


def record_argv(dataset: Path, out: Path, server: JudgeServer, *extra: str) -> list[str]:
    """The command line of a recording run as its own process (the tests that signal or kill it)."""
    return [*CLI, *record_args(dataset, out, server, *extra)]


RECORD_ENV = {KEY_ENV: "sk-loopback-test", "SOURCE_DATE_EPOCH": EPOCH}


def env() -> dict[str, str]:
    return {**os.environ, **RECORD_ENV}


def cli(args: list[str], env: dict[str, str] | None = None):
    """``ragas-compat ARGS`` in process (CliRunner; ``stdout`` and ``stderr`` apart), where no process
    boundary of the command is tested: Ragas still runs in its probe, a process of its own."""
    return runner.invoke(app, args, env=env)


@pytest.fixture(scope="module")
def server():
    with JudgeServer(slow_seconds=1.0) as judge:
        yield judge


@pytest.fixture(scope="module")
def recorded(server, tmp_path_factory):
    """One uninterrupted recording of 22 samples (4 LLM metrics + 2 ID metrics), and its timing."""
    folder = tmp_path_factory.mktemp("recorded")
    dataset = write_dataset(folder / "rag.jsonl")
    out = folder / "recorded.json"
    started = time.perf_counter()
    result = cli(record_args(dataset, out, server, "--concurrency", "8", "--batch-size", "22"), RECORD_ENV)
    seconds = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    return {"dataset": dataset, "out": out, "seconds": seconds, "stdout": result.stdout, "stderr": result.stderr}


@pytest.fixture(scope="module")
def replayed(recorded, tmp_path_factory):
    """``ragas-compat run`` on the recorded file: offline (the server is not involved)."""
    out = tmp_path_factory.mktemp("replay-report")
    result = cli(["run", "--cases", str(recorded["out"]), "--out", str(out), "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def live_values(document: dict) -> dict[tuple[str, str], object]:
    return {(case["id"], target): value for case in document["cases"]
            for target, value in case["recording"]["live"].items()}


# --------------------------------------------------------------------------- the round trip

def test_record_writes_every_sample_with_parsed_verdicts_and_provenance(recorded):
    document = json.loads(recorded["out"].read_text(encoding="utf-8"))
    assert len(document["cases"]) == 22
    assert [c["recording"]["dataset_row"] for c in document["cases"]] == list(range(1, 23))
    provenance = document["recording"]
    assert provenance["complete"] is True and provenance["ragas_version"]
    assert provenance["recorded_at"] == "2026-01-01T00:00:00Z"
    assert provenance["judge"]["model"] == "judge-1" and provenance["judge"]["client"]["class"].endswith("ChatOpenAI")
    assert KEY_ENV not in json.dumps(document).replace(f'"api_key_env": "{KEY_ENV}"', "")
    assert provenance["metrics"]["faithfulness"] == "ragas.metrics._faithfulness.Faithfulness"
    assert provenance["network"]["blocked"] == []  # telemetry off, nothing but the judge
    # verdicts are what Ragas's output models parsed (a fenced reply parses too)
    first = document["cases"][0]
    assert first["verdicts"]["context_precision_with_reference"] == [1, 0, 1]
    fenced = [r for c in document["cases"] for calls in c["recording"]["replies"].values() for call in calls
              for r in call["replies"] if r.startswith("```json")]
    assert fenced
    assert document["cases"][EMPTY_RESPONSE_ROW]["verdicts"]["faithfulness"] == []
    assert "recording: 22 of 22" not in recorded["stderr"]
    assert "recorded 22/22 samples" in recorded["stderr"] and "talks to the judge" in recorded["stderr"]


def test_ragas_retries_are_left_as_they_are_and_counted(recorded):
    document = json.loads(recorded["out"].read_text(encoding="utf-8"))
    calls = [call for calls in document["cases"][FLAKY_ROW]["recording"]["replies"].values() for call in calls
             if call.get("failed_attempts")]
    assert calls and all("RateLimitError" in a for call in calls for a in call["failed_attempts"])
    assert f"{len(calls)} judge requests failed and were retried" in " ".join(recorded["stdout"].split())


def test_unparseable_live_reply_is_kept_raw(recorded):
    document = json.loads(recorded["out"].read_text(encoding="utf-8"))
    case = document["cases"][MALFORMED_ROW]
    raw = case["judge_replies"]["context_precision_with_reference"]["0"]
    assert '"verdict": yes' in raw
    assert case["recording"]["unjudged"]["context_precision_with_reference"] == [0, 1]
    live = case["recording"]["live"]["legacy:LLMContextPrecisionWithReference"]
    assert live["error"]["type"] == "OutputParserException"
    calls = case["recording"]["replies"]["context_precision_with_reference"]
    assert calls[0]["replies"][0] == raw and "OutputParserException" in calls[0]["error"]


def test_replay_reproduces_every_live_score_bit_for_bit(recorded, replayed):
    document = json.loads(recorded["out"].read_text(encoding="utf-8"))
    live = live_values(document)
    assert len({case for case, _ in live}) >= 20
    assert {t for _, t in live} >= {"legacy:LLMContextPrecisionWithReference", "legacy:LLMContextRecall",
                                    "legacy:Faithfulness", "legacy:IDBasedContextPrecision",
                                    "legacy:IDBasedContextRecall"}
    rows = {(r["case_id"], r["ragas_target"]): r for r in result_rows(replayed)}
    matched = 0
    for key, value in live.items():
        assert key in rows, key
        assert same_value(decode_ragas_value(value), decode_ragas_value(rows[key]["ragas_value"])), key
        matched += 1
    assert matched == len(live) >= 130
    assert not [f for f in replayed["drift"] if f["kind"] == "replay_mismatch"]
    # the unparseable reply shows up as such in the replay
    row = rows[(f"row-{MALFORMED_ROW + 1}", "legacy:LLMContextPrecisionWithReference")]
    assert row["classification"] == "error"
    assert "OutputParserException" in json.dumps(row["ragas_value"])
    print(f"\nround trip: {len(document['cases'])} samples, {matched} live scores reproduced bit for bit, "
          f"record {recorded['seconds']:.1f} s")


def test_a_replay_that_differs_from_the_live_score_is_a_finding(recorded, tmp_path):
    document = json.loads(recorded["out"].read_text(encoding="utf-8"))
    case = document["cases"][0]
    case["recording"]["live"]["legacy:IDBasedContextPrecision"] = 0.9999999999999999
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document), encoding="utf-8")
    result = cli(["run", "--cases", str(tampered), "--out", str(tmp_path / "report"), "--metric",
                  "id_context_precision"])
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    mismatches = [f for f in report["drift"] if f["kind"] == "replay_mismatch"]
    assert [(f["case_id"], f["target"]) for f in mismatches] == [("row-1", "legacy:IDBasedContextPrecision")]
    assert "0.9999999999999999" in mismatches[0]["message"]


# --------------------------------------------------------------------------- resumable, atomic

@pytest.fixture
def slow_second_batch(server):
    """The SLOW row (row 8, in the second batch of 6) answered after 6 s while a test interrupts a run, so
    the run is still going when its first batch is written (the probe scores on past a batch's end)."""
    server.slow_seconds = 6.0
    try:
        yield server
    finally:
        server.slow_seconds = 1.0


def test_interrupted_recording_resumes_to_the_same_file(recorded, slow_second_batch, tmp_path):
    server = slow_second_batch
    out = tmp_path / "interrupted.json"
    argv = record_argv(recorded["dataset"], out, server, "--concurrency", "2", "--batch-size", "6")
    proc = subprocess.Popen(argv, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert out.exists() and proc.poll() is None, "the first batch was not written while the run went on"
        proc.send_signal(signal.SIGTERM)  # mid-run: a batch is in flight
        proc.communicate(timeout=60)
    finally:
        server.slow_seconds = 1.0  # the resumed run as the uninterrupted one
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 143
    partial = json.loads(out.read_text(encoding="utf-8"))  # a valid case file, not a torn one
    assert 0 < len(partial["cases"]) < 22 and partial["recording"]["complete"] is False
    assert not list(tmp_path.glob(".interrupted.json.*"))
    # neither the batch size nor the concurrency is part of the recording: the rest in one batch, 8 at once
    # (the resumed run in process: its own process boundary is not what is tested)
    resumed = cli(_resume_args(argv), RECORD_ENV)
    assert resumed.exit_code == 0, resumed.output
    assert f"({len(partial['cases'])} already in interrupted.json)" in resumed.stderr
    assert out.read_bytes() == recorded["out"].read_bytes()


def _resume_args(argv: list[str]) -> list[str]:
    """``argv`` (a subprocess's, ending ``--concurrency 2 --batch-size 6``) as in-process arguments, with the
    rest in one batch, 8 samples at once."""
    assert argv[:len(CLI)] == CLI and argv[-4:] == ["--concurrency", "2", "--batch-size", "6"]
    return [*argv[len(CLI):-4], "--concurrency", "8", "--batch-size", "22"]


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_recording_killed_with_sigkill_resumes_to_the_same_file(recorded, slow_second_batch, tmp_path):
    """SIGKILL (no handler runs): the file on disk is the last complete batch, the orphaned recording
    probe stops asking the judge on its own, and a rerun ends with the uninterrupted run's file."""
    server = slow_second_batch
    out = tmp_path / "killed.json"
    argv = record_argv(recorded["dataset"], out, server, "--concurrency", "2", "--batch-size", "6")
    proc = subprocess.Popen(argv, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probes: list[int] = []
    try:
        deadline = time.monotonic() + 300
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        while not probes and proc.poll() is None and time.monotonic() < deadline:
            probes = _children(proc.pid)  # the recording probe (one for every batch)
            time.sleep(0.02)
        assert out.exists() and proc.poll() is None and probes, "no batch was in flight"
        folders = [Path(os.readlink(f"/proc/{pid}/cwd")) for pid in probes]  # the probe's temporary folder
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 60
        while any(_alive(p) for p in probes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in probes), "the orphaned recording probe went on"
        assert folders and not any(f.exists() for f in folders), "the orphaned probe left its folder"
    finally:
        server.slow_seconds = 1.0  # the resumed run as the uninterrupted one
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for pid in probes:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    partial = json.loads(out.read_text(encoding="utf-8"))
    assert 0 < len(partial["cases"]) < 22 and partial["recording"]["complete"] is False
    # the rest in one batch, 8 at once: neither is part of the recording
    resumed = cli(_resume_args(argv), RECORD_ENV)
    assert resumed.exit_code == 0, resumed.output
    assert out.read_bytes() == recorded["out"].read_bytes()
    assert not list(tmp_path.glob(".killed.json.*"))


def test_one_recording_probe_serves_every_batch(tmp_path):
    """6 samples in batches of 2: one recording probe (the interpreter given as --python counts its
    starts), the file rewritten after each batch (the progress says so), every case recorded. The command
    as its own process: its launcher starts the probe early, and that one must serve the run too."""
    log = tmp_path / "starts.log"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$4" >> {log}\nexec {sys.executable} "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    dataset = write_dataset(tmp_path / "rag.jsonl", n=6)
    out = tmp_path / "ids.json"
    proc = subprocess.run([*CLI, "record", str(dataset), "--out", str(out), "--python", str(python), "--metric",
                           "id_context_precision", "--metric", "id_context_recall", "--concurrency", "2",
                           "--batch-size", "2"], env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text(encoding="utf-8").split() == ["record"]  # one probe (the old code: one per batch)
    assert [line.split(" (")[0] for line in proc.stderr.splitlines() if line.startswith("recorded ")] == [
        "recorded 2/6 samples", "recorded 4/6 samples", "recorded 6/6 samples"]
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [c["id"] for c in document["cases"]] == [f"row-{i}" for i in range(1, 7)]
    assert document["recording"]["complete"] is True


def test_the_recording_probe_ends_when_the_command_is_killed():
    """The recording probe's exit_with_parent: a probe whose parent died (SIGKILL) exits instead of asking the judge
    on (here it would sleep 120 s)."""
    grandchild = ("import time; from ragas_compat.probe.record.__main__ import exit_with_parent; "
                  "exit_with_parent(0.05); print('watching', flush=True); time.sleep(120)")
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; p = subprocess.Popen([sys.executable, "
                               f"'-c', {grandchild!r}]); print(p.pid, flush=True); p.wait()"],
                              stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 60
        while _alive(pid) and not (Path(f"/proc/{pid}/cmdline").read_bytes().count(b"exit_with_parent")
                                   and _threads(pid) > 1) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the watch thread runs
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        parent.stdout.close()
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_recording_probe_whose_host_died_before_it_started_ends(tmp_path):
    """The early recording probe took its host to be its parent as it started: a host killed before that left
    it a parent that never changes (init), and it waited for a request forever. The start file names the
    host's pid, and the probe ends when that process is gone."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    start = tmp_path / "start.json"
    start.write_text(json.dumps({"early": True, "host_pid": dead.pid}), encoding="utf-8")
    code = ("import time; from ragas_compat.probe.record.__main__ import exit_with_parent, host_of; "
            f"exit_with_parent(0.05, host=host_of({str(start)!r})); time.sleep(60)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr


def _threads(pid: int) -> int:
    try:
        return len(list(Path(f"/proc/{pid}/task").iterdir()))
    except OSError:
        return 0


def test_a_sample_whose_judge_failed_is_not_written_and_a_rerun_records_it(tmp_path):
    with JudgeServer() as server:
        dataset = tmp_path / "three.jsonl"
        rows = [sample(1), sample(3), sample(13)]
        rows[1]["retrieved_contexts"] = ["BROKEN " + rows[1]["retrieved_contexts"][0]]
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        args = record_args(dataset, tmp_path / "out.json", server, "--metric", "context_precision_with_reference")
        server.broken = True
        first = cli(args, RECORD_ENV)
        assert first.exit_code == 1, first.output
        assert "not recorded row-2: context_precision_with_reference: the judge could not be reached: " \
               "BadRequestError" in " ".join(first.stderr.split())
        partial = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
        assert [c["id"] for c in partial["cases"]] == ["row-1", "row-3"] and partial["recording"]["complete"] is False
        server.broken = False
        second = cli(args, RECORD_ENV)
        assert second.exit_code == 0, second.output
        assert "recording 1 of 3 samples (2 already in out.json)" in " ".join(second.stderr.split())
        again = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
        assert [c["id"] for c in again["cases"]] == ["row-1", "row-2", "row-3"] and again["recording"]["complete"]
        assert again["cases"][0] == partial["cases"][0] and again["cases"][2] == partial["cases"][1]


def test_a_different_recording_is_not_resumed_into_the_file(recorded, server, tmp_path):
    out = tmp_path / "other.json"
    out.write_bytes(recorded["out"].read_bytes())
    result = runner.invoke(app, ["record", str(recorded["dataset"]), "--out", str(out), "--openai-base-url",
                                 server.base_url, "--model", server.model, "--api-key-env", KEY_ENV,
                                 "--metric", "faithfulness"], env={KEY_ENV: "x"})
    assert result.exit_code == 2
    assert "exists from another recording" in result.output
    assert out.read_bytes() == recorded["out"].read_bytes()


# --------------------------------------------------------------------------- the --llm route

FACTORY = '''
import socket

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

REPLIES = [{replies}]

def make_judge():
    try:  # not the judge's endpoint: the recording probe's guard blocks and records it
        socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
    except OSError:
        pass
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in REPLIES]))
'''


def test_llm_factory_route_records_and_replays(tmp_path, monkeypatch):
    """--llm: a GenericFakeChatModel from the user's module; --limit 2 of 3 samples; the guard blocks
    and records a connection the factory attempts (it is not the judge's endpoint)."""
    replies = ['{"reason": "r", "verdict": 1}', '{"reason": "r", "verdict": 0}',
               '{"reason": "r", "verdict": 0}', '```json\n{"reason": "r", "verdict": 1}\n```']
    port = _closed_port()
    (tmp_path / "fake_judges.py").write_text(FACTORY.format(replies=", ".join(map(repr, replies)), port=port),
                                             encoding="utf-8")
    dataset = tmp_path / "three.jsonl"
    dataset.write_text("".join(json.dumps(sample(i)) + "\n" for i in (1, 5, 3)).replace("MALFORMED ", ""),
                       encoding="utf-8")
    out = tmp_path / "fake.json"
    monkeypatch.chdir(tmp_path)  # --llm names a module of the current folder
    proc = cli(["record", str(dataset), "--out", str(out), "--llm", "fake_judges:make_judge", "--metric",
                "context_precision_with_reference", "--metric", "id_context_recall", "--concurrency", "1",
                "--limit", "2"], {"SOURCE_DATE_EPOCH": EPOCH})
    assert proc.exit_code == 0, proc.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [c["id"] for c in document["cases"]] == ["row-1", "row-2"]
    assert [c["verdicts"]["context_precision_with_reference"] for c in document["cases"]] == [[1, 0], [0, 1]]
    assert document["recording"]["complete"] is False
    assert document["recording"]["judge"] == {
        "kind": "factory", "factory": "fake_judges:make_judge",
        "client": {"class": "langchain_core.language_models.fake_chat_models.GenericFakeChatModel",
                   "wrapped_in": "ragas.llms.base.LangchainLLMWrapper"}}
    assert document["recording"]["network"] == {
        "allowed": [], "blocked": [{"call": "socket.create_connection", "address": repr(("127.0.0.1", port))}]}
    report = tmp_path / "report"
    run = cli(["run", "--cases", str(out), "--out", str(report), "--fail-on", "none"])
    assert run.exit_code == 0, run.output
    findings = json.loads((report / "report.json").read_text(encoding="utf-8"))["drift"]
    assert not [f for f in findings if f["kind"] == "replay_mismatch"]


# --------------------------------------------------------------------------- early, clear errors

def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_missing_key_fails_before_any_sample(server, tmp_path):
    dataset = write_dataset(tmp_path / "rag.jsonl", n=3)
    before = server.requests
    result = runner.invoke(app, ["record", str(dataset), "--out", str(tmp_path / "x.json"), "--openai-base-url",
                                 server.base_url, "--model", server.model, "--api-key-env", "RAGAS_COMPAT_NO_SUCH_KEY"])
    assert result.exit_code == 2
    assert "RAGAS_COMPAT_NO_SUCH_KEY" in result.output
    assert not (tmp_path / "x.json").exists() and server.requests == before


def test_unreachable_endpoint_fails_before_any_sample(tmp_path):
    dataset = write_dataset(tmp_path / "rag.jsonl", n=3)
    result = runner.invoke(app, ["record", str(dataset), "--out", str(tmp_path / "x.json"), "--openai-base-url",
                                 f"http://127.0.0.1:{_closed_port()}/v1", "--model", "m", "--api-key-env", KEY_ENV],
                           env={KEY_ENV: "x"})
    assert result.exit_code == 2
    assert "unreachable" in result.output and "no sample was scored" in result.output
    assert not (tmp_path / "x.json").exists()


def test_unknown_model_fails_before_any_sample(server, tmp_path):
    dataset = write_dataset(tmp_path / "rag.jsonl", n=3)
    before = server.requests
    result = runner.invoke(app, ["record", str(dataset), "--out", str(tmp_path / "x.json"), "--openai-base-url",
                                 server.base_url, "--model", "judge-typo", "--api-key-env", KEY_ENV],
                           env={KEY_ENV: "x"})
    assert result.exit_code == 2
    assert "does not serve model 'judge-typo'" in result.output and "judge-1" in result.output
    assert not (tmp_path / "x.json").exists() and server.requests == before


@pytest.mark.parametrize(("content", "name", "expected"), [
    ('{"user_input": "q", "retrieved_contexts": ["c"], "reference": "r"}\n', "a.jsonl",
     "row 1 (line 1): missing column 'response' (needed by context_precision_without_reference, faithfulness)"),
    ('{"question": "q", "contexts": "not a list", "answer": "a", "ground_truth": "r"}\n', "b.jsonl",
     "row 1 (line 1): column 'contexts': expected a list of strings, got a string"),
    ('{"question": "q", "contexts": ["c"], "answer": "a", "ground_truth": "r"}\n{"question": 3}\n', "c.jsonl",
     "row 2 (line 2): column 'question': expected a string, got an integer"),
    ("", "d.jsonl", "d.jsonl: the dataset is empty (no samples)"),
    ("user_input,retrieved_contexts,response,reference\nq,\"['c1', 2]\",a,r\n", "e.csv",
     "row 1 (line 2): column 'retrieved_contexts': item 1: expected a string, got an integer"),
    ('{"question": "q", "contexts": ["c"], "answer": "a", "ground_truth": "r"}\n{oops\n', "f.jsonl",
     "line 2: not valid JSON"),
])
def test_bad_dataset_exits_2_naming_row_and_column(tmp_path, content, name, expected):
    dataset = tmp_path / name
    dataset.write_text(content, encoding="utf-8")
    out = tmp_path / "never.json"
    result = runner.invoke(app, ["record", str(dataset), "--out", str(out), "--openai-base-url",
                                 "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", KEY_ENV,
                                 "--metric", "context_precision_with_reference", "--metric",
                                 "context_precision_without_reference", "--metric", "faithfulness"],
                           env={KEY_ENV: "x"})
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.output.split()), result.output
    assert not out.exists()


def test_csv_with_old_names_and_python_list_cells_loads(tmp_path):
    dataset = tmp_path / "old.csv"
    dataset.write_text("question,contexts,answer,ground_truth,id\n"
                       "What?,\"['first chunk', 'second, with comma']\",An answer.,The truth.,q1\n"
                       "Why?,\"[\"\"json chunk\"\"]\",Because.,Reasons.,q2\n", encoding="utf-8")
    loaded = read_dataset(dataset, {"user_input": ("x",), "retrieved_contexts": ("x",)})
    assert [s.id for s in loaded.samples] == ["q1", "q2"]
    assert loaded.samples[0].fields == {"user_input": "What?", "retrieved_contexts": ["first chunk", "second, with comma"],
                                        "response": "An answer.", "reference": "The truth."}
    assert loaded.samples[1].fields["retrieved_contexts"] == ["json chunk"]


def test_same_value_is_bit_for_bit():
    from ragas_compat.values import RagasError

    assert same_value(0.8333333332916666, 0.8333333332916666)
    assert not same_value(0.8333333332916666, 0.8333333333333334)
    assert not same_value(0.0, -0.0)
    assert same_value(float("nan"), float("nan"))
    assert not same_value(float("nan"), 0.0)
    assert same_value(RagasError("OutputParserException", "m"), RagasError("OutputParserException", "m"))
    assert not same_value(RagasError("OutputParserException", "m"), RagasError("OutputParserException", "n"))
    assert not same_value(RagasError("E", "m"), 1.0)


def test_parquet_and_saved_hugging_face_dataset_load(tmp_path):
    import datasets
    import pyarrow
    import pyarrow.parquet

    rows = [sample(i) for i in range(3)]
    for row in rows:  # one naming per file (Arrow wants one schema)
        for old, new in (("question", "user_input"), ("contexts", "retrieved_contexts"), ("answer", "response"),
                         ("ground_truth", "reference")):
            if old in row:
                row[new] = row.pop(old)
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), tmp_path / "rag.parquet")
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "hf"))
    required = {"user_input": ("x",), "retrieved_contexts": ("x",), "retrieved_context_ids": ("x",)}
    for path in (tmp_path / "rag.parquet", tmp_path / "hf"):
        loaded = read_dataset(path, required)
        assert [s.fields["retrieved_contexts"] for s in loaded.samples] == [r["retrieved_contexts"] for r in rows]
        assert [s.id for s in loaded.samples] == ["row-1", "row-2", "row-3"]
    broken = [dict(rows[0], retrieved_contexts=None)]
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(broken), tmp_path / "broken.parquet")
    with pytest.raises(HarnessInputError) as caught:
        read_dataset(tmp_path / "broken.parquet", required)
    assert caught.value.problems == [
        "broken.parquet: row 1: missing column 'retrieved_contexts' (needed by x)"]


def test_replay_problems_name_mismatches_and_unreplayable_live_values():
    from types import SimpleNamespace

    from ragas_compat.compare.replay import replay_problems

    recording = {"live": {"legacy:Faithfulness": 0.5, "legacy:LLMContextRecall": {"error": {"type": "E", "message": "m"}},
                          "legacy:IDBasedContextRecall": 1.0},
                 "not_replayable": {"legacy:LLMContextRecall": "the judge's reply could not be parsed"}}
    case = SimpleNamespace(id="c1", raw={"recording": recording})
    row = SimpleNamespace(case=case, target="legacy:Faithfulness", ragas_value=0.25,
                          classification=SimpleNamespace(name="identical"))
    audit = SimpleNamespace(rows=[row], suite=SimpleNamespace(cases=[case]))
    problems = replay_problems(audit)
    assert [(p[0], p[1], p[2]) for p in problems] == [("c1", "legacy:Faithfulness", "identical"),
                                                      ("c1", "legacy:LLMContextRecall", None),
                                                      ("c1", "legacy:IDBasedContextRecall", None)]
    assert "replay gave 0.25, the live recording 0.5" in problems[0][3]
    assert "not replayed: the judge's reply could not be parsed" in problems[1][3]
    assert "has no replayed row" in problems[2][3]  # nothing compared it: not passed over


# --------------------------------------------------------------------------- replies the verdicts cannot hold

def test_claim_list_replies_that_cannot_be_frozen_show_in_the_file_and_the_replay(tmp_path):
    """Context recall and faithfulness against the live server: an unparseable reply (recall, NLI), a
    parsed reply the case file cannot hold (a 121-digit label) and a parsed NLI reply that judged fewer
    statements than Ragas generated. Each is named in the file and reported by the offline replay."""
    rows = [
        {"id": "recall-garbled", "user_input": "When was Oakworks founded?",
         "retrieved_contexts": ["Oakworks was founded in 1900 by Oakson."], "response": "Oakworks was founded in 1900.",
         "reference": "GARBLED Oakworks was founded in 1900."},
        {"id": "nli-garbled", "user_input": "When was Elmworks founded?",
         "retrieved_contexts": ["Elmworks was founded in 1901 by Elmson."],
         "response": "Elmworks was founded in 1901. GARBLED it has offices.", "reference": "Elmworks was founded in 1901."},
        {"id": "recall-huge", "user_input": "When was Ashworks founded?",
         "retrieved_contexts": ["Ashworks was founded in 1903."], "response": "Ashworks was founded in 1903.",
         "reference": "HUGE Ashworks was founded in 1903."},
        {"id": "nli-dropped", "user_input": "When was Firworks founded?",
         "retrieved_contexts": ["Firworks was founded in 1902 by Firson."],
         "response": "Firworks was founded in 1902. Firson founded Firworks. DROPCLAIM Firworks has 90 staff.",
         "reference": "Firworks was founded in 1902."},
    ]
    dataset = tmp_path / "claims.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "claims.json"
    with JudgeServer() as server:
        proc = cli(record_args(dataset, out, server, "--metric", "context_recall", "--metric", "faithfulness"),
                   RECORD_ENV)
    assert proc.exit_code == 0, proc.output
    cases = {c["id"]: c for c in json.loads(out.read_text(encoding="utf-8"))["cases"]}
    recall, nli = "legacy:LLMContextRecall", "legacy:Faithfulness"

    garbled = cases["recall-garbled"]
    assert "context_recall" not in garbled["verdicts"]
    assert garbled["recording"]["live"][recall]["error"]["type"] == "OutputParserException"
    assert "could not be parsed" in garbled["recording"]["not_replayable"][recall]
    assert '"attributed": "maybe"' in garbled["recording"]["replies"]["context_recall"][0]["replies"][0]

    assert "faithfulness" not in cases["nli-garbled"]["verdicts"]
    assert "could not be parsed" in cases["nli-garbled"]["recording"]["not_replayable"][nli]

    huge = cases["recall-huge"]
    assert huge["recording"]["live"][recall] == 1.0  # Ragas parsed it and counted it as attributed
    assert "context_recall" not in huge["verdicts"]
    assert "cannot hold what it parsed" in huge["recording"]["not_replayable"][recall]
    assert "1" + "0" * 120 in huge["recording"]["replies"]["context_recall"][0]["replies"][0]

    dropped = cases["nli-dropped"]
    assert dropped["verdicts"]["faithfulness"] == [{"statement": "Firworks was founded in 1902.", "verdict": 1},
                                                   {"statement": "Firson founded Firworks.", "verdict": 1}]
    assert dropped["recording"]["live"][nli] == 1.0
    assert "not judged: ['DROPCLAIM Firworks has 90 staff.']" in dropped["recording"]["not_frozen"][nli]
    assert "not_frozen" not in cases["recall-huge"]["recording"]

    report = tmp_path / "report"
    run = cli(["run", "--cases", str(out), "--out", str(report)])
    assert run.exit_code == 1, run.output  # replay_mismatch is drift
    document = json.loads((report / "report.json").read_text(encoding="utf-8"))
    found = {(f["case_id"], f["target"]): f["message"] for f in document["drift"] if f["kind"] == "replay_mismatch"}
    assert set(found) == {("recall-garbled", recall), ("nli-garbled", nli), ("recall-huge", recall),
                          ("nli-dropped", nli)}
    assert "is not replayed: the judge's reply could not be parsed" in found[("recall-garbled", recall)]
    assert "is not replayed: Ragas parsed the judge's reply, but the case file cannot hold" in \
        found[("recall-huge", recall)]
    assert "reproduces the live value (1.0)" in found[("nli-dropped", nli)]
    assert "not judged" in found[("nli-dropped", nli)]
    rows_by = {(r["case_id"], r["ragas_target"]): r for r in result_rows(document)}
    assert rows_by[("nli-dropped", nli)]["ragas_value"] == 1.0
    assert ("recall-huge", recall) not in rows_by and ("recall-huge", nli) in rows_by


# --------------------------------------------------------------------------- the collections API

def test_collections_classes_record_and_replay_bit_for_bit(server, tmp_path):
    """--api collections: Ragas's collections classes score with an instructor LLM (llm_factory over
    openai.AsyncOpenAI at the server); the raw replies come from the HTTP responses. Every live score
    the case can hold replays bit for bit; the rest (an unparseable reply instructor gave up on, a
    class that raised before asking the judge) is named in the file and reported by the replay."""
    dataset = write_dataset(tmp_path / "rag.jsonl")
    out = tmp_path / "collections.json"
    # --max-retries 1: the OpenAI client's own retry covers the FLAKY row's 429 (instructor does not retry HTTP errors)
    args = record_args(dataset, out, server, "--concurrency", "8", "--api", "collections", "--limit", "12")
    args[args.index("--max-retries") + 1] = "1"
    proc = cli(args, RECORD_ENV)
    assert proc.exit_code == 0, proc.output
    document = json.loads(out.read_text(encoding="utf-8"))
    provenance = document["recording"]
    assert provenance["judge"]["api"] == "collections"
    assert provenance["judge"]["client"]["class"] == "ragas.llms.base.InstructorLLM"
    assert provenance["metrics"]["faithfulness"] == "ragas.metrics.collections.faithfulness.metric.Faithfulness"
    assert provenance["metrics"]["id_context_recall"] == "ragas.metrics._context_recall.IDBasedContextRecall"
    cases = document["cases"]
    assert len(cases) == 12 and max(MALFORMED_ROW, EMPTY_RESPONSE_ROW, FLAKY_ROW) < 12
    assert cases[0]["verdicts"]["context_precision_with_reference"] == [1, 0, 1]
    replies = [r for c in cases for calls in c["recording"]["replies"].values() for call in calls for r in call["replies"]]
    assert any(r.startswith("```json") for r in replies)  # raw text as the server sent it
    flaky = [a for calls in cases[FLAKY_ROW]["recording"]["replies"].values() for call in calls
             for a in call.get("failed_attempts", [])]
    assert flaky and all(a.startswith("HTTP 429") for a in flaky)
    malformed = cases[MALFORMED_ROW]["recording"]
    cpr = "collections:ContextPrecisionWithReference"
    assert malformed["live"][cpr]["error"]["type"] == "InstructorRetryException"
    assert "instructor parsed it" in malformed["not_replayable"][cpr]
    assert "context_precision_with_reference" not in cases[MALFORMED_ROW]["verdicts"]
    assert '"verdict": yes' in malformed["replies"]["context_precision_with_reference"][0]["replies"][0]
    empty = cases[EMPTY_RESPONSE_ROW]["recording"]
    assert "Ragas raised before asking the judge anything (ValueError: response is missing" in \
        empty["not_replayable"]["collections:Faithfulness"]

    report = tmp_path / "report"
    run = cli(["run", "--cases", str(out), "--out", str(report), "--fail-on", "none"])
    assert run.exit_code == 0, run.output
    replayed = json.loads((report / "report.json").read_text(encoding="utf-8"))
    rows = {(r["case_id"], r["ragas_target"]): r for r in result_rows(replayed)}
    reported = {(f["case_id"], f["target"]) for f in replayed["drift"] if f["kind"] == "replay_mismatch"}
    matched = 0
    for case in cases:
        for target, value in case["recording"]["live"].items():
            if target in case["recording"].get("not_replayable", {}):
                assert (case["id"], target) in reported and (case["id"], target) not in rows
                continue
            assert same_value(decode_ragas_value(value), decode_ragas_value(rows[(case["id"], target)]["ragas_value"]))
            matched += 1
    not_replayable = sum(len(c["recording"].get("not_replayable", {})) for c in cases)
    assert len(reported) == not_replayable == 4  # the malformed reply (2 classes), the empty response (2 classes)
    assert matched >= 60
    assert {t for c in cases for t in c["recording"]["live"]} >= {
        cpr, "collections:ContextPrecisionWithoutReference", "collections:ContextRecall", "collections:Faithfulness"}


INSTRUCTOR_FACTORY = '''
import httpx
from openai import AsyncOpenAI
from ragas.llms import llm_factory
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel


def make_judge():
    client = AsyncOpenAI(base_url="{base_url}", api_key="sk-loopback", max_retries=0,
                         http_client=httpx.AsyncClient(trust_env=False))
    return llm_factory("{model}", client=client)


def make_langchain_judge():
    return GenericFakeChatModel(messages=iter([]))
'''


def test_collections_factory_route_and_its_refusals(server, tmp_path, monkeypatch):
    (tmp_path / "instructor_judges.py").write_text(
        INSTRUCTOR_FACTORY.format(base_url=server.base_url, model=server.model), encoding="utf-8")
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("".join(json.dumps(sample(i)) + "\n" for i in (1, 3)), encoding="utf-8")
    base = [*CLI, "record", str(dataset), "--metric", "context_recall", "--api", "collections"]
    run_env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    out = tmp_path / "factory.json"
    # the three commands are independent: run at once (each waits on its recording probe's Ragas import); the
    # refusals as processes of their own, the recording in process beside them
    refusals = []
    for api, factory, message in (
            ("legacy", "make_judge", "the legacy classes do not take it; record the collections classes with "
                                     "--api collections"),
            ("collections", "make_langchain_judge", "the collections classes take a Ragas instructor LLM")):
        argv = [*base, "--out", str(tmp_path / f"{factory}.json"), "--llm", f"instructor_judges:{factory}"]
        argv[argv.index("--api") + 1] = api
        refusals.append((factory, message, subprocess.Popen(argv, cwd=tmp_path, env=run_env, stdout=subprocess.PIPE,
                                                            stderr=subprocess.PIPE, text=True)))
    try:
        monkeypatch.chdir(tmp_path)  # --llm names a module of the current folder
        proc = cli([*base[len(CLI):], "--out", str(out), "--llm", "instructor_judges:make_judge", "--allow-endpoint",
                    f"127.0.0.1:{server.port}"], {"SOURCE_DATE_EPOCH": EPOCH})
        refused = [(factory, message, *running.communicate(timeout=300), running.returncode)
                   for factory, message, running in refusals]
    finally:
        for _, _, running in refusals:
            if running.poll() is None:
                running.kill()
                running.communicate(timeout=30)
    assert proc.exit_code == 0, proc.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["recording"]["judge"]["factory"] == "instructor_judges:make_judge"
    assert [list(c["recording"]["live"]) for c in document["cases"]] == [["collections:ContextRecall"]] * 2
    assert all(c["recording"]["replies"]["context_recall"][0]["replies"] for c in document["cases"])
    # the legacy classes do not take an instructor LLM; the collections classes do not take a LangChain model
    for factory, message, _, stderr, returncode in refused:
        assert returncode == 2, stderr
        assert message in " ".join(stderr.split())
        assert not (tmp_path / f"{factory}.json").exists()


@pytest.mark.parametrize("epoch", ["99999999999999", "9" * 5000, "-5", "abc", "1.5", "\u0663"])
def test_a_source_date_epoch_a_date_cannot_hold_is_exit_2_before_any_judge_call(tmp_path, epoch):
    """SOURCE_DATE_EPOCH is checked before the dataset is read and any judge called: a value out of a date's range
    crashed when the first batch was written (exit 4, after the judge was paid); other text was silently ignored."""
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps(sample(1)) + "\n", encoding="utf-8")
    out = tmp_path / "never.json"
    proc = cli(["record", str(dataset), "--out", str(out), "--metric", "id_context_recall"],
               {"SOURCE_DATE_EPOCH": epoch})
    assert proc.exit_code == 2, proc.output
    assert "SOURCE_DATE_EPOCH=" in proc.stderr and "seconds since 1970" in proc.stderr
    assert len(proc.stderr) < 400 and not out.exists()
