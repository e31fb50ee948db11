"""Judge script of the legacy MultiModalFaithfulness / MultiModalRelevance (standard library only; Ragas on use).

Their prompt is an ``ImageTextPrompt``: no input block the content-keyed book can read, so the prompt is
expected by its whole text (``PromptBook.expect_text``), rendered by Ragas's own prompt object on the case's
inputs (``to_prompt_value(process_input(input_model(...))).to_string()``: the items joined with spaces, an
image context as its data URI). The one reply is ``{<the output model's field>: verdict}``, the verdict as
JSON true / false when it is 0, 1, false or true, as given otherwise (pydantic's bool parsing decides).
"""

from __future__ import annotations

import json
import typing as t

from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script

PROMPT_ATTRIBUTES = {"multimodal_faithfulness": "faithfulness_prompt", "multimodal_relevance": "relevance_prompt"}


def bool_literal(value: t.Any) -> t.Any:
    """A 0/1 verdict as JSON true / false; anything else as given."""
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return bool(value)
    return value


def image_text_script(verdict_key: str) -> Script:
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        prompt = getattr(metric, PROMPT_ATTRIBUTES[verdict_key])
        fields = list(prompt.input_model.model_fields)
        data = prompt.input_model(**{name: case.get(name) for name in fields})
        text = prompt.to_prompt_value(prompt.process_input(data)).to_string()
        (answer,) = prompt.output_model.model_fields  # faithful / relevance
        verdict = case["verdicts"][verdict_key][0]["verdict"]
        book.expect_text(verdict_key, text, [json.dumps({answer: bool_literal(verdict)})],
                         label=f"verdicts.{verdict_key}[0].verdict")

    return script
