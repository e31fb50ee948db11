"""Where the verdict is shown (terminal, report.md, report.html, report.json), one line says what it
means ("expected" is every difference a known, named Ragas behaviour, not Ragas's numbers being right)
and what to do next; a recorded suite's reports carry the replay accounting under it."""

from __future__ import annotations

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.verdict import verdict_json
from ragas_compat.pipeline import pin_expectations, render_reports

CASE = {"id": "ids", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
        "retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["d1", "d2"], "reference_context_ids": ["d1"]}
MEANING = "it does not mean Ragas's numbers are right"


def _audit(case: dict, value: float):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": [case]}, source="t.json")
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": case["id"], "target": "legacy:IDBasedContextPrecision", "value": value,
                          "received": {}}]}
    return build_audit(suite, probe, pin_expectations(), {"ragas_version": "0.4.3", "ragas": {}})


def test_expected_says_what_it_means_in_every_report():
    audit = _audit(CASE, 0.5)
    assert audit.verdict.ok and audit.verdict.status == "expected"
    assert MEANING in verdict_json(audit)["meaning"]
    reports = render_reports(audit)
    for name in ("report.md", "report.html"):
        assert MEANING.replace("'", "&#x27;") in reports[name] or MEANING in reports[name], name


def test_drift_says_what_to_do_next():
    audit = _audit(CASE, 0.25)
    assert not audit.verdict.ok
    assert "Next:" in audit.verdict.meaning() and MEANING not in audit.verdict.meaning()


def test_a_recorded_suites_reports_carry_the_replay_accounting():
    recorded = {**CASE, "recording": {"live": {"legacy:IDBasedContextPrecision": 0.5, "legacy:Faithfulness": 1.0}}}
    audit = _audit(recorded, 0.5)
    line = "replay: 2 live scores, 1 reproduced bit for bit, 1 with no replayed row, 0 not replayable, 0 unchecked"
    assert verdict_json(audit)["replay"] == line
    assert line in render_reports(audit)["report.md"]
    assert [f.kind for f in audit.findings] == ["replay_mismatch"]
