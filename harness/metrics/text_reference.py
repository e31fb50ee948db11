"""Textbook string, n-gram and edit-distance quantities, computed exactly (standard library only).

Each function states its settings; ``ragas_compat.metrics.text_similarity`` wraps them as metrics and
``ragas_compat.metrics.oracles`` computes the same quantities with the libraries the field trusts
(sacrebleu, rouge-score, rapidfuzz), independently, for the report and the cross-check tests.

- Rational quantities (edit and Jaro similarities, ROUGE-N / ROUGE-L, chrF) are ``Fraction``s.
- BLEU is a geometric mean (not rational): it is computed with ``decimal`` at 50 significant digits
  from exact n-gram counts and returned as the ``Fraction`` of that decimal rounded to 20
  significant digits, i.e. far closer to the true value than any double.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import Decimal, localcontext
from fractions import Fraction

# --------------------------------------------------------------------------- edit similarities


def levenshtein_distance(a: str, b: str) -> int:
    """Insertions, deletions and substitutions of one code point each: the textbook dynamic programme
    (Wagner-Fischer) computed a column at a time in the bits of Python integers (Myers 1999, in Hyyrö's
    2001 formulation for the global distance). Bit i of ``vp``/``vn`` says the column's cell i is one
    more/less than the cell above it; each character of the longer text updates every cell at once with
    a few integer operations, so the cost is O(len(longer)) big-integer steps instead of
    len(a) x len(b) ``min`` calls. Exact (integers only); checked against the plain programme in
    tests/test_levenshtein.py."""
    if len(a) < len(b):
        a, b = b, a
    m = len(b)  # the shorter text is the pattern: one bit per code point
    if m == 0:
        return len(a)
    full = (1 << m) - 1
    last = 1 << (m - 1)
    masks: dict[str, int] = {}
    for i, char in enumerate(b):
        masks[char] = masks.get(char, 0) | (1 << i)
    vp, vn, distance = full, 0, m
    for char in a:
        eq = masks.get(char, 0)
        xv = eq | vn
        xh = (((eq & vp) + vp) ^ vp) | eq
        hp = vn | (~(xh | vp) & full)
        hn = vp & xh
        if hp & last:
            distance += 1
        elif hn & last:
            distance -= 1
        hp = ((hp << 1) | 1) & full
        hn = (hn << 1) & full
        vp = hn | (~(xv | hp) & full)
        vn = hp & xv
    return distance


def levenshtein_similarity(a: str, b: str) -> Fraction:
    """1 - distance / longer length; two empty strings are identical (1)."""
    longest = max(len(a), len(b))
    return Fraction(1) if longest == 0 else 1 - Fraction(levenshtein_distance(a, b), longest)


def hamming_similarity(a: str, b: str) -> Fraction:
    """1 - (differing positions + length difference) / longer length: the shorter string is
    padded, so strings of unequal length are comparable (rapidfuzz's ``pad=True``)."""
    longest = max(len(a), len(b))
    if longest == 0:
        return Fraction(1)
    differing = sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))
    return 1 - Fraction(differing, longest)


def jaro_similarity(a: str, b: str) -> Fraction:
    """Jaro (1989): (m/|a| + m/|b| + (m - t)/m) / 3 with matches within floor(max/2) - 1 positions
    and t half the matched characters out of order, rounded down as in Winkler's strcmp95 (and
    rapidfuzz, jellyfish); 1 for two empty strings, 0 when there is no match."""
    if not a and not b:
        return Fraction(1)
    if not a or not b:
        return Fraction(0)
    window = max(max(len(a), len(b)) // 2 - 1, 0)
    used = [False] * len(b)
    a_matched: list[str] = []
    for i, ca in enumerate(a):
        for j in range(max(0, i - window), min(len(b), i + window + 1)):
            if not used[j] and b[j] == ca:
                used[j] = True
                a_matched.append(ca)
                break
    m = len(a_matched)
    if m == 0:
        return Fraction(0)
    b_matched = [cb for cb, u in zip(b, used, strict=True) if u]
    transpositions = sum(x != y for x, y in zip(a_matched, b_matched, strict=True)) // 2
    return (Fraction(m, len(a)) + Fraction(m, len(b)) + Fraction(m - transpositions, m)) / 3


JARO_WINKLER_PREFIX_WEIGHT = Fraction(1, 10)
JARO_WINKLER_THRESHOLD = Fraction(7, 10)


def jaro_winkler_similarity(a: str, b: str) -> Fraction:
    """Winkler (1990): Jaro + l * 0.1 * (1 - Jaro), l the common prefix (at most 4), applied only
    when Jaro > 0.7."""
    jaro = jaro_similarity(a, b)
    if jaro <= JARO_WINKLER_THRESHOLD:
        return jaro
    prefix = 0
    for x, y in zip(a[:4], b[:4], strict=False):
        if x != y:
            break
        prefix += 1
    return jaro + prefix * JARO_WINKLER_PREFIX_WEIGHT * (1 - jaro)


SIMILARITIES: dict[str, Callable[[str, str], Fraction]] = {
    "levenshtein": levenshtein_similarity,
    "hamming": hamming_similarity,
    "jaro": jaro_similarity,
    "jaro_winkler": jaro_winkler_similarity,
}

# --------------------------------------------------------------------------- ROUGE


def rouge_tokens(text: str, stem: Callable[[str], str] | None = None) -> list[str]:
    """rouge-score's default tokenisation, as in Lin's ROUGE: lowercase, every run of characters
    other than ASCII a-z and 0-9 is a separator (so "café" gives "caf"); ``stem`` (when given)
    is applied to tokens longer than 3 characters."""
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    if stem is not None:
        tokens = [stem(t) if len(t) > 3 else t for t in tokens]
        tokens = [t for t in tokens if re.fullmatch(r"[a-z0-9]+", t)]
    return tokens


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], (diagonal + 1 if x == y else max(row[j], row[j - 1]))
    return row[-1]


def rouge_counts(rouge_type: str, reference: Sequence[str], response: Sequence[str]) -> tuple[int, int, int]:
    """(overlap, response units, reference units): clipped unigram matches for ``rouge1``, the
    longest common subsequence for ``rougeL``."""
    if rouge_type == "rouge1":
        ref, hyp = Counter(reference), Counter(response)
        return sum(min(count, hyp[token]) for token, count in ref.items()), len(response), len(reference)
    if rouge_type == "rougeL":
        return lcs_length(reference, response), len(response), len(reference)
    raise ValueError(f"unknown rouge_type {rouge_type!r}")


def rouge_value(mode: str, overlap: int, response_units: int, reference_units: int) -> Fraction | None:
    """precision = overlap / response units, recall = overlap / reference units, fmeasure their
    harmonic mean (0 when both are 0). Each is None only where ITS denominator is empty: precision
    on an empty response, recall on an empty reference (an empty response has recall 0/|ref| = 0),
    fmeasure when either is (one of its two terms is 0/0)."""
    if mode == "precision":
        return None if response_units == 0 else Fraction(overlap, response_units)
    if mode == "recall":
        return None if reference_units == 0 else Fraction(overlap, reference_units)
    if response_units == 0 or reference_units == 0:
        return None
    precision, recall = Fraction(overlap, response_units), Fraction(overlap, reference_units)
    return Fraction(0) if overlap == 0 else 2 * precision * recall / (precision + recall)


# --------------------------------------------------------------------------- chrF

CHRF_CHAR_ORDER = 6
CHRF_BETA = 2


def char_ngrams(text: str, n: int, whitespace: bool = False) -> Counter[str]:
    """Character n-grams of the text with all whitespace removed (``whitespace``: kept as written)."""
    chars = text if whitespace else "".join(text.split())
    return Counter(chars[i:i + n] for i in range(len(chars) - n + 1))


CHRF_PUNCTUATION = frozenset('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def chrf_words(text: str) -> list[str]:
    """chrF++'s words (Popović's chrF, as sacrebleu splits them): whitespace-separated words, one ASCII
    punctuation mark at a word's end (else at its start) split off a word longer than one character."""
    words: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[-1] in CHRF_PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in CHRF_PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def word_ngrams(words: Sequence[str], n: int) -> Counter[str]:
    return Counter(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))


# chrF++.py's epsilon (sacrebleu's eps_smoothing), as the decimal written: 1e-16
CHRF_EPS = Fraction(1, 10 ** 16)


def chrf(reference: str, response: str, char_order: int = CHRF_CHAR_ORDER, word_order: int = 0,
         beta: int = CHRF_BETA, remove_whitespace: bool = True,
         eps_smoothing: bool = False) -> tuple[Fraction | None, dict[str, object]]:
    """chrF (Popović 2015; chrF++ with word n-grams, Popović 2017) with sacrebleu's defaults unless
    given: character n-grams of orders 1-``char_order`` (whitespace removed unless ``remove_whitespace``
    is false, case kept) and word n-grams of orders 1-``word_order`` (``chrf_words``), precision and recall
    averaged over the orders both texts have n-grams of, then F-beta. None when no order has n-grams in
    both texts. ``eps_smoothing`` (chrF++.py's, NLTK's and Moses's reading): the mean over every order of
    that order's F-beta, a precision or recall of a text with no n-gram of the order being CHRF_EPS and an
    order whose F-beta is 0/0 (no match) counting CHRF_EPS; never None."""
    per_order = []
    precisions, recalls = [], []
    hyp_words, ref_words = chrf_words(response), chrf_words(reference)
    grams = [(char_ngrams(response, n, not remove_whitespace), char_ngrams(reference, n, not remove_whitespace))
             for n in range(1, char_order + 1)]
    grams += [(word_ngrams(hyp_words, n), word_ngrams(ref_words, n)) for n in range(1, word_order + 1)]
    for hyp, ref in grams:
        n_hyp, n_ref = sum(hyp.values()), sum(ref.values())
        matches = sum((hyp & ref).values())
        per_order.append((n_hyp, n_ref, matches))
        if n_hyp and n_ref:
            precisions.append(Fraction(matches, n_hyp))
            recalls.append(Fraction(matches, n_ref))
    details: dict[str, object] = {"orders_hyp_ref_match": per_order, "effective_order": len(precisions)}
    if (char_order, word_order, beta, remove_whitespace, eps_smoothing) != (CHRF_CHAR_ORDER, 0, CHRF_BETA, True,
                                                                             False):
        details["settings"] = {"char_order": char_order, "word_order": word_order, "beta": beta,
                               "remove_whitespace": remove_whitespace, "eps_smoothing": eps_smoothing}
    factor = Fraction(beta * beta)
    if eps_smoothing:
        scores = []
        for n_hyp, n_ref, matches in per_order:
            precision = Fraction(matches, n_hyp) if n_hyp else CHRF_EPS
            recall = Fraction(matches, n_ref) if n_ref else CHRF_EPS
            denominator = factor * precision + recall
            scores.append((1 + factor) * precision * recall / denominator if denominator else CHRF_EPS)
        details["order_scores"] = scores
        return sum(scores, Fraction(0)) / len(scores), details
    if not precisions:
        return None, details
    p, r = sum(precisions) / len(precisions), sum(recalls) / len(recalls)
    value = Fraction(0) if p + r == 0 else (1 + factor) * p * r / (factor * p + r)
    details.update({"avg_precision": p, "avg_recall": r})
    return value, details


# --------------------------------------------------------------------------- BLEU

BLEU_MAX_ORDER = 4
BLEU_DIGITS = 20   # significant digits the BLEU value is reported with (computed with 50)


def tokenize_13a(line: str) -> list[str]:
    """The mteval-v13a tokenisation (WMT's, sacrebleu's default): drop ``<skipped>``, join
    hyphenated line breaks, unescape four HTML entities, then put spaces around ASCII
    punctuation and symbols, around periods and commas unless between digits' sides as the
    standard says, and after a dash that follows a digit; split on whitespace."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    for entity, char in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        line = line.replace(entity, char)
    line = f" {line} "
    # ASCII symbols: { | } ~  [ \ ] ^ _ `  space ! " # $ % &  ( ) * +  : ; < = > ? @  /
    line = re.sub(r"([{-~\[-` -&(-+:-@/])", r" \1 ", line)
    line = re.sub(r"([^0-9])([.,])", r"\1 \2 ", line)   # period/comma not preceded by a digit
    line = re.sub(r"([.,])([^0-9])", r" \1 \2", line)   # period/comma not followed by a digit
    line = re.sub(r"([0-9])(-)", r"\1 \2 ", line)        # dash after a digit
    return line.split()


def tokenize_none(line: str) -> list[str]:
    """sacrebleu's ``tokenize="none"``: the text as written, split on whitespace."""
    return line.split()


def tokenize_char(line: str) -> list[str]:
    """sacrebleu's ``tokenize="char"``: every character a token, whitespace only a separator."""
    return " ".join(line).split()


# The tokenisations the reference computes (sacrebleu's names); the case schema offers these.
BLEU_TOKENIZERS: dict[str, Callable[[str], list[str]]] = {"13a": tokenize_13a, "none": tokenize_none,
                                                          "char": tokenize_char}
# sacrebleu's default smoothing values (Chen & Cherry 2014: floor 0.1, add-k 1); exp and none take none
BLEU_SMOOTH_DEFAULTS: dict[str, Fraction | None] = {"none": None, "exp": None, "floor": Fraction(1, 10),
                                                     "add-k": Fraction(1)}
# sacrebleu.corpus_bleu's defaults, which BleuScore (both APIs) passes on unless its kwargs say otherwise
BLEU_DEFAULTS: dict[str, object] = {"lowercase": False, "smooth_method": "exp", "smooth_value": None,
                                    "tokenize": "13a", "use_effective_order": False}


def ngram_counts(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def as_fraction(number: float | int | Fraction) -> Fraction:
    """A number from a case as the decimal written (0.1 is 1/10, not the double nearest it)."""
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def bleu_settings(details: dict[str, object]) -> dict[str, object]:
    """The sacrebleu keywords a ``bleu`` result was computed with (``details["settings"]`` over the defaults)."""
    given = details.get("settings")
    return {**BLEU_DEFAULTS, **(given if isinstance(given, dict) else {})}


def bleu(response: str, references: Sequence[str], lowercase: bool = False, smooth_method: str = "exp",
         smooth_value: float | None = None, tokenize: str = "13a",
         use_effective_order: bool = False) -> tuple[Fraction | None, dict[str, object]]:
    """BLEU-4 of one hypothesis against one or more references (Papineni et al. 2002) as sacrebleu's
    ``corpus_bleu`` defines it under the same keywords (defaults: its own): the texts lower-cased
    (``lowercase``, ``str.lower``) and right-stripped, then tokenised (``tokenize``: "13a", mteval's;
    "none", whitespace; "char", characters), n-gram counts clipped by the maximum count in any
    reference, brevity penalty exp(1 - r/c) with r the reference length closest to c (the shorter on a
    tie), the geometric mean of the precisions of orders 1-4. Score 0 when nothing matches.
    ``smooth_method`` (Chen & Cherry 2014): "none", an order with zero matches makes the score 0; "exp"
    (method 3, mteval's), the k-th order with zero matches gets precision 1 / (2^k total); "floor"
    (method 1), zero matches count ``smooth_value`` (0.1); "add-k" (method 2), orders 2-4 add
    ``smooth_value`` (1) to matches and totals, so an order the hypothesis has no n-gram of counts
    k/k = 1. An order with no n-gram in the hypothesis ends the orders: without
    ``use_effective_order`` its precision is 0 (the score is 0, "technically undefined" in sacrebleu's
    words); with it, the mean runs over the orders before it (a one-token hypothesis is its unigram
    precision). None when the response has no token (every precision is 0/0)."""
    if smooth_method not in BLEU_SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smooth_method {smooth_method!r}")
    split = BLEU_TOKENIZERS[tokenize]
    if lowercase:
        response, references = response.lower(), [r.lower() for r in references]
    hyp = split(response.rstrip())
    refs = [split(r.rstrip()) for r in references]
    c = len(hyp)
    ref_lengths = [len(r) for r in refs]
    r = min(ref_lengths, key=lambda length: (abs(length - c), length)) if refs else 0
    correct, total = [], []
    for n in range(1, BLEU_MAX_ORDER + 1):
        counts = ngram_counts(hyp, n)
        best: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            best |= ngram_counts(ref, n)
        correct.append(sum(min(count, best[g]) for g, count in counts.items()))
        total.append(sum(counts.values()))
    details: dict[str, object] = {"hyp_tokens": c, "ref_length": r, "correct": correct, "total": total}
    settings = {"lowercase": lowercase, "smooth_method": smooth_method, "smooth_value": smooth_value,
                "tokenize": tokenize, "use_effective_order": use_effective_order}
    if settings != BLEU_DEFAULTS:
        details["settings"] = {key: value for key, value in settings.items() if BLEU_DEFAULTS[key] != value}
    if c == 0:
        return None, details
    if not any(correct):
        return Fraction(0), details
    k_value = BLEU_SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else as_fraction(smooth_value)
    precisions: list[Fraction] = []
    halvings = 1
    for n in range(BLEU_MAX_ORDER):
        matched, counted = Fraction(correct[n]), Fraction(total[n])
        if smooth_method == "add-k" and n > 0:
            matched, counted = matched + k_value, counted + k_value  # type: ignore[operator]
        if counted == 0:
            break
        if matched:
            precisions.append(matched / counted)
        elif smooth_method == "exp":
            halvings *= 2
            precisions.append(1 / (halvings * counted))
        elif smooth_method == "floor":
            precisions.append(k_value / counted)  # type: ignore[operator]
        else:
            precisions.append(Fraction(0))
    order = len(precisions) if use_effective_order else BLEU_MAX_ORDER
    details["precisions"] = precisions
    details["order"] = order
    if len(precisions) < order or 0 in precisions:
        return Fraction(0), details
    with localcontext() as ctx:
        ctx.prec = 50
        log_mean = sum((Decimal(p.numerator).ln() - Decimal(p.denominator).ln() for p in precisions),
                       Decimal(0)) / Decimal(order)
        penalty = Decimal(0) if c >= r else Decimal(1) - Decimal(r) / Decimal(c)
        value = (penalty + log_mean).exp()
        ctx.prec = BLEU_DIGITS
        value = +value  # rounded to BLEU_DIGITS significant digits: still far below a double's ulp
    return Fraction(value), details


def bleu_percents(details: dict[str, object]) -> tuple[list[float], int]:
    """The precisions in percent as sacrebleu evaluates them in doubles from the same counts and
    keywords, and the number of orders its mean runs over."""
    correct, total = list(details["correct"]), list(details["total"])  # type: ignore[call-overload]
    settings = bleu_settings(details)
    method = str(settings["smooth_method"])
    given = settings["smooth_value"]
    k_value = float(BLEU_SMOOTH_DEFAULTS[method] or 0) if given is None else given
    percents = [0.0] * BLEU_MAX_ORDER
    order, halving = BLEU_MAX_ORDER, 1.0
    for n in range(BLEU_MAX_ORDER):
        matched, counted = correct[n], total[n]
        if method == "add-k" and n > 0:
            matched, counted = matched + k_value, counted + k_value
        if counted == 0:
            break
        if settings["use_effective_order"]:
            order = n + 1
        if matched == 0:
            if method == "exp":
                halving *= 2
                percents[n] = 100.0 / (halving * counted)
            elif method == "floor":
                percents[n] = 100.0 * k_value / counted  # type: ignore[operator]
        else:
            percents[n] = 100.0 * matched / counted
    return percents[:order], order


def bleu_in_doubles(details: dict[str, object]) -> float:
    """BLEU from the same counts and keywords, evaluated in doubles the way sacrebleu does it and Ragas
    reads it: precisions in percent, brevity penalty exp(1 - r/c), exp of the mean of the logs (a log of
    0 is -9999999999), then / 100. Not the reference value: the float evaluation Ragas's number
    comes from, to tell float evaluation order from meaning."""
    correct = list(details["correct"])  # type: ignore[call-overload]
    c, r = int(details["hyp_tokens"]), int(details["ref_length"])  # type: ignore[call-overload]
    if not any(correct):
        return 0.0
    penalty = 1.0 if c >= r else (math.exp(1 - r / c) if c > 0 else 0.0)
    percents, order = bleu_percents(details)
    logs = [math.log(p) if p > 0 else -9999999999 for p in percents]
    return penalty * math.exp(sum(logs) / order) / 100


def split_sentences_ragas(text: str) -> list[str]:
    """Ragas's sentence splitting for BLEU: ``text.split(". ")``."""
    return text.split(". ")
