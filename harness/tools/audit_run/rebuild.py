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

A traces list (``EvaluationResult.traces``) keeps one prompt per name per metric (the last one asked)
and its first generation only, and no retries: ``traces_list_loss`` says, per metric, what that loses
(e.g. "only the last retrieved context's verdict"); what it still determines is rebuilt as from a
whole trace.

The verdict shapes are the case format's (``harness/cases/cases.schema.json``): context precision
with and without reference, one label per retrieved context (the ``context_precision_prompt``
outputs in the order Ragas asked); context recall, the ``classifications`` of
``context_recall_classification_prompt``; faithfulness, the NLI ``statements`` of
``n_l_i_statement_prompt`` (none when ``statement_generator_prompt`` produced none); factual
correctness, the claims of ``claim_decomposition_prompt`` with the verdicts of the
``n_l_i_statement_prompt`` whose context is the other side (response claims against the reference,
reference claims against the response; Ragas asks both sides at once, so they are told apart by their
inputs); context entity recall, the ``extract_entities_prompt`` entities of the reference and of the
joined contexts; noise sensitivity, the statements of the reference and of the response with the NLI
verdict of each against every retrieved context and (response) against the reference, asked in that
order. The ID-based and string-match classes read only the sample's fields and need no verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ragas_compat.metrics.registry import metric as registry_metric
from ragas_compat.tools.audit_run.traces import LANGSMITH, RAGAS_TRACES, TRACES_LIST, MetricRun, Prompt, Row

REDERIVABLE, LOSSY, UNRECORDED, NOT_REBUILT = "re-derivable", "lossy", "unrecorded", "not rebuilt"
GRADES = (REDERIVABLE, LOSSY, UNRECORDED, NOT_REBUILT)

WITH_REFERENCE = "context_precision_with_reference"
WITHOUT_REFERENCE = "context_precision_without_reference"
CP_PROMPT = "context_precision_prompt"
RECALL_PROMPT = "context_recall_classification_prompt"
STATEMENTS_PROMPT = "statement_generator_prompt"
NLI_PROMPT = "n_l_i_statement_prompt"
CLAIMS_PROMPT = "claim_decomposition_prompt"
ENTITIES_PROMPT = "extract_entities_prompt"
# AspectCritic / SimpleCriteriaScore: one prompt, its vote (a user names the metric: known by its prompt)
VOTE_PROMPTS = {"single_turn_aspect_critic_prompt": ("aspect_critic", "verdict"),
                "single_turn_simple_criteria_prompt": ("simple_criteria", "score")}
# RubricsScore: its prompt has a generic name (InstanceRubrics' too, which also reads the sample's rubrics)
RUBRICS_NAME, RUBRICS_PROMPT = "domain_specific_rubrics", "single_turn_prompt"

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
    "context_entity_recall": ("context_entity_recall", "legacy:ContextEntityRecall"),
}
# a metric whose evaluate() column carries its mode: column -> registry metric (its target: the
# registry's legacy target, ``legacy_target``)
BY_COLUMN: dict[str, str] = {
    "factual_correctness(mode=f1)": "factual_correctness_f1",
    "factual_correctness(mode=precision)": "factual_correctness_precision",
    "factual_correctness(mode=recall)": "factual_correctness_recall",
    "noise_sensitivity(mode=relevant)": "noise_sensitivity_relevant",
    "noise_sensitivity(mode=irrelevant)": "noise_sensitivity_irrelevant",
}
FACTUAL = ("factual_correctness_f1", "factual_correctness_precision", "factual_correctness_recall")
NOISE = ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant")
SAMPLE_ONLY = {"context_precision_string_match", "context_recall_string_match", "id_context_precision",
               "id_context_recall"}
# the NVIDIA-style ratings ask their judge with agenerate_text, with no Ragas prompt and no callbacks: nothing
# of their judge calls is under their metric chain (checked with a LangChain tracer at 0.4.3)
DIRECT_CALLS = {"nv_accuracy", "nv_context_relevance", "nv_response_groundedness"}
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


def _judged(prompt: Prompt, what: str) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The (statement, verdict) pairs of an NLI prompt's one parsed output."""
    output, why = _single(prompt)
    if output is None:
        return None, f"{what}: {why}"
    claims = output.get("statements")
    if not isinstance(claims, list) or not all(isinstance(c, dict) and "verdict" in c for c in claims):
        return None, f"{what}: the NLI reply's parsed statements are not (statement, verdict) pairs"
    return [{"statement": str(c.get("statement", "")), "verdict": c["verdict"]} for c in claims], None


def _texts(prompt: Prompt, key: str, what: str) -> tuple[list[str] | None, str | None]:
    """The list of texts ``key`` of a prompt's one parsed output (claims, entities, statements)."""
    output, why = _single(prompt)
    if output is None:
        return None, f"{what}: {why}"
    texts = output.get(key)
    if not isinstance(texts, list) or not all(isinstance(x, str) for x in texts):
        return None, f"{what}: the parsed output has no list of {key}"
    return texts, None


def _factual_correctness(run: MetricRun, sample: dict[str, Any], mode: str
                         ) -> tuple[list[Any] | None, str | None, str | None]:
    """Claims of the response (judged against the reference) and, unless precision, of the reference
    (judged against the response). Ragas decomposes and verifies both sides at once, so each prompt's
    side is read from its input, not from its place in the trace."""
    response, reference = sample.get("response"), sample.get("reference")
    sides = [("response", response, reference)] + ([] if mode == "precision" else [("reference", reference, response)])
    if len(sides) == 2 and response == reference:
        decompositions = [p for p in run.prompts if p.name == CLAIMS_PROMPT]
        judgments = [p for p in run.prompts if p.name == NLI_PROMPT]
        if len({repr(p.outputs) for p in decompositions}) > 1 or len({repr(p.outputs) for p in judgments}) > 1:
            return None, ("the response and the reference are the same text but their claims or verdicts differ: the "
                          "trace cannot tell which side's are which"), None
    claims: list[dict[str, Any]] = []
    differs = []
    for side, text, premise in sides:
        decomposed = [p for p in run.prompts if p.name == CLAIMS_PROMPT and p.data.get("response") == text]
        judged = [p for p in run.prompts if p.name == NLI_PROMPT and p.data.get("context") == premise]
        if not decomposed or not judged:
            return None, (f"the {side}'s {CLAIMS_PROMPT} and {NLI_PROMPT} (against the "
                          f"{'reference' if side == 'response' else 'response'}) are not both in the trace"), None
        statements, why = _texts(decomposed[0], "claims", f"the {side}'s claims")
        if statements is None:
            return None, why, None
        verdicts, why = _judged(judged[0], f"the {side}'s claim verdicts")
        if verdicts is None:
            return None, why, None
        if [v["statement"] for v in verdicts] != statements:
            differs.append(f"the {side} has {len(statements)} claim(s) but the NLI reply judged {len(verdicts)}")
        claims += [{"statement": v["statement"], "from": side, "verdict": v["verdict"]} for v in verdicts]
    note = ("; ".join(differs) + "; Ragas scored the judged claims, which the verdicts hold, but not the "
            "decomposition's reply") if differs else None
    return claims, None, note


def _context_entity_recall(run: MetricRun, sample: dict[str, Any]) -> tuple[list[Any] | None, str | None]:
    """The entities of the reference, then of the joined retrieved contexts (Ragas asks in that order)."""
    asked = [p for p in run.prompts if p.name == ENTITIES_PROMPT]
    texts = (("reference", sample.get("reference")), ("contexts", "\n".join(sample.get("retrieved_contexts") or [])))
    if len(asked) != 2:
        return None, f"{len(asked)} {ENTITIES_PROMPT} chains where Ragas asks two (the reference, the contexts)"
    items: list[dict[str, Any]] = []
    for prompt, (source, text) in zip(asked, texts, strict=True):
        if prompt.data.get("text") != text:
            return None, f"the {ENTITIES_PROMPT} for the {source} read another text than the row's"
        entities, why = _texts(prompt, "entities", f"the {source}'s entities")
        if entities is None:
            return None, why
        items += [{"statement": e, "from": source} for e in entities]
    return items, None


def _noise_sensitivity(run: MetricRun, sample: dict[str, Any]) -> tuple[list[Any] | None, str | None]:
    """Statements of the reference and the response; per retrieved context the NLI verdicts of the
    reference's and the response's statements; then the response's against the reference (Ragas asks
    them one after another in that order)."""
    contexts = list(sample.get("retrieved_contexts") or [])
    generated = [p for p in run.prompts if p.name == STATEMENTS_PROMPT]
    judged = [p for p in run.prompts if p.name == NLI_PROMPT]
    if len(generated) != 2 or len(judged) != 2 * len(contexts) + 1:
        return None, (f"{len(generated)} statement and {len(judged)} NLI prompts where Ragas asks 2 and "
                      f"{2 * len(contexts) + 1} (two per retrieved context, one against the reference)")
    statements: dict[str, list[str]] = {}
    for prompt, source in zip(generated, ("reference", "response"), strict=True):
        if prompt.data.get("answer") != sample.get(source):
            return None, f"the first two {STATEMENTS_PROMPT}s are not the reference's and the response's"
        texts, why = _texts(prompt, "statements", f"the {source}'s statements")
        if texts is None:
            return None, why
        statements[source] = texts
    expected = [(contexts[j], source, f"the {source}'s statements against retrieved context {j}")
                for j in range(len(contexts)) for source in ("reference", "response")]
    expected.append((sample.get("reference"), "response", "the response's statements against the reference"))
    labels: dict[str, list[list[Any]]] = {"reference": [], "response": []}
    for prompt, (premise, source, what) in zip(judged, expected, strict=True):
        if prompt.data.get("context") != premise or prompt.data.get("statements") != statements[source]:
            return None, f"the NLI prompt for {what} is not where Ragas asks it (its input differs)"
        verdicts, why = _judged(prompt, what)
        if verdicts is None:
            return None, why
        if len(verdicts) != len(statements[source]):
            return None, f"{what}: the NLI reply judged {len(verdicts)} of {len(statements[source])} statements"
        labels[source].append([v["verdict"] for v in verdicts])
    items: list[dict[str, Any]] = []
    for source in ("reference", "response"):
        for i, statement in enumerate(statements[source]):
            item: dict[str, Any] = {"statement": statement, "from": source,
                                    "contexts": [labels[source][j][i] for j in range(len(contexts))]}
            if source == "response":
                item["verdict"] = labels["response"][len(contexts)][i]
            items.append(item)
    return items, None


def legacy_target(metric: str) -> str:
    """The registry's legacy target of ``metric`` (its first: the class evaluate() runs by default)."""
    return next(str(t) for t in registry_metric(metric).ragas_targets if str(t).startswith("legacy:"))


def _identify(run: MetricRun, column: str) -> tuple[str, str] | None:
    """(registry metric, target) of a traced metric: by its evaluate() column or Ragas's default name, and
    for a renamed one by its prompts and the columns it read."""
    if column in BY_COLUMN:
        return BY_COLUMN[column], legacy_target(BY_COLUMN[column])
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
    if len(names) == 1 and next(iter(names)) in VOTE_PROMPTS:
        metric = VOTE_PROMPTS[next(iter(names))][0]
        return metric, legacy_target(metric)
    if run.name == RUBRICS_NAME or (names == {RUBRICS_PROMPT} and "rubrics" not in run.inputs):
        return "rubrics_score", legacy_target("rubrics_score")   # InstanceRubrics reads a rubrics column
    return None


def _vote(run: MetricRun, metric: str) -> tuple[list[Any] | None, str | None]:
    """AspectCritic's verdict / SimpleCriteriaScore's / RubricsScore's score: the one output of its one prompt."""
    name, key = (RUBRICS_PROMPT, "score") if metric == "rubrics_score" else \
        next((p, k) for p, (m, k) in VOTE_PROMPTS.items() if m == metric)
    asked = [p for p in run.prompts if p.name == name]
    if len(asked) != 1:
        return None, f"{len(asked)} {name} chains where Ragas asks one"
    output, why = _single(asked[0])
    if output is None:
        return None, why
    if key not in output:
        return None, f"the parsed output has no {key}"
    return [{key: output[key]}], None


def traces_list_loss(metric: str, run: MetricRun, sample: dict[str, Any]) -> str | None:
    """What a traces list (``EvaluationResult.traces``, Ragas's ``parse_run_traces``) loses of ``metric``'s
    verdicts in this row: it keeps one prompt per name per metric, the last one asked (ragas#1871), and
    that prompt's first generation. None: the kept prompts determine the score."""
    contexts = list(sample.get("retrieved_contexts") or [])
    kept = "the traces list keeps one prompt of each name per metric, the last one asked (ragas#1871)"
    if metric in (WITH_REFERENCE, WITHOUT_REFERENCE) and len(contexts) > 1:
        return (f"only the last retrieved context's verdict (context {len(contexts) - 1} of 0..{len(contexts) - 1}): "
                f"Ragas asks one {CP_PROMPT} per context and {kept}")
    if metric in ("factual_correctness_f1", "factual_correctness_recall"):
        prompt = next((p for p in run.prompts if p.name == NLI_PROMPT), None)
        side = ("the response's" if prompt is not None and prompt.data.get("context") == sample.get("reference")
                else "the reference's")
        return (f"only one side's claims and verdicts (here {side}): Ragas asks {CLAIMS_PROMPT} and {NLI_PROMPT} "
                f"for the response and for the reference, and {kept}")
    if metric == "context_entity_recall":
        return (f"only the retrieved contexts' entities: Ragas asks {ENTITIES_PROMPT} for the reference, then for "
                f"the contexts, and {kept}")
    if metric in NOISE:
        return (f"only the response's statements and their verdicts against the reference: Ragas asks "
                f"{STATEMENTS_PROMPT} twice and {NLI_PROMPT} {2 * len(contexts) + 1} times, and {kept}")
    return None


def grade_metric(rebuild: RowRebuild, column: str, run: MetricRun | None, *, kind: str = RAGAS_TRACES,
                 reported: float | None = None) -> Graded:
    """Grade ``run`` (the metric chain of ``column`` in this row, None when the trace has none) and,
    when re-derivable, put its verdicts into ``rebuild``. ``kind``: the input's kind (a traces list
    loses what ``traces_list_loss`` says); ``reported``: the run's score for it."""
    index = rebuild.row.index
    if run is None:
        return Graded(index, column, UNRECORDED, "the trace has no chain for this metric (the collections API, or "
                                                  "a score added to the table after the run, records nothing)")
    base = run.name.split("(mode=", 1)[0]
    if base in EMBEDDINGS:
        return Graded(index, column, UNRECORDED, "it scores with embeddings, which the trace does not hold")
    if run.name in rebuild.row.shared:
        return Graded(index, column, LOSSY, f"more than one metric chain of this row is named {run.name!r} (one class "
                                            "evaluated twice, e.g. in two modes), and nothing in the trace says which "
                                            "one scored this column")
    if base in DIRECT_CALLS and not run.prompts:
        return Graded(index, column, UNRECORDED, "it asks its judge with agenerate_text, without a Ragas prompt and "
                                                  "without the run's callbacks, so no trace of the run holds its "
                                                  "prompts or replies" + (" (a project traced globally may hold them "
                                                  "as separate root runs, which nothing ties to this row)"
                                                  if kind == LANGSMITH else ""))
    identified = _identify(run, column)
    if identified is None:
        return Graded(index, column, NOT_REBUILT, f"audit-run does not rebuild {run.name}'s verdicts (it rebuilds "
                                                   "context precision, context recall, faithfulness, factual "
                                                   "correctness, context entity recall, noise sensitivity, aspect "
                                                   "critic, simple criteria, RubricsScore and the ID-based and "
                                                   "string-match classes)")
    metric, target = identified
    if kind == TRACES_LIST and reported is not None and math.isnan(reported):
        failed = next((p.name for p in run.prompts if p.outputs is None), None)
        return Graded(index, column, UNRECORDED, "the run reported NaN and a traces list records neither the score "
                      "nor the error behind it: " + (f"its {failed} did not end (Ragas raised there)" if failed else
                                                     "whether Ragas computed the NaN from these verdicts or the metric "
                                                     "raised cannot be told"), metric, target)
    if not run.ended:
        if run.error is not None:
            return Graded(index, column, UNRECORDED, "the metric raised, so the verdicts it would have scored were "
                                                     f"never produced; the export records the error: {run.error:.200}",
                          metric, target)
        cause = next((f"its {p.name} raised after the judge's reply {p.retries[-1].failed_reply!r:.120} failed to "
                      "parse" for p in run.prompts if p.outputs is None and p.retries), None) or \
            next((f"its {p.name} raised" for p in run.prompts if p.outputs is None), None)
        return Graded(index, column, UNRECORDED, "the metric raised and Ragas's tracer records no error (evaluate() "
                                                 "reports NaN)" + (f"; the trace shows {cause}" if cause else ""),
                      metric, target)
    if metric in SAMPLE_ONLY:
        return Graded(index, column, REDERIVABLE, None, metric, target)
    sample = rebuild.row.sample
    if kind == TRACES_LIST:
        loss = traces_list_loss(metric, run, sample)
        if loss is not None:
            return Graded(index, column, LOSSY, loss, metric, target)
    note = _retry_note(run.prompts) if kind != TRACES_LIST else \
        "a traces list drops Ragas's fix_output_format retries: whether a reply needed one is not recorded"
    differs = None
    if metric in (WITH_REFERENCE, WITHOUT_REFERENCE):
        verdicts, why = _context_precision(run, list(sample.get("retrieved_contexts") or []))
    elif metric == "context_recall":
        verdicts, why = _context_recall(run)
    elif metric == "faithfulness":
        verdicts, why, differs = _faithfulness(run)
    elif metric in FACTUAL:
        verdicts, why, differs = _factual_correctness(run, sample, metric.rsplit("_", 1)[1])
        if metric == "factual_correctness_f1":
            note = "; ".join(x for x in (note, "the trace does not record beta: replayed with Ragas's default "
                                               "beta=1.0") if x)
    elif metric == "context_entity_recall":
        verdicts, why = _context_entity_recall(run, sample)
    elif metric in ("aspect_critic", "simple_criteria"):
        verdicts, why = _vote(run, metric)
        note = "; ".join(x for x in (note, "the trace does not record the criterion's definition or strictness: "
                                           "replayed with the harness's configuration (at Ragas 0.4.3 the class asks "
                                           "one generation and returns its vote, so neither changes the value)") if x)
    elif metric == "rubrics_score":
        verdicts, why = _vote(run, metric)
        note = "; ".join(x for x in (note, "the trace does not record the rubric: Ragas returns the judge's score "
                                           "whatever the rubric, and the reference reads the default 1..5 levels") if x)
    else:
        verdicts, why = _noise_sensitivity(run, sample)
    if verdicts is None:
        return Graded(index, column, LOSSY, why, metric, target)
    key = verdict_key(metric)
    if key in rebuild.verdicts and rebuild.verdicts[key] != verdicts:
        return Graded(index, column, LOSSY, f"another metric of this row filled the verdicts of {key} with other "
                                            "labels, and a case holds one list per verdict key", metric, target)
    rebuild.verdicts[key] = verdicts
    if differs:
        rebuild.not_frozen[target] = differs
        return Graded(index, column, LOSSY, differs + " (the score replays, the generator's reply does not)",
                      metric, target, note)
    return Graded(index, column, REDERIVABLE, None, metric, target, note)


def verdict_key(metric: str) -> str:
    """The case's verdict key of a registry metric (``factual_correctness`` for factual_correctness_f1)."""
    verdicts = registry_metric(metric).verdicts
    return verdicts.key if verdicts is not None else metric


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
