"""How well a summary keeps its source: SummarizationScore (legacy) / SummaryScore (collections).

Inputs (a single-turn case): ``reference_contexts`` (the source, joined with ``"\\n"`` into one text) and
``response`` (the summary). The judge is asked three times (both classes, both APIs):

1. the text -> ``{keyphrases}`` (persons, organisations, places, dates, amounts);
2. the text and the keyphrases -> ``{questions}`` (closed questions the text answers with "1");
3. the summary and the questions -> ``{answers}`` (one ``"1"`` / ``"0"`` per question: can the summary
   answer it?).

The frozen verdicts (``verdicts.summary_score``, one object) hold the judge's three replies:
``keyphrases`` and ``questions`` (strings) and ``answers`` (0/1 labels; the judge's script writes Ragas's
literal ``"1"`` / ``"0"`` for 0, 1, false and true, any other value as given).

Reference, exact:

- QA score = |{i < |questions| : answers[i] = 1}| / |questions|: the share of the generated questions the
  summary answers; undefined (``no_questions``) when the judge generated no question. A non-0/1 answer is
  refused.
- conciseness = 1 - min(|summary|, |text|) / |text| (lengths in code points, as Python's ``len``);
  undefined (``empty_reference_text``) when the text is empty.
- ``summary_score`` (``length_penalty=True``, the default): QA (1 - c) + conciseness c with the
  coefficient c (``coeff``, default 0.5; a configured coefficient is read as the decimal written, 0.3 =
  3/10). ``summary_score_qa`` (``length_penalty=False``): the QA score.

Ragas 0.4.3 (both APIs), recomputed as alternatives:

- ``epsilon``: conciseness is ``1 - min(len(summary), len(text)) / (len(text) + 1e-10)``, so a summary
  as long as the text or longer scores a little above 0 and every score with the length penalty sits a
  hair above the exact value;
- variant ``answers_returned``: the QA score divides the "1" answers by the answers the judge returned
  (``correct / len(answers)``), not by the questions: a question left unanswered counts nowhere, an
  answer beyond the questions counts; with no answer at all both classes raise ZeroDivisionError;
- variant ``no_penalty_still_weighted`` (legacy only, ``length_penalty=False``): the legacy class still
  multiplies the QA score by (1 - coeff) (``scores.get("conciseness_score", 0) * coeff`` adds 0), so the
  default scores half the QA share; the collections class returns the QA share;
- variant ``empty_text_concise`` (legacy only): an empty text has conciseness ``1 - 0/1e-10 = 1.0``
  (the collections class raises ValueError on empty or whitespace-only contexts, and on an empty or
  whitespace-only summary).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.agent_goal import binary
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
    ratio_text,
)

KEY = "summary_score"
EPS = 1e-10
DEFAULT_COEFF = 0.5
VARIANTS = {
    "answers_returned": ("Ragas divides the \"1\" answers by the answers the judge returned, not by the "
                         "questions it generated (correct / len(answers))"),
    "no_penalty_still_weighted": ("the legacy SummarizationScore with length_penalty=False still multiplies "
                                  "the QA score by (1 - coeff)"),
    "empty_text_concise": "the legacy SummarizationScore scores an empty text's conciseness 1 - 0/1e-10 = 1.0",
}


def _decimal(coeff: float) -> Fraction:
    """The coefficient as the decimal written (0.3 = 3/10), not the binary double."""
    return Fraction(repr(float(coeff)))


def _answer_is_one(value: Any) -> bool:
    """Ragas's reading of one answer: ``a.lower() == "1"`` on the reply's literal ("1" for 1 and true)."""
    literal = str(int(value)) if binary(value) is not None else value
    return isinstance(literal, str) and literal.lower() == "1"


def ragas_float(answers: Sequence[Any], text_length: int, summary_length: int, length_penalty: bool,
                coeff: float, legacy: bool) -> float | None:
    """Ragas's float evaluation (both APIs; ``legacy`` only matters without the length penalty): None where
    it raises (no answer: ZeroDivisionError)."""
    if not answers:
        return None
    qa = sum(1 for a in answers if _answer_is_one(a)) / len(answers)
    if length_penalty:
        conciseness = 1 - min(summary_length, text_length) / (text_length + EPS)
        return qa * (1 - coeff) + conciseness * coeff
    if legacy:
        return qa * (1 - coeff) + 0 * coeff
    return qa


def summary_outcome(metric: str, length_penalty: bool, coeff: float, case: Case) -> ReferenceOutcome:
    verdict = case.verdicts[KEY][0]
    questions, answers = list(verdict["questions"]), list(verdict["answers"])
    text = "\n".join(case.reference_contexts or ())
    summary = case.response or ""
    counted = answers[:len(questions)]
    ones = sum(1 for a in counted if binary(a) == 1)
    details: dict[str, Any] = {
        "keyphrases": list(verdict["keyphrases"]), "questions": questions, "answers": answers,
        "text_length": len(text), "summary_length": len(summary), "length_penalty": length_penalty,
        "coeff": coeff, "answered": ones, "variants": VARIANTS,
        "ragas_semantics": {"epsilon": "Ragas divides the summary length by (len(text) + 1e-10) in the "
                            "conciseness score"}}
    denominator = ("questions generated (QA); the text length (conciseness)" if length_penalty
                   else "questions generated")
    bad = [(i, a) for i, a in enumerate(answers) if binary(a) is None]
    if bad:
        i, value = bad[0]
        coerced = (ragas_float(answers, len(text), len(summary), length_penalty, coeff, False)
                   if all(isinstance(a, str) or binary(a) is not None for a in answers) else None)
        return ReferenceOutcome(metric, None, None,
                                f"verdicts.{KEY}[0].answers[{i}] must be 0 or 1, got {value!r} (Ragas counts "
                                "an answer whose text is \"1\")",
                                {} if coerced is None else {"coercion": coerced}, details, denominator)
    # Ragas's float (both APIs; the legacy class's without the length penalty), each under the one semantics
    # that makes it differ from the exact value, named; None where Ragas raises (no answer)
    collections = ragas_float(answers, len(text), len(summary), length_penalty, coeff, False)
    legacy = ragas_float(answers, len(text), len(summary), length_penalty, coeff, True)
    alternatives: dict[str, float | Fraction | None] = {}
    if length_penalty and not text:
        if collections is not None:
            alternatives["variant:empty_text_concise"] = collections
    elif len(answers) != len(questions) and collections is not None:
        alternatives["variant:answers_returned"] = collections
    if not length_penalty and legacy is not None:
        alternatives["variant:no_penalty_still_weighted"] = legacy
    details["ragas_float"] = collections
    if not questions:
        return ReferenceOutcome(metric, None, "no_questions", None, alternatives, details, denominator)
    qa = Fraction(ones, len(questions))
    details["qa_score"] = qa
    if not length_penalty:
        return ReferenceOutcome(metric, qa, None, None, alternatives, details, denominator)
    if not text:
        return ReferenceOutcome(metric, None, "empty_reference_text", None, alternatives, details, denominator)
    conciseness = 1 - Fraction(min(len(summary), len(text)), len(text))
    c = _decimal(coeff)
    details["conciseness"] = conciseness
    value = qa * (1 - c) + conciseness * c
    if len(answers) == len(questions):
        alternatives["epsilon"] = collections
    return ReferenceOutcome(metric, value, None, None, alternatives, details, denominator)


def _as_given(labels: Sequence[int]) -> float:
    """The QA share with the answers taken as given (an answer counts when it is 1), as both APIs read the
    same reply; the pairing reads ``details["labels"]``, which these outcomes do not set (both APIs get the
    same reply text, so no path coerces what the other does not)."""
    return sum(1 for v in labels if v == 1) / len(labels) if labels else float("nan")


# --------------------------------------------------------------------------- fuzz and explain

_FACTS = ("Ada Lovelace met Charles Babbage in London in 1833.",
          "The Eiffel Tower opened in Paris in 1889 and cost 7.8 million francs.",
          "Acme Corp grew revenue by 12% to $4 billion in 2023.",
          "The treaty was signed in Vienna on 9 June 1815.",
          "Marie Curie won the Nobel Prize in 1903 and again in 1911.")


def _summary_verdict(keyphrases: Sequence[str], questions: Sequence[str], answers: Sequence[Any]) -> list[dict]:
    return [{"keyphrases": list(keyphrases), "questions": list(questions), "answers": list(answers)}]


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    """The case's own reference_contexts (the draw's, as the string metrics read them: one letter repeated per
    context, possibly none) as the text. The judge's keyphrases and questions are a function of the text alone
    (a fixed generator seeded by it): evaluate() scores every case with one judge answering by content, and two
    cases may hold the same text. The summary carries a token of the case, so its answers are its own."""
    rng = draw.rng
    contexts = list(draw.reference_contexts)
    text = "\n".join(contexts)
    by_text = random.Random(f"summary-fuzz:{text}")
    keyphrases = [f"keyphrase {j} of the text" for j in range(by_text.choice((0, 1, 2, 3, 4)))]
    n = by_text.choice((0, 1, 2, 2, 3, 3, 4, 5)) if keyphrases else by_text.choice((0, 1))
    questions = [f"Does the text state fact {j} ({len(text)} characters)?" for j in range(n)]
    token = f"{rng.getrandbits(40):010x}"
    shape = rng.random()
    body = (text + text if shape < 0.1                       # longer than the text
            else text if shape < 0.15                        # as long as the text
            else text[:rng.randint(0, max(len(text) - 1, 0))])
    summary = f"{body} (summary {token})"
    returned = n + (rng.choice((-1, 1)) if rng.random() < 0.1 and n else 0)  # a judge that answers too few / many
    answers = [rng.choice((0, 1, 1, True, False)) for _ in range(max(returned, 0))]
    return {"reference_contexts": contexts, "response": summary,
            "verdicts": {KEY: _summary_verdict(keyphrases, questions, answers)}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    """LABELS: the judge's answer to each generated question (1,0,1: three questions, the second not
    answered by the summary)."""
    answers = list(given.labels)
    questions = [f"Does the text state fact {i + 1}?" for i in range(len(answers))]
    text = " ".join(_FACTS[:3])
    return {"reference_contexts": [text], "response": text[: len(text) // 3],
            "verdicts": {KEY: _summary_verdict(["Ada Lovelace", "Paris", "Acme Corp"], questions, answers)}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d: dict[str, Any] = dict(reference.details)
    quantities = [Quantity(f"{reference.metric} (exact)", reference.number),
                  Quantity("questions", len(d["questions"])), Quantity("answered (1)", d["answered"]),
                  Quantity("text length", d["text_length"]), Quantity("summary length", d["summary_length"]),
                  Quantity("Ragas float", d.get("ragas_float"))]
    if reference.refused is not None:
        return quantities, [f"the reference refuses the verdicts: {reference.refused}"]
    formulas = [f"QA = {ratio_text(d['answered'], len(d['questions']), 'no_questions')}"]
    if d["length_penalty"]:
        formulas.append(f"conciseness = 1 - min({d['summary_length']}, {d['text_length']}) / {d['text_length']}"
                        if d["text_length"] else "conciseness: undefined (empty_reference_text)")
        formulas.append(f"score = QA (1 - {d['coeff']}) + conciseness {d['coeff']}")
    formulas.append("Ragas: correct / len(answers); 1 - min(len(summary), len(text)) / (len(text) + 1e-10); "
                    "legacy without the length penalty: QA (1 - coeff)")
    return quantities, formulas


RAGAS_MODULE = "ragas.metrics._summarization"
METRICS = {"summary_score": True, "summary_score_qa": False}


def _configure(length_penalty: bool) -> Callable[[Mapping[str, Any]], Callable[[Case], ReferenceOutcome] | None]:
    """Options as data: ``summary_score`` reads the configurations with the length penalty (any coeff),
    ``summary_score_qa`` those without."""
    def configure(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome] | None:
        if bool(options.get("length_penalty", True)) != length_penalty:
            return None
        name = "summary_score" if length_penalty else "summary_score_qa"
        coeff = float(options.get("coeff", DEFAULT_COEFF))
        return lambda case: summary_outcome(name, length_penalty, coeff, case)
    return configure


def _spec(name: str, length_penalty: bool) -> MetricSpec:
    targets = RagasTargets(("SummarizationScore",), ("SummaryScore",), RAGAS_MODULE,
                           options=() if length_penalty else (("length_penalty", False),), judge=KEY)
    return MetricSpec(
        name=name,
        reference_on=f"verdicts.{KEY} (keyphrases, questions, the judge's 0/1 answer per question), "
                     "reference_contexts (the text) and response (the summary)",
        ragas=targets,
        fields_read=("reference_contexts", "response"),
        denominator=("questions generated (QA); the text length (conciseness)" if length_penalty
                     else "questions generated"),
        undefined_policy=("None ('no_questions') when the judge generated no question (Ragas: ZeroDivisionError "
                          "with no answer, else the answers returned)"
                          + ("; ('empty_reference_text') when the text is empty (legacy: conciseness 1.0, "
                             "collections: ValueError)" if length_penalty else "")
                          + ". Non-0/1 answers are refused."),
        compute=functools.partial(summary_outcome, name, length_penalty, DEFAULT_COEFF),
        requires=(f"verdicts.{KEY}", "reference_contexts"),
        verdicts=Verdicts(KEY, "claims", None),
        as_given=_as_given,
        fuzz_inputs=_fuzz,
        explain=ExplainAdapter(
            command=name.replace("_", "-"), takes="labels",
            inputs_help="LABELS (the judge's 0/1 answer to each generated question: can the summary answer it?)",
            targets=targets.ids(), case_inputs=_explain_inputs, quantities=_quantities),
        configure=_configure(length_penalty))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(name, penalty) for name, penalty in METRICS.items())
