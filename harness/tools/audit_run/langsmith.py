"""Read a LangSmith export of a Ragas run: its runs as LangSmith's ``Run`` schema, into the chains of a
``ragas_traces`` dump.

Ragas's chains are LangChain callbacks (``ragas.callbacks.new_group`` calls ``on_chain_start`` /
``on_chain_end`` / ``on_chain_error`` on the callback manager), so a LangChain tracer given to
``evaluate(callbacks=[...])`` (LangSmith's, or any ``BaseTracer``) records the same tree as
``RagasTracer``: one ``chain`` run per Ragas chain, with LangChain's ``llm`` runs (the raw judge
calls) under the prompts. What is read, per run (``langsmith.schemas.Run`` as
``model_dump(mode="json")`` writes it): ``id``, ``parent_run_id``, ``name``, ``run_type``, ``inputs``,
``outputs``, ``error``, ``extra.metadata`` (Ragas's ``type`` and ``row_index``: the rows are put in
their index order), ``child_runs`` (when nested) and ``dotted_order`` (the execution order of other
siblings). Only ``chain`` runs become chains; the
rest (``llm`` runs, timings, tokens, feedback) is not read.

The document is one root run with its ``child_runs`` nested (``Client.read_run(id,
load_child_runs=True)``), or a list of runs, nested or flat (``Client.list_runs``: linked by
``parent_run_id``). Unlike ``RagasTracer``, the tracer records a chain that raised: its ``error``
(``MetricRun.error``); its ``outputs`` are then empty, as in a ``ragas_traces`` dump. Every problem is
named by the row and the JSON path of the run in the file (``HarnessInputError``, exit 2).
"""

from __future__ import annotations

from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import json_path
from ragas_compat.tools.audit_run.traces import LANGSMITH, MAX_PROBLEMS, Traces, parse_traces

FIELDS: dict[str, tuple[type, ...]] = {"id": (str,), "name": (str,), "run_type": (str,), "inputs": (dict, type(None)),
                                       "outputs": (dict, type(None)), "extra": (dict, type(None)),
                                       "error": (str, type(None)), "parent_run_id": (str, type(None)),
                                       "child_runs": (list, type(None)), "dotted_order": (str, type(None))}


JSON_NAMES = {dict: "object", list: "list", str: "string", type(None): "null", int: "number", float: "number",
              bool: "boolean"}


def _kind(value: Any) -> str:
    return "nothing" if value is None else JSON_NAMES.get(type(value), type(value).__name__)


def _flatten(document: Any) -> tuple[list[tuple[Any, tuple[Any, ...], str | None]], list[tuple[tuple[Any, ...], str]]]:
    """Every run of the document with its JSON path and its enclosing run's id (nested form), and the
    places that are not runs."""
    runs: list[tuple[Any, tuple[Any, ...], str | None]] = []
    bad: list[tuple[tuple[Any, ...], str]] = []
    top = document if isinstance(document, list) else [document]
    stack = [(run, ((i,) if isinstance(document, list) else ()), None) for i, run in reversed(list(enumerate(top)))]
    while stack:
        run, path, parent = stack.pop()
        if not isinstance(run, dict):
            bad.append((path, f"expected a run (an object), got {_kind(run)}"))
            continue
        runs.append((run, path, parent))
        children = run.get("child_runs")
        if isinstance(children, list):
            own = run.get("id") if isinstance(run.get("id"), str) else None
            stack.extend((child, (*path, "child_runs", j), own) for j, child in reversed(list(enumerate(children))))
    return runs, bad


def _row_index(run: dict[str, Any]) -> int | None:
    metadata = (run.get("extra") or {}).get("metadata")
    if isinstance(metadata, dict) and metadata.get("type") == "row":
        index = metadata.get("row_index")
        return index if isinstance(index, int) and not isinstance(index, bool) else None
    return None


def _row_of(by_id: dict[str, tuple[dict[str, Any], tuple[Any, ...], str | None]], run_id: str | None) -> str:
    seen: set[str] = set()
    while isinstance(run_id, str) and run_id in by_id and run_id not in seen:
        seen.add(run_id)
        run, _, parent = by_id[run_id]
        metadata = (run.get("extra") or {}).get("metadata") if isinstance(run.get("extra"), dict) else None
        if isinstance(metadata, dict) and metadata.get("type") == "row" and isinstance(metadata.get("row_index"), int):
            return f"row {metadata['row_index']}"
        run_id = parent
    return "the evaluation"


def to_entries(source: str, document: Any) -> tuple[dict[str, Any], dict[str, tuple[Any, ...]], dict[str, str]]:
    """The chain runs of a LangSmith export as ``{run_id: chain}`` (``ragas_traces``'s shape), each
    chain's JSON path in the file, and the errors the runs record."""
    runs, bad = _flatten(document)
    problems = [f"{source}: the evaluation: {json_path(path)}: {what}" for path, what in bad]
    by_id: dict[str, tuple[dict[str, Any], tuple[Any, ...], str | None]] = {}
    for run, path, enclosing in runs:
        run_id = run.get("id")
        if isinstance(run_id, str) and run_id in by_id:
            problems.append(f"{source}: the evaluation: {json_path((*path, 'id'))}: run {run_id!r} appears twice "
                            f"(first at {json_path(by_id[run_id][1])})")
            continue
        if isinstance(run_id, str):
            parent = enclosing if enclosing is not None else run.get("parent_run_id")
            by_id[run_id] = (run, path, parent if isinstance(parent, str) else None)
    for run, path, _ in runs:
        run_id = run.get("id") if isinstance(run.get("id"), str) else None
        for name, kinds in FIELDS.items():
            value = run.get(name)
            if not isinstance(value, kinds) or (name in ("id", "name", "run_type") and name not in run):
                problems.append(f"{source}: {_row_of(by_id, run_id)}: {json_path((*path, name))}: expected "
                                f"{' or '.join(JSON_NAMES[k] for k in kinds)}, got "
                                f"{_kind(value)}")
        extra = run.get("extra")
        if isinstance(extra, dict) and not isinstance(extra.get("metadata"), (dict, type(None))):
            problems.append(f"{source}: {_row_of(by_id, run_id)}: {json_path((*path, 'extra', 'metadata'))}: "
                            f"expected an object, got {_kind(extra.get('metadata'))}")
    if problems:
        shown = problems[:MAX_PROBLEMS] + ([f"{source}: ... and {len(problems) - MAX_PROBLEMS} more problems"]
                                           if len(problems) > MAX_PROBLEMS else [])
        raise HarnessInputError(f"{source}: {len(problems)} problem(s) in the LangSmith runs", field="traces",
                                problems=shown)
    chains = {run_id: entry for run_id, entry in by_id.items() if entry[0]["run_type"] == "chain"}
    children: dict[str, list[str]] = {run_id: [] for run_id in chains}
    for run_id, (_, _, parent) in chains.items():
        if parent is not None and parent in children:
            children[parent].append(run_id)
    entries: dict[str, Any] = {}
    paths: dict[str, tuple[Any, ...]] = {}
    errors: dict[str, str] = {}
    for run_id, (run, path, parent) in chains.items():
        kids = children[run_id]
        indices = [_row_index(chains[k][0]) for k in kids]
        if kids and all(isinstance(i, int) for i in indices):   # the rows: by their index (their start times
            kids = [k for _, k in sorted(zip(indices, kids, strict=True))]   # may tie within a microsecond)
        elif all(isinstance(chains[k][0].get("dotted_order"), str) for k in kids):
            kids = sorted(kids, key=lambda k: chains[k][0]["dotted_order"])  # execution order
        metadata = (run.get("extra") or {}).get("metadata") or {}
        entries[run_id] = {"run_id": run_id, "parent_run_id": parent, "name": run["name"],
                           "inputs": run.get("inputs") or {}, "metadata": metadata,
                           "outputs": {} if run.get("error") is not None else (run.get("outputs") or {}),
                           "children": kids}
        paths[run_id] = path
        if run.get("error") is not None:
            errors[run_id] = run["error"]
    return entries, paths, errors


def read_langsmith(source: str, document: Any) -> Traces:
    """The rows of a LangSmith export (``to_entries`` then ``parse_traces``)."""
    entries, paths, errors = to_entries(source, document)
    if not entries:
        raise HarnessInputError(f"{source}: $: no chain run in the LangSmith runs (Ragas's evaluation, rows, metrics "
                                "and prompts are chain runs)", field="traces")
    return parse_traces(source, entries, kind=LANGSMITH, paths=paths, errors=errors)
