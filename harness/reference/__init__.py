"""Reference implementations of the metrics Ragas is checked against.

Exact arithmetic (``fractions.Fraction``), ``None`` for undefined values, strict 0/1 labels.
Nothing here imports Ragas.
"""

from harness.reference.claim_coverage import ClaimCoverage, claim_coverage, context_recall, faithfulness
from harness.reference.context_precision import ContextPrecisionProfile, context_precision_profile
from harness.reference.id_overlap import CollapsedGroup, IdOverlap, id_overlap
from harness.reference.judge_audit import JudgeAudit, judge_audit
from harness.reference.labels import coerce_by_truthiness, is_binary_label, validate_labels
from harness.reference.outcome import ReferenceOutcome

__all__ = [
    "ClaimCoverage", "claim_coverage", "context_recall", "faithfulness",
    "ContextPrecisionProfile", "context_precision_profile",
    "CollapsedGroup", "IdOverlap", "id_overlap",
    "JudgeAudit", "judge_audit",
    "coerce_by_truthiness", "is_binary_label", "validate_labels",
    "ReferenceOutcome",
]
