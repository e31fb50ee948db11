"""The frozen case model: one Case per row of a case file, a Suite per file.

Sequences are tuples and mappings read-only, so a case cannot change after validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ragas_compat.cases.configurations import TargetConfig
from ragas_compat.errors import HarnessInputError

CATEGORIES = ("single_source", "multi_source", "no_answer", "conflict", "outdated", "edge")
DEFAULT_SUITE_SOURCE = "bundled:default"


@dataclass(frozen=True)
class ToolCall:
    """One tool call (``ragas.messages.ToolCall``): the tool's name and its arguments as given (JSON values)."""

    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Message:
    """One message of a multi-turn case (``ragas.messages``): ``type`` human, ai or tool; an ai message's
    ``tool_calls`` (None when it calls none; parallel calls are several calls of one message)."""

    type: str
    content: str
    tool_calls: tuple[ToolCall, ...] | None = None


@dataclass(frozen=True, eq=True)
class Case:
    """One frozen case. Sequences are tuples; ``raw`` is the case's JSON object exactly as read
    (a private deep copy) so it can be handed to the Ragas probe unchanged."""

    id: str
    category: str
    user_input: str
    reference: str
    response: str
    retrieved_contexts: tuple[str, ...]
    description: str | None = None
    candidate_contexts: tuple[str, ...] | None = None
    reference_contexts: tuple[str, ...] | None = None
    # context IDs as given: any JSON scalar (the reference refuses booleans and null; Ragas coerces)
    retrieved_context_ids: tuple[str | int | float | bool | None, ...] | None = None
    reference_context_ids: tuple[str | int | float | bool | None, ...] | None = None
    corpus_relevant_count: int | None = None
    # True: the string, n-gram and edit-similarity metrics score response against reference
    # (case key "string_metrics"); None when absent or false, so "requires" reads it as absent
    string_metrics: bool | None = None
    # text -> frozen embedding vector (case key "embeddings"), as given, or None
    embeddings: Mapping[str, tuple[float, ...]] | None = None
    # True: DataCompyScore reads response and reference as CSV tables (case key "table_metrics")
    table_metrics: bool | None = None
    # True: QuotedSpansAlignment scores the response's quoted spans (case key "quoted_spans")
    quoted_spans: bool | None = None
    # FaithfulnesswithHHEM's frozen classifier scores (case key "hhem_scores": statement -> probability), or None
    hhem_scores: Mapping[str, float] | None = None
    # the case's own rubric (case key "rubrics": "scoreN_description" -> text) for InstanceRubrics, or None
    rubrics: Mapping[str, str] | None = None
    # verdict key -> tuple of labels (label lists) or tuple of claim dicts (claim lists), as given:
    # a label may be a number, a boolean or a string ("1"); the reference refuses anything but 0/1
    verdicts: Mapping[str, tuple[Any, ...]] = field(default_factory=lambda: MappingProxyType({}))
    # {"human": {claim_id: label}, "judge": {claim_id: label}} as given, or None
    judge_audit: Mapping[str, Mapping[str, Any]] | None = None
    # verdict key -> {context index: raw judge reply text} (see module docstring), as given
    judge_replies: Mapping[str, Mapping[int, str]] = field(default_factory=lambda: MappingProxyType({}))
    # verdict key -> prompt kind -> the per-call script's entries in call order (case key judge_calls), as
    # given: only the probe's scripted judge reads them; the reference computes from the verdicts
    judge_calls: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=lambda: MappingProxyType({}))
    # the configured Ragas targets scoring the case (case key "targets", merged with the suite default):
    # for each (API, class) named, these replace the built-in configurations (ragas_compat.cases.configurations)
    targets: tuple[TargetConfig, ...] = ()
    # multi-turn cases (case key user_input given as a list of messages: Ragas's MultiTurnSample): the
    # conversation in order; None for a single-turn case. A multi-turn case has user_input "" and no
    # response or retrieved contexts (response "", retrieved_contexts ()); its reference is "" when absent.
    conversation: tuple[Message, ...] | None = None
    reference_tool_calls: tuple[ToolCall, ...] | None = None
    reference_topics: tuple[str, ...] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # a dict, or read-only (loader.PackedRaw)


    @property
    def multi_turn(self) -> bool:
        """A multi-turn case (Ragas's MultiTurnSample), whose user_input is a list of messages."""
        return self.conversation is not None

    @property
    def predicted_tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of the conversation's ai messages, in order (a message's parallel calls in its order)."""
        return tuple(call for message in self.conversation or () if message.type == "ai"
                     for call in message.tool_calls or ())


@dataclass(frozen=True)
class Suite:
    """A validated case file. ``source`` is a display name (file name or 'bundled:default'),
    never an absolute path."""

    name: str
    source: str
    cases: tuple[Case, ...]

    def case(self, case_id: str) -> Case:
        """The case with this id; HarnessInputError listing the valid ids otherwise."""
        for c in self.cases:
            if c.id == case_id:
                return c
        raise HarnessInputError(
            f"{self.source}: no case {case_id!r}; cases: {', '.join(c.id for c in self.cases)}",
            field="id", value=case_id)

    def category_counts(self) -> dict[str, int]:
        """Number of cases per category, in CATEGORIES order (zeros included)."""
        counts = {c: 0 for c in CATEGORIES}
        for case in self.cases:
            counts[case.category] += 1
        return counts
