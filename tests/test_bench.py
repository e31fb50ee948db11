"""``ragas-compat bench``: pure helpers, and one end-to-end run of ``bench --quick`` (in process, once
per module) whose rows several tests read: it prints every row and writes them to --json. No timing
is asserted anywhere."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragas_compat.tools.bench import (
    ONE_METRIC,
    QUICK_SKIPS_ONE_METRIC,
    ROW_IDS,
    RUN_TARGET,
    BenchPlan,
    BenchRow,
    fit_growth_exponent,
    random_labels,
    summarize,
    time_scaling,
)


@pytest.mark.parametrize("exponent", [0.5, 1.0, 2.0, 3.0])
def test_fit_recovers_the_exponent_of_a_power_law(exponent):
    ks = [10, 100, 1_000, 10_000]
    assert fit_growth_exponent(ks, [3e-7 * k ** exponent for k in ks]) == pytest.approx(exponent, abs=1e-9)


def test_fit_is_least_squares_on_log_log():
    # log-log points (0, 0), (1, 1), (2, 3) in base e: slope of the least-squares line is 1.5
    ks = [1.0, math.e, math.e ** 2]
    assert fit_growth_exponent(ks, [1.0, math.e, math.e ** 3]) == pytest.approx(1.5)


def test_fit_ignores_a_constant_factor_and_tolerates_noise():
    ks = [10, 100, 1_000, 10_000]
    noisy = [k ** 2 * f for k, f in zip(ks, (1.1, 0.9, 1.05, 0.97), strict=True)]
    assert fit_growth_exponent(ks, noisy) == pytest.approx(2.0, abs=0.05)
    assert fit_growth_exponent(ks, [5 * s for s in noisy]) == pytest.approx(fit_growth_exponent(ks, noisy))


@pytest.mark.parametrize("ks, seconds", [([10], [1.0]), ([10, 10], [1.0, 2.0]), ([10, 100], [0.0, 1.0]),
                                         ([10, 100], [1.0])])
def test_fit_refuses_what_has_no_slope(ks, seconds):
    with pytest.raises(ValueError):
        fit_growth_exponent(ks, seconds)


def test_summary_is_median_and_range():
    summary = summarize([3.0, 1.0, 2.0, 10.0])
    assert (summary.n, summary.median, summary.minimum, summary.maximum) == (4, 2.5, 1.0, 10.0)
    assert summarize([4.0]).to_json() == {"n": 1, "median": 4.0, "min": 4.0, "max": 4.0}
    with pytest.raises(ValueError):
        summarize([])


def test_random_labels_are_binary_reproducible_and_mixed():
    labels = random_labels(1_000)
    assert labels == random_labels(1_000) and len(labels) == 1_000
    assert set(labels) == {0, 1}
    assert random_labels(1_000, seed=1) != labels


def test_time_scaling_times_every_k_every_repetition():
    calls: list[int] = []
    seconds = time_scaling({k: (lambda k=k: calls.append(k)) for k in (1, 2, 3)}, repetitions=4, min_seconds=0.0)
    assert {k: len(v) for k, v in seconds.items()} == {1: 4, 2: 4, 3: 4}
    assert all(s >= 0 for v in seconds.values() for s in v)
    assert set(calls) == {1, 2, 3}


def test_row_ratio_target_and_not_measured_json():
    row = BenchRow("x", "x", samples=[2.0, 3.0], baseline=[1.0, 2.0], ratios=[2.0, 1.5], target=1.3)
    assert row.met is False and row.to_json()["ratio_summary"]["median"] == 1.75
    skipped = BenchRow("y", "y", reason="no environments").to_json()
    assert skipped["status"] == "not measured" and skipped["reason"] == "no environments"


def test_a_ratio_row_without_target_is_neither_met_nor_missed():
    from ragas_compat.cli.bench import _cells, bench_markdown

    row = BenchRow("floor", "run vs imports", samples=[3.0, 4.0], baseline=[2.0, 2.0], ratios=[1.5, 2.0])
    assert row.met is None and row.to_json()["met"] is None
    assert _cells(row)[-2:] == ["ratio 1.750 (1.500–2.000)", "no target"]
    missed = BenchRow("run", "run vs floor", samples=[3.0], baseline=[2.0], ratios=[1.5], target=1.3)
    assert "missed" in _cells(missed)[-1] and "missed" not in "".join(bench_markdown([row], quick=True))


def test_a_copied_suite_from_the_first_cases_copies_only_those():
    from ragas_compat.tools.scale_bench import copied_suite

    whole, first = copied_suite(0)["cases"], copied_suite(50, base_cases=20)["cases"]
    assert len(first) == 50 and len({case["id"] for case in first}) == 50
    assert {case["id"].partition("~")[0] for case in first} == {case["id"] for case in whole[:20]}
    assert len(copied_suite(0, base_cases=20)["cases"]) == 20 and len(whole) > 20


def test_quick_plan_is_smaller_than_the_full_plan():
    quick, full = BenchPlan.for_mode(True), BenchPlan.for_mode(False)
    assert quick.run_pairs < full.run_pairs and max(quick.ragas_ks) < max(full.ragas_ks)
    assert max(full.ragas_ks) == 10_000 and max(full.reference_large_ks) == 1_000_000
    assert quick.scale_base_cases < quick.scale_cases < full.scale_cases == 2_000 and full.scale_base_cases is None
    assert quick.record_samples < full.record_samples == 96
    assert full.one_metric_run and not full.share_run and quick.share_run and not quick.one_metric_run


@pytest.fixture(scope="module")
def quick_bench(tmp_path_factory) -> tuple[str, dict]:
    """``ragas-compat bench --quick --json`` run once, in this process (typer's CliRunner: the real command;
    Ragas only in its subprocesses, as always): what it printed on stdout and the JSON it wrote, read by
    every test that needs a measured row."""
    import traceback

    from typer.testing import CliRunner

    from ragas_compat.cli.app import app

    out = tmp_path_factory.mktemp("bench") / "bench.json"
    result = CliRunner().invoke(app, ["bench", "--quick", "--json", str(out)],
                                env={"COLUMNS": "400"})  # wide enough that no measurement wraps
    assert result.exit_code == 0, result.output + "".join(traceback.format_exception(*result.exc_info))
    return result.stdout, json.loads(out.read_text(encoding="utf-8"))


def _row(data: dict, row_id: str) -> dict:
    return next(row for row in data["rows"] if row["id"] == row_id)


def _fake_python(folder: Path, *, failing_floor: str | None = None) -> tuple[Path, Path]:
    """An executable standing in for ``python`` in the run-vs-floor commands: it appends what it was asked
    to do (run, run:METRIC for ``run --metric METRIC``, import or audit_imports) to a log and exits 0, or 3
    for ``failing_floor``."""
    log, fake = folder / "calls.log", folder / "python"
    fake.write_text(f"#!{sys.executable}\nimport sys\n"
                    "kind = 'run' if sys.argv[1:3] == ['-m', 'ragas_compat'] else "
                    "'audit_imports' if 'rapidfuzz' in sys.argv[-1] else 'import'\n"
                    "if kind == 'run' and '--metric' in sys.argv:\n"
                    "    kind += ':' + sys.argv[sys.argv.index('--metric') + 1]\n"
                    f"open({str(log)!r}, 'a').write(kind + '\\n')\n"
                    f"sys.exit(3 if kind == {failing_floor!r} else 0)\n", encoding="utf-8")
    fake.chmod(0o755)
    return fake, log


def test_rows_sharing_a_run_time_it_once_per_repetition_against_each_floor(tmp_path):
    from ragas_compat.tools.bench import measure_run_vs_floors

    fake, log = _fake_python(tmp_path)
    rows = measure_run_vs_floors(2, ("import", "audit_imports"), python=str(fake), warm_up=False)
    assert log.read_text().split() == ["run", "import", "audit_imports", "audit_imports", "import", "run"]
    assert [row.id for row in rows] == ["run_vs_floor", "run_vs_import_floor"]
    assert rows[0].samples == rows[1].samples and len(rows[0].samples) == 2
    assert all(len(row.baseline) == len(row.ratios) == 2 and row.measured for row in rows)
    assert "shared with the rows run_vs_import_floor" in rows[0].notes[-1]

    (tmp_path / "failing").mkdir()
    failing, failing_log = _fake_python(tmp_path / "failing", failing_floor="audit_imports")
    import_row, audit_row = measure_run_vs_floors(2, ("import", "audit_imports"), python=str(failing), warm_up=False)
    assert import_row.measured and len(import_row.samples) == 2
    assert not audit_row.measured and "the floor (import ragas.metrics) failed" in audit_row.reason
    assert failing_log.read_text().split() == ["run", "import", "audit_imports", "import", "run"]  # not retried
    (tmp_path / "alone").mkdir()
    alone, alone_log = _fake_python(tmp_path / "alone", failing_floor="import")
    [row] = measure_run_vs_floors(3, ("import",), python=str(alone), warm_up=True)
    assert not row.measured and alone_log.read_text().split() == ["import"]  # no run timed against nothing


def test_a_quick_bench_row_of_a_shared_run_measures_only_the_floors_asked_for(monkeypatch):
    from ragas_compat.tools import bench

    asked: list[tuple] = []
    monkeypatch.setattr(bench, "measure_run_vs_floors",
                        lambda repetitions, floors, **_: asked.append(tuple(floors)) or [])
    assert bench.run_bench(True, only=["run_vs_ragas_floor", "run_vs_floor"]) == []
    assert asked == [("import", "ragas_work")]


def test_the_one_metric_row_times_a_run_of_that_metric_against_the_bare_import(tmp_path, monkeypatch):
    """``run_one_metric_vs_floor`` (which ``bench --quick`` leaves unmeasured unless named by --row): ``run
    --metric faithfulness`` against ``import ragas.metrics``, alternated; measured by the full bench and by
    ``bench --quick --row run_one_metric_vs_floor``."""
    from ragas_compat.tools import bench

    fake, log = _fake_python(tmp_path)
    row = bench.measure_run_vs_floor(2, python=str(fake), warm_up=False, metric=ONE_METRIC)
    assert log.read_text().split() == [f"run:{ONE_METRIC}", "import", "import", f"run:{ONE_METRIC}"]
    assert (row.id, row.target, row.measured, len(row.ratios)) == ("run_one_metric_vs_floor", RUN_TARGET, True, 2)
    assert f"run --metric {ONE_METRIC}" in row.measurement

    asked: list[tuple] = []
    monkeypatch.setattr(bench, "measure_run_vs_floor",
                        lambda repetitions, **options: asked.append((repetitions, options["metric"])) or row)
    for quick in (False, True):
        assert bench.run_bench(quick, only=["run_one_metric_vs_floor"]) == [row]
    assert asked == [(5, ONE_METRIC), (1, ONE_METRIC)]


@pytest.mark.slow
def test_bench_quick_prints_every_row_and_writes_json(quick_bench):
    """Checks rows, not times."""
    stdout, data = quick_bench
    assert data["quick"] is True
    assert [row["id"] for row in data["rows"]] == list(ROW_IDS)
    assert data["plan"]["share_run"] is True  # the three rows of run vs a floor time one run together
    shared = [_row(data, row_id)["samples"] for row_id in ("run_vs_floor", "run_vs_import_floor", "run_vs_ragas_floor")]
    assert shared[0] == shared[1] == shared[2] and len(shared[0]) == 1
    scale = _row(data, "scale_marginal_time")
    assert (scale["cases_small"], scale["cases_big"]) == (data["plan"]["scale_base_cases"], data["plan"]["scale_cases"])
    assert data["plan"]["one_metric_run"] is False and _row(data, "run_one_metric_vs_floor")["reason"] == QUICK_SKIPS_ONE_METRIC
    for row in data["rows"]:
        assert row["measurement"] in stdout, row["measurement"]
        if row["status"] == "not measured":
            # the matrix row depends on what the machine has (cached Ragas environments); --quick skips the
            # second audit of run_one_metric_vs_floor (test_the_one_metric_row_times_a_run_... measures it)
            assert row["id"] in ("matrix_warm_vs_cold", "run_one_metric_vs_floor"), row
            assert f"{row['measurement']}: not measured: {row['reason']}" in stdout
        else:
            assert row["summary"]["n"] >= 1
            assert ("ratio_summary" in row) or ("exponent" in row)


def test_a_floor_target_is_met_from_above():
    row = BenchRow("x", "x", samples=[1.0, 1.0], baseline=[1.0, 1.0], ratios=[0.8, 1.0], target=0.9, at_least=True)
    assert row.met is True and row.to_json()["target_is_floor"] is True
    assert BenchRow("y", "y", samples=[1.0], baseline=[1.0], ratios=[0.85], target=0.9, at_least=True).met is False
    assert "target_is_floor" not in BenchRow("z", "z", samples=[1.0], ratios=[0.5], target=1.0).to_json()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="Ragas is not installed in this interpreter")
def test_fuzz_throughput_rows_have_their_shape(quick_bench):
    """The two fuzz rows before the record row in ROW_IDS, as ``bench --quick`` measured them
    (``measure_fuzz_throughput``, one repetition on FUZZ_QUICK_CASES cases): shape only, no timing."""
    from ragas_compat.tools.bench import FUZZ_QUICK_CASES
    from ragas_compat.tools.fuzz.throughput import PER_PROCESS_TARGET, TWO_WORKERS_TARGET

    _, data = quick_bench
    rows = [_row(data, row_id) for row_id in ("fuzz_per_process", "fuzz_two_workers")]
    assert [row["id"] for row in rows] == list(ROW_IDS[-4:-2])
    for row, target in zip(rows, (PER_PROCESS_TARGET, TWO_WORKERS_TARGET), strict=True):
        assert row["status"] == "measured", row["reason"]
        assert row["target_is_floor"] is True and row["target"] == target
        assert len(row["samples"]) == len(row["baseline_samples"]) == len(row["ratios"]) == 1
        assert row["samples"][0] > 0 and row["baseline_samples"][0] > 0 and row["ratios"][0] > 0
        assert row["contexts"] > 0 and row["cases"] == FUZZ_QUICK_CASES
        assert row["ratio_summary"]["n"] == 1
    assert rows[0]["baseline_samples"] == rows[1]["baseline_samples"]  # one stub loop per repetition, shared
    # two stub loops at once (the machine's scaling): the same one-loop baseline, no target, both loops' contexts
    together = _row(data, "stub_loop_two_processes")
    assert together["status"] == "measured", together["reason"]
    assert together["id"] == ROW_IDS[-2] and together.get("target") is None
    assert together["baseline_samples"] == rows[0]["baseline_samples"] and together["contexts"] == rows[0]["contexts"]
    assert len(together["samples"]) == 1 and together["ratios"][0] > 0


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="Ragas is not installed in this interpreter")
def test_record_and_evaluate_ask_the_judge_the_same_calls(quick_bench):
    """The record_vs_evaluate row as ``bench --quick`` measured it (``measure_record_vs_evaluate``: ``record``
    and Ragas's ``evaluate()`` in subprocesses, on the plan's few samples, against the loopback judge):
    shape only, no timing. tests/test_bench_record.py tests the judge and the row's selection."""
    from ragas_compat.tools.bench_record import METRICS, RECORD_TARGET

    _, data = quick_bench
    row = _row(data, "record_vs_evaluate")
    assert row["status"] == "measured", row["reason"]
    assert row["target_is_floor"] is True and row["target"] == RECORD_TARGET == 0.9
    assert len(row["samples"]) == len(row["baseline_samples"]) == len(row["ratios"]) == 1 and row["ratios"][0] > 0
    assert row["sample_count"] == data["plan"]["record_samples"] == BenchPlan.for_mode(True).record_samples
    assert row["record_judge_calls"] == row["evaluate_judge_calls"] == row["sample_count"] * 6  # 3 + 2 + 1 per sample
    assert row["unanswered_prompts"] == 0 and row["metrics"] == list(METRICS)
    assert row["samples"] == [row["summary"]["median"]]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="Ragas is not installed in this interpreter")
def test_the_minimal_stub_loop_scores_every_case_by_every_class(tmp_path):
    """harness/probe/bench/stub_loop.py, run as the fuzz bench runs it (``probe_command``): no errors, and the
    contexts of every (case, class) counted once."""
    import json
    import subprocess
    import sys

    from ragas_compat.probe.protocol import ENTRY_STUB_LOOP, probe_command

    cases = [{"user_input": f"q{i}", "reference": f"r{i}", "retrieved_contexts": [f"c{i}.{k}" for k in range(i + 1)],
              "verdicts": {"context_precision_with_reference": [k % 2 for k in range(i + 1)]}} for i in range(3)]
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"module": "ragas.metrics._context_precision", "cases": cases,
                                   "classes": ["LLMContextPrecisionWithReference", "ContextPrecision"],
                                   "verdicts": "context_precision_with_reference", "reason": "r"}), encoding="utf-8")
    proc = subprocess.run(probe_command(sys.executable, ENTRY_STUB_LOOP, str(request)), capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["errors"] == 0 and report["contexts"] == 2 * (1 + 2 + 3) and report["loop_seconds"] > 0


@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="Ragas is not installed in this interpreter")
def test_the_stub_loop_gives_ragas_the_replies_the_probe_s_scripted_judge_gives(tmp_path):
    """The fuzz rows' floor: the stub loop's judge replies what the probe's scripted judge replies to the same
    case (the request's reason is the scripted judge's), so Ragas parses the same replies on both sides."""
    import asyncio

    from ragas_compat.probe.bench import stub_loop
    from ragas_compat.probe.scoring import run_legacy_target
    from ragas_compat.probe.stubs import legacy_llm
    from ragas_compat.probe.targets import targets_from_request
    from ragas_compat.runner import request_targets
    from ragas_compat.tools.fuzz.throughput import _stub_request

    request = _stub_request(6, 0)
    case = max(request["cases"], key=lambda c: len(c["retrieved_contexts"]))
    assert len(case["retrieved_contexts"]) >= 2
    probe_replies: list[str] = []
    inner = legacy_llm.FrozenJudgeLLM._reply

    def recording(self, prompt, n):
        result = inner(self, prompt, n)
        probe_replies.extend(g.text for g in result.generations[0])
        return result

    legacy_llm.FrozenJudgeLLM._reply = recording
    try:
        [target] = targets_from_request(request_targets(["legacy:LLMContextPrecisionWithReference"], [case]))
        result = asyncio.run(run_legacy_target(target, case))
    finally:
        legacy_llm.FrozenJudgeLLM._reply = inner
    assert isinstance(result["value"], float), result["value"]
    stub_replies: list[str] = []
    list_llm = stub_loop.list_llm_class()

    class Recording(list_llm):  # type: ignore[misc, valid-type]
        def __init__(self, replies: list[str]) -> None:
            stub_replies.extend(replies)
            super().__init__(replies)

    original = stub_loop.list_llm_class
    stub_loop.list_llm_class = lambda: Recording
    try:
        from ragas.metrics._context_precision import LLMContextPrecisionWithReference

        score = stub_loop.context_precision_scorer(LLMContextPrecisionWithReference, request["verdicts"],
                                                   request["reason"])
        assert asyncio.run(score(case)) == result["value"]
    finally:
        stub_loop.list_llm_class = original
    assert stub_replies == probe_replies


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="Ragas is not installed in this interpreter")
def test_the_ragas_work_floor_scores_every_pair_the_probe_scores(quick_bench, default_audit_run):
    """harness/probe/bench/floor.py on the bundled suite (its report as ``bench --quick``'s
    run_vs_ragas_floor row keeps it): the pairs of the default run's probe, no more, no fewer, and the
    pairs where Ragas raised are the probe's error values (the same work, minus the harness)."""
    _, data = quick_bench
    report = _row(data, "run_vs_ragas_floor")["floor"]
    results = [r for r in default_audit_run.probe.output["results"] if not r["target"].startswith("selftest:")]
    assert report["pairs"] == len(results) > 0
    # an error value is an object with "error" (labels and rankings are objects too: {"label": ...})
    assert report["errors"] == sum(1 for r in results if isinstance(r["value"], dict) and "error" in r["value"])
    assert report["evaluate_runs"] == 0 and report["seconds"] > 0


def test_import_command_is_the_bare_import_for_one_module_and_skips_later_absent_ones():
    from ragas_compat.tools.bench import import_command

    assert import_command("py", ("ragas.metrics",)) == ["py", "-c", "import ragas.metrics"]
    skipping = import_command(sys.executable, ("json", "no_such_module_here", "csv"))
    proc = subprocess.run([*skipping[:2], skipping[2] + "\nimport sys\nprint('csv' in sys.modules)"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr
    failing = import_command(sys.executable, ("no_such_module_here", "json"))
    assert subprocess.run(failing, capture_output=True, timeout=60, check=False).returncode != 0


def _top_level_imports(importtime: str, after: str) -> dict[str, int]:
    """``-X importtime`` output -> {module: cumulative microseconds} of the top-level imports that
    follow the top-level import of ``after``."""
    found: dict[str, int] = {}
    seen = False
    for line in importtime.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        if name.startswith("  "):  # nested: part of an earlier top-level import
            continue
        if seen:
            found[name.strip()] = int(cumulative)
        seen = seen or name.strip() == after
    return found


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="Ragas is not installed in this interpreter")
def test_audit_imports_are_what_the_probe_imports_after_ragas(tmp_path):
    """The floor of ``run_vs_import_floor`` is what the default audit's probe really imports: each of
    AUDIT_IMPORTS beyond Ragas's own modules is a top-level import the probe makes after ``import ragas``
    (``-X importtime`` on the probe scoring the bundled suite's cases that run the string metrics, whose
    first use makes those imports: a probe scoring the whole suite scores these cases too, so it makes
    every import this one makes), RougeScore's rouge_score among them. Which imports are slow is a
    measurement, not a pass/fail condition: ``ragas-compat bench`` reports it."""
    import ragas_compat
    from ragas_compat.cases.loader import DEFAULT_SUITE
    from ragas_compat.probe.protocol import ENTRY_PROBE, PACKAGE, probe_command
    from ragas_compat.runner import request_targets
    from ragas_compat.tools.bench import AUDIT_IMPORTS

    cases = json.loads((Path(ragas_compat.__file__).parent / DEFAULT_SUITE).read_text(encoding="utf-8"))["cases"]
    cases = [case for case in cases if case.get("string_metrics") is True]  # 11 of 165: the imports, less scoring
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"cases": cases, "targets": request_targets(None, cases),
                                   "output": str(tmp_path / "out.json")}), encoding="utf-8")
    proc = subprocess.run(probe_command(sys.executable, ENTRY_PROBE, str(request), python_flags=("-X", "importtime")),
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    later = _top_level_imports(proc.stderr, after="ragas")
    assert "rouge_score.rouge_scorer" in later  # RougeScore's first use (about a second)
    assert not any(name.startswith(PACKAGE) for name in AUDIT_IMPORTS)
    assert {name for name in AUDIT_IMPORTS if not name.startswith("ragas.")} <= set(later), sorted(later)
