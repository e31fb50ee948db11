"""Gates that cannot pass vacuously: a check that checked nothing fails.

- the pytest plugin: a ``ragas_compat_cases`` entry naming a missing file, a file ending in ``.JSON``, a
  file outside ``testpaths``, or a file that scores no row fails the session (it passed before);
- ``run`` refuses a suite of which no row was scored (exit 2, no report written);
- a suite of which no row can be scored (no metric with a Ragas target applies to any case) is refused
  before a probe is started: the plugin's sessions below name an interpreter that does not exist, so a
  probe started anyway would fail them with another message; the host's "may apply" is never narrower
  than the probe's (checked target by target on the bundled suite);
- ``matrix`` exits 3 when no column was scored.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import ragas_compat.cli.matrix as cli_matrix
from ragas_compat.cases import Suite, load_default_suite, parse_suite
from ragas_compat.cli.app import app
from ragas_compat.pipeline import may_score_a_row
from ragas_compat.probe.targets import Target
from ragas_compat.runner import ProbeRun, request_targets
from ragas_compat.tools.matrix.environments import Environment
from ragas_compat.tools.matrix.run import run_matrix

# langsmith's pytest plugin costs about 1.1 CPU-s of every inner session's start-up and none uses it
# (pyproject.toml's addopts leaves it out of this session the same way)
NO_LANGSMITH = ("-p", "no:langsmith_plugin")
# an interpreter that does not exist: a session that starts a probe with it fails with "could not be run"
NO_PYTHON = ("--ragas-compat-python", "/nonexistent/python3")

ID_CASE = {"id": "duplicate-ids", "category": "edge", "user_input": "Which page?", "reference": "The page.",
           "response": "The page.", "retrieved_contexts": ["a", "a", "b"],
           "retrieved_context_ids": ["d1", "d1", "d2"], "reference_context_ids": ["d1"]}
# empty strings and nothing retrieved: no Ragas class applies, so no row is scored
NO_ROW_CASE = {"id": "nothing", "category": "edge", "user_input": "q", "reference": "", "response": "",
               "retrieved_contexts": []}


def suite_text(*cases: dict) -> str:
    return json.dumps({"schema_version": 1, "suite": "gate", "cases": list(cases)})


def _inner(pytester, ini: str, *args: str):
    pytester.makepyfile(test_other="def test_unrelated():\n    pass\n")
    pytester.makeini(ini)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH, *args)


@pytest.mark.slow
def test_a_missing_case_file_fails_the_session(pytester):
    result = _inner(pytester, "[pytest]\nragas_compat_cases =\n    missing.json\n")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ragas_compat_cases*missing.json does not exist*"])
    assert result.ret == 1


@pytest.mark.slow
def test_a_case_file_with_an_upper_case_suffix_fails_the_session(pytester):
    pytester.path.joinpath("cases.JSON").write_text(suite_text(ID_CASE))
    result = _inner(pytester, "[pytest]\nragas_compat_cases =\n    cases.JSON\n")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*cases.JSON does not end in .json*"])


@pytest.mark.slow
def test_a_case_file_outside_testpaths_fails_the_session(pytester):
    pytester.path.joinpath("cases.json").write_text(suite_text(ID_CASE))
    pytester.mkdir("tests")
    pytester.path.joinpath("tests", "test_other.py").write_text("def test_unrelated():\n    pass\n")
    pytester.makeini("[pytest]\ntestpaths = tests\nragas_compat_cases =\n    cases.json\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*cases.json was not collected*testpaths*"])


@pytest.mark.slow
def test_an_unreadable_case_file_fails_the_session(pytester):
    pytester.path.joinpath("cases.json").mkdir()  # a folder where the file should be
    result = _inner(pytester, "[pytest]\nragas_compat_cases =\n    cases.json\n")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*cases.json is not a regular file*"])


def test_a_case_file_that_scores_no_row_fails_the_session_before_a_probe(pytester):
    pytester.path.joinpath("cases.json").write_text(suite_text(NO_ROW_CASE))
    result = _inner(pytester, "[pytest]\nragas_compat_cases =\n    cases.json\n", *NO_PYTHON)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*cases.json yields no items: no (case, Ragas target) row can be scored*"])


def test_a_narrowed_command_line_does_not_fail_on_files_it_left_out(pytester):
    """``pytest tests/test_other.py`` checks what it was asked to; a configured case file it does not
    reach is not an error then (a missing one still is)."""
    pytester.path.joinpath("cases.json").write_text(suite_text(ID_CASE))
    result = _inner(pytester, "[pytest]\nragas_compat_cases =\n    cases.json\n", "test_other.py")
    result.assert_outcomes(passed=1)


def test_the_fixture_fails_on_a_suite_that_scores_no_row_before_a_probe(pytester):
    pytester.path.joinpath("cases.json").write_text(suite_text(NO_ROW_CASE))
    pytester.makepyfile(test_fixture="def test_check(ragas_compat):\n    ragas_compat.check('cases.json')\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *NO_LANGSMITH, *NO_PYTHON)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no (case, Ragas target) row can be scored*Ragas was not run*"])


def test_the_host_never_rules_out_a_pair_the_probe_would_score():
    """``may_score_a_row`` refuses a suite before the probe runs; it must hold for every (case, target)
    pair the probe's own ``Target.applies`` accepts, or a scorable suite would be refused."""
    suite = load_default_suite()
    accepted = 0
    for case in suite.cases:
        one = Suite(suite.name, suite.source, (case,))
        for spec in request_targets(None, [case.raw]):
            if Target.from_spec(spec).applies(case.raw):
                accepted += 1
                assert may_score_a_row(one, {spec["metric"]}), (case.id, spec["metric"], spec["ragas_class"])
    assert accepted > len(suite.cases)
    nothing = parse_suite(json.loads(suite_text(NO_ROW_CASE)))
    assert not may_score_a_row(nothing) and not any(
        Target.from_spec(spec).applies(NO_ROW_CASE) for spec in request_targets(None, [NO_ROW_CASE]))


@pytest.mark.slow
def test_run_refuses_a_suite_that_scores_no_row(tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(suite_text(NO_ROW_CASE))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--cases", str(cases), "--out", str(out),
                          "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no (case, Ragas target) row can be scored" in run.stderr and "Ragas was not run" in run.stderr
    assert not (out / "report.md").exists() and not (out / "report.json").exists()


@pytest.fixture
def unavailable_matrix(monkeypatch):
    def environments(entries, **kwargs):
        return [Environment(e.text, "release", e.exact_version, "py", status="failed", installer="pip")
                for e in entries]

    def probe(cases, *, python, sys_path_prefix, timeout):
        return ProbeRun(False, "ragas could not be imported", {}, "", 0.1)

    monkeypatch.setattr(cli_matrix, "ensure_environments", environments)
    monkeypatch.setattr(cli_matrix, "run_matrix", lambda envs, suite, **kw: run_matrix(envs, suite, probe=probe))


def test_matrix_exits_3_when_no_column_was_scored(tmp_path, unavailable_matrix):
    result = CliRunner().invoke(app, ["matrix", "--versions", "0.2.3,0.2.15", "--out", str(tmp_path / "m"),
                                      "--cache-dir", str(tmp_path / "envs")])
    assert result.exit_code == 3, result.output
    assert "no column was scored" in result.output
