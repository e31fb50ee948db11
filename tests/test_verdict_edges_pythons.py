"""The pin's rules hold across Pythons: they match Ragas's errors by exception type and input facts,
never by CPython's own message text (3.11 ``max() arg is an empty sequence``, 3.12+ ``max() iterable
argument is empty``), so the default audit gives the same verdict under every supported Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.findings import findings
from ragas_compat.pipeline import pin_expectations

# The messages CPython gives for the same builtin failure, by version.
CPYTHON_MESSAGES = {
    "max() of an empty list": ("max() arg is an empty sequence",            # 3.11
                               "max() iterable argument is empty"),         # 3.12, 3.13
    "min() of an empty list": ("min() arg is an empty sequence", "min() iterable argument is empty"),
}

BASE = {"category": "edge", "user_input": "q", "reference": "r", "response": "a"}


def _audit(case: dict, target: str, message: str):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": case["id"], "target": target, "received": {},
                          "value": {"error": {"type": "ValueError", "message": message}}}]}
    return build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3"})


@pytest.mark.parametrize("message", CPYTHON_MESSAGES["max() of an empty list"])
@pytest.mark.parametrize(("case", "target", "rule"), [
    ({**BASE, "id": "empty-ref", "retrieved_contexts": ["c"], "reference_contexts": []},
     "legacy:NonLLMContextPrecisionWithReference", "string-precision-empty-reference-error"),
    ({**BASE, "id": "empty-retrieval", "retrieved_contexts": [], "reference_contexts": ["c"]},
     "legacy:NonLLMContextRecall", "string-recall-empty-retrieval-error"),
])
def test_the_empty_max_rules_explain_the_error_whatever_cpythons_wording(case, target, rule, message):
    audit = _audit(case, target, message)
    assert audit.rows, "the metric applies to the case"
    assert all(row.expected.by == f"rule {rule}" for row in audit.rows), [row.expected for row in audit.rows]
    assert findings(audit) == []


def test_the_same_error_on_other_inputs_stays_unexplained():
    """Type alone does not explain it: the input fact must hold (a non-empty reference list)."""
    case = {**BASE, "id": "both-given", "retrieved_contexts": ["c"], "reference_contexts": ["d"]}
    audit = _audit(case, "legacy:NonLLMContextPrecisionWithReference", "max() iterable argument is empty")
    assert [f.kind for f in findings(audit)] == ["error"]


def test_no_pin_rule_reads_a_cpython_message():
    """A rule's error_message may name a library's message (pinned by the constraints), never one
    CPython words differently across the supported versions."""
    pin = pin_expectations()
    for rule in pin.rules + pin.path_rules:
        pattern = rule.when.error_message
        if pattern is None:
            continue
        for what, variants in CPYTHON_MESSAGES.items():
            assert not any(pattern.search(text) for text in variants), (rule.id, what)


OTHER_PYTHON = os.environ.get("RAGAS_COMPAT_OTHER_PYTHON")


@pytest.mark.slow
@pytest.mark.skipif(not OTHER_PYTHON, reason="set RAGAS_COMPAT_OTHER_PYTHON to another Python with Ragas installed "
                                               "(e.g. a 3.13 venv) to run the default audit under it")
def test_the_default_audit_exits_0_under_another_python(tmp_path: Path):
    run = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--python", str(OTHER_PYTHON),
                          "--out", str(tmp_path / "out"), "--format", "json"],
                         capture_output=True, text=True, timeout=900)
    summary = json.loads(run.stdout) if run.stdout.startswith("{") else {}
    assert run.returncode == 0, (run.stderr, [f for f in summary.get("drift", []) if f["fails"]][:5])
