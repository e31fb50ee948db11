"""Judge script of SummarizationScore (legacy) / SummaryScore (collections), both APIs (standard library
only; Ragas on use).

Both classes ask three prompts in order, with the same inputs and reply layouts; only the attributes
holding them differ (legacy ``question_generation_prompt`` / ``answer_generation_prompt``, collections
``generate_questions_prompt`` / ``generate_answers_prompt``; ``extract_keyphrases_prompt`` in both):

1. keyphrases: {text: the reference contexts joined with "\\n"} -> {keyphrases};
2. questions: {text, keyphrases} -> {questions};
3. answers: {summary: the response, questions} -> {answers}: each answer Ragas's literal "1" / "0" when
   the verdict is 0, 1, false or true, as given otherwise.

Every prompt is asked whatever the earlier replies held (no keyphrase, no question). The collections class
raises ValueError before asking anything when the contexts are empty or whitespace only, or the response is.
"""

from __future__ import annotations

import typing as t

from ..protocol import API_COLLECTIONS
from .agents import verdict_literal
from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script

KEYPHRASES = "summary_keyphrases"
QUESTIONS = "summary_questions"
ANSWERS = "summary_answers"
ATTRIBUTES = {API_COLLECTIONS: {KEYPHRASES: "extract_keyphrases_prompt", QUESTIONS: "generate_questions_prompt",
                                ANSWERS: "generate_answers_prompt"}}
LEGACY_ATTRIBUTES = {KEYPHRASES: "extract_keyphrases_prompt", QUESTIONS: "question_generation_prompt",
                     ANSWERS: "answer_generation_prompt"}


def instruction(prompts: PromptAdapter, metric: t.Any, kind: str) -> str:
    attribute = ATTRIBUTES.get(prompts.api, LEGACY_ATTRIBUTES)[kind]
    return prompts.attribute_instruction(metric, attribute, kind)


def summary_script(verdict_key: str) -> Script:
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        contexts = case.get("reference_contexts") or []
        response = case.get("response") or ""
        if prompts.api == API_COLLECTIONS and (not any(str(c).strip() for c in contexts) or not response.strip()):
            return  # the collections class raises ValueError before asking
        verdict = case["verdicts"][verdict_key][0]
        text = "\n".join(contexts)
        keyphrases, questions = list(verdict["keyphrases"]), list(verdict["questions"])
        book.expect(KEYPHRASES, instruction(prompts, metric, KEYPHRASES), {"text": text},
                    {"keyphrases": keyphrases}, label=f"verdicts.{verdict_key}[0].keyphrases")
        book.expect(QUESTIONS, instruction(prompts, metric, QUESTIONS), {"text": text, "keyphrases": keyphrases},
                    {"questions": questions}, label=f"verdicts.{verdict_key}[0].questions")
        book.expect(ANSWERS, instruction(prompts, metric, ANSWERS), {"summary": response, "questions": questions},
                    {"answers": [verdict_literal(a) for a in verdict["answers"]]},
                    label=f"verdicts.{verdict_key}[0].answers")

    return script
