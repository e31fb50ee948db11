"""Scoring in forked workers (harness/probe/workers.py) and a probe started ahead of its
request (ragas_compat.runner.StartedProbe): the same output as one process, progress, failures named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.probe import workers as probe_workers
from ragas_compat.probe.protocol import LOCATED_FILE
from ragas_compat.runner import StartedProbe, run_probe

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

ID_TARGETS = ["legacy:IDBasedContextPrecision", "legacy:IDBasedContextRecall"]


def test_claims_hand_each_unit_out_once_to_whichever_forked_process_asks_first():
    assert [unit for unit in iter(probe_workers.Claims(3, shared=False).next, None)] == [0, 1, 2]
    claims = probe_workers.Claims(6, shared=True)
    read, write = os.pipe()

    def child():  # takes one unit, tells the parent, and stops
        unit = claims.next()
        os.write(write, b"x")
        return [unit]

    def parent():  # waits for the child's claim, then takes every unit left
        os.read(read, 1)
        return list(iter(claims.next, None))

    try:
        assert probe_workers.run_forked([parent, child]) == [[1, 2, 3, 4, 5], [0]]  # one counter for both
    finally:
        claims.close()
        os.close(read)
        os.close(write)


def test_a_forked_result_goes_through_the_given_dump_and_load():
    def dump(result, handle):
        handle.write("\n".join(result) + "\n")

    def load(handle):
        return [line.rstrip("\n") for line in handle]

    assert probe_workers.run_forked([lambda: ["a"], lambda: ["b\u2028c", "d\re"]], dump=dump, load=load) == \
        [["a"], ["b\u2028c", "d\re"]]


def test_forked_tasks_return_in_task_order_and_a_failing_child_is_named():
    assert probe_workers.run_forked([lambda: [1], lambda: {"pid": os.getpid()}, lambda: "c"])[0] == [1]
    results = probe_workers.run_forked([lambda: os.getpid(), lambda: os.getpid(), lambda: os.getpid()])
    assert results[0] == os.getpid() and len(set(results)) == 3  # each task ran in its own process

    def boom():
        raise RuntimeError("worker bug")

    with pytest.raises(probe_workers.WorkerFailed, match=r"worker 1 \(pid \d+\) exited with 70"):
        probe_workers.run_forked([lambda: 0, boom])


@pytest.fixture(scope="module")
def id_cases():
    return [case.raw for case in load_default_suite().cases if case.raw.get("retrieved_context_ids") is not None]


def test_two_workers_give_the_same_output_as_one(id_cases):
    one = run_probe(id_cases, targets=ID_TARGETS, evaluate=True, workers=1)
    two = run_probe(id_cases, targets=ID_TARGETS, evaluate=True, workers=2)
    assert one.ok and two.ok, (one.error, two.error)
    assert len(one.output["results"]) > 10
    assert two.output["results"] == one.output["results"]
    strip = [{k: v for k, v in run.items() if k != "seconds"} for run in one.output["evaluate"]["runs"]]
    assert [{k: v for k, v in run.items() if k != "seconds"} for run in two.output["evaluate"]["runs"]] == strip


def test_a_started_probe_says_where_ragas_is_then_reports_progress_to_the_end(id_cases):
    seen: list[tuple[int, int]] = []
    with StartedProbe(timeout=600) as probe:
        located = probe.located()
        assert located["found"] is True and Path(located["package_dir"]).name == "ragas"
        assert (Path(probe.folder.name) / LOCATED_FILE).exists()
        probe.submit(id_cases, targets=ID_TARGETS, workers=2)
        run = probe.result(lambda done, total: seen.append((done, total)))
    assert run.ok, run.error
    done, total = seen[-1]
    assert done == total >= len(id_cases)  # units: cases (a case scored in two parts counts twice) and runs
    assert all(done <= total for done, total in seen)
    assert not Path(probe.folder.name).exists()  # closed: the temporary folder is gone


def test_chained_requests_are_served_by_one_probe_that_imports_ragas_once(id_cases):
    alone = run_probe(id_cases, targets=ID_TARGETS, workers=1)
    assert alone.ok, alone.error
    first, second = id_cases[:3], id_cases[3:]
    with StartedProbe(timeout=600) as probe:
        probe.submit(first, targets=ID_TARGETS, workers=2, chained=True)
        one = probe.result()
        assert not probe.process.exited()  # answered, and waiting for the next request of the chain
        assert not list(Path(probe.folder.name).glob("re*.json"))  # the answered request and its output are gone
        assert probe.progress() == (len(first), len(first))
        probe.submit(second, targets=ID_TARGETS, workers=1)
        two = probe.result()
        assert probe.progress() == (len(second), len(second))  # this request's progress, not the sum of both
    assert one.ok and two.ok, (one.error, two.error)
    assert 0 < two.seconds < one.seconds  # each request's own time: the first includes the import
    assert one.output["results"] + two.output["results"] == alone.output["results"]
    assert two.output["ragas"] == one.output["ragas"] == alone.output["ragas"]
    assert two.output["results"][0]["case_id"] == second[0]["id"]


def test_a_rejected_request_in_a_chain_is_reported_for_that_request_only(id_cases):
    with StartedProbe(timeout=600) as probe:
        probe.submit(id_cases[:2], targets=ID_TARGETS, chained=True)
        probe.submit(id_cases[2:], targets=["legacy:NoSuchMetric"])
        one, two = probe.result(), probe.result()
    assert one.ok, one.error
    assert not two.ok and two.error.startswith("probe rejected the request") and "NoSuchMetric" in two.error
