"""One recording probe per ``record`` run, read batch by batch (issue 40).

- the probe's scheduler (``probe/record/__main__.score_all`` and ``Batches``): (sample, metric) jobs in
  dataset order, at most ``concurrency`` at once, the next one starting as soon as one ends (no barrier
  at a batch's end), batch k (``batch_size`` samples in dataset order) written once they are done;
- the host's reader (``tools/record/probe_stream.RecordingProbe``) against a stand-in probe (a small
  script given as ``--python``, no Ragas): batches yielded as they are written, the exit checked, a
  probe that finishes no batch within the timeout killed with its group, and the probe's refusal or
  crash reported as such.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.probe.record import __main__ as record_probe
from ragas_compat.tools.record import probe_stream
from ragas_compat.tools.record.probe_stream import RecordingProbe, early_options

BUDGET = {"judge_calls": 5, "judge_chars": 1000, "case_seconds": 10.0, "memory": None}


def _scheduled(monkeypatch, seconds: dict[tuple[int, str], float], *, concurrency: int, batch_size: int,
               metrics=("m1", "m2")) -> tuple[list[tuple[str, int, str]], list[dict]]:
    """Run score_all with a stand-in score_metric taking ``seconds[(sample, metric)]`` (0.001 by default);
    the start/end/done/batch events and the batch documents written."""
    events: list[tuple[str, int, str]] = []

    async def fake_metric(sample, name, judge, api="legacy"):
        events.append(("start", sample["n"], name))
        await asyncio.sleep(seconds.get((sample["n"], name), 0.001))
        events.append(("end", sample["n"], name))
        return {"target": name, "value": sample["n"]}

    written: list[dict] = []

    def write(document: dict, output: str) -> None:
        assert output == f"out.json.{len(written)}"
        events.append(("batch", document["batch"], ""))
        written.append(document)

    monkeypatch.setattr(record_probe, "score_metric", fake_metric)
    monkeypatch.setattr(record_probe, "write", write)
    monkeypatch.setattr(record_probe, "renew_memory_limit", lambda: None)
    samples = [{"id": f"s{n}", "n": n} for n in range(6)]
    batches = record_probe.Batches({"network_attempts": [], "samples": []}, "out.json", batch_size, len(samples))

    def finished(index: int, result: dict) -> None:
        events.append(("done", index, ""))
        batches.add(index, result)

    left = asyncio.run(record_probe.score_all(samples, list(metrics), None, concurrency, on_sample=finished))
    assert left == []  # every sample went to a batch
    return events, written


def test_jobs_run_in_dataset_order_at_most_concurrency_at_once(monkeypatch):
    events, written = _scheduled(monkeypatch, {}, concurrency=3, batch_size=4)
    starts = [(n, name) for kind, n, name in events if kind == "start"]
    assert starts == [(n, name) for n in range(6) for name in ("m1", "m2")]  # sample-major, as evaluate()
    running = peak = 0
    for kind, _, _ in events:
        running += {"start": 1, "end": -1}.get(kind, 0)
        peak = max(peak, running)
    assert peak == 3
    assert [[s["id"] for s in b["samples"]] for b in written] == [["s0", "s1", "s2", "s3"], ["s4", "s5"]]
    assert [b["batch"] for b in written] == [0, 1]
    assert all(list(s["metrics"]) == ["m1", "m2"] for b in written for s in b["samples"])  # metric order kept
    assert events.index(("batch", 0, "")) < events.index(("done", 5, ""))  # written once its samples are done


def test_a_slow_sample_holds_back_no_other_scoring(monkeypatch):
    """Sample 0's first metric is slow: the other samples are scored past it (no barrier at the batch's
    end: sample 5 starts before sample 0 ends); the batches still hold the samples in dataset order, the
    first one written once sample 0 is done, and the rest at once after it."""
    events, written = _scheduled(monkeypatch, {(0, "m1"): 0.3}, concurrency=2, batch_size=2)
    assert events.index(("start", 5, "m2")) < events.index(("end", 0, "m1"))
    assert [[s["id"] for s in b["samples"]] for b in written] == [["s0", "s1"], ["s2", "s3"], ["s4", "s5"]]
    assert events.index(("done", 0, "")) < events.index(("batch", 0, ""))


def test_the_probe_refuses_a_bad_batch_size(tmp_path):
    import subprocess

    request = tmp_path / "request.json"
    request.write_text(json.dumps({"samples": [], "metrics": [], "targets": [], "batch_size": 0,
                                   "output": str(tmp_path / "out.json")}), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "ragas_compat.probe.record", str(request)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "record error: 'batch_size' must be a positive integer" in proc.stderr


# --------------------------------------------------------------------------- the host's reader
STAND_IN = """\
#!{python}
# a stand-in recording probe: reads the request (the last argument) and acts as MODE says
import json, os, sys, time
request = json.load(open(sys.argv[-1], encoding="utf-8"))
if request.get("early"):  # started before the command line was read: wait for the request
    while not os.path.exists(request["request"]):
        time.sleep(0.01)
    request = json.load(open(request["request"], encoding="utf-8"))
out, mode = request["output"], {mode!r}
header = {{"ragas": {{"version": "0.0.test"}}, "network_attempts": []}}
def write(document, path):
    with open(path + ".partial", "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.replace(path + ".partial", path)
if mode == "refuse":
    print("record error: the judge factory said no", file=sys.stderr)
    sys.exit(2)
if mode == "hang":
    time.sleep(120)
samples, size = request["samples"], request["batch_size"]
for k, first in enumerate(range(0, len(samples), size)):
    write({{**header, "samples": [{{"id": s["id"], "metrics": {{}}}} for s in samples[first:first + size]]}},
          f"{{out}}.{{k}}")
    if mode == "slow-second" and k == 0:
        time.sleep(120)
if mode == "crash":
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(1)
write({{**header, "batches": k + 1, "samples": []}}, out)
"""


def _stand_in(tmp_path: Path, mode: str) -> str:
    script = tmp_path / f"probe-{mode}"
    script.write_text(STAND_IN.format(python=sys.executable, mode=mode), encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def _probe(tmp_path: Path, mode: str, *, timeout: float = 60.0) -> RecordingProbe:
    samples = [{"id": f"s{n}"} for n in range(5)]
    return RecordingProbe(samples, ("id_context_precision",), None, python=_stand_in(tmp_path, mode), concurrency=2,
                          batch_size=2, timeout=timeout, budget=BUDGET)


def test_batches_are_read_as_written_and_the_folder_removed(tmp_path):
    with _probe(tmp_path, "ok") as probe:
        folder = probe.output.parent
        got = [[s["id"] for s in document["samples"]] for document in probe.batches()]
    assert got == [["s0", "s1"], ["s2", "s3"], ["s4"]]
    assert not folder.exists()


@pytest.mark.parametrize(("mode", "error", "message"), [
    ("refuse", HarnessInputError, "the judge factory said no"),
    ("crash", RagasUnavailable, "the recording probe failed (exit 1): Traceback: something broke"),
])
def test_a_refusal_or_a_crash_is_reported_after_the_batches_it_wrote(tmp_path, mode, error, message):
    got = []
    with pytest.raises(error) as caught, _probe(tmp_path, mode) as probe:
        got.extend(len(document["samples"]) for document in probe.batches())
    assert message in str(caught.value)
    assert got == ([] if mode == "refuse" else [2, 2, 1])


@pytest.mark.parametrize("mode", ["hang", "slow-second"])
def test_a_batch_over_the_timeout_stops_the_probe_and_its_group(tmp_path, mode):
    got = []
    started = time.perf_counter()
    with pytest.raises(RagasUnavailable) as caught, _probe(tmp_path, mode, timeout=0.5) as probe:
        folder = probe.output.parent
        for document in probe.batches():
            got.append(len(document["samples"]))
            time.sleep(0.7)  # the caller's own time with a batch is not the probe's
    assert time.perf_counter() - started < 30
    batch = 1 if mode == "hang" else 2
    assert f"timed out after 0.5 s without finishing a batch (batch {batch}, of up to 2 samples" in str(caught.value)
    assert got == ([] if mode == "hang" else [2])
    assert probe.process is not None and probe.process.proc is not None
    with pytest.raises(ProcessLookupError):
        os.kill(probe.process.proc.pid, 0)  # killed and reaped
    assert not folder.exists()


# --------------------------------------------------------------------------- early start
def test_early_options_are_what_the_command_line_gives_the_probe():
    cwd = os.getcwd()
    assert early_options(["d.jsonl", "--openai-base-url", "https://Judge.example:8443/v1", "--model", "m",
                          "--allow-endpoint", "127.0.0.1:9", "--allow-endpoint=http://localhost"]) == {
        "python": sys.executable, "allow": [["judge.example", 8443], ["127.0.0.1", 9], ["localhost", 80]],
        "sys_path": [cwd]}
    assert early_options(["d.jsonl", "--llm", "m:f", "--python", "/x/python"]) == {
        "python": "/x/python", "allow": [], "sys_path": [cwd]}
    assert early_options(["d.jsonl", "--openai-base-url", "judge:80"]) is None  # the command refuses it
    assert early_options(["--help"]) is None


@pytest.mark.parametrize("taken", [True, False])
def test_an_early_probe_is_taken_only_when_it_was_started_for_the_same_request(tmp_path, monkeypatch, taken):
    """An early probe started for the command line is the probe of the run when its interpreter, endpoints
    and import path are those of the request; otherwise it is closed (killed, its folder removed) and a
    probe of its own started: the guess never changes what records."""
    monkeypatch.setattr(probe_stream, "_EARLY", [])
    python = _stand_in(tmp_path, "ok")
    probe_stream.start_early(["d.jsonl", "--python", python, *([] if taken else ["--allow-endpoint", "127.0.0.1:9"])])
    (early,) = probe_stream._EARLY
    early_process, early_folder = early.process, early.folder
    with _probe(tmp_path, "ok") as probe:  # no judge: no endpoints
        assert (probe.process is early_process) is taken
        got = [[s["id"] for s in document["samples"]] for document in probe.batches()]
    assert got == [["s0", "s1"], ["s2", "s3"], ["s4"]]
    assert probe_stream._EARLY == [] and early.process is None and not early_folder.exists()
    assert early_process.proc is not None and early_process.proc.returncode is not None  # ended and reaped


def test_an_early_probe_that_cannot_start_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(probe_stream, "_EARLY", [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    probe_stream.start_early(["d.jsonl", "--python", str(tmp_path / "no-such-python")])
    assert probe_stream._EARLY == [] and list(tmp_path.iterdir()) == []
