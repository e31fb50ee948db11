"""Cases a user would write about their own RAG system (not the bundled suite): a multi-source
answer, a no-answer case where the system said nothing, a conflict between an old and a new page.
Shared by tests/test_user_cases.py, tests/test_bless.py and tests/test_packaging.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path

ROTATE = "Rotate a key with `acme keys rotate`; the old key stays valid for 24 hours."
JOBS = "Running jobs keep the credentials they started with until they finish."
BILLING = "Invoices are sent on the first day of each month."
TIMEOUT_V3 = "Since v3 the default request timeout is 60 seconds (setting: request.timeout)."
TIMEOUT_V2 = "Since v2 the default request timeout is 30 seconds (setting: request.timeout)."

USER_SUITE = {
    "schema_version": 1,
    "suite": "acme-support",
    "description": "Support questions about the acme CLI, judged once by our LLM judge and frozen.",
    "cases": [
        {
            "id": "rotate-key-running-jobs",
            "category": "multi_source",
            "user_input": "How do I rotate an API key, and what happens to jobs that are running?",
            "reference": "Run acme keys rotate; the old key works for 24 hours and running jobs keep their credentials.",
            "response": "Use acme keys rotate. The old key stays valid for a day, and running jobs are not affected.",
            "retrieved_contexts": [ROTATE, BILLING, JOBS],
            "reference_contexts": [ROTATE, JOBS],
            "retrieved_context_ids": ["kb-12", "kb-77", "kb-40"],
            "reference_context_ids": ["kb-12", "kb-40"],
            "corpus_relevant_count": 2,
            "verdicts": {
                "context_precision_with_reference": [1, 0, 1],
                "context_precision_without_reference": [1, 0, 1],
                "context_recall": [
                    {"statement": "Run acme keys rotate.", "attributed": 1},
                    {"statement": "The old key works for 24 hours.", "attributed": 1},
                    {"statement": "Running jobs keep their credentials.", "attributed": 1},
                ],
                "faithfulness": [
                    {"statement": "Use acme keys rotate.", "verdict": 1},
                    {"statement": "The old key stays valid for a day.", "verdict": 1},
                    {"statement": "Running jobs are not affected.", "verdict": 1},
                ],
            },
        },
        {
            "id": "sso-not-documented",
            "category": "no_answer",
            "user_input": "Does acme support SAML single sign-on?",
            "reference": "The documentation does not say; SSO is not documented.",
            "response": "",
            "retrieved_contexts": [BILLING, ROTATE],
            "reference_contexts": [],
            "retrieved_context_ids": ["kb-77", "kb-12"],
            "reference_context_ids": [],
            "verdicts": {
                "context_precision_with_reference": [0, 0],
                "context_precision_without_reference": [0, 0],
                "context_recall": [{"statement": "SSO is not documented.", "attributed": 0}],
                "faithfulness": [],
            },
        },
        {
            "id": "timeout-old-and-new-page",
            "category": "conflict",
            "user_input": "What is the default request timeout?",
            "reference": "60 seconds since v3.",
            "response": "The default timeout is 30 seconds.",
            "retrieved_contexts": [TIMEOUT_V2, TIMEOUT_V3],
            "reference_contexts": [TIMEOUT_V3],
            "retrieved_context_ids": ["kb-5", "kb-5", "kb-9"],
            "reference_context_ids": ["kb-9"],
            "verdicts": {
                "context_precision_with_reference": [0, 1],
                "context_precision_without_reference": [1, 0],
                "context_recall": [{"statement": "The default timeout is 60 seconds since v3.", "attributed": 1}],
                "faithfulness": [{"statement": "The default timeout is 30 seconds.", "verdict": 1}],
            },
        },
    ],
}

# The judge answered 2 for a reference claim: the collections ContextRecall takes it as given and
# returns 2.0, a recall above 1 (out of range; the legacy classes count it by truthiness).
JUDGE_SAID_TWO = {
    "id": "judge-said-two",
    "category": "single_source",
    "user_input": "Where are invoices sent?",
    "reference": "To the billing e-mail on the first day of each month.",
    "response": "On the first of the month.",
    "retrieved_contexts": [BILLING],
    "verdicts": {"context_recall": [{"statement": "Invoices are sent on the first day of each month.",
                                     "attributed": 2}]},
}


def write_suite(path: Path, extra_cases: list[dict] | None = None) -> Path:
    suite = copy.deepcopy(USER_SUITE)
    suite["cases"] += copy.deepcopy(extra_cases or [])
    path.write_text(json.dumps(suite, indent=2), encoding="utf-8")
    return path
