"""BLEU's smoothing and effective order named as causes, and BleuScore's / ChrfScore's further sacrebleu keywords
(``smooth_method`` floor and add-k with ``smooth_value``, ``tokenize``, ``use_effective_order``; chrF's
``eps_smoothing``) as target options, against sacrebleu (the independent oracle) and hand-computed fractions.

BLEU's reference where a case gives no keyword is the definition Ragas documents (n-gram precisions and the brevity
penalty, 1 for a perfect match): unsmoothed, over the orders the response has n-grams of. Ragas's call keeps
sacrebleu's defaults (exp smoothing, no effective order); where that changes the score the row is a named variant,
never ``rounding`` or ``identical``."""

from __future__ import annotations

import math
import random
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.compare.classify import classify, matching_variant
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics import text_reference as tr
from ragas_compat.metrics.registry import metric
from ragas_compat.metrics.text_similarity import (
    BLEU_EXP_SMOOTHING,
    BLEU_NO_EFFECTIVE_ORDER,
    _text,
    bleu_outcome,
    chrf_outcome,
)
from ragas_compat.probe.protocol import target_name
from ragas_compat.vocabulary import Classification

sacrebleu = pytest.importorskip("sacrebleu")

WORDS = ("the", "The", "cat,", "sat", "(hi)", "on", "a", "mat.", "x-y", "!", "don't", "東京", "naïve", "42", "4.5")


def case(reference: str, response: str, targets: dict | None = None):
    raw = {"id": "b", "category": "edge", "user_input": "q", "reference": reference, "response": response,
           "retrieved_contexts": [], "string_metrics": True, **({"targets": targets} if targets else {})}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def ragas_bleu(reference: str, response: str, **kwargs) -> float:
    """What BleuScore computes (both APIs at 0.4.3): the texts split on '. ', sacrebleu's corpus_bleu."""
    return sacrebleu.corpus_bleu(response.split(". "), [[s] for s in reference.split(". ")], **kwargs).score / 100


def random_kwargs(rng: random.Random) -> dict:
    kwargs: dict = {}
    if rng.random() < 0.3:
        kwargs["lowercase"] = rng.random() < 0.5
    if rng.random() < 0.6:
        kwargs["smooth_method"] = rng.choice(("exp", "none", "floor", "add-k"))
        if kwargs["smooth_method"] in ("floor", "add-k") and rng.random() < 0.5:
            kwargs["smooth_value"] = rng.choice((0.1, 0.5, 1, 2, 0.01))
    if rng.random() < 0.5:
        kwargs["tokenize"] = rng.choice(("13a", "none", "char"))
    if rng.random() < 0.5:
        kwargs["use_effective_order"] = rng.random() < 0.5
    return kwargs


@pytest.mark.parametrize("seed", range(3))
def test_reference_bleu_under_every_keyword_is_sacrebleus_and_its_doubles_are_bit_equal(seed):
    rng = random.Random(seed)
    for _ in range(400):
        ref = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))
        hyp = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))
        kwargs = random_kwargs(rng)
        value, details = tr.bleu(hyp, [ref], **kwargs)
        oracle = sacrebleu.corpus_bleu([hyp], [[ref]], **kwargs).score / 100
        if value is None:
            assert oracle == 0.0
            continue
        assert math.isclose(float(value), oracle, rel_tol=1e-12, abs_tol=1e-15), (ref, hyp, kwargs)
        assert tr.bleu_in_doubles(details) == oracle, (ref, hyp, kwargs)  # the same float evaluation


@pytest.mark.parametrize("seed", range(2))
def test_reference_chrf_with_eps_smoothing_is_sacrebleus(seed):
    rng = random.Random(seed)
    for _ in range(300):
        ref = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))
        hyp = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))
        kwargs = {"char_order": rng.randint(1, 7), "word_order": rng.randint(0, 3), "beta": rng.randint(0, 4),
                  "remove_whitespace": rng.random() < 0.7, "eps_smoothing": True}
        value, _ = tr.chrf(ref, hyp, **kwargs)
        oracle = sacrebleu.corpus_chrf([hyp], [[ref]], **kwargs).score / 100
        assert math.isclose(float(value), oracle, rel_tol=1e-12, abs_tol=1e-15), (ref, hyp, kwargs)


def test_chrf_eps_smoothing_by_hand():
    # 'ab' vs 'ab', char_order 3, beta 1: orders 1 and 2 F = 1; order 3: neither text has a 3-gram, precision and
    # recall are eps, F = 2 eps^2 / 2 eps = eps: (1 + 1 + eps) / 3. Without eps smoothing: the two orders both have, 1
    assert tr.chrf("ab", "ab", char_order=3, beta=1, eps_smoothing=True)[0] == (2 + tr.CHRF_EPS) / 3
    assert tr.chrf("ab", "ab", char_order=3, beta=1)[0] == 1
    outcome = chrf_outcome(case("ab", "ab"), {"char_order": 3, "beta": 1, "eps_smoothing": True})
    assert outcome.details["oracle"]["value"] == pytest.approx(float((2 + tr.CHRF_EPS) / 3), abs=1e-15)


def test_the_default_reference_is_unsmoothed_bleu_over_the_responses_orders_as_sacrebleu_computes_it():
    rng = random.Random(5)
    for _ in range(300):
        reference, response = _text(rng), _text(rng)
        outcome = metric("bleu").outcome(case(reference, response))
        oracle = sacrebleu.corpus_bleu([response], [[reference]], smooth_method="none",
                                       use_effective_order=True).score / 100
        assert math.isclose(float(outcome.value), oracle, rel_tol=1e-12, abs_tol=1e-15), (reference, response)


def test_exp_smoothing_by_hand_is_a_named_variant_not_rounding():
    # 13a: 'A cat sat there on a mat .' (8 tokens) against 'The cat sat on the mat .' (7): matches 5/8, 2/7, 0/6,
    # 0/5. Unsmoothed: a zero precision, BLEU 0. sacrebleu's exp smoothing: 1/(2 * 6), 1/(4 * 5); BP 1 (8 >= 7)
    reference, response = "The cat sat on the mat.", "A cat sat there on a mat."
    outcome = metric("bleu").outcome(case(reference, response))
    assert outcome.value == 0
    smoothed = [Fraction(5, 8), Fraction(2, 7), Fraction(1, 12), Fraction(1, 20)]
    with localcontext() as ctx:
        ctx.prec = 40
        exact = math.prod(smoothed)
        by_hand = float((Decimal(exact.numerator) / Decimal(exact.denominator)) ** (Decimal(1) / 4))
    ragas = ragas_bleu(reference, response)
    # sacrebleu's doubles under Python 3.11; 3.12 made sum() of floats exact, which moves the last bits
    assert ragas == (0.16515821590069035 if sys.version_info >= (3, 12) else 0.16515821590069027)
    assert ragas == pytest.approx(by_hand, rel=1e-15)
    diagnosis = classify(ragas, outcome)
    assert diagnosis.name is Classification.VARIANT and matching_variant(ragas, outcome) == BLEU_EXP_SMOOTHING
    assert "smooth_method='exp'" in diagnosis.explanation


def test_identical_one_word_answers_are_one_and_ragas_zero_is_the_no_effective_order_variant():
    outcome = metric("bleu").outcome(case("Paris", "Paris"))
    assert outcome.value == 1  # the unigram 1/1; the 0/0 orders are not read as 0
    assert ragas_bleu("Paris", "Paris") == 0.0
    assert classify(0.0, outcome).name is Classification.VARIANT
    assert matching_variant(0.0, outcome) == BLEU_NO_EFFECTIVE_ORDER
    # configured: use_effective_order true gives Ragas 1 (the reference's too), false the reference follows: 0
    assert bleu_outcome(case("Paris", "Paris"), {"use_effective_order": False}).value == 0
    configured = bleu_outcome(case("Paris", "Paris"), {"use_effective_order": True})
    assert configured.value == 1 and set(configured.alternatives) == {"rounding"}  # no variant: nothing to name


@pytest.mark.parametrize("seed", range(2))
def test_no_bleu_difference_from_smoothing_or_effective_order_is_read_as_rounding(seed):
    """Wherever Ragas's call (sacrebleu's defaults) scores otherwise than unsmoothed BLEU over the response's orders,
    the row is the variant that names the cause; before, the reference was the smoothed value and those rows read
    identical or rounding."""
    rng = random.Random(seed)
    named = 0
    for _ in range(600):
        reference, response = _text(rng), _text(rng)
        if ". " in reference or ". " in response:
            continue  # the first-sentence variant, tested elsewhere
        ragas = ragas_bleu(reference, response)
        textbook = sacrebleu.corpus_bleu([response], [[reference]], smooth_method="none",
                                         use_effective_order=True).score / 100
        diagnosis = classify(ragas, metric("bleu").outcome(case(reference, response)))
        if abs(ragas - textbook) > 1e-9:
            named += 1
            assert diagnosis.name is Classification.VARIANT, (reference, response, diagnosis)
            assert ("smooth_method='exp'" in diagnosis.explanation
                    or "use_effective_order=False" in diagnosis.explanation), diagnosis.explanation
        else:
            assert diagnosis.name in (Classification.IDENTICAL, Classification.ROUNDING), (reference, response)
    assert named > 50


def test_configured_smoothing_and_tokeniser_are_the_references_and_the_oracles():
    reference, response = "The cat sat on the mat.", "A cat sat there on a mat."
    for kwargs in ({"smooth_method": "floor"}, {"smooth_method": "add-k", "smooth_value": 1},
                   {"smooth_method": "floor", "smooth_value": 0.5}, {"tokenize": "char"},
                   {"tokenize": "none", "smooth_method": "exp"}, {"smooth_method": "none"}):
        outcome = bleu_outcome(case(reference, response), kwargs)
        ragas = ragas_bleu(reference, response, **kwargs)
        assert outcome.details["oracle"]["value"] == pytest.approx(float(outcome.value), abs=1e-15)
        assert classify(ragas, outcome).name in (Classification.IDENTICAL, Classification.ROUNDING), kwargs
    # add-k by hand: orders 2-4 add 1: 5/8, 3/8, 1/7, 1/6; floor 0.1: 5/8, 2/7, 0.1/6, 0.1/5
    assert bleu_outcome(case(reference, response), {"smooth_method": "add-k"}).details["precisions"] == [
        Fraction(5, 8), Fraction(3, 8), Fraction(1, 7), Fraction(1, 6)]
    assert bleu_outcome(case(reference, response), {"smooth_method": "floor"}).details["precisions"] == [
        Fraction(5, 8), Fraction(2, 7), Fraction(1, 60), Fraction(1, 50)]


@pytest.mark.parametrize(("kwargs", "closest"), [({"use_effective_ordr": True}, "use_effective_order"),
                                                 ({"tokenize": "intl"}, None), ({"smooth_value": -1}, None)])
def test_the_schema_refuses_unknown_or_uncomputed_keywords(kwargs, closest):
    with pytest.raises(HarnessInputError) as refused:
        case("a b", "a b", {"BleuScore": {"kwargs": kwargs}})
    if closest:
        assert closest in str(refused.value)


@pytest.mark.slow
def test_bundled_bleu_and_chrf_option_cases_through_the_probe_are_sacrebleus_on_both_apis():
    from bundled_probe import bundled_values

    ids = ("options-bleu-short-answer", "options-bleu-smoothing")
    suite = load_default_suite()
    values = bundled_values(lambda cid: cid in ids, ["legacy:BleuScore", "collections:BleuScore",
                                                     "legacy:ChrfScore", "collections:CHRFScore"])
    seen = set()
    for case_id in ids:
        bundled = suite.case(case_id)
        for config in bundled.targets:
            kwargs = dict(dict(config.options).get("kwargs") or {})
            value = values[(case_id, target_name(config.api, config.ragas_class, config.options))]
            if config.ragas_class == "BleuScore":
                expected = ragas_bleu(bundled.reference, bundled.response, **kwargs)
            else:
                expected = sacrebleu.corpus_chrf([bundled.response], [[bundled.reference]], **kwargs).score / 100
            assert value == expected, (case_id, config)
            seen.add((config.api, config.ragas_class, tuple(sorted(kwargs))))
    assert ("legacy", "BleuScore", ("use_effective_order",)) in seen
    assert ("collections", "BleuScore", ("tokenize",)) in seen
    assert ("collections", "CHRFScore", ("eps_smoothing",)) in seen
    assert values[("options-bleu-short-answer", "legacy:BleuScore")] == 0.0
    assert values[("options-bleu-short-answer", "collections:BleuScore[kwargs={use_effective_order=True}]")] > 0.99
