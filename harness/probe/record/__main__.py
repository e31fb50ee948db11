"""The recording probe: score samples with Ragas's own legacy metric classes and a live judge, and
record what the judge replied, what Ragas parsed from it and the score Ragas gave.

Usage: ``ragas_compat_probe.record REQUEST.json`` (``protocol.probe_command``, like the scoring probe).

REQUEST (JSON)::

    {"samples": [{"id", "user_input", "response", "reference", "retrieved_contexts",
                  "reference_contexts", "retrieved_context_ids", "reference_context_ids"}, ...],
     "metrics": ["context_precision_with_reference", ...],   # our metric names
     "targets": [{target}, ...],        # every target of those metrics (protocol.TargetSpec), host's order
     "judge": {"kind": "openai", "base_url", "model", "api_key_env", "timeout", "max_retries",
               "settings": {...}, "api": "legacy" | "collections"}
            | {"kind": "factory", "spec": "package.module:factory", "api": ...},
     "allow": [[host, port], ...],      # the judge's endpoint: the only connections let through
     "sys_path": [...],                 # prepended (the user's folder, for --llm)
     "concurrency": 16,                 # (sample, metric) scorings at once, as evaluate()'s max_workers
     "batch_size": 16,                  # samples per batch document (default: all of them in one)
     "budget": {"judge_calls", "judge_chars", "case_seconds", "memory"},  # protocol.Budget
     "output": "result.json"}

One process records every sample of the request (Ragas is imported once): ``concurrency`` (sample,
metric) scorings run at once, taken in dataset order (sample-major, as ``evaluate()`` submits its jobs),
the next one starting as soon as one ends, so the next batch's scorings start while the last ones of a
batch finish (no barrier between batches). Batch k is samples ``k * batch_size`` up to ``(k + 1) *
batch_size`` of the request; once all of them (and every batch before) are done the probe writes it as
the batch document ``OUTPUT.<k>`` (written to a ``.partial`` file and renamed, so the host never reads a
torn one): the output document below with the ``samples`` of that batch and the network attempts so far.
The host reads each batch as it appears and rewrites the case file, so an interruption loses at most the
samples not yet in a written batch, and the file always holds a prefix of the samples. When every sample
is done ``OUTPUT`` itself is written with ``"batches": k`` and no samples; on a Ragas import failure
``OUTPUT`` alone, with the import error.

Each sample is scored by the first legacy target the request gives for each requested metric
(``LLMContextPrecisionWithReference``, ``LLMContextRecall``, ``Faithfulness``,
``IDBasedContextPrecision`` ...) exactly as a user runs it: ``await metric.single_turn_ascore(
SingleTurnSample(...))`` with the judge wrapped in ``recorder.RecordingLLM``.

With ``"api": "collections"`` the judged metrics are scored by the first collections target of
the metric instead (``ragas.metrics.collections.ContextPrecisionWithReference`` ...), as a user runs
it: ``await metric.ascore(**inputs)`` with an instructor LLM (``llm_factory(model,
client=AsyncOpenAI(...))``, or the factory's own) wrapped in ``recorder.RecordingInstructorLLM``;
the raw replies are read from the OpenAI client's HTTP responses (``recorder.observe_http``).
Judge-free metrics have no collections class and keep their legacy class.

Budget (``..budget``; the request's ``budget``, the defaults for what it leaves out): each (sample,
metric) may make ``judge_calls`` judge calls of ``judge_chars`` prompt characters in all (counted by the
recording wrappers) and take ``case_seconds`` (``asyncio.wait_for``); once Ragas and the judge's client
are imported, the process may allocate ``memory`` bytes more (``budget.limit_memory``; samples scored at
once share it; it is renewed after each batch document is written, not per sample as the scoring probe's is). A (sample, metric) over
it is one value, a ``BudgetExceeded`` error ("Ragas did not finish (...)"), marked ``not_replayable``
with that reason; the other samples and metrics go on. Every HTTP reply of an endpoint judge is
capped (``reply_cap``: 4 MiB as sent and decompressed) before it reaches Ragas; an attempt over the cap
is a failed attempt of its call, and a metric whose value is then an error is marked
``not_replayable`` with the cap's reason (the judge answered: not a transport failure to retry).

Standard library, Ragas and its dependencies only (LangChain; openai and httpx for --api collections).
Before Ragas is imported it sets RAGAS_DO_NOT_TRACK=true
and installs the network guard with the judge's endpoint as its only exception; every other
connection attempt is blocked and listed in the output's ``network_attempts``.

Exit status: 0 output written (per-sample errors included); 2 the request or the judge was refused
(stderr says why, one line starting ``record error:``); 3 Ragas could not be imported.
"""

from __future__ import annotations

import os

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # before anything can import Ragas

import asyncio
import faulthandler
import gc
import importlib
import json
import platform
import shutil
import sys
import threading
import time
import typing as t
import warnings

from .. import network_guard
from ..budget import BUDGET, OverBudget, limit_memory, renew_memory_limit, set_budget
from ..host import Host
from ..protocol import (
    EXIT_BAD_REQUEST,
    EXIT_OK,
    EXIT_RAGAS_IMPORT,
    budget_problem,
    encode_score,
    error_record,
    full_budget,
    jsonable,
)

RECORD_FORMAT = 1

# The prompts of the recordable legacy classes: attribute of the metric instance -> the prompt kind the
# host reads verdicts from (harness/tools/record/cases.py); the same names as the judge scripts' kinds.
PROMPT_KINDS = {
    "context_precision_prompt": "context_precision",
    "context_recall_prompt": "context_recall_classification",
    "statement_generator_prompt": "statement_generator",
    "nli_statements_prompt": "nli_statements",
}


class Refused(Exception):
    """The request or the judge cannot be used; the message is for the user."""


def read_request(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            request = json.load(handle)
    except (OSError, ValueError) as exc:
        raise Refused(f"cannot read request {path}: {exc}") from None
    if not isinstance(request, dict) or not isinstance(request.get("samples"), list):
        raise Refused("request must be an object with a 'samples' list")
    problem = budget_problem(request.get("budget"))
    if problem:
        raise Refused(problem)
    for key in ("concurrency", "batch_size"):
        value = request.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise Refused(f"'{key}' must be a positive integer")
    set_budget(full_budget(request.get("budget")))
    _REQUESTED.clear()
    _REQUESTED.update(_metric_targets(request.get("targets", [])))
    if not isinstance(request.get("judge"), dict) and any(_needs_judge(m) for m in request.get("metrics", [])):
        raise Refused("request has LLM metrics but no 'judge'")
    return request


_REQUESTED: dict[str, tuple] = {}  # metric -> its targets, from the request being served (read_request)


def _metric_targets(raw: object) -> dict[str, tuple]:
    from ..targets import BadTargets, targets_from_request

    try:
        targets = targets_from_request(raw)
    except BadTargets as exc:
        raise Refused(str(exc)) from None
    out: dict[str, list] = {}
    for target in targets:
        out.setdefault(target.metric, []).append(target)
    return {metric: tuple(group) for metric, group in out.items()}


def _first(metric: str, api: str):
    """The metric's first requested target of ``api`` (None when it has none)."""
    if metric not in _REQUESTED:
        raise Refused(f"unknown metric {metric!r}; the request's targets are for: {', '.join(_REQUESTED)}")
    return next((target for target in _REQUESTED[metric] if target.api == api), None)


def _needs_judge(metric: str) -> bool:
    return _REQUESTED[metric][0].needs_judge if metric in _REQUESTED else False


# -- the judge -----------------------------------------------------------------------------
def _load_factory(spec: str):
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise Refused(f"--llm {spec!r}: expected 'package.module:factory'")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise Refused(f"--llm {spec!r}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    target = module
    for part in attribute.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise Refused(f"--llm {spec!r}: {module_name} has no {attribute}")
    if not callable(target):
        raise Refused(f"--llm {spec!r}: {attribute} is not callable")
    try:
        return target()
    except Exception as exc:
        raise Refused(f"--llm {spec!r}: the factory raised {type(exc).__name__}: {exc}") from None


def build_judge(judge: dict) -> tuple[object, dict]:
    """``(ragas_llm, description)``: the user's judge as a Ragas LLM (LangChain models wrapped in
    Ragas's ``LangchainLLMWrapper``), and what it is; for ``"api": "collections"`` an instructor LLM."""
    if judge.get("api") == "collections":
        return build_instructor_judge(judge)
    from langchain_core.language_models import BaseLanguageModel
    from ragas.llms.base import BaseRagasLLM, LangchainLLMWrapper
    from ragas.run_config import RunConfig

    if judge.get("kind") == "openai":
        from langchain_openai import ChatOpenAI

        from . import recorder, reply_cap

        timeout = judge.get("timeout")
        options = {"model": judge["model"], "base_url": judge["base_url"], "api_key": _key(judge),
                   "timeout": timeout, "max_retries": judge.get("max_retries", 2)}
        fields = getattr(ChatOpenAI, "model_fields", None) or getattr(ChatOpenAI, "__fields__", {})
        if "http_async_client" in fields:  # the reply cap (the OpenAI client's own follows redirects)
            options["http_async_client"] = reply_cap.async_client(timeout, on_too_large=recorder.reply_too_large,
                                                                  follow_redirects=True)
            options["http_client"] = reply_cap.sync_client(timeout, on_too_large=recorder.reply_too_large,
                                                           follow_redirects=True)
        client = ChatOpenAI(**{**options, **(judge.get("settings") or {})})
    elif judge.get("kind") == "factory":
        client = _load_factory(str(judge.get("spec")))
    else:
        raise Refused(f"unknown judge kind {judge.get('kind')!r}")
    described = _described(client)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if isinstance(client, BaseRagasLLM):
            return client, described
        if isinstance(client, BaseLanguageModel):
            # as a user configures it: Ragas's RunConfig sets ChatOpenAI's request timeout (its default, 180 s,
            # would replace ours) and retries what Ragas retries (for ChatOpenAI: RateLimitError only)
            run_config = RunConfig(timeout=judge["timeout"]) if judge.get("timeout") else None
            return (LangchainLLMWrapper(client, run_config=run_config),
                    {**described, "wrapped_in": "ragas.llms.base.LangchainLLMWrapper"})
    try:
        from ragas.llms.base import InstructorBaseRagasLLM

        if isinstance(client, InstructorBaseRagasLLM):
            raise Refused("the judge is a Ragas instructor LLM (llm_factory): the legacy classes do not take it; "
                          "record the collections classes with --api collections, or return a LangChain chat "
                          "model or a BaseRagasLLM")
    except ImportError:
        pass
    raise Refused(f"the judge factory returned {described['class']}, neither a LangChain chat model "
                  "nor a Ragas LLM (ragas.llms.BaseRagasLLM)")


def _key(judge: dict) -> str:
    key = os.environ.get(judge.get("api_key_env") or "OPENAI_API_KEY")
    if not key:
        raise Refused(f"the environment has no {judge.get('api_key_env') or 'OPENAI_API_KEY'}")
    return key


def _described(client: object) -> dict:
    described = {"class": f"{type(client).__module__}.{type(client).__qualname__}"}
    for attribute in ("model_name", "model"):
        value = getattr(client, attribute, None)
        if isinstance(value, str):
            described["model"] = value
            break
    return described


def build_instructor_judge(judge: dict) -> tuple[object, dict]:
    """The collections API's judge: an instructor LLM whose HTTP replies the recorder observes."""
    from . import recorder
    try:
        from ragas.llms.base import InstructorBaseRagasLLM, llm_factory
    except ImportError as exc:
        raise Refused(f"this Ragas has no collections API judge (ragas.llms.base.llm_factory): {exc}") from None
    if getattr(recorder, "RecordingInstructorLLM", None) is None:
        raise Refused("this Ragas has no instructor LLM interface (ragas.llms.base.InstructorBaseRagasLLM)")
    if judge.get("kind") == "openai":
        from openai import AsyncOpenAI

        from . import reply_cap

        timeout = judge.get("timeout")
        client = AsyncOpenAI(base_url=judge["base_url"], api_key=_key(judge), timeout=timeout,
                             max_retries=judge.get("max_retries", 2),
                             http_client=reply_cap.async_client(timeout, on_too_large=recorder.reply_too_large))
        llm = llm_factory(judge["model"], client=client, **(judge.get("settings") or {}))
        described = {**_described(llm), "client": "openai.AsyncOpenAI"}
    elif judge.get("kind") == "factory":
        llm = _load_factory(str(judge.get("spec")))
        described = _described(llm)
        if not isinstance(llm, InstructorBaseRagasLLM):
            raise Refused(f"--api collections: the judge factory returned {described['class']}; the collections "
                          "classes take a Ragas instructor LLM (ragas.llms.llm_factory(model, client=...))")
    else:
        raise Refused(f"unknown judge kind {judge.get('kind')!r}")
    if not recorder.observe_http(llm):
        raise Refused(f"--api collections: the judge {described['class']} has no OpenAI client with an httpx "
                      "client the recorder can observe (llm.client.client._client), so its raw replies could "
                      "not be kept; build it with llm_factory(model, client=openai.AsyncOpenAI(...))")
    return llm, {**described, "api": "collections", "raw_replies": "HTTP response bodies (httpx response hook)"}


# -- scoring -------------------------------------------------------------------------------
async def score_sample(sample: dict, metrics: list[str], judge, api: str = "legacy") -> dict:
    """Every requested metric of ``sample``, one after another (``score_metric``)."""
    return {"id": sample.get("id"),
            "metrics": {name: await score_metric(sample, name, judge, api) for name in metrics}}


async def score_metric(sample: dict, metric_name: str, judge, api: str = "legacy") -> dict:
    """The record of one (sample, metric): Ragas's value, what it asked the judge, and why it is not
    replayable when it is not."""
    collections = api == "collections" and _needs_judge(metric_name)
    target = _first(metric_name, "collections" if collections else "legacy")
    record: dict = {"target": target.name, "ragas_class": None, "value": None, "calls": []}
    if not all(sample.get(f) is not None for f in target.fields_read):
        record["value"] = error_record(Refused("the sample lacks " + ", ".join(
            f for f in target.fields_read if sample.get(f) is None)), "MissingInput")
        record["skipped"] = True
        return record
    started = time.perf_counter()
    held: dict = {}  # the scoring (recorder.Scoring), set inside the task wait_for runs
    raised = None
    stopped: OverBudget | None = None
    value = None
    try:
        value = await asyncio.wait_for(_score(sample, target, collections, judge, record, held),
                                       timeout=BUDGET["case_seconds"])
    except OverBudget as exc:  # the judge-call or prompt-size cap (raised past Ragas's retries)
        stopped = exc
    except asyncio.TimeoutError:  # noqa: UP041 (not the builtin before Python 3.11)
        stopped = OverBudget("time")
    except MemoryError:  # over the memory budget (limit_memory)
        stopped = OverBudget("memory")
    except Exception as exc:
        raised = exc
        value = error_record(exc)
    scoring = held.get("scoring")
    if stopped is not None:  # Ragas did not finish: kept as what it did, not replayed
        value = stopped.value(scoring.judge_calls if scoring is not None else 0)
        record["not_replayable"] = f"{value['error']['message']}; this outcome is kept here and not replayed"
    record["value"] = value
    record["seconds"] = round(time.perf_counter() - started, 3)
    if scoring is not None:
        record["calls"] = jsonable([call.to_json() for call in scoring.calls])
        record["llm_replies"] = sum(len(call.replies) for call in scoring.calls) + len(scoring.stray_replies)
        record["failed_attempts"] = len(scoring.transport_errors)
        too_large = bool(scoring.too_large) and isinstance(value, dict) and "error" in value and stopped is None
        if too_large:  # the judge answered, too much: not a transport failure a rerun would cure
            record["not_replayable"] = (
                f"{scoring.too_large[-1]['message']} ({len(scoring.too_large)} of "
                f"{len(scoring.transport_errors)} failed attempts); Ragas then raised "
                f"{value['error']['type']}: {str(value['error'].get('message'))[:200]}; this outcome is "
                "kept here and not replayed")
        elif isinstance(value, dict) and scoring.transport_errors and \
                value["error"]["type"] == scoring.transport_errors[-1]["type"]:
            record["transport_error"] = True  # the judge could not be reached: not a verdict
        if collections and raised is not None and _is_transport_error(raised) and not too_large:
            record["transport_error"] = True
    return record


async def _score(sample: dict, target, collections: bool, judge, record: dict, held: dict) -> object:
    """Ragas's value for ``sample`` by ``target`` (raises what Ragas raised); ``held["scoring"]``: what it
    asked the judge."""
    from ..scoring import (
        _metric_value,
        _single_turn_sample,
        adapt_inputs,
        resolve_collections_class,
        resolve_legacy_class,
    )
    from . import recorder

    cls = resolve_collections_class(target) if collections else resolve_legacy_class(target)
    record["ragas_class"] = f"{cls.__module__}.{cls.__qualname__}"
    metric = cls(llm=judge) if target.needs_judge else cls()
    kinds = {id(getattr(metric, attribute)): kind
             for attribute, kind in PROMPT_KINDS.items() if hasattr(metric, attribute)}
    held["scoring"] = recorder.start_scoring(kinds)
    if collections:
        return _metric_value(await metric.ascore(**{f: sample[f] for f in target.fields_read}))
    built, _, _ = adapt_inputs(_single_turn_sample(), {f: sample[f] for f in target.fields_read if f in sample})
    return encode_score(await metric.single_turn_ascore(built))


def _is_transport_error(exc: BaseException) -> bool:
    """The OpenAI client could not get a reply (connection, timeout, HTTP error status)."""
    try:
        import openai
    except ImportError:
        return False
    return isinstance(exc, (openai.APIConnectionError, openai.APIStatusError))


async def score_all(samples: list[dict], metrics: list[str], judge, concurrency: int, api: str = "legacy",
                    on_sample: t.Callable[[int, dict], None] | None = None) -> list[dict]:
    """Score every (sample, metric) with ``concurrency`` of them at once, in dataset order (sample-major,
    the next starting as soon as one ends, as ``evaluate()`` runs its jobs); ``on_sample(index, result)``
    as each sample's last metric ends. Returns the results of the samples ``on_sample`` was not given (all
    of them without it), in dataset order."""
    jobs = ((index, name) for index in range(len(samples)) for name in metrics)
    results: dict[int, dict] = {}
    left: dict[int, int] = {}

    async def worker() -> None:
        for index, name in jobs:  # one shared iterator: each job is taken by exactly one worker
            sample = samples[index]
            if index not in results:
                results[index] = {"id": sample.get("id"), "metrics": dict.fromkeys(metrics)}
                left[index] = len(metrics)
            results[index]["metrics"][name] = await score_metric(sample, name, judge, api)
            left[index] -= 1
            if not left[index]:
                del left[index]
                print(f"recorded {sample.get('id')}", file=sys.stderr, flush=True)
                if on_sample is not None:
                    on_sample(index, results.pop(index))

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(samples) * len(metrics) or 1)))))
    return [results[index] for index in sorted(results)]


def write(document: dict, output: str) -> None:
    partial = output + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(document, handle, ensure_ascii=False, allow_nan=False)
    os.replace(partial, output)


class Batches:
    """The batch documents of one request (``OUTPUT.<k>``): ``add`` a finished sample (by its index in the
    request), and batch k (samples ``k * size`` up to ``(k + 1) * size``, in dataset order) is written with
    the document's header as soon as all its samples and every batch before it are done."""

    def __init__(self, document: dict, output: str, size: int, count: int) -> None:
        self.document, self.output, self.size, self.count = document, output, size, count
        self.finished: dict[int, dict] = {}
        self.written = 0

    def add(self, index: int, result: dict) -> None:
        self.finished[index] = result
        while True:
            first = self.written * self.size
            indices = range(first, min(first + self.size, self.count))
            if not indices or any(i not in self.finished for i in indices):
                return
            self._write([self.finished.pop(i) for i in indices])

    def _write(self, samples: list[dict]) -> None:
        write({**self.document, "network_attempts": list(self.document["network_attempts"]), "batch": self.written,
               "samples": samples}, f"{self.output}.{self.written}")
        self.written += 1
        renew_memory_limit()  # each batch's samples get the allowance anew (the results written are gone)


def exit_with_parent(interval: float = 0.5, folder: str | None = None, host: Host | None = None) -> None:
    """End this process when the command that started it is gone (killed with SIGKILL, say; ``Host.gone``:
    also a host gone before this probe started): an orphaned recording would go on asking (and paying)
    the judge for a file nobody writes, or wait for a request forever. ``folder`` (the host's temporary
    folder of this probe, ``ragas-compat-record-*``) is removed first: the host that would have removed it
    is gone. ``host``: by default this probe's parent as it starts."""
    host = host or Host()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if host.gone():
                if folder and os.path.basename(folder).startswith("ragas-compat-record-"):
                    shutil.rmtree(folder, ignore_errors=True)
                os._exit(EXIT_BAD_REQUEST)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def host_of(path: str) -> Host:
    """The host named by the early start file at ``path`` (``host_pid``), else this probe's parent."""
    try:
        with open(path, encoding="utf-8") as handle:
            pid = json.load(handle).get("host_pid")
    except (OSError, ValueError, AttributeError):
        pid = None
    return Host(pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None)


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as exc:
        raise Refused(f"cannot read request {path}: {exc}") from None
    if not isinstance(document, dict):
        raise Refused("request must be an object")
    return document


def _allowed(start: dict) -> list[tuple[str, int]]:
    return [(str(h), int(p)) for h, p in start.get("allow") or []]


def wait_for_request(path: str) -> None:
    """Wait until the host writes the request (it renames it into place whole); the watch thread of
    ``exit_with_parent`` ends the process when the host is gone."""
    pause = 0.001
    while not os.path.exists(path):
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def main(argv: list[str]) -> int:
    """``REQUEST.json`` is the request, or an early start (``{"early": true, "allow", "sys_path",
    "request": PATH}``, written by the host before it has read its command line through): the guard is
    installed and Ragas imported at once, then the request is awaited at PATH and must name the same
    endpoints and import path (else it is refused, exit 2)."""
    faulthandler.enable()
    exit_with_parent(folder=os.path.dirname(os.path.abspath(argv[1])) if len(argv) == 2 else None,
                     host=host_of(argv[1]) if len(argv) == 2 else None)
    if len(argv) != 2:
        print("record error: usage: ragas_compat_probe.record REQUEST.json", file=sys.stderr)
        return EXIT_BAD_REQUEST
    attempts: list[dict] = []
    try:
        start = _read_json(argv[1])
        request = None if start.get("early") is True else read_request(argv[1])
        allow = _allowed(start)
    except (Refused, TypeError, ValueError) as exc:
        print(f"record error: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    if allow:  # the judge's endpoint must not go through a proxy (the guard would block it)
        hosts = ",".join(h for h, _ in allow)
        for name in ("NO_PROXY", "no_proxy"):
            os.environ[name] = ",".join(filter(None, [os.environ.get(name), hosts]))
    network_guard.install(attempts, allow)
    for entry in reversed(start.get("sys_path") or []):
        sys.path.insert(0, str(entry))
    document: dict = {
        "record_format": RECORD_FORMAT,
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation()},
        "ragas": {"version": None, "import_error": None},
        "telemetry": {"RAGAS_DO_NOT_TRACK": os.environ.get("RAGAS_DO_NOT_TRACK")},
        "allowed": [list(a) for a in allow],
        "network_attempts": attempts,
        "judge": None,
        "samples": [],
    }
    try:
        import ragas
        import ragas.metrics
    except Exception as exc:
        document["ragas"]["import_error"] = f"{type(exc).__name__}: {exc}"
    else:
        document["ragas"]["version"] = getattr(ragas, "__version__", None)
        # what the import built lives as long as the process: keep the cyclic collector off it
        gc.collect()
        gc.freeze()
    if request is None:
        try:
            wait_for_request(str(start.get("request")))
            request = read_request(str(start["request"]))
            if _allowed(request) != allow or (request.get("sys_path") or []) != (start.get("sys_path") or []):
                raise Refused("the request names other endpoints or another import path than the probe was "
                              "started with")
        except (Refused, TypeError, ValueError) as exc:
            print(f"record error: {exc}", file=sys.stderr)
            return EXIT_BAD_REQUEST
    if document["ragas"]["import_error"] is not None:
        write(document, request["output"])
        return EXIT_RAGAS_IMPORT
    metrics = [str(m) for m in request.get("metrics") or []]
    try:
        for name in metrics:
            if _first(name, "legacy") is None and _first(name, "collections") is None:
                raise Refused(f"metric {name!r} has no target in the request")
        judge = None
        if any(_needs_judge(m) for m in metrics):
            from . import recorder
            inner, document["judge"] = build_judge(request["judge"])
            if request["judge"].get("api") == "collections":
                judge = recorder.RecordingInstructorLLM(inner)
            else:
                recorder.capture_prompts()
                judge = recorder.RecordingLLM(inner)
    except Refused as exc:
        print(f"record error: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    limit_memory(BUDGET["memory"])  # after the imports: a sample that grows is its own value
    warnings.simplefilter("ignore")  # deprecation chatter; not task-safe to scope per sample
    api = (request.get("judge") or {}).get("api") or "legacy"
    samples = request["samples"]
    batches = Batches(document, request["output"], int(request.get("batch_size") or len(samples) or 1), len(samples))
    asyncio.run(score_all(samples, metrics, judge, int(request.get("concurrency") or 1), api,
                          on_sample=batches.add))
    write({**document, "batches": batches.written}, request["output"])
    return EXIT_OK


if __name__ == "__main__":
    from ..budget import exit_without_teardown

    exit_without_teardown(main(sys.argv))
