"""The probe's per-case budget: a case whose Ragas code loops asking the judge, grows without bound or
never returns is ONE result, "Ragas did not finish (N judge calls / memory / time)" (a BudgetExceeded
error of Ragas's, no origin), and the other cases of the run are scored.

The hostile classes are Ragas's own ``Faithfulness`` with a ``_single_turn_ascore`` that misbehaves (a
module on the probe's import path, named in the request's targets like any private Ragas module): the
judge, its script and the sample are the probe's usual ones. Each probe runs as a subprocess bounded by
a timeout; before the budget existed the looping case never ended (and reached the machine's memory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.probe.budget import OverBudget, caller_origin, cap_judge_calls
from ragas_compat.probe.protocol import (
    BUDGET_ERROR_TYPE,
    DEFAULT_BUDGET,
    ENTRY_PROBE,
    HARNESS_ORIGIN,
    PROBE_DIR,
    budget_problem,
    probe_command,
)
from ragas_compat.runner import request_targets

HOSTILE = textwrap.dedent('''
    import asyncio
    import json
    from langchain_core.prompt_values import StringPromptValue
    from ragas.metrics._faithfulness import Faithfulness

    class LoopingFaithfulness(Faithfulness):
        """Asks the judge again after every failure, without end (a retry loop with no bound)."""
        async def _single_turn_ascore(self, sample, callbacks):
            while True:
                try:
                    await self.llm.agenerate_text(StringPromptValue(text="answer in JSON, please"))
                except Exception:
                    pass

    class NestingFaithfulness(Faithfulness):
        """Asks the judge to fix its format, the whole previous prompt escaped into the next (as 0.2.0 does)."""
        async def _single_turn_ascore(self, sample, callbacks):
            text = "fix the format"
            while True:
                try:
                    await self.llm.agenerate_text(StringPromptValue(text=text))
                except Exception:
                    pass
                text = json.dumps({"prompt_value": text, "output_string": "not JSON"})

    class HoggingFaithfulness(Faithfulness):
        """Keeps every reply's worth of memory, without end."""
        async def _single_turn_ascore(self, sample, callbacks):
            kept = []
            while True:
                kept.append(bytearray(32 * 2**20))

    class TouchingFaithfulness(Faithfulness):
        """Allocates and touches 1.5 GiB, 32 MiB at a time, then answers."""
        async def _single_turn_ascore(self, sample, callbacks):
            kept = [b"x" * (32 * 2**20) for _ in range(48)]
            return float(len(kept) > 0)

    class BlockFaithfulness(Faithfulness):
        """Allocates and touches 1.5 GiB in one block, then answers."""
        async def _single_turn_ascore(self, sample, callbacks):
            return float(len(b"x" * (3 * 2**29)) > 0)

    class SpinningFaithfulness(Faithfulness):
        """Computes without end, never giving the event loop back."""
        async def _single_turn_ascore(self, sample, callbacks):
            n = 0
            while True:
                n += 1

    class StuckFaithfulness(Faithfulness):
        """Awaits something that never comes."""
        async def _single_turn_ascore(self, sample, callbacks):
            await asyncio.Event().wait()
''')

MEASURE = textwrap.dedent('''
    import json, resource, subprocess, sys
    proc = subprocess.run(json.loads(sys.argv[1]), env=json.loads(sys.argv[2]), timeout=float(sys.argv[3]),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"code": proc.returncode, "peak": peak, "stderr": proc.stderr[-3000:]}))
''')


def faithfulness_case(case_id: str) -> dict:
    suite = load_default_suite()
    raw = next(c.raw for c in suite.cases if "faithfulness" in (c.raw.get("verdicts") or {}))
    return {**raw, "id": case_id}


def hostile_target(class_name: str, case_id: str) -> dict:
    [spec] = request_targets(["legacy:Faithfulness"])
    return {**spec, "ragas_class": class_name, "module": "hostile_metrics", "cases": [case_id]}


def run_probe_measured(tmp_path: Path, request: dict, timeout: float = 240.0,
                       python: str = sys.executable) -> tuple[dict, dict]:
    """The probe's output and ``{"code", "peak" (bytes of the probe's peak RSS), "stderr"}``."""
    (tmp_path / "hostile_metrics.py").write_text(HOSTILE, encoding="utf-8")
    request = {**request, "output": str(tmp_path / "result.json")}
    (tmp_path / "request.json").write_text(json.dumps(request), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "RAGAS_DO_NOT_TRACK": "true"}
    command = probe_command(python, ENTRY_PROBE, str(tmp_path / "request.json"))
    measured = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(command), json.dumps(env), str(timeout)],
                              capture_output=True, text=True, timeout=timeout + 30, cwd=tmp_path)
    assert measured.returncode == 0, measured.stderr[-3000:]
    facts = json.loads(measured.stdout)
    assert facts["code"] == 0, facts["stderr"]
    return json.loads((tmp_path / "result.json").read_text(encoding="utf-8")), facts


@pytest.mark.slow
def test_a_looping_growing_spinning_or_stuck_case_is_one_cell_and_the_run_is_scored(tmp_path):
    hostile = {"loop": "LoopingFaithfulness", "nest": "NestingFaithfulness", "hog": "HoggingFaithfulness",
               "spin": "SpinningFaithfulness", "stuck": "StuckFaithfulness"}
    cases = [faithfulness_case(case_id) for case_id in ("plain", *hostile)]
    targets = request_targets(["legacy:Faithfulness"]) + [hostile_target(cls, cid) for cid, cls in hostile.items()]
    budget = {"judge_calls": 50, "case_seconds": 4.0}  # the default memory
    output, facts = run_probe_measured(tmp_path, {"cases": cases, "targets": targets, "budget": budget})
    by_key = {(r["case_id"], r["target"]): r for r in output["results"]}
    # the real class scored every case, the hostile ones included
    for case_id in ("plain", *hostile):
        assert isinstance(by_key[(case_id, "legacy:Faithfulness")]["value"], float), by_key[(case_id, "legacy:Faithfulness")]
    stopped = {case_id: by_key[(case_id, f"legacy:{cls}")] for case_id, cls in hostile.items()}
    for case_id, result in stopped.items():
        error = result["value"]["error"]
        assert error["type"] == BUDGET_ERROR_TYPE, (case_id, error)
        assert "origin" not in error, (case_id, error)  # Ragas's class looped: Ragas's behaviour
        assert error["message"].startswith("Ragas did not finish ("), error
    # the case's Faithfulness script holds 2 prompts (statements, verdicts): the cap of 50 counts past them
    assert "(53 judge calls)" in stopped["loop"]["value"]["error"]["message"]
    assert stopped["loop"]["prompts"] == 52
    assert "(memory): its prompts to the judge reached" in stopped["nest"]["value"]["error"]["message"]
    assert stopped["nest"]["prompts"] < 50
    assert "(memory): it ran out of" in stopped["hog"]["value"]["error"]["message"]
    assert "(time)" in stopped["spin"]["value"]["error"]["message"]
    assert "(time)" in stopped["stuck"]["value"]["error"]["message"]
    # the runaway and the memory bomb stayed far below the machine's end (RSS of the probe's process)
    assert facts["peak"] < 2**30, facts["peak"]
    print(f"probe peak RSS {facts['peak'] / 2**20:.0f} MiB")


@pytest.mark.slow
def test_a_bomb_touching_1_5_gib_is_one_memory_cell_under_1_gib_with_the_default_budget(tmp_path):
    """The default budget keeps a pure allocation bomb under 1 GiB resident. Before, the default was a
    4 GiB address space of which Ragas's import maps about 1.6 GB but touches 0.2 GB: these bombs
    finished with a score at about 1.8 GB resident."""
    hostile = {"touch": "TouchingFaithfulness", "block": "BlockFaithfulness"}
    cases = [faithfulness_case(case_id) for case_id in ("plain", *hostile, "after")]
    targets = request_targets(["legacy:Faithfulness"]) + [hostile_target(cls, cid) for cid, cls in hostile.items()]
    output, facts = run_probe_measured(tmp_path, {"cases": cases, "targets": targets})  # no budget: the default
    print(f"probe peak RSS {facts['peak'] / 2**20:.0f} MiB")
    by_key = {(r["case_id"], r["target"]): r for r in output["results"]}
    for case_id in ("plain", *hostile, "after"):  # the column survives: every case scored by the real class
        assert isinstance(by_key[(case_id, "legacy:Faithfulness")]["value"], float), case_id
    for case_id, cls in hostile.items():
        value = by_key[(case_id, f"legacy:{cls}")]["value"]
        assert isinstance(value, dict) and value["error"]["type"] == BUDGET_ERROR_TYPE, (case_id, value)
        assert "origin" not in value["error"], (case_id, value)
        assert value["error"]["message"].startswith("Ragas did not finish (memory): it ran out of the "
                                                    f"{DEFAULT_BUDGET['memory'] / 2**30:g} GiB"), value
    assert facts["peak"] < 2**30, facts["peak"]


@pytest.mark.slow
def test_ragas_bounded_retry_is_ragas_s_own_error_not_a_budget_cell(tmp_path):
    """Ragas's own retry (its output parser asking to fix the format) against a judge that always answers
    with unparseable text ends by itself after a few calls with Ragas's own exception: the cap counts calls
    past the prompts the case's script answers, so even a cap of 1 does not cut a retry Ragas bounds."""
    case = faithfulness_case("never-json")
    case["judge_calls"] = {"faithfulness": {"statement_generator": [{"reply": "not JSON", "repeat": True}],
                                            "fix_output_format": [{"reply": "still not JSON", "repeat": True}]}}
    other = faithfulness_case("plain")
    request = {"cases": [case, other], "targets": request_targets(["legacy:Faithfulness"]),
               "budget": {"judge_calls": 1}}
    output, _ = run_probe_measured(tmp_path, request)
    by_case = {r["case_id"]: r for r in output["results"]}
    error = by_case["never-json"]["value"]["error"]
    assert error["type"] == "RagasOutputParserException" and "origin" not in error, error
    assert by_case["never-json"]["prompts"] >= 2  # it did retry
    assert isinstance(by_case["plain"]["value"], float)


def test_the_cap_blames_whoever_called_the_judge():
    class Book:
        def answer_generations(self, prompt_text: str, n: int) -> list[str]:
            return ["{}"] * n

        def scripted_prompts(self) -> int:
            return 0

    book = cap_judge_calls(Book(), cap=2)
    book.answer_generations("p", 1)
    book.answer_generations("p", 1)
    with pytest.raises(OverBudget) as over:  # this test's code (not the probe's) called: not the harness's
        book.answer_generations("p", 1)
    assert over.value.calls == 3 and over.value.origin is None
    # the same loop in a file of the probe: the harness looped, so the harness's error
    looping = compile("def ask(book):\n    for _ in range(5):\n        book.answer_generations('p', 1)\n",
                      os.path.join(PROBE_DIR, "scoring.py"), "exec")
    namespace: dict = {}
    exec(looping, namespace)
    with pytest.raises(OverBudget) as over:
        namespace["ask"](cap_judge_calls(Book(), cap=2))
    assert over.value.origin == HARNESS_ORIGIN
    assert over.value.value()["error"]["origin"] == HARNESS_ORIGIN
    assert caller_origin(None) is None


def test_the_cap_counts_only_calls_beyond_the_cases_own_prompts():
    """A case with 60 contexts asks 60 prompts legitimately: a cap of 2 stops it at the 63rd call, not the
    3rd (the fuzz's long cases were 'Ragas did not finish' cells, blaming Ragas for the harness's cap)."""
    class Book:
        def answer_generations(self, prompt_text: str, n: int) -> list[str]:
            return ["{}"] * n

        def scripted_prompts(self) -> int:
            return 60

    book = cap_judge_calls(Book(), cap=2)
    for _ in range(62):
        book.answer_generations("p", 1)
    with pytest.raises(OverBudget) as over:
        book.answer_generations("p", 1)
    assert over.value.calls == 63


RENEWED = textwrap.dedent('''
    import resource
    from ragas_compat.probe.budget import limit_memory, renew_memory_limit
    limit_memory(256 * 2**20)
    kept = [b"x" * (200 * 2**20)]  # touched: within the first case's 256 MiB
    try:
        kept.append(b"x" * (200 * 2**20))
    except MemoryError:
        print("second 200 MiB refused")
    renew_memory_limit()  # the next case: 256 MiB beyond what the process holds now
    kept.append(b"x" * (200 * 2**20))
    print("after renewal 200 MiB more")
    try:
        kept.append(b"x" * (100 * 2**20))
    except MemoryError:
        print("then 100 MiB more refused")
    print(resource.getrlimit(resource.RLIMIT_DATA)[0] > 0)
''')


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="the memory budget needs /proc/self/statm")
def test_the_memory_budget_is_what_one_case_may_allocate_and_is_renewed_per_case():
    proc = subprocess.run([sys.executable, "-c", RENEWED], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:4] == ["second 200 MiB refused", "after renewal 200 MiB more",
                                           "then 100 MiB more refused", "True"], proc.stdout


def test_the_request_carries_a_checked_budget():
    assert budget_problem(None) is None and budget_problem(DEFAULT_BUDGET) is None
    assert budget_problem({"judge_calls": 0}) and budget_problem({"case_seconds": float("inf")})
    assert budget_problem({"memory": 5}) and budget_problem({"judge_call": 3})
    assert budget_problem({"memory": None}) is None and budget_problem({"address_space": 2**30})


@pytest.mark.slow
def test_ragas_0_2_0_nesting_format_fixes_without_end_is_one_cell(tmp_path):
    """The attack: 0.2.0 asks a judge that never returns valid JSON to fix the format of its own fix,
    recursively, each prompt holding the previous one escaped; the probe reached 11.5 GB and the kernel
    ended the whole column. Now the case stops at the prompt-size cap, well under 1 GiB."""
    from test_probe_dialects import cached_environment

    env = cached_environment("0.2.0")
    if env is None:
        pytest.skip("Ragas 0.2.0's environment is not built in the matrix cache (ragas-compat matrix --versions 0.2.0)")
    document = json.loads((Path(__file__).parent / "data" / "per_call_cases.json").read_text(encoding="utf-8"))
    case = next(c for c in document["cases"] if c["id"] == "per-call-precision-reply-never-json")
    bad = case["judge_calls"]["context_precision_with_reference"]["context_precision"][0]
    case["judge_calls"] = {"context_precision_with_reference": {
        "context_precision": [{"reply": bad, "repeat": True}], "fix_output_format": [{"reply": bad, "repeat": True}]}}
    request = {"cases": [case], "targets": request_targets(["legacy:LLMContextPrecisionWithReference"])}
    output, facts = run_probe_measured(tmp_path, request, python=str(env / "bin" / "python"))
    assert output["ragas"]["version"] == "0.2.0"
    [result] = output["results"]
    error = result["value"]["error"]
    assert error["type"] == BUDGET_ERROR_TYPE and "origin" not in error, error
    assert error["message"].startswith("Ragas did not finish (memory): its prompts to the judge reached"), error
    assert facts["peak"] < 2**30, facts["peak"]
    print(f"0.2.0 probe peak RSS {facts['peak'] / 2**20:.0f} MiB")


def test_a_series_of_deadlines_stops_only_the_cases_over_time_and_restores_the_alarm_handler():
    import asyncio
    import signal

    from ragas_compat.probe.budget import Deadlines

    async def quick() -> str:
        await asyncio.sleep(0)
        return "ok"

    async def stuck() -> str:  # awaits what never comes
        await asyncio.Event().wait()
        return "never"

    async def spinning() -> str:  # never gives the loop back
        while True:
            pass

    async def series() -> list[str]:
        with Deadlines(1.0) as deadlines:  # ample for a quick case, however loaded the machine
            return [await deadlines.run(case(), lambda exc: exc.what)
                    for case in (quick, stuck, quick, spinning, quick)]

    handler = signal.getsignal(signal.SIGALRM)
    assert asyncio.run(series()) == ["ok", "time", "ok", "time", "ok"]
    assert signal.getsignal(signal.SIGALRM) is handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def _deadline_series(cases: list, seconds: float = 1.0) -> tuple[list, list]:
    """Each case (a coroutine function) run through one ``Deadlines`` series; (results, facts after each
    case: whether the runner's task is left cancelling)."""
    import asyncio

    from ragas_compat.probe.budget import Deadlines

    async def series() -> tuple[list, list]:
        results, cancelling = [], []
        with Deadlines(seconds) as deadlines:
            for case in cases:
                results.append(await deadlines.run(case(), lambda exc: exc.what))
                cancelling.append(asyncio.current_task().cancelling())
        return results, cancelling

    return asyncio.run(series())


def test_each_case_of_a_deadline_series_has_its_own_context_and_leaves_no_task_or_cancellation():
    import asyncio
    import contextvars

    seen = contextvars.ContextVar("seen", default="unset")
    left: list = []

    async def setting() -> str:  # sets a context variable and never resets it
        seen.set("case 1")
        return seen.get()

    async def reading() -> str:
        return seen.get()

    async def leaving() -> str:  # starts a task it does not await
        left.append(asyncio.get_running_loop().create_task(asyncio.Event().wait()))
        return "left one"

    async def stuck() -> str:
        await asyncio.Event().wait()
        return "never"

    async def timed() -> str:  # the runner's task is not left cancelling: a timeout of the case's own still works
        try:
            async with asyncio.timeout(0.01):
                await asyncio.Event().wait()
        except TimeoutError:
            return "own timeout"
        return "never"

    async def checked() -> str:
        return "cancelled" if left[0].cancelled() else "running"

    results, cancelling = _deadline_series([setting, reading, leaving, stuck, timed, checked], seconds=0.5)
    assert results == ["case 1", "unset", "left one", "time", "own timeout", "cancelled"]
    assert cancelling == [0] * 6


def test_a_case_that_swallows_the_deadline_s_cancellation_is_cancelled_again():
    import asyncio

    async def swallowing() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass
        await asyncio.Event().wait()
        return "never"

    async def returning() -> str:  # swallows it and returns: its value stands, the cancellation is undone
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass
        return "returned"

    async def quick() -> str:
        return "ok"

    assert _deadline_series([swallowing, quick, returning, quick], seconds=0.2) == (
        ["time", "ok", "returned", "ok"], [0, 0, 0, 0])


def test_a_deadline_series_off_the_main_thread_stops_cases_without_an_alarm():
    import asyncio
    import signal
    import threading

    async def stuck() -> str:
        await asyncio.Event().wait()
        return "never"

    async def quick() -> str:
        await asyncio.sleep(0)
        return "ok"

    out: list = []
    handler = signal.getsignal(signal.SIGALRM)
    thread = threading.Thread(target=lambda: out.append(_deadline_series([quick, stuck, quick], seconds=0.2)))
    thread.start()
    thread.join(30)
    assert out == [(["ok", "time", "ok"], [0, 0, 0])]
    assert signal.getsignal(signal.SIGALRM) is handler
