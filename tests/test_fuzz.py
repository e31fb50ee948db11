"""Fuzz: seeded generator, batching, selection of the smallest example, reports and exit codes."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
from collections import Counter

import pytest
import typer
from typer.testing import CliRunner

from ragas_compat.cases import parse_suite
from ragas_compat.cli.fuzz import register
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import all_metrics, in_release, metric
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.fuzz import runner as fuzz_runner
from ragas_compat.tools.fuzz.generator import (
    CLAIM_SHAPES,
    ID_SHAPES,
    LABEL_SHAPES,
    STRING_SHAPES,
    fuzz_metrics,
    fuzz_suite_document,
    generate_case,
    generate_cases,
    targets_for,
)
from ragas_compat.tools.fuzz.runner import plan_batches, run_fuzz
from ragas_compat.tools.fuzz.shrink import example_case, example_size, smallest_per_classification
from ragas_compat.vocabulary import Api

HAS_RAGAS = importlib.util.find_spec("ragas") is not None


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("noop")(lambda: None)  # a second command keeps "fuzz" a subcommand
    register(app)
    return app


# --------------------------------------------------------------------------- generator

@pytest.mark.slow
def test_same_seed_same_cases_and_other_seed_other_cases():
    assert generate_cases(150, 7) == generate_cases(150, 7)
    assert generate_cases(150, 7) != generate_cases(150, 8)


def test_a_case_does_not_depend_on_n_or_on_the_metrics():
    assert generate_cases(40, 3)[:10] == generate_cases(10, 3)
    only_ids = generate_case(3, 5, ("id_context_precision",))
    full = generate_case(3, 5)
    assert only_ids["retrieved_context_ids"] == full["retrieved_context_ids"]
    assert "verdicts" not in only_ids and "reference_contexts" not in only_ids


@pytest.mark.slow
def test_every_generated_case_passes_the_loader():
    for seed in (0, 1, 2):
        suite = parse_suite(fuzz_suite_document(generate_cases(120, seed), seed), source="fuzz")
        assert len(suite.cases) == 120
        assert {case.category for case in suite.cases} == {"edge"}


def test_metric_selection_passes_the_loader_and_limits_targets():
    cases = generate_cases(30, 4, ["faithfulness", "id_context_recall"])
    parse_suite(fuzz_suite_document(cases, 4))
    assert all(set(case.get("verdicts", {})) <= {"faithfulness"} for case in cases)
    assert targets_for(["faithfulness", "id_context_recall"]) == ["legacy:IDBasedContextRecall", "legacy:Faithfulness"]
    with pytest.raises(HarnessInputError, match="judge_audit"):
        generate_cases(3, 0, ["judge_audit"])


def _label_lists(case):
    verdicts = case.get("verdicts", {})
    return [verdicts[k] for k in ("context_precision_with_reference", "context_precision_without_reference")
            if k in verdicts]


def _claim_labels(case):
    verdicts = case.get("verdicts", {})
    return ([c["attributed"] for c in verdicts.get("context_recall", [])],
            [c["verdict"] for c in verdicts.get("faithfulness", [])])


def test_generated_cases_cover_the_listed_shapes():
    cases = generate_cases(90, 11)
    labels = [lst for case in cases for lst in _label_lists(case)]
    claims = [lst for case in cases for lst in _claim_labels(case)]
    lists = labels + claims
    assert any(len(case["retrieved_contexts"]) >= 20 for case in cases), "long label list"
    assert any(len(lst) >= 20 for lst in claims), "long claim set"
    assert any(len(case["retrieved_context_ids"]) >= 30 for case in cases), "long ID list"
    assert any(case["retrieved_contexts"] == [] for case in cases), "empty retrieval"
    assert any(case["verdicts"]["context_recall"] == [] for case in cases), "zero reference claims"
    assert any(case["verdicts"]["faithfulness"] == [] for case in cases), "zero response claims"
    assert any(lst and all(v == 0 for v in lst) for lst in lists), "all zero"
    assert any(lst and all(v == 1 and v is not True for v in lst) for lst in lists), "all one"
    assert any(any(isinstance(v, bool) for v in lst) for lst in labels), "boolean labels"
    assert any(any(isinstance(v, bool) for v in lst) for lst in claims), "boolean claim labels"
    assert any(2 in lst for lst in labels) and any(2 in lst for lst in claims), "non-binary 2"
    assert any(case["reference_contexts"] == [] for case in cases), "empty reference contexts"
    assert any(case["retrieved_context_ids"] == [] for case in cases)
    assert any(case["reference_context_ids"] == [] for case in cases)
    duplicates = [case for case in cases
                  if len(case["retrieved_context_ids"]) > len(set(map(json.dumps, case["retrieved_context_ids"])))]
    assert duplicates, "duplicate IDs"

    def mixed(case):
        ids = case["retrieved_context_ids"] + case["reference_context_ids"]
        return any(type(x) is int and str(x) in ids and float(x) in [y for y in ids if type(y) is float]
                   for x in ids)

    assert any(mixed(case) for case in cases), "one ID as 1, '1' and 1.0"
    assert any(case.get("corpus_relevant_count") is not None for case in cases)
    descriptions = " ".join(case["description"] for case in cases)
    for shape in {*LABEL_SHAPES, *CLAIM_SHAPES, *ID_SHAPES, *STRING_SHAPES}:
        assert shape in descriptions


def test_contexts_distinct_and_questions_unique():
    cases = generate_cases(200, 5)
    assert len({case["user_input"] for case in cases}) == len(cases)
    for case in cases:
        texts = case["retrieved_contexts"] + case["reference_contexts"]
        assert len(set(texts)) == len(set(case["retrieved_contexts"])) + len(
            set(case["reference_contexts"]) - set(case["retrieved_contexts"]))
        assert len(set(case["retrieved_contexts"])) == len(case["retrieved_contexts"])
        assert len({t[0] for t in set(texts)}) == len(set(texts)), "one letter per context"
        assert all(t == t[0] * len(t) for t in texts)


def test_fuzzy_string_match_equals_exact_match_on_generated_contexts():
    distance = pytest.importorskip("rapidfuzz.distance")
    for case in generate_cases(60, 9):
        for a in case["retrieved_contexts"]:
            for b in case["reference_contexts"]:
                similarity = 1 - distance.Levenshtein.normalized_distance(a, b)
                assert similarity == (1.0 if a == b else 0.0)


# --------------------------------------------------------------------------- batching, selection

def test_plan_batches_covers_every_case_once_in_equal_batches():
    for n, size in [(0, None), (1, None), (10_000, None), (4001, None), (2000, None), (61, 60), (100, 7)]:
        batches = plan_batches(n, size)
        covered = [i for start, stop in batches for i in range(start, stop)]
        assert covered == list(range(n))
        if size is None and n:
            sizes = [b - a for a, b in batches]
            assert max(sizes) <= fuzz_runner.MAX_BATCH and max(sizes) - min(sizes) <= 1
            assert len(batches) == -(-n // fuzz_runner.MAX_BATCH)  # the fewest batches
    assert [b - a for a, b in plan_batches(10_000)] == [2000] * 5
    assert plan_batches(400) == [(0, 400)]  # one probe: Ragas is imported once
    assert plan_batches(61, 60) == [(0, 60), (60, 61)]


# --------------------------------------------------------------------------- fake probe

def _fake_probe(value_for):
    """A probe that answers every (case, target) with ``value_for(case, target)``."""
    by_target = {target: spec for spec in all_metrics() for target in spec.ragas_targets}

    def probe(cases, *, python, sys_path_prefix, targets, timeout):
        results = []
        for case in cases:
            for target in targets:
                spec = by_target[target]
                if spec.applies_to(parse_suite(fuzz_suite_document([case], 0)).cases[0]):
                    results.append({"case_id": case["id"], "target": target, "metric": spec.name,
                                    "ragas_class": target, "fields_read": list(spec.fields_read),
                                    "received": None, "value": value_for(case, target), "warnings": []})
        output = {"probe_format": 1, "python": {"version": "3.11"}, "ragas": {"version": "0.4.3"},
                  "network_attempts": [], "results": results}
        return ProbeRun(True, None, output, "", 0.01)

    return probe


def test_exit_1_and_smallest_example_when_a_divergence_is_injected(tmp_path, monkeypatch):
    # Ragas "returns" 0.123 for every ID recall: never an explained value (the reference is a
    # fraction with denominator <= 100 or undefined), so each pair is a divergence.
    monkeypatch.setattr(fuzz_runner, "run_probe", _fake_probe(lambda case, target: 0.123))
    result = CliRunner().invoke(_app(), ["fuzz", "--n", "20", "--seed", "3", "--metric", "id_context_recall",
                                         "--out", str(tmp_path), "--workers", "2"])
    assert result.exit_code == 1, result.output
    data = json.loads((tmp_path / "fuzz.json").read_text(encoding="utf-8"))
    assert data["divergence"] is True
    assert data["by_classification"]["divergence"] == 20 == data["pairs"]
    example = data["smallest_examples"]["divergence"]
    sizes = []
    for case in generate_cases(20, 3, ["id_context_recall"]):
        sizes.append(len(case["retrieved_context_ids"]) + len(case["reference_context_ids"]))
    assert example["size"] == min(sizes)
    assert example["case"]["retrieved_contexts"] == []  # the ID metric does not read contexts
    parse_suite(fuzz_suite_document([example["case"]], 3))
    assert "divergence" in (tmp_path / "fuzz.md").read_text(encoding="utf-8")


def test_exit_0_when_the_fake_ragas_matches_the_raw_list_reference(tmp_path, monkeypatch):
    from ragas_compat.cases.loader import _build_case
    from ragas_compat.metrics.registry import metric

    def reference_value(case, target):
        outcome = metric("id_context_precision").outcome(_build_case(case))
        return "NaN" if outcome.value is None else float(outcome.value)

    monkeypatch.setattr(fuzz_runner, "run_probe", _fake_probe(reference_value))
    result = CliRunner().invoke(_app(), ["fuzz", "--n", "18", "--seed", "1", "--metric", "id_context_precision",
                                         "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "fuzz.json").read_text(encoding="utf-8"))
    assert set(data["by_classification"]) == set(CLASSIFICATIONS)
    assert data["by_classification"]["identical"] + data["by_classification"]["undefined_nan"] == 18
    assert data["smallest_examples"] == {}


def test_probe_failure_is_exit_3(tmp_path, monkeypatch):
    monkeypatch.setattr(fuzz_runner, "run_probe",
                        lambda cases, **kw: ProbeRun(False, "Ragas could not be imported: boom", {}, "", 0.0))
    result = CliRunner().invoke(_app(), ["fuzz", "--n", "4", "--out", str(tmp_path)])
    assert result.exit_code == 3
    assert not (tmp_path / "fuzz.json").exists()


def test_unknown_metric_is_exit_2(tmp_path):
    result = CliRunner().invoke(_app(), ["fuzz", "--n", "4", "--metric", "nope", "--out", str(tmp_path)])
    assert result.exit_code == 2


def test_selection_prefers_fewer_list_items():
    progress = []
    monkey_rows = run_fuzz(12, 2, ["id_context_recall"], workers=2, batch_size=5,
                           probe=_fake_probe(lambda case, target: 0.5),
                           on_batch=lambda done, total, run: progress.append((done, total)))
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert [row.case.id for row in monkey_rows.rows] == [f"fuzz-2-{i}" for i in range(12)]
    chosen = smallest_per_classification(monkey_rows.rows, ["divergence", "identical", "dedup"])
    for name, row in chosen.items():
        same = [r for r in monkey_rows.rows if r.classification.name == name]
        assert example_size(example_case(row)) == min(example_size(example_case(r)) for r in same)


def test_zero_cases_start_no_probe_and_close_a_started_one(monkeypatch):
    """``--n 0`` has nothing to score: no probe process is started, and one started ahead is closed."""
    def no_probe(**kwargs):
        raise AssertionError("a probe was started for zero cases")

    monkeypatch.setattr(fuzz_runner, "StartedProbe", no_probe)

    class Started:
        closed = False

        def close(self):
            self.closed = True

    started = Started()
    run = run_fuzz(0, 0, workers=1, started=started)
    assert run.rows == () and run.batches == () and started.closed
    assert run_fuzz(0, 0, workers=1).rows == ()


def test_every_text_a_case_ends_with_has_a_vector():
    """Metrics fuzzed together share the case's texts, and another family may own them (DataCompyScore's
    CSV tables replace the texts the embedding metrics drew vectors for): the embedding table still
    holds a vector for the final reference and response (before: Ragas asked the frozen model for a
    vector the case lacked, an error of the harness's own making in 180 of 3,480 pairs at --n 60)."""
    cases = generate_cases(120, 0)
    alone = generate_cases(120, 0, ["semantic_similarity"])
    replaced = 0
    for case, single in zip(cases, alone, strict=True):
        table = case.get("embeddings")
        assert table, case["id"]
        for field in ("reference", "response"):
            assert (case[field] or " ") in table, (case["id"], field)
            replaced += case[field] != single[field]
    assert replaced > 0  # the case exercises a replaced text


# --------------------------------------------------------------------------- the real Ragas path

@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAGAS, reason="Ragas is not installed in this interpreter")
def test_end_to_end_real_probe_classifies_every_pair(tmp_path):
    result = CliRunner().invoke(_app(), ["fuzz", "--n", "60", "--seed", "5", "--workers", "1", "--batch-size", "60",
                                         "--out", str(tmp_path), "--python", sys.executable, "--check-cases"])
    data = json.loads((tmp_path / "fuzz.json").read_text(encoding="utf-8"))
    assert result.exit_code == (1 if data["drift"] else 0), result.output
    assert data["drift"] == bool(data["findings"])  # what run would call drift, under the pin's rules
    assert (tmp_path / "fuzz.md").read_text(encoding="utf-8").startswith("# Fuzz: Ragas")
    cases = generate_cases(60, 5)
    suite = parse_suite(fuzz_suite_document(cases, 5))
    here = importlib.metadata.version("ragas")

    def in_this_ragas(target) -> bool:  # a class some releases only have makes no row elsewhere
        return in_release(str(target), here)

    expected_pairs = sum(len([t for t in spec.targets_of(Api.LEGACY) or spec.targets_of(Api.COLLECTIONS)  # collections-only
                              if in_this_ragas(t)])
                         for case in suite.cases for spec in all_metrics() if spec.ragas_targets and spec.applies_to(case))
    assert data["pairs"] == expected_pairs == sum(data["by_classification"].values())
    per_target = Counter()
    for target, counts in data["by_target"].items():
        per_target[target] = sum(counts.values())
    # a full run fuzzes the single-turn metrics; the multi-turn ones only on their own (--metric tool_call_f1 ...)
    assert set(per_target) == {t for t in targets_for([m for m in fuzz_metrics() if not metric(m).multi_turn])
                               if in_this_ragas(t)}
    # every error Ragas raised is listed with its count
    assert sum(e["count"] for e in data["errors"]) == data["by_classification"]["error"]
    unexplained_errors = [f for f in data["findings"] if f["kind"] in ("error", "harness_error")]
    assert bool(unexplained_errors) == ("error" in data["smallest_examples"])  # only unexplained ones are shown
    # the stub answered every prompt and the frozen model had every vector: no error is the harness's
    assert not [e for e in data["errors"] if e["raised_by"] != "Ragas"], data["errors"]


def _row_keys(run):
    """What a fuzz row says, NaN-safe (``repr`` of the values)."""
    return [(row.case.id, row.target, row.classification.name, row.classification.explanation,
             repr(row.ragas_value), row.warnings, row.prompts, json.dumps(row.received, sort_keys=True, default=repr))
            for row in run.rows]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAGAS, reason="Ragas is not installed in this interpreter")
def test_rows_do_not_depend_on_workers_or_batches():
    """One batch to a probe forking 1 worker (its tail a request of its own, ``plan_requests``), against
    batches of 14 through one probe forking 2."""
    metrics = ["context_precision_with_reference", "id_context_recall"]
    progress, batches = [], []
    one = run_fuzz(40, 11, metrics, workers=1, on_batch=lambda done, total, run: batches.append((done, total)))
    two = run_fuzz(40, 11, metrics, workers=2, batch_size=14, on_progress=lambda done, total: progress.append(done))
    assert one.batches == ((0, 40),) and two.batches == ((0, 14), (14, 28), (28, 40))
    assert fuzz_runner.plan_requests(one.batches, 1, cores=2) == [(0, 20), (20, 40)] and batches == [(1, 1)]
    assert _row_keys(two) == _row_keys(one) and len(one.rows) > 40
    assert progress and progress == sorted(progress) and progress[-1] == 40


def test_the_last_batchs_tail_is_a_request_of_its_own_only_when_a_core_is_free():
    plan = fuzz_runner.plan_requests
    assert plan([(0, 400)], 1, cores=2) == [(0, 360), (360, 400)]  # 1/8, in whole pairing chunks
    assert plan([(0, 400)], 2, cores=2) == [(0, 400)] == plan([(0, 400)], 4, cores=2)
    assert plan([(0, 150)], 1, cores=2) == [(0, 120), (120, 150)]  # the split on a pairing chunk's boundary
    assert plan([(0, 2000), (2000, 4000)], 3, cores=4) == [(0, 2000), (2000, 3760), (3760, 4000)]
    assert plan([(0, 39)], 1, cores=2) == [(0, 39)] and plan([], 1, cores=2) == []


def test_a_failed_probe_names_the_cases_of_its_batch(monkeypatch):
    def second_batch_fails(cases, **kw):
        if any(case["id"] == "fuzz-4-7" for case in cases):
            return ProbeRun(False, "probe crashed (exit -9): killed", {}, "", 0.0)
        return _fake_probe(lambda case, target: 0.5)(cases, **kw)

    with pytest.raises(fuzz_runner.FuzzProbeFailed, match=r"probe for cases 5\.\.9: probe crashed \(exit -9\)"):
        run_fuzz(12, 4, ["id_context_recall"], workers=2, batch_size=5, probe=second_batch_fails)
    # the real probe path: an interpreter that cannot start fails the first batch, named
    with pytest.raises(fuzz_runner.FuzzProbeFailed, match=r"probe for cases 0\.\.4: cannot start the probe"):
        run_fuzz(12, 4, ["id_context_recall"], workers=2, batch_size=5, python="/nonexistent/python3")


def test_a_probe_that_writes_its_output_then_fails_is_the_runs_failure_not_its_classification(tmp_path, monkeypatch):
    """The last batch is classified while the probe exits (``fuzz_runner.Early``); a broken Ragas makes the
    probe write its output and exit 3: what the run reports is the probe's failure."""
    broken = tmp_path / "ragas"
    broken.mkdir()
    (broken / "__init__.py").write_text('raise ImportError("this ragas is broken on purpose")\n')
    classified = []
    real_pair = fuzz_runner._pair
    monkeypatch.setattr(fuzz_runner, "_pair", lambda *a, **k: classified.append(a[3]) or real_pair(*a, **k))
    with pytest.raises(fuzz_runner.FuzzProbeFailed,
                       match=r"probe for cases 0\.\.3: Ragas could not be imported: ImportError: this ragas"):
        run_fuzz(4, 1, ["id_context_recall"], workers=1, sys_path_prefix=[str(tmp_path)])
    assert [output["ragas"]["import_error"] for output in classified] == \
        ["ImportError: this ragas is broken on purpose"]  # classified while the probe exited, then discarded


def test_classification_while_the_probe_exits_counts_only_when_the_run_is_ok():
    def failing(output):
        raise KeyError("case_id")

    ok, failed = ProbeRun(True, None, {"results": []}), ProbeRun(False, "probe crashed (exit -9): killed")
    early = fuzz_runner.Early(failing)
    early({"results": [{}]})
    assert early.paired(failed) is None
    with pytest.raises(KeyError, match="case_id"):
        early.paired(ok)
    done = fuzz_runner.Paired(problems=["p"])
    early = fuzz_runner.Early(lambda output: done)
    assert early.paired(ok) is None  # not called: the output was not there before the exit (or a chained answer)
    early({"results": []})
    assert early.paired(ok) is done and early.paired(failed) is None


def test_by_cost_balances_the_probes_round_robin_dealing_and_keeps_every_case():
    cases = generate_cases(400, 0, ["context_precision_with_reference"])
    ordered = fuzz_runner.by_cost(cases)
    assert sorted(c["id"] for c in ordered) == sorted(c["id"] for c in cases)
    costs = [fuzz_runner.case_cost(c) for c in ordered]
    assert costs == sorted(costs)

    def dealt(order):  # what each of two workers scores: the probe deals cases round robin
        return [sum(len(c["retrieved_contexts"]) for c in order[k::2]) for k in range(2)]

    assert max(dealt(ordered)) - min(dealt(ordered)) <= max(len(c["retrieved_contexts"]) for c in cases)
    assert max(dealt(cases)) > 2 * min(dealt(cases))  # in case order, the rotating shapes unbalance them
