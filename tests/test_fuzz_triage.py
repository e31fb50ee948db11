"""The false reds of ``fuzz --n 300 --seed 7`` at Ragas 0.4.3, each on the fixed inputs that reproduced it.

- NonLLMStringSimilarity (levenshtein, hamming): 1 - d/n in doubles is 13-19 ulps from the exact value near
  0 (the error is bounded by the ulps of 1.0, not of the result): rounding, by the metric's stated tolerance.
- SemanticSimilarity: a cosine of exactly 0 evaluates to -2.2e-17: rounding, by the stated tolerance.
- The generator: several metric families drew the case's reference and response and the last one won, so
  DataCompyScore scored a CSV against a quoting response ("ragged CSV"), AnswerCorrectness an empty response
  with no frozen vector for "" (the legacy class embeds " ") or two vectors of different lengths. One
  family owns the texts of a case now, and the embedding table has every final text, one dimension.
- NoiseSensitivity with no statement on either side: Ragas raises ValueError (np.max of an empty matrix),
  named by a pin rule on the exception type and the input fact, not on numpy's message.
"""

from __future__ import annotations

import sys
from fractions import Fraction

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.classify import classify
from ragas_compat.metrics.datacompy_score import TableError, read_table
from ragas_compat.metrics.registry import metric
from ragas_compat.pipeline import pin_expectations
from ragas_compat.tools.fuzz.generator import generate_case
from ragas_compat.vocabulary import Classification

# case indices of seed 7 that reproduced each false red before the generator fix
DATACOMPY_NOT_A_TABLE = (12, 26, 66, 177, 193)            # ragged_csv, duplicate_column
ANSWER_CORRECTNESS_EMBEDDINGS = (0, 29, 94, 148, 156, 162)  # missing "" vector, lengths differ, zero vector


def _case(**fields):
    raw = {"id": "c", "category": "edge", "user_input": "q", "retrieved_contexts": [], **fields}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def test_levenshtein_and_hamming_near_zero_are_rounding_by_the_stated_tolerance():
    # fuzz-7-1 of the old generator: Ragas 0.021052631578947323 for the exact 2/95 (13 ulps), 0.010526315789473717
    # for 1/95 (19 ulps), each bit-equal to 1 - d/n in doubles
    texts = _case(string_metrics=True, reference="score\nalice\nParis\n",
                  response="東京 'are the' . “ĝĝĝĝĝĝĝĝĝĝĝĝĝĝ\tĝĝĝĝĝĝĝĝĝĝĝĝĝĝĝ ĝĝĝĝĝĝĝĝĝĝĝĝĝĝĝ\tĝĝĝĝĝĝĝĝĝĝĝĝĝĝĝ "
                           "ĝĝĝĝĝĝĝĝĝĝĝĝĝĝĝ”")
    for name, ragas, exact in (("string_similarity_levenshtein", 0.021052631578947323, Fraction(2, 95)),
                               ("string_similarity_hamming", 0.010526315789473717, Fraction(1, 95))):
        outcome = metric(name).outcome(texts)
        assert outcome.value == exact and outcome.alternatives["rounding"] == ragas
        diagnosis = classify(ragas, outcome)
        assert diagnosis.name is Classification.ROUNDING, diagnosis.explanation
        # the same stated tolerance does not stretch to a lost half: 0.0 for 1/2 is a divergence
        half = metric(name).outcome(_case(string_metrics=True, reference="ab", response="ax"))
        assert half.value == Fraction(1, 2)
        assert classify(0.0, half).name is Classification.DIVERGENCE


def test_the_stated_one_minus_quotient_tolerance_bounds_every_quotient():
    tolerance = metric("string_similarity_levenshtein").outcome(
        _case(string_metrics=True, reference="abc", response="abd")).details["float_tolerance"]
    worst = max(abs(Fraction(1 - d / n) - (1 - Fraction(d, n))) for n in range(1, 400) for d in range(n + 1))
    assert 0 < worst <= tolerance <= 2 * 2.0 ** -53


def test_a_cosine_of_zero_evaluated_near_zero_is_rounding():
    # fuzz-7-0 of the old generator: [0, -2, 2] and [0, -2, -2] are orthogonal; Ragas -2.2371143170757382e-17
    vectors = _case(reference="r", response="s", embeddings={"r": [0.0, -2.0, 2.0], "s": [0.0, -2.0, -2.0]})
    outcome = metric("semantic_similarity").outcome(vectors)
    assert outcome.value == 0 and outcome.alternatives["rounding"] == -2.2371143170757382e-17
    assert classify(-2.2371143170757382e-17, outcome).name is Classification.ROUNDING
    # the tolerance stays tiny: a cosine of 1/2 read as 0.0 is a divergence
    half = metric("semantic_similarity").outcome(
        _case(reference="r", response="s", embeddings={"r": [1.0, 1.0, 0.0, 0.0], "s": [1.0, 0.0, 1.0, 0.0]}))
    assert half.value == Fraction(1, 2)
    assert classify(0.0, half).name is Classification.DIVERGENCE


def test_the_cosine_tolerance_bounds_the_float_evaluation():
    import random

    from ragas_compat.metrics.semantic_similarity import cosine, cosine_float_tolerance, cosine_in_doubles

    rng = random.Random(0)
    for _ in range(300):
        d = rng.randint(1, 12)
        a, b = [rng.uniform(-3, 3) for _ in range(d)], [rng.uniform(-3, 3) for _ in range(d)]
        assert abs(Fraction(cosine_in_doubles(a, b)) - cosine(a, b)) <= cosine_float_tolerance(d)


def test_datacompy_scores_only_tables_of_its_own_draw():
    for index in DATACOMPY_NOT_A_TABLE:
        generated = generate_case(7, index)
        if generated.get("table_metrics"):
            read_table(generated["reference"]), read_table(generated["response"])  # both are tables
    tables = [generate_case(7, i) for i in range(200)]  # about 1 in 17 draws: more metrics share the draw
    assert sum(1 for c in tables if c.get("table_metrics")) >= 5  # DataCompyScore still owns some cases
    for generated in tables:
        if generated.get("table_metrics"):
            for text in (generated["reference"], generated["response"]):
                try:
                    read_table(text)
                except TableError as exc:  # only the generator's own case-folded names may be refused
                    raise AssertionError(f"{generated['id']}: {exc}") from None


def test_quoted_spans_score_only_their_own_response():
    seen = 0
    for i in range(60):
        generated = generate_case(7, i)
        if generated.get("quoted_spans"):
            seen += 1
            assert not generated.get("table_metrics") and "texts drawn for quoted_spans" in generated["description"]
    assert seen >= 3


def test_answer_correctness_gets_a_vector_for_every_text_it_embeds():
    for index in ANSWER_CORRECTNESS_EMBEDDINGS:
        generated = generate_case(7, index)
        table = generated["embeddings"]
        assert len({len(v) for v in table.values()}) == 1, generated["id"]  # one model, one dimension
        for field in ("reference", "response"):
            text = generated[field]
            assert text in table and (text or " ") in table, (generated["id"], field)
            assert table[text] == table[text or " "]  # legacy embeds " ", collections "": one vector
        suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [generated]})
        if not metric("answer_correctness").applies_to(suite.cases[0]):
            # sits out a case whose reference and response are one text (the frozen judge answers by content)
            assert generated["reference"] == generated["response"], generated["id"]
            continue
        outcome = metric("answer_correctness").outcome(suite.cases[0])
        assert outcome.refused is None, (generated["id"], outcome.refused)


def test_zero_padding_keeps_the_cosines():
    from ragas_compat.tools.fuzz.generator import embedding_table

    case = {"reference": "", "response": "b"}
    table = embedding_table([({"reference": "", "response": "b"}, {" ": [1.0, 2.0], "b": [2.0, 1.0]}),
                             ({"user_input": "q"}, {"q": [1.0, 0.0, 3.0]})], case)
    assert table == {" ": [1.0, 2.0, 0.0], "": [1.0, 2.0, 0.0], "b": [2.0, 1.0, 0.0], "q": [1.0, 0.0, 3.0]}


def _noise_case(items):
    return {"id": "ns", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
            "retrieved_contexts": ["ctx"], "verdicts": {"noise_sensitivity": items}}


def test_noise_sensitivity_without_reference_statements_or_a_value_is_named_by_type_and_input():
    # fuzz-7-73: the judge found no statement in the reference nor in the response; Ragas 0.4.3 raised
    # ValueError from np.max over the empty reference-by-context matrix (the message is numpy's, not matched)
    # fuzz-7-221: no reference statement and a response verdict 2 (refused here, coerced by Ragas): the same raise
    response_only = [{"statement": "s", "from": "response", "contexts": [1], "verdict": 0}]
    coerced = [{"statement": "s", "from": "response", "contexts": [1], "verdict": 2}]
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [_noise_case([]), {
        **_noise_case(response_only), "id": "ns-response"}, {**_noise_case(coerced), "id": "ns-coerced"}]})
    error = {"error": {"type": "ValueError", "message": "any text numpy chooses"}}
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": c, "target": t, "value": error, "received": {}}
                         for c in ("ns", "ns-response", "ns-coerced")
                         for t in ("legacy:NoiseSensitivity", "legacy:NoiseSensitivity[mode=irrelevant]")]}
    audit = build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3"})
    by = {(row.case.id, row.target): row.expected.by for row in audit.rows}
    assert by[("ns", "legacy:NoiseSensitivity")] == "rule noise-sensitivity-empty-reference-matrix-raises"
    assert by[("ns", "legacy:NoiseSensitivity[mode=irrelevant]")] == "rule noise-sensitivity-empty-reference-matrix-raises"
    assert by[("ns-coerced", "legacy:NoiseSensitivity")] == "rule noise-sensitivity-empty-reference-matrix-raises"
    # not for another error, nor where the reference has a value (no rule here matches numpy's message)
    assert by[("ns-response", "legacy:NoiseSensitivity")] != "rule noise-sensitivity-empty-reference-matrix-raises"
    other = {"error": {"type": "ZeroDivisionError", "message": "x"}}
    audit = build_audit(suite, {**probe, "results": [{"case_id": "ns", "target": "legacy:NoiseSensitivity",
                                                      "value": other, "received": {}}]},
                        pin_expectations(), {"ragas_version": "0.4.3"})
    assert [row.expected.by for row in audit.rows] == [None]


def test_bleu_in_doubles_five_ulps_off_is_rounding_by_its_stated_tolerance():
    # fuzz-7-79 (the string metrics on their own texts): Ragas 0.8862476419965998, bit-equal to sacrebleu's
    # doubles evaluation and 5 ulps from the exact BLEU (logs of percent precisions, then exp)
    texts = _case(string_metrics=True, reference='ok,id,score\n,1.0,\n"say ""hi""", x,"a,b"\n',
                  response='ok,id,score\n,1.0,\n"say ""hi""",,"a,b"\n')
    outcome = metric("bleu").outcome(texts)
    # the doubles evaluation under Python 3.11; 3.12 made sum() of floats exact (9 ulps lower here)
    assert outcome.alternatives["rounding"] == (0.8862476419965989 if sys.version_info >= (3, 12) else 0.8862476419965998)
    assert classify(0.8862476419965998, outcome).name is Classification.ROUNDING
    assert classify(0.0, outcome).name is Classification.DIVERGENCE


def test_the_bleu_tolerance_bounds_its_float_evaluation():
    import random

    from ragas_compat.metrics.text_similarity import _text

    rng = random.Random(1)
    checked = 0
    for _ in range(400):
        reference = _text(rng)
        response = reference + " " + _text(rng) if rng.random() < 0.5 else _text(rng)
        outcome = metric("bleu").outcome(_case(string_metrics=True, reference=reference, response=response))
        tolerance = outcome.details.get("float_tolerance")
        if tolerance:
            checked += 1
            assert abs(Fraction(outcome.alternatives["rounding"]) - outcome.value) <= tolerance
    assert checked > 50


def test_a_judged_metric_sits_out_a_case_whose_texts_it_would_send_twice():
    # fuzz-7-0 and fuzz-7-19 after the ownership fix: identical tables / identical strings made
    # FactualCorrectness decompose one text into two different frozen replies (StubMismatch, a harness error)
    equal = unequal = 0
    for i in range(60):
        generated = generate_case(7, i)
        if generated["reference"] == generated["response"]:
            equal += 1
            assert not {"factual_correctness", "answer_correctness", "noise_sensitivity", "answer_accuracy"} & set(
                generated.get("verdicts", {})), generated["id"]
        else:
            unequal += 1
            assert "factual_correctness" in generated["verdicts"], generated["id"]
    assert equal and unequal
