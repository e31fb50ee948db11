"""The findings a reviewer reads first (issue 39): one evaluate() mean-gap finding per metric, ranked by the
gap relative to the metric's range and the rows that move it, so the context-precision mean a RAG team
quotes is among the first three findings of the default audit; sentences read the kept values from the
rows, print a whole number once and a long fraction as its float; the cause texts are metric-neutral."""

from __future__ import annotations

import html
import math
import re
from fractions import Fraction

import pytest

from ragas_compat.compare.dataset_level import row_status
from ragas_compat.compare.findings import value_range
from ragas_compat.compare.headlines import (
    EXACT_IN_JSON,
    MEAN_GAP_FLOOR,
    exact_text,
    gap_label,
    headline_json,
    short_exact,
)
from ragas_compat.vocabulary import CAUSES, PAIR_MEANINGS


@pytest.fixture(scope="module")
def audit(default_audit_run):
    return default_audit_run.audit  # tests/conftest.py: the default audit, run once per session


def _gaps(audit):
    return [h for h in audit.headlines if h.kind == "mean_gap"]


def _gap(agg):
    return abs(agg.ragas_mean - float(agg.policy.mean))


def _moves_the_mean(agg):
    """Read from the rows: a row Ragas keeps that the reference drops, drops that the reference defines, or
    scores otherwise beyond a guard constant or rounding (its per-row class is none of those)."""
    for row in agg.rows:
        defined = row_status(row.reference)[0] == "defined"
        if defined == math.isnan(row.evaluate_value):
            return True
        if defined and row.row_classification not in ("identical", "epsilon", "rounding") \
                and abs(row.evaluate_value - float(row.reference.value)) > 1e-9:
            return True
    return False


def test_the_context_precision_mean_gap_is_among_the_first_three_findings(audit):
    first = audit.headlines[:3]
    assert "mean_gap:context_precision_with_reference" in [h.key for h in first], [h.key for h in first]
    [cp] = [h for h in first if h.key == "mean_gap:context_precision_with_reference"]
    [agg] = [a for a in audit.dataset_level.targets if a.target == cp.example.target]
    assert f"{agg.ragas_mean:.3f}" in cp.sentence and f"{agg.policy.mean} ≈ {float(agg.policy.mean):.3f}" in cp.sentence
    low, high = value_range(agg.metric)
    assert f"{_gap(agg) / (high - low):.0%} of the metric's range [{low:g}, {high:g}]" in cp.sentence


def test_one_mean_gap_finding_per_metric_that_has_one(audit):
    """A metric, and each configuration cases name (``aspect_critic[strictness=5]``: its own evaluate() mean
    against its own reference, a group of its own in the dataset level), has at most one finding, keyed
    ``mean_gap:<label>``; it has one when some target's mean is off by the floor and rows move it."""
    gaps = _gaps(audit)
    assert len(gaps) > 1 and len({h.key for h in gaps}) == len(gaps)
    named = [m for h in gaps for m in h.sentence.split(" mean")[0].removeprefix("evaluate()'s ").split(" and ")]
    assert len(named) == len(set(named))  # no metric or configuration in two findings
    assert "context_precision_with_reference" in named and "instance_rubrics" in named
    groups = audit.dataset_level.by_metric()
    assert all(h.key.removeprefix("mean_gap:") in groups for h in gaps)
    configured = [label for label in groups if label != groups[label][0].metric]
    assert any(label in named for label in configured), "the suite's options cases make configured mean gaps"
    for label, aggregates in groups.items():
        assert {gap_label(a) for a in aggregates} == {label}
        low, high = value_range(aggregates[0].metric) or (0.0, 1.0)
        if not math.isfinite(high - low):
            continue
        off = [a for a in aggregates if a.classification.name != "identical" and a.policy.mean is not None
               and _gap(a) >= MEAN_GAP_FLOOR * (high - low) and _moves_the_mean(a)]
        assert (label in named) == bool(off), label
    # ranked by weight, most first: the gap relative to the range times the rows evaluate() averages, which
    # is the sum of those rows' distances from the explicit-policy mean in units of the range (read here
    # from the rows, not from the two means)
    weights = [h.weight for h in gaps]
    assert weights == sorted(weights, reverse=True) and all(w and w > 0 for w in weights)
    assert all(headline_json(h)["weight"] == h.weight for h in gaps)
    for headline in gaps:
        [agg] = [a for a in audit.dataset_level.targets if a.target == headline.example.target
                 and gap_label(a) == headline.key.removeprefix("mean_gap:")]
        low, high = value_range(agg.metric) or (math.nan, math.nan)
        if not math.isfinite(high - low):
            continue
        summed = abs(sum(r.evaluate_value - float(agg.policy.mean) for r in agg.rows
                         if not math.isnan(r.evaluate_value))) / (high - low)
        assert headline.weight == pytest.approx(summed, rel=1e-9), headline.key


def test_a_few_moved_rows_of_a_small_metric_do_not_outrank_more_moved_rows_of_a_large_one(audit):
    """The gap alone is diluted by the rows that agree: context precision's six moved rows of 21 make a smaller
    gap than four of six on aspect_critic_strictness_2; ranked by weight, the six rows come first."""
    def share(headline):  # the gap's share of the range, as the sentence prints it
        return float(re.search(r" a gap of ([\d.]+)% ", headline.sentence).group(1))

    gaps = _gaps(audit)
    [cp] = [h for h in gaps if h.key == "mean_gap:context_precision_with_reference"]
    larger = [h for h in gaps if h.rows < cp.rows and share(h) > share(cp)]
    assert "mean_gap:aspect_critic_strictness_2" in [h.key for h in larger]
    assert all(gaps.index(cp) < gaps.index(h) for h in larger), [h.key for h in larger]


def test_a_metric_without_a_fixed_range_is_measured_against_its_values(audit):
    """InstanceRubrics's 2.3-point gap on a 0-4 span no longer beats context precision's 0.22 on [0, 1]."""
    [rubrics] = [h for h in _gaps(audit) if h.key == "mean_gap:instance_rubrics"]
    [cp] = [h for h in _gaps(audit) if h.key == "mean_gap:context_precision_with_reference"]
    assert "the metric has no fixed range" in rubrics.sentence
    assert audit.headlines.index(cp) < audit.headlines.index(rubrics)


def test_the_kept_values_are_read_from_the_rows(audit):
    for headline in _gaps(audit):
        [agg] = [a for a in audit.dataset_level.targets if a.target == headline.example.target]
        kept = agg.kept_but_dropped_by_reference
        if not kept:
            assert "it keeps" not in headline.sentence
            continue
        assert f"it keeps {len(kept)} row" in headline.sentence
        for row in kept:
            assert repr(row.evaluate_value) in headline.sentence, (row.case_id, headline.sentence)
        assert repr(kept[0].evaluate_value) in headline.example.ragas
        assert row_status(kept[0].reference)[1] in headline.example.reference
    [rubrics] = [h for h in _gaps(audit) if h.key == "mean_gap:instance_rubrics"]
    assert "scored 1.0 and 0.0" in rubrics.sentence and "as 0.0" not in rubrics.sentence


def test_numbers_print_once_and_long_fractions_as_floats(audit):
    for headline in audit.headlines:
        text = headline.sentence + " " + headline.example.ragas + " " + headline.example.reference
        assert not re.search(r"(?<![\d./])(\d+) ≈ \1\.0+\b", text), text  # no "4 ≈ 4.000"
        assert not re.search(r"\d{21,}", text), text  # no fraction of hundreds of digits
    [rubrics] = [h for h in _gaps(audit) if h.key == "mean_gap:instance_rubrics"]
    assert "policy gives 4 over 1 of 3 rows" in rubrics.sentence
    long = [h for h in _gaps(audit) if EXACT_IN_JSON in h.sentence]
    assert long, "the default suite has string metrics whose exact mean is a long fraction"
    for headline in long:
        [agg] = [a for a in audit.dataset_level.targets if a.target == headline.example.target]
        assert f"{float(agg.policy.mean)!r} {EXACT_IN_JSON}" in headline.example.reference


def test_exact_texts():
    assert exact_text(Fraction(5, 6)) == "5/6 = 0.8333333333333334"
    assert exact_text(Fraction(4)) == "4" and short_exact(Fraction(4)) == "4"
    assert short_exact(Fraction(67, 78)) == "67/78 ≈ 0.859"
    huge = Fraction(0.1) + Fraction(0.7) / 3
    assert len(str(huge)) > 20
    assert exact_text(huge) == f"{float(huge)!r} {EXACT_IN_JSON}"
    assert short_exact(huge) == f"{float(huge):.3f} {EXACT_IN_JSON}"
    assert exact_text(None) == "undefined" and exact_text(math.pi) == repr(math.pi)


def test_cause_texts_are_metric_neutral_and_the_rule_carries_the_specifics(audit):
    for name in ("epsilon", "empty_as_zero"):
        for text in (CAUSES[name], PAIR_MEANINGS[name]):
            assert "average precision" not in text.lower() and not re.search(r"\bAP\b", text), text
    by_kind = {h.kind: h for h in audit.headlines}
    for kind in ("epsilon", "empty_as_zero"):
        headline = by_kind[kind]
        assert "AP is undefined" not in headline.sentence and "context precision is AP" not in headline.sentence
        [row] = [r for r in audit.rows if r.case.id == headline.example.case_id
                 and str(r.target) == headline.example.target]
        reason = row.expected.reason.split(". ")[0].rstrip(".")
        assert reason in headline.sentence, (reason, headline.sentence)
    empty = by_kind["empty_as_zero"]
    metrics = {r.spec.name for r in audit.rows if r.classification.name == "empty_as_zero" and not r.unexpected}
    assert f"rows of {len(metrics)} metrics" in empty.sentence


def test_the_floor_keeps_guard_constants_out_of_the_mean_gaps(audit):
    """A mean that differs only by a guard constant or rounding (e.g. faithfulness's float rounding, or a
    configuration whose every row is rounded to 2 decimals) is no mean-gap finding; one that a kept undefined
    or refused row moves is one, however small."""
    keys = {h.key for h in _gaps(audit)}
    groups = audit.dataset_level.by_metric()
    guard_only = []
    for label, aggregates in groups.items():
        defined = [a for a in aggregates if a.policy.mean is not None]
        if defined and all(_gap(a) < MEAN_GAP_FLOOR / 2 or not _moves_the_mean(a) for a in defined):
            assert f"mean_gap:{label}" not in keys, label
            guard_only += [a for a in defined if _gap(a) >= MEAN_GAP_FLOOR]
    assert guard_only, "the suite has a mean off by rounding alone (more than the floor)"
    kept_moved = [a for a in audit.dataset_level.targets if a.policy.mean is not None
                  and _gap(a) >= MEAN_GAP_FLOOR and a.kept_but_dropped_by_reference]
    named = {m for h in _gaps(audit) for m in h.sentence.split(" mean")[0].removeprefix("evaluate()'s ").split(" and ")}
    assert kept_moved and all(gap_label(a) in named for a in kept_moved), [a.target for a in kept_moved]


def test_the_terminal_prints_the_first_findings_and_counts_the_rest(audit, capsys, monkeypatch):
    from pathlib import Path

    from ragas_compat.cli.run import FINDING_LINES, print_summary

    monkeypatch.setenv("COLUMNS", "100")
    assert len(audit.headlines) > FINDING_LINES
    print_summary(audit, Path("out"))
    text = capsys.readouterr().out
    assert f"... and {len(audit.headlines) - FINDING_LINES} more findings" in text
    indexes = [int(m) for m in re.findall(r"^\s*(\d+)\. ", text, flags=re.M)]
    assert indexes == list(range(1, FINDING_LINES + 1))
    print_summary(audit, Path("out"), verbose=True)
    text = capsys.readouterr().out
    assert "more findings" not in text
    assert max(int(m) for m in re.findall(r"^\s*(\d+)\. ", text, flags=re.M)) == len(audit.headlines)


def test_the_means_chart_follows_the_findings_order(audit):
    """report.html's evaluate() mean chart lists the metrics with a mean gap in the findings' order (the
    labels one finding names together, next to each other), not by a ranking of its own."""
    from ragas_compat.report.html_report import means_chart

    svg = "".join(means_chart(audit)).split('<svg id="means-chart-equal"')[0]
    charted = [html.unescape(label) for label in re.findall(r'<text [^>]*font-weight="bold">([^<]*)</text>', svg)]
    named = [m for h in _gaps(audit) for m in h.sentence.split(" mean")[0].removeprefix("evaluate()'s ").split(" and ")]
    assert charted == named
    assert charted.index("context_precision_with_reference") < 3


def test_a_dataset_level_finding_is_not_called_an_expectations_problem():
    """Findings of no row were all "(an expectations-file problem)", and one headline quoted the first of
    them: a dataset-level evaluate() disagreement read as a problem of the user's file, beside a real one."""
    from types import SimpleNamespace

    from ragas_compat.compare.findings import Finding
    from ragas_compat.compare.headlines import _unexplained

    problem = "mine.toml: case[0] names (c, legacy:X), which the run did not produce"
    dataset = "dataset level: legacy:Faithfulness: evaluate()'s row is not single_turn_ascore's value for 1 case(s): f1"
    audit = SimpleNamespace(rows=[], expectation_problems=(problem,),
                            findings=[Finding("unexplained", None, None, None, None, dataset),
                                      Finding("unexplained", None, None, None, None, problem)])
    sentences = {h.key: h.sentence for h in _unexplained(audit)}
    assert sentences == {
        "unexplained:unexplained:dataset_level":
            f"1 finding of kind unexplained (a dataset-level evaluate() result) that no rule or case entry explains: "
            f"{dataset}",
        "unexplained:unexplained:None":
            f"1 finding of kind unexplained (an expectations-file problem) that no rule or case entry explains: {problem}"}
