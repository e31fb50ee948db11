"""Context precision: average precision over ranked 0/1 labels (Ragas-style AP and its neighbours),
for the LLM-judged labels (with and without reference) and the string-match labels.

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

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.labels import coerce_by_truthiness, is_binary_label, ragas_labels, validate_labels
from ragas_compat.metrics.outcome import ReferenceOutcome, unparseable_reply_outcome
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
            f"{relevant_retrieved} distinct relevant items retrieved",
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
        paired = [a + b for a, b in zip(values[0::2], values[1::2], strict=False)]
        if len(values) % 2:
            paired.append(values[-1])
        values = paired
    return values[0] if values else Fraction(0)


def distinct_reading(values: Sequence[int], items: Sequence[object] | None) -> tuple[int, Fraction] | None:
    """(distinct relevant items retrieved, the AP numerator over distinct items) when some relevant item
    is retrieved more than once (``items``: one identity per label), else None. A corpus item is
    relevant once: a repeat after its first retrieval counts as not relevant (its rank is still spent),
    as trec_eval's AP over documents reads a run."""
    if items is None or len(items) != len(values):
        return None
    seen: set[str] = set()
    hits, terms = 0, []
    for i, (v, item) in enumerate(zip(values, items, strict=True), start=1):
        key = json.dumps(item, sort_keys=True, ensure_ascii=False)
        if v and key not in seen:
            seen.add(key)
            hits += 1
            terms.append(Fraction(hits, i))
    return None if hits == sum(values) else (hits, balanced_sum(terms))


def context_precision_profile(labels: Sequence[object], corpus_relevant: object = None,
                              field: str = "labels", *, corpus_relevant_field: str = "corpus_relevant",
                              items: Sequence[object] | None = None) -> ContextPrecisionProfile:
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
    distinct = distinct_reading(values, items)
    corpus_hits, corpus_numerator = distinct if distinct is not None else (hits, numerator)
    r = _validate_corpus_relevant(corpus_relevant, corpus_hits, corpus_relevant_field)
    return ContextPrecisionProfile(
        retrieved=k,
        relevant_retrieved=hits,
        numerator=numerator,
        context_ap_exact=numerator / hits if hits else None,
        context_ap_ragas_float=ragas_float,
        precision_at_k=Fraction(hits, k) if k else None,
        corpus_relevant=r,
        corpus_ap=corpus_numerator / r if r else None,
        recall_at_k=Fraction(corpus_hits, r) if r else None,
        empty_context=k == 0,
    )


# --------------------------------------------------------------------------- the metrics

AP_DENOMINATOR = "relevant retrieved contexts h_K (Ragas adds 1e-10)"
AP_UNDEFINED = ("None when no retrieved context is relevant (undefined_reason 'no_relevant_retrieved', or "
                "'empty_retrieval' with details.empty_context when nothing was retrieved); Ragas returns 0.0 "
                "there because of the 1e-10 epsilon (alternative 'epsilon'). Non-0/1 labels are refused; "
                "Ragas coerces them by truthiness (alternative 'coercion').")


def ap_outcome(metric: str, labels: Sequence[object], field: str, corpus_relevant: int | None,
               denominator: str, extra: dict[str, object] | None = None,
               items: Sequence[object] | None = None) -> ReferenceOutcome:
    """The AP outcome of a label list: exact AP, the epsilon float as alternative, and the
    truthiness-coerced float when the reference refuses non-0/1 labels. ``items`` (one identity per
    label): when a relevant item is retrieved twice, corpus AP and recall@K count it once and the
    label-level readings (and the context AP over distinct items) are kept beside them (``repeats``)."""
    details: dict[str, object] = {"labels": tuple(labels)}
    details.update(extra or {})
    try:
        profile = context_precision_profile(labels, corpus_relevant, field,
                                            corpus_relevant_field="corpus_relevant_count", items=items)
    except HarnessInputError as err:
        alternatives: dict[str, float | Fraction | None] = {}
        if isinstance(labels, (list, tuple)) and not all(is_binary_label(v) for v in labels):
            coerced = ragas_labels(labels)
            if coerced is not None:  # else Ragas cannot parse a label: no value to expect
                alternatives["coercion"] = ragas_float_average_precision(coerced)
                details["coerced_labels"] = coerced
                details["coercion_exact"] = context_precision_profile(coerced).context_ap_exact
        return ReferenceOutcome(metric, None, None, str(err), alternatives, details, denominator)
    details.update(dataclasses.asdict(profile))
    values = validate_labels(labels, field)
    distinct = distinct_reading(values, items)
    if distinct is not None:
        r = profile.corpus_relevant
        details["repeats"] = {
            "relevant_labels": profile.relevant_retrieved, "distinct_relevant_items": distinct[0],
            "context_ap_distinct": distinct[1] / distinct[0],
            "corpus_ap_label_level": profile.numerator / r if r else None,
            "recall_at_k_label_level": Fraction(profile.relevant_retrieved, r) if r else None,
            "note": ("a relevant item is retrieved more than once: Ragas's context AP counts every repeat "
                     "(a duplicate lifts it), AP over distinct items counts it once"),
        }
    return ReferenceOutcome(metric, profile.context_ap_exact, profile.undefined_reason, None,
                            {"epsilon": profile.context_ap_ragas_float}, details, denominator)


def _verdict_ap(key: str, uses_corpus_relevant: bool) -> Callable[[Case], ReferenceOutcome]:
    """AP over the frozen labels at verdicts.<key>. R (corpus_relevant_count) counts items relevant to
    the *reference* answer, so only the with-reference variant uses it."""
    def outcome(case: Case) -> ReferenceOutcome:
        if case.judge_replies.get(key):
            return unparseable_reply_outcome(key, case.verdicts[key], case.judge_replies[key], AP_DENOMINATOR)
        r = case.corpus_relevant_count if uses_corpus_relevant else None
        return ap_outcome(key, case.verdicts[key], f"verdicts.{key}", r, AP_DENOMINATOR, items=retrieved_items(case))
    return outcome


def retrieved_items(case: Case) -> tuple[object, ...]:
    """The corpus identity of each retrieved context: its ``retrieved_context_ids`` entry when the IDs are
    given (one per context), else its exact text."""
    ids = case.retrieved_context_ids
    return ids if ids is not None and len(ids) == len(case.retrieved_contexts) else case.retrieved_contexts


def string_match_labels(retrieved: Sequence[str], reference: Sequence[str]) -> tuple[int, ...]:
    """Label 1 for each retrieved context that exactly equals some reference context, else 0."""
    wanted = set(reference)
    return tuple(1 if c in wanted else 0 for c in retrieved)


THRESHOLD_INCLUSIVE = "threshold_inclusive"
THRESHOLD_INCLUSIVE_TEXT = ("Ragas labels a retrieved context relevant when its Levenshtein similarity to a reference "
                            "context is >= 0.5 (inclusive; NonLLMContextRecall compares > 0.5): a context exactly half "
                            "similar counts, and the AP over those labels is Ragas's")


def similarity_labels(retrieved: Sequence[str], reference: Sequence[str], inclusive: bool) -> tuple[int, ...]:
    """Ragas's string-similarity labels: 1 when the best Levenshtein similarity (exact) of a retrieved
    context to a reference context is >= 1/2 (``inclusive``) or > 1/2."""
    from ragas_compat.metrics.text_reference import levenshtein_similarity

    half = Fraction(1, 2)
    best = [max((levenshtein_similarity(c, r) for c in reference), default=Fraction(0)) for r in retrieved]
    return tuple(int(b >= half if inclusive else b > half) for b in best)


def _string_match_precision(case: Case) -> ReferenceOutcome:
    labels = string_match_labels(case.retrieved_contexts, case.reference_contexts or ())
    outcome = ap_outcome("context_precision_string_match", labels, "derived string-match labels", None,
                         "retrieved contexts equal to a reference context (Ragas adds 1e-10)",
                         {"label_rule": "exact string equality with some reference_contexts item",
                          "reference_contexts": len(case.reference_contexts or ())})
    reference = case.reference_contexts or ()
    if outcome.refused is None and reference:
        inclusive = similarity_labels(case.retrieved_contexts, reference, inclusive=True)
        if inclusive != similarity_labels(case.retrieved_contexts, reference, inclusive=False):
            # the >= comparison made the difference: name it, with Ragas's value over those labels
            outcome.alternatives["variant:" + THRESHOLD_INCLUSIVE] = ragas_float_average_precision(inclusive)
            outcome.details["variants"] = {THRESHOLD_INCLUSIVE: THRESHOLD_INCLUSIVE_TEXT}
            outcome.details["similarity_labels"] = inclusive
    return outcome


def _ap_quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    """explain: every AP quantity (exact and Ragas's float, P@K, corpus AP, recall@K) with formulas."""
    return ap_quantities(reference, given, uses_corpus_relevant=True)


def ap_quantities(reference: ReferenceOutcome, given: ExplainInput,
                  uses_corpus_relevant: bool) -> tuple[list[Quantity], list[str]]:
    """AP quantities; corpus AP and recall@K only for a metric whose labels R can count."""
    r = given.corpus_relevant
    d = reference.details
    labels = list(d.get("labels", ()))
    binary = all(is_binary_label(v) for v in labels)
    used = [int(v) for v in labels] if binary else list(ragas_labels(labels) or coerce_by_truthiness(labels))
    k = len(used)
    hits, terms_text, numerator = 0, [], Fraction(0)
    for i, v in enumerate(used, start=1):
        hits += v
        if v:
            terms_text.append(f"{hits}/{i}·1")
            numerator += Fraction(hits, i)
    ragas_float = reference.alternatives.get("epsilon", reference.alternatives.get("coercion"))
    exact = numerator / hits if hits else None
    formulas: list[str] = []
    prefix = ""
    if not binary:
        prefix = "(labels coerced by truthiness as Ragas does) "
        formulas.append(f"the reference refuses labels {labels}: {reference.refused}; Ragas counts them as {used}")
    sum_text = " + ".join(terms_text) if terms_text else "0"
    formulas.append(f"{prefix}AP (Ragas) = ({sum_text}) / ({hits} + 1e-10) = {ragas_float!r}")
    if exact is None:
        why = "nothing retrieved" if k == 0 else "no retrieved context is relevant"
        formulas.append(f"{prefix}AP (exact) = {Fraction(numerator)} / {hits}: undefined ({why}); "
                        "Ragas's 1e-10 turns 0/0 into 0.0")
    else:
        line = f"{prefix}AP (exact) = {Fraction(numerator)} / {hits} = {exact} = {float(exact)!r}"
        if ragas_float is not None and float(ragas_float) != float(exact):
            line += (f"; gap Ragas − exact = {float(ragas_float) - float(exact):.3g}, "
                     f"from the {RAGAS_EPSILON:g} added to the denominator")
        formulas.append(line)
    formulas.append(f"P@{k} = h_K / K = {ratio_text(hits, k, 'K = 0')}")
    if r:
        formulas.append(f"corpus AP = {Fraction(numerator)} / R = {Fraction(numerator)} / {r} = "
                        f"{numerator / r}")
        formulas.append(f"recall@{k} = h_K / R = {ratio_text(hits, r, 'R = 0')}")
    elif uses_corpus_relevant:
        formulas.append("corpus AP and recall@K need R (--corpus-relevant): not computed")
    if given.retrieved and "label_rule" in d:
        formulas.insert(0, f"labels {used}: {d['label_rule']} (Ragas: Levenshtein similarity >= 0.5 instead)")
    quantities = [
        Quantity("context AP (exact)", exact, "numerator / relevant retrieved"
                 + ("" if binary else " (on coerced labels; the reference refuses the input)")),
        Quantity("context AP (Ragas float, +1e-10)", ragas_float, "numerator / (relevant retrieved + 1e-10)"),
        Quantity("numerator Σ v_i·h_i/i", numerator),
        Quantity("retrieved K", k),
        Quantity("relevant retrieved h_K", hits),
        Quantity(f"P@{k}", Fraction(hits, k) if k else None, "h_K / K"),
    ]
    if uses_corpus_relevant:
        quantities += [
            Quantity("corpus relevant R", r, "" if r is not None else "not given (--corpus-relevant)"),
            Quantity("corpus AP", numerator / r if r else None, "numerator / R (trec_eval AP)"),
            Quantity(f"recall@{k}", Fraction(hits, r) if r else None, "h_K / R"),
        ]
    return quantities, formulas


def _explain_labels(key: str) -> Callable[[ExplainInput], dict[str, object]]:
    """explain's case inputs for an AP metric: one generated context per label."""
    def case_inputs(given: ExplainInput) -> dict[str, object]:
        inputs: dict[str, object] = {
            "retrieved_contexts": [f"Synthetic retrieved context #{i} (rank {i})"
                                   for i in range(1, len(given.labels) + 1)],
            "verdicts": {key: list(given.labels)}}
        if given.corpus_relevant is not None:
            inputs["corpus_relevant_count"] = given.corpus_relevant
        return inputs
    return case_inputs


def explain_texts(given: ExplainInput) -> dict[str, object]:
    """explain's case inputs for a string-match metric: the context texts as given."""
    return {"retrieved_contexts": list(given.retrieved), "reference_contexts": list(given.reference)}


TEXTS_HELP = "--retrieved JSON-LIST --reference JSON-LIST of context texts (e.g. '[\"chunk a\", \"chunk b\"]')"


def _fuzz_with_reference(draw: FuzzDraw) -> dict[str, object]:
    inputs: dict[str, object] = {"verdicts": {WITH_REFERENCE: draw.ranked_labels}}
    if draw.corpus_relevant is not None:
        inputs["corpus_relevant_count"] = draw.corpus_relevant
    return inputs


WITH_REFERENCE = "context_precision_with_reference"
WITHOUT_REFERENCE = "context_precision_without_reference"
STRING_MATCH = "context_precision_string_match"

RAGAS_MODULE = "ragas.metrics._context_precision"
WITH_REFERENCE_TARGETS = RagasTargets(("LLMContextPrecisionWithReference", "ContextPrecision"),
                                      ("ContextPrecisionWithReference", "ContextPrecision"), RAGAS_MODULE,
                                      judge="context_precision_with_reference")
WITHOUT_REFERENCE_TARGETS = RagasTargets(("LLMContextPrecisionWithoutReference", "ContextUtilization"),
                                         ("ContextPrecisionWithoutReference", "ContextUtilization"), RAGAS_MODULE,
                                         judge="context_precision_without_reference")
STRING_MATCH_TARGETS = RagasTargets(("NonLLMContextPrecisionWithReference",), (), RAGAS_MODULE)

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=WITH_REFERENCE,
        reference_on=f"verdicts.{WITH_REFERENCE}",
        ragas=WITH_REFERENCE_TARGETS,
        fields_read=("user_input", "retrieved_contexts", "reference"),
        denominator=AP_DENOMINATOR,
        undefined_policy=AP_UNDEFINED,
        compute=_verdict_ap(WITH_REFERENCE, uses_corpus_relevant=True),
        requires=(f"verdicts.{WITH_REFERENCE}",),
        reads=("corpus_relevant_count",),
        verdicts=Verdicts(WITH_REFERENCE, "labels"),
        as_given=ragas_float_average_precision,
        fuzz_inputs=_fuzz_with_reference,
        explain=ExplainAdapter(
            command="context-precision", takes="labels",
            inputs_help="LABELS (one 0/1 per retrieved context, rank order, e.g. 1,0,1) [--corpus-relevant R]",
            targets=WITH_REFERENCE_TARGETS.ids(),
            case_inputs=_explain_labels(WITH_REFERENCE), quantities=_ap_quantities, takes_corpus_relevant=True)),
    MetricSpec(
        name=WITHOUT_REFERENCE,
        reference_on=f"verdicts.{WITHOUT_REFERENCE}",
        ragas=WITHOUT_REFERENCE_TARGETS,
        fields_read=("user_input", "retrieved_contexts", "response"),
        denominator=AP_DENOMINATOR,
        undefined_policy=AP_UNDEFINED,
        compute=_verdict_ap(WITHOUT_REFERENCE, uses_corpus_relevant=False),
        requires=(f"verdicts.{WITHOUT_REFERENCE}",),
        verdicts=Verdicts(WITHOUT_REFERENCE, "labels"),
        as_given=ragas_float_average_precision,
        fuzz_inputs=lambda draw: {"verdicts": {WITHOUT_REFERENCE: draw.ranked_labels_alt}},
        explain=ExplainAdapter(
            command="context-precision-without-reference", takes="labels",
            inputs_help="LABELS (one 0/1 per retrieved context: useful for the response, rank order)",
            targets=WITHOUT_REFERENCE_TARGETS.ids(),
            case_inputs=_explain_labels(WITHOUT_REFERENCE),
            quantities=lambda reference, given: ap_quantities(reference, given, uses_corpus_relevant=False))),
    MetricSpec(
        name=STRING_MATCH,
        reference_on="reference_contexts (labels: retrieved context i exactly equals some reference context)",
        ragas=STRING_MATCH_TARGETS,
        fields_read=("retrieved_contexts", "reference_contexts"),
        denominator="retrieved contexts equal to a reference context (Ragas adds 1e-10)",
        undefined_policy=("None when no retrieved context equals a reference context ('no_relevant_retrieved') or "
                          "nothing was retrieved ('empty_retrieval'); Ragas returns 0.0 (epsilon) there, and "
                          "fails on empty reference_contexts (max() of an empty list)."),
        compute=_string_match_precision,
        requires=("reference_contexts",),
        fuzz_inputs=lambda draw: {"reference_contexts": draw.reference_contexts},
        explain=ExplainAdapter(
            command="string-match-precision", takes="texts", inputs_help=TEXTS_HELP,
            targets=STRING_MATCH_TARGETS.ids(), case_inputs=explain_texts,
            quantities=lambda reference, given: ap_quantities(reference, given, uses_corpus_relevant=False))),
)
