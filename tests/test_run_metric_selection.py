"""Each metric named with ``run --metric`` is checked, or the run says why not (exit 2, no report): a metric no
case could score was dropped silently while the others made the verdict green."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cases import load_default_suite
from ragas_compat.cli.app import app

needs_ragas = pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                                 reason="Ragas is not installed in this interpreter")
WORKS = "context_precision_with_reference"


def _one_case(tmp_path: Path) -> str:
    case = next(c.raw for c in load_default_suite().cases if c.id == "cp-worked-example")
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"schema_version": 1, "suite": "one", "cases": [dict(case)]}), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("other, says", [
    ("agent_goal_accuracy_with_reference", "metrics agent_goal_accuracy_with_reference): no Ragas class applies"),
    ("judge_audit", "--metric judge_audit: no Ragas class computes it"),
])
def test_a_metric_no_case_can_score_beside_one_that_works_is_refused(tmp_path, other, says):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--cases", _one_case(tmp_path), "--metric", WORKS, "--metric", other,
                                      "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split()) and WORKS not in result.output.split("drop it")[0].split(":")[-1]
    assert not out.exists()


@needs_ragas
def test_a_metric_the_probe_scored_no_row_of_is_refused_after_the_run(tmp_path, monkeypatch):
    """A metric whose class makes no row in this Ragas (the probe leaves out a class some releases lack) is not
    checked either: here the check before the run is made to pass, and the probe scores no row of it."""
    from ragas_compat.cli import run as run_command

    monkeypatch.setattr(run_command, "may_score_a_row", lambda suite, metrics=None: True)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--cases", _one_case(tmp_path), "--metric", WORKS, "--metric",
                                      "agent_goal_accuracy_with_reference", "--out", str(out), "--quiet"])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "no (case, Ragas target) row was scored" in message and "metrics agent_goal_accuracy_with_reference)" in message
    assert not out.exists() or not any(out.iterdir())  # the writability check's folder, empty: no report
