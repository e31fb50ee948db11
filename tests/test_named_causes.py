"""Known Ragas semantics are named causes, not bare divergences: the verdicts-returned denominator
(the judge's NLI reply judges fewer statements than the response has; Ragas divides by the verdicts
returned) is a named variant of Faithfulness that the pin's rule explains."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.classify import classify
from ragas_compat.metrics.registry import metric
from ragas_compat.pipeline import pin_expectations
from ragas_compat.vocabulary import Classification

CASES = Path(__file__).parent / "data" / "per_call_cases.json"
FEWER = "per-call-faithfulness-fewer-verdicts-than-statements"
TARGETS = ("legacy:Faithfulness", "collections:Faithfulness")


def fewer_case() -> dict:
    document = json.loads(CASES.read_text(encoding="utf-8"))
    return copy.deepcopy(next(c for c in document["cases"] if c["id"] == FEWER))


def audit_of(case: dict, value: float):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": case["id"], "target": t, "value": value, "received": {}} for t in TARGETS]}
    return build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3"})


def test_the_reference_recomputes_ragas_s_share_of_the_verdicts_returned():
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [fewer_case()]}, source="t.json")
    reference = metric("faithfulness").compute(suite.cases[0])
    assert reference.value == Fraction(1, 2)
    assert reference.alternatives["variant:verdicts_returned"] == 1
    assert reference.details["verdicts_returned"] == 1
    diagnosis = classify(1.0, reference)
    assert diagnosis.name is Classification.VARIANT
    assert "divides the supported verdicts by the verdicts returned" in diagnosis.explanation


def test_the_project_s_fewer_verdicts_example_is_explained_by_a_named_rule():
    # Ragas 0.4.3 scores this case 1.0 on both APIs (ragas-compat run --cases tests/data/per_call_cases.json)
    audit = audit_of(fewer_case(), 1.0)
    rows = [r for r in audit.rows if r.spec.name == "faithfulness"]
    assert len(rows) == 2
    for row in rows:
        assert row.classification.name is Classification.VARIANT
        assert row.expected.explained and not row.unexpected
        assert "faithfulness-verdicts-returned-denominator" in str(row.expected)
    assert not [f for f in audit.findings if "faithfulness" in str(f)]


def test_a_value_other_than_the_verdicts_returned_share_stays_unexplained():
    audit = audit_of(fewer_case(), 0.0)
    rows = [r for r in audit.rows if r.spec.name == "faithfulness"]
    assert all(r.classification.name is Classification.DIVERGENCE and r.unexpected for r in rows)


def test_a_reply_judging_every_statement_names_no_variant():
    case = fewer_case()
    case["judge_calls"]["faithfulness"]["nli_statements"] = [json.dumps({"statements": [
        {"statement": "Tern keeps build logs for 30 days.", "reason": "r", "verdict": 1},
        {"statement": "Logs are compressed after a week.", "reason": "r", "verdict": 0}]})]
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    reference = metric("faithfulness").compute(suite.cases[0])
    assert "variant:verdicts_returned" not in reference.alternatives


# FactualCorrectness and NoiseSensitivity: the judge's NLI replies return fewer verdicts than claims.
RETURNED_CASES = Path(__file__).parent / "data" / "verdicts_returned_cases.json"
# Ragas 0.4.3 on both APIs (ragas-compat run --cases tests/data/verdicts_returned_cases.json): target class ->
# (metric, measured value)
MEASURED = {
    "per-call-factual-correctness-fewer-verdicts-than-claims": [
        ("FactualCorrectness", "factual_correctness_f1", 0.5),
        ("FactualCorrectness[beta=0.5]", "factual_correctness_fbeta", 0.5),
        ("FactualCorrectness[mode=precision]", "factual_correctness_precision", 0.5)],
    "per-call-noise-sensitivity-fewer-verdicts-than-statements": [
        ("NoiseSensitivity", "noise_sensitivity_relevant", 0.5),
        ("NoiseSensitivity[mode=irrelevant]", "noise_sensitivity_irrelevant", 0.0)],
}
RULES = {"factual": "factual-correctness-verdicts-returned-denominator",
         "noise": "noise-sensitivity-verdicts-returned-denominator"}


def returned_case(case_id: str) -> dict:
    document = json.loads(RETURNED_CASES.read_text(encoding="utf-8"))
    return copy.deepcopy(next(c for c in document["cases"] if c["id"] == case_id))


def returned_audit(case: dict, value_of):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    results = [{"case_id": case["id"], "target": f"{api}:{target}", "value": value_of(measured), "received": {}}
               for target, _, measured in MEASURED[case["id"]] for api in ("legacy", "collections")]
    return build_audit(suite, {"ragas": {"version": "0.4.3"}, "results": results}, pin_expectations(),
                       {"ragas_version": "0.4.3"})


def test_factual_correctness_and_noise_sensitivity_recompute_ragas_s_count_over_the_verdicts_returned():
    fc = parse_suite({"schema_version": 1, "suite": "t", "cases": [
        returned_case("per-call-factual-correctness-fewer-verdicts-than-claims")]}, source="t").cases[0]
    precision = metric("factual_correctness_precision").compute(fc)
    assert precision.value == Fraction(1, 3)  # 1 of the 3 response claims is supported
    assert precision.alternatives["variant:verdicts_returned"] == 0.5  # 1 of the 2 verdicts returned
    assert metric("factual_correctness_f1").compute(fc).value == Fraction(2, 5)
    ns = parse_suite({"schema_version": 1, "suite": "t", "cases": [
        returned_case("per-call-noise-sensitivity-fewer-verdicts-than-statements")]}, source="t").cases[0]
    relevant = metric("noise_sensitivity_relevant").compute(ns)
    assert relevant.value == Fraction(1, 3)
    assert relevant.alternatives["variant:verdicts_returned"] == Fraction(1, 2)
    assert metric("noise_sensitivity_irrelevant").compute(ns).alternatives["variant:verdicts_returned"] == 0


def test_the_verdicts_returned_rows_are_explained_by_named_rules_on_both_apis():
    for case_id, measured in MEASURED.items():
        audit = returned_audit(returned_case(case_id), lambda value: value)
        assert len(audit.rows) == 2 * len(measured)
        for row in audit.rows:
            assert row.classification.name is Classification.VARIANT, (row.target, row.classification)
            assert row.expected.explained and not row.unexpected
            assert RULES["factual" if "factual" in case_id else "noise"] in str(row.expected)
        assert not audit.findings


def test_another_value_than_the_verdicts_returned_count_stays_unexplained():
    for case_id in MEASURED:
        audit = returned_audit(returned_case(case_id), lambda value: 0.25)
        assert audit.rows and all(r.classification.name is Classification.DIVERGENCE and r.unexpected
                                  for r in audit.rows)


def test_replies_returning_every_verdict_or_a_shape_numpy_refuses_name_no_variant():
    fc = returned_case("per-call-factual-correctness-fewer-verdicts-than-claims")
    reply = json.loads(fc["judge_calls"]["factual_correctness"]["claim_nli"][0]["reply"])
    reply["statements"].append({"statement": "s2", "reason": "r", "verdict": 0})  # all three judged
    fc["judge_calls"]["factual_correctness"]["claim_nli"][0]["reply"] = json.dumps(reply)
    case = parse_suite({"schema_version": 1, "suite": "t", "cases": [fc]}, source="t").cases[0]
    assert "variant:verdicts_returned" not in metric("factual_correctness_precision").compute(case).alternatives
    ns = returned_case("per-call-noise-sensitivity-fewer-verdicts-than-statements")
    ns["judge_calls"]["noise_sensitivity"]["noise_nli"][1] = json.dumps({"statements": [
        {"statement": "s0", "reason": "r", "verdict": 1}]})  # 1 verdict here, 2 in the other calls
    case = parse_suite({"schema_version": 1, "suite": "t", "cases": [ns]}, source="t").cases[0]
    assert "variant:verdicts_returned" not in metric("noise_sensitivity_relevant").compute(case).alternatives


# NonLLMContextPrecisionWithReference: the >= 0.5 similarity comparison (NonLLMContextRecall's is > 0.5).
AT_THRESHOLD = "edge-context-similarity-at-threshold"  # bundled suite; Ragas 0.4.3 scores it 0.9999999999


def _bundled(case_id: str) -> dict:
    from ragas_compat.resources import package_json

    document = package_json("cases/suites/default.json")
    return copy.deepcopy(next(c for c in document["cases"] if c["id"] == case_id))


def _threshold_audit(case: dict, value: float):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"}, "results": [
        {"case_id": case["id"], "target": "legacy:NonLLMContextPrecisionWithReference", "value": value,
         "received": {}}]}
    return build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3"})


def test_the_inclusive_similarity_threshold_is_a_named_variant_that_says_which_comparison_counted():
    audit = _threshold_audit(_bundled(AT_THRESHOLD), 0.9999999999)
    [row] = [r for r in audit.rows if r.spec.name == "context_precision_string_match"]
    assert row.classification.name is Classification.VARIANT
    assert ">= 0.5" in row.classification.explanation and "> 0.5" in row.classification.explanation
    assert row.reference.details["similarity_labels"] == (1,)
    assert "string-precision-threshold-inclusive" in str(row.expected) and not row.unexpected
    assert not audit.findings


def test_a_context_more_than_half_similar_names_no_threshold_variant():
    case = _bundled(AT_THRESHOLD)
    case["retrieved_contexts"] = [case["reference_contexts"][0] + "!"]  # far above 0.5: > and >= agree
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    reference = metric("context_precision_string_match").compute(suite.cases[0])
    assert "variant:threshold_inclusive" not in reference.alternatives
