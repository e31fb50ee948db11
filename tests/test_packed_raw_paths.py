"""The other large-input paths hold their cases' raw objects packed too (issue 40's closing note).

``run`` holds each case's raw object packed (``ragas_compat.cases.loader.packed``; tests/test_packed_raw.py)
once its probe request is written. ``run --shard``, ``merge``, the pytest plugin and ``audit-run`` each hold
a whole suite while the probe scores (or, for ``merge``, while the audit is classified and reported) and
pack it with the same function. Each test below fails if its path hands on a suite whose raw objects are
plain dicts; the outputs stay byte-identical (tests/test_shards.py, tests/test_pytest_plugin.py,
tests/test_audit_run*.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import typer
from typer.testing import CliRunner

from ragas_compat import pipeline
from ragas_compat.cases import load_default_suite
from ragas_compat.cases.loader import PackedRaw, packed
from ragas_compat.cli import audit_run as cli_audit_run
from ragas_compat.cli import run as cli_run
from ragas_compat.cli.app import app
from ragas_compat.pytest_plugin import RagasCompat
from ragas_compat.resources import package_json
from ragas_compat.tools import shards

SMALL_RUN = Path(__file__).parent / "data" / "audit_run" / "small"


def _all_packed(suite) -> bool:
    return bool(suite.cases) and all(isinstance(case.raw, PackedRaw) for case in suite.cases)


class NoProbe:
    """A started probe that is never asked to score (the path is stopped before it would be)."""

    def __init__(self, **_):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return None

    def located(self, *_):
        return None


class Stop(Exception):
    """Raised by a stand-in once it has seen the suite the path hands on."""


@pytest.mark.parametrize("arguments, module, name", [
    (["run"], cli_run, "run_audit"),                        # the whole suite, as the probe scores it
    (["run", "--shard", "1/2"], shards, "run_shard"),       # the whole suite is held while the shard is scored
])
def test_run_hands_on_a_packed_suite(monkeypatch, tmp_path: Path, arguments, module, name):
    seen = []

    def stand_in(suite, *_, **__):
        seen.append(suite)
        raise typer.Exit(0)

    monkeypatch.setattr(cli_run, "take_early_probe", lambda **_: None)
    monkeypatch.setattr(cli_run, "StartedProbe", NoProbe)
    monkeypatch.setattr(cli_run, "resolve_ragas_source", lambda **_: None)
    monkeypatch.setattr(module, name, stand_in)
    result = CliRunner().invoke(app, [*arguments, "--out", str(tmp_path / "r"), "--quiet"])
    assert result.exit_code == 0, result.output
    (suite,) = seen
    assert suite.cases == load_default_suite().cases
    assert _all_packed(suite)


def test_a_packed_shard_asks_the_probe_for_the_raw_objects_as_read_and_keeps_the_digest():
    suite = load_default_suite()
    suite_packed = packed(suite)
    assert shards.suite_digest(suite_packed) == shards.suite_digest(suite)
    spec = shards.ShardSpec(2, 3)

    class Probe(NoProbe):
        def submit(self, cases, **_):
            self.cases = cases

        def result(self, *_):
            raise Stop(self.cases)

    source = SimpleNamespace(sys_path_prefix=[], rules_version=None)
    with pytest.raises(Stop) as caught:
        shards.run_shard(suite_packed, spec, None, source, python="unused", started=Probe())
    (submitted,) = caught.value.args
    expected = [case.raw for case in shards.shard_suite(suite, spec).cases]
    assert json.dumps(submitted) == json.dumps(expected) and all(type(raw) is dict for raw in submitted)


def test_merge_classifies_a_packed_suite(monkeypatch, tmp_path: Path):
    suite = load_default_suite()
    folders = []
    for index in (1, 2):
        document = {"format": shards.SHARD_FORMAT, "shard": {"index": index, "count": 2, "cases": 0},
                    "suite": {"name": suite.name, "cases": len(suite.cases), "digest": shards.suite_digest(suite)},
                    "inputs": {"cases": [], "expectations": None, "expectations_digest": None},
                    "metrics": None, "rules_version": None,
                    "provenance": {"suite": {"name": suite.name, "source": suite.source}},
                    "probe": {"results": [], "network_attempts": []}}
        folders.append(tmp_path / f"shard{index}")
        shards.write_shard(document, folders[-1])
    seen = []

    def build_audit(suite, *_, **__):
        seen.append(suite)
        raise Stop

    monkeypatch.setattr(shards.ReferenceBook, "fill", lambda *_: None)
    monkeypatch.setattr(shards, "build_audit", build_audit)
    monkeypatch.setattr(shards, "check_complete", lambda *_: None)  # these shards hold no rows: packing only
    with pytest.raises(Stop):
        shards.merge_shards(folders, case_files=[])
    (merged,) = seen
    assert merged.cases == suite.cases
    assert _all_packed(merged)


def test_the_pytest_plugin_audits_a_packed_suite(monkeypatch, tmp_path: Path):
    """Both the fixture's ``check``/``audit`` and the collected items (``RagasCompatFile.collect``) read
    the suite with ``RagasCompat._loaded`` and score it with ``_audited``."""
    seen = []

    def run_audit(suite, *_, **__):
        seen.append(suite)
        raise Stop

    monkeypatch.setattr("ragas_compat.pin.resolve_ragas_source", lambda **_: None)
    monkeypatch.setattr(pipeline, "run_audit", run_audit)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(package_json("cases/suites/default.json")), encoding="utf-8")
    with pytest.raises(Stop):
        RagasCompat("unused", tmp_path).audit("cases.json")
    (suite,) = seen
    assert suite.cases == load_default_suite().cases
    assert _all_packed(suite)


def test_audit_run_replays_a_packed_suite(monkeypatch, tmp_path: Path):
    seen = []

    def run_audit(suite, *_, **__):
        seen.append(suite)
        raise typer.Exit(0)

    monkeypatch.setattr(cli_audit_run, "StartedProbe", NoProbe)
    monkeypatch.setattr(cli_audit_run, "resolve_ragas_source", lambda **_: None)
    monkeypatch.setattr(cli_audit_run, "run_audit", run_audit)
    result = CliRunner().invoke(app, ["audit-run", str(SMALL_RUN / "traces.json"), "--scores",
                                      str(SMALL_RUN / "scores.csv"), "--cases-out", str(tmp_path / "cases.json"),
                                      "--out", str(tmp_path / "report"), "--quiet"])
    assert result.exit_code == 0, result.output
    (suite,) = seen
    assert [case.id for case in suite.cases] == ["row-0", "row-1"]
    assert _all_packed(suite)
