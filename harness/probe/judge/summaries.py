"""Judge scripts of SummarizationScore (legacy) / SummaryScore (collections), and of LLMSQLEquivalence /
SQLSemanticEquivalence (below), both APIs (standard library only; Ragas on use).

Both classes ask three prompts in order, with the same inputs and reply layouts; only the attributes
holding them differ (legacy ``question_generation_prompt`` / ``answer_generation_prompt``, collections
``generate_questions_prompt`` / ``generate_answers_prompt``; ``extract_keyphrases_prompt`` in both; Ragas 0.3.9,
the only 0.3.x release with the collections class, renders them with module functions of those names, which
``dialects.PROMPT_FUNCTIONS`` names for each kind):

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


# --------------------------------------------------------------------------- LLMSQLEquivalence / SQLSemanticEquivalence

SQL_EQUIVALENCE = "sql_equivalence"


def _bool_literal(value: t.Any) -> t.Any:
    """A 0/1 verdict as JSON true / false; anything else as given (pydantic's bool parsing decides)."""
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return bool(value)
    return value


def sql_equivalence_script(verdict_key: str) -> Script:
    """One prompt, {reference, response, database_schema: reference_contexts joined with "\\n"} -> the two
    explanations and the verdict, under each API's own keys (legacy ``equivalence_prompt`` replies
    {response_query_explaination, reference_query_explaination, equivalence}; collections the same attribute,
    {response_explanation, reference_explanation, equivalent}). The collections class raises ValueError before
    asking when the response or the reference is empty or whitespace only."""
    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        response, reference = case.get("response") or "", case.get("reference") or ""
        collections = prompts.api == API_COLLECTIONS
        if collections and (not response.strip() or not reference.strip()):
            return
        verdict = case["verdicts"][verdict_key][0]
        equivalent = _bool_literal(verdict["equivalent"])
        reply = ({"response_explanation": verdict["response_explanation"],
                  "reference_explanation": verdict["reference_explanation"], "equivalent": equivalent}
                 if collections else
                 {"response_query_explaination": verdict["response_explanation"],
                  "reference_query_explaination": verdict["reference_explanation"], "equivalence": equivalent})
        book.expect(SQL_EQUIVALENCE, prompts.attribute_instruction(metric, "equivalence_prompt", SQL_EQUIVALENCE),
                    {"reference": reference, "response": response,
                     "database_schema": "\n".join(case.get("reference_contexts") or [])},
                    reply, label=f"verdicts.{verdict_key}[0]")

    return script
