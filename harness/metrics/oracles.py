"""Independent oracles: the libraries the field already trusts, called directly on the case's texts.

The reference (``ragas_compat.metrics.text_reference``) computes the textbook quantity itself; an oracle
computes the same quantity with a well-known library and the settings stated here, so the report
shows Ragas, the reference and the oracle side by side (``details["oracle"]`` of each row). The
oracles are optional (``pip install '.[oracles]'``): when a library is missing the row says so and
the provenance lists it as absent. They run in the harness process, never in the probe.

- ``sacrebleu``: ``corpus_bleu([response], [[reference]])`` (13a tokeniser, exp smoothing, BLEU-4)
  and ``corpus_chrf([response], [[reference]])`` (chrF2, character orders 1-6), scores / 100.
- ``rouge-score`` (Google's): ``RougeScorer([rouge_type], use_stemmer=False).score(reference, response)``.
- ``rapidfuzz``: ``1 - rapidfuzz.distance.<Measure>.normalized_distance(reference, response)``.
- ``datacompy``: ``Compare(pd.read_csv(reference), pd.read_csv(response), on_index=True)``; rows: P =
  ``count_matching_rows()`` / response rows, R = / reference rows; columns: columns of ``column_stats`` with
  ``unequal_cnt == 0`` / each table's columns; F1 = 2PR / (P + R) (None when P + R = 0). Every datacompy
  release from 0.8 declares ``pandas`` below 3.1, so it cannot join the pinned environment (pandas 3.1.1).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from collections.abc import Callable
from typing import Any

# distribution name -> module imported
ORACLE_LIBRARIES: dict[str, str] = {"sacrebleu": "sacrebleu", "rouge-score": "rouge_score", "rapidfuzz": "rapidfuzz",
                                    "datacompy": "datacompy"}


def _version(distribution: str) -> str | None:
    """The installed version of an oracle library (its module imported to check it works); None when absent."""
    return _installed_version(distribution, ORACLE_LIBRARIES[distribution])


@functools.cache
def _installed_version(distribution: str, module: str) -> str | None:
    try:
        importlib.import_module(module)
    except ImportError:
        return None
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown version"


def oracle_status() -> dict[str, str | None]:
    """Each oracle library and its version in this (the harness's) interpreter; None when absent."""
    return {name: _version(name) for name in ORACLE_LIBRARIES}


ABSENT_HINT = {"datacompy": "the ragas extra installs datacompy 0.7.3 (>= 0.8 requires pandas < 3.1, "
                            "below the pinned pandas)"}


def _run(distribution: str, call: str, compute: Callable[[], float | None]) -> dict[str, Any]:
    version = _version(distribution)
    if version is None:
        hint = ABSENT_HINT.get(distribution, "extra 'oracles'")
        return {"library": distribution, "call": call, "absent": f"{distribution} is not installed ({hint})"}
    value = compute()
    return {"library": f"{distribution} {version}", "call": call, "value": None if value is None else float(value)}


def _keywords(kwargs: dict[str, Any] | None) -> str:
    return "".join(f", {key}={value!r}" for key, value in (kwargs or {}).items())


def bleu_oracle(reference: str, response: str, kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``kwargs``: a case's configured sacrebleu keywords (BleuScore(kwargs=...))."""
    def compute() -> float:
        import sacrebleu
        return sacrebleu.corpus_bleu([response], [[reference]], **(kwargs or {})).score / 100
    return _run("sacrebleu", f"sacrebleu.corpus_bleu([response], [[reference]]{_keywords(kwargs)}).score / 100"
                + ("" if kwargs else " (13a, exp smoothing)"), compute)


def chrf_oracle(reference: str, response: str, kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``kwargs``: a case's configured sacrebleu keywords (ChrfScore(kwargs=...))."""
    def compute() -> float:
        import sacrebleu
        return sacrebleu.corpus_chrf([response], [[reference]], **(kwargs or {})).score / 100
    return _run("sacrebleu", f"sacrebleu.corpus_chrf([response], [[reference]]{_keywords(kwargs)}).score / 100"
                + ("" if kwargs else " (chrF2, orders 1-6)"), compute)


def rouge_oracle(rouge_type: str, mode: str, reference: str, response: str) -> dict[str, Any]:
    def compute() -> float:
        from rouge_score import rouge_scorer
        return getattr(rouge_scorer.RougeScorer([rouge_type], use_stemmer=False).score(reference, response)[rouge_type],
                       mode)
    return _run("rouge-score", f"RougeScorer([{rouge_type!r}], use_stemmer=False).score(reference, response)"
                               f"[{rouge_type!r}].{mode}", compute)


RAPIDFUZZ_MEASURES = {"levenshtein": "Levenshtein", "hamming": "Hamming", "jaro": "Jaro", "jaro_winkler": "JaroWinkler"}


def similarity_oracle(measure: str, reference: str, response: str) -> dict[str, Any]:
    name = RAPIDFUZZ_MEASURES[measure]

    def compute() -> float:
        from rapidfuzz import distance
        return 1 - getattr(distance, name).normalized_distance(reference, response)
    return _run("rapidfuzz", f"1 - rapidfuzz.distance.{name}.normalized_distance(reference, response)", compute)


@functools.lru_cache(maxsize=512)
def _datacompy_counts(reference: str, response: str) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    """((matched rows, response rows, reference rows), (matched columns, response columns, reference columns)),
    computed once per pair of texts for the six metrics; None when pandas cannot read a text or Compare
    refuses the tables (two column names equal once lower-cased)."""
    import io

    import datacompy
    import pandas as pd
    try:
        ref, resp = pd.read_csv(io.StringIO(reference)), pd.read_csv(io.StringIO(response))
    except Exception:  # pandas raises several types for a text that is not CSV
        return None
    try:
        compare = datacompy.Compare(ref, resp, on_index=True)
    except ValueError:  # e.g. "df2 must have unique column names" once names are lower-cased
        return None
    columns = sum(1 for col in compare.column_stats if col["unequal_cnt"] == 0)
    return ((int(compare.count_matching_rows()), resp.shape[0], ref.shape[0]),
            (columns, resp.shape[1], ref.shape[1]))


def datacompy_oracle(mode: str, metric: str, reference: str, response: str) -> dict[str, Any]:
    """datacompy's counts on pandas' reading of both texts; value None when a text is not a table
    pandas reads, when Compare refuses the tables or when a divided-by table is empty; F1 with P = R = 0 is 0."""
    def compute() -> float | None:
        both = _datacompy_counts(reference, response)
        if both is None:
            return None
        matched, n_resp, n_ref = both[0] if mode == "rows" else both[1]
        p = matched / n_resp if n_resp else None
        r = matched / n_ref if n_ref else None
        if metric != "f1":
            return p if metric == "precision" else r
        return None if p is None or r is None else 0.0 if p + r == 0 else 2 * (p * r) / (p + r)
    return _run("datacompy", f"datacompy.Compare(pd.read_csv(reference), pd.read_csv(response), on_index=True): "
                             f"{mode} {metric}", compute)


def rouge_stemmer() -> Callable[[str], str] | None:
    """The Porter stemmer rouge-score uses with ``use_stemmer=True`` (nltk's, NLTK extensions mode),
    or None when nltk is absent: only to recompute Ragas's stemmed ROUGE as a named variant."""
    try:
        from nltk.stem import porter
    except ImportError:
        return None
    return porter.PorterStemmer().stem
