"""The judge scripts, written once for both Ragas APIs (standard library only; Ragas on use).

A script tells a PromptBook which prompts a Ragas class will ask its judge for one case, and the
frozen reply to each, derived from the case's verdicts. Verdict values go into the replies AS
GIVEN (2 stays 2, true stays true): Ragas's own parsing decides what they mean.

The legacy classes (``ragas.metrics``) and the collections classes (``ragas.metrics.collections``)
ask the same prompts: same kinds, same inputs, same reply layout. They differ only in

- which attribute of the metric instance holds each prompt (``context_precision_prompt`` vs
  ``prompt``, ``nli_statements_prompt`` vs ``nli_statement_prompt``, ...), and
- what follows a raw reply the response model cannot parse: the legacy API asks its "fix output
  format" prompt once (and gets the same text back, so parsing fails and the metric raises); on
  the collections path retries belong to the instructor client, which the stub replaces.

A :class:`PromptAdapter` holds exactly that difference; :data:`LEGACY_PROMPTS` and
:data:`COLLECTIONS_PROMPTS` are the two. A script is called as
``script(prompts, metric, case, book)``. It reads a prompt attribute only when it needs that
prompt (a case with no retrieved context reads none), so a class whose prompts live elsewhere
fails there with ``AttributeError`` (the collections runner reports that as ``TargetNotScripted``).
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping
from dataclasses import dataclass

try:
    from .probe_prompt_book import PromptBook
    from .probe_protocol import API_COLLECTIONS, API_LEGACY
except ImportError:  # run_probe.py: the script's folder is on sys.path
    from probe_prompt_book import PromptBook  # type: ignore[no-redef]
    from probe_protocol import API_COLLECTIONS, API_LEGACY  # type: ignore[no-redef]

FROZEN_REASON = "frozen verdict (ragas-compat scripted judge)"

# The kinds of prompt the scripts expect (PromptBook kinds).
CONTEXT_PRECISION = "context_precision"
CONTEXT_RECALL_CLASSIFICATION = "context_recall_classification"
STATEMENT_GENERATOR = "statement_generator"
NLI_STATEMENTS = "nli_statements"
PROMPT_KINDS = (CONTEXT_PRECISION, CONTEXT_RECALL_CLASSIFICATION, STATEMENT_GENERATOR, NLI_STATEMENTS)


@dataclass(frozen=True, eq=False)
class PromptAdapter:
    """Where one Ragas API keeps its prompts, and whether a raw reply is followed by a format fix."""

    api: str
    attributes: Mapping[str, str]  # prompt kind -> attribute of the metric instance holding that prompt
    format_fix_after_raw_reply: bool

    def instruction(self, metric: t.Any, kind: str) -> str:
        """The instruction of the ``kind`` prompt of ``metric`` (AttributeError when it has none)."""
        return getattr(metric, self.attributes[kind]).instruction


LEGACY_PROMPTS = PromptAdapter(API_LEGACY, {
    CONTEXT_PRECISION: "context_precision_prompt",
    CONTEXT_RECALL_CLASSIFICATION: "context_recall_prompt",
    STATEMENT_GENERATOR: "statement_generator_prompt",
    NLI_STATEMENTS: "nli_statements_prompt",
}, format_fix_after_raw_reply=True)

COLLECTIONS_PROMPTS = PromptAdapter(API_COLLECTIONS, {
    CONTEXT_PRECISION: "prompt",
    CONTEXT_RECALL_CLASSIFICATION: "prompt",
    STATEMENT_GENERATOR: "statement_generator_prompt",
    NLI_STATEMENTS: "nli_statement_prompt",
}, format_fix_after_raw_reply=False)

PROMPTS_BY_API: dict[str, PromptAdapter] = {p.api: p for p in (LEGACY_PROMPTS, COLLECTIONS_PROMPTS)}

Script = t.Callable[[PromptAdapter, t.Any, dict, PromptBook], None]


def fix_output_format_instruction() -> str:
    """The instruction of Ragas's "fix output format" retry prompt (legacy API; imports Ragas)."""
    from ragas.prompt.pydantic_prompt import fix_output_format_prompt

    return fix_output_format_prompt.instruction


def context_precision_script(verdict_key: str, answer_field: str) -> Script:
    """One prompt per retrieved context: (question, context, answer) -> {reason, verdict}.

    A raw reply in ``judge_replies.<verdict_key>.<i>`` replaces context i's reply verbatim; where
    the API follows it with a format-fix prompt, that prompt gets the same text back (as
    ``{"text": ...}``), so parsing fails and the metric raises. Ragas asks context by context, so
    no prompt is expected after the first raw reply.
    """

    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        contexts = case.get("retrieved_contexts") or []
        raw_replies = (case.get("judge_replies") or {}).get(verdict_key) or {}
        for i, label in enumerate(case["verdicts"][verdict_key]):
            instruction = prompts.instruction(metric, CONTEXT_PRECISION)
            context = contexts[i] if i < len(contexts) else f"<no retrieved_contexts[{i}]>"
            prompt_input = {"question": case.get("user_input"), "context": context,
                            "answer": case.get(answer_field)}
            if str(i) in raw_replies:
                raw = raw_replies[str(i)]
                book.expect_raw(CONTEXT_PRECISION, instruction, prompt_input, raw,
                                label=f"judge_replies.{verdict_key}.{i}")
                if prompts.format_fix_after_raw_reply:
                    book.expect_format_fix(fix_output_format_instruction(), CONTEXT_PRECISION,
                                           prompt_input, raw, raw,
                                           label=f"format fix of judge_replies.{verdict_key}.{i}")
                return  # the metric raises there; no later context is asked
            book.expect(CONTEXT_PRECISION, instruction, prompt_input,
                        {"reason": FROZEN_REASON, "verdict": label}, label=f"verdicts.{verdict_key}[{i}]")

    return script


def context_recall_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """One prompt: (question, joined contexts, reference) -> {classifications: [...]}."""
    instruction = prompts.instruction(metric, CONTEXT_RECALL_CLASSIFICATION)
    book.expect(
        CONTEXT_RECALL_CLASSIFICATION, instruction,
        {"question": case.get("user_input"),
         "context": "\n".join(case.get("retrieved_contexts") or []),
         "answer": case.get("reference")},
        {"classifications": [
            {"statement": c["statement"], "reason": FROZEN_REASON, "attributed": c["attributed"]}
            for c in case["verdicts"]["context_recall"]]},
        label="verdicts.context_recall",
    )


def faithfulness_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """Statement generation (question, response) -> {statements}; then, only when there is at
    least one statement, NLI (joined contexts, statements) -> {statements: [verdicts]}."""
    claims = case["verdicts"]["faithfulness"]
    statements = [c["statement"] for c in claims]
    book.expect(
        STATEMENT_GENERATOR, prompts.instruction(metric, STATEMENT_GENERATOR),
        {"question": case.get("user_input"), "answer": case.get("response")},
        {"statements": statements},
        label="verdicts.faithfulness (statements)",
    )
    if statements:
        book.expect(
            NLI_STATEMENTS, prompts.instruction(metric, NLI_STATEMENTS),
            {"context": "\n".join(case.get("retrieved_contexts") or []), "statements": statements},
            {"statements": [
                {"statement": c["statement"], "reason": FROZEN_REASON, "verdict": c["verdict"]}
                for c in claims]},
            label="verdicts.faithfulness (verdicts)",
        )
