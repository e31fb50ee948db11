"""``expect bless`` accepts a listed, reproducible non-replayable outcome of a recording.

A case written by ``record`` lists under ``recording.not_replayable`` the live scores its replay cannot
reproduce, with a reason (here: the collections Faithfulness raised before asking the judge on a sample
with an empty retrieval, and the replay cannot freeze the judge's claims). Before, ``run`` counted it as
a ``replay_mismatch`` and exited 1 on every run, and ``expect bless`` could not accept it. Now bless
writes a ``[[not_replayable]]`` entry (case, target, the recording's reason); with it ``run`` exits 0 and
the accounting line still says "1 not replayable (why; accepted by the expectations file ...)". A changed
reason, a live value the harness raised, or a stale entry is still a problem.
"""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.compare.bless import bless
from ragas_compat.compare.expectations import parse_expectations_text
from ragas_compat.compare.replay import replay_account, replay_problems
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.record.cases import build_case
from ragas_compat.tools.record.dataset import Sample

needs_ragas = pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                                 reason="Ragas is not installed in this interpreter")

CPR = "collections:ContextPrecisionWithReference"
FAITH = "collections:Faithfulness"
ERROR = {"error": {"type": "ValueError", "message": "retrieved_contexts cannot be empty"}}


def recorded_case() -> dict:
    """A recorded case as ``record --api collections`` writes it for a sample with an empty retrieval:
    context precision froze its raise (replayable), faithfulness is listed not replayable."""
    result = {"metrics": {
        "context_precision_with_reference": {"target": CPR, "value": ERROR, "calls": [], "llm_replies": 0,
                                             "failed_attempts": 0},
        "faithfulness": {"target": FAITH, "value": ERROR, "calls": [], "llm_replies": 0, "failed_attempts": 0}}}
    fields = {"user_input": "When was Firm2 founded?", "reference": "Firm2 was founded in 1920.",
              "response": "Firm2 was founded in 1920.", "retrieved_contexts": []}
    case = build_case(Sample(id="empty-retrieval", row=1, category=None, fields=fields), result).case
    assert FAITH in case["recording"]["not_replayable"] and CPR in case["recording"]["raised"]
    return case


WHY = recorded_case()["recording"]["not_replayable"][FAITH]


# --------------------------------------------------------------------------- unit: replay accounting

def _audit(expectations_text: str | None, live: object = ERROR, why: str = WHY, case_ids=("c1",)):
    case = SimpleNamespace(id="c1", raw={"recording": {"live": {FAITH: live}, "not_replayable": {FAITH: why}}})
    others = [SimpleNamespace(id=i, raw={}) for i in case_ids if i != "c1"]
    expectations = parse_expectations_text(expectations_text, "blessed.toml") if expectations_text else None
    return SimpleNamespace(rows=[], suite=SimpleNamespace(cases=[case, *others]), provenance={},
                           expectations=expectations)


def _entry(reason: str = WHY, case: str = "c1", target: str = FAITH) -> str:
    return f"[[not_replayable]]\ncase = {json.dumps(case)}\ntarget = {json.dumps(target)}\nreason = {json.dumps(reason)}\n"


def test_without_an_entry_a_not_replayable_score_is_a_problem():
    ((case_id, target, _, message),) = replay_problems(_audit(None))
    assert (case_id, target) == ("c1", FAITH) and "is not replayed" in message


def test_an_entry_with_the_recorded_reason_accepts_it_and_the_account_still_counts_it():
    audit = _audit(_entry())
    assert replay_problems(audit) == []
    account = replay_account(audit)
    assert (account.live, account.accepted, sum(account.not_replayable.values())) == (1, 1, 1)
    assert account.line().endswith("accepted by the expectations file blessed.toml), 0 unchecked")
    assert "1 not replayable (Ragas raised before asking the judge anything" in account.line()


def test_a_changed_reason_is_a_problem_again():
    ((_, target, _, message),) = replay_problems(_audit(_entry("an older reason")))
    assert target == FAITH and "only for another reason: an older reason" in message
    assert replay_account(_audit(_entry("an older reason"))).accepted == 0


def test_an_entry_never_accepts_a_live_value_the_harness_raised():
    live = {"error": {"type": "StubMismatch", "message": "x", "origin": "harness"}}
    audit = _audit(_entry(), live=live)
    ((_, _, _, message),) = replay_problems(audit)
    assert "the harness's own error" in message
    assert bless_text_of(audit).count("[[not_replayable]]") == 0


def test_an_entry_for_a_target_the_recording_does_not_list_is_stale():
    audit = _audit(_entry() + "\n" + _entry(target="collections:ContextRecall"))
    ((case_id, target, _, message),) = replay_problems(audit)
    assert (case_id, target) == ("c1", "collections:ContextRecall") and "does not list" in message
    # an entry for a case outside the run is not this run's business
    assert replay_problems(_audit(_entry() + "\n" + _entry(case="elsewhere"))) == []


def test_two_entries_for_one_outcome_are_a_problem_of_the_file():
    with pytest.raises(HarnessInputError, match="already named by not_replayable"):
        parse_expectations_text(_entry() + "\n" + _entry("other"), "blessed.toml")
    with pytest.raises(HarnessInputError, match=r"not_replayable\[0\]\.reason"):
        parse_expectations_text('[[not_replayable]]\ncase = "c1"\ntarget = "t"\n', "blessed.toml")


def bless_text_of(audit) -> str:
    audit.suite.name, audit.suite.source, audit.pairs = "t", "t.json", []
    return bless(audit)


def test_bless_writes_the_entry_that_accepts_the_outcome():
    text = bless_text_of(_audit(None))
    (entry,) = tomllib.loads(text)["not_replayable"]
    assert entry == {"case": "c1", "target": FAITH, "reason": WHY}
    assert replay_problems(_audit(text)) == []


# --------------------------------------------------------------------------- end to end through the CLI

def _run(tmp_path: Path, cases: Path, *extra: str) -> tuple[int, dict]:
    """``run`` in this process (the CLI's own command; its probe is a subprocess either way)."""
    run = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(tmp_path / "out"), "--workers", "1",
                                   "--format", "json", *extra])
    assert run.exit_code in (0, 1), run.stdout + run.stderr
    return run.exit_code, json.loads(run.stdout)


@pytest.mark.slow
@needs_ragas
def test_bless_then_run_passes_and_a_changed_reason_fails_again(tmp_path):
    case = recorded_case()
    cases = tmp_path / "recorded.json"
    cases.write_text(json.dumps({"schema_version": 1, "suite": "recorded", "cases": [case]}), encoding="utf-8")

    code, summary = _run(tmp_path, cases)
    assert code == 1
    (finding,) = [f for f in summary["drift"] if f["fails"]]
    assert (finding["kind"], finding["target"]) == ("replay_mismatch", FAITH)

    blessed = tmp_path / "blessed.toml"
    proc = CliRunner().invoke(app, ["expect", "bless", "--cases", str(cases), "--out", str(blessed)])
    assert proc.exit_code == 0, proc.stdout + proc.stderr
    assert "1 recorded live score(s) the replay cannot reproduce" in " ".join(proc.stdout.split())
    (entry,) = tomllib.loads(blessed.read_text(encoding="utf-8"))["not_replayable"]
    assert entry == {"case": case["id"], "target": FAITH, "reason": WHY}

    code, summary = _run(tmp_path, cases, "--expectations", str(blessed))
    assert code == 0, summary["drift"]
    line = summary["replay"]["line"]
    assert "1 not replayable (Ragas raised before asking the judge anything" in line
    assert "accepted by the expectations file blessed.toml" in line
    assert summary["replay"]["accepted"] == 1

    case["recording"]["not_replayable"][FAITH] = "a reply over the size cap; this outcome is kept here"
    cases.write_text(json.dumps({"schema_version": 1, "suite": "recorded", "cases": [case]}), encoding="utf-8")
    code, summary = _run(tmp_path, cases, "--expectations", str(blessed))
    assert code == 1
    (finding,) = [f for f in summary["drift"] if f["fails"]]
    assert finding["target"] == FAITH and "only for another reason" in finding["message"]

