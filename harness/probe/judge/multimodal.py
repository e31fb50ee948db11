"""Judge script of MultiModalFaithfulness / MultiModalRelevance, both APIs (standard library only; Ragas on use).

Legacy:

Their prompt is an ``ImageTextPrompt``: no input block the content-keyed book can read, so the prompt is
expected by its whole text (``PromptBook.expect_text``), rendered by Ragas's own prompt object on the case's
inputs (``to_prompt_value(process_input(input_model(...))).to_string()``: the items joined with spaces, an
image context as its data URI). The one reply is ``{<the output model's field>: verdict}``, the verdict as
JSON true / false when it is 0, 1, false or true, as given otherwise (pydantic's bool parsing decides).

Collections: the classes build the message content themselves (``build_multimodal_message_content`` /
``build_multimodal_relevance_message_content`` of their module, with its instruction constant: text blocks and
an ``image_url`` block per image context) and send ``[{"role": "user", "content": ...}]`` through
``llm.client.chat.completions.create``; the scripted judge's client (``stubs.collections_llm``) looks that call
up by the messages' canonical JSON (:func:`messages_text`), which the script expects, built by the same
function of the class's module. Reply ``{faithful|relevant: verdict, reason}``. The collections classes raise
ValueError before asking on an empty response or retrieved_contexts (relevance: or user_input).
"""

from __future__ import annotations

import importlib
import json
import typing as t

from ..protocol import API_COLLECTIONS, FROZEN_REASON
from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script

PROMPT_ATTRIBUTES = {"multimodal_faithfulness": "faithfulness_prompt", "multimodal_relevance": "relevance_prompt"}
# collections: (the module's content builder, its instruction constant, its output model, the inputs it takes)
COLLECTIONS_CALLS = {
    "multimodal_faithfulness": ("build_multimodal_message_content", "MULTIMODAL_FAITHFULNESS_INSTRUCTION",
                                "MultiModalFaithfulnessOutput", ("response", "retrieved_contexts")),
    "multimodal_relevance": ("build_multimodal_relevance_message_content", "MULTIMODAL_RELEVANCE_INSTRUCTION",
                             "MultiModalRelevanceOutput", ("user_input", "response", "retrieved_contexts")),
}


def messages_text(messages: t.Any) -> str:
    """The key of a chat call's messages (text and image content blocks): their canonical JSON."""
    return "chat messages: " + json.dumps(messages, sort_keys=True, ensure_ascii=False)


def bool_literal(value: t.Any) -> t.Any:
    """A 0/1 verdict as JSON true / false; anything else as given."""
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return bool(value)
    return value


def image_text_script(verdict_key: str) -> Script:
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        verdict = case["verdicts"][verdict_key][0]["verdict"]
        if prompts.api == API_COLLECTIONS:
            builder, instruction, output, fields = COLLECTIONS_CALLS[verdict_key]
            if not all(case.get(name) for name in fields):
                return  # the class raises ValueError before asking
            module = importlib.import_module(type(metric).__module__)
            content = getattr(module, builder)(instruction=getattr(module, instruction),
                                               **{name: case.get(name) for name in fields})
            (answer, *_) = getattr(module, output).model_fields  # faithful / relevant, then reason
            book.expect_text(verdict_key, messages_text([{"role": "user", "content": content}]),
                             [json.dumps({answer: bool_literal(verdict), "reason": FROZEN_REASON})],
                             label=f"verdicts.{verdict_key}[0].verdict")
            return
        prompt = getattr(metric, PROMPT_ATTRIBUTES[verdict_key])
        fields = list(prompt.input_model.model_fields)
        data = prompt.input_model(**{name: case.get(name) for name in fields})
        text = prompt.to_prompt_value(prompt.process_input(data)).to_string()
        (answer,) = prompt.output_model.model_fields  # faithful / relevance
        book.expect_text(verdict_key, text, [json.dumps({answer: bool_literal(verdict)})],
                         label=f"verdicts.{verdict_key}[0].verdict")

    return script
