"""The string, n-gram and edit-similarity references against the libraries the field trusts.

Hypothesis draws texts (words, punctuation, non-ASCII letters, ". " sentence breaks, empty strings,
identical and nested texts); on each, our exact reference must agree with the oracle library called
directly with the settings stated in harness/metrics/oracles.py: sacreBLEU (corpus BLEU and chrF),
Google's rouge-score (no stemming) and rapidfuzz. Floats may differ by float evaluation order only.
These fail if the reference drifts from the oracle (tokenisation, smoothing, windows, rounding down).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.metrics import text_reference as tr

sacrebleu = pytest.importorskip("sacrebleu")
distance = pytest.importorskip("rapidfuzz.distance")

WORDS = ["the", "cat", "Cat", "cats", "sat", "on", "a", "mat", "mat.", "42", "4.5", "9:30", "x-y", "(hi)",
         "don't", "naïve", "fährt", "東京", "!", ",", "–", "&amp;", "U.S.", "🙂"]
word_text = st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join)
sentences = st.lists(word_text, min_size=1, max_size=3).map(". ".join)
texts = st.one_of(word_text, sentences, st.text(alphabet="abc é.,-", max_size=12), st.just(""))


@st.composite
def pairs(draw):
    reference = draw(texts)
    shape = draw(st.sampled_from(["free", "same", "inside"]))
    if shape == "same":
        return reference, reference
    if shape == "inside":
        return reference, f"{draw(word_text)} {reference} {draw(word_text)}"
    return reference, draw(texts)


def close(ours, theirs, tolerance=1e-12):
    return math.isclose(float(ours), theirs, rel_tol=tolerance, abs_tol=tolerance)


@settings(max_examples=400, deadline=None)
@given(pairs())
def test_bleu_matches_sacrebleu_corpus_bleu(pair):
    reference, response = pair
    value, _ = tr.bleu(response, [reference])
    oracle = sacrebleu.corpus_bleu([response], [[reference]]).score / 100
    assert (oracle == 0.0) if value is None else close(value, oracle), (value, oracle)


@settings(max_examples=200, deadline=None)
@given(word_text, st.lists(word_text, min_size=1, max_size=3))
def test_multi_reference_bleu_matches_sacrebleu(response, references):
    value, _ = tr.bleu(response, references)
    oracle = sacrebleu.corpus_bleu([response], [[r] for r in references]).score / 100
    assert (oracle == 0.0) if value is None else close(value, oracle), (value, oracle)


@settings(max_examples=400, deadline=None)
@given(pairs())
def test_chrf_matches_sacrebleu_corpus_chrf(pair):
    reference, response = pair
    value, _ = tr.chrf(reference, response)
    assert value is None or isinstance(value, Fraction)
    oracle = sacrebleu.corpus_chrf([response], [[reference]]).score / 100
    assert (oracle == 0.0) if value is None else close(value, oracle), (value, oracle)


@pytest.fixture(scope="module")
def rouge_scorer():
    """rouge-score, imported when a test here runs, not at collection (it imports nltk: about 0.5 s a process)."""
    return pytest.importorskip("rouge_score.rouge_scorer")


@pytest.mark.parametrize("rouge_type", ["rouge1", "rougeL"])
@settings(max_examples=300, deadline=None)
@given(pair=pairs())
def test_rouge_matches_rouge_score_without_stemming(rouge_type, pair, rouge_scorer):
    reference, response = pair
    scores = rouge_scorer.RougeScorer([rouge_type], use_stemmer=False).score(reference, response)[rouge_type]
    counts = tr.rouge_counts(rouge_type, tr.rouge_tokens(reference), tr.rouge_tokens(response))
    for mode in ("precision", "recall", "fmeasure"):
        value = tr.rouge_value(mode, *counts)
        assert value is None or isinstance(value, Fraction)
        oracle = getattr(scores, mode)
        assert (oracle == 0) if value is None else close(value, oracle), (mode, value, oracle)


MEASURES = {"levenshtein": distance.Levenshtein, "hamming": distance.Hamming, "jaro": distance.Jaro,
            "jaro_winkler": distance.JaroWinkler}


@pytest.mark.parametrize("measure", sorted(MEASURES))
@settings(max_examples=400, deadline=None)
@given(pair=st.one_of(pairs(), st.tuples(st.text(max_size=16), st.text(max_size=16))))
def test_similarities_match_rapidfuzz(measure, pair):
    reference, response = pair
    value = tr.SIMILARITIES[measure](reference, response)
    assert isinstance(value, Fraction), "a rational similarity is computed exactly"
    oracle = 1 - MEASURES[measure].normalized_distance(reference, response)
    if measure == "jaro_winkler" and tr.jaro_similarity(reference, response) == tr.JARO_WINKLER_THRESHOLD:
        # at the boost threshold exactly, rapidfuzz's float Jaro may land just above 0.7 and boost
        # (test_the_winkler_boost_threshold_is_exact_here_and_a_float_in_rapidfuzz): either side
        assert close(value, oracle) or close(boosted_jaro_winkler(reference, response), oracle), (value, oracle)
        return
    assert close(value, oracle), (value, oracle)


def boosted_jaro_winkler(a: str, b: str) -> Fraction:
    """Jaro-Winkler with the prefix boost applied whatever the Jaro value."""
    jaro = tr.jaro_similarity(a, b)
    prefix = next((i for i, (x, y) in enumerate(zip(a[:4], b[:4], strict=False)) if x != y), min(len(a), len(b), 4))
    return jaro + prefix * tr.JARO_WINKLER_PREFIX_WEIGHT * (1 - jaro)


def test_the_winkler_boost_threshold_is_exact_here_and_a_float_in_rapidfuzz():
    """A finding of the cross-check (hypothesis): Jaro(",", ",aaaaaaaaa") = (1 + 1/10 + 1) / 3 = 7/10
    exactly, so the reference does not boost (Winkler boosts only above 0.7) and gives 7/10. rapidfuzz,
    which Ragas's NonLLMStringSimilarity uses, computes the Jaro in floats as 0.7000000000000001, boosts
    by the one-character prefix and gives 0.73. Exact arithmetic and the library part at the threshold."""
    reference, response = ",", ",aaaaaaaaa"
    assert tr.jaro_similarity(reference, response) == Fraction(7, 10)
    assert tr.jaro_winkler_similarity(reference, response) == Fraction(7, 10)
    assert boosted_jaro_winkler(reference, response) == Fraction(73, 100)
    assert close(Fraction(73, 100), 1 - distance.JaroWinkler.normalized_distance(reference, response))


def test_ragas_bleu_variant_scores_only_the_first_response_sentence():
    """The variant the classifier names for BleuScore: A. B against A. C is 1 (B is never scored)."""
    a, b, c = ("the quick brown fox jumps over the lazy dog", "a completely different second sentence here",
               "another sentence with nothing in common at all")
    value, _ = tr.bleu(f"{a}. {b}".split(". ")[0], f"{a}. {c}".split(". "))
    oracle = sacrebleu.corpus_bleu(f"{a}. {b}".split(". "), [[s] for s in f"{a}. {c}".split(". ")]).score / 100
    assert value == 1 and close(value, oracle)


# components of ordinary size (scikit-learn treats a norm below ~1e-150 as zero; the reference does not)
component = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False).filter(lambda x: x == 0 or abs(x) > 1e-6)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.lists(component, min_size=n, max_size=n), st.lists(component, min_size=n, max_size=n))))
def test_cosine_matches_scikit_learn(vectors):
    """SemanticSimilarity's reference cosine against scikit-learn's cosine_similarity."""
    pairwise = pytest.importorskip("sklearn.metrics.pairwise")
    from ragas_compat.metrics.semantic_similarity import cosine

    a, b = vectors
    value = cosine(a, b)
    if value is None:
        assert not any(a) or not any(b)
        return
    oracle = float(pairwise.cosine_similarity([a], [b])[0][0])
    assert math.isclose(float(value), oracle, rel_tol=1e-9, abs_tol=1e-9), (value, oracle)
