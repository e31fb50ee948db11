"""Independent oracles: the libraries the field already trusts, called directly on the case's texts.

The reference (``harness.metrics.text_reference``) computes the textbook quantity itself; an oracle
computes the same quantity with a well-known library and the settings stated here, so the report
shows Ragas, the reference and the oracle side by side (``details["oracle"]`` of each row). The
oracles are optional (``pip install '.[oracles]'``): when a library is missing the row says so and
the provenance lists it as absent. They run in the harness process, never in the probe.

- ``sacrebleu``: ``corpus_bleu([response], [[reference]])`` (13a tokeniser, exp smoothing, BLEU-4)
  and ``corpus_chrf([response], [[reference]])`` (chrF2, character orders 1-6), scores / 100.
- ``rouge-score`` (Google's): ``RougeScorer([rouge_type], use_stemmer=False).score(reference, response)``.
- ``rapidfuzz``: ``1 - rapidfuzz.distance.<Measure>.normalized_distance(reference, response)``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from typing import Any

# distribution name -> module imported
ORACLE_LIBRARIES: dict[str, str] = {"sacrebleu": "sacrebleu", "rouge-score": "rouge_score", "rapidfuzz": "rapidfuzz"}


def _version(distribution: str) -> str | None:
    try:
        importlib.import_module(ORACLE_LIBRARIES[distribution])
    except ImportError:
        return None
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown version"


def oracle_status() -> dict[str, str | None]:
    """Each oracle library and its version in this (the harness's) interpreter; None when absent."""
    return {name: _version(name) for name in ORACLE_LIBRARIES}


def _run(distribution: str, call: str, compute: Callable[[], float]) -> dict[str, Any]:
    version = _version(distribution)
    if version is None:
        return {"library": distribution, "call": call, "absent": f"{distribution} is not installed (extra 'oracles')"}
    return {"library": f"{distribution} {version}", "call": call, "value": float(compute())}


def bleu_oracle(reference: str, response: str) -> dict[str, Any]:
    def compute() -> float:
        import sacrebleu
        return sacrebleu.corpus_bleu([response], [[reference]]).score / 100
    return _run("sacrebleu", "sacrebleu.corpus_bleu([response], [[reference]]).score / 100 (13a, exp smoothing)",
                compute)


def chrf_oracle(reference: str, response: str) -> dict[str, Any]:
    def compute() -> float:
        import sacrebleu
        return sacrebleu.corpus_chrf([response], [[reference]]).score / 100
    return _run("sacrebleu", "sacrebleu.corpus_chrf([response], [[reference]]).score / 100 (chrF2, orders 1-6)",
                compute)


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


def rouge_stemmer() -> Callable[[str], str] | None:
    """The Porter stemmer rouge-score uses with ``use_stemmer=True`` (nltk's, NLTK extensions mode),
    or None when nltk is absent: only to recompute Ragas's stemmed ROUGE as a named variant."""
    try:
        from nltk.stem import porter
    except ImportError:
        return None
    return porter.PorterStemmer().stem
