"""FaithfulnesswithHHEM's judge script (standard library only; Ragas on use): the statement generation alone.

The class asks its LLM judge only for the response's statements (Faithfulness's statement-generation prompt,
(question, response) -> {statements}, from ``verdicts.faithfulness``); the statements are then scored by the
HHEM classifier, which the probe replaces by the case's frozen scores (``stubs/hhem_classifier.py``), not by
the NLI prompt, so that prompt is never expected.
"""

from __future__ import annotations

import typing as t

from .prompt_book import PromptBook
from .scripts import STATEMENT_GENERATOR, PromptAdapter, Script


def hhem_statements_script(verdict_key: str) -> Script:
    """Statement generation (question, response) -> {statements: the statements of ``verdicts.<verdict_key>``}."""
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        statements = [claim["statement"] for claim in case["verdicts"][verdict_key]]
        book.expect(
            STATEMENT_GENERATOR, prompts.instruction(metric, STATEMENT_GENERATOR),
            {"question": case.get("user_input"), "answer": case.get("response")},
            {"statements": statements},
            label=f"verdicts.{verdict_key} (statements, for the HHEM classifier)",
        )
    return script
