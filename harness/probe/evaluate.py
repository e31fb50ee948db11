"""Ragas's own ``evaluate()`` / ``aevaluate()`` on the whole suite, with scripted judges.

One evaluation run per (metric set, API, group of cases): the request's legacy targets are split
into metric sets (``metric_sets``: the classes of one metric are aliases and share a metric name,
and they cannot share a run, because ``evaluate()`` keys its scores by name); within a set, targets that apply to the same cases run together on exactly
those cases, so no row is scored without frozen verdicts.

Each metric instance gets its own ``FrozenJudgeLLM`` whose PromptBook holds the frozen replies
for *every* case of the run, keyed by prompt content: ``evaluate()`` runs the jobs
concurrently (``RunConfig.max_workers``) and the judge never relies on call order.

Recorded per run: the settings (``raise_exceptions`` etc.), the dataset-level score Ragas
reports for each metric (``EvaluationResult._repr_dict``: ``safe_nanmean`` over the rows),
the per-row values Ragas produced (repr floats, "NaN"), and the exception behind every row
``evaluate()`` turned into NaN (from the executor's "Exception raised in Job[i]" log record,
job i = row * number_of_metrics + metric position), plus stub problems and prompt counts.

Standard library and Ragas only; imports Ragas, so set RAGAS_DO_NOT_TRACK first.
"""

from __future__ import annotations

import asyncio
import logging
import time
import typing as t
import warnings

from .judge.prompt_book import PromptBook
from .multi_turn import is_multi_turn, multi_turn_sample
from .protocol import API_LEGACY, encode_score, encode_warnings
from .scoring import constructor_options, frozen_embeddings, legacy_judge_class, resolve_legacy_class
from .targets import Target

MetricSets = tuple[tuple[str, tuple[Target, ...]], ...]


def metric_sets(targets: t.Sequence[Target]) -> MetricSets:
    """The legacy ``targets`` in metric sets: the first class of every LLM metric ("legacy_llm"), the
    other classes of the LLM metrics ("legacy_llm_aliases": a metric's classes share a metric name),
    and the classes of the metrics that need no LLM ("legacy_non_llm"). Target names carry a
    configuration (legacy:FactualCorrectness[mode=precision]); such an instance is renamed the same
    way in evaluate() (_metrics_with_judges), so names stay unique."""
    by_metric: dict[str, list[Target]] = {}
    for target in targets:
        # a function, a class given its LLM per call, or one built on a frozen classifier for one case (its
        # scores are the case's: FaithfulnesswithHHEM) is not an evaluate() metric
        if target.api == API_LEGACY and target.function is None and not target.llm_per_call \
                and target.classifier is None:
            by_metric.setdefault(target.metric, []).append(target)
    llm = [group for group in by_metric.values() if group[0].needs_judge]
    return (("legacy_llm", tuple(group[0] for group in llm)),
            ("legacy_llm_aliases", tuple(t for group in llm for t in group[1:])),
            ("legacy_non_llm", tuple(t for group in by_metric.values() if not group[0].needs_judge for t in group)))

DEFAULT_SETTINGS: dict[str, t.Any] = {
    "apis": ["evaluate", "aevaluate"],
    "raise_exceptions": False,   # Ragas's default: a failing row becomes NaN
    "max_workers": 8,            # RunConfig(max_workers=...): concurrent jobs
    "batch_size": None,
    "show_progress": False,
    "timeout": 180,              # RunConfig(timeout=...) per job
}

JOB_ERROR_MESSAGE = "Exception raised in Job[%s]: %s(%s)"


class BadEvaluateRequest(ValueError):
    pass


def settings_from_request(value: t.Any) -> dict[str, t.Any]:
    """``true`` -> DEFAULT_SETTINGS; an object overrides single settings."""
    if value is True:
        return dict(DEFAULT_SETTINGS)
    if not isinstance(value, dict):
        raise BadEvaluateRequest("'evaluate' must be true or an object of settings")
    unknown = sorted(set(value) - set(DEFAULT_SETTINGS))
    if unknown:
        raise BadEvaluateRequest(f"unknown 'evaluate' settings {unknown}; known: {sorted(DEFAULT_SETTINGS)}")
    settings = {**DEFAULT_SETTINGS, **value}
    if not set(settings["apis"]) <= {"evaluate", "aevaluate"} or not settings["apis"]:
        raise BadEvaluateRequest("'evaluate.apis' must be a non-empty subset of ['evaluate', 'aevaluate']")
    return settings


def evaluation_groups(cases: list[dict], targets: t.Sequence[Target]
                      ) -> list[tuple[str, tuple[Target, ...], tuple[dict, ...]]]:
    """``(metric set, targets, cases)``: the legacy ``targets`` of a set that apply to the same cases,
    with them."""
    groups = []
    for set_name, members in metric_sets(targets):
        by_cases: dict[tuple[int, ...], list[Target]] = {}
        for target in members:
            applicable = tuple(i for i, case in enumerate(cases) if target.applies(case))
            if applicable:
                by_cases.setdefault(applicable, []).append(target)
        for indices, targets in by_cases.items():
            groups.append((set_name, tuple(targets), tuple(cases[i] for i in indices)))
    return groups


class _JobErrors(logging.Handler):
    """Collects the executor's "Exception raised in Job[i]" records: job index -> (type, message)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.errors: dict[int, tuple[str, str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == JOB_ERROR_MESSAGE and isinstance(record.args, tuple) and len(record.args) == 3:
            index, type_name, message = record.args
            self.errors[int(index)] = (str(type_name), str(message))


def _metrics_with_judges(targets: tuple[Target, ...], cases: tuple[dict, ...]
                         ) -> tuple[list[t.Any], list[PromptBook | None]]:
    """One fresh metric instance per target; LLM metrics get their own judge and book."""
    judge_cls = legacy_judge_class()
    metrics, books = [], []
    for target in targets:
        cls = resolve_legacy_class(target)
        if not target.needs_judge:
            options = constructor_options(cls, target.options)
            if target.embeddings:  # one frozen model answering for every case's texts
                options["embeddings"] = frozen_embeddings(
                    {"embeddings": {k: v for c in cases for k, v in (c.get("embeddings") or {}).items()}})
            metric = cls(**options)
            if target.variant:
                metric.name = f"{metric.name}{target.variant}"
            metrics.append(metric)
            books.append(None)
            continue
        book = PromptBook()
        options = constructor_options(cls, target.options)
        if target.embeddings:  # a judged class that also embeds (AnswerCorrectness, ResponseRelevancy)
            options["embeddings"] = frozen_embeddings(
                {"embeddings": {k: v for c in cases for k, v in (c.get("embeddings") or {}).items()}})
        metric = cls(llm=judge_cls(book), **options)
        if target.variant:  # one name per configuration: evaluate() keys its columns by name
            metric.name = f"{metric.name}{target.variant}"
        for case in cases:
            target.expect_prompts(metric, case, book)
        metrics.append(metric)
        books.append(book)
    names = [result_key(m) for m in metrics]
    if len(set(names)) != len(names):
        raise BadEvaluateRequest(f"metric names must be unique within one evaluate() run: {names}")
    return metrics, books


def result_key(metric: t.Any) -> str:
    """The column evaluate() files the metric's scores under: its name, or ``name(mode=...)`` for a
    class with a ``mode`` (Ragas's ``ModeMetric``, e.g. FactualCorrectness, NoiseSensitivity)."""
    try:
        from ragas.metrics.base import ModeMetric
    except ImportError:
        return metric.name
    return f"{metric.name}(mode={metric.mode})" if isinstance(metric, ModeMetric) else metric.name


def _dataset(targets: tuple[Target, ...], cases: tuple[dict, ...]) -> t.Any:
    from ragas.dataset_schema import EvaluationDataset, SingleTurnSample

    fields = sorted({f for target in targets for f in target.fields_read})
    if cases and all(is_multi_turn(c) for c in cases):  # multi-turn targets apply to multi-turn cases only
        return EvaluationDataset(samples=[multi_turn_sample({f: c[f] for f in fields if f in c})[0] for c in cases])
    return EvaluationDataset(samples=[SingleTurnSample(**{f: c[f] for f in fields if f in c})
                                      for c in cases])


def _call(api: str, dataset: t.Any, metrics: list[t.Any], settings: dict[str, t.Any]) -> t.Any:
    from ragas import aevaluate, evaluate
    from ragas.run_config import RunConfig

    kwargs = dict(dataset=dataset, metrics=metrics, llm=None, embeddings=None,
                  run_config=RunConfig(max_workers=settings["max_workers"], timeout=settings["timeout"]),
                  raise_exceptions=settings["raise_exceptions"],
                  show_progress=settings["show_progress"], batch_size=settings["batch_size"])
    if api == "evaluate":
        return evaluate(**kwargs)
    return asyncio.run(aevaluate(**kwargs))


EVALUATE_BATCH_CASES = 2_000  # cases per evaluate() call: a larger run is scored in batches of this many

# (api, metric set, targets, cases, batch): batch is (k, n) for the k-th of a run's n batches, else None
PlannedRun = tuple[str, str, tuple[Target, ...], tuple[dict, ...], t.Optional[tuple[int, int]]]


def batch_bounds(count: int, size: int = EVALUATE_BATCH_CASES) -> list[tuple[int, int]]:
    """``[(start, stop), ...]``: ``count`` cases in consecutive batches of at most ``size`` (one when
    ``count <= size``; sizes differ by at most one)."""
    batches = max(1, -(-count // size))
    return [(count * k // batches, count * (k + 1) // batches) for k in range(batches)]


def _ragas_mean() -> t.Callable[[list], float] | None:
    """Ragas's ``safe_nanmean`` (what ``EvaluationResult`` averages each metric's rows with), or None
    where it is not importable: such a Ragas is never batched."""
    try:
        from ragas.utils import safe_nanmean
    except ImportError:
        return None
    return safe_nanmean


def run_group(api: str, set_name: str, targets: tuple[Target, ...], cases: tuple[dict, ...],
              settings: dict[str, t.Any]) -> dict[str, t.Any]:
    """One ``evaluate()`` (or ``aevaluate()``) call on ``cases``; every failure is recorded, none raised."""
    return _run_batch(api, set_name, targets, cases, settings)[0]


def _json_value(value: t.Any) -> t.Any:
    """A row value as Ragas returned it, JSON-able without changing what numpy makes of it (a numpy
    bool, integer or float as the Python bool, int or float of the same value, by numpy's own ``item()``;
    anything else as it is). The probe imports only the standard library and Ragas, so numpy's scalars
    are known by their module, not by importing numpy."""
    if type(value) in (float, int, bool) or value is None:
        return value
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == () and hasattr(value, "item"):
        item = value.item()
        if type(item) in (float, int, bool):
            return item
    return value


def run_planned(run: PlannedRun, settings: dict[str, t.Any]) -> dict[str, t.Any]:
    """The record of one planned run (``planned_runs``); a batch's record also carries its place
    (``batch``: [k, n]) and its rows' values as Ragas returned them (``raw_values``), which
    ``merge_batches`` needs for the dataset-level mean."""
    from .budget import renew_memory_limit

    api, set_name, targets, cases, batch = run
    renew_memory_limit()  # a run (a batch of at most EVALUATE_BATCH_CASES) gets a case's allowance anew
    record, raw = _run_batch(api, set_name, targets, cases, settings)
    if batch is not None:
        record["batch"] = list(batch)
        record["raw_values"] = {name: [_json_value(v) for v in values] for name, values in raw.items()}
    return record


def _merged(batches: list[dict[str, t.Any]]) -> dict[str, t.Any]:
    """One run's record from its batches' (``merge_batches``)."""
    mean = _ragas_mean()
    merged = {key: value for key, value in batches[0].items() if key not in ("batch", "raw_values")}
    merged.update(case_ids=[], rows=[], errors=[], stub_problems=[], judge_problems=[], warnings=[], seconds=0.0,
                  prompts={},
                  expected_prompts={}, batches=len(batches))
    values: dict[str, list[t.Any]] = {name: [] for name in merged["targets"]}
    for number, record in enumerate(batches, start=1):
        where = f"batch {number} of {len(batches)} (cases {len(merged['case_ids']) + 1}-" \
                f"{len(merged['case_ids']) + len(record['case_ids'])})"
        merged["case_ids"] += record["case_ids"]
        merged["rows"] += record["rows"]
        merged["errors"] += record["errors"]
        merged["stub_problems"] += record["stub_problems"]
        merged["judge_problems"] += record["judge_problems"]
        merged["warnings"] += [w for w in record["warnings"] if w not in merged["warnings"]]
        merged["seconds"] += record["seconds"] or 0.0
        for key in ("prompts", "expected_prompts"):
            for name, count in record[key].items():
                merged[key][name] = merged[key].get(name, 0) + count
        if record["run_error"] is not None and merged["run_error"] is None:
            merged["run_error"] = {**record["run_error"],
                                   "message": f"{record['run_error']['message']} (in {where})"}
        for name, rows in record.get("raw_values", {}).items():
            values[name] += rows
            own = encode_score(mean(rows)) if mean is not None else None
            if record["scores"].get(name) != own:
                merged["stub_problems"].append(
                    f"{name}: {where}: {record['api']}() reported the mean {record['scores'].get(name)!r}, "
                    f"Ragas's safe_nanmean of its {len(rows)} rows is {own!r}")
    merged["scores"] = {} if merged["run_error"] is not None or mean is None else {
        name: encode_score(mean(rows)) for name, rows in values.items()}
    return merged


def merge_batches(records: t.Sequence[dict[str, t.Any]]) -> list[dict[str, t.Any]]:
    """The records of planned runs, in plan order, with each batched run's batches (consecutive,
    ``batch`` [1, n] ... [n, n]) merged into one record: its rows, errors and prompts in case order,
    and as each target's dataset-level score Ragas's own ``safe_nanmean`` over all its rows' values as
    Ragas returned them, in case order: what ``EvaluationResult`` computes in one whole-dataset call.
    Each batch's own reported mean is checked against ``safe_nanmean`` of its rows (a difference is a
    stub problem naming the batch). ``batches``: how many calls the run took."""
    merged: list[dict[str, t.Any]] = []
    pending: list[dict[str, t.Any]] = []
    for record in records:
        if "batch" not in record:
            merged.append(record)
            continue
        pending.append(record)
        if record["batch"][0] == record["batch"][1]:
            merged.append(_merged(pending))
            pending = []
    if pending:
        raise BadEvaluateRequest(f"batches {[r['batch'] for r in pending]} of a run are incomplete")
    return merged


def _run_batch(api: str, set_name: str, targets: tuple[Target, ...], cases: tuple[dict, ...],
               settings: dict[str, t.Any]) -> tuple[dict[str, t.Any], dict[str, list[t.Any]]]:
    """One ``evaluate()`` (or ``aevaluate()``) call on ``cases``: its record, and each target's row
    values as Ragas returned them (empty when the call failed)."""
    record: dict[str, t.Any] = {
        "api": api, "metric_set": set_name, "targets": [target.name for target in targets],
        "metrics": [target.metric for target in targets], "ragas_names": [],
        "case_ids": [case.get("id") for case in cases], "scores": {}, "rows": [], "errors": [],
        "run_error": None, "stub_problems": [], "judge_problems": [], "prompts": {}, "expected_prompts": {},
        "seconds": None, "warnings": [],
    }
    handler = _JobErrors()
    executor_logger = logging.getLogger("ragas.executor")
    executor_logger.addHandler(handler)
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        by = "harness"  # until the metrics and their scripted judges are built
        try:
            metrics, books = _metrics_with_judges(targets, cases)
            record["ragas_names"] = [result_key(m) for m in metrics]
            by = "ragas"
            dataset = _dataset(targets, cases)
            result = _call(api, dataset, metrics, settings)
        except Exception as exc:
            # by: who raised: the harness preparing the call (a harness error: nothing of Ragas was checked)
            # or Ragas's evaluate() itself
            record["run_error"] = {"type": type(exc).__name__, "message": str(exc), "by": by}
            result, books = None, []
        finally:
            record["seconds"] = time.perf_counter() - started
            executor_logger.removeHandler(handler)
    record["warnings"] = encode_warnings(caught)
    if result is None:
        return record, {}
    summary = getattr(result, "_repr_dict", {})
    for target, name in zip(targets, record["ragas_names"]):
        record["scores"][target.name] = encode_score(summary.get(name, float("nan")))
    raw: dict[str, list[t.Any]] = {target.name: [] for target in targets}
    for i, (case, scores) in enumerate(zip(cases, result.scores)):
        for target, name in zip(targets, record["ragas_names"]):
            raw[target.name].append(scores.get(name))
        record["rows"].append({"case_id": case.get("id"), "values": {
            target.name: encode_score(scores.get(name)) for target, name in zip(targets, record["ragas_names"])}})
        for j, target in enumerate(targets):
            error = handler.errors.get(i * len(targets) + j)
            if error is not None:
                record["errors"].append({"case_id": case.get("id"), "target": target.name,
                                         "type": error[0], "message": error[1]})
    for target, book in zip(targets, books):
        if book is not None:
            record["prompts"][target.name] = len(book.asked)
            record["expected_prompts"][target.name] = book.expected_count
            # the scripted judge asked amiss (or left prompts unasked): the harness's, as for a row
            record["judge_problems"] += [f"{target.name}: {p}" for p in book.problems + book.unasked()]
    return record, raw


def planned_runs(cases: list[dict], request_value: t.Any, targets: t.Sequence[Target], *,
                 batch_cases: int = EVALUATE_BATCH_CASES) -> tuple[dict[str, t.Any], list[PlannedRun]]:
    """The settings and every evaluation run they ask for on ``cases`` (raw case dicts) with the
    request's legacy ``targets``, in report order; ``run_planned(run, settings)`` runs one (the
    probe may run them in several workers; ``merge_batches`` then joins a batched run's records).
    A run of more than ``batch_cases`` cases is planned as consecutive batches (``batch_bounds``), each
    one ``evaluate()`` call, where Ragas has ``safe_nanmean`` to average them with: the cost of a run
    then grows linearly with its cases, its memory is that of one batch (Ragas keeps every row's traces
    and the whole result as a DataFrame), and the batches spread over the workers."""
    settings = settings_from_request(request_value)
    batched = _ragas_mean() is not None
    runs: list[PlannedRun] = []
    for set_name, group, group_cases in evaluation_groups(cases, targets):
        bounds = batch_bounds(len(group_cases), batch_cases) if batched else [(0, len(group_cases))]
        for api in settings["apis"]:
            for number, (start, stop) in enumerate(bounds, start=1):
                runs.append((api, set_name, group, group_cases[start:stop],
                             None if len(bounds) == 1 else (number, len(bounds))))
    return settings, runs
