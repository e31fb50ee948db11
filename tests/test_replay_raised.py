"""A collections class that raised before asking the judge is a replayable outcome.

``ragas.metrics.collections.ContextPrecisionWithReference`` (and ``...WithoutReference``) raise
``ValueError`` on a sample with no retrieved context before any prompt. ``record --api collections``
freezes that as ``recording.raised`` (type, the input fact, zero judge calls) with the empty label list
as the verdicts; the replay scores the same class on the same input, which must raise the same type
without asking its judge, and the accounting counts it as reproduced. Before, the recording listed it
``not_replayable`` and ``run`` exited 1 on every run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragas_compat.compare.replay import replay_account, replay_problems
from ragas_compat.tools.record.cases import build_case
from ragas_compat.tools.record.dataset import Sample
from ragas_compat.values import RagasError

sys.path.insert(0, str(Path(__file__).parent))
from record_judge_server import JudgeServer

CLI = [sys.executable, "-m", "ragas_compat"]
KEY_ENV = "RAGAS_COMPAT_TEST_JUDGE_KEY"
CPR = "collections:ContextPrecisionWithReference"
CPN = "collections:ContextPrecisionWithoutReference"
RAISED = {"type": "ValueError", "input": {"retrieved_contexts": "empty"}, "judge_calls": 0}


def _row(case, target, value, prompts=0):
    return SimpleNamespace(case=case, target=target, ragas_value=value, prompts=prompts,
                           classification=SimpleNamespace(name="error"))


def _audit(value, prompts=0, contexts=(), raised=RAISED):
    live = {CPR: {"error": {"type": "ValueError", "message": "retrieved_contexts cannot be empty"}}}
    case = SimpleNamespace(id="c1", retrieved_contexts=tuple(contexts),
                           raw={"recording": {"live": live, "raised": {CPR: raised}}})
    return SimpleNamespace(rows=[_row(case, CPR, value, prompts)], suite=SimpleNamespace(cases=[case]), provenance={})


def test_the_same_type_raised_without_asking_is_reproduced_whatever_the_message():
    audit = _audit(RagasError("ValueError", "worded otherwise by another release"))
    assert replay_problems(audit) == []
    account = replay_account(audit)
    assert (account.live, account.raised, account.reproduced, account.differs) == (1, 1, 0, 0)


@pytest.mark.parametrize(("value", "prompts", "contexts", "expected"), [
    (RagasError("TypeError", "x"), 0, (), "the offline replay gave error TypeError"),
    (RagasError("ValueError", "x", origin="harness"), 0, (), "(the harness's error)"),
    (RagasError("StubMismatch", "x"), 0, (), "(the harness's error)"),
    (0.5, 0, (), "the offline replay gave 0.5"),
    (RagasError("ValueError", "x"), 2, (), "after asking its judge 2 prompt(s)"),
    (RagasError("ValueError", "x"), 0, ("a context",), "retrieved_contexts is no longer empty"),
])
def test_another_outcome_of_a_frozen_raise_is_a_problem(value, prompts, contexts, expected):
    audit = _audit(value, prompts, contexts)
    ((case_id, target, _, message),) = replay_problems(audit)
    assert (case_id, target) == ("c1", CPR) and expected in message
    assert replay_account(audit).differs == 1


def test_the_recorder_freezes_the_raise_only_where_no_judge_answer_is_invented():
    error = {"error": {"type": "ValueError", "message": "retrieved_contexts cannot be empty"}}
    result = {"metrics": {
        "context_precision_with_reference": {"target": CPR, "value": error, "calls": [], "llm_replies": 0,
                                             "failed_attempts": 0},
        "faithfulness": {"target": "collections:Faithfulness", "value": error, "calls": [], "llm_replies": 0,
                         "failed_attempts": 0}}}
    fields = {"user_input": "q?", "reference": "r.", "response": "a.", "retrieved_contexts": []}
    case = build_case(Sample(id="s1", row=1, category=None, fields=fields), result).case
    assert case["verdicts"] == {"context_precision_with_reference": []}
    assert case["recording"]["raised"] == {CPR: RAISED}
    assert "needs the judge's claims" in case["recording"]["not_replayable"]["collections:Faithfulness"]
    # a context was there: nothing to freeze as "no context to judge"
    case = build_case(Sample(id="s1", row=1, category=None, fields={**fields, "retrieved_contexts": ["c"]}),
                      result).case
    assert "raised" not in case["recording"] and CPR in case["recording"]["not_replayable"]


def _sample(i: int, contexts: list[str]) -> dict:
    return {"user_input": f"When was Firm{i} founded?", "retrieved_contexts": contexts,
            "response": f"Firm{i} was founded in 19{i}0.", "reference": f"Firm{i} was founded in 19{i}0 by Ann{i}."}


@pytest.mark.slow
def test_a_collections_recording_with_an_empty_retrieval_replays_and_passes(tmp_path):
    dataset = tmp_path / "rag.jsonl"
    rows = [_sample(1, ["Firm1 was founded in 1910 by Ann1.", "Rain over the harbour."]), _sample(2, [])]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "recorded.json"
    with JudgeServer() as server:
        proc = subprocess.run([*CLI, "record", str(dataset), "--out", str(out), "--openai-base-url", server.base_url,
                               "--model", server.model, "--api-key-env", KEY_ENV, "--max-retries", "0",
                               "--api", "collections", "--metric", "context_precision_with_reference",
                               "--metric", "context_precision_without_reference"],
                              env={**os.environ, KEY_ENV: "sk-loopback-test"}, capture_output=True, text=True,
                              timeout=600)
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(out.read_text(encoding="utf-8"))["cases"]
    empty = cases[1]
    assert empty["recording"]["raised"] == {CPR: RAISED, CPN: RAISED}
    assert "not_replayable" not in empty["recording"]
    assert empty["verdicts"] == {"context_precision_with_reference": [], "context_precision_without_reference": []}

    run = subprocess.run([*CLI, "run", "--cases", str(out), "--out", str(tmp_path / "report"), "--format", "json"],
                         capture_output=True, text=True, timeout=600)
    summary = json.loads(run.stdout)
    assert run.returncode == 0, summary["drift"]
    assert summary["replay"]["line"] == ("replay: 4 live scores, 2 reproduced bit for bit, 2 raised the recorded exception type "
                                         "again before asking the judge, 0 not replayable, 0 unchecked")
