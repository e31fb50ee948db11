"""The judge scripts by name: what a request's target names as its ``judge`` (standard library only).

Each entry builds the script for one target from the target's data (its verdict key, its constructor
keywords): the same script drives both APIs' classes of a metric. A name the host sends that is not
here makes the request bad (``targets.targets_from_request``).
"""

from __future__ import annotations

import typing as t

from .agents import goal_script, topic_adherence_script
from .answers import answer_correctness_script, answer_relevancy_script
from .criteria import rubrics_script, votes_script
from .generic import numeric_script
from .hhem import hhem_statements_script
from .multimodal import image_text_script
from .ratings import rating_script
from .scripts import (
    Script,
    context_entity_recall_script,
    context_precision_script,
    context_recall_script,
    factual_correctness_script,
    faithfulness_script,
    noise_sensitivity_script,
)
from .summaries import sql_equivalence_script, summary_script


class ScriptInputs(t.Protocol):
    """What a script is built from: the requested target's verdict key and constructor keywords."""

    @property
    def verdict_key(self) -> str | None: ...

    @property
    def options(self) -> dict[str, t.Any]: ...


def _fixed(script: Script) -> t.Callable[[ScriptInputs], Script]:
    return lambda target: script


SCRIPTS: dict[str, t.Callable[[ScriptInputs], Script]] = {
    # context precision: one verdict per retrieved context, judged against the reference or the response
    "context_precision_with_reference": lambda target: context_precision_script(str(target.verdict_key), "reference"),
    "context_precision_without_reference": lambda target: context_precision_script(str(target.verdict_key),
                                                                                   "response"),
    "context_recall": _fixed(context_recall_script),
    "faithfulness": _fixed(faithfulness_script),
    "factual_correctness": _fixed(factual_correctness_script),
    "context_entity_recall": _fixed(context_entity_recall_script),
    "noise_sensitivity": _fixed(noise_sensitivity_script),
    # the NVIDIA-style ratings: two templates, retried (verdicts.<key>: the calls of each template)
    "rating": lambda target: rating_script(str(target.verdict_key)),
    # AspectCritic / SimpleCriteriaScore: one prompt, ``strictness`` votes
    "votes": lambda target: votes_script(str(target.verdict_key), int(target.options.get("strictness", 1))),
    "rubrics": lambda target: rubrics_script(str(target.verdict_key)),
    "answer_correctness": _fixed(answer_correctness_script),
    "answer_relevancy": _fixed(answer_relevancy_script),
    # multi-turn agent metrics: the conversation's inferred goal/end state and a 0/1 comparison; the topics
    "agent_goal_accuracy_with_reference": lambda target: goal_script(str(target.verdict_key), True),
    "agent_goal_accuracy_without_reference": lambda target: goal_script(str(target.verdict_key), False),
    "topic_adherence": lambda target: topic_adherence_script(str(target.verdict_key)),
    # SummarizationScore / SummaryScore: keyphrases, questions, an answer per question
    "summary_score": lambda target: summary_script(str(target.verdict_key)),
    # LLMSQLEquivalence / SQLSemanticEquivalence: two explanations and an equivalence verdict
    "sql_equivalence": lambda target: sql_equivalence_script(str(target.verdict_key)),
    # the legacy MultiModalFaithfulness / MultiModalRelevance: one ImageTextPrompt, by its whole text
    "multimodal_faithfulness": lambda target: image_text_script(str(target.verdict_key)),
    "multimodal_relevance": lambda target: image_text_script(str(target.verdict_key)),
    # a user's NumericMetric: its formatted template, by its whole text
    "numeric_metric": lambda target: numeric_script(str(target.verdict_key)),
    # a user's DiscreteMetric / RankingMetric: the same, the reply's value a label / a list as given
    "discrete_metric": lambda target: numeric_script(str(target.verdict_key)),
    "ranking_metric": lambda target: numeric_script(str(target.verdict_key)),
    # FaithfulnesswithHHEM: the statement generation alone (its classifier is the probe's frozen stub)
    "faithfulness_hhem": lambda target: hhem_statements_script(str(target.verdict_key)),
}
