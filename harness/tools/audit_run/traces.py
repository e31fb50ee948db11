"""Read a JSON dump of Ragas's ``EvaluationResult.ragas_traces`` into rows, metrics and prompts.

What Ragas keeps (``ragas.callbacks.RagasTracer``, read at v0.4.3): one ``ChainRun`` per chain
(``run_id``, ``parent_run_id``, ``name``, ``inputs``, ``metadata``, ``outputs``, ``children``), the
tree being evaluation -> ``row i`` (``metadata.row_index``; inputs: the sample) -> metric (inputs: the
columns it reads; outputs ``{"output": score}``) -> prompt (``metadata.type == "ragas_prompt"``; inputs
``{"data": ...}``, outputs ``{"output": [one parsed output per generation]}``) -> nested
``fix_output_format`` retries (inputs ``{"output_string": the reply that failed to parse}``).
The tracer has no error handler: a chain that raised keeps ``outputs == {}``.

The dump is ``{run_id: ChainRun.model_dump(mode="json")}`` (what the README tells users to save; a NaN
score is ``null`` there) or the list ``RagasTracer.to_jsons()`` writes. It is read within the limits
of ``ragas_compat.input_limits``; a truncated or malformed dump, or one whose tree is not the shape
above, is a ``HarnessInputError`` (exit 2) naming the row and the JSON path of each problem.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import Limits, json_path, loads_json, read_text, source_name

MAX_PROBLEMS = 20
RAGAS_TRACES, LANGSMITH, TRACES_LIST = "ragas_traces", "LangSmith runs", "traces list"
CHAIN_KEYS = {"run_id": str, "name": str, "inputs": dict, "metadata": dict, "outputs": dict, "children": list}
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


@dataclass(frozen=True)
class Retry:
    """A ``fix_output_format`` retry: the reply that failed to parse, and the fixed text if it ended."""

    failed_reply: Any
    fixed: Any = None


@dataclass(frozen=True)
class Prompt:
    name: str
    path: str                      # JSON path of its chain in the dump
    data: dict[str, Any]
    outputs: list[Any] | None      # one parsed output per generation; None: the prompt raised
    retries: tuple[Retry, ...] = ()


@dataclass(frozen=True)
class MetricRun:
    name: str
    path: str
    inputs: dict[str, Any]
    ended: bool                    # outputs hold "output" (a chain that raised keeps {})
    score: float | None            # the recorded score (NaN for null); None when not ended
    prompts: tuple[Prompt, ...]
    error: str | None = None       # what it raised, where the input records it (a LangSmith run's error)


@dataclass(frozen=True)
class Row:
    index: int
    path: str
    sample: dict[str, Any]
    metrics: dict[str, MetricRun]
    scores: dict[str, Any] = field(default_factory=dict)   # the row chain's outputs (evaluate()'s scores)
    shared: frozenset[str] = frozenset()   # metric names with more than one chain in this row (``metrics`` keeps the first)


@dataclass(frozen=True)
class Traces:
    source: str
    name: str                      # the evaluation chain's name (experiment name)
    rows: tuple[Row, ...]
    kind: str = RAGAS_TRACES       # RAGAS_TRACES, LANGSMITH or TRACES_LIST: what the file was


def _where(entries: dict[str, Any], run_id: str | None) -> str:
    """``row 3`` for a chain of row 3 (itself or a descendant), else ``the evaluation``."""
    seen = set()
    current = entries.get(run_id) if run_id is not None else None
    while isinstance(current, dict) and id(current) not in seen:
        seen.add(id(current))
        found = current.get("metadata")
        metadata: dict[str, Any] = found if isinstance(found, dict) else {}
        if metadata.get("type") == "row" or str(current.get("name", "")).startswith("row "):
            index = metadata.get("row_index")
            return f"row {index}" if isinstance(index, int) else str(current.get("name"))
        parent = current.get("parent_run_id")
        if not isinstance(parent, str):  # cut before its parent: the chain listing it among its children
            parent = next((key for key, chain in entries.items() if isinstance(chain, dict)
                           and isinstance(chain.get("children"), list) and run_id in chain["children"]), None)
        run_id = parent
        current = entries.get(parent) if isinstance(parent, str) else None
    return "the evaluation"


def _path_at(text: str, offset: int) -> tuple[Any, ...]:
    """The JSON path of the value being read at ``offset`` of a document cut there."""
    stack: list[list[Any]] = []       # [kind, key or index, expecting a key]
    for match in _TOKEN.finditer(text, 0, offset):
        token = match.group()
        top = stack[-1] if stack else None
        if token in "[{":
            stack.append(["[", 0, False] if token == "[" else ["{", None, True])
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == ",":
            if top is not None and top[0] == "[":
                top[1] += 1
            elif top is not None:
                top[2] = True
        elif token == ":":
            if top is not None:
                top[2] = False
        elif top is not None and top[0] == "{" and top[2]:
            try:
                top[1] = json.loads(token)
            except ValueError:
                top[1] = token
    return tuple(entry[1] for entry in stack if entry[1] is not None)


def _partial_entries(text: str) -> dict[str, Any]:
    """The complete top-level entries of a dump cut short (a ``{run_id: chain}`` object), in order,
    and the first fields of the one that was cut (its ``name``, ``parent_run_id`` and ``metadata``)."""
    decoder = json.JSONDecoder()
    entries: dict[str, Any] = {}
    at = text.find("{")
    if at < 0:
        return entries
    at += 1
    while True:
        at = _skip(text, at, ",")
        try:
            key, at = decoder.raw_decode(text, at)
        except ValueError:
            return entries
        at = _skip(text, at, ":")
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            if isinstance(key, str):
                entries[key] = _first_fields(text[at:])
            return entries
        if isinstance(key, str):
            entries[key] = value


def _skip(text: str, at: int, separator: str) -> int:
    while at < len(text) and (text[at].isspace() or text[at] == separator):
        at += 1
    return at


def _first_fields(fragment: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name in ("run_id", "parent_run_id", "name"):
        match = re.search(rf'"{name}"\s*:\s*("(?:[^"\\]|\\.)*"|null)', fragment)
        if match:
            fields[name] = json.loads(match.group(1))
    match = re.search(r'"row_index"\s*:\s*(\d+)', fragment)
    if match:
        fields["metadata"] = {"type": "row", "row_index": int(match.group(1))}
    return fields


_ROW_INDEX = re.compile(r'"row_index"\s*:\s*(\d+)')


def _row_of_list(text: str, path: tuple[Any, ...], offset: int) -> str:
    """The row being read at ``offset`` of a list document cut there: a traces list's item index; in a
    list of runs or chains (a row's chain is written before its descendants) the last row_index read."""
    if '"run_type"' in text[:offset] or '"run_id"' in text[:offset]:
        found = list(_ROW_INDEX.finditer(text, 0, offset))
        return f"row {found[-1].group(1)}" if found else "the evaluation"
    return f"row {path[0]}" if path and isinstance(path[0], int) else "the evaluation"


def _decode_error(text: str, source: str, exc: HarnessInputError) -> HarnessInputError:
    """A parse failure of the dump, located: the JSON path being read and the row it belongs to."""
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        path = _path_at(text, err.pos)
        is_object = text.lstrip().startswith("{")
        entries = _partial_entries(text) if is_object else {}
        if is_object:
            row = _where(entries, path[0]) if path and isinstance(path[0], str) else "the evaluation"
        else:
            row = _row_of_list(text, path, err.pos)
        truncated = err.pos >= len(text.rstrip()) or err.msg.startswith("Unterminated string")
        chain = entries.get(path[0]) if path and isinstance(path[0], str) else None
        name = f" (chain {chain['name']!r})" if isinstance(chain, dict) and isinstance(chain.get("name"), str) else ""
        return HarnessInputError(f"{source}: {row}{name}: {json_path(path)}: the traces file is "
                                 f"{'cut short (truncated)' if truncated else 'not valid JSON'}: {err.msg} (line "
                                 f"{err.lineno} column {err.colno}); nothing was written", field=json_path(path),
                                 value=source)
    except (ValueError, RecursionError):
        pass
    return exc


def load_document(path: Path, limits: Limits | None = None) -> tuple[str, Any]:
    """The JSON document at ``path``, read within the input limits (a parse failure located)."""
    limits = limits or Limits.current()
    source = source_name(path)
    text = read_text(path, "traces", limits=limits, allow_stdin=False)
    try:
        return source, loads_json(text, source, limits=limits, field="traces")
    except HarnessInputError as exc:
        if "not valid JSON" in str(exc):
            raise _decode_error(text, source, exc) from None
        raise


def input_kind(document: Any) -> str:
    """What a traces file holds: a ``ragas_traces`` dump (``{run_id: chain}`` or ``to_jsons()``'s list of
    chains), LangSmith runs (objects with ``run_type``: one root run or a list, nested or flat) or a
    traces list (``EvaluationResult.traces``: one ``{metric: {prompt: {input, output}}}`` per row)."""
    first = document[0] if isinstance(document, list) and document else document
    if isinstance(first, dict) and "run_type" in first:
        return LANGSMITH
    if isinstance(document, list) and isinstance(first, dict) and "run_id" in first and "children" in first:
        return RAGAS_TRACES
    if isinstance(document, list):
        return TRACES_LIST
    return RAGAS_TRACES


def keyed_chains(source: str, document: Any) -> dict[str, Any]:
    """A ``ragas_traces`` document as ``{run_id: chain}`` (a list of chains is keyed by their run_id)."""
    if isinstance(document, list):
        keyed: dict[str, Any] = {}
        for i, chain in enumerate(document):
            run_id = chain.get("run_id") if isinstance(chain, dict) else None
            if not isinstance(run_id, str):
                raise HarnessInputError(f"{source}: {json_path((i, 'run_id'))}: expected the chain's run_id (a string)",
                                        field="traces")
            keyed[run_id] = chain
        return keyed
    if not isinstance(document, dict) or not document:
        raise HarnessInputError(f"{source}: $: expected the ragas_traces dump, an object {{run_id: chain}}, a traces "
                                "list or LangSmith runs (docs/record-import-audit-run.md says how to save each); got "
                                + (type(document).__name__ if document else "nothing"), field="traces")
    return document


def load_dump(path: Path, limits: Limits | None = None) -> tuple[str, dict[str, Any]]:
    """The ``ragas_traces`` dump at ``path`` as ``{run_id: chain}``."""
    source, document = load_document(path, limits)
    return source, keyed_chains(source, document)


# where a converted chain's fields are in a LangSmith run (``langsmith.to_entries``)
RUN_FIELDS = {"metadata": ("extra", "metadata"), "children": ("child_runs",), "run_id": ("id",)}


class _Problems:
    def __init__(self, source: str, entries: dict[str, Any], paths: dict[str, tuple[Any, ...]] | None = None) -> None:
        self.source, self.entries = source, entries
        self.lines: list[str] = []
        self.paths = paths or {}

    def add(self, run_id: str, path: tuple[Any, ...], what: str) -> None:
        if path and path[0] in self.paths:   # a converted run: its own place in the file
            rest = path[1:]
            head = RUN_FIELDS.get(rest[0], (rest[0],)) if rest and isinstance(rest[0], str) else ()
            path = (*self.paths[path[0]], *head, *rest[1:])
        self.lines.append(f"{self.source}: {_where(self.entries, run_id)}: {json_path(path)}: {what}")

    def raise_if_any(self) -> None:
        if self.lines:
            shown = self.lines[:MAX_PROBLEMS]
            if len(self.lines) > MAX_PROBLEMS:
                shown.append(f"{self.source}: ... and {len(self.lines) - MAX_PROBLEMS} more problems")
            raise HarnessInputError(f"{self.source}: {len(self.lines)} problem(s) in the traces", field="traces",
                                    problems=shown)


def _check_chain(run_id: Any, chain: Any, problems: _Problems) -> bool:
    if not isinstance(chain, dict):
        problems.add(str(run_id), (str(run_id),), f"expected a chain (an object), got {type(chain).__name__}")
        return False
    ok = True
    for key, kind in CHAIN_KEYS.items():
        value = chain.get(key, {} if key == "outputs" else None)
        if not isinstance(value, kind):
            got = "nothing" if key not in chain else type(value).__name__
            problems.add(run_id, (run_id, key), f"expected {'an object' if kind is dict else 'a ' + kind.__name__}, "
                                                f"got {got}")
            ok = False
    parent = chain.get("parent_run_id")
    if parent is not None and not isinstance(parent, str):
        problems.add(run_id, (run_id, "parent_run_id"), f"expected a run id or null, got {type(parent).__name__}")
        ok = False
    if ok and chain["run_id"] != run_id:
        problems.add(run_id, (run_id, "run_id"), f"{chain['run_id']!r} is not the key it is stored under")
        ok = False
    if ok:
        for i, child in enumerate(chain["children"]):
            if not isinstance(child, str):
                problems.add(run_id, (run_id, "children", i), "expected a run id (a string)")
                ok = False
    return ok


def _children(entries: dict[str, Any], run_id: str, problems: _Problems) -> list[str]:
    out = []
    for i, child in enumerate(entries[run_id]["children"]):
        if child not in entries:
            problems.add(run_id, (run_id, "children", i), f"child chain {child!r} is not in the dump (cut or edited)")
        else:
            out.append(child)
    return out


def _score(value: Any) -> float | None:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _prompt(entries: dict[str, Any], run_id: str, problems: _Problems) -> Prompt:
    chain = entries[run_id]
    data = chain["inputs"].get("data")
    if not isinstance(data, dict):
        problems.add(run_id, (run_id, "inputs", "data"), "expected the prompt's input (an object)")
        data = {}
    outputs = chain["outputs"].get("output") if "output" in chain["outputs"] else None
    if outputs is not None and not (isinstance(outputs, list) and all(isinstance(o, dict) for o in outputs)):
        problems.add(run_id, (run_id, "outputs", "output"), "expected the prompt's parsed outputs (a list of objects)")
        outputs = None
    retries = []
    for child in _children(entries, run_id, problems):
        retry = entries[child]
        if retry["name"] != "fix_output_format":
            continue
        fixed = retry["outputs"].get("fixed_output_string")
        retries.append(Retry(retry["inputs"].get("output_string"),
                             fixed.get("text") if isinstance(fixed, dict) else fixed))
    return Prompt(chain["name"], json_path(problems.paths.get(run_id, (run_id,))), data, outputs, tuple(retries))


def _metric(entries: dict[str, Any], run_id: str, problems: _Problems, error: str | None = None) -> MetricRun:
    chain = entries[run_id]
    ended = "output" in chain["outputs"]
    score = _score(chain["outputs"].get("output")) if ended else None
    if ended and score is None:
        problems.add(run_id, (run_id, "outputs", "output"),
                     f"expected the metric's score (a number or null), got {chain['outputs'].get('output')!r:.80}")
    prompts = tuple(_prompt(entries, child, problems) for child in _children(entries, run_id, problems)
                    if entries[child]["metadata"].get("type") == "ragas_prompt")
    return MetricRun(chain["name"], json_path(problems.paths.get(run_id, (run_id,))), chain["inputs"], ended, score,
                     prompts, error)


def parse_traces(source: str, entries: dict[str, Any], *, kind: str = RAGAS_TRACES,
                 paths: dict[str, tuple[Any, ...]] | None = None, errors: dict[str, str] | None = None) -> Traces:
    """The rows of a ``{run_id: chain}`` dump (``load_dump``); every problem raised at once. A converted
    input (``langsmith.to_entries``) gives each chain's JSON path in its file (``paths``) and the errors
    its runs record (``errors``)."""
    errors = errors or {}
    problems = _Problems(source, entries, paths)
    valid = {run_id: chain for run_id, chain in entries.items() if _check_chain(run_id, chain, problems)}
    problems.raise_if_any()
    roots = [run_id for run_id, chain in valid.items()
             if chain["parent_run_id"] is None or chain["parent_run_id"] not in valid]
    evaluations = [r for r in roots if valid[r]["metadata"].get("type") == "evaluation"]
    if len(evaluations) != 1:
        found = ", ".join(f"{json_path((r,))} ({valid[r]['name']!r})" for r in roots[:5]) or "none"
        raise HarnessInputError(f"{source}: $: expected one evaluation chain (metadata.type 'evaluation', no parent) "
                                f"at the root of one evaluate() run, found {len(evaluations)} (root chains: {found})",
                                field="traces")
    root = evaluations[0]
    rows: list[Row] = []
    for child in _children(entries, root, problems):
        chain = entries[child]
        index = chain["metadata"].get("row_index")
        if chain["metadata"].get("type") != "row" or not isinstance(index, int) or isinstance(index, bool):
            problems.add(child, (child, "metadata"), "expected a row chain (metadata.type 'row' and its row_index)")
            continue
        if index != len(rows):
            problems.add(child, (child, "metadata", "row_index"), f"row {index} where row {len(rows)} was expected "
                                                                  "(rows missing or out of order)")
        metrics: dict[str, MetricRun] = {}
        shared = set()
        for metric_id in _children(entries, child, problems):
            if entries[metric_id]["metadata"].get("type") != "metric":
                continue
            run = _metric(entries, metric_id, problems, errors.get(metric_id))
            if run.name in metrics:   # one class twice (e.g. two modes): graded lossy, not refused
                shared.add(run.name)
                continue
            metrics[run.name] = run
        rows.append(Row(index, json_path(problems.paths.get(child, (child,))), chain["inputs"], metrics,
                        dict(chain["outputs"]), frozenset(shared)))
    if not rows and not problems.lines:
        problems.add(root, (root, "children"), "the evaluation has no rows")
    problems.raise_if_any()
    return Traces(source, valid[root]["name"], tuple(rows), kind)


def read_traces(path: Path, limits: Limits | None = None) -> Traces:
    """``load_dump`` then ``parse_traces``."""
    source, entries = load_dump(path, limits)
    return parse_traces(source, entries)
