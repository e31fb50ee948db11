"""Answer correctness: factuality of the response's statements against the reference, blended with the
semantic similarity of the two texts.

The judge breaks the response and the reference into statements and classifies them: TP = response
statements the reference supports, FP = response statements it does not support, FN = reference
statements the response does not contain. The documented definition (Ragas docs, "Answer Correctness")
is the weighted average

    AC = (w_f * F + w_s * S) / (w_f + w_s)

- factuality F = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP) (the F-beta of the classification; b = 1:
  TP / (TP + (FP + FN) / 2)), exact ``Fraction`` arithmetic;
- similarity S = cos(e_response, e_reference) of the frozen embeddings (case key ``embeddings``), computed
  from the exact floats with 50-digit decimals (``semantic_similarity.cosine``); a term whose weight is 0
  is not computed (and needs no input).

Denominator: w_f + w_s (and F's (1 + b^2) TP + b^2 FN + FP). Undefined policy: F is 0/0 when the judge
classifies no statement (``zero_statements``); S is undefined for a zero vector (``zero_embedding``); either
makes AC undefined when its weight is non-zero (both: the reason is ``zero_embedding``). A text without a
frozen vector is refused (naming it).

Case format: ``verdicts.answer_correctness`` is a list of statements ``{"statement", "from": "response" |
"reference", "verdict"}``: a response statement with verdict 1 is TP, 0 is FP; a reference statement with
verdict 0 is FN, 1 (the response contains it) is in no class. The probe's judge returns exactly these
TP/FP/FN lists. Verdicts must be 0/1 (booleans allowed).

Ragas 0.4.3 (legacy ``ragas.metrics.AnswerCorrectness``, ``ragas.metrics.collections.AnswerCorrectness``)
computes in floats: ``np.average([F, S], weights=weights)``; legacy S is SemanticSimilarity's (each vector
divided by its norm, then the dot product; a zero vector gives NaN; an empty text is embedded as " "),
collections S is dot / (|a| |b|), 0.0 for a zero vector. Named alternatives the diff recognises:

- ``rounding``: the legacy float evaluation of the defined value (a few ulps from the exact one);
- ``variant:no_statements_as_one``: no statement in either text: both APIs take F = 1.0 without asking
  the classifier ("assume perfect match");
- ``variant:one_side_without_statements_as_one``: collections only: no statement in the response *or* in
  the reference already gives F = 1.0 (the legacy class asks the classifier);
- ``variant:unclassified_as_zero``: legacy only: statements exist but the classification is empty
  (TP = FP = FN = 0): ``fbeta_score`` returns 0.0 for the 0/0;
- ``variant:zero_vector_as_zero_similarity``: collections only: a zero vector gives S = 0.0 (legacy: NaN).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.answer_relevancy import float_tolerance
from ragas_compat.metrics.factual_correctness import ragas_float
from ragas_compat.metrics.labels import is_binary_label, ragas_labels
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.semantic_similarity import cosine, cosine_in_doubles
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
)

KEY = "answer_correctness"
SIDES = ("response", "reference")
FIELDS = ("user_input", "response", "reference")

# metric name -> (weights, beta, target suffix naming the configuration)
CONFIGS: dict[str, tuple[tuple[float, float], float, tuple[tuple[str, object], ...]]] = {
    "answer_correctness": ((0.75, 0.25), 1.0, ()),
    "answer_correctness_factuality": ((1.0, 0.0), 1.0, (("weights", (1.0, 0.0)),)),
}

VARIANTS = {
    "no_statements_as_one": ("the judge found no statement in either text: Ragas takes factuality = 1.0 without "
                             "asking the classifier"),
    "one_side_without_statements_as_one": ("collections AnswerCorrectness takes factuality = 1.0 as soon as the "
                                           "response or the reference has no statement"),
    "unclassified_as_zero": ("legacy AnswerCorrectness: statements exist but TP = FP = FN = 0; fbeta_score "
                             "returns 0.0 for the 0/0"),
    "zero_vector_as_zero_similarity": "collections AnswerCorrectness: a zero embedding vector gives similarity 0.0",
}
FLOAT_PATH = ("Ragas evaluates the blend in doubles (SemanticSimilarity's normalise-then-dot cosine, "
              "np.average with the weights): recomputing that float evaluation")


def vector_of(case: Case, text: str) -> tuple[float, ...] | None:
    """The frozen vector of ``text`` (case key ``embeddings``), None when the case gives none."""
    return (case.embeddings or {}).get(text)


def statement_labels(claims: Sequence[Any], field: str) -> list[tuple[str, object]]:
    """``(from, verdict)`` per statement; HarnessInputError naming ``field[i]`` for a bad shape."""
    from ragas_compat.errors import HarnessInputError

    if not isinstance(claims, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of statements", field=field, value=claims)
    out = []
    for i, claim in enumerate(claims):
        if not isinstance(claim, Mapping) or "verdict" not in claim or claim.get("from") not in SIDES:
            raise HarnessInputError(f"{field}[{i}]: expected a statement with 'from' (response|reference) and "
                                    f"'verdict', got {claim!r}", field=f"{field}[{i}]", value=claim)
        out.append((claim["from"], claim["verdict"]))
    return out


def classification(labelled: Sequence[tuple[str, int]]) -> tuple[int, int, int]:
    """(TP, FP, FN) of 0/1-labelled statements."""
    tp = sum(1 for side, v in labelled if side == "response" and v)
    fp = sum(1 for side, v in labelled if side == "response" and not v)
    fn = sum(1 for side, v in labelled if side == "reference" and not v)
    return tp, fp, fn


def factuality(beta: float, tp: int, fp: int, fn: int) -> Fraction | None:
    """F-beta = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP); None for 0/0."""
    b2 = Fraction(beta) ** 2
    den = (1 + b2) * tp + b2 * fn + fp
    return (1 + b2) * tp / den if den else None


def blend(weights: tuple[float, float], f: Fraction | None, s: Fraction | None) -> Fraction | None:
    """(w_f F + w_s S) / (w_f + w_s); a term with weight 0 is left out; None when a needed term is."""
    wf, ws = Fraction(weights[0]), Fraction(weights[1])
    if (wf and f is None) or (ws and s is None):
        return None
    return (wf * (f or 0) + ws * (s or 0)) / (wf + ws)


# -- Ragas's float evaluations --------------------------------------------------------------------
def legacy_factuality(beta: float, tp: int, fp: int, fn: int, n_response: int, n_reference: int) -> float:
    if n_response == 0 and n_reference == 0:
        return 1.0
    return ragas_float("f1", beta, tp, fp, fn, 0.0)


def collections_factuality(beta: float, tp: int, fp: int, fn: int, n_response: int, n_reference: int) -> float:
    if n_response == 0 or n_reference == 0:
        return 1.0
    precision = (1.0 if fn == 0 else 0.0) if tp + fp == 0 else tp / (tp + fp)
    recall = (1.0 if fp == 0 else 0.0) if tp + fn == 0 else tp / (tp + fn)
    if precision + recall == 0:
        return 0.0
    b2 = beta ** 2
    return (1 + b2) * (precision * recall) / (b2 * precision + recall)


def collections_cosine(response: Sequence[float], reference: Sequence[float]) -> float:
    """dot / (|response| |reference|) with numpy's operations (plain doubles without numpy); 0.0 for a zero
    vector."""
    try:
        import numpy as np
    except ImportError:
        na, nb = math.sqrt(sum(x * x for x in response)), math.sqrt(sum(y * y for y in reference))
        return 0.0 if na == 0 or nb == 0 else sum(x * y for x, y in zip(response, reference, strict=True)) / (na * nb)

    a, b = np.asarray(response, dtype=float).reshape(1, -1), np.asarray(reference, dtype=float).reshape(1, -1)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(a, b.T)[0, 0] / (na[0] * nb[0]))


def np_average(values: tuple[float, float], weights: tuple[float, float]) -> float:
    """``np.average(values, weights=weights)`` as a Python float (NaN propagates)."""
    try:
        import numpy as np
    except ImportError:  # the same operations for two values: sum of products, then / sum of weights
        return (values[0] * weights[0] + values[1] * weights[1]) / (weights[0] + weights[1])

    with np.errstate(all="ignore"):
        return float(np.average(list(values), weights=list(weights)))


def _legacy_similarity(case: Case, weights: tuple[float, float]) -> float | None:
    if weights[1] == 0:
        return 0.0
    table = case.embeddings or {}
    a, b = table.get(case.reference or " "), table.get(case.response or " ")  # SemanticSimilarity's " "
    if a is None or b is None or len(a) != len(b):
        return None
    return cosine_in_doubles(a, b)


def _collections_similarity(case: Case, weights: tuple[float, float]) -> float | None:
    if weights[1] == 0:
        return 0.0
    a, b = vector_of(case, case.response), vector_of(case, case.reference)
    if a is None or b is None or len(a) != len(b):
        return None
    return collections_cosine(a, b)


def _refusal(metric: str, why: str, alternatives: dict[str, float | Fraction | None],
             details: dict[str, object]) -> ReferenceOutcome:
    return ReferenceOutcome(metric, None, None, why, alternatives, details, "w_f + w_s")


def answer_correctness_outcome(metric: str, weights: tuple[float, float], beta: float,
                               case: Case) -> ReferenceOutcome:
    """The reference outcome on ``case`` (module docstring)."""
    field = f"verdicts.{KEY}"
    raw = statement_labels(case.verdicts[KEY], field)
    n_response = sum(1 for side, _ in raw if side == "response")
    n_reference = len(raw) - n_response
    details: dict[str, object] = {"weights": weights, "beta": beta, "response_statements": n_response,
                                  "reference_statements": n_reference,
                                  "labels": tuple(v for _, v in raw)}
    legacy_s, coll_s = _legacy_similarity(case, weights), _collections_similarity(case, weights)
    bad = [v for _, v in raw if not is_binary_label(v)]
    if bad:
        coerced = ragas_labels([v for _, v in raw])
        alternatives: dict[str, float | Fraction | None] = {}
        if coerced is not None and legacy_s is not None:
            tp, fp, fn = classification([(side, c) for (side, _), c in zip(raw, coerced, strict=True)])
            f = legacy_factuality(beta, tp, fp, fn, n_response, n_reference)
            alternatives["coercion"] = np_average((f, legacy_s), weights)
        return _refusal(metric, f"non-binary verdict {bad[0]!r} in {field}: verdicts must be 0 or 1 "
                        "(booleans allowed)", alternatives, details)
    tp, fp, fn = classification([(side, int(v)) for side, v in raw])
    details.update(tp=tp, fp=fp, fn=fn)
    f = factuality(beta, tp, fp, fn) if weights[0] else None
    s: Fraction | None = None
    if weights[1]:
        ref_vec, resp_vec = vector_of(case, case.reference), vector_of(case, case.response)
        missing = [f"the {name} text {text!r}" for name, text, v in
                   (("response", case.response, resp_vec), ("reference", case.reference, ref_vec)) if v is None]
        if missing:
            return _refusal(metric, f"no frozen embedding (case key embeddings) for {' and '.join(missing)}", {},
                            {**details, "error_reason": "embeddings"})
        if len(ref_vec) != len(resp_vec):  # type: ignore[arg-type]
            return _refusal(metric, f"the embeddings of response and reference have different lengths "
                            f"({len(resp_vec)} and {len(ref_vec)})", {},  # type: ignore[arg-type]
                            {**details, "error_reason": "embeddings"})
        s = cosine(resp_vec, ref_vec)  # type: ignore[arg-type]
        details["similarity"] = s
    details["factuality"] = f
    value = blend(weights, f, s)
    reason = None
    if value is None:
        # a zero vector first: Ragas's legacy NaN comes from the similarity, whatever the statements
        reason = "zero_embedding" if weights[1] and s is None else "zero_statements"
    alternatives = {}
    legacy_f = legacy_factuality(beta, tp, fp, fn, n_response, n_reference)
    coll_f = collections_factuality(beta, tp, fp, fn, n_response, n_reference)
    if value is not None and legacy_s is not None:
        alternatives["rounding"] = np_average((legacy_f, legacy_s), weights)
    exact_f = None if f is None else float(f)
    if n_response == 0 and n_reference == 0 and legacy_s is not None:
        alternatives["variant:no_statements_as_one"] = np_average((1.0, legacy_s), weights)
    elif coll_f != exact_f and coll_s is not None and (n_response == 0 or n_reference == 0):
        alternatives["variant:one_side_without_statements_as_one"] = np_average((coll_f, coll_s), weights)
    if f is None and weights[0] and (n_response or n_reference) and legacy_s is not None:
        alternatives["variant:unclassified_as_zero"] = np_average((legacy_f, legacy_s), weights)
    if s is None and weights[1] and coll_s is not None and not math.isnan(coll_s):
        alternatives["variant:zero_vector_as_zero_similarity"] = np_average((coll_f, coll_s), weights)
    details["ragas_semantics"] = {"rounding": FLOAT_PATH}
    details["variants"] = dict(VARIANTS)
    details["float_tolerance"] = float_tolerance(len(ref_vec) if weights[1] else 0)  # type: ignore[arg-type]
    return ReferenceOutcome(metric, value, reason, None, alternatives, details,
                            "w_f + w_s; F: (1 + b^2) TP + b^2 FN + FP")


def _as_given(labels: Sequence[int]) -> float:
    """Not used for pairing (the probe's judge turns verdicts into TP/FP/FN lists for both APIs alike)."""
    return sum(labels) / len(labels) if labels else math.nan


# -- fuzz and explain --------------------------------------------------------------------------------
FUZZ_RESPONSE, FUZZ_REFERENCE = "fuzz response text", "fuzz reference text"


def _vector(rng: Any, size: int) -> list[float]:
    if rng.random() < 0.04:
        return [0.0] * size
    return [float(rng.randint(-2, 3)) for _ in range(size)]


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    n_response, n_reference = rng.choice((0, 1, 1, 2, 3, 5)), rng.choice((0, 1, 2, 2, 3, 5))
    statements = [{"statement": f"fuzz response statement {j}", "from": "response", "verdict": rng.randint(0, 1)}
                  for j in range(n_response)]
    statements += [{"statement": f"fuzz reference statement {j}", "from": "reference",
                    "verdict": rng.randint(0, 1)} for j in range(n_reference)]
    size = rng.randint(1, 5)
    reference = _vector(rng, size)
    response = list(reference) if rng.random() < 0.1 else _vector(rng, size)
    tag = f"{rng.getrandbits(48):012x}"  # texts of this case only: evaluate() embeds every case with one model
    texts = {"response": f"{FUZZ_RESPONSE} {tag}", "reference": f"{FUZZ_REFERENCE} {tag}"}
    return {**texts, "embeddings": {texts["response"]: response, texts["reference"]: reference},
            "verdicts": {KEY: statements}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    """LABELS: one verdict per response statement (TP/FP) and the same per reference statement (1 = the
    response contains it, 0 = FN); --retrieved / --reference: the response's and the reference's vectors."""
    from ragas_compat.metrics.semantic_similarity import explain_vectors

    labels = given.labels or (1,)
    statements = [{"statement": f"Synthetic response statement #{i}", "from": "response", "verdict": v}
                  for i, v in enumerate(labels, start=1)]
    statements += [{"statement": f"Synthetic reference statement #{i}", "from": "reference", "verdict": v}
                   for i, v in enumerate(labels, start=1)]
    vectors = explain_vectors(given) if given.retrieved and given.reference else {
        "reference": "explain reference text", "response": "explain response text",
        "embeddings": {"explain reference text": [1.0, 0.0], "explain response text": [1.0, 1.0]}}
    return {**vectors, "verdicts": {KEY: statements}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    quantities = [Quantity("value (exact)", reference.number)]
    for name in ("tp", "fp", "fn"):
        if name in d:
            quantities.append(Quantity(name.upper(), int(d[name])))  # type: ignore[call-overload]
    quantities += [Quantity("factuality F", d.get("factuality")),  # type: ignore[arg-type]
                   Quantity("similarity S", d.get("similarity"))]  # type: ignore[arg-type]
    quantities += [Quantity(k, v if v is None or isinstance(v, Fraction) else float(v))
                   for k, v in reference.alternatives.items()]
    w = d.get("weights")
    formulas = [f"AC = (w_f F + w_s S) / (w_f + w_s) with weights {w}; F = (1 + b^2) TP / ((1 + b^2) TP + "
                f"b^2 FN + FP), S = cos(e_response, e_reference)"]
    if reference.refused is not None:
        formulas.append(f"the reference refuses the input: {reference.refused}")
    elif reference.value is None:
        formulas.append(f"undefined ({reference.undefined_reason})")
    return quantities, formulas


def _configure(name: str, weights: tuple[float, float]) -> Any:
    """Options as data: ``weights`` (default [0.75, 0.25]) and ``beta`` (default 1.0) of a case's
    configuration; the metric with a similarity term reads every configuration whose similarity weight is
    non-zero, the factuality-only metric those whose similarity weight is 0 (it needs no embeddings)."""
    def configure(options: Mapping[str, Any]) -> Any:
        wanted = tuple(float(w) for w in options.get("weights", CONFIGS["answer_correctness"][0]))
        if (wanted[1] == 0) != (weights[1] == 0):
            return None
        beta = float(options.get("beta", 1.0))
        return lambda case: answer_correctness_outcome(name, wanted, beta, case)  # type: ignore[arg-type]
    return configure


def _spec(name: str, weights: tuple[float, float], beta: float, options: tuple[tuple[str, object], ...]) -> MetricSpec:
    ragas = RagasTargets(("AnswerCorrectness",), ("AnswerCorrectness",), "ragas.metrics._answer_correctness", options,
                         judge="answer_correctness", embeddings=True)
    return MetricSpec(
        name=name,
        reference_on=(f"verdicts.{KEY} (response/reference statements with verdicts: TP/FP/FN)"
                      + (" and the frozen embeddings of response and reference" if weights[1] else "")),
        ragas=ragas,
        fields_read=FIELDS,
        denominator=f"w_f + w_s (weights {list(weights)}); factuality: (1 + b^2) TP + b^2 FN + FP",
        undefined_policy=("None ('zero_statements') when no statement is classified (TP = FP = FN = 0) and the "
                          "factuality weight is non-zero; None ('zero_embedding') for a zero vector when the "
                          "similarity weight is non-zero; a text without a frozen vector is refused. Ragas: "
                          "factuality 1.0 for no statements (collections: for no statement on either side), "
                          "legacy 0.0 for an empty classification; legacy NaN / collections 0.0 similarity for "
                          "a zero vector."),
        compute=lambda case, _n=name, _w=weights, _b=beta: answer_correctness_outcome(_n, _w, _b, case),
        requires=(f"verdicts.{KEY}",) + (("embeddings",) if weights[1] else ()),
        reads=() if weights[1] else ("embeddings",),
        verdicts=Verdicts(KEY, "claims", "verdict"),
        as_given=_as_given,
        fuzz_inputs=_fuzz,
        explain=ExplainAdapter(
            command=name.replace("_", "-"), takes="labels",
            inputs_help=("LABELS (one 0/1 verdict per response statement, reused for the reference statements: "
                         "1 = contained in the response, 0 = FN); the vectors are [1, 0] and [1, 1]"),
            targets=ragas.ids()[:1], case_inputs=_explain_inputs, quantities=_quantities),
        configure=_configure(name, weights))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(name, *config) for name, config in CONFIGS.items())
