"""Cross-check: corpus AP, precision@K and recall@K of the reference against trec_eval.

trec_eval (through ``ir-measures``' pytrec_eval provider, i.e. the C trec_eval code in
``pytrec-eval-terrier``) is an implementation nobody here wrote. On random rankings with known
relevant sets:

- AP (trec_eval ``map``)   = sum of precision at each relevant retrieved rank / R   = our corpus_ap
- P@k (trec_eval ``P_k``)  = relevant in the top k / k                               = our precision_at_k
                             on the first k labels
- R@k (trec_eval ``recall_k``) = relevant in the top k / R                           = our recall_at_k

R counts every relevant document of the query in the qrels, retrieved or not; the run gives
strictly decreasing scores, so trec_eval's ranking is the list order (no tie-breaking by docno).
trec_eval computes in doubles; the reference is exact, so the comparison allows 1e-12 relative.
"""

from __future__ import annotations

import random

import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")

from ir_measures import AP, P, R  # noqa: E402

from ragas_compat.metrics.context_precision import context_precision_profile  # noqa: E402

QUERIES = 400
CUTOFFS = (1, 3, 5, 10)


def _random_rankings(seed: int) -> dict[str, tuple[list[int], int]]:
    """query id -> (rank-ordered 0/1 labels, R) with R >= the relevant retrieved and R >= 1."""
    rng = random.Random(seed)
    rankings = {}
    for q in range(QUERIES):
        k = rng.choice((1, 2, 3, 5, 8, 13, 40, 100))
        density = rng.random()
        labels = [1 if rng.random() < density else 0 for _ in range(k)]
        unretrieved_relevant = rng.randint(0 if any(labels) else 1, 6)
        rankings[f"q{q}"] = (labels, sum(labels) + unretrieved_relevant)
    return rankings


def _trec_eval(rankings: dict[str, tuple[list[int], int]], measures: list) -> dict[tuple[str, str], float]:
    qrels, run = [], []
    for qid, (labels, r) in rankings.items():
        for i, label in enumerate(labels):
            run.append(ir_measures.ScoredDoc(qid, f"d{i}", float(len(labels) - i)))
            qrels.append(ir_measures.Qrel(qid, f"d{i}", label))
        for j in range(r - sum(labels)):  # relevant documents the ranking never retrieved
            qrels.append(ir_measures.Qrel(qid, f"unretrieved{j}", 1))
    provider = ir_measures.pytrec_eval
    return {(m.query_id, str(m.measure)): m.value for m in provider.iter_calc(measures, qrels, run)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_corpus_ap_precision_and_recall_at_k_match_trec_eval(seed):
    rankings = _random_rankings(seed)
    measures = [AP, *(P @ k for k in CUTOFFS), *(R @ k for k in CUTOFFS)]
    trec = _trec_eval(rankings, measures)
    checked = 0
    for qid, (labels, r) in rankings.items():
        profile = context_precision_profile(labels, r)
        assert float(profile.corpus_ap) == pytest.approx(trec[(qid, "AP")], rel=1e-12, abs=1e-15), (qid, labels, r)
        for k in CUTOFFS:
            top = context_precision_profile(labels[:k], r)
            # trec_eval's P@k divides by k even when fewer than k documents were retrieved
            precision = top.relevant_retrieved / k
            assert precision == pytest.approx(trec[(qid, f"P@{k}")], rel=1e-12, abs=1e-15)
            if len(labels) >= k:
                assert float(top.precision_at_k) == pytest.approx(trec[(qid, f"P@{k}")], rel=1e-12, abs=1e-15)
            assert float(top.recall_at_k) == pytest.approx(trec[(qid, f"R@{k}")], rel=1e-12, abs=1e-15)
            checked += 1
    assert checked == QUERIES * len(CUTOFFS)


def test_precision_and_recall_at_full_depth_match_trec_eval():
    """P@K and R@K with K = the list's own length, the quantities reported next to context AP."""
    rankings = _random_rankings(7)
    depths = sorted({len(labels) for labels, _ in rankings.values()})
    trec = _trec_eval(rankings, [*(P @ k for k in depths), *(R @ k for k in depths)])
    for qid, (labels, r) in rankings.items():
        profile = context_precision_profile(labels, r)
        k = len(labels)
        assert float(profile.precision_at_k) == pytest.approx(trec[(qid, f"P@{k}")], rel=1e-12, abs=1e-15)
        assert float(profile.recall_at_k) == pytest.approx(trec[(qid, f"R@{k}")], rel=1e-12, abs=1e-15)


def test_worked_example_against_trec_eval():
    """Labels 1, 0, 1 with R = 4: AP = (1/1 + 2/3) / 4 = 5/12, P@3 = 2/3, R@3 = 1/2."""
    trec = _trec_eval({"q": ([1, 0, 1], 4)}, [AP, P @ 3, R @ 3])
    profile = context_precision_profile([1, 0, 1], 4)
    assert str(profile.corpus_ap) == "5/12" and trec[("q", "AP")] == pytest.approx(5 / 12, rel=1e-15)
    assert str(profile.precision_at_k) == "2/3" and trec[("q", "P@3")] == pytest.approx(2 / 3, rel=1e-15)
    assert str(profile.recall_at_k) == "1/2" and trec[("q", "R@3")] == 0.5
