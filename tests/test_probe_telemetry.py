"""Telemetry as a run parameter: off by default (RAGAS_DO_NOT_TRACK=true before Ragas is imported); on,
Ragas's telemetry runs and the probe's network guard blocks and counts every attempt, so a matrix can
show a change in telemetry between versions."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

import ragas_compat.cli.matrix as cli_matrix
from ragas_compat.cases import load_default_suite
from ragas_compat.cli.app import app
from ragas_compat.runner import run_probe
from ragas_compat.tools.matrix.environments import Environment

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

TARGETS = ["legacy:Faithfulness", "legacy:IDBasedContextPrecision"]


@pytest.fixture(scope="module")
def cases():
    return [case.raw for case in load_default_suite().cases][:3]


def test_telemetry_is_off_unless_asked(cases):
    quiet = run_probe(cases, targets=TARGETS, timeout=300)
    assert quiet.ok, quiet.error
    assert quiet.output["network_attempts"] == []
    assert quiet.output["telemetry"] == {"RAGAS_DO_NOT_TRACK": "true", "do_not_track": True}


def test_telemetry_on_is_blocked_and_counted(cases):
    loud = run_probe(cases, targets=TARGETS, timeout=300, telemetry=True)
    assert loud.ok, loud.error
    assert loud.output["telemetry"] == {"RAGAS_DO_NOT_TRACK": "false", "do_not_track": False}
    attempts = loud.output["network_attempts"]
    assert attempts and all(a["call"].startswith("socket.") and a["address"] for a in attempts)
    # scoring is unchanged: the blocked posts never reach a metric's value
    quiet = run_probe(cases, targets=TARGETS, timeout=300)
    assert [r["value"] for r in loud.output["results"]] == [r["value"] for r in quiet.output["results"]]


def test_matrix_telemetry_option_counts_attempts_per_column(tmp_path, monkeypatch):
    case_file = tmp_path / "cases.json"
    document = {"schema_version": 1, "suite": "telemetry", "cases": [load_default_suite().cases[0].raw]}
    case_file.write_text(json.dumps(document), encoding="utf-8")

    def installed(entries, **kwargs):
        return [Environment(e.text, "release", e.exact_version, sys.executable, status="reused") for e in entries]

    monkeypatch.setattr(cli_matrix, "ensure_environments", installed)
    out = tmp_path / "m"
    result = CliRunner().invoke(app, ["matrix", "--versions", "0.4.3", "--cases", str(case_file), "--out", str(out),
                                      "--telemetry", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "matrix.json").read_text())
    assert data["suite"]["telemetry"] is True and data["columns"][0]["network_attempts"] > 0
    assert "(telemetry on, blocked)" in (out / "matrix.md").read_text()
