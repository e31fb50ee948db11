"""Plain-text forms of a row's values, shared by the markdown and JUnit renderers, and the judge audit
pooled over all claims (``judge_audit_summary_of``), shared by every report."""

from __future__ import annotations

from ragas_compat.compare.audit import Audit, AuditRow
from ragas_compat.metrics.judge_audit import JUDGE_AUDIT, JudgeAudit, JudgeAuditSummary, judge_audit_summary
from ragas_compat.values import NON_NUMERIC, RagasError


def ragas_text(row: AuditRow) -> str:
    value = row.ragas_value
    if isinstance(value, RagasError):
        return f"{value.label}: {value.message}"
    return repr(value)


def reference_texts(row) -> tuple[str, str]:
    """(exact, float) texts of the reference value: 'undefined (reason)' or 'refused: …'."""
    reference = row.reference
    if reference.refused is not None:
        return f"refused: {reference.refused}", "—"
    if reference.value is None:
        return f"undefined ({reference.undefined_reason})", "—"
    if isinstance(reference.value, NON_NUMERIC):  # a label or a ranking: no float
        return repr(reference.value), "—"
    return str(reference.value), repr(float(reference.value))


def judge_audit_summary_of(audit: Audit) -> JudgeAuditSummary | None:
    """The judge_audit outcomes of every case pooled over all their claims (an imported dataset's
    judge-vs-human audit as a whole); a refused case is listed, not counted. None when no case has a
    judge audit in this run."""
    rows = [row for row in audit.reference_only if row.spec.name == JUDGE_AUDIT]
    if not rows:
        return None
    return judge_audit_summary((row.case.id, None if row.reference.refused is not None
                                else JudgeAudit.from_details(row.reference.details)) for row in rows)
