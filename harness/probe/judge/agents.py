"""Judge scripts of the multi-turn agent metrics, for both Ragas APIs (standard library only; Ragas on use):
AgentGoalAccuracyWithReference / WithoutReference and TopicAdherenceScore / TopicAdherence.

Both APIs render the conversation the same way (``MultiTurnSample.pretty_repr()`` in the legacy classes,
each message's ``pretty_repr()`` joined by newlines in the collections ones) and keep the prompts under the
same attribute names, so one script serves both.

- AgentGoalAccuracy: ``workflow_prompt`` {workflow} -> {user_goal, end_state}; then
  ``compare_outcome_prompt`` {desired_outcome, arrived_outcome} -> {reason, verdict}, desired being the
  case's reference (with reference) or the inferred user goal (without). The verdict goes into the reply as
  Ragas's literal "1" / "0" when it is 0, 1, false or true, as given otherwise.
- TopicAdherence: ``topic_extraction_prompt`` {user_input: conversation} -> {topics}; for each topic in
  order ``topic_refused_prompt`` {user_input, topic} -> {refused_to_answer} (asked one after another: a
  topic extracted twice replays its verdicts in order); ``topic_classification_prompt`` {reference_topics,
  topics} -> {classifications}. The legacy class asks the classification with no topic too; the collections
  class returns NaN before asking anything more when no topic is extracted, and raises ValueError before
  asking anything when reference_topics is empty.
"""

from __future__ import annotations

import typing as t

from ..protocol import API_COLLECTIONS, FROZEN_REASON
from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script

WORKFLOW = "agent_goal_workflow"
COMPARE_OUTCOME = "agent_goal_compare_outcome"
TOPIC_EXTRACTION = "topic_extraction"
TOPIC_REFUSED = "topic_refused"
TOPIC_CLASSIFICATION = "topic_classification"
ATTRIBUTES = {WORKFLOW: "workflow_prompt", COMPARE_OUTCOME: "compare_outcome_prompt",
              TOPIC_EXTRACTION: "topic_extraction_prompt", TOPIC_REFUSED: "topic_refused_prompt",
              TOPIC_CLASSIFICATION: "topic_classification_prompt"}


def instruction(prompts: PromptAdapter, metric: t.Any, kind: str) -> str:
    return prompts.attribute_instruction(metric, ATTRIBUTES[kind], kind)


def conversation_text(messages: t.Sequence[dict]) -> str:
    """The conversation as Ragas renders it for its judge (``pretty_repr`` of each message, joined)."""
    from ..multi_turn import ragas_messages

    return "\n".join(message.pretty_repr() for message in ragas_messages(messages))


def verdict_literal(value: t.Any) -> t.Any:
    """A 0/1 verdict as the reply model's literal ("0" / "1"); anything else as given."""
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return str(int(value))
    return value


def goal_script(verdict_key: str, with_reference: bool) -> Script:
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        if with_reference and prompts.api == API_COLLECTIONS and not case.get("reference"):
            return  # the collections class raises ValueError before asking
        verdict = case["verdicts"][verdict_key][0]
        book.expect(WORKFLOW, instruction(prompts, metric, WORKFLOW),
                    {"workflow": conversation_text(case["user_input"])},
                    {"user_goal": verdict["user_goal"], "end_state": verdict["end_state"]},
                    label=f"verdicts.{verdict_key}[0] (user_goal, end_state)")
        desired = case.get("reference") if with_reference else verdict["user_goal"]
        book.expect(COMPARE_OUTCOME, instruction(prompts, metric, COMPARE_OUTCOME),
                    {"desired_outcome": desired, "arrived_outcome": verdict["end_state"]},
                    {"reason": FROZEN_REASON, "verdict": verdict_literal(verdict["verdict"])},
                    label=f"verdicts.{verdict_key}[0].verdict")

    return script


def topic_adherence_script(verdict_key: str) -> Script:
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        reference_topics = case.get("reference_topics") or []
        if prompts.api == API_COLLECTIONS and not reference_topics:
            return  # the collections class raises ValueError before asking
        items = case["verdicts"][verdict_key]
        text = conversation_text(case["user_input"])
        topics = [item["statement"] for item in items]
        book.expect(TOPIC_EXTRACTION, instruction(prompts, metric, TOPIC_EXTRACTION), {"user_input": text},
                    {"topics": topics}, label=f"verdicts.{verdict_key} (topics)")
        if not topics and prompts.api == API_COLLECTIONS:
            return  # NaN before asking more
        row = object()  # the topics are asked one after another, in order
        refused = instruction(prompts, metric, TOPIC_REFUSED) if items else ""
        for i, item in enumerate(items):
            book.expect(TOPIC_REFUSED, refused, {"user_input": text, "topic": item["statement"]},
                        {"refused_to_answer": item["refused"]}, label=f"verdicts.{verdict_key}[{i}].refused", row=row)
        book.expect(TOPIC_CLASSIFICATION, instruction(prompts, metric, TOPIC_CLASSIFICATION),
                    {"reference_topics": list(reference_topics), "topics": topics},
                    {"classifications": [item["on_topic"] for item in items]},
                    label=f"verdicts.{verdict_key} (on_topic classifications)")

    return script
