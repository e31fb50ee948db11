"""Judge scripts of AnswerCorrectness and ResponseRelevancy / AnswerRelevancy, for both Ragas APIs
(standard library only; Ragas on use).

- AnswerCorrectness: statements of the response, then of the reference (question, text) ->
  ``{"statements"}``; then the TP/FP/FN classification (question, answer statements, ground-truth
  statements) -> ``{"TP", "FP", "FN"}`` built from ``verdicts.answer_correctness`` (response verdict 1:
  TP, 0: FP; reference verdict 0: FN). The legacy class asks the classifier unless *both* statement
  lists are empty; the collections class only when *both* are non-empty.
- ResponseRelevancy / AnswerRelevancy: one prompt (response) sampled ``strictness`` times ->
  ``{"question", "noncommittal"}`` per sample, from the first ``strictness`` items of
  ``verdicts.answer_relevancy`` in order (legacy: one ``generate(n=strictness)`` call; collections:
  ``strictness`` calls of the same prompt). The flags go into the replies as given. (On an empty user
  input or response the collections class raises ValueError before asking: the expected samples stay
  unasked, and the error is the result.)
"""

from __future__ import annotations

import typing as t

from ..protocol import API_COLLECTIONS, API_LEGACY, FROZEN_REASON
from .prompt_book import PromptBook
from .scripts import STATEMENT_GENERATOR, PromptAdapter, use_judge_calls

CORRECTNESS_CLASSIFIER = "correctness_classifier"
QUESTION_GENERATION = "question_generation"

# prompt kind -> the attribute of the metric instance holding it, per API
ATTRIBUTES: dict[str, dict[str, str]] = {
    API_LEGACY: {STATEMENT_GENERATOR: "statement_generator_prompt", CORRECTNESS_CLASSIFIER: "correctness_prompt",
                 QUESTION_GENERATION: "question_generation"},
    API_COLLECTIONS: {STATEMENT_GENERATOR: "statement_generator_prompt",
                      CORRECTNESS_CLASSIFIER: "correctness_classifier_prompt", QUESTION_GENERATION: "prompt"},
}


def instruction(prompts: PromptAdapter, metric: t.Any, kind: str) -> str:
    """The instruction of the ``kind`` prompt of ``metric`` (AttributeError when it has none)."""
    return prompts.attribute_instruction(metric, ATTRIBUTES[prompts.api][kind], kind)


def answer_correctness_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    use_judge_calls(prompts, metric, case, book, "answer_correctness",
                    lambda kind: instruction(prompts, metric, kind))
    statements = case["verdicts"]["answer_correctness"]
    response = [s for s in statements if s.get("from") == "response"]
    reference = [s for s in statements if s.get("from") == "reference"]
    generator = instruction(prompts, metric, STATEMENT_GENERATOR)
    for source, own in (("response", response), ("reference", reference)):
        book.expect(STATEMENT_GENERATOR, generator, {"question": case.get("user_input"), "answer": case.get(source)},
                    {"statements": [s["statement"] for s in own]},
                    label=f"verdicts.answer_correctness ({source} statements)")
    asked = (response and reference) if prompts.api == API_COLLECTIONS else (response or reference)
    if not asked:
        return

    def listed(items: list) -> list:
        return [{"statement": s["statement"], "reason": FROZEN_REASON} for s in items]

    book.expect(CORRECTNESS_CLASSIFIER, instruction(prompts, metric, CORRECTNESS_CLASSIFIER),
                {"question": case.get("user_input"), "answer": [s["statement"] for s in response],
                 "ground_truth": [s["statement"] for s in reference]},
                {"TP": listed([s for s in response if s["verdict"]]),
                 "FP": listed([s for s in response if not s["verdict"]]),
                 "FN": listed([s for s in reference if not s["verdict"]])},
                label="verdicts.answer_correctness (TP/FP/FN)")


def answer_relevancy_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    use_judge_calls(prompts, metric, case, book, "answer_relevancy", lambda kind: instruction(prompts, metric, kind))
    strictness = int(getattr(metric, "strictness", 3))
    drawn = case["verdicts"]["answer_relevancy"][:strictness]
    replies = [{"question": s["statement"], "noncommittal": s["noncommittal"]} for s in drawn]
    expect = book.expect_in_order if prompts.api == API_COLLECTIONS else book.expect_samples
    expect(QUESTION_GENERATION, instruction(prompts, metric, QUESTION_GENERATION), {"response": case.get("response")},
           replies, label=f"verdicts.answer_relevancy (first {strictness} samples)")
