"""A verification run opens no network connection, and Ragas telemetry is off."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.metrics.registry import all_metrics, case_targets, in_release
from ragas_compat.runner import run_probe

DEFAULT_SUITE = Path(__file__).resolve().parents[1] / "harness" / "cases" / "suites" / "default.json"


def applicable_targets(case) -> set[str]:
    """Every target scoring ``case`` (a parsed Case) for a metric that applies to it: the registry's
    built-in targets, or the case's own configurations of a class (case key ``targets``)."""
    here = importlib.metadata.version("ragas")  # a class some releases only have makes no row elsewhere
    return {name for name, specs in case_targets(case).items()
            if any(spec.applies_to(case) for spec in specs) and in_release(name, here)}


@pytest.fixture(scope="module")
def suite_run(default_audit_run):
    run = default_audit_run.probe  # the default audit's probe run: tests/conftest.py, once per session
    assert run.ok, run.error
    return run


def test_default_suite_runs_with_no_network_attempt(suite_run):
    assert suite_run.output["network_attempts"] == []


def test_default_suite_has_a_result_for_every_applicable_target(suite_run):
    got = {(r["case_id"], r["target"]) for r in suite_run.output["results"]}
    wanted = {(c.id, t) for c in load_default_suite().cases for t in applicable_targets(c)}
    assert got == wanted
    assert len(suite_run.output["results"]) == len(wanted)  # one result per pair
    # every declared target is exercised by the bundled suite (configured targets come on top)
    assert {t for _, t in got} >= {str(t) for spec in all_metrics() for t in spec.ragas_targets
                                   if in_release(str(t), importlib.metadata.version("ragas"))}


RETRIED_TEMPLATE_TARGETS = {str(t) for spec in all_metrics() if spec.ragas and spec.ragas.judge == "rating"
                            for t in spec.ragas_targets}


def test_default_suite_judge_is_asked_exactly_the_expected_prompts(suite_run):
    for r in suite_run.output["results"]:
        if r["target"] in RETRIED_TEMPLATE_TARGETS:  # one expected text per template, asked 0 to 5 times
            assert r["prompts"] <= 5 * r["expected_prompts"], r
        elif not isinstance(r["value"], dict):
            assert r["prompts"] == r["expected_prompts"], r


def test_telemetry_is_off_inside_the_probe(suite_run):
    assert suite_run.output["telemetry"] == {"RAGAS_DO_NOT_TRACK": "true", "do_not_track": True}
    assert suite_run.output["ragas"]["import_error"] is None


@pytest.mark.slow
def test_guard_catches_a_real_connection_attempt():
    """Negative control: the same guard records and blocks an attempt made inside the probe."""
    case = {"id": "net", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
            "retrieved_contexts": []}
    run = run_probe([case], targets=["selftest:connect"])
    assert run.ok, run.error
    [attempt] = run.output["network_attempts"]
    assert attempt["call"] == "socket.create_connection" and attempt["address"] == "('127.0.0.1', 9)"
    assert run.output["results"][0]["value"]["error"]["type"] == "NetworkBlocked"


def test_guard_blocks_every_patched_entry_point():
    script = textwrap.dedent("""
        import json, socket, sys
        from ragas_compat.probe import network_guard as probe_network_guard
        attempts = []
        probe_network_guard.install(attempts)
        calls = [lambda: socket.create_connection(("127.0.0.1", 9)),
                 lambda: socket.getaddrinfo("example.com", 443),
                 lambda: socket.socket().connect(("127.0.0.1", 9)),
                 lambda: socket.socket().connect_ex(("127.0.0.1", 9))]
        blocked = 0
        for call in calls:
            try:
                call()
            except probe_network_guard.NetworkBlocked:
                blocked += 1
        print(json.dumps({"blocked": blocked, "calls": [a["call"] for a in attempts]}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"blocked": 4, "calls": [
        "socket.create_connection", "socket.getaddrinfo", "socket.connect", "socket.connect_ex"]}
