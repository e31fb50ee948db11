"""QuotedSpansAlignment (collections only): the exact reference (paired quotation marks, apostrophes,
the 3-word minimum, whitespace and case normalisation, one context at a time), Ragas's reading as named
variants, and the classification of what Ragas 0.4.3 returns on the bundled cases."""

from __future__ import annotations

import random
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.compare.classify import classify, matching_variant
from ragas_compat.metrics import quoted_spans as qs
from ragas_compat.metrics.registry import metric
from ragas_compat.metrics.spec import FuzzDraw
from ragas_compat.vocabulary import Api, Classification


def case(response: str, contexts: list[str], quoted_spans: object = True):
    raw = {"id": "c", "category": "edge", "user_input": "q", "reference": "", "response": response,
           "retrieved_contexts": contexts}
    if quoted_spans is not None:
        raw["quoted_spans"] = quoted_spans
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def outcome(response: str, contexts: list[str]):
    return metric("quoted_spans_alignment").outcome(case(response, contexts))


def test_it_runs_only_on_cases_that_ask_the_class_and_the_legacy_function():
    spec = metric("quoted_spans_alignment")
    assert spec.applies_to(case('"a b c"', []))
    assert not spec.applies_to(case('"a b c"', [], quoted_spans=None))
    # no legacy class at 0.4.3: the legacy target is the function ragas.metrics.quoted_spans.quoted_spans_alignment
    assert tuple(map(str, spec.targets_of(Api.LEGACY))) == ("legacy:quoted_spans_alignment",)
    assert spec.targets_of(Api.COLLECTIONS)


@pytest.mark.parametrize(("text", "spans"), [
    ('He said "a b c" and "d e".', ["a b c", "d e"]),
    ("\u201ccurly one two\u201d then \u201elow nine high\u201c", ["curly one two", "low nine high"]),
    ("Don't say 'one two three' if it isn't so.", ["one two three"]),     # apostrophes are not quotes
    ("\u2018single curly words\u2019 and rock\u2019s end", ["single curly words"]),
    ('"outer \u2018inner span\u2019 text"', ["outer \u2018inner span\u2019 text"]),   # nested: the outer span
    ('"across a\nline break"', ["across a\nline break"]),
    ('an "unclosed quotation', []),
    ("`backticks are code` and \u00b4acutes\u00b4", []),                 # not quotation marks
])
def test_quoted_spans(text, spans):
    assert qs.quoted_spans(text) == spans


def test_the_minimum_is_three_words():
    assert qs.long_enough(["one two", "one two three", "  padded  two  "]) == ["one two three"]


def test_normalisation_collapses_whitespace_and_lower_cases():
    assert qs.normalise("  The\tRESULTS\n\n are ") == "the results are"
    assert qs.aligned("The  results\nARE", ["the results are significant"])
    assert not qs.aligned("naïve models win", ["naive models win"])      # no accent folding


def test_a_span_must_be_inside_one_context():
    out = outcome('He said "the results are significant".', ["The results are", "significant overall."])
    assert out.value == 0
    assert out.alternatives["variant:contexts_joined"] == 1
    diagnosis = classify(1.0, out)            # Ragas 0.4.3 on the bundled case quotes-across-contexts
    assert diagnosis.name is Classification.VARIANT and "joined" in diagnosis.explanation


def test_no_span_is_undefined_and_ragas_one_is_named():
    for response in ("The capital is Paris.", 'He called it "fine" and "too short".'):
        out = outcome(response, ["Paris"])
        assert out.value is None and out.undefined_reason == qs.NO_SPANS
        assert matching_variant(1.0, out) == "no_span_scores_one"
        assert classify(1.0, out).name is Classification.VARIANT


def test_ragas_quote_marks_variant_on_apostrophes_and_line_breaks():
    apostrophe = outcome("Don't say 'the results are significant' if it isn't so.", ["The results are significant."])
    assert apostrophe.value == 1 and apostrophe.details["ragas_spans"] == ["if it isn"]
    assert matching_variant(0.0, apostrophe) == "ragas_quote_marks"
    broken = outcome('He said "the results\nare significant" twice.', ["The results are significant."])
    assert broken.value == 1 and broken.details["ragas_spans"] == []
    assert matching_variant(1.0, broken) == "ragas_quote_marks"


def test_unicode_and_punctuation_inside_a_span():
    out = outcome("The paper says \u201cCaf\u00e9 prices rose, sharply\u2014by 12%\u201d and \u201cna\u00efve models "
                  "always win\u201d.", ["In 2024 caf\u00e9 prices rose, sharply\u2014by 12%.", "Naive models always win."])
    # the class reads it as the reference does; the legacy function's straight-marks pattern finds no span: 0.0
    assert out.value == Fraction(1, 2) and out.alternatives == {"variant:straight_quote_marks_only": 0}


def test_the_bundled_cases_cover_the_named_shapes():
    ids = {c.id for c in load_default_suite().cases if c.quoted_spans}
    assert {"quotes-none", "quotes-below-minimum", "quotes-found-normalised", "quotes-unicode-punctuation",
            "quotes-across-contexts", "quotes-apostrophe", "quotes-line-break"} <= ids


def test_fuzz_keeps_the_draws_contexts():
    contexts = ["AAAA", "BBBBB", "CCCCCC"]
    for i in range(100):
        draw = FuzzDraw(contexts, [], [], None, [], [], [], [], [], rng=random.Random(i))
        inputs = qs.fuzz_quotes(draw)
        assert set(inputs) == {"quoted_spans", "response"}


# Ragas's documented reading, written out independently of the module: one regular expression over ten
# marks, spans of >= 3 words, contexts joined with a space, 1.0 without a span.
MARKS = "\"\u201c\u201d\u201e\u201f'\u2018\u2019`\u00b4"


def ragas_reading(response: str, contexts: list[str]) -> float:
    spans = [m.strip() for m in re.findall(f"[{MARKS}](.*?)[{MARKS}]", response)]
    spans = [s for s in spans if len(s.split()) >= 3]
    if not spans:
        return 1.0
    joined = re.sub(r"\s+", " ", " ".join(contexts)).strip().lower()
    return sum(re.sub(r"\s+", " ", s).strip().lower() in joined for s in spans) / len(spans)


WORDS = st.sampled_from(["the", "results", "are", "significant", "The", "don't", "it's", "café", "東京", "\n", ","])
PIECES = st.one_of(WORDS, st.sampled_from(list(MARKS)))
texts = st.lists(PIECES, max_size=16).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.lists(WORDS, max_size=6).map(" ".join), max_size=3))
def test_ragas_value_is_always_the_reference_or_a_named_variant(response, contexts):
    out = outcome(response, contexts)
    ragas = ragas_reading(response, contexts)
    exact = None if out.value is None else float(out.value)
    assert exact == ragas or matching_variant(ragas, out) is not None, (response, contexts, out)
