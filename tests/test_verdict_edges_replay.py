"""Replay accounting: every recorded live score is compared, listed as not replayable with its reason,
or counted as unchecked (left out with ``--metric``); none is passed over in silence.

A live score with no replayed row (a verdict key deleted from the recording, a target this replay does
not produce) is a ``replay_mismatch``; the terminal and ``--format json`` say "replay: N live scores, N
reproduced bit for bit, K not replayable (why), 0 unchecked"."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragas_compat.compare.replay import replay_account, replay_problems
from ragas_compat.values import RagasError

needs_ragas = pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                                 reason="Ragas is not installed in this interpreter")


def _audit(live: dict, rows: dict, not_replayable: dict | None = None, metrics: list[str] | None = None):
    case = SimpleNamespace(id="c1", raw={"recording": {"live": live, "not_replayable": not_replayable or {}}})
    audit_rows = [SimpleNamespace(case=case, target=t, ragas_value=v, classification=SimpleNamespace(name="identical"))
                  for t, v in rows.items()]
    return SimpleNamespace(rows=audit_rows, suite=SimpleNamespace(cases=[case]),
                           provenance={"metrics": metrics} if metrics else {})


def test_a_live_score_with_no_replayed_row_is_a_problem():
    audit = _audit({"legacy:IDBasedContextPrecision": 0.5, "legacy:Faithfulness": 1.0},
                   {"legacy:IDBasedContextPrecision": 0.5})
    problems = replay_problems(audit)
    assert [(p[0], p[1], p[2]) for p in problems] == [("c1", "legacy:Faithfulness", None)]
    assert "has no replayed row" in problems[0][3] and "1.0" in problems[0][3]
    account = replay_account(audit)
    assert (account.live, account.reproduced, account.no_row, account.unchecked) == (2, 1, 1, 0)
    assert account.line().startswith("replay: 2 live scores, 1 reproduced bit for bit, 1 with no replayed row")


def test_a_live_score_left_out_with_metric_is_unchecked_and_counted():
    audit = _audit({"legacy:IDBasedContextPrecision": 0.5, "legacy:Faithfulness": 1.0},
                   {"legacy:IDBasedContextPrecision": 0.5}, metrics=["id_context_precision"])
    assert replay_problems(audit) == []
    assert replay_account(audit).line() == ("replay: 2 live scores, 1 reproduced bit for bit, 0 not replayable, "
                                            "1 unchecked (left out with --metric)")


def test_the_account_names_why_a_live_score_is_not_replayable():
    audit = _audit({"legacy:IDBasedContextPrecision": 0.5, "legacy:LLMContextRecall": 1.0},
                   {"legacy:IDBasedContextPrecision": 0.5},
                   not_replayable={"legacy:LLMContextRecall": "the judge's reply could not be parsed"})
    assert replay_account(audit).line() == ("replay: 2 live scores, 1 reproduced bit for bit, 1 not replayable "
                                            "(the judge's reply could not be parsed), 0 unchecked")


def test_a_suite_without_recordings_has_no_account():
    case = SimpleNamespace(id="c1", raw={})
    assert replay_account(SimpleNamespace(rows=[], suite=SimpleNamespace(cases=[case]), provenance={})) is None


RECORDED = {"id": "rec-1", "category": "single_source", "user_input": "Which page?", "reference": "The page.",
            "response": "The page.", "retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["d1", "d2"],
            "reference_context_ids": ["d1"],
            "recording": {"live": {"legacy:IDBasedContextPrecision": 0.5, "legacy:IDBasedContextRecall": 1.0}}}


def _run(tmp_path: Path, case: dict) -> tuple[int, dict]:
    cases = tmp_path / "recorded.json"
    cases.write_text(json.dumps({"schema_version": 1, "suite": "recorded", "cases": [case]}))
    run = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--cases", str(cases), "--out",
                          str(tmp_path / "out"), "--workers", "1", "--format", "json"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    return run.returncode, json.loads(run.stdout)


@pytest.mark.slow
@needs_ragas
def test_a_recording_whose_live_scores_all_replay_says_so(tmp_path):
    code, summary = _run(tmp_path, RECORDED)
    assert code == 0, summary["drift"]
    assert summary["replay"]["line"] == "replay: 2 live scores, 2 reproduced bit for bit, 0 not replayable, 0 unchecked"


@pytest.mark.slow
@needs_ragas
def test_a_recording_whose_one_live_score_has_no_replayed_row_exits_1_naming_it(tmp_path):
    live = {**RECORDED["recording"]["live"], "legacy:Faithfulness": 1.0}  # no faithfulness verdict to replay
    code, summary = _run(tmp_path, {**RECORDED, "recording": {"live": live}})
    assert code == 1
    (finding,) = [f for f in summary["drift"] if f["fails"]]
    assert finding["kind"] == "replay_mismatch" and finding["target"] == "legacy:Faithfulness"
    assert "no replayed row" in finding["message"]
    assert summary["replay"]["no_row"] == 1 and summary["replay"]["live"] == 3


def _recorded_under(python: str | None, replayed_under: str | None, live: dict, rows: dict, **recording):
    audit = _audit(live, rows)
    audit.suite.cases[0].raw["recording"].update(recording)
    if python is not None:
        audit.suite.cases[0].raw["recording"]["python"] = python
    if replayed_under is not None:
        audit.provenance["python"] = {"version": replayed_under}
    return audit


LIVE_311 = {"legacy:LLMContextPrecisionWithReference": 0.47777777776185176,
            "legacy:NonLLMContextRecall": {"error": {"type": "ValueError", "message": "max() arg is an empty sequence"}}}
REPLAYED_313 = {"legacy:LLMContextPrecisionWithReference": 0.4777777777618519,  # 3.12's exact sum(): 2 ulps
                "legacy:NonLLMContextRecall": RagasError("ValueError", "max() iterable argument is empty")}


def test_a_recording_replayed_under_another_python_differs_only_as_the_pythons_compute_it():
    """A recording made under Python 3.11 replayed under 3.13 was two replay_mismatch findings (exit 1): an
    average 2 ulps off (3.12 made sum() exact) and max()'s reworded error. Under another Python they are
    counted as such; under the same Python, with no Python on either side, beyond a few ulps, with another
    exception type or another message, they differ."""
    audit = _recorded_under("3.11.7", "3.13.0", LIVE_311, REPLAYED_313)
    assert replay_problems(audit) == []
    account = replay_account(audit)
    assert (account.python, account.differs, account.reproduced) == (2, 0, 0)
    assert "2 differ only as two Pythons compute them" in account.line()
    assert "recorded under Python 3.11, replayed under 3.13" in account.line()
    for recorded, replayed in (("3.13.1", "3.13.0"), (None, "3.13.0"), ("3.11.7", None), ("x.y", "3.13.0")):
        assert [p[1] for p in replay_problems(_recorded_under(recorded, replayed, LIVE_311, REPLAYED_313))] == \
            list(LIVE_311), (recorded, replayed)
    for far in ({"legacy:LLMContextPrecisionWithReference": 0.4777777777},
                {"legacy:NonLLMContextRecall": RagasError("TypeError", "max() iterable argument is empty")},
                {"legacy:NonLLMContextRecall": RagasError("ValueError", "could not convert string to float")}):
        problems = replay_problems(_recorded_under("3.11.7", "3.13.0", LIVE_311, {**REPLAYED_313, **far}))
        assert [p[1] for p in problems] == list(far), far


def test_across_pythons_the_live_runs_other_checks_still_hold():
    """The tolerance across Pythons skipped the checks that follow the value's: a live outcome the verdicts do
    not hold wholly (not_frozen) passed as 'differs only as two Pythons compute it'."""
    target = "legacy:LLMContextPrecisionWithReference"
    audit = _recorded_under("3.11.7", "3.13.0", {target: LIVE_311[target]}, {target: REPLAYED_313[target]},
                            not_frozen={target: "a parsed reply the verdicts do not hold"})
    assert [(p[1], "part of the live run is not in them" in p[3]) for p in replay_problems(audit)] == [(target, True)]


def test_record_writes_the_python_into_each_case_and_the_loader_takes_it():
    """The tolerance read recording.python from each case, which record never wrote there (only the file's
    recording has it) and the loader refused: it never applied to a real recording."""
    from ragas_compat.cases import parse_suite
    from ragas_compat.tools.record.cases import build_case
    from ragas_compat.tools.record.dataset import Sample

    sample = Sample(id="r1", row=1, category=None, fields={"user_input": "q", "reference": "r", "response": "a",
                                                          "retrieved_contexts": ["c"]})
    case = build_case(sample, {"metrics": {}}, python="3.11.7").case
    assert case["recording"]["python"] == "3.11.7"
    suite = parse_suite({"schema_version": 1, "suite": "s", "cases": [case]}, source="s.json")
    assert suite.cases[0].raw["recording"]["python"] == "3.11.7"
