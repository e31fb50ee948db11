"""Judge scripts for the criteria and rubric classes: AspectCritic, SimpleCriteriaScore (legacy only at
Ragas 0.4.3), RubricsScore / DomainSpecificRubrics and InstanceRubrics / InstanceSpecificRubrics
(standard library only; called as ``script(prompts, metric, case, book)`` like ``scripts``).

Each class asks ONE prompt per sample. The prompt input is the class's input model rendered with
``exclude_none``: the sample fields the case gives (``user_input``, ``response``,
``retrieved_contexts``, ``reference``). Differences the scripts follow:

- AspectCritic / SimpleCriteriaScore: the votes of all strictness samples are the generations of that
  one call (``PromptBook.expect_samples``): a Ragas that asks for ``n = strictness`` generations gets
  them all, one that asks for one (0.4.3) gets the first. SimpleCriteriaScore's input has no
  ``reference_contexts`` (the case gives none either). With no vote in the case nothing is expected,
  so the asking fails loudly (the judge has no reply).
- legacy InstanceRubrics folds the contexts into the question (``"{user_input} answer using context:
  {joined contexts}"``) and drops ``retrieved_contexts``; the collections class passes them as given.
- the prompt attribute: legacy ``single_turn_prompt`` (``single_turn_scoring_prompt`` for
  RubricsScore), collections ``scoring_prompt``.
"""

from __future__ import annotations

import typing as t

from ..protocol import API_COLLECTIONS, API_LEGACY, FROZEN_REASON
from .prompt_book import PromptBook
from .scripts import PromptAdapter, Script, use_judge_calls

SAMPLE_FIELDS = ("user_input", "response", "retrieved_contexts", "reference")

# kind -> (the prompt's attribute per API, the reply's reason field)
PROMPTS: dict[str, tuple[dict[str, str], str]] = {
    "aspect_critic": ({API_LEGACY: "single_turn_prompt"}, "reason"),
    "simple_criteria": ({API_LEGACY: "single_turn_prompt"}, "reason"),
    "rubrics_score": ({API_LEGACY: "single_turn_scoring_prompt", API_COLLECTIONS: "scoring_prompt"}, "feedback"),
    "instance_rubrics": ({API_LEGACY: "single_turn_prompt", API_COLLECTIONS: "scoring_prompt"}, "feedback"),
}
SAMPLE_KEY = {"aspect_critic": "verdict", "simple_criteria": "score", "rubrics_score": "score",
              "instance_rubrics": "score"}


def instruction(prompts: PromptAdapter, metric: t.Any, kind: str) -> str:
    """The instruction of the class's one prompt (AttributeError when this API keeps none there)."""
    attribute = PROMPTS[kind][0][prompts.api]
    return prompts.attribute_instruction(metric, attribute, kind)


def sample_input(case: dict) -> dict:
    """The prompt input of the sample fields the case gives (Ragas renders with exclude_none)."""
    return {f: case[f] for f in SAMPLE_FIELDS if case.get(f) is not None}


# How Ragas 0.2.x AspectCritic / SimpleCriteriaScore fold the contexts into the question they ask about
# (0.2.0-0.2.3, then 0.2.4-0.2.5); from 0.2.6 the contexts are a field of their own.
FOLDED_QUESTION_FORMS = ("Question: {question} Answer using context: {contexts}",
                         "`user_input`: {question} Answer using `retrieved context`: {contexts}")


def folded_questions(question: t.Any, contexts: list) -> list[str]:
    """The question as each 0.2.x release renders it with the contexts folded in (joined by newlines)."""
    joined = "\n".join(str(c) for c in contexts)
    return [form.format(question=question, contexts=joined) for form in FOLDED_QUESTION_FORMS]


def votes_script(kind: str, strictness: int) -> Script:
    """AspectCritic / SimpleCriteriaScore with ``strictness``: one prompt whose generations are the
    first ``k`` votes (``k``: strictness made odd, as the constructor does)."""
    k = strictness if strictness % 2 else strictness + 1

    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        use_judge_calls(prompts, metric, case, book, kind, lambda asked: instruction(prompts, metric, asked))
        votes = case["verdicts"][kind][:k]
        if not votes:
            return
        reason, key = PROMPTS[kind][1], SAMPLE_KEY[kind]
        book.expect_samples(kind, instruction(prompts, metric, kind), sample_input(case),
                            [{reason: FROZEN_REASON, key: vote[key]} for vote in votes],
                            label=f"verdicts.{kind} (first {k} samples)")
        if case.get("retrieved_contexts") is not None:
            # 0.2.x folded the contexts into the question: the same asking, rendered that way
            for folded in folded_questions(case.get("user_input"), case["retrieved_contexts"]):
                book.alias(kind, sample_input(case), {"user_input": folded, "response": case.get("response")})

    return script


def renders_contexts(prompts: PromptAdapter, metric: t.Any, kind: str) -> bool:
    """Does the class's ``kind`` prompt take the contexts as a field of their own? Ragas 0.2.0-0.2.5's
    RubricsScoreWithReference / WithoutReference do not (their input models have no ``retrieved_contexts``:
    the contexts are folded into the question); RubricsScore (0.2.6 on) and the collections classes do."""
    prompt = getattr(metric, PROMPTS[kind][0].get(prompts.api, ""), None)
    fields = getattr(getattr(prompt, "input_model", None), "model_fields", None)
    return not isinstance(fields, dict) or "retrieved_contexts" in fields


def receives_contexts(metric: t.Any) -> bool:
    """Does the class get the sample's contexts? A release whose metrics keep only the columns they declare
    (``_only_required_columns_single_turn``, Ragas 0.2.2 on) drops them from a class that does not declare
    them (0.2.2-0.2.3 RubricsScoreWith/WithoutReference: declared from 0.2.4 on, as optional)."""
    required = getattr(metric, "_required_columns", None)
    if not hasattr(metric, "_only_required_columns_single_turn") or not isinstance(required, dict):
        return True
    return any(getattr(kind, "name", kind) == "SINGLE_TURN" and "retrieved_contexts" in
               {column.split(":")[0] for column in columns} for kind, columns in required.items())


def folded_into_question(case: dict) -> str:
    """The question as the 0.2.x rubric classes ask it with the contexts folded in."""
    return f"{case.get('user_input')} answer using context: " + "\n".join(case["retrieved_contexts"])


def rubrics_script(kind: str) -> Script:
    """RubricsScore / InstanceRubrics (and Ragas 0.2.0-0.2.5's RubricsScoreWithReference / WithoutReference,
    InstanceRubricsWithReference / InstanceRubricsScoreWithoutReference): one prompt -> {feedback, score}.

    Where the contexts go (the prompt's input dialect): legacy InstanceRubrics and its 0.2.0-0.2.5
    predecessors fold them into the question whenever the sample has them (an empty list too); 0.2.0-0.2.5
    RubricsScoreWith/WithoutReference fold them only when there are some (``if contexts:``) and they reach
    the class (:func:`receives_contexts`: not in 0.2.2-0.2.3); the others pass them as a field. The rubric of RubricsScore and its predecessors is the instance's own (filled in
    by the dialect, ``dialects.FILLED_FROM_INSTANCE``), the instance classes' the case's."""

    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        use_judge_calls(prompts, metric, case, book, kind, lambda asked: instruction(prompts, metric, asked))
        prompt_input = sample_input(case)
        if kind == "rubrics_score" and prompts.api == API_LEGACY and not renders_contexts(prompts, metric, kind):
            contexts = prompt_input.pop("retrieved_contexts", None)
            if contexts and receives_contexts(metric):
                prompt_input["user_input"] = folded_into_question(case)
        if kind == "instance_rubrics":
            if prompts.api == API_COLLECTIONS and not case.get("rubrics"):
                return  # the collections class raises ValueError before asking
            if prompts.api == API_LEGACY and "retrieved_contexts" in prompt_input:
                prompt_input.pop("retrieved_contexts")
                prompt_input["user_input"] = folded_into_question(case)
            prompt_input["rubrics"] = case.get("rubrics")
        score = case["verdicts"][kind][0]["score"]
        book.expect(kind, instruction(prompts, metric, kind), prompt_input,
                    {"feedback": FROZEN_REASON, "score": score}, label=f"verdicts.{kind}")

    return script
