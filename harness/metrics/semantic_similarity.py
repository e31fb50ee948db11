"""SemanticSimilarity on frozen embeddings: cosine similarity of the reference's and the response's vectors.

The case gives the embedding model's output (``embeddings``: text -> vector); the probe's embedding
model answers from it by content (``harness/probe/probe_embeddings_stub.py``), so Ragas's own code
path runs offline. Two metrics, one per configuration of the class:

- ``semantic_similarity`` (``threshold=None``): cos(e_ref, e_resp) = e_ref . e_resp / (|e_ref| |e_resp|)
  of the exact values of the given floats, kept exact: the dot product and the squared norms are Fractions
  and the cosine sign(dot) sqrt(dot^2 / (|e_ref|^2 |e_resp|^2)) (``exact_cosine``); reported exactly when
  rational, else to 40 significant digits with the exact root under ``details["exact_root"]``, against
  which the classifier decides identity and the rounding bound with no tolerance of its own; undefined
  for a zero vector (Ragas: NaN).
- ``semantic_similarity_threshold`` (``threshold=0.5``): 1 if that cosine is >= 0.5 (decided exactly), else 0. Ragas
  compares its *float* cosine (normalise, then dot, in doubles) with the threshold, so a pair whose
  cosine is exactly 0.5 (``[1, 1, 0, 0]`` and ``[1, 0, 1, 0]``) comes out 0.4999999999999999 and
  scores 0: the named variant ``threshold_on_float_cosine``.

Options as data: a case may configure the class (``"targets": {"SemanticSimilarity": {"threshold": t}}``):
``threshold`` null is the cosine (``semantic_similarity``), a number t is 1 if the cosine is >= t, else 0
(``semantic_similarity_threshold`` at t). Ragas tests the threshold for truth (``if self.threshold:``),
so ``threshold=0.0`` returns the cosine itself, not 1 or 0: the named variant ``threshold_zero_is_unset``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.roots import SignedRoot
from ragas_compat.metrics.spec import ExplainAdapter, ExplainInput, FuzzDraw, MetricSpec, Quantity, RagasTargets
from ragas_compat.metrics.text_similarity import shared_texts

FIELDS = ("reference", "response")
THRESHOLD = Fraction(1, 2)
IDS_HELP = ("--retrieved JSON-LIST --reference JSON-LIST: the response's and the reference's embedding vectors "
            "(e.g. --retrieved '[1, 0, 1, 0]' --reference '[1, 1, 0, 0]')")
FLOAT_COSINE = ("Ragas normalises both vectors and takes their dot product in doubles (numpy): recomputing that "
                "float evaluation")
FLOAT_THRESHOLD = ("SemanticSimilarity compares its float cosine with the threshold (score >= 0.5): a cosine of "
                   "exactly 0.5 evaluates to 0.4999999999999999 in doubles and scores 0")
ZERO_IS_UNSET = ("SemanticSimilarity applies its threshold only when it is true (if self.threshold:): threshold 0.0 "
                 "is falsy, so it returns the cosine itself instead of 1 (cosine >= 0) or 0")


def exact_cosine(a: Sequence[float], b: Sequence[float]) -> SignedRoot | None:
    """The cosine of the exact values of two float vectors, kept exact (None when either is zero): the dot
    product and the squared norms are Fractions, so the cosine is sign(dot) * sqrt(dot^2 / (|a|^2 |b|^2)), a
    signed root of a rational (``ragas_compat.metrics.roots``): compared with any rational, and so with a
    threshold or a float and its rounding bound, exactly."""
    fa, fb = [Fraction(x) for x in a], [Fraction(x) for x in b]
    dot = sum((x * y for x, y in zip(fa, fb, strict=True)), Fraction(0))
    na, nb = sum(x * x for x in fa), sum(y * y for y in fb)
    if na == 0 or nb == 0:
        return None
    return SignedRoot((dot > 0) - (dot < 0), dot * dot / (na * nb))


def cosine(a: Sequence[float], b: Sequence[float]) -> Fraction | None:
    """The cosine of the exact values of two float vectors as a Fraction (None when either is zero): exact when
    it is rational (1/2 for [1, 1, 0, 0] and [1, 0, 1, 0]), else within 10^-40 relative (``exact_cosine`` keeps
    it exact). The one cosine of every embedding metric (SemanticSimilarity, AnswerCorrectness, ResponseRelevancy)."""
    root = exact_cosine(a, b)
    return None if root is None else root.approximation()


def cosine_in_doubles(a: Sequence[float], b: Sequence[float]) -> float:
    """Ragas's evaluation: each vector divided by its norm, then the dot product, with numpy's
    operations when numpy is importable (its dot product's summation order is numpy's own; near 0
    only the same operations give the same float), else in plain Python doubles."""
    try:
        import numpy as np
    except ImportError:
        na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
        return sum((x / na) * (y / nb) for x, y in zip(a, b, strict=True))
    va, vb = np.array(a), np.array(b)
    with np.errstate(all="ignore"):
        similarity = (va / np.linalg.norm(va, keepdims=True)) @ (vb / np.linalg.norm(vb, keepdims=True)).T
    return float(similarity.flatten().item())


def cosine_float_tolerance(dimensions: int) -> float:
    """The absolute error ``cosine_in_doubles`` may carry against the exact cosine of d-dimensional vectors:
    each norm (a d-term sum of squares, a square root) and each of the d divisions leave a component of the
    unit vector within (d + 3)/2 units of 2^-53 of its value (relative), and the d-term dot product adds d
    more; with |u . v| <= sum |u_i v_i| <= 1 that is at most (2d + 3) 2^-53 to first order, whatever the
    cosine's magnitude (a cosine of exactly 0 comes out near 1e-17). Stated with a factor of 2 for the
    higher-order terms: 2 (d + 2) units of 2^-52. An overflow or a lost term is far beyond it."""
    return 2 * (dimensions + 2) * 2.0 ** -52


def _vectors(case: Case) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    table = case.embeddings or {}
    return table.get(case.reference or " "), table.get(case.response or " ")


def _outcome(case: Case, threshold: bool, at: Fraction = THRESHOLD) -> ReferenceOutcome:
    """The reference on ``case``: the cosine, or (``threshold``) 1 if it is >= ``at``, else 0."""
    name = "semantic_similarity_threshold" if threshold else "semantic_similarity"
    ref, resp = _vectors(case)
    denominator = "|e_reference| |e_response|"
    if ref is None or resp is None or len(ref) != len(resp):
        missing = [t for t, v in (("reference", ref), ("response", resp)) if v is None]
        why = (f"no frozen embedding for the {' and the '.join(missing)} text" if missing
               else f"the vectors have different lengths ({len(ref)} and {len(resp)})")  # type: ignore[arg-type]
        return ReferenceOutcome(name, None, None, why, {}, {"error_reason": "embeddings"}, denominator)
    root = exact_cosine(ref, resp)
    details: dict[str, Any] = {"dimensions": len(ref)}
    if root is None:
        return ReferenceOutcome(name, None, "zero_embedding", None, {}, details, denominator)
    in_doubles = cosine_in_doubles(ref, resp)
    cos = root.approximation()
    details["cosine"] = cos
    if root.rational is None:  # irrational: the classifier compares Ragas's float with the root itself
        details["exact_root"] = root.as_detail()
    if not threshold:
        details["ragas_semantics"] = {"rounding": FLOAT_COSINE}
        details["float_tolerance"] = cosine_float_tolerance(len(ref))
        return ReferenceOutcome(name, cos, None, None, {"rounding": in_doubles}, details, denominator)
    variants: dict[str, str] = {"threshold_on_float_cosine": FLOAT_THRESHOLD.replace("0.5", str(float(at)))}
    alternatives: dict[str, float | Fraction | None] = {
        "variant:threshold_on_float_cosine": Fraction(int(in_doubles >= float(at)))}
    if at == 0:
        variants["threshold_zero_is_unset"] = ZERO_IS_UNSET
        alternatives["variant:threshold_zero_is_unset"] = in_doubles
    details.update({"threshold": at, "variants": variants})
    details.pop("exact_root", None)  # the value is 1 or 0, decided exactly: cos >= at
    return ReferenceOutcome(name, Fraction(int(root.compare(at) >= 0)), None, None, alternatives, details,
                            f"none (1 if the cosine is >= {float(at)}, else 0)")


def _configure(threshold: bool) -> Callable[[Mapping[str, Any]], Callable[[Case], ReferenceOutcome] | None]:
    """Options as data: ``threshold`` null (or absent) is the cosine metric's, a number the threshold metric's."""
    def configure(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome] | None:
        at = options.get("threshold")
        if (at is not None) != threshold:
            return None
        return (lambda case: _outcome(case, False)) if at is None else (lambda case: _outcome(case, True, Fraction(at)))
    return configure


def fuzz_embeddings(draw: FuzzDraw) -> dict[str, Any]:
    """Small integer vectors (cosines such as exactly 0.5 are frequent), sometimes identical or zero, for the
    case's shared texts (``text_similarity.shared_texts``: the string metrics fuzzed in the same case score
    the same texts). Equal texts get one vector (the frozen model answers by content); an empty text is
    embedded as " "."""
    rng = draw.rng
    reference, response = shared_texts(draw)
    size = rng.randint(1, 6)
    ref = [float(rng.randint(-2, 3)) for _ in range(size)]
    resp = list(ref) if rng.random() < 0.1 or (reference or " ") == (response or " ") else [
        float(rng.randint(-2, 3)) for _ in range(size)]
    return {"reference": reference, "response": response,
            "embeddings": {reference or " ": ref, response or " ": resp}}


def _component(x: object) -> float:
    """A vector component from the command line: a number as given (anything else counts as its length)."""
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else float(len(str(x)))


def explain_vectors(given: ExplainInput) -> dict[str, Any]:
    return {"reference": "explain reference text", "response": "explain response text",
            "embeddings": {"explain reference text": [_component(x) for x in given.reference],
                           "explain response text": [_component(x) for x in given.retrieved]}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    cos = reference.details.get("cosine")
    quantities = [Quantity(reference.metric, reference.value), Quantity("cosine (exact)", cos)]  # type: ignore[arg-type]
    quantities += [Quantity(k, v if v is None or isinstance(v, Fraction) else float(v))  # type: ignore[arg-type]
                   for k, v in reference.alternatives.items()]
    return quantities, [f"cos = e_ref . e_resp / (|e_ref| |e_resp|) = {cos}"]


def _spec(threshold: bool) -> MetricSpec:
    name = "semantic_similarity_threshold" if threshold else "semantic_similarity"
    # AnswerSimilarity: the legacy alias (a subclass named answer_similarity whose _ascore calls SemanticSimilarity's)
    ragas = RagasTargets(("SemanticSimilarity", "AnswerSimilarity"), ("SemanticSimilarity",),
                         "ragas.metrics._answer_similarity",
                         (("threshold", float(THRESHOLD)),) if threshold else (), embeddings=True)
    return MetricSpec(
        name=name,
        reference_on=("cosine of the frozen embeddings of reference and response" + (", >= 0.5 (1 or 0)" if threshold
                                                                                     else "")),
        ragas=ragas, fields_read=FIELDS,
        denominator="none (1 if the cosine is >= 0.5, else 0)" if threshold else "|e_reference| |e_response|",
        undefined_policy=("None ('zero_embedding') for a zero vector (Ragas: NaN); a text without a frozen embedding "
                          "is refused (Ragas: LookupError from the frozen model)."),
        compute=lambda case: _outcome(case, threshold), requires=("embeddings",), fuzz_inputs=fuzz_embeddings,
        explain=ExplainAdapter(command=name.replace("_", "-"), takes="ids", inputs_help=IDS_HELP, targets=ragas.ids(),
                               case_inputs=explain_vectors, quantities=_quantities),
        configure=_configure(threshold))


SPECS: tuple[MetricSpec, ...] = (_spec(False), _spec(True))
