"""References once per (case, metric), computed while the probe runs; ``run --metric`` scores only the
chosen metrics' targets in the probe (legacy, collections and evaluate()), with the same rows as a full run."""

from __future__ import annotations

import sys

import pytest

from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.expectations import Expectations
from ragas_compat.compare.reference_book import ReferenceBook
from ragas_compat.metrics.registry import all_metrics, configured_specs, metric
from ragas_compat.metrics.spec import MetricSpec
from ragas_compat.pin import resolve_ragas_source
from ragas_compat.pipeline import load_run_expectations, load_suite, run_audit, targets_of

CHOSEN = ("faithfulness", "context_precision_with_reference")


@pytest.fixture(scope="module")
def suite():
    return load_suite([])


@pytest.fixture(scope="module")
def runs(suite, default_audit_run):
    source = resolve_ragas_source(python=sys.executable)
    chosen = run_audit(suite, load_run_expectations(None), source, python=sys.executable, metrics=CHOSEN)
    return default_audit_run.result, chosen  # the full run: tests/conftest.py, once per session


def _counting(monkeypatch) -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []
    original = MetricSpec.outcome

    def outcome(self, case):
        calls.append((case.id, self.name))
        return original(self, case)

    monkeypatch.setattr(MetricSpec, "outcome", outcome)
    return calls


def _configured(case) -> list[MetricSpec]:
    """The metrics the case's configured targets (case key ``targets``) are compared with, configured."""
    return [spec for config in case.targets for spec in configured_specs(config)]


def test_fill_computes_every_applicable_reference_once(suite, monkeypatch):
    calls = _counting(monkeypatch)
    book = ReferenceBook().fill(suite)
    # every registered metric, then each configuration a case names (its own reference); a configuration
    # named on both APIs (legacy and collections) has one reference
    keys = dict.fromkeys((case.id, spec.reference_key, spec.name) for case in suite.cases
                         for spec in (*all_metrics(), *_configured(case)) if spec.applies_to(case))
    expected = [(case_id, name) for case_id, _, name in keys]
    assert any(_configured(case) for case in suite.cases)  # the bundled suite configures targets
    assert calls == expected and len(book) == len(expected)
    book.fill(suite)  # a second fill computes nothing
    assert len(calls) == len(expected)


def test_fill_takes_only_the_chosen_metrics(suite):
    book = ReferenceBook().fill(suite, {"faithfulness"})
    applicable = sum(metric("faithfulness").applies_to(case) for case in suite.cases)
    assert len(book) == applicable > 0


@pytest.mark.slow
def test_build_audit_with_a_filled_book_computes_nothing_more(runs, suite, monkeypatch):
    full, _ = runs
    book = ReferenceBook().fill(suite)
    calls = _counting(monkeypatch)
    audit = build_audit(suite, full.probe.output, Expectations("none", ()), {}, references=book)
    coerced = sum(1 for row in audit.rows if "ragas_received" in row.reference.details)
    # only the recomputation on what Ragas received (a coerced input) is left to do
    assert len(calls) <= coerced
    again = build_audit(suite, full.probe.output, Expectations("none", ()), {})
    assert [(r.case.id, r.spec.name, r.target, r.classification) for r in audit.rows] == \
        [(r.case.id, r.spec.name, r.target, r.classification) for r in again.rows]


def test_targets_of_chosen_metrics():
    assert targets_of(None) is None
    targets = targets_of(("faithfulness",))
    assert targets == sorted(str(t) for t in metric("faithfulness").ragas_targets)
    assert "legacy:Faithfulness" in targets and all("Precision" not in t for t in targets)


@pytest.mark.slow
def test_a_metric_run_scores_only_its_targets_and_matches_the_full_run(runs):
    full, chosen = runs
    wanted = set(targets_of(CHOSEN))
    probed = {result["target"] for result in chosen.probe.output["results"]}
    assert probed == wanted
    evaluated = {target for run in chosen.probe.output["evaluate"]["runs"] for target in run["targets"]}
    assert evaluated and evaluated <= wanted
    assert {row.spec.name for row in chosen.audit.rows} == set(CHOSEN)
    assert {row.spec.name for row in chosen.audit.reference_only} <= set(CHOSEN)

    def key(row):
        return (row.case.id, row.spec.name, row.target, repr(row.ragas_value), row.classification, row.expected)

    assert [key(r) for r in chosen.audit.rows] == [key(r) for r in full.audit.rows if r.spec.name in CHOSEN]
    assert not chosen.audit.drift
