"""Single-turn targets added for issue 36, through the real probe: AnswerSimilarity (the legacy alias of
SemanticSimilarity, on the semantic_similarity metrics) and the legacy function
ragas.metrics.quoted_spans.quoted_spans_alignment (a function target: called on a dataset of the case
alone), whose no-span 0.0 and straight-marks-only pattern are named variants of the quoted_spans reference."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.cases.model import Suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.classify import matching_variant
from ragas_compat.metrics import quoted_spans as qs
from ragas_compat.metrics.registry import metric
from ragas_compat.pipeline import pin_expectations
from ragas_compat.probe.protocol import target_problem
from ragas_compat.runner import run_probe
from ragas_compat.vocabulary import Api


def _case(response: str, contexts: list[str]):
    raw = {"id": "c", "category": "edge", "user_input": "q", "reference": "", "response": response,
           "retrieved_contexts": contexts, "quoted_spans": True}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def test_answer_similarity_is_a_legacy_target_of_both_semantic_metrics():
    assert "legacy:AnswerSimilarity" in map(str, metric("semantic_similarity").targets_of(Api.LEGACY))
    assert "legacy:AnswerSimilarity[threshold=0.5]" in map(
        str, metric("semantic_similarity_threshold").targets_of(Api.LEGACY))


def test_the_function_target_is_declared_as_data_and_checked():
    spec = next(t for t in metric("quoted_spans_alignment").probe_targets() if t["api"] == "legacy")
    assert spec["ragas_class"] == "quoted_spans_alignment" and spec["module"] == "ragas.metrics.quoted_spans"
    assert spec["function"] == {"arguments": [["answers", "response"], ["sources", "retrieved_contexts"]],
                                "value": "citation_alignment_quoted_spans"}
    assert target_problem(spec) is None
    assert "function" in target_problem({**spec, "function": {"arguments": [["answers"]], "value": "v"}})
    assert "function" in target_problem({**spec, "api": "collections"})
    collections = next(t for t in metric("quoted_spans_alignment").probe_targets() if t["api"] == "collections")
    assert "function" not in collections


@pytest.mark.parametrize(("response", "contexts", "value", "variant"), [
    # curly quotes only: the reference finds both spans; the function's straight-marks pattern none -> 0.0
    ("\u201cthe results are significant\u201d and \u2018the sample was large\u2019",
     ["The results are significant.", "The sample was large."], Fraction(1), "straight_quote_marks_only"),
    # no quotation: 0/0; the function returns 0.0 (the class 1.0)
    ("The capital is Paris.", ["Paris"], None, "no_span_scores_zero"),
    # straight quotes: the function reads it as the reference does
    ('He said "the results are significant".', ["The results are significant."], Fraction(1), None),
])
def test_function_reading_as_named_variants(response, contexts, value, variant):
    out = metric("quoted_spans_alignment").outcome(_case(response, contexts))
    assert out.value == value
    assert matching_variant(0.0 if variant else float(value), out) == variant
    if variant == "no_span_scores_zero":
        assert matching_variant(1.0, out) == "no_span_scores_one"   # the class's reading, still named


def test_function_pattern_has_the_straight_marks_only():
    assert qs.function_quoted_spans('"a b c" \u201cd e f\u201d `g h i` \u2018j k l\u2019') == ["a b c", "g h i"]
    assert qs.function_quoted_spans('"a b\nc d"') == []             # one line
    # any mark closes any span, apostrophes included, as in the class's pattern
    assert qs.function_quoted_spans("don't 'x y z' isn't") == ["t", "isn"]
    assert qs.function_quoted_spans("don't 'x y z' isn't") == qs.ragas_quoted_spans("don't 'x y z' isn't")


@pytest.mark.slow
def test_new_targets_through_the_real_probe():
    suite = load_default_suite()
    cases = tuple(c for c in suite.cases if c.id.startswith("quotes-") or c.id in (
        "edge-semantic-threshold", "options-semantic-threshold") or (c.embeddings and not c.verdicts))
    targets = ["legacy:quoted_spans_alignment", "collections:QuotedSpansAlignment", "legacy:AnswerSimilarity",
               "legacy:SemanticSimilarity", "legacy:AnswerSimilarity[threshold=0.5]"]
    probe = run_probe([c.raw for c in cases], targets=targets)
    assert probe.ok, probe.error
    results = {(r["case_id"], r["target"]): r for r in probe.output["results"]}
    curly = results[("quotes-curly-only", "legacy:quoted_spans_alignment")]
    assert curly["value"] == 0.0 and curly["ragas_class"] == "ragas.metrics.quoted_spans.quoted_spans_alignment"
    assert results[("quotes-curly-only", "collections:QuotedSpansAlignment")]["value"] == 1.0
    assert results[("quotes-none", "legacy:quoted_spans_alignment")]["value"] == 0.0
    assert results[("quotes-none", "collections:QuotedSpansAlignment")]["value"] == 1.0
    assert results[("quotes-found-normalised", "legacy:quoted_spans_alignment")]["value"] == 1.0
    alias = [(k[0], r["value"], results[(k[0], "legacy:SemanticSimilarity")]["value"])
             for k, r in results.items() if k[1] == "legacy:AnswerSimilarity"
             and (k[0], "legacy:SemanticSimilarity") in results]  # a case configuring SemanticSimilarity: no pair
    assert alias and all(a == b for _, a, b in alias)
    audit = build_audit(Suite("t", "t", cases), probe.output, pin_expectations(), {})
    assert not [(row.case.id, str(row.target), row.classification.name) for row in audit.rows if row.unexpected]
    names = {(row.case.id, str(row.target)): row.classification.name for row in audit.rows}
    assert names[("quotes-curly-only", "legacy:quoted_spans_alignment")] == "variant"
    assert names[("quotes-none", "legacy:quoted_spans_alignment")] == "empty_as_zero"
