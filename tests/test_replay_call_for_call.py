"""A recorded judge reply that Ragas refused, then its retry, replayed call for call (issue 33).

A loopback OpenAI-compatible judge (``record_judge_server.JudgeServer`` with one fault added here)
answers the first asking of a marked prompt with a reply Ragas's output model refuses and every later
asking with a good one. ``record`` runs Ragas 0.4.3 against it on both APIs: the legacy classes fix the
reply with Ragas's "fix output format" prompt, the collections classes through instructor's re-ask. The
case file then holds the raw replies as ``judge_calls``, and ``run`` (offline) must hand Ragas those
texts in that order: the replayed row reproduces the live score bit for bit AND asks its judge as many
prompts as the live run made judge calls; the replay accounting counts it "call for call". A recording
whose retries are not scripted (one made before this, simulated by deleting ``judge_calls``) reproduces
the value from the parsed verdicts only, and ``run`` says so (replay_mismatch, exit 1).

Real components only: the server on 127.0.0.1 in a thread, Ragas's classes, ChatOpenAI / llm_factory
over AsyncOpenAI in the recording probe, the probe's scripted judges in the replay.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.compare.replay import same_value
from ragas_compat.report.json_report import result_rows
from ragas_compat.values import decode_ragas_value

sys.path.insert(0, str(Path(__file__).parent))
from record_judge_server import JudgeServer, parse_prompt

slow = pytest.mark.slow  # the recordings against a local judge server and their replays

KEY_ENV = "RAGAS_COMPAT_TEST_JUDGE_KEY"
MARK = "ONCEBAD"
FIX_HEAD = "The output string did not satisfy"
PRECISION_HEAD = "Given question, answer and context verify"
RECALL_HEADS = ("Given a context, and an answer, analyze each sentence", "Given a context and an answer, analyze each statement")
NLI_HEAD = "Your task is to judge the faithfulness"
METRICS = ("context_precision_with_reference", "context_recall", "faithfulness")
TARGETS = {"legacy": {"context_precision_with_reference": "legacy:LLMContextPrecisionWithReference",
                      "context_recall": "legacy:LLMContextRecall", "faithfulness": "legacy:Faithfulness"},
           "collections": {"context_precision_with_reference": "collections:ContextPrecisionWithReference",
                           "context_recall": "collections:ContextRecall", "faithfulness": "collections:Faithfulness"}}


class OnceBadJudge(JudgeServer):
    """The recording tests' judge, plus: a prompt whose input holds ``ONCEBAD`` gets, the first time it is
    asked, a reply Ragas's output model refuses (context precision: not JSON; recall and NLI: the label
    ``"maybe"``); asked again (instructor's re-ask repeats the prompt) or asked to fix that reply (Ragas's
    format-fix prompt), it gives its good reply."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: dict[str, int] = {}
        self.count_lock = threading.Lock()

    def reply(self, prompt: str) -> str:
        head, data = parse_prompt(prompt)
        if head.startswith(FIX_HEAD):
            # the fixed output, without the code fence some replies have (Ragas parses a fixed text as bare JSON)
            fixed = super().reply(str(data["prompt_value"])).removeprefix("```json\n").removesuffix("\n```")
            return json.dumps({"text": fixed})
        good = super().reply(prompt)
        if not self._first_faulty_asking(head, data, prompt):
            return good
        if head.startswith(PRECISION_HEAD):
            return '{"reason": "the context mentions it", "verdict": yes}'
        return re.sub(r'"(attributed|verdict)": [01]', r'"\1": "maybe"', good)

    def _first_faulty_asking(self, head: str, data: dict, prompt: str) -> bool:
        marked = (MARK in data["context"] if head.startswith(PRECISION_HEAD)
                  else MARK in data["answer"] if head.startswith(RECALL_HEADS)
                  else any(MARK in s for s in data["statements"]) if head.startswith(NLI_HEAD) else False)
        if not marked:
            return False
        with self.count_lock:
            self.asked[prompt] = self.asked.get(prompt, 0) + 1
            return self.asked[prompt] == 1


ROWS = [
    {"id": "precision-refused-once", "user_input": "When was Oakworks founded?",
     "retrieved_contexts": [f"{MARK} Oakworks was founded in 1900 by Oakson.", "Light rain over the harbour.",
                            "The founder of Oakworks, Oakson, started it in 1900."],
     "response": "Oakworks was founded in 1900.", "reference": "Oakworks was founded in 1900. Its founder was Oakson."},
    {"id": "recall-refused-once", "user_input": "When was Elmworks founded?",
     "retrieved_contexts": ["Elmworks was founded in 1901 by Elmson."], "response": "Elmworks was founded in 1901.",
     "reference": f"Elmworks was founded in 1901. {MARK} Its founder was Elmson of Elmworks."},
    {"id": "nli-refused-once", "user_input": "When was Firworks founded?",
     "retrieved_contexts": ["Firworks was founded in 1902 by Firson."],
     "response": f"Firworks was founded in 1902. {MARK} Firson founded Firworks.", "reference": "Firworks was founded in 1902."},
    {"id": "plain", "user_input": "When was Ashworks founded?",
     "retrieved_contexts": ["Ashworks was founded in 1903.", "Light wind over the harbour."],
     "response": "Ashworks was founded in 1903.", "reference": "Ashworks was founded in 1903."},
]


def record(server: JudgeServer, folder: Path, api: str) -> Path:
    """``ROWS`` recorded on ``api``, each case's id prefixed with the API's name, so both recordings can be
    replayed in one ``run`` (case ids are unique across case files)."""
    dataset = folder / "rag.jsonl"
    dataset.write_text("".join(json.dumps({**r, "id": f"{api}-{r['id']}"}) + "\n" for r in ROWS), encoding="utf-8")
    out = folder / f"{api}.json"
    # in process (the command's own process boundary is not what is tested here; Ragas runs in its probe)
    argv = ["record", str(dataset), "--out", str(out), "--openai-base-url", server.base_url, "--model",
            server.model, "--api-key-env", KEY_ENV, "--request-timeout", "30", "--max-retries", "0", "--api", api,
            *(a for m in METRICS for a in ("--metric", m))]
    result = CliRunner().invoke(app, argv, env={KEY_ENV: "sk-loopback-test", "SOURCE_DATE_EPOCH": "1767225600"})
    assert result.exit_code == 0, result.output
    return out


def replay(cases: list[Path], out: Path) -> tuple[int, dict, str]:
    result = CliRunner().invoke(app, ["run", *(a for path in cases for a in ("--cases", str(path))), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads((out / "report.json").read_text(encoding="utf-8")), result.stdout


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    out = {}
    with OnceBadJudge() as server:
        for api in ("legacy", "collections"):
            out[api] = record(server, tmp_path_factory.mktemp(api), api)
    return out


@pytest.fixture(scope="module")
def replayed(recordings, tmp_path_factory):
    """One ``run`` over both recordings (the legacy one's cases and the collections one's), read by every
    test that asserts on their replay."""
    return replay([recordings["legacy"], recordings["collections"]], tmp_path_factory.mktemp("replay") / "report")


def recorded_cases(recordings, api: str) -> dict[str, dict]:
    """The cases of ``api``'s recording by their ``ROWS`` id (without the API's prefix)."""
    return {c["id"].removeprefix(f"{api}-"): c for c in json.loads(recordings[api].read_text(encoding="utf-8"))["cases"]}


def retried(case: dict, metric: str) -> list[list[str]]:
    return [call["replies"] for call in case["recording"]["replies"].get(metric, []) if len(call["replies"]) > 1]


@slow
@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_a_refused_reply_and_its_retry_are_recorded_as_the_case_script(recordings, api):
    cases = recorded_cases(recordings, api)
    for case_id, metric in (("precision-refused-once", "context_precision_with_reference"),
                            ("recall-refused-once", "context_recall"), ("nli-refused-once", "faithfulness")):
        case = cases[case_id]
        [replies] = retried(case, metric)  # the live run asked twice for one prompt: refused, then its retry
        assert len(replies) == 2 and "not_replayable" not in case["recording"]
        assert metric in case["verdicts"] and all(retried(case, m) == [] for m in METRICS if m != metric)
        script = case["judge_calls"][metric]
        texts = [e["reply"] if isinstance(e, dict) else e for entries in script.values() for e in entries]
        assert replies[0] in texts and (replies[1] in texts or json.dumps({"text": replies[1]}) in texts)
    assert "judge_calls" not in cases["plain"]  # nothing retried: the verdicts answer it by content


@slow
@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_the_replay_gives_ragas_the_recorded_replies_call_for_call(recordings, replayed, api):
    code, document, stdout = replayed
    cases = list(recorded_cases(recordings, api).values())
    rows = {(r["case_id"], r["ragas_target"]): r for r in result_rows(document)}
    assert [f for f in document["drift"] if f["kind"] == "replay_mismatch"] == []
    call_for_call = 0
    for case in cases:
        for metric in METRICS:
            target = TARGETS[api][metric]
            live = case["recording"]["live"][target]
            row = rows[(case["id"], target)]
            assert same_value(decode_ragas_value(live), decode_ragas_value(row["ragas_value"])), (case["id"], target)
            made = sum(len(call["replies"]) for call in case["recording"]["replies"].get(metric, []))
            assert row["prompts"] == made, (case["id"], target, row["prompts"], made)
            call_for_call += bool(retried(case, metric))
    assert call_for_call == 3
    line = document["verdict"]["replay"]  # both recordings' replay: twice this one's counts
    assert f"({2 * call_for_call} call for call through the recorded retry of a refused judge reply)" in line, line
    assert f"replay: {2 * len(cases) * len(METRICS)} live scores, {2 * len(cases) * len(METRICS)} reproduced bit for " \
           "bit" in line, line
    assert code == 0, stdout


@slow
@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_the_other_api_replays_the_same_recording_without_a_harness_error(replayed, api):
    """The replay scores the recorded case on both APIs; the API that did not record it gets the script
    too (a legacy format fix answered with a collections re-ask's reply, a collections re-ask after a
    legacy reply answered by the frozen verdict) and scores what the verdicts say. The same replay as
    the test above, read for the other API's rows of this recording's cases."""
    _, document, _ = replayed
    other = "collections" if api == "legacy" else "legacy"
    rows = {(r["case_id"], r["ragas_target"]): r for r in result_rows(document)}
    for case in ROWS:
        for metric in METRICS:
            value = rows[(f"{api}-{case['id']}", TARGETS[other][metric])]["ragas_value"]
            assert not isinstance(value, dict), (case["id"], TARGETS[other][metric], value)
    drift = [(f["kind"], f["case_id"], f["target"]) for f in document["drift"]
             if str(f["target"]).startswith(other) and str(f["case_id"]).startswith(f"{api}-")]
    assert drift == []


@slow
def test_a_recording_without_its_script_is_not_passed_as_call_for_call(recordings, tmp_path):
    """The same legacy recording with judge_calls deleted (as one made before record wrote them): the
    parsed verdicts still give the live value, but the replay asks fewer prompts than the live run made
    calls, so the retry path never ran: a replay_mismatch naming it, exit 1."""
    document = json.loads(recordings["legacy"].read_text(encoding="utf-8"))
    for case in document["cases"]:
        case.pop("judge_calls", None)
    stripped = tmp_path / "stripped.json"
    stripped.write_text(json.dumps(document), encoding="utf-8")
    code, report, _ = replay([stripped], tmp_path / "report")
    found = {(f["case_id"], f["target"]): f["message"] for f in report["drift"] if f["kind"] == "replay_mismatch"}
    assert set(found) == {("legacy-precision-refused-once", TARGETS["legacy"]["context_precision_with_reference"]),
                          ("legacy-recall-refused-once", TARGETS["legacy"]["context_recall"]),
                          ("legacy-nli-refused-once", TARGETS["legacy"]["faithfulness"])}
    message = found[("legacy-recall-refused-once", TARGETS["legacy"]["context_recall"])]
    assert "asked its judge 1 prompt(s) where the live run made 2 judge call(s)" in message
    assert "no judge_calls.context_recall" in message
    assert "3 with the live value but not the live run's judge calls" in report["verdict"]["replay"]
    assert code == 1


# -- the collections stub's instructor path, in process (fast) ------------------------------------
def _scripted_judge(calls: list, frozen: bool = True):
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    from ragas.metrics.collections.context_precision.util import (
        ContextPrecisionInput,
        ContextPrecisionOutput,
        ContextPrecisionPrompt,
    )

    from ragas_compat.probe.judge.prompt_book import PromptBook
    from ragas_compat.probe.stubs.collections_llm import FrozenInstructorJudge

    book = PromptBook()
    data = {"question": "q", "context": "c1", "answer": "a"}
    if frozen:
        book.expect("context_precision", ContextPrecisionPrompt.instruction, data, {"reason": "frozen", "verdict": 0},
                    label="verdicts[0]")
    book.script_calls("context_precision", ContextPrecisionPrompt.instruction, calls, label="judge_calls")
    prompt = ContextPrecisionPrompt().to_string(ContextPrecisionInput(**data))
    return FrozenInstructorJudge(book), book, prompt, ContextPrecisionOutput


def test_a_refused_scripted_reply_is_re_asked_by_instructor_and_its_retry_answers():
    judge, book, prompt, model = _scripted_judge(['{"reason": "r", "verdict": yes}',
                                                  '```json\n{"reason": "fixed", "verdict": 1}\n```'])
    result = asyncio.run(judge.agenerate(prompt, model))
    assert (result.reason, result.verdict) == ("fixed", 1)  # instructor took the JSON out of the fence
    assert [a.get("scripted") for a in book.asked] == ["judge_calls[0]", "judge_calls[1]"]
    assert book.problems == [] and judge.rejected == []


def test_a_re_ask_the_script_does_not_answer_gets_the_frozen_verdict():
    judge, book, prompt, model = _scripted_judge(['{"reason": "r", "verdict": yes}'])
    result = judge.generate(prompt, model)  # the synchronous path runs the same way
    assert (result.reason, result.verdict) == ("frozen", 0)
    assert len(book.asked) == 2 and book.problems == []


def test_a_reply_never_valid_ends_in_instructor_s_own_exception_after_its_attempts():
    from instructor.retry import InstructorRetryException

    judge, book, prompt, model = _scripted_judge([{"reply": "not JSON", "repeat": True}])
    with pytest.raises(InstructorRetryException):
        asyncio.run(judge.agenerate(prompt, model))
    assert len(book.asked) == 3  # instructor 1.3.2's default max_retries, as Ragas leaves it


def test_a_stub_mismatch_in_a_re_ask_surfaces_as_itself():
    from ragas_compat.probe.judge.prompt_book import StubMismatch

    judge, book, prompt, model = _scripted_judge(['{"reason": "r", "verdict": yes}'], frozen=False)  # no verdict
    with pytest.raises(StubMismatch, match="no frozen answer"):
        asyncio.run(judge.agenerate(prompt, model))
    assert book.problems


def test_the_recorder_reads_a_tool_call_reply_as_its_arguments():
    """Before Ragas 0.4.3, llm_factory's instructor asks for a tool call (TOOLS mode): the judge's reply is
    the call's arguments, and the recorder keeps them (not the message's empty content)."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    import httpx

    from ragas_compat.probe.record.recorder import keep_http_reply, start_scoring

    scoring = start_scoring({})
    tool_call = {"id": "c", "type": "function", "function": {"name": "Out", "arguments": '{"verdict": 1}'}}
    for message in ({"role": "assistant", "content": "plain"},
                    {"role": "assistant", "content": None, "tool_calls": [tool_call]},
                    {"role": "assistant", "content": None, "function_call": {"name": "Out", "arguments": "{}"}}):
        asyncio.run(keep_http_reply(httpx.Response(200, json={"choices": [{"message": message}]})))
    assert scoring.stray_replies == ["plain", '{"verdict": 1}', "{}"]


def test_the_replay_line_counts_call_for_call_and_calls_that_differ():
    from ragas_compat.compare.replay import ReplayAccount

    line = ReplayAccount(live=4, reproduced=3, call_for_call=2, calls_differ=1).line()
    assert line == ("replay: 4 live scores, 3 reproduced bit for bit (2 call for call through the recorded retry of "
                    "a refused judge reply), 1 with the live value but not the live run's judge calls, "
                    "0 not replayable, 0 unchecked")
    assert ReplayAccount(live=1, reproduced=1).line() == \
        "replay: 1 live score, 1 reproduced bit for bit, 0 not replayable, 0 unchecked"
