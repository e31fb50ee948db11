"""Answer (response) relevancy: how well questions generated back from the response match the user's question.

The judge is asked ``strictness`` times (n samples of one prompt) to write a question the response
answers, each with a ``noncommittal`` flag (1: the response is evasive, "I don't know"). The documented
definition (Ragas docs, "Response Relevancy") is the mean cosine similarity

    AR = (1/N) * sum_i cos(E(q_i), E(user_input))            (N = generated questions, default 3)

and a noncommittal response scores 0 (Ragas's prompt; the original Ragas code zeroed the score when *any*
sample flagged the response, as the upstream fix proposal ragas#2343 does again). So the reference is

    AR = 0 if any sample is flagged noncommittal, else the mean cosine above,

with the cosines from the exact floats in 50-digit decimals (``semantic_similarity.cosine``). A sample
whose question is the empty string is no question (the judge failed): it is left out with its flag.
Denominator: N, the non-empty generated questions among the first ``strictness`` samples. Undefined
policy: no question (``no_questions``); a zero vector for the user input or a kept question
(``zero_embedding``: the mean is undefined, and 0 x undefined stays undefined, also when noncommittal).
A text without a frozen vector is refused, naming it; so are non-0/1 flags (Ragas: pydantic int, then
truthiness: alternative ``coercion``) and fewer samples than ``strictness``.

Case format: ``verdicts.answer_relevancy`` is the judge's samples in order, ``{"statement": generated
question, "noncommittal": 0 | 1}``; the case's ``embeddings`` give a vector for the user input and for
each question.

Ragas 0.4.3 (legacy ``ResponseRelevancy`` / ``AnswerRelevancy``: one ``generate(n=strictness)`` call;
collections ``AnswerRelevancy``: ``strictness`` separate calls) computes ``cos.mean() * int(not
np.all(noncommittal))`` in doubles. Named alternatives:

- ``rounding``: that float evaluation of the defined value;
- ``variant:noncommittal_all``: only *all* samples flagged noncommittal zero the score (``np.all``): one
  evasive sample of three leaves the mean cosine (ragas#2326);
- ``variant:empty_questions_kept``: legacy only: empty questions stay in the mean (their text is
  embedded); only all-empty gives NaN. (Collections drops them; none left gives 0.0.)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.labels import is_binary_label, ragas_labels
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.semantic_similarity import cosine
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
)

KEY = "answer_relevancy"
FIELDS = ("user_input", "response")
DEFAULT_STRICTNESS = 3

# metric name -> (strictness, target suffix naming the configuration)
CONFIGS: dict[str, tuple[int, tuple[tuple[str, object], ...]]] = {
    "answer_relevancy": (DEFAULT_STRICTNESS, ()),
    "answer_relevancy_strictness_1": (1, (("strictness", 1),)),
}

VARIANTS = {
    "noncommittal_all": ("Ragas zeroes the score only when every sample is flagged noncommittal "
                         "(np.all): a partly evasive response keeps its mean cosine"),
    "empty_questions_kept": ("legacy ResponseRelevancy keeps empty generated questions in the mean (their "
                             "text is embedded)"),
}
FLOAT_PATH = "Ragas evaluates dot / (|q_i| |q|) and the mean in doubles (numpy): recomputing that float evaluation"


def samples(case: Case, strictness: int, field: str = f"verdicts.{KEY}") -> list[tuple[str, object]]:
    """The first ``strictness`` samples ``(question, noncommittal)``; HarnessInputError naming the field for
    a bad shape or too few samples."""
    given = case.verdicts[KEY]
    if not isinstance(given, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of samples", field=field, value=given)
    out = []
    for i, item in enumerate(given):
        if not isinstance(item, Mapping) or not isinstance(item.get("statement"), str) or "noncommittal" not in item:
            raise HarnessInputError(f"{field}[{i}]: expected {{'statement': generated question, 'noncommittal': "
                                    f"0|1}}, got {item!r}", field=f"{field}[{i}]", value=item)
        out.append((item["statement"], item["noncommittal"]))
    if len(out) < strictness:
        raise HarnessInputError(f"{field}: {len(out)} samples given; strictness {strictness} asks the judge for "
                                f"{strictness}", field=field, value=len(out))
    return out[:strictness]


def float_tolerance(dimensions: int) -> float:
    """The absolute error a doubles evaluation of cosines (|cos| <= 1), their mean and a blend may carry:
    4 (d + 16) units of 2^-52 for d-dimensional vectors (stated, not fitted: a result near 0 does not make
    the rounding error of its cosines smaller)."""
    return 4 * (dimensions + 16) * sys.float_info.epsilon


def mean_cosine(question: Sequence[float], generated: Sequence[Sequence[float]]) -> Fraction | None:
    """(1/N) sum cos(E(q_i), E(q)), exact up to the 20-digit cosines; None for N = 0 or a zero vector."""
    if not generated:
        return None
    cosines = [cosine(g, question) for g in generated]
    if any(c is None for c in cosines):
        return None
    return sum(cosines, Fraction(0)) / len(cosines)  # type: ignore[arg-type]


def ragas_relevancy(question: Sequence[float], generated: Sequence[Sequence[float]], flags: Sequence[int]) -> float:
    """``cos.mean() * int(not np.all(flags))`` with Ragas's numpy operations (NaN for a zero norm; plain
    doubles without numpy)."""
    try:
        import numpy as np
    except ImportError:
        qn = math.sqrt(sum(x * x for x in question))
        cosines = []
        for g in generated:
            den = math.sqrt(sum(x * x for x in g)) * qn
            dot = sum(x * y for x, y in zip(g, question, strict=True))
            cosines.append(dot / den if den else math.nan)
        return (sum(cosines) / len(cosines)) * int(not all(flags))

    q = np.asarray(question, dtype=float).reshape(1, -1)
    g = np.asarray(generated, dtype=float).reshape(len(generated), -1)
    with np.errstate(all="ignore"):
        norm = np.linalg.norm(g, axis=1) * np.linalg.norm(q, axis=1)
        cos = np.dot(g, q.T).reshape(-1) / norm
        return float(cos.mean() * int(not np.all(flags)))


def _refused(metric: str, why: str, details: dict[str, object],
             alternatives: dict[str, float | Fraction | None] | None = None) -> ReferenceOutcome:
    return ReferenceOutcome(metric, None, None, why, alternatives or {}, details, "N generated questions")


def answer_relevancy_outcome(metric: str, strictness: int, case: Case) -> ReferenceOutcome:
    """The reference outcome on ``case`` (module docstring)."""
    field = f"verdicts.{KEY}"
    try:
        drawn = samples(case, strictness, field)
    except HarnessInputError as err:  # e.g. fewer samples than strictness: no value to compare with
        return _refused(metric, str(err), {"strictness": strictness, "error_reason": "samples"})
    kept = [(q, flag) for q, flag in drawn if q]
    details: dict[str, object] = {"strictness": strictness, "questions": tuple(q for q, _ in drawn),
                                  "labels": tuple(flag for _, flag in drawn), "kept": len(kept)}
    table = case.embeddings or {}
    needed = [case.user_input] + [q for q, _ in kept]
    missing = [t for t in dict.fromkeys(needed) if t not in table]
    if missing:
        return _refused(metric, f"no frozen embedding (case key embeddings) for the text(s) {missing}",
                        {**details, "error_reason": "embeddings"})
    question_vec = table[case.user_input]
    vectors = [table[q] for q, _ in kept]
    if any(len(v) != len(question_vec) for v in vectors):
        return _refused(metric, "the embeddings of the user input and the generated questions have different "
                        "lengths", {**details, "error_reason": "embeddings"})
    bad = [flag for _, flag in drawn if not is_binary_label(flag)]
    if bad:
        coerced = ragas_labels([flag for _, flag in kept])
        alternatives: dict[str, float | Fraction | None] = {}
        if coerced is not None and kept:
            alternatives["coercion"] = ragas_relevancy(question_vec, vectors, coerced)
        return _refused(metric, f"non-binary noncommittal flag {bad[0]!r} in {field}: flags must be 0 or 1 "
                        "(booleans allowed)", details, alternatives)
    flags = [int(flag) for _, flag in kept]
    mean = mean_cosine(question_vec, vectors)
    noncommittal = any(flags)
    details.update(mean_cosine=mean, noncommittal=noncommittal)
    if mean is None:
        value, reason = None, ("no_questions" if not kept else "zero_embedding")
    else:
        value, reason = (Fraction(0) if noncommittal else mean), None
    alternatives = {}
    if kept:
        ragas_kept = ragas_relevancy(question_vec, vectors, flags)
        if value is not None:
            alternatives["rounding"] = ragas_relevancy(question_vec, vectors, [1] * len(flags)) if noncommittal \
                else ragas_kept
        if noncommittal and not all(flags):
            alternatives["variant:noncommittal_all"] = ragas_kept
    if kept and len(kept) < len(drawn) and "" in table and len(table[""]) == len(question_vec):
        everything = [table[q] for q, _ in drawn]
        alternatives["variant:empty_questions_kept"] = ragas_relevancy(
            question_vec, everything, [int(flag) for _, flag in drawn])
    details["ragas_semantics"] = {"rounding": FLOAT_PATH}
    details["variants"] = dict(VARIANTS)
    details["float_tolerance"] = float_tolerance(len(question_vec))
    return ReferenceOutcome(metric, value, reason, None, alternatives, details, "N generated questions")


def _as_given(labels: Sequence[int]) -> float:
    """Not used for pairing: both APIs read the flags through the same int field."""
    return sum(labels) / len(labels) if labels else math.nan


# -- fuzz and explain --------------------------------------------------------------------------------
FUZZ_QUESTION = "fuzz user question text"


def _vector(rng: Any, size: int) -> list[float]:
    if rng.random() < 0.03:
        return [0.0] * size
    return [float(rng.randint(-2, 3)) for _ in range(size)]


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    """A user input and questions of the case's own (questions stay unique across cases) and three samples:
    empty questions, repeated questions, none / some / all noncommittal, zero vectors now and then."""
    rng = draw.rng
    size = rng.randint(1, 5)
    tag = f"{rng.getrandbits(48):012x}"  # texts of this case only: evaluate() embeds every case with one model
    question = f"{FUZZ_QUESTION} {tag}"
    embeddings = {question: _vector(rng, size)}
    nc_rate = rng.choice((0.0, 0.0, 0.3, 1.0))
    generated = []
    for j in range(DEFAULT_STRICTNESS):
        text = "" if rng.random() < 0.04 else f"fuzz generated question {tag} {j}"
        if text and rng.random() < 0.2:  # the judge repeats a question
            text = f"fuzz generated question {tag} 0"
        embeddings.setdefault(text, _vector(rng, size))
        generated.append({"statement": text, "noncommittal": int(rng.random() < nc_rate)})
    return {"user_input": question, "embeddings": embeddings, "verdicts": {KEY: generated}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    """LABELS: one noncommittal flag per generated question (the questions get vectors [1, i], the user
    input [1, 0])."""
    flags = list(given.labels) or [0, 0, 0]
    while len(flags) < DEFAULT_STRICTNESS:
        flags.append(0)
    questions = [f"Synthetic generated question #{i}" for i in range(1, len(flags) + 1)]
    embeddings = {"Synthetic user question": [1.0, 0.0]}
    embeddings.update({q: [1.0, float(i)] for i, q in enumerate(questions)})
    return {"user_input": "Synthetic user question", "embeddings": embeddings,
            "verdicts": {KEY: [{"statement": q, "noncommittal": f} for q, f in zip(questions, flags, strict=True)]}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    quantities = [Quantity("value (exact)", reference.number),
                  Quantity("mean cosine", d.get("mean_cosine")),  # type: ignore[arg-type]
                  Quantity("questions kept (N)", d.get("kept"))]  # type: ignore[arg-type]
    quantities += [Quantity(k, v if v is None or isinstance(v, Fraction) else float(v))
                   for k, v in reference.alternatives.items()]
    formulas = ["AR = (1/N) sum cos(E(q_i), E(user_input)); 0 when any sample is flagged noncommittal "
                "(Ragas: only when all are)"]
    if reference.refused is not None:
        formulas.append(f"the reference refuses the input: {reference.refused}")
    elif reference.value is None:
        formulas.append(f"undefined ({reference.undefined_reason})")
    return quantities, formulas


def _spec(name: str, strictness: int, options: tuple[tuple[str, object], ...]) -> MetricSpec:
    ragas = RagasTargets(("ResponseRelevancy", "AnswerRelevancy"), ("AnswerRelevancy",),
                         "ragas.metrics._answer_relevance", options, judge="answer_relevancy", embeddings=True)
    return MetricSpec(
        name=name,
        reference_on=(f"verdicts.{KEY} (generated questions with noncommittal flags, first {strictness}) and the "
                      "frozen embeddings of the user input and each question"),
        ragas=ragas,
        fields_read=FIELDS,
        denominator=f"N: the non-empty generated questions among the first {strictness} samples",
        undefined_policy=("None ('no_questions') when no question is generated; None ('zero_embedding') for a zero "
                          "vector (also when noncommittal); 0 when any sample is noncommittal. Ragas: NaN for a "
                          "zero vector and (legacy) for all-empty questions, 0.0 (collections) for no question; "
                          "zeroes only when all samples are noncommittal."),
        compute=lambda case, _n=name, _s=strictness: answer_relevancy_outcome(_n, _s, case),
        requires=(f"verdicts.{KEY}", "embeddings"),
        verdicts=Verdicts(KEY, "claims", "noncommittal"),
        as_given=_as_given,
        fuzz_inputs=_fuzz,
        explain=ExplainAdapter(
            command=name.replace("_", "-"), takes="labels",
            inputs_help=("LABELS (one 0/1 noncommittal flag per generated question; vectors: user input [1, 0], "
                         "question i [1, i])"),
            targets=ragas.ids()[:1], case_inputs=_explain_inputs, quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(name, *config) for name, config in CONFIGS.items())
