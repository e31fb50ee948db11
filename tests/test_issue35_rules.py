"""The pin rules of issue 35's leftovers explain their rows (Ragas's values as the real probe returns them at
0.4.3: tests/test_bleu_options.py, tests/test_never_asked.py and the bundled options cases): BLEU's exp smoothing
and missing effective order, the rating shortcut tested before empty_as_zero, QuotedSpans casefold=False
matching spans as written."""

from __future__ import annotations

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.pipeline import pin_expectations
from ragas_compat.values import encode_float

CASES = [
    {"id": "smooth", "category": "edge", "user_input": "q", "reference": "The cat sat on the mat.",
     "response": "A cat sat there on a mat.", "retrieved_contexts": [], "string_metrics": True},
    {"id": "one-word", "category": "edge", "user_input": "q", "reference": "Paris", "response": "Paris",
     "retrieved_contexts": [], "string_metrics": True},
    {"id": "shortcut", "category": "edge", "user_input": "Is this true: The Nile flows north.", "reference": "Yes.",
     "response": "Yes.", "retrieved_contexts": ["The Nile flows north."],
     "verdicts": {"context_relevance": [{"template": 1, "rating": "n/a"}, {"template": 2, "rating": 5}]}},
    {"id": "casefold", "category": "edge", "user_input": "q", "reference": "r",
     "response": "It says \"machine  learning is powerful\".", "retrieved_contexts": ["machine learning is powerful."],
     "quoted_spans": True, "targets": {"QuotedSpansAlignment": [{"casefold": False}]}},
]
# (case, target, Ragas's value at 0.4.3, the rule that explains it)
ROWS = [
    ("smooth", "legacy:BleuScore", 0.16515821590069027, "rule bleu-exp-smoothing"),
    ("smooth", "collections:BleuScore", 0.16515821590069027, "rule bleu-exp-smoothing"),
    ("one-word", "legacy:BleuScore", 0.0, "rule bleu-no-effective-order"),
    ("one-word", "collections:BleuScore", 0.0, "rule bleu-no-effective-order"),
    ("shortcut", "legacy:ContextRelevance", 0.0, "rule nv-text-shortcut"),
    ("shortcut", "collections:ContextRelevance", 0.0, "rule nv-text-shortcut"),
    ("casefold", "collections:QuotedSpansAlignment[casefold=False]", 0.0, "rule quoted-spans-casefold-off-as-written"),
]


def test_each_leftover_row_is_explained_by_its_named_rule():
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": CASES})
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": c, "target": t, "value": encode_float(v), "received": {}} for c, t, v, _ in ROWS]}
    audit = build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3"})
    by = {(row.case.id, row.target): (row.classification.name.value, row.expected.by) for row in audit.rows}
    for case_id, target, _, rule in ROWS:
        classification, explained_by = by[(case_id, target)]
        assert classification == "variant", (case_id, target, classification)
        assert explained_by == rule, (case_id, target, explained_by)
