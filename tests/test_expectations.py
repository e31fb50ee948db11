"""Expectations as rules (by what produces a classification) and case entries (by case id).

Rows are built with ``build_audit`` from a hand-written probe output, so no Ragas runs here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragas_compat.cases import parse_suite
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import (
    IDENTICAL,
    load_expectations,
    parse_expectations,
    parse_expectations_text,
)
from ragas_compat.compare.findings import findings
from ragas_compat.errors import HarnessInputError
from ragas_compat.pipeline import DEFAULT_EXPECTATIONS, load_run_expectations, pin_expectations

EPS_5_6 = 0.8333333332916666  # Ragas's 5/6 with (hits + 1e-10)


def case(case_id: str, **overrides) -> dict:
    data = {
        "id": case_id, "category": "single_source", "user_input": "How do I pause a job?",
        "reference": "Run tern pause <job>.", "response": "Use tern pause.",
        "retrieved_contexts": ["tern pause <job> stops runs.", "Tags group jobs.", "Pausing keeps history."],
        "verdicts": {"context_precision_with_reference": [1, 0, 1]},
    }
    data.update(overrides)
    return data


def suite(*cases: dict):
    return parse_suite({"schema_version": 1, "suite": "t", "cases": list(cases)}, source="t.json")


def probe(*results: tuple[str, str, object], version: str | None = "0.4.3") -> dict:
    return {"ragas": {"version": version},
            "results": [{"case_id": c, "target": t, "value": v, "received": {}} for c, t, v in results]}


def audit_of(cases, results, expectations, version="0.4.3"):
    return build_audit(suite(*cases), probe(*results, version=version), expectations, {"ragas_version": version})


RULES = """
[[rule]]
id = "ap-epsilon"
classification = "epsilon"
ragas = ">=0.2.15,<0.5"
targets = ["legacy:*ContextPrecision*"]
metrics = ["context_precision_*"]
when = { reference = "defined" }
reason = "1e-10 in the denominator"
upstream = "https://example.invalid/2909"

[[rule]]
id = "ap-empty-as-zero"
classification = "empty_as_zero"
targets = ["legacy:*ContextPrecision*"]
when = { undefined_reason = ["no_relevant_retrieved", "empty_retrieval"] }
reason = "0/0 scored 0.0"
"""


def test_a_rule_explains_rows_of_any_case_id():
    exp = parse_expectations_text(RULES, "rules.toml")
    audit = audit_of([case("mine-1"), case("mine-2", verdicts={"context_precision_with_reference": [0, 0, 0]})],
                     [("mine-1", "legacy:LLMContextPrecisionWithReference", EPS_5_6),
                      ("mine-2", "legacy:ContextPrecision", 0.0)], exp)
    first, second = audit.rows
    assert (first.classification.name, first.expected.by, first.expected.upstream) == (
        "epsilon", "rule ap-epsilon", "https://example.invalid/2909")
    assert first.expected.label == "rule ap-epsilon (rules.toml)"
    assert (second.classification.name, second.expected.by) == ("empty_as_zero", "rule ap-empty-as-zero")
    assert not findings(audit)


def test_a_row_no_rule_explains_is_unexplained():
    exp = parse_expectations_text(RULES, "rules.toml")
    # wrong metric family for the rule's target glob: nothing explains the epsilon
    audit = audit_of([case("c")], [("c", "collections:ContextPrecision", EPS_5_6)], exp)
    (row,) = audit.rows
    assert row.expected == IDENTICAL and row.unexpected
    (finding,) = findings(audit)
    assert finding.kind == "unexplained" and finding.case_id == "c" and "no rule explains" in finding.message


def test_rules_apply_only_inside_their_ragas_range():
    exp = parse_expectations_text(RULES, "rules.toml")
    rows = [("c", "legacy:ContextPrecision", EPS_5_6)]
    assert not findings(audit_of([case("c")], rows, exp, version="0.4.3"))
    assert not findings(audit_of([case("c")], rows, exp, version="0.4.4.dev3+g2b38724"))  # pre-releases count
    assert [f.kind for f in findings(audit_of([case("c")], rows, exp, version="0.5.0"))] == ["unexplained"]
    assert [f.kind for f in findings(audit_of([case("c")], rows, exp, version=None))] == ["unexplained"]


def test_the_condition_must_hold():
    exp = parse_expectations_text(RULES.replace('undefined_reason = ["no_relevant_retrieved", "empty_retrieval"]',
                                                'undefined_reason = "empty_retrieval"'), "rules.toml")
    audit = audit_of([case("c", verdicts={"context_precision_with_reference": [0, 0, 0]})],
                     [("c", "legacy:ContextPrecision", 0.0)], exp)
    assert audit.rows[0].classification.name == "empty_as_zero" and not audit.rows[0].expected.explained
    assert [f.kind for f in findings(audit)] == ["unexplained"]


def test_a_case_entry_is_strict_and_beats_rules():
    text = RULES + """
[[case]]
case = "c"
targets = ["legacy:ContextPrecision"]
classification = "identical"
reason = "we fixed the epsilon in our fork"
"""
    audit = audit_of([case("c")], [("c", "legacy:ContextPrecision", EPS_5_6)], parse_expectations_text(text, "x.toml"))
    (finding,) = findings(audit)
    assert finding.kind == "unexplained" and finding.expected == "identical"
    assert "case entry 0 (c) (x.toml) expects identical" in finding.message


def test_error_rules_match_type_message_and_input_facts():
    text = """
[[rule]]
id = "collections-empty-input"
classification = "error"
targets = ["collections:*"]
when = { error_type = "ValueError", error_message = "(cannot be empty|is missing)", inputs = "error_names_empty_input" }
reason = "collections validate their inputs"
"""
    exp = parse_expectations_text(text, "x.toml")
    empty = case("empty", retrieved_contexts=[], verdicts={"context_precision_with_reference": []})
    error = {"error": {"type": "ValueError", "message": "retrieved_contexts cannot be empty"}}
    other = {"error": {"type": "ValueError", "message": "something else is missing"}}
    audit = audit_of([empty, case("full")], [("empty", "collections:ContextPrecision", error),
                                             ("full", "collections:ContextPrecision", error),
                                             ("empty", "collections:ContextPrecisionWithReference", other)], exp)
    by_case = {(r.case.id, r.target): r.expected.by for r in audit.rows}
    assert by_case[("empty", "collections:ContextPrecision")] == "rule collections-empty-input"
    assert by_case[("full", "collections:ContextPrecision")] is None  # the named input is not empty
    assert by_case[("empty", "collections:ContextPrecisionWithReference")] is None  # the message names no empty input
    assert [f.kind for f in findings(audit)] == ["error", "error"]


def test_stale_and_ambiguous_case_entries_are_problems():
    text = """
[[case]]
cases = ["c", "other-suite-case"]
targets = ["legacy:ContextPrecision", "legacy:LLMContextPrecisionWithReference"]
classification = "epsilon"
reason = "r"

[[case]]
case = "c"
targets = ["legacy:*"]
classification = "epsilon"
reason = "again"
"""
    audit = audit_of([case("c")], [("c", "legacy:ContextPrecision", EPS_5_6)], parse_expectations_text(text, "x.toml"))
    problems = audit.expectation_problems
    assert any("(c, legacy:ContextPrecision) is named by more than one case entry" in p for p in problems)
    assert not any("LLMContextPrecisionWithReference" in p for p in problems)  # not a target of this run
    assert not any("other-suite-case" in p for p in problems)  # cases outside the run are not stale
    assert {f.kind for f in findings(audit)} == {"unexplained"}


def test_a_target_name_with_brackets_matches_itself():
    """A target with options is named with brackets (``legacy:BleuScore[kwargs={lowercase=True}]``), which
    fnmatch reads as a character class: an entry naming it, as ``expect bless`` writes it, matched no row
    (its strict classification silently unchecked) and was never stale."""
    from ragas_compat.compare.rules import matches_any

    name = "legacy:BleuScore[kwargs={lowercase=True}]"
    assert matches_any(name, [name]) and not matches_any("legacy:BleuScore[kwargs={lowercase=False}]", [name])
    text = f"""
[[case]]
case = "c"
targets = ["{name}"]
classification = "variant"
reason = "deliberately not what the row is"
"""
    expectations = parse_expectations_text(text, "x.toml")
    assert [e.where for e in expectations.matching("c", name)] == ["case[0]"]
    assert expectations.check_coverage([("c", "legacy:BleuScore")], {"c"}) == []  # not a target of this run
    assert expectations.check_coverage([("c", "legacy:BleuScore"), ("d", name)], {"c", "d"}) == [
        f"x.toml: case[0] names (c, {name}), which the run did not produce"]


def test_a_glob_entry_is_stale_only_when_it_names_none_of_the_cases_rows():
    """``targets = ["legacy:*"]`` means the case's legacy rows: a case that could never produce some legacy
    target of the run (it has no inputs for that metric) made one stale problem per such target, and a run
    whose named rows were all identical exit 1."""
    text = """
[[case]]
case = "c"
targets = ["legacy:*"]
classification = "epsilon"
reason = "every legacy row of c"

[[case]]
case = "d"
targets = ["collections:*"]
classification = "epsilon"
reason = "d has no collections row"
"""
    expectations = parse_expectations_text(text, "x.toml")
    rows = [("c", "legacy:ContextPrecision"), ("e", "legacy:Faithfulness"), ("d", "legacy:Faithfulness"),
            ("e", "collections:Faithfulness")]
    assert expectations.check_coverage(rows, {"c", "d", "e"}) == [
        "x.toml: case[1] names (d, collections:*), which the run did not produce"]
    audit = audit_of([case("c")], [("c", "legacy:ContextPrecision", EPS_5_6)],
                     parse_expectations_text(text.split("[[case]]\ncase = \"d\"")[0], "x.toml"))
    assert not audit.expectation_problems and findings(audit) == []


def test_a_users_file_is_applied_before_the_pins_rules(tmp_path: Path):
    own = tmp_path / "mine.toml"
    own.write_text('[[case]]\ncase = "c"\ntargets = ["legacy:ContextPrecision"]\nclassification = "epsilon"\n'
                   'reason = "known"\n')
    layered = load_run_expectations(own)
    assert layered.source == "mine.toml + pinned/expectations.toml"
    assert [r.id for r in layered.rules] == [r.id for r in pin_expectations().rules]
    own.write_text("include_pin_rules = false\n" + own.read_text())
    alone = load_run_expectations(own)
    assert alone.source == "mine.toml" and not alone.rules


def test_the_pinned_rules_parse_and_cover_the_documented_semantics():
    pin = load_expectations(DEFAULT_EXPECTATIONS)
    ids = {rule.id for rule in pin.rules + pin.path_rules}
    assert {"ap-epsilon", "ap-empty-as-zero", "claims-zero-nan", "id-dedup", "verdict-truthiness",
            "collections-empty-input-error", "string-precision-empty-reference-error", "paths-empty-input"} <= ids
    for rule in pin.rules + pin.path_rules:
        assert rule.reason and rule.ragas is not None, rule.id
    # the bundled suite's demonstrations of a value out of range
    assert all(entry.cases in {("edge-non-binary-verdict",), ("strings-identical",)} for entry in pin.cases)


@pytest.mark.parametrize("text,where", [
    ('[[rule]]\nid = "a"\nclassification = "nonsense"\nreason = "r"\n', "rule[0] (a).classification"),
    ('[[rule]]\nid = "a"\nclassification = "identical"\nreason = "r"\n', "rule[0] (a).classification"),
    ('[[rule]]\nclassification = "epsilon"\nreason = "r"\n', "rule[0].id"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = ""\n', "rule[0] (a).reason"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\nragas = "latest"\n', "rule[0] (a).ragas"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\ntargets = []\n', "rule[0] (a).targets"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\nwhen = { reference = "maybe" }\n',
     "rule[0] (a).when.reference"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\nwhen = { error_message = "(" }\n',
     "rule[0] (a).when.error_message"),
    ('[[case]]\ntargets = ["x"]\nclassification = "epsilon"\nreason = "r"\n', "case[0]"),
    ('[[case]]\ncase = "c"\nclassification = "epsilon"\nreason = "r"\n', "case[0].targets"),
    ('[[case]]\ncase = "c"\ntargets = ["x"]\nclassification = "epsilon"\nreason = "r"\nupstream = 3\n',
     "case[0].upstream"),
    ('include_pin_rules = "yes"\n', "include_pin_rules"),
])
def test_bad_entries_name_the_entry_and_key(text, where):
    with pytest.raises(HarnessInputError) as err:
        parse_expectations_text(text, "x.toml")
    assert f"x.toml: {where}" in str(err.value)


@pytest.mark.parametrize("text,message", [
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\ntarget = ["x"]\n',
     "unknown key 'target'; did you mean 'targets'?"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\nwhen = { undefined_reasons = "x" }\n',
     "unknown key 'undefined_reasons'; did you mean 'undefined_reason'?"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\nwhen = { inputs = "retrieved_context_empty" }\n',
     "unknown input fact 'retrieved_context_empty'; did you mean 'retrieved_contexts_empty'?"),
    ('[[rules]]\nid = "a"\n', "unknown key 'rules'; did you mean 'rule'?"),
    ('[[rule]]\nid = "a"\nclassification = "epsilon"\nreason = "r"\n[[rule]]\nid = "a"\nclassification = "epsilon"\n'
     'reason = "r"\n', "'a' is already the id of rule[0]"),
])
def test_unknown_names_suggest_the_closest_valid_one(text, message):
    with pytest.raises(HarnessInputError, match=re.escape(message)):
        parse_expectations_text(text, "x.toml")


def test_the_format_before_rules_is_read_as_case_entries():
    old = {"deviation": [{"classification": "dedup", "targets": ["legacy:IDBasedContextPrecision"],
                          "cases": ["dup"], "reason": "sets"}],
           "path_deviation": [{"classification": "error", "legacy_targets": ["legacy:A"],
                               "collections_targets": ["collections:B"], "cases": ["dup"], "reason": "raises"}]}
    exp = parse_expectations(old, "old.toml")
    assert exp.expected("dup", "legacy:IDBasedContextPrecision").classification == "dedup"
    assert exp.expected_path("dup", "legacy:A", "collections:B").classification == "error"
    assert exp.expected("other", "legacy:IDBasedContextPrecision") == IDENTICAL


def test_unreadable_files_name_the_file(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[rule]\n")
    with pytest.raises(HarnessInputError, match=r"bad\.toml: not valid TOML"):
        load_expectations(bad)
    with pytest.raises(HarnessInputError, match=r"expectations file gone\.toml does not exist"):
        load_expectations(tmp_path / "gone.toml")


def test_a_path_entry_naming_two_targets_that_are_never_a_pair_is_stale():
    """The glob-aware rewrite took a named (legacy, collections) combination the run never pairs for a glob
    and stopped reporting it stale."""
    text = """
[[path_case]]
case = "c"
legacy_targets = ["legacy:A"]
collections_targets = ["collections:B"]
classification = "identical"
reason = "A and B are never paired"

[[path_case]]
case = "c"
legacy_targets = ["legacy:*"]
collections_targets = ["collections:*"]
classification = "identical"
reason = "every pair of c"
"""
    expectations = parse_expectations_text(text, "x.toml")
    pairs = [("c", "legacy:A", "collections:A"), ("c", "legacy:B", "collections:B")]
    assert expectations.check_path_coverage(pairs, {"c"}) == [
        "x.toml: path_case[0] names (c, legacy:A vs collections:B), which the run did not produce"]
