"""String, n-gram and edit-similarity metrics: Ragas's non-LLM answer metrics on response vs reference.

One metric per Ragas class and parameter (a parameter changes the quantity): ``exact_match``,
``string_presence``, ``string_similarity_<measure>`` (NonLLMStringSimilarity with each
distance_measure), ``bleu``, ``chrf``, ``rouge_<1|l>_<mode>`` (RougeScore with each rouge_type
Ragas declares and each mode). They run on cases with ``"string_metrics": true``.

For each row the reference (``ragas_compat.metrics.text_reference``) computes the textbook quantity
with the settings stated in ``reference_on``; an oracle library (``ragas_compat.metrics.oracles``)
computes the same quantity independently (``details["oracle"]``); Ragas's own preprocessing is a
named variant (``alternatives["variant:<name>"]``, described in ``details["variants"]``) the
classifier recognises: BleuScore's ". " sentence split (only the response's first sentence is
scored, each reference sentence a separate reference), the sacrebleu defaults BleuScore leaves in
place (exp smoothing: ``bleu_exp_smoothing``; no effective order, so a response under 4 tokens scores
0.0: ``bleu_no_effective_order``) and RougeScore's Porter stemming. BLEU's reference is the definition
Ragas documents (n-gram precisions and the brevity penalty, 1 for a perfect match): unsmoothed, over the
orders the response has; a sacrebleu keyword a case configures is the reference's as well.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics import oracles
from ragas_compat.metrics import text_reference as tr
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, ExplainInput, FuzzDraw, MetricSpec, Quantity, RagasTargets

FIELDS = ("reference", "response")
REQUIRES = ("string_metrics",)
TEXTS_HELP = ("--retrieved JSON-LIST --reference JSON-LIST: the response and the reference text, "
              "each a one-item list (e.g. --retrieved '[\"the cat sat\"]' --reference '[\"a cat sat\"]')")
EMPTY_TEXT = "empty_text"


_STRING_MODULE = "ragas.metrics._string"


def _targets(legacy: str, collections: str, module: str = _STRING_MODULE,
             options: tuple[tuple[str, str], ...] = ()) -> RagasTargets:
    """One legacy and one collections class (no LLM), in one configuration."""
    return RagasTargets((legacy,), (collections,), module, options)


def _outcome(metric: str, value: Fraction | None, details: dict[str, Any], denominator: str,
             undefined_reason: str | None = None,
             variants: dict[str, tuple[Fraction | None, str]] | None = None) -> ReferenceOutcome:
    alternatives: dict[str, Any] = {}
    if variants:
        details["variants"] = {name: text for name, (_, text) in variants.items()}
        alternatives = {f"variant:{name}": v for name, (v, _) in variants.items()}
    return ReferenceOutcome(metric, value, None if value is not None else (undefined_reason or EMPTY_TEXT),
                            None, alternatives, details, denominator)


# --------------------------------------------------------------------------- the computations

def _exact_match(case: Case) -> ReferenceOutcome:
    return _outcome("exact_match", Fraction(int(case.reference == case.response)),
                    {"equal": case.reference == case.response}, "none (1 if the texts are equal, else 0)")


def _string_presence(case: Case) -> ReferenceOutcome:
    return _outcome("string_presence", Fraction(int(case.reference in case.response)),
                    {"reference_in_response": case.reference in case.response},
                    "none (1 if the reference occurs in the response, else 0)")


ONE_MINUS_DISTANCE = ("rapidfuzz divides the distance by the longer length in doubles and Ragas subtracts that "
                      "from 1, which cancels digits near 0 (1 - 19/20 = 0.050000000000000044): recomputing that "
                      "float evaluation")

# The absolute error of that float evaluation, 1 - fl(d / n) for integers 0 <= d <= n: fl(d / n) is within
# half an ulp of d / n, at most 2^-54 (d / n <= 1); for d / n >= 1/2 the subtraction from 1 is exact (Sterbenz),
# below 1/2 its result lies in (1/2, 1] and rounds by at most 2^-54 while fl(d / n) was within 2^-55. So the
# float is within 2^-54 + 2^-55 < 2^-53 (half an ulp of 1.0) of the exact 1 - d/n, whatever its magnitude:
# near 0 (1 - 19/20) that is many ulps of the result, and still rounding. An overflow or underflow is not
# (1/2 read as 0.0 is 2^52 times farther away).
ONE_MINUS_QUOTIENT_ERROR = 2.0 ** -53


def _similarity(measure: str) -> Callable[[Case], ReferenceOutcome]:
    def compute(case: Case) -> ReferenceOutcome:
        value = tr.SIMILARITIES[measure](case.reference, case.response)
        details: dict[str, Any] = {"reference_chars": len(case.reference), "response_chars": len(case.response),
                                   "oracle": oracles.similarity_oracle(measure, case.reference, case.response)}
        outcome = _outcome(f"string_similarity_{measure}", value, details, "the longer text's length in code points"
                           if measure in ("levenshtein", "hamming") else "none (a mean of match ratios)")
        longest = max(len(case.reference), len(case.response))
        if measure in ("levenshtein", "hamming") and longest:
            distance = (1 - value) * longest  # an integer: the edit or Hamming distance
            outcome.alternatives["rounding"] = 1 - int(distance) / longest
            details["ragas_semantics"] = {"rounding": ONE_MINUS_DISTANCE}
            details["float_tolerance"] = ONE_MINUS_QUOTIENT_ERROR
        return outcome
    return compute


BLEU_FIRST_SENTENCE = (
    "Ragas's BleuScore splits both texts on \". \" and calls corpus_bleu(response_sentences, "
    "[[s] for s in reference_sentences]): every reference sentence is a separate reference stream of one "
    "segment, so sacrebleu scores only the response's first sentence (the rest is silently dropped), "
    "against each reference sentence as an alternative reference")
BLEU_FIRST_SENTENCE_SETTINGS = (" (with sacrebleu's {settings}, as BleuScore calls it, which changes the first "
                                "sentence's score too)")

# The reference's BLEU where the case's kwargs say nothing: the definition Ragas documents ("n-gram precision
# and brevity penalty", "1 indicates a perfect match"): no smoothing (an order with no match makes the
# geometric mean 0), over the orders the response has n-grams of (a precision of a 0/0 order is undefined,
# not 0: sacrebleu's use_effective_order, so identical texts score 1 at any length). A keyword the case gives
# is the reference's too: the metric as configured.
BLEU_TEXTBOOK: dict[str, Any] = {"smooth_method": "none", "use_effective_order": True}

EMPTY_HYPOTHESIS_UNDEFINED = "empty_hypothesis_undefined"
EMPTY_HYPOTHESIS_TEXT = ("the response has no {unit}: every n-gram precision is 0/0, so the score is undefined in that "
                         "reading; sacrebleu (and the textbook) give 0, which the reference follows")

BLEU_EXP_SMOOTHING = "bleu_exp_smoothing"
BLEU_EXP_SMOOTHING_TEXT = (
    "BleuScore leaves sacrebleu's default smooth_method='exp' (Chen & Cherry's method 3, mteval's): the k-th order "
    "with no matching n-gram counts precision 1/(2^k x its n-grams) instead of 0, so a response that shares no "
    "{orders} with the reference scores above the textbook's 0")
BLEU_NO_EFFECTIVE_ORDER = "bleu_no_effective_order"
BLEU_NO_EFFECTIVE_ORDER_TEXT = (
    "BleuScore leaves sacrebleu's default use_effective_order=False: a response of {tokens} token(s) has no "
    "{missing}-gram, that precision is 0/0 and sacrebleu takes it as 0, so the score is 0.0 whatever the match "
    "(identical texts under 4 tokens score 0.0)")


def _bleu(case: Case) -> ReferenceOutcome:
    return bleu_outcome(case, {})


def _bleu_value(value: Fraction | None, details: dict[str, Any]) -> float:
    """What Ragas reads from sacrebleu on these counts and keywords (0.0 for no token or no match)."""
    return 0.0 if not value else tr.bleu_in_doubles(details)


def bleu_outcome(case: Case, kwargs: Mapping[str, Any]) -> ReferenceOutcome:
    """BLEU under BleuScore's sacrebleu ``kwargs`` (``lowercase``, ``smooth_method``, ``smooth_value``,
    ``tokenize``, ``use_effective_order``; the case schema declares which). The reference is computed with
    ``BLEU_TEXTBOOK`` under the given keywords, sacrebleu's oracle with the same keywords; where Ragas's call
    (sacrebleu's defaults under the given keywords) scores otherwise, the cause is a named variant: the first
    sentence only, exp smoothing, or no effective order."""
    reference_kwargs = {**BLEU_TEXTBOOK, **kwargs}
    value, details = tr.bleu(case.response, [case.reference], **reference_kwargs)
    details["oracle"] = oracles.bleu_oracle(case.reference, case.response, reference_kwargs)
    variants: dict[str, tuple[Fraction | float | None, str]] = {}
    if value is None:  # no hypothesis token: sacrebleu's 0, "undefined" the alternative
        value = Fraction(0)
        variants[EMPTY_HYPOTHESIS_UNDEFINED] = (None, EMPTY_HYPOTHESIS_TEXT.format(unit="token"))
    response_sentences = tr.split_sentences_ragas(case.response)
    reference_sentences = tr.split_sentences_ragas(case.reference)
    ragas_kwargs = dict(kwargs)  # Ragas passes the case's keywords; sacrebleu's defaults fill the rest
    if len(response_sentences) > 1 or len(reference_sentences) > 1:
        first_value, first = tr.bleu(response_sentences[0], reference_sentences, **ragas_kwargs)
        textbook_first, _ = tr.bleu(response_sentences[0], reference_sentences, **reference_kwargs)
        unset = {key: tr.BLEU_DEFAULTS[key] for key in BLEU_TEXTBOOK if key not in kwargs}
        own = BLEU_FIRST_SENTENCE + (BLEU_FIRST_SENTENCE_SETTINGS.format(
            settings=", ".join(f"{key}={value!r}" for key, value in unset.items()))
            if (first_value or 0) != (textbook_first or 0) else "")
        # evaluated in doubles as sacrebleu does: the variant is told apart by meaning, not by ulps
        variants["bleu_first_sentence"] = (_bleu_value(first_value, first), own)
        details["ragas_sentences"] = {"response": len(response_sentences), "reference": len(reference_sentences)}
    else:
        ragas_value, ragas = tr.bleu(case.response, [case.reference], **ragas_kwargs)
        if (ragas_value or 0) != value:
            tokens = int(details["hyp_tokens"])
            if "use_effective_order" not in kwargs and tokens < tr.BLEU_MAX_ORDER:
                variants[BLEU_NO_EFFECTIVE_ORDER] = (0.0, BLEU_NO_EFFECTIVE_ORDER_TEXT.format(
                    tokens=tokens, missing=tokens + 1))
            elif "smooth_method" not in kwargs:
                unmatched = [f"{n + 1}-gram" for n, k in enumerate(ragas["correct"]) if k == 0]  # type: ignore[arg-type]
                variants[BLEU_EXP_SMOOTHING] = (_bleu_value(ragas_value, ragas), BLEU_EXP_SMOOTHING_TEXT.format(
                    orders=" or ".join(unmatched) or "n-gram of some order"))
                details["ragas_precisions"] = ragas.get("precisions")
    outcome = _outcome("bleu", value, details, "none (geometric mean of n-gram precisions 1-4 times the brevity "
                       "penalty)", "empty_response", variants)  # type: ignore[arg-type]
    if value is not None:
        # sacrebleu's log of a zero precision is -9999999999: exp gives 0.0
        outcome.alternatives["rounding"] = 0.0 if value == 0 else tr.bleu_in_doubles(details)
        details["ragas_semantics"] = {"rounding": BLEU_DOUBLES}
        tolerance = bleu_float_tolerance(details, value)
        if tolerance is not None:
            details["float_tolerance"] = tolerance
    return outcome


def bleu_float_tolerance(details: dict[str, Any], value: Fraction) -> float | None:
    """The absolute error of sacrebleu's doubles evaluation (``tr.bleu_in_doubles``) of a BLEU of ``value``,
    in units u = 2^-53: each percent precision p_n (100 c / t, at most two roundings; a floor or add-k
    smoothing value that is not a whole number adds one more, its own decimal-to-double rounding) is within
    2u relative, so log(p_n) within 2u + 2u |log p_n| (a correctly rounded log is within one ulp); the sum
    of the N logs (N = 4, or the effective order) adds (N - 1)u S (S = sum |log p_n|) and / N is exact for
    N = 1, 2, 4 (one more u otherwise), so exp's argument is within (2 + (N + 1) S / N) u and exp makes that
    (plus 2u) a relative error; the brevity penalty exp(1 - r/c) adds (r/c + |1 - r/c| + 2) u, the product
    and / 100 one u each: at most (8 + (N + 1) S / N + r/c + |1 - r/c|) u relative (plus the smoothing
    value's and the division's units), stated with a factor 2 and taken of the value (at most 1). The mean
    of the logs grows with small precisions, so the bound is not a fixed number of ulps of the result. None
    when a precision is 0 (sacrebleu's log of 0 is -9999999999: the float is 0.0, no tolerance is stated)."""
    c, r = int(details["hyp_tokens"]), int(details["ref_length"])
    percents, order = tr.bleu_percents(details)
    if not percents or 0.0 in percents:
        return None
    logs = [abs(math.log(p)) for p in percents]
    settings = tr.bleu_settings(details)
    given = settings["smooth_value"]
    inexact_value = given is not None and Fraction(repr(given) if isinstance(given, float) else given).denominator != 1
    penalty = (r / c + (r / c - 1)) if 0 < c < r else 0.0  # r/c + |1 - r/c| where the penalty applies
    units = (8 + (order + 1) / order * sum(logs) + penalty + (0 if order in (1, 2, 4) else 1)
             + (order if inexact_value or settings["smooth_method"] == "floor" else 0))
    return 2 * units * 2.0 ** -53 * float(value)


BLEU_DOUBLES = ("sacrebleu evaluates BLEU in doubles (precisions in percent, math.log and math.exp) and Ragas "
                "divides its 0-100 score by 100: recomputing that float evaluation")


def _chrf(case: Case) -> ReferenceOutcome:
    return chrf_outcome(case, {})


def chrf_outcome(case: Case, kwargs: Mapping[str, Any]) -> ReferenceOutcome:
    """chrF under ChrfScore's sacrebleu ``kwargs`` (``char_order``, ``word_order``, ``beta``,
    ``remove_whitespace``, ``eps_smoothing``; the case schema declares which): the reference and sacrebleu's
    oracle with the same keywords."""
    remove_whitespace = bool(kwargs.get("remove_whitespace", True))
    value, details = tr.chrf(case.reference, case.response, int(kwargs.get("char_order", tr.CHRF_CHAR_ORDER)),
                             int(kwargs.get("word_order", 0)), int(kwargs.get("beta", tr.CHRF_BETA)), remove_whitespace,
                             bool(kwargs.get("eps_smoothing", False)))
    details["oracle"] = oracles.chrf_oracle(case.reference, case.response, dict(kwargs) or None)
    variants: dict[str, tuple[Fraction | None, str]] = {}
    no_hypothesis = not ("".join(case.response.split()) if remove_whitespace else case.response)
    if value is None and no_hypothesis:  # no hypothesis character: sacrebleu's 0
        value = Fraction(0)
        variants[EMPTY_HYPOTHESIS_UNDEFINED] = (None, EMPTY_HYPOTHESIS_TEXT.format(unit="non-space character"))
    return _outcome("chrf", value, details, "character n-grams of each order (averaged over orders 1-6)",
                    variants=variants)


ROUGE_STEMMING = ("Ragas's RougeScore runs rouge-score with use_stemmer=True: tokens longer than 3 characters "
                  "pass through nltk's Porter stemmer, so 'cats' matches 'cat'")


def _rouge(rouge_type: str, mode: str) -> Callable[[Case], ReferenceOutcome]:
    short = "1" if rouge_type == "rouge1" else "l"

    def compute(case: Case) -> ReferenceOutcome:
        ref, hyp = tr.rouge_tokens(case.reference), tr.rouge_tokens(case.response)
        overlap, hyp_units, ref_units = tr.rouge_counts(rouge_type, ref, hyp)
        value = tr.rouge_value(mode, overlap, hyp_units, ref_units)
        details: dict[str, Any] = {"overlap": overlap, "response_tokens": hyp_units, "reference_tokens": ref_units,
                                   "oracle": oracles.rouge_oracle(rouge_type, mode, case.reference, case.response)}
        variants: dict[str, tuple[Fraction | None, str]] = {}
        stem = oracles.rouge_stemmer()
        if stem is not None:
            s_ref, s_hyp = tr.rouge_tokens(case.reference, stem), tr.rouge_tokens(case.response, stem)
            if (s_ref, s_hyp) != (ref, hyp):
                stemmed = tr.rouge_value(mode, *tr.rouge_counts(rouge_type, s_ref, s_hyp))
                variants["rouge_porter_stemming"] = (Fraction(0) if stemmed is None else stemmed, ROUGE_STEMMING)
        else:
            details["variants_not_computed"] = "rouge_porter_stemming (nltk is not installed)"
        denominator = {"precision": "response tokens", "recall": "reference tokens",
                       "fmeasure": "harmonic mean of precision and recall"}[mode]
        # undefined only where this mode's own denominator is empty (rouge_value)
        undefined = ("empty_reference_tokens" if mode == "recall" or (mode == "fmeasure" and hyp_units) else
                     "empty_response_tokens")
        return _outcome(f"rouge_{short}_{mode}", value, details, denominator, undefined, variants)
    return compute


# --------------------------------------------------------------------------- fuzz and explain

_WORDS = ("the", "cat", "sat", "on", "a", "mat", "Cats", "running", "ran", "Paris", "capital", "France",
          "naïve", "café", "東京", "42", "3.14", "x-y", "(hi)", "don't", "U.S.", "!", ",", "–", "🙂")


def _text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return rng.choice(("", " ", "."))
    sentences = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        sentences.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 9))))
    return rng.choice((". ", ". ", " ", "\n")).join(sentences) + rng.choice(("", "", "."))


def _shared_rng(draw: FuzzDraw) -> random.Random:
    """A generator every text metric of one fuzz case shares (seeded by the case's common draw, not the
    metric's private ``draw.rng``): the string metrics and SemanticSimilarity fuzzed together set the same
    ``reference`` and ``response``, so none overwrites the texts another one scores."""
    return random.Random("ragas-compat-fuzz-texts:" + repr((draw.retrieved_contexts, draw.reference_contexts,
                                                              draw.retrieved_ids, draw.reference_ids)))


def shared_texts(draw: FuzzDraw) -> tuple[str, str]:
    """(reference, response) of a fuzz case: independent, identical, one inside the other, or a small edit."""
    rng = _shared_rng(draw)
    reference = _text(rng)
    shape = rng.random()
    if shape < 0.15:
        response = reference
    elif shape < 0.3:
        response = f"{_text(rng)} {reference} {_text(rng)}".strip()
    elif shape < 0.45 and reference:
        i = rng.randrange(len(reference))
        response = reference[:i] + rng.choice(("", "a", " ", "é")) + reference[i + 1:]
    else:
        response = _text(rng)
    return reference, response


def fuzz_texts(draw: FuzzDraw) -> dict[str, Any]:
    """The case's shared texts (``shared_texts``) for the string metrics."""
    reference, response = shared_texts(draw)
    return {"string_metrics": True, "reference": reference, "response": response}


def explain_texts(given: ExplainInput) -> dict[str, Any]:
    response = str(given.retrieved[0]) if given.retrieved else ""
    reference = str(given.reference[0]) if given.reference else ""
    return {"string_metrics": True, "response": response, "reference": reference}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    quantities = [Quantity(reference.metric, reference.number)]
    oracle = reference.details.get("oracle")
    formulas = [f"{reference.metric} = {reference.value if reference.value is not None else 'undefined'}"
                f" ({reference.denominator})"]
    if isinstance(oracle, dict):
        quantities.append(Quantity("oracle", oracle.get("value"), oracle.get("library", "")))
        formulas.append(f"oracle: {oracle.get('call')} = {oracle.get('value', oracle.get('absent'))}")
    for name, value in reference.alternatives.items():
        quantities.append(Quantity(name, value if value is None or isinstance(value, Fraction) else float(value)))
    return quantities, formulas


Configure = Callable[[Mapping[str, Any]], Callable[[Case], ReferenceOutcome] | None]


def _reads(compute: Callable[[Case], ReferenceOutcome], **own: str) -> Configure:
    """Options as data for a metric that is one value of its class's options (``own``: option -> the
    value this metric computes; an option not given is the class's default, ``DEFAULTS``): the metric
    reads the configurations whose options (defaults filled in) are its own."""
    def configure(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome] | None:
        return compute if all(options.get(key, DEFAULTS[key]) == value for key, value in own.items()) else None
    return configure


def _with_kwargs(outcome: Callable[[Case, Mapping[str, Any]], ReferenceOutcome]) -> Configure:
    """Options as data for BleuScore and ChrfScore: the one metric of the class reads every configuration,
    its ``kwargs`` (sacrebleu's keywords, passed through by both APIs) computed under."""
    def configure(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome]:
        kwargs = dict(options.get("kwargs") or {})
        return lambda case: outcome(case, kwargs)
    return configure


# the constructor defaults of the configurable string classes (both APIs, Ragas 0.4.3)
DEFAULTS = {"distance_measure": "levenshtein", "rouge_type": "rougeL", "mode": "fmeasure"}


def _spec(name: str, reference_on: str, ragas: RagasTargets, compute: Callable[[Case], ReferenceOutcome],
          denominator: str, undefined_policy: str, configure: Configure | None = None) -> MetricSpec:
    return MetricSpec(
        name=name, reference_on=reference_on, ragas=ragas, fields_read=FIELDS, denominator=denominator,
        undefined_policy=undefined_policy, compute=compute, requires=REQUIRES, fuzz_inputs=fuzz_texts,
        explain=ExplainAdapter(command=name.replace("_", "-"), takes="texts", inputs_help=TEXTS_HELP,
                               targets=ragas.ids(), case_inputs=explain_texts, quantities=_quantities),
        configure=configure)


_NEVER_UNDEFINED = "Always defined (two empty strings are identical: 1)."
_MEASURE_TEXT = {
    "levenshtein": "1 - Levenshtein distance / longer length (code points)",
    "hamming": "1 - (differing positions + length difference) / longer length (shorter text padded)",
    "jaro": "Jaro similarity (transpositions halved and rounded down, as in strcmp95)",
    "jaro_winkler": "Jaro-Winkler (prefix up to 4, weight 0.1, boost only above Jaro 0.7)",
}
_ROUGE_TEXT = {"rouge1": "clipped unigram overlap", "rougeL": "longest common subsequence of tokens"}

SPECS: tuple[MetricSpec, ...] = (
    _spec("exact_match", "response == reference (1 or 0)", _targets("ExactMatch", "ExactMatch"), _exact_match,
          "none (1 if the texts are equal, else 0)", _NEVER_UNDEFINED),
    _spec("string_presence", "reference occurs in response (1 or 0; the empty reference occurs everywhere)",
          _targets("StringPresence", "StringPresence"), _string_presence,
          "none (1 if the reference occurs in the response, else 0)", "Always defined."),
    *(_spec(f"string_similarity_{m}", f"{_MEASURE_TEXT[m]}; oracle rapidfuzz",
            _targets("NonLLMStringSimilarity", "NonLLMStringSimilarity", options=(("distance_measure", m),)),
            _similarity(m), "the longer text's length" if m in ("levenshtein", "hamming") else "none",
            _NEVER_UNDEFINED, _reads(_similarity(m), distance_measure=m))
      for m in ("levenshtein", "hamming", "jaro", "jaro_winkler")),
    _spec("bleu", "BLEU-4 of response vs reference: 13a tokens, case kept, brevity penalty, no smoothing, over the orders "
          "the response has n-grams of (a response under 4 tokens: its orders); a kwarg the case gives is the "
          "reference's too; oracle sacrebleu.corpus_bleu([response], [[reference]], smooth_method='none', "
          "use_effective_order=True)",
          _targets("BleuScore", "BleuScore", "ragas.metrics._bleu_score"), _bleu, "none (geometric mean of n-gram precisions times the brevity "
          "penalty)", "Always defined: 0 when the response has no token (sacrebleu's reading; 'undefined' is the "
          "alternative, variant empty_hypothesis_undefined).", _with_kwargs(bleu_outcome)),
    _spec("chrf", "chrF2 of response vs reference: character 1-6-grams without whitespace, case kept, precision and "
          "recall averaged over the orders both texts have (sacrebleu's defaults); oracle sacrebleu.corpus_chrf",
          _targets("ChrfScore", "CHRFScore", "ragas.metrics._chrf_score"), _chrf, "character n-grams of each order",
          "0 when the response has no non-space character (sacrebleu's reading; 'undefined' is the alternative, "
          "variant empty_hypothesis_undefined); None ('empty_text') when only the reference has none; Ragas "
          "returns 0.0.", _with_kwargs(chrf_outcome)),
    *(_spec(f"rouge_{'1' if t == 'rouge1' else 'l'}_{mode}",
            f"{t} {mode} ({_ROUGE_TEXT[t]}) over rouge-score's tokens (lowercase ASCII [a-z0-9]+ runs), no stemming; "
            f"oracle rouge-score with use_stemmer=False",
            _targets("RougeScore", "RougeScore", "ragas.metrics._rouge_score", (("rouge_type", t), ("mode", mode))), _rouge(t, mode),
            {"precision": "response tokens", "recall": "reference tokens",
             "fmeasure": "precision + recall (harmonic mean)"}[mode],
            {"precision": "None ('empty_response_tokens') when the response has no token (an empty reference: 0)",
             "recall": "None ('empty_reference_tokens') when the reference has no token (an empty response: 0)",
             "fmeasure": "None ('empty_response_tokens' / 'empty_reference_tokens') when a text has no token"}[mode]
            + "; Ragas returns 0.0.",
            _reads(_rouge(t, mode), rouge_type=t, mode=mode))
      for t in ("rouge1", "rougeL") for mode in ("precision", "recall", "fmeasure")),
)
