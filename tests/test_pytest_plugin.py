"""The pytest plugin (entry point ``pytest11``), driven through ``pytester`` in a subprocess.

One inner session checks one case file against matching expectations and against an
expectations file with one classification changed; the plugin runs the probe once for both.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# langsmith's pytest plugin costs about 1.1 CPU-s of every inner session's start-up and none uses it
# (pyproject.toml's addopts leaves it out of this session the same way)
NO_LANGSMITH = ("-p", "no:langsmith_plugin")

# ID metrics only: Ragas's legacy IDBased* classes, no judge (fast, and the same rows whatever
# other target families the probe gains). Precision: [d1, d1, d2] vs [d1] is 2/3 on the list as
# retrieved and 1/2 under Ragas's str() + set semantics ("dedup"); recall is 1 on both.
CASES = {
    "schema_version": 1,
    "suite": "plugin-test",
    "cases": [{
        "id": "duplicate-ids",
        "category": "edge",
        "user_input": "Which page documents the port?",
        "reference": "The configuration page.",
        "response": "The configuration page.",
        "retrieved_contexts": ["Configuration: PORT=8080", "Configuration: PORT=8080", "Logging"],
        "retrieved_context_ids": ["d1", "d1", "d2"],
        "reference_context_ids": ["d1"],
    }],
}

MATCHING = """
[[deviation]]
classification = "dedup"
targets = ["legacy:IDBasedContextPrecision"]
cases = ["duplicate-ids"]
reason = "Retrieved IDs become a set."
"""

CHANGED = """
[[deviation]]
classification = "coercion"
targets = ["legacy:IDBasedContextPrecision"]
cases = ["duplicate-ids"]
reason = "a deliberately wrong expectation"
"""

INNER_TESTS = """
import sys

import pytest

from ragas_compat.errors import HarnessInputError


def test_matching(ragas_compat):
    audit = ragas_compat.check("cases.json", "matching.toml")
    assert {row.target: row.classification.name for row in audit.rows} == {
        "legacy:IDBasedContextPrecision": "dedup", "legacy:IDBasedContextRecall": "identical"}
    assert "ragas" not in sys.modules  # Ragas ran only in the probe subprocess


def test_changed(ragas_compat):
    ragas_compat.check("cases.json", "changed.toml")


def test_pin_rules_without_an_expectations_file(ragas_compat):
    audit = ragas_compat.check("cases.json")  # the pin's rule id-dedup explains the dedup row
    assert [row.expected.by for row in audit.rows if row.classification.name == "dedup"] == ["rule id-dedup"]


def test_probe_ran_once(ragas_compat, _ragas_compat_probe_cache):
    assert len(_ragas_compat_probe_cache) == 1


def test_missing_expectations(ragas_compat):
    with pytest.raises(HarnessInputError, match="does not exist"):
        ragas_compat.check("cases.json", "no-such-file.toml")
"""


@pytest.mark.slow
def test_plugin_passes_on_matching_and_fails_clearly_on_changed_expectations(pytester):
    pytester.makefile(".json", cases=json.dumps(CASES))
    pytester.makefile(".toml", matching=MATCHING, changed=CHANGED)
    pytester.makepyfile(test_semantics=INNER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH)
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines([
        "*test_changed*",
        "*ragas-compat: 1 drift(s) in suite 'plugin-test' (cases.json) against changed.toml + "
        "pinned/expectations.toml with Ragas *",
        "*case 'duplicate-ids', target legacy:IDBasedContextPrecision: got dedup, expected coercion "
        "[[]expected because: a deliberately wrong expectation[]]; Ragas turns IDs into str()*",
    ])
    assert "legacy:IDBasedContextRecall: got" not in result.stdout.str()  # the matching row is no drift


def test_plugin_module_imports_neither_ragas_nor_the_harness():
    code = ("import sys, ragas_compat.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m == 'ragas' or m.startswith(('ragas.', 'ragas_compat.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['ragas_compat.pytest_plugin']"


@pytest.mark.slow
def test_one_item_per_case_and_target_with_the_classification_in_its_name(pytester):
    pytester.makefile(".json", cases=json.dumps(CASES))
    pytester.makefile(".toml", changed=CHANGED)
    pytester.makeini("[pytest]\nragas_compat_cases =\n    cases.json::changed.toml\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*cases.json::duplicate-ids[[]legacy:IDBasedContextPrecision:dedup[]] FAILED*",
    ])
    result.stdout.fnmatch_lines([
        "*cases.json::duplicate-ids[[]legacy:IDBasedContextRecall:identical[]] PASSED*",
    ])
    result.stdout.fnmatch_lines([
        "*case 'duplicate-ids', legacy:IDBasedContextPrecision (id_context_precision): expected coercion, got "
        "dedup; * expects coercion: a deliberately wrong expectation*",
        "*why: Ragas turns IDs into str()*",
    ])


# one case scored by every string metric in both APIs (no judge: fast): 28 rows, one pair per metric
STRINGS = {"schema_version": 1, "suite": "plugin-pairs", "cases": [{
    "id": "strings-identical", "category": "edge", "user_input": "What is the capital of France?",
    "reference": "The capital of France is Paris.", "response": "The capital of France is Paris.",
    "retrieved_contexts": [], "string_metrics": True}]}

PAIR_MOVED = """
[[path_case]]
case = "strings-identical"
legacy_targets = ["legacy:ExactMatch"]
collections_targets = ["collections:ExactMatch"]
classification = "variant"
reason = "a blessed pair that moved"

[[case]]
case = "strings-identical"
targets = ["legacy:ExactMatch"]
classification = "identical"
reason = "one row named by two entries: a problem of the file"

[[case]]
case = "strings-identical"
targets = ["legacy:ExactMatch"]
classification = "identical"
reason = "the second entry"
"""


@pytest.mark.slow
def test_items_fail_on_a_pair_finding_and_honour_fail_on_for_expectations_problems(pytester):
    """The items mode judged rows only: a legacy-vs-collections pair that moved (run: exit 1, junit: a failing
    test case) passed every item; and an expectations problem failed whatever ``ragas_compat_fail_on`` said."""
    pytester.makefile(".json", cases=json.dumps(STRINGS))
    pytester.makefile(".toml", moved=PAIR_MOVED)
    ini = "[pytest]\nragas_compat_cases =\n    cases.json::moved.toml\nragas_compat_fail_on = {}\n"
    pytester.makeini(ini.format("all"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH, "-v")
    result.stdout.fnmatch_lines(["*strings-identical[[]legacy:ExactMatch vs collections:ExactMatch:identical[]] FAILED*"])
    result.stdout.fnmatch_lines(["*expectations[[]problem-0[]] FAILED*"])
    result.stdout.fnmatch_lines(["*legacy:ExactMatch vs collections:ExactMatch: unexplained*"])
    result.assert_outcomes(passed=28, failed=2)  # every row passes; the pair and the problem fail
    pytester.makeini(ini.format("divergence"))  # neither the pair's kind nor a problem's (unexplained)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH)
    result.assert_outcomes(passed=30)
