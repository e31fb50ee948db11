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
