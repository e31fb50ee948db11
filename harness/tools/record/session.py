"""``ragas-compat record``: score a dataset with Ragas and a live judge once, write a replayable case file.

The steps:

1. read and check the dataset (``dataset.read_dataset``; every problem at once, exit 2, nothing written);
2. check the judge before any sample is spent (``preflight``): the key is in the environment, the
   endpoint accepts a TCP connection, and - when it lists its models (``GET /models``) - serves the model;
3. resume: an existing output file from the same recording (same dataset bytes, metrics and judge:
   ``fingerprint``) keeps its cases, and only the samples it lacks are scored; a file from another
   recording is refused;
4. score the samples in one recording-probe subprocess (``harness/probe/record/``: Ragas, the judge
   and the network guard live there; ``probe_stream.RecordingProbe``), ``concurrency`` (sample, metric)
   scorings at once inside it (default: the installed Ragas's ``RunConfig.max_workers``, the jobs its
   ``evaluate()`` runs at once), the next starting as soon as one ends; the probe hands over the
   finished samples in batches of ``batch_size``, and after each batch the case file is rewritten
   atomically (temporary file, fsync, rename) with every case recorded so far in dataset order, so an
   interruption loses at most the samples not yet in a batch and a rerun continues where it stopped;
   the file of an interrupted-then-resumed recording equals that of an uninterrupted one;
5. a sample whose judge could not be reached (after Ragas's own retries) is not written: it is
   counted and recorded on the next run.

The recording date is the time the first batch was written (``SOURCE_DATE_EPOCH`` when set, for
reproducible files) and is kept on resume.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import socket
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ragas_compat
from ragas_compat import http_client
from ragas_compat.atomic_file import write_atomically
from ragas_compat.cases import parse_suite_text
from ragas_compat.cases.loader import check_case_count
from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.input_limits import Limits, decode_utf8, loads_json, read_bytes, size_text
from ragas_compat.metrics.registry import metric as metric_spec
from ragas_compat.probe.protocol import Budget
from ragas_compat.runner import case_budget, check_timeout, resolve_executable, run_in_own_group, set_case_budget
from ragas_compat.tools.record.cases import (
    LLM_METRICS,
    NON_LLM_METRICS,
    RECORDABLE,
    build_case,
    repeated_prompt_warnings,
)
from ragas_compat.tools.record.concurrency import ragas_max_workers
from ragas_compat.tools.record.dataset import Dataset, read_dataset
from ragas_compat.tools.record.probe_stream import RecordingProbe, probe_env
from ragas_compat.tools.record.secrets import redacted, secret_values
from ragas_compat.write_preflight import check_output_file

RECORDING_FORMAT = 1
PREFLIGHT_TIMEOUT = 10.0            # seconds for the whole GET /models (connect, headers, body)
PREFLIGHT_MAX_BYTES = 4 * 1024 * 1024  # a model listing is kilobytes
# the budget of one (sample, metric) where --case-judge-calls / --case-timeout are not given: a live judge
# is slower than the frozen one (request timeouts, rate-limit retries) and a context-precision sample asks
# it once per retrieved context (and again to fix a reply's format)
RECORD_JUDGE_CALLS = 200
RECORD_CASE_SECONDS = 900.0


def record_budget(*, judge_calls: int | None = None, case_seconds: float | None = None,
                  memory_gib: float | None = None) -> Budget:
    """The recording probe's budget per (sample, metric) (``protocol.Budget``): the values given
    (checked as ``run`` checks them: HarnessInputError, exit 2), else ``RECORD_JUDGE_CALLS``,
    ``RECORD_CASE_SECONDS`` and the probe's default memory."""
    set_case_budget(judge_calls=RECORD_JUDGE_CALLS if judge_calls is None else judge_calls,
                    case_seconds=RECORD_CASE_SECONDS if case_seconds is None else case_seconds,
                    memory_gib=memory_gib)
    try:
        return case_budget()
    finally:
        set_case_budget()


@dataclass(frozen=True)
class Judge:
    """The judge as the user gave it: an OpenAI-compatible endpoint, or a factory import path."""

    kind: str                               # "openai" | "factory"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    spec: str | None = None                 # "package.module:factory"
    settings: dict[str, Any] = field(default_factory=dict)
    request_timeout: float = 120.0
    max_retries: int = 2
    allow: tuple[tuple[str, int], ...] = ()  # endpoints the probe's guard lets through
    api: str = "legacy"                     # which Ragas API's classes score the judged metrics

    def request(self) -> dict[str, Any]:
        if self.kind == "openai":
            return {"kind": "openai", "base_url": self.base_url, "model": self.model,
                    "api_key_env": self.api_key_env, "timeout": self.request_timeout,
                    "max_retries": self.max_retries, "settings": self.settings, "api": self.api}
        return {"kind": "factory", "spec": self.spec, "api": self.api}

    def provenance(self) -> dict[str, Any]:
        """What identifies the judge (never the key: settings and headers whose names look like a
        credential, and credentials inside the URL, are ``secrets.REDACTED``)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.api != "legacy":
            out["api"] = self.api
        if self.kind == "openai":
            out.update({"base_url": redacted(self.base_url), "model": self.model, "api_key_env": self.api_key_env,
                        "settings": redacted(self.settings), "request_timeout": self.request_timeout,
                        "max_retries": self.max_retries})
        else:
            out.update({"factory": self.spec})
        return out


def endpoint(base_url: str) -> tuple[str, int]:
    """``(host, port)`` of an http(s) URL; HarnessInputError otherwise."""
    parsed = urllib.parse.urlsplit(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise HarnessInputError(f"--openai-base-url {base_url!r}: expected an http:// or https:// URL",
                                field="--openai-base-url", value=base_url)
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:
        raise HarnessInputError(f"--openai-base-url {base_url!r}: bad port", field="--openai-base-url") from None
    return parsed.hostname, port


def preflight(judge: Judge) -> str | None:
    """Check the judge before any sample is spent; HarnessInputError (exit 2) when it cannot work.
    Returns a note about the model check (None when the endpoint listed the model)."""
    if judge.kind != "openai":
        return None
    if not os.environ.get(judge.api_key_env):
        raise HarnessInputError(f"the environment has no {judge.api_key_env} (the judge's API key; "
                                "--api-key-env names another variable)", field="--api-key-env")
    host, port = endpoint(str(judge.base_url))
    try:
        with socket.create_connection((host, port), timeout=PREFLIGHT_TIMEOUT):
            pass
    except OSError as exc:
        raise HarnessInputError(f"the judge's endpoint {judge.base_url} is unreachable ({host}:{port}: "
                                f"{exc.strerror or exc}); no sample was scored", field="--openai-base-url") from None
    url = str(judge.base_url).rstrip("/") + "/models"
    try:
        listing = http_client.get_json(url, headers={"Authorization": f"Bearer {os.environ[judge.api_key_env]}"},
                                       deadline=PREFLIGHT_TIMEOUT, max_bytes=PREFLIGHT_MAX_BYTES)
    except http_client.HttpStatus as exc:
        if exc.status in (401, 403):
            raise HarnessInputError(f"the judge's endpoint refused the key in {judge.api_key_env} "
                                    f"(HTTP {exc.status} on /models); no sample was scored",
                                    field="--api-key-env") from None
        return f"model not checked: /models answered HTTP {exc.status}"
    except http_client.CrossOriginRedirect as exc:
        return (f"model not checked: /models redirected to another origin ({exc.location}); not followed, "
                "the key was not sent there")
    except http_client.HttpFailure as exc:
        return f"model not checked: /models failed ({exc})"
    served = [item.get("id") for item in listing.get("data", []) if isinstance(item, dict)] \
        if isinstance(listing, dict) and isinstance(listing.get("data"), list) else None
    if served is None:
        return "model not checked: /models did not list models"
    if judge.model not in served:
        shown = ", ".join(map(str, served[:10])) + (" ..." if len(served) > 10 else "")
        raise HarnessInputError(f"the judge's endpoint does not serve model {judge.model!r} (it lists: "
                                f"{shown or 'nothing'}); no sample was scored", field="--model", value=judge.model)
    return None


JUDGE_CHECK_SCRIPT: Path = Path(__file__).resolve().parent / "judge_check.py"
JUDGE_CHECK_TIMEOUT = 120.0


def check_judge_settings(judge: Judge, *, python: str, timeout: float) -> None:
    """Build the judge's client once with ``--python`` (``judge_check.py``: offline, a placeholder key)
    before any sample is scored; HarnessInputError (exit 2, one line) when it refuses the settings.
    Nothing to check for a factory judge or an endpoint judge without ``--judge-setting``."""
    if judge.kind != "openai" or not judge.settings:
        return
    executable = resolve_executable(python)
    request = {k: v for k, v in judge.request().items() if k != "api_key_env"}
    with tempfile.TemporaryDirectory(prefix="ragas-compat-judge-check-", ignore_cleanup_errors=True) as tmp:
        (Path(tmp) / "judge.json").write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
        try:
            proc = run_in_own_group([executable, str(JUDGE_CHECK_SCRIPT), str(Path(tmp) / "judge.json")],
                                    timeout=min(timeout, JUDGE_CHECK_TIMEOUT), cwd=tmp, env=probe_env(), folder=tmp)
        except OSError as exc:
            raise RagasUnavailable(f"cannot start {python} to check the judge's settings: {exc}") from None
    if proc.stopped:
        raise KeyboardInterrupt()
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    try:
        verdict = json.loads(lines[-1]) if lines and not proc.timed_out else {}
    except ValueError:
        verdict = {}
    if verdict.get("ok") is False:
        message = str(verdict.get("error") or "refused")
        for value in secret_values(judge.settings):
            message = message.replace(value, "<redacted>")
        raise HarnessInputError(f"--judge-setting: the judge's client refuses the settings ({message}); "
                                "no sample was scored", field="--judge-setting")


# -- metrics --------------------------------------------------------------------------------------
def required_columns(metrics: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    needed: dict[str, tuple[str, ...]] = {}
    for name in metrics:
        for column in metric_spec(name).fields_read:
            needed[column] = needed.get(column, ()) + (name,)
    return needed


def choose_metrics(requested: list[str] | None, dataset: Dataset, has_judge: bool) -> tuple[str, ...]:
    """The metrics to record: as requested (each must be recordable), or by default every LLM metric
    (with a judge) and every judge-free metric whose columns the dataset's first sample has."""
    if requested:
        names = []
        for name in requested:
            spec = metric_spec(name)  # HarnessInputError for an unknown name
            if spec.name not in RECORDABLE:
                raise HarnessInputError(f"--metric {name}: not recordable yet; recordable: {', '.join(RECORDABLE)}",
                                        field="--metric", value=name)
            if spec.name not in names:
                names.append(spec.name)
        chosen = tuple(names)
    else:
        first = dataset.samples[0].fields if dataset.samples else {}
        candidates = (LLM_METRICS if has_judge else ()) + NON_LLM_METRICS
        chosen = tuple(m for m in candidates if all(c in first for c in metric_spec(m).fields_read))
        if not chosen:
            raise HarnessInputError(f"{dataset.name}: no recordable metric has its columns in the first sample "
                                    f"(columns: {', '.join(dataset.columns) or 'none'})", field="--metric")
    if any(m in LLM_METRICS for m in chosen) and not has_judge:
        raise HarnessInputError("LLM metrics need a judge: --openai-base-url URL --model NAME, or --llm module:factory",
                                field="--llm")
    return chosen


# -- the output file ------------------------------------------------------------------------------
def fingerprint(dataset: Dataset, metrics: tuple[str, ...], judge: Judge | None) -> str:
    identity = {"dataset_sha256": dataset.sha256, "metrics": sorted(metrics),
                "judge": None if judge is None else {k: v for k, v in judge.provenance().items()
                                                     if k not in ("request_timeout", "max_retries")}}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def source_date_epoch() -> dt.datetime | None:
    """``SOURCE_DATE_EPOCH`` as a UTC moment (None when unset or empty). A value that is not a whole number
    of seconds since 1970 that a date can hold is refused (HarnessInputError, exit 2), as the reproducible
    builds convention asks; ``record`` checks it before any judge call (it was read only when the first batch
    was written: a 14-digit value crashed there, after the judge had been paid, and other text was ignored)."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not text.strip():
        return None
    problem = "expected a whole number of seconds since 1970-01-01 (e.g. 1767225600)"
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise HarnessInputError(f"SOURCE_DATE_EPOCH={text[:40]!r}{'...' if len(text) > 40 else ''}: {problem}",
                                field="SOURCE_DATE_EPOCH", value=text[:40])
    try:
        return dt.datetime.fromtimestamp(int(text), dt.UTC)
    except (OverflowError, OSError, ValueError):
        raise HarnessInputError(f"SOURCE_DATE_EPOCH={text!r}: {problem}, up to the year 9999",
                                field="SOURCE_DATE_EPOCH", value=text) from None


def _recording_date() -> str:
    moment = source_date_epoch() or dt.datetime.now(dt.UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def load_existing(out: Path, print_: str) -> dict[str, Any] | None:
    """The output file of an earlier run of the same recording (None when there is none);
    HarnessInputError when the file is something else."""
    if not os.path.lexists(out):
        return None
    if out.is_symlink() and not out.exists():  # not "exists and is not readable": it points at nothing
        raise HarnessInputError(f"{out.name}: is a symlink to a missing file ({os.readlink(out)}); choose another "
                                "--out or remove the link", field="--out")
    try:  # a regular file within the input limits (never a device such as /dev/zero), strict JSON
        document = loads_json(decode_utf8(read_bytes(out, "case file", allow_stdin=False), out.name, "case file"),
                              out.name, field="--out")
    except HarnessInputError as exc:
        raise HarnessInputError(f"{out.name}: exists and is not a readable case file ({exc}); "
                                "choose another --out or remove it", field="--out") from None
    recording = document.get("recording") if isinstance(document, dict) else None
    if not isinstance(recording, dict) or "fingerprint" not in recording:
        raise HarnessInputError(f"{out.name}: exists and is not a recording; choose another --out or remove it",
                                field="--out")
    if recording["fingerprint"] != print_:
        raise HarnessInputError(f"{out.name}: exists from another recording (different dataset, metrics or judge); "
                                "choose another --out or remove it to start over", field="--out")
    return document


# -- the run --------------------------------------------------------------------------------------
@dataclass
class Progress:
    done: int
    total: int
    failed: int
    seconds: float

    @property
    def eta(self) -> float | None:
        return None if self.done == 0 else self.seconds / self.done * (self.total - self.done)


@dataclass
class RecordResult:
    path: Path
    recorded: int              # cases in the file
    scored_now: int            # samples scored by this run
    failed: list[str]          # "id: why" for samples not recorded (judge unreachable)
    seconds: float
    complete: bool
    model_note: str | None
    network_blocked: int
    failed_attempts: int       # judge requests that raised (Ragas retried them or gave up), this run
    warnings: list[str] = field(default_factory=list)  # the file's warnings (identical prompts, other verdicts)


def _sample_request(sample: Any) -> dict[str, Any]:
    return {"id": sample.id, **sample.fields}


def record(dataset_path: Path, out: Path, *, judge: Judge | None, metrics: list[str] | None = None,
           python: str = sys.executable, limit: int | None = None, concurrency: int | None = None, batch_size: int = 16,
           timeout: float = 1800.0, suite: str | None = None,
           progress: Callable[[Progress], None] | None = None,
           announce: Callable[[str], None] | None = None, budget: Budget | None = None) -> RecordResult:
    """Record ``dataset_path`` into the case file ``out`` (see the module docstring); ``concurrency`` None:
    the installed Ragas's ``RunConfig.max_workers``, as its ``evaluate()`` runs (``record.concurrency``);
    ``budget``: per (sample, metric), default ``record_budget()``."""
    timeout = check_timeout(timeout)
    for option, value in (("--limit", limit), ("--concurrency", concurrency), ("--batch-size", batch_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise HarnessInputError(f"{option} {value!r}: must be a positive integer", field=option, value=value)
    check_output_file(out)  # before any work and any judge call: a folder, a device, read-only, full
    source_date_epoch()  # and the date the file will carry
    dataset = read_dataset(dataset_path, {})  # format and types first, every problem at once
    chosen = choose_metrics(metrics, dataset, judge is not None)
    dataset = read_dataset(dataset_path, required_columns(chosen))
    print_ = fingerprint(dataset, chosen, judge)
    existing = load_existing(out, print_)
    if judge is not None and any(m in LLM_METRICS for m in chosen):
        check_judge_settings(judge, python=python, timeout=timeout)
    model_note = preflight(judge) if judge is not None and any(m in LLM_METRICS for m in chosen) else None
    selected = list(dataset.samples[:limit] if limit is not None else dataset.samples)
    done: dict[str, dict[str, Any]] = {c["id"]: c for c in (existing or {}).get("cases", [])}
    recording = dict((existing or {}).get("recording") or {})
    todo = [s for s in selected if s.id not in done]
    if announce:
        announce(f"recording {len(todo)} of {len(selected)} samples ({len(done)} already in {out.name}) "
                 f"with {', '.join(chosen)}; this command talks to the judge"
                 + (f" at {judge.base_url}" if judge and judge.base_url else "") + "; telemetry off")
    started = time.perf_counter()
    failed: list[str] = []
    blocked: list[dict[str, Any]] = list((recording.get("network") or {}).get("blocked") or [])
    scored = 0
    attempts_failed = 0
    order = {s.id: s.row for s in dataset.samples}
    if concurrency is None and todo:
        concurrency = ragas_max_workers(python).value
    budget = budget or record_budget()
    by_id = {s.id: s for s in todo}
    seen: set[str] = set()
    blocked_keys = {(b.get("call"), b.get("address")) for b in blocked}
    checked: dict[str, int] = {}  # the cases a write of this run validated (_write)
    texts: dict[str, tuple[int, str]] = {}  # and their text (document_text)

    def take(document: dict[str, Any], batch: list[Any]) -> None:
        """One batch of the probe: its cases built, the provenance updated, the file rewritten."""
        nonlocal scored, attempts_failed
        results = {r.get("id"): r for r in document.get("samples", [])}
        attempts_failed += sum(int(m.get("failed_attempts") or 0) for r in results.values()
                               for m in (r.get("metrics") or {}).values() if isinstance(m, dict))
        for sample in batch:
            result = results.get(sample.id)
            built = (build_case(sample, result, python=document.get("python", {}).get("version"))
                     if result is not None else None)
            if built is None:
                failed.append(f"{sample.id}: the recording probe gave no result for it; rerun to record it")
            elif built.case is None:
                failed.append(f"{sample.id}: {built.failure}")
            else:
                done[sample.id] = built.case
            scored += 1
        for attempt in document.get("network_attempts", []):
            entry = {"call": attempt.get("call"), "address": attempt.get("address")}
            if (entry["call"], entry["address"]) not in blocked_keys:
                blocked_keys.add((entry["call"], entry["address"]))
                blocked.append(entry)
        if not recording.get("recorded_at"):
            recording["recorded_at"] = _recording_date()
        recording.update({
            "format": RECORDING_FORMAT,
            "tool": f"ragas-compat {ragas_compat.__version__} record",
            "ragas_version": document.get("ragas", {}).get("version"),
            "python": document.get("python", {}).get("version"),
            "metrics": {m: _ragas_class(document, m) or (recording.get("metrics") or {}).get(m) for m in chosen},
            "judge": {**(judge.provenance() if judge else {"kind": "none"}),
                      **({"client": document["judge"]} if document.get("judge") else {})},
            "dataset": {"name": dataset.name, "sha256": dataset.sha256, "samples": len(dataset.samples)},
            "fingerprint": print_,
            "network": {"allowed": [f"{h}:{p}" for h, p in (judge.allow if judge else ())], "blocked": blocked},
        })
        if done and len(seen) < len(todo):  # the last batch is written once, below, with "complete"
            _write(out, done, order, recording, dataset, suite, complete=False, checked=checked, texts=texts)
        if progress:
            progress(Progress(scored, len(todo), len(failed), time.perf_counter() - started))

    if todo:  # one recording probe for every sample, read batch by batch (probe_stream)
        with RecordingProbe([_sample_request(s) for s in todo], chosen, judge, python=python,
                            concurrency=concurrency or 1, batch_size=batch_size, timeout=timeout,
                            budget=budget) as probe:
            last: dict[str, Any] = {}
            for document in probe.batches():
                ids = [r.get("id") for r in document.get("samples", []) if r.get("id") in by_id]
                batch = [by_id[i] for i in ids if i not in seen]
                seen.update(ids)
                take(document, batch)
                last = document
        missing = [s for s in todo if s.id not in seen]
        if missing:  # the probe ended without them (it never does when it exits 0)
            take({**last, "samples": []}, missing)
    complete = not failed and len(done) >= len(dataset.samples) and all(s.id in done for s in dataset.samples)
    if done:
        if not recording.get("recorded_at"):
            recording["recorded_at"] = _recording_date()
        recording.setdefault("fingerprint", print_)
        _write(out, done, order, recording, dataset, suite, complete=complete, checked=checked, texts=texts)
    return RecordResult(out, len(done), scored, failed, time.perf_counter() - started, complete, model_note,
                        len(blocked), attempts_failed, repeated_prompt_warnings(list(done.values())))


def _ragas_class(document: dict[str, Any], metric: str) -> str | None:
    for sample in document.get("samples", []):
        record = (sample.get("metrics") or {}).get(metric) or {}
        if record.get("ragas_class"):
            return record["ragas_class"]
    return None


CASES_TOKEN = "\u0000ragas-compat-cases\u0000"  # stands for the cases in the header's text (json escapes it)


def document_text(document: dict[str, Any], texts: dict[str, tuple[int, str]] | None = None) -> str:
    """``json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\\n"``, byte for byte, with
    each case's text taken from ``texts`` (case id -> (``id()`` of the case object, its text)) when it is
    there for that very object, and put there otherwise: a file rewritten after each batch serializes each
    case once, not once per batch."""
    if texts is None:
        return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    head = json.dumps({**document, "cases": CASES_TOKEN}, indent=1, ensure_ascii=False, allow_nan=False)
    token = json.dumps(CASES_TOKEN, ensure_ascii=False)
    if head.count(token) != 1 or not document["cases"]:
        return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    parts = []
    for case in document["cases"]:
        known = texts.get(case["id"])
        if known is None or known[0] != id(case):
            # a case is an item of the list at depth 2 of the document: its lines indented two more
            known = (id(case), json.dumps(case, indent=1, ensure_ascii=False, allow_nan=False).replace("\n", "\n  "))
            texts[case["id"]] = known
        parts.append(known[1])
    return head.replace(token, "[\n  " + ",\n  ".join(parts) + "\n ]") + "\n"


def _write(out: Path, done: dict[str, dict[str, Any]], order: dict[str, int], recording: dict[str, Any],
           dataset: Dataset, suite: str | None, *, complete: bool, checked: dict[str, int] | None = None,
           texts: dict[str, tuple[int, str]] | None = None) -> None:
    """Write the case file of ``done`` atomically, never one `run` would refuse. ``checked`` (case id ->
    ``id()`` of the case object) names the cases an earlier write of this run validated: only the others
    are validated again, with the header (the file's size, case count and ids are checked whole), so a
    recording rewritten after each batch validates each case once; without it the whole file is.
    ``texts``: each case's serialized text, kept across the writes of a run (``document_text``)."""
    cases = sorted(done.values(), key=lambda c: order.get(c["id"], 1 << 30))
    document = {
        "schema_version": 1,
        "suite": suite or f"{Path(dataset.name).stem}-recorded",
        "description": f"Recorded by ragas-compat record from {dataset.name}: judge verdicts as Ragas parsed them, "
                       "raw replies and the live scores (recording.live) for an offline replay.",
        "recording": {**recording, "complete": complete, "cases": len(cases)},
        "cases": cases,
    }
    warnings = repeated_prompt_warnings(cases)
    if warnings:
        document["warnings"] = warnings
    text = document_text(document, texts)
    limits = Limits.current()
    size = len(text.encode("utf-8"))
    if size > limits.max_input_bytes:  # `run` would refuse it: keep the file as it was
        raise HarnessInputError(f"--out {out.name}: the case file would be {size_text(size)}, over the input limit of "
                                f"{size_text(limits.max_input_bytes)} that `run` reads ({len(cases)} cases); the file "
                                "was left as it was; record fewer samples (--limit) or raise "
                                "RAGAS_COMPAT_MAX_INPUT_BYTES", field="--out")
    if checked is None:
        parse_suite_text(text, source=out.name)  # never write a file `run` would refuse
    else:
        check_case_count(len(cases), out.name, limits)
        if len({case["id"] for case in cases}) != len(cases):
            raise HarnessInputError(f"--out {out.name}: two cases share an id; nothing was written", field="--out")
        fresh = [case for case in cases if checked.get(case["id"]) != id(case)]
        parse_suite_text(json.dumps({**document, "cases": fresh or cases[:1]}, ensure_ascii=False, allow_nan=False),
                         source=out.name)
        checked.update((case["id"], id(case)) for case in fresh)
    write_atomically(out, text)
