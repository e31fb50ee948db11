"""Judge scripts for the NVIDIA-style rating metrics (standard library only; Ragas on use).

``AnswerAccuracy``, ``ContextRelevance`` and ``ResponseGroundedness`` ask two judge templates for a
rating, each retried on a reply they cannot use. Their prompts are plain string templates (legacy:
``template_*`` attributes filled with ``str.format``; collections: ``judge1_prompt`` /
``judge2_prompt`` rendered with ``to_string``), so the script renders each template on the case's
texts exactly as the class does and expects it by its whole text (``PromptBook.expect_text``):
any other text is a mismatch. The replies are ``verdicts.<key>``'s calls of that template in
order: an integer rating goes to the legacy judge as ``str(rating)`` and to the collections judge
as ``{"rating": rating}``; a string is the raw reply text, verbatim to both.
"""

from __future__ import annotations

import json
import typing as t
from dataclasses import dataclass

from ..protocol import API_LEGACY
from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script

TEMPLATES = (1, 2)


@dataclass(frozen=True)
class RatingPrompts:
    """How one metric renders its two templates on a case, per API."""

    key: str
    legacy_attributes: tuple[str, str]                        # the legacy class's template strings
    legacy_fields: t.Callable[[int, dict], dict]              # template -> str.format arguments
    collections_fields: t.Callable[[int, dict], dict]         # template -> input model fields

    def render(self, prompts: PromptAdapter, metric: t.Any, template: int, case: dict) -> str:
        if prompts.api == API_LEGACY:
            return getattr(metric, self.legacy_attributes[template - 1]).format(**self.legacy_fields(template, case))
        prompt = getattr(metric, f"judge{template}_prompt", None)
        if prompt is None and hasattr(prompts, "render_template"):  # 0.3.x: a template function (``dialects``)
            return prompts.render_template(metric, f"{self.key}_judge{template}_prompt",
                                           self.collections_fields(template, case))
        if prompt is None:
            raise AttributeError(f"{type(metric).__qualname__} has no judge{template}_prompt")
        return prompt.to_string(prompt.input_model(**self.collections_fields(template, case)))


def _joined(case: dict) -> str:
    return "\n".join(case.get("retrieved_contexts") or [])


def _accuracy_legacy(template: int, case: dict) -> dict:
    """Template 1 shows the response as the User Answer first; template 2 the reference first."""
    user, reference = case.get("response"), case.get("reference")
    if template == 1:
        return {"query": case.get("user_input"), "answer0": "User Answer", "answer1": "Reference Answer",
                "sentence_inference": user, "sentence_true": reference}
    return {"query": case.get("user_input"), "answer0": "Reference Answer", "answer1": "User Answer",
            "sentence_inference": reference, "sentence_true": user}


def _accuracy_collections(template: int, case: dict) -> dict:
    """Judge 2 gets the texts swapped (the reference as user_answer), as the class passes them."""
    user, reference = case.get("response"), case.get("reference")
    if template == 2:
        user, reference = reference, user
    return {"query": case.get("user_input"), "user_answer": user, "reference_answer": reference}


RATING_PROMPTS: dict[str, RatingPrompts] = {p.key: p for p in (
    RatingPrompts("answer_accuracy", ("template_accuracy1", "template_accuracy2"),
                  _accuracy_legacy, _accuracy_collections),
    RatingPrompts("context_relevance", ("template_relevance1", "template_relevance2"),
                  lambda _, case: {"query": case.get("user_input"), "context": _joined(case)},
                  lambda _, case: {"user_input": case.get("user_input"), "context": _joined(case)}),
    RatingPrompts("response_groundedness", ("template_groundedness1", "template_groundedness2"),
                  lambda _, case: {"context": _joined(case), "response": case.get("response")},
                  lambda _, case: {"response": case.get("response"), "context": _joined(case)}),
)}


def reply_text(rating: t.Any, api: str) -> str:
    """The judge's reply for one call: a string verbatim; a rating as the API's judge writes it."""
    if isinstance(rating, str):
        return rating
    return str(rating) if api == API_LEGACY else json.dumps({"rating": rating})


def rating_script(key: str) -> Script:
    """Both templates of ``key``'s metric, each answered with its calls in ``verdicts.<key>``."""
    rating_prompts = RATING_PROMPTS[key]

    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        calls = case["verdicts"][key]
        for template in TEMPLATES:
            replies = [reply_text(c["rating"], prompts.api) for c in calls if c.get("template") == template]
            if replies:
                book.expect_text(f"{key}_template{template}", rating_prompts.render(prompts, metric, template, case),
                                 replies, label=f"verdicts.{key} (template {template})")

    return script
