"""Drift findings (ragas_compat.compare.findings) and the ``--fail-on`` policy (ragas_compat.compare.verdict); no
Ragas runs here."""

from __future__ import annotations

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import parse_expectations_text
from ragas_compat.compare.findings import DRIFT_KINDS, counts, findings, out_of_range, value_range
from ragas_compat.compare.verdict import FAIL_ON_DEFAULT, exit_code, failing, parse_fail_on
from ragas_compat.errors import ExitCode, HarnessInputError
from ragas_compat.metrics.registry import metric_names
from ragas_compat.values import RagasError

CASES = [
    {"id": "fine", "category": "single_source", "user_input": "q", "reference": "r", "response": "s",
     "retrieved_contexts": ["a", "b"], "verdicts": {"context_precision_with_reference": [1, 1],
                                                    "faithfulness": [{"statement": "s", "verdict": 1}]}},
    {"id": "two", "category": "edge", "user_input": "q", "reference": "r", "response": "s",
     "retrieved_contexts": ["a", "b"], "verdicts": {"context_precision_with_reference": [1, 2],
                                                    "faithfulness": [{"statement": "s", "verdict": 1}]}},
]

EXPECTATIONS = """
[[rule]]
id = "as-given"
classification = "divergence"
targets = ["collections:ContextPrecision*"]
when = { reference = "refused", inputs = "non_binary_verdicts" }
reason = "verdicts taken as given"
"""


def audit(results, text=EXPECTATIONS):
    suite = parse_suite({"schema_version": 1, "suite": "t", "cases": CASES})
    probe = {"ragas": {"version": "0.4.3"},
             "results": [{"case_id": c, "target": t, "value": v, "received": {}} for c, t, v in results]}
    return build_audit(suite, probe, parse_expectations_text(text, "x.toml"), {"ragas_version": "0.4.3"})


AS_GIVEN = 1.4999999999250001  # AP of [1, 2] taken as given, above 1
EPSILON_ONE = 2 / (2 + 1e-10)   # Ragas's AP of [1, 1]


def test_each_kind_of_finding():
    found = findings(audit([
        ("fine", "legacy:Faithfulness", 1.0),                                   # identical: nothing
        ("fine", "legacy:LLMContextPrecisionWithReference", 0.5),               # divergence no rule explains
        ("fine", "collections:Faithfulness", {"error": {"type": "KeyError", "message": "x"}}),  # error
        ("fine", "legacy:ContextPrecision", EPSILON_ONE),                       # epsilon no rule explains
        ("two", "collections:ContextPrecision", AS_GIVEN),                      # explained, but above 1
    ]))
    assert [(f.kind, f.case_id, f.target) for f in found] == [
        ("unexplained", "fine", "legacy:ContextPrecision"),
        ("divergence", "fine", "legacy:LLMContextPrecisionWithReference"),
        ("error", "fine", "collections:Faithfulness"),
        ("out_of_range", "two", "collections:ContextPrecision"),
        ("error", "fine", "legacy:Faithfulness vs collections:Faithfulness"),   # the pair, no path rule
    ]
    assert "outside [0, 1] for context_precision_with_reference" in found[3].message
    assert counts(found) == {"unexplained": 1, "divergence": 1, "out_of_range": 1, "error": 2}


def test_a_rule_can_allow_a_value_out_of_range():
    allowing = EXPECTATIONS + "allow_out_of_range = true\n"
    assert not findings(audit([("two", "collections:ContextPrecision", AS_GIVEN)], allowing))
    assert [f.kind for f in findings(audit([("two", "collections:ContextPrecision", AS_GIVEN)]))] == ["out_of_range"]


def test_an_unexplained_row_out_of_range_has_two_findings():
    found = findings(audit([("fine", "collections:ContextPrecision", 2.0)]))
    assert sorted(f.kind for f in found) == ["divergence", "out_of_range"]


@pytest.mark.parametrize("value,expected", [
    (0.0, False), (1.0, False), (1.0000000000000002, True), (-0.0, False), (-1e-300, True),
    (float("nan"), False), (float("inf"), True), (RagasError("E", "m"), False),
])
def test_out_of_range(value, expected):
    assert out_of_range("faithfulness", value) is expected


def test_every_registered_metric_has_the_unit_range_unless_it_states_another():
    from ragas_compat.compare.findings import RANGE_OVERRIDES

    assert set(RANGE_OVERRIDES) <= set(metric_names())  # no override for a metric that does not exist
    assert all(value_range(name) == RANGE_OVERRIDES.get(name, (0.0, 1.0)) for name in metric_names())
    assert value_range("faithfulness") == (0.0, 1.0) and value_range("rubrics_score") == (1.0, 5.0)
    assert value_range("not-a-metric") is None and not out_of_range("not-a-metric", 7.0)


@pytest.mark.parametrize("given,kinds", [
    (None, FAIL_ON_DEFAULT),
    ("all", FAIL_ON_DEFAULT),
    ([], FAIL_ON_DEFAULT),
    ("none", frozenset()),
    ("divergence,error", {"divergence", "error"}),
    (["out_of_range", "unexplained"], {"out_of_range", "unexplained"}),
    (["divergence", "error,divergence"], {"divergence", "error"}),
])
def test_parse_fail_on(given, kinds):
    assert parse_fail_on(given) == frozenset(kinds)


@pytest.mark.parametrize("given", ["divergences", "none,error"])
def test_bad_fail_on_values_are_refused(given):
    with pytest.raises(HarnessInputError, match="--fail-on"):
        parse_fail_on(given)


def test_exit_code_follows_fail_on():
    a = audit([("fine", "legacy:ContextPrecision", EPSILON_ONE), ("two", "collections:ContextPrecision", AS_GIVEN)])
    assert exit_code(a) == ExitCode.DRIFT
    assert exit_code(a, parse_fail_on("none")) == ExitCode.OK
    assert exit_code(a, parse_fail_on("divergence,error")) == ExitCode.OK
    assert exit_code(a, parse_fail_on("out_of_range")) == ExitCode.DRIFT
    assert [f.kind for f in failing(findings(a), parse_fail_on("unexplained"))] == ["unexplained"]
    assert a.drift  # the audit has findings whatever --fail-on says
    assert set(DRIFT_KINDS) == FAIL_ON_DEFAULT


def test_expectations_problems_are_unexplained_findings():
    stale = EXPECTATIONS + ('[[case]]\ncase = "fine"\ntargets = ["legacy:Faithfulness", "legacy:ContextPrecision"]\n'
                            'classification = "identical"\nreason = "r"\n')
    a = audit([("fine", "legacy:Faithfulness", 1.0), ("two", "legacy:ContextPrecision", 0.5)], stale)
    problems = [f for f in findings(a) if f.case_id is None]
    assert [f.kind for f in problems] == ["unexplained"] and "did not produce" in problems[0].message


def test_the_line_says_which_drift_is_not_a_row_of_it():
    """"17 rows, 4 identical, 13 explained, 0 unexplained, 4 unexplained errors" had every row fine: the 4 were
    legacy-vs-collections pairs, which the line's rows do not show. It says so now, and of findings of no row."""
    from ragas_compat.compare.findings import Finding
    from ragas_compat.compare.verdict import _elsewhere, _not_of_rows

    found = [Finding("error", "c", "legacy:A vs collections:A", "error", "identical", "m"),
             Finding("unexplained", None, None, None, None, "x.toml: a problem"),
             Finding("replay_mismatch", "c", "legacy:A", None, None, "the replay gave 1.0"),
             Finding("unexplained", "c", "legacy:A", "divergence", "identical", "m")]
    assert _not_of_rows(found, {id(found[0])}) == (1, 2)
    assert _elsewhere((1, 2)) == " (1 in legacy-vs-collections pairs, 2 of no row)"
    assert _elsewhere((0, 0)) == ""
    from ragas_compat.compare.verdict import Verdict

    line = Verdict("4 errors", 17, 4, 13, 0, 4, errors_elsewhere=(4, 0)).line()
    assert line == ("Verdict: 4 errors: 17 rows, 4 identical, 13 explained by rules or entries, 0 unexplained, "
                    "4 unexplained errors (4 in legacy-vs-collections pairs).")
