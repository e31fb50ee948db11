"""Judge script of a user's NumericMetric, DiscreteMetric or RankingMetric (``ragas.metrics``; standard library
only, Ragas on use): the three share ``SimpleLLMMetric.ascore`` and the reply shape.

The class formats its prompt template (``metric.prompt.format(**inputs)``: Ragas's simple ``Prompt``) and asks
the LLM it is given per call for ``{"reason", "value"}``. The prompt has no input block, so the script expects it
by its whole text, formatted by the metric's own prompt object on the inputs the probe passes (``FIELDS``, the
host's ``metrics.numeric_metric.FIELDS``); the reply carries the frozen value as given (a number, a label, a list).
"""

from __future__ import annotations

import json
import typing as t

from ..protocol import FROZEN_REASON
from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script

FIELDS = ("user_input", "response", "reference", "retrieved_contexts")


def numeric_script(verdict_key: str) -> Script:
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        text = metric.prompt.format(**{name: case[name] for name in FIELDS if name in case})
        value = case["verdicts"][verdict_key][0]["value"]
        book.expect_text(verdict_key, text, [json.dumps({"reason": FROZEN_REASON, "value": value})],
                         label=f"verdicts.{verdict_key}[0].value")

    return script
