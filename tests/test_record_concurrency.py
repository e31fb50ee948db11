"""``record``'s default concurrency is Ragas's own ``RunConfig.max_workers`` (ragas_compat.tools.record.concurrency)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragas_compat.tools.record import session
from ragas_compat.tools.record.concurrency import FALLBACK_MAX_WORKERS, max_workers_in_source, ragas_max_workers

HAS_RAGAS = importlib.util.find_spec("ragas") is not None


def test_the_literal_default_of_run_config_is_read_and_nothing_else():
    assert max_workers_in_source("@dataclass\nclass RunConfig:\n    timeout: int = 180\n    max_workers: int = 24\n") == 24
    assert max_workers_in_source("class RunConfig:\n    max_workers: int = os.cpu_count()\n") is None  # computed
    assert max_workers_in_source("class Other:\n    max_workers: int = 8\n") is None
    assert max_workers_in_source("class RunConfig:\n    max_workers: int = 0\n") is None
    assert max_workers_in_source("class RunConfig:\n    max_workers: bool = True\n") is None
    assert max_workers_in_source("not python (") is None


def test_without_ragas_it_is_the_usual_default_and_says_why(tmp_path: Path):
    empty = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=False)
    assert empty.returncode == 0
    found = ragas_max_workers(str(tmp_path / "env" / "bin" / "python"))
    assert found.value == FALLBACK_MAX_WORKERS and "no Ragas found" in found.source
    assert "locating Ragas" in ragas_max_workers(str(tmp_path / "no-such-python")).source


@pytest.mark.skipif(not HAS_RAGAS, reason="Ragas is not installed in this interpreter")
def test_it_is_what_the_installed_ragas_says():
    live = subprocess.run([sys.executable, "-c", "from ragas.run_config import RunConfig; print(RunConfig().max_workers)"],
                          capture_output=True, text=True, timeout=300, check=True)
    found = ragas_max_workers(sys.executable)
    assert found.value == int(live.stdout.strip())
    assert found.source.startswith("RunConfig.max_workers of Ragas ")


def test_record_scores_that_many_samples_at_once_by_default_and_the_given_number_otherwise(tmp_path, monkeypatch):
    seen: list[int] = []

    class FakeProbe:
        def __init__(self, samples, metrics, judge, *, python, concurrency, batch_size, timeout, budget):
            seen.append(concurrency)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def batches(self):
            return iter(())

    monkeypatch.setattr(session, "RecordingProbe", FakeProbe)
    monkeypatch.setattr(session, "ragas_max_workers", lambda python: type("C", (), {"value": 23})())
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps({"user_input": "q", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]})
                       + "\n", encoding="utf-8")
    session.record(dataset, tmp_path / "out.json", judge=None, metrics=["id_context_precision"])
    session.record(dataset, tmp_path / "out2.json", judge=None, metrics=["id_context_precision"], concurrency=3)
    assert seen == [23, 3]
