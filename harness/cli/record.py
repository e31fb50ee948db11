"""``ragas-compat record``: run Ragas once with a live judge and write a case file that replays offline.

``register(app)`` adds the command. This is the only command that talks to a model, and it says so.
``--api collections`` records Ragas's collections classes (an instructor LLM judge) instead of the legacy ones.
Exit codes: 0 every selected sample recorded; 1 some samples could not be recorded (the judge was
unreachable for them; rerun to continue); 2 bad input or usage (bad dataset, missing key, unreachable
endpoint, unknown model: before any sample is scored, nothing written); 3 Ragas could not be run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ragas_compat.cli.common import exits_on_harness_errors, positive_seconds, shown, stderr, stdout
from ragas_compat.cli.output import resolve_metrics
from ragas_compat.errors import ExitCode, HarnessInputError
from ragas_compat.input_limits import loads_json
from ragas_compat.tools.record.secrets import REDACTED, looks_secret
from ragas_compat.tools.record.session import (
    RECORD_CASE_SECONDS,
    RECORD_JUDGE_CALLS,
    Judge,
    Progress,
    endpoint,
    record,
    record_budget,
)


def _settings(values: list[str] | None) -> dict:
    """``--judge-setting key=value`` (value as JSON when it parses, else a string; the JSON within the
    input limits). The key is a keyword argument of the client, so a Python identifier, given once.
    The client itself checks the values before any sample is scored (``check_judge_settings``)."""
    out: dict = {}
    for item in values or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise HarnessInputError(f"--judge-setting {shown_setting(item)!r}: expected key=value",
                                    field="--judge-setting")
        if not key.isidentifier() or not key.isascii():
            raise HarnessInputError(f"--judge-setting {key!r}: the name must be a keyword argument of the client "
                                    "(letters, digits and _)", field="--judge-setting")
        if key in out:
            raise HarnessInputError(f"--judge-setting {key!r}: given twice", field="--judge-setting")
        try:
            out[key] = loads_json(raw, f"--judge-setting {key}", field="--judge-setting")
        except HarnessInputError:
            if raw.lstrip().startswith(("{", "[")):
                raise  # meant as JSON: say what is wrong with it
            out[key] = raw
    return out


def shown_setting(item: str) -> str:
    """A ``key=value`` as it may be shown: the value cut when the key looks like a credential."""
    key, sep, _ = item.partition("=")
    return f"{key}={REDACTED}" if sep and looks_secret(key.strip()) else item


API_CHOICES = ("legacy", "collections")


def _judge(llm: str | None, base_url: str | None, model: str | None, api_key_env: str,
           settings: list[str] | None, request_timeout: float, max_retries: int,
           allow: list[str] | None, api: str = "legacy") -> Judge | None:
    if llm and (base_url or model):
        raise HarnessInputError("give the judge either as --llm module:factory or as --openai-base-url and --model",
                                field="--llm")
    if api not in API_CHOICES:
        raise HarnessInputError(f"--api {api!r}: expected one of {', '.join(API_CHOICES)}", field="--api", value=api)
    allowed = []
    for item in allow or []:
        allowed.append(endpoint(item) if "://" in item else endpoint(f"http://{item}"))
    if llm:
        return Judge("factory", spec=llm, allow=tuple(allowed), api=api)
    if base_url or model:
        if not (base_url and model):
            raise HarnessInputError("--openai-base-url and --model go together", field="--model")
        return Judge("openai", model=model, base_url=base_url, api_key_env=api_key_env, settings=_settings(settings),
                     request_timeout=request_timeout, max_retries=max_retries,
                     allow=(endpoint(base_url), *allowed), api=api)
    return None


def _progress_line(p: Progress) -> None:
    eta = "" if p.eta is None else f", ETA {p.eta:.0f} s"
    failed = f", {p.failed} not recorded" if p.failed else ""
    stderr().print(f"recorded {p.done}/{p.total} samples{failed} ({p.seconds:.1f} s{eta})", highlight=False)


@exits_on_harness_errors()
def record_command(
    dataset: Path = typer.Argument(..., help="Ragas EvaluationDataset file: .jsonl, .json or .csv (old "
                                             "question/contexts/answer/ground_truth names too), a .parquet "
                                             "file or a Hugging Face save_to_disk folder."),
    out: Path = typer.Option(..., "--out", help="The case file to write (resumed when it holds this recording)."),
    llm: Optional[str] = typer.Option(None, "--llm", help="Judge factory 'package.module:factory' returning a "
                                                          "LangChain chat model or a Ragas LLM."),
    openai_base_url: Optional[str] = typer.Option(None, "--openai-base-url", help="OpenAI-compatible endpoint."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name at --openai-base-url."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env",
                                    help="Environment variable holding the endpoint's key."),
    judge_setting: Optional[list[str]] = typer.Option(None, "--judge-setting",
                                                      help="key=value passed to ChatOpenAI (with --api collections: "
                                                           "to llm_factory) (repeatable)."),
    request_timeout: float = typer.Option(120.0, "--request-timeout", callback=positive_seconds,
                                          help="Seconds per judge request (ChatOpenAI timeout)."),
    max_retries: int = typer.Option(2, "--max-retries", min=0, help="ChatOpenAI's own retries per request."),
    allow_endpoint: Optional[list[str]] = typer.Option(None, "--allow-endpoint",
                                                       help="host:port the --llm judge may connect to (repeatable); "
                                                            "every other connection is blocked and recorded."),
    api: str = typer.Option("legacy", "--api", help="Which Ragas classes score the judged metrics: legacy "
                                                    "(LLMContextRecall ..., the judge wrapped in LangchainLLMWrapper) "
                                                    "or collections (ragas.metrics.collections, an instructor "
                                                    "LLM from llm_factory)."),
    metrics: Optional[list[str]] = typer.Option(None, "--metric", help="Metrics to record (repeatable); default: "
                                                                       "every recordable metric the columns allow."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Record only the first N samples (a trial run)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", min=1,
                                              help="(sample, metric) scorings run at once, as evaluate()'s "
                                                   "jobs (default: the installed Ragas's RunConfig.max_workers; "
                                                   "16 in 0.4.3)."),
    batch_size: int = typer.Option(16, "--batch-size", help="Samples per batch: the file is rewritten each time "
                                                            "this many more are recorded (one recording probe "
                                                            "serves every batch)."),
    suite: Optional[str] = typer.Option(None, "--suite", help="Suite name (default: <dataset>-recorded)."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas records."),
    timeout: float = typer.Option(1800.0, "--timeout", callback=positive_seconds,
                                  help="Seconds the recording probe may take for one batch (from the "
                                       "previous one) before it is stopped."),
    case_timeout: Optional[float] = typer.Option(None, "--case-timeout", callback=positive_seconds,
                                                 help=f"Seconds one sample may take in one metric (default "
                                                      f"{RECORD_CASE_SECONDS:g}); past it that metric is a "
                                                      "'Ragas did not finish' value, not replayed."),
    case_judge_calls: Optional[int] = typer.Option(None, "--case-judge-calls", min=1,
                                                   help="Judge calls one sample may make in one metric "
                                                        f"(default {RECORD_JUDGE_CALLS})."),
    case_memory: Optional[float] = typer.Option(None, "--case-memory",
                                                help="Memory in GiB the recording probe may allocate once "
                                                     "Ragas is imported, shared by the samples scored at once "
                                                     "(default 0.5; 0: no limit)."),
) -> None:
    """Record a live Ragas run: the judge's replies, the verdicts Ragas parsed and the live scores,
    as a case file that `ragas-compat run --cases FILE` replays offline (and checks bit for bit)."""
    budget = record_budget(judge_calls=case_judge_calls, case_seconds=case_timeout, memory_gib=case_memory)
    judge = _judge(llm, openai_base_url, model, api_key_env, judge_setting, request_timeout, max_retries,
                   allow_endpoint, api)
    err = stderr()
    result = record(dataset, out, judge=judge, metrics=resolve_metrics(metrics) or None, python=python, limit=limit,
                    concurrency=concurrency, batch_size=batch_size, timeout=timeout, suite=suite,
                    progress=_progress_line, budget=budget,
                    announce=lambda line: err.print(shown(line), highlight=False, soft_wrap=True))
    console = stdout()
    if result.model_note:
        err.print(f"[yellow]note:[/] {shown(result.model_note)}", highlight=False)
    for line in result.failed:
        err.print(f"[yellow]not recorded[/] {shown(line)}", highlight=False, soft_wrap=True)
    for warning in result.warnings:  # also in the case file's "warnings"
        err.print(f"[bold yellow]warning:[/] {shown(warning)}", highlight=False, soft_wrap=True)
    console.print(f"{result.recorded} cases in {shown(result.path)} ({result.scored_now} scored now, "
                  f"{result.seconds:.1f} s; {'complete' if result.complete else 'incomplete'}; "
                  f"{result.failed_attempts} judge requests failed and were retried or given up by Ragas; "
                  f"{result.network_blocked} other connection attempts blocked)", highlight=False)
    if result.failed:
        console.print("rerun the same command to record the samples that failed", highlight=False)
        raise typer.Exit(int(ExitCode.DRIFT))


def register(app: typer.Typer) -> None:
    """Add the ``record`` command to ``app``."""
    app.command("record")(record_command)
