"""Cross-check: the judge audit's confusion counts and rates against scikit-learn.

``sklearn.metrics.confusion_matrix(y_true=human, y_pred=judge, labels=[0, 1])`` gives
``[[tn, fp], [fn, tp]]``; sensitivity is sklearn's ``recall_score`` and the false-positive rate
is ``fp / (fp + tn)`` from that matrix. The judge map is built in a different key order than the
human map, so a position-aligned implementation would disagree: alignment must be by claim ID.
"""

from __future__ import annotations

import random

import pytest

from ragas_compat.metrics.judge_audit import judge_audit


@pytest.fixture(scope="module")
def metrics():
    """scikit-learn's metrics, imported when a test here runs, not when the module is collected (about 2 s of
    every pytest process's collection, xdist's workers included)."""
    return pytest.importorskip("sklearn.metrics")


def _random_audit(rng: random.Random) -> tuple[dict[str, object], dict[str, object]]:
    n = rng.choice((1, 2, 3, 7, 20, 150))
    ids = [f"c{rng.randrange(10**6)}-{i}" for i in range(n)]
    bias = rng.random()
    human = {cid: rng.randint(0, 1) for cid in ids}
    judge_items = [(cid, human[cid] if rng.random() < bias else 1 - human[cid]) for cid in ids]
    rng.shuffle(judge_items)
    as_bool = rng.random() < 0.3
    judge = {cid: bool(v) if as_bool else v for cid, v in judge_items}
    return human, judge


@pytest.mark.parametrize("seed", range(3))
def test_confusion_counts_and_rates_match_sklearn(seed, metrics):
    rng = random.Random(seed)
    for _ in range(60):
        human, judge = _random_audit(rng)
        keys = list(human)
        y_true = [int(human[k]) for k in keys]
        y_pred = [int(judge[k]) for k in keys]
        (tn, fp), (fn, tp) = metrics.confusion_matrix(y_true, y_pred, labels=[0, 1]).tolist()
        audit = judge_audit(human, judge)
        assert (audit.tp, audit.fn, audit.fp, audit.tn) == (tp, fn, fp, tn)
        assert audit.count == len(keys)
        if tp + fn:
            assert float(audit.sensitivity) == pytest.approx(metrics.recall_score(y_true, y_pred), rel=1e-15)
        else:
            assert audit.sensitivity is None
        if fp + tn:
            assert float(audit.false_positive_rate) == pytest.approx(fp / (fp + tn), rel=1e-15)
        else:
            assert audit.false_positive_rate is None
        assert float(audit.mean_bias) == pytest.approx(sum(y_pred) / len(y_pred) - sum(y_true) / len(y_true),
                                                       abs=1e-15)


def test_position_alignment_would_be_wrong(metrics):
    """Same claims, judge map in reversed order: sklearn on ID-aligned lists agrees with the audit."""
    human = {"a": 1, "b": 0, "c": 0}
    judge = {"c": 1, "b": 0, "a": 1}
    (tn, fp), (fn, tp) = metrics.confusion_matrix([1, 0, 0], [1, 0, 1], labels=[0, 1]).tolist()
    audit = judge_audit(human, judge)
    assert (audit.tp, audit.fn, audit.fp, audit.tn) == (tp, fn, fp, tn) == (1, 0, 1, 1)
