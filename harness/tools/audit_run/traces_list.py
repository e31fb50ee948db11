"""Read ``EvaluationResult.traces`` (the traces list) saved as JSON.

Ragas builds it from ``ragas_traces`` (``ragas.callbacks.parse_run_traces``, read at v0.4.3): one item
per row, ``{metric name: {prompt name: {"input": the prompt's data, "output": its first parsed
output}}}``. Each item is a ``MetricTrace``, a dict subclass whose ``scores`` are an attribute, so JSON
holds no score (the scores come from the table); a prompt that raised has ``"output": {}``. It is lossy:
a metric's prompts are keyed by name, so a prompt Ragas asks several times keeps only the last asking
(context precision keeps the last context's verdict, ragas#1871); only the first of n generations is
kept; the ``fix_output_format`` retries and the row's sample are not in it. ``rebuild.traces_list_loss``
grades what that loses per metric.

A plain ``json.dump(result.traces, f)`` raises TypeError (the inputs and outputs are pydantic models);
``json.dump(result.traces, f, default=lambda o: o.model_dump(mode="json"))`` saves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import json_path
from ragas_compat.tools.audit_run.traces import MAX_PROBLEMS, TRACES_LIST, MetricRun, Prompt, Row, Traces


def read_traces_list(source: str, document: Any, samples: Sequence[dict[str, Any]], samples_from: str) -> Traces:
    """The rows of a traces list; ``samples``: each row's sample (from ``samples_from``, the dataset or the
    scores table: the traces list holds none). Every problem raised at once, named by row and JSON path."""
    if not isinstance(document, list) or not document:
        raise HarnessInputError(f"{source}: $: expected the traces list (one object per row), got "
                                f"{type(document).__name__ if document else 'nothing'}", field="traces")
    if len(document) != len(samples):
        raise HarnessInputError(f"{source}: $: the traces list has {len(document)} rows, but {samples_from} has "
                                f"{len(samples)}: they are not of the same run", field="traces")
    problems: list[str] = []
    rows: list[Row] = []
    for i, item in enumerate(document):
        if not isinstance(item, dict):
            problems.append(f"{source}: row {i}: {json_path((i,))}: expected the row's metrics (an object), got "
                            f"{type(item).__name__}")
            continue
        metrics: dict[str, MetricRun] = {}
        for name, prompts in item.items():
            where = (i, name)
            if not isinstance(prompts, dict):
                problems.append(f"{source}: row {i}: {json_path(where)}: expected the metric's prompts (an object), "
                                f"got {type(prompts).__name__}")
                continue
            kept = []
            for prompt_name, entry in prompts.items():
                at = (*where, prompt_name)
                if not isinstance(entry, dict) or not isinstance(entry.get("input"), dict) \
                        or not isinstance(entry.get("output"), dict):
                    problems.append(f"{source}: row {i}: {json_path(at)}: expected {{\"input\": object, \"output\": "
                                    "object}")
                    continue
                output = entry["output"]
                kept.append(Prompt(prompt_name, json_path(at), entry["input"], [output] if output else None))
            metrics[name] = MetricRun(name, json_path(where), {}, True, None, tuple(kept))
        rows.append(Row(i, json_path((i,)), dict(samples[i]), metrics))
    if problems:
        shown = problems[:MAX_PROBLEMS] + ([f"{source}: ... and {len(problems) - MAX_PROBLEMS} more problems"]
                                           if len(problems) > MAX_PROBLEMS else [])
        raise HarnessInputError(f"{source}: {len(problems)} problem(s) in the traces list", field="traces",
                                problems=shown)
    return Traces(source, "(traces list)", tuple(rows), TRACES_LIST)
