"""A Ragas class no built-in metric declares, for tests/test_toy_metric.py's walk through the recipe in
docs/adding-a-metric.md: a subclass of Ragas's own SemanticSimilarity (its real scoring code), importable
by the probe when this folder is on its path (``run_probe(..., sys_path_prefix=[this folder])``)."""

from ragas.metrics._answer_similarity import SemanticSimilarity


class ToySemanticSimilarity(SemanticSimilarity):
    """SemanticSimilarity under a name no registry entry knows."""
