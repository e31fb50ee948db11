"""Context precision profile of one ranked 0/1 label list (Ragas-style AP and its neighbours).

Labels ``v_i`` (rank order, i = 1..K), cumulative hits ``h_i = v_1 + ... + v_i``.

- numerator            = sum_i v_i * h_i / i
- context AP (exact)   = numerator / h_K                 undefined (None) when h_K = 0
- context AP (Ragas)   = numerator / (h_K + 1e-10)       float; 0.0 for all-zero or empty lists
- precision@K          = h_K / K                         undefined when K = 0
- corpus AP            = numerator / R                   (trec_eval AP; undefined when R is absent or 0)
- recall@K             = h_K / R                         (undefined when R is absent or 0)

The context-AP denominator counts only retrieved positives, so it ignores relevant items that
were never retrieved; report it next to recall@K. ``empty_context`` is True when K = 0, which
Ragas's 0.0 cannot tell apart from "every retrieved context was useless".
One pass over the labels: O(K) arithmetic operations. The exact numerator's denominator can
still grow with the lcm of the positive ranks (about K bits), so its terms are added pairwise
(``balanced_sum``); the float path is plain O(K).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from harness.errors import HarnessInputError
from harness.metrics.labels import validate_labels

RAGAS_EPSILON = 1e-10


@dataclass(frozen=True)
class ContextPrecisionProfile:
    """Every quantity derived from one ranked label list (see module docstring for formulas)."""

    retrieved: int                      # K
    relevant_retrieved: int             # h_K
    numerator: Fraction                 # sum_i v_i * h_i / i
    context_ap_exact: Fraction | None   # numerator / h_K; None when h_K = 0
    context_ap_ragas_float: float       # Ragas's float arithmetic, epsilon included
    precision_at_k: Fraction | None     # h_K / K; None when K = 0
    corpus_relevant: int | None         # R
    corpus_ap: Fraction | None          # numerator / R; None when R is None or 0
    recall_at_k: Fraction | None        # h_K / R; None when R is None or 0
    empty_context: bool                 # K == 0

    @property
    def undefined_reason(self) -> str | None:
        """Why ``context_ap_exact`` is None: "empty_retrieval" (K = 0) or "no_relevant_retrieved"."""
        if self.retrieved == 0:
            return "empty_retrieval"
        if self.relevant_retrieved == 0:
            return "no_relevant_retrieved"
        return None


def _validate_corpus_relevant(corpus_relevant: object, relevant_retrieved: int, field: str) -> int | None:
    if corpus_relevant is None:
        return None
    if type(corpus_relevant) is not int:  # bool is not an int here; neither is 4.0
        raise HarnessInputError(
            f"{field}: corpus relevant count R must be an integer, got {corpus_relevant!r}",
            field=field, value=corpus_relevant)
    if corpus_relevant < relevant_retrieved:
        raise HarnessInputError(
            f"{field}: corpus relevant count R = {corpus_relevant} is smaller than the "
            f"{relevant_retrieved} relevant contexts retrieved",
            field=field, value=corpus_relevant)
    return corpus_relevant


def ragas_float_average_precision(labels: Sequence[int]) -> float:
    """Ragas 0.4.3 ``_calculate_average_precision`` float arithmetic on 0/1 ints, in one pass.

    Per-position terms ``(h_i / i) * v_i`` as floats, builtin ``sum()`` over the list of terms,
    then ``/ (h_K + 1e-10)``.
    """
    terms: list[float] = []
    hits = 0
    for i, v in enumerate(labels, start=1):
        hits += v
        terms.append((hits / i) * v)
    return sum(terms) / (hits + RAGAS_EPSILON)


def balanced_sum(values: list[Fraction]) -> Fraction:
    """Exact sum, added pairwise so operand sizes stay balanced: summing one by one makes every
    step pay for the running lcm of all denominators so far (quadratic on random labels)."""
    while len(values) > 1:
        paired = [a + b for a, b in zip(values[0::2], values[1::2])]
        if len(values) % 2:
            paired.append(values[-1])
        values = paired
    return values[0] if values else Fraction(0)


def context_precision_profile(labels: Sequence[object], corpus_relevant: object = None,
                              field: str = "labels", *,
                              corpus_relevant_field: str = "corpus_relevant") -> ContextPrecisionProfile:
    """Profile of a ranked 0/1 label list; see the module docstring for formulas.

    Raises HarnessInputError (naming ``field[i]`` / ``corpus_relevant`` and the value) when a
    label is not 0/1 (booleans allowed) or R is not an int >= the retrieved positives
    (``corpus_relevant_field`` names R in that message).
    """
    values = validate_labels(labels, field)
    whole = 0                          # terms with h_i = i are exactly 1
    fractional: list[Fraction] = []    # the remaining terms h_i / i with h_i < i
    terms: list[float] = []
    hits = 0
    for i, v in enumerate(values, start=1):
        hits += v
        terms.append((hits / i) * v)
        if v:
            if hits == i:
                whole += 1
            else:
                fractional.append(Fraction(hits, i))
    numerator = whole + balanced_sum(fractional)
    ragas_float = sum(terms) / (hits + RAGAS_EPSILON)
    k = len(values)
    r = _validate_corpus_relevant(corpus_relevant, hits, corpus_relevant_field)
    return ContextPrecisionProfile(
        retrieved=k,
        relevant_retrieved=hits,
        numerator=numerator,
        context_ap_exact=numerator / hits if hits else None,
        context_ap_ragas_float=ragas_float,
        precision_at_k=Fraction(hits, k) if k else None,
        corpus_relevant=r,
        corpus_ap=numerator / r if r else None,
        recall_at_k=Fraction(hits, r) if r else None,
        empty_context=k == 0,
    )
