"""Rebuild each traced row's frozen verdicts, and grade every (row, metric) of the run.

Grades (``GRADES``):

- ``re-derivable``: the trace holds every verdict Ragas scored (a reply fixed by a format retry
  counts: the prompt's output is what Ragas parsed after it), so the case replays the score;
- ``lossy``: the trace holds the score's inputs only in part (``reason`` says which part is missing),
  so the row is not replayed;
- ``unrecorded``: the trace holds nothing to score from: a reported column with no metric chain (the
  collections API records nothing), a metric chain that raised (Ragas's tracer keeps no error, so a
  NaN has no recorded cause), a metric that needs embeddings (never traced);
- ``not rebuilt``: the trace may hold it, but audit-run does not rebuild this metric's verdicts yet
  (``reason`` names the metric).

The verdict shapes are the case format's (``harness/cases/cases.schema.json``): context precision
with and without reference, one label per retrieved context (the ``context_precision_prompt``
outputs in the order Ragas asked); context recall, the ``classifications`` of
``context_recall_classification_prompt``; faithfulness, the NLI ``statements`` of
``n_l_i_statement_prompt`` (none when ``statement_generator_prompt`` produced none). The ID-based and
string-match classes read only the sample's fields and need no verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ragas_compat.tools.audit_run.traces import MetricRun, Prompt, Row

REDERIVABLE, LOSSY, UNRECORDED, NOT_REBUILT = "re-derivable", "lossy", "unrecorded", "not rebuilt"
GRADES = (REDERIVABLE, LOSSY, UNRECORDED, NOT_REBUILT)

WITH_REFERENCE = "context_precision_with_reference"
WITHOUT_REFERENCE = "context_precision_without_reference"
CP_PROMPT = "context_precision_prompt"
RECALL_PROMPT = "context_recall_classification_prompt"
STATEMENTS_PROMPT = "statement_generator_prompt"
NLI_PROMPT = "n_l_i_statement_prompt"

# Ragas's default metric name -> (registry metric, the legacy target whose class scored it)
BY_NAME: dict[str, tuple[str, str]] = {
    "context_precision": (WITH_REFERENCE, "legacy:ContextPrecision"),
    "llm_context_precision_with_reference": (WITH_REFERENCE, "legacy:LLMContextPrecisionWithReference"),
    "llm_context_precision_without_reference": (WITHOUT_REFERENCE, "legacy:LLMContextPrecisionWithoutReference"),
    "context_utilization": (WITHOUT_REFERENCE, "legacy:ContextUtilization"),
    "context_recall": ("context_recall", "legacy:LLMContextRecall"),
    "faithfulness": ("faithfulness", "legacy:Faithfulness"),
    "non_llm_context_precision_with_reference": ("context_precision_string_match",
                                                 "legacy:NonLLMContextPrecisionWithReference"),
    "non_llm_context_recall": ("context_recall_string_match", "legacy:NonLLMContextRecall"),
    "id_based_context_precision": ("id_context_precision", "legacy:IDBasedContextPrecision"),
    "id_based_context_recall": ("id_context_recall", "legacy:IDBasedContextRecall"),
}
SAMPLE_ONLY = {"context_precision_string_match", "context_recall_string_match", "id_context_precision",
               "id_context_recall"}
EMBEDDINGS = {"answer_relevancy", "answer_correctness", "semantic_similarity", "answer_similarity"}
OPTIONAL_FIELDS = ("reference_contexts", "retrieved_context_ids", "reference_context_ids")


@dataclass(frozen=True)
class Graded:
    """One (row, metric) of the run."""

    row: int
    column: str                      # the metric's name in the run (its scores-table column)
    grade: str
    reason: str | None = None
    metric: str | None = None        # the registry metric it is compared as
    target: str | None = None        # the Ragas target whose replay reproduces it
    note: str | None = None          # re-derivable, with something a reader should know (a format retry)


@dataclass
class RowRebuild:
    row: Row
    verdicts: dict[str, Any] = field(default_factory=dict)
    not_frozen: dict[str, str] = field(default_factory=dict)   # target -> what the verdicts do not hold
    graded: list[Graded] = field(default_factory=list)


def _single(prompt: Prompt) -> tuple[dict[str, Any] | None, str | None]:
    """The one parsed output of ``prompt``, or (None, why not)."""
    if prompt.outputs is None:
        return None, f"its {prompt.name} raised (no output recorded)"
    if len(prompt.outputs) != 1:
        return None, (f"its {prompt.name} has {len(prompt.outputs)} generations; the case format holds one "
                      "verdict per prompt")
    return prompt.outputs[0], None


def _retry_note(prompts: tuple[Prompt, ...]) -> str | None:
    retried = sum(len(p.retries) for p in prompts)
    if not retried:
        return None
    return (f"{retried} judge repl{'y' if retried == 1 else 'ies'} failed to parse and Ragas's fix_output_format "
            "retry fixed it; the verdicts are what Ragas parsed after the retry")


def _context_precision(run: MetricRun, contexts: list[Any]) -> tuple[list[Any] | None, str | None]:
    asked = [p for p in run.prompts if p.name == CP_PROMPT]
    if len(asked) != len(contexts):
        return None, f"Ragas asked {len(asked)} context-precision prompts for {len(contexts)} retrieved contexts"
    labels = []
    for i, prompt in enumerate(asked):
        if prompt.data.get("context") != contexts[i]:
            return None, f"prompt {i} judged another context than the row's retrieved context {i}"
        output, why = _single(prompt)
        if output is None:
            return None, f"context {i}: {why}"
        if "verdict" not in output:
            return None, f"context {i}: the parsed output has no verdict"
        labels.append(output["verdict"])
    return labels, None


def _context_recall(run: MetricRun) -> tuple[list[Any] | None, str | None]:
    asked = [p for p in run.prompts if p.name == RECALL_PROMPT]
    if len(asked) != 1:
        return None, f"{len(asked)} {RECALL_PROMPT} chains where Ragas asks one"
    output, why = _single(asked[0])
    if output is None:
        return None, why
    claims = output.get("classifications")
    if not isinstance(claims, list) or not all(isinstance(c, dict) and "attributed" in c for c in claims):
        return None, "the parsed classifications are not (statement, attributed) pairs"
    return [{"statement": str(c.get("statement", "")), "attributed": c["attributed"]} for c in claims], None


def _faithfulness(run: MetricRun) -> tuple[list[Any] | None, str | None, str | None]:
    generated = [p for p in run.prompts if p.name == STATEMENTS_PROMPT]
    judged = [p for p in run.prompts if p.name == NLI_PROMPT]
    if len(generated) != 1 or len(judged) > 1:
        return None, f"{len(generated)} statement and {len(judged)} NLI prompts where Ragas asks one each", None
    output, why = _single(generated[0])
    if output is None:
        return None, why, None
    statements = output.get("statements")
    if not isinstance(statements, list):
        return None, "the statement generator's parsed output has no statements", None
    if not statements:
        return [], None, None
    if not judged:
        return None, "the statements were generated but the NLI prompt is not in the trace", None
    nli, why = _single(judged[0])
    if nli is None:
        return None, why, None
    claims = nli.get("statements")
    if not isinstance(claims, list) or not all(isinstance(c, dict) and "verdict" in c for c in claims):
        return None, "the NLI reply's parsed statements are not (statement, verdict) pairs", None
    verdicts = [{"statement": str(c.get("statement", "")), "verdict": c["verdict"]} for c in claims]
    judged_texts = [v["statement"] for v in verdicts]
    differs = None
    if judged_texts != [str(s) for s in statements]:
        differs = (f"Ragas generated {len(statements)} statement(s) but the NLI reply judged {len(verdicts)}; "
                   "Ragas scored the judged ones, which the verdicts hold, but not what the generator produced")
    return verdicts, None, differs


def _identify(run: MetricRun) -> tuple[str, str] | None:
    """(registry metric, target) of a traced metric: by Ragas's default name, and for a renamed one
    by its prompts and the columns it read."""
    names = {p.name for p in run.prompts}
    if run.name in BY_NAME:
        return BY_NAME[run.name]
    if names == {CP_PROMPT}:
        return (WITH_REFERENCE, "legacy:LLMContextPrecisionWithReference") if "reference" in run.inputs else \
            (WITHOUT_REFERENCE, "legacy:LLMContextPrecisionWithoutReference")
    if names == {RECALL_PROMPT}:
        return "context_recall", "legacy:LLMContextRecall"
    if names and names <= {STATEMENTS_PROMPT, NLI_PROMPT}:
        return "faithfulness", "legacy:Faithfulness"
    return None


def grade_metric(rebuild: RowRebuild, column: str, run: MetricRun | None) -> Graded:
    """Grade ``run`` (the metric chain of ``column`` in this row, None when the trace has none) and,
    when re-derivable, put its verdicts into ``rebuild``."""
    index = rebuild.row.index
    if run is None:
        return Graded(index, column, UNRECORDED, "the trace has no chain for this metric (the collections API, or "
                                                  "a score added to the table after the run, records nothing)")
    base = run.name.split("(mode=", 1)[0]
    if base in EMBEDDINGS:
        return Graded(index, column, UNRECORDED, "it scores with embeddings, which the trace does not hold")
    identified = _identify(run)
    if identified is None:
        return Graded(index, column, NOT_REBUILT, f"audit-run does not rebuild {run.name}'s verdicts (it rebuilds "
                                                   "context precision, context recall, faithfulness and the ID-based "
                                                   "and string-match classes)")
    metric, target = identified
    if not run.ended:
        cause = next((f"its {p.name} raised after the judge's reply {p.retries[-1].failed_reply!r:.120} failed to "
                      "parse" for p in run.prompts if p.outputs is None and p.retries), None) or \
            next((f"its {p.name} raised" for p in run.prompts if p.outputs is None), None)
        return Graded(index, column, UNRECORDED, "the metric raised and Ragas's tracer records no error (evaluate() "
                                                 "reports NaN)" + (f"; the trace shows {cause}" if cause else ""),
                      metric, target)
    if metric in SAMPLE_ONLY:
        return Graded(index, column, REDERIVABLE, None, metric, target)
    sample = rebuild.row.sample
    note = _retry_note(run.prompts)
    differs = None
    if metric in (WITH_REFERENCE, WITHOUT_REFERENCE):
        verdicts, why = _context_precision(run, list(sample.get("retrieved_contexts") or []))
    elif metric == "context_recall":
        verdicts, why = _context_recall(run)
    else:
        verdicts, why, differs = _faithfulness(run)
    if verdicts is None:
        return Graded(index, column, LOSSY, why, metric, target)
    if metric in rebuild.verdicts and rebuild.verdicts[metric] != verdicts:
        return Graded(index, column, LOSSY, f"another metric of this row filled the verdicts of {metric} with other "
                                            "labels, and a case holds one list per metric", metric, target)
    rebuild.verdicts[metric] = verdicts
    if differs:
        rebuild.not_frozen[target] = differs
        return Graded(index, column, LOSSY, differs + " (the score replays, the generator's reply does not)",
                      metric, target, note)
    return Graded(index, column, REDERIVABLE, None, metric, target, note)


def case_of(rebuild: RowRebuild, case_id: str, category: str, live: dict[str, Any]) -> dict[str, Any]:
    """The case of a rebuilt row: the traced sample, its verdicts, and ``recording.live`` (target -> the
    reported score, probe encoding) for every re-derivable (row, metric)."""
    sample = rebuild.row.sample
    case: dict[str, Any] = {"id": case_id, "category": category}
    absent = []
    for name in ("user_input", "reference", "response"):
        value = sample.get(name)
        if not isinstance(value, str):
            absent.append(name)
        case[name] = value if isinstance(value, str) else ""
    case["retrieved_contexts"] = list(sample.get("retrieved_contexts") or [])
    for name in OPTIONAL_FIELDS:
        if sample.get(name) is not None:
            case[name] = sample[name]
    if rebuild.verdicts:
        case["verdicts"] = dict(rebuild.verdicts)
    recording: dict[str, Any] = {"dataset_row": rebuild.row.index + 1, "live": live}
    if rebuild.not_frozen:
        recording["not_frozen"] = dict(rebuild.not_frozen)
    if absent:
        recording["absent_fields"] = absent
    case["recording"] = recording
    return case


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
