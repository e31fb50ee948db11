"""Plain-text forms of a row's values, shared by the markdown and JUnit renderers."""

from __future__ import annotations

from ragas_compat.compare.audit import AuditRow
from ragas_compat.values import RagasError


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
    return str(reference.value), repr(float(reference.value))
