"""What a matrix finds, in ``run``'s ``--fail-on`` vocabulary (``ragas_compat.compare.verdict.DRIFT_KINDS``).

A matrix has no expectations file, so every Ragas change between two adjacent columns is a finding of
kind ``unexplained``; the changed cell also counts as ``divergence``, ``error`` or ``out_of_range``
when it is one against the reference in the later column. Not findings: a column that could not be
built or imported (``unavailable``/``absent``: the environment) and a change that is only a limit of
the harness (``Drift.by == "harness"``), a changed judge prompt alone (``prompt_changed``: the verdicts were
replayed under another prompt, so what the judge would answer is assumed, not shown), and a change a drift rule explains (``Cause.rule``:
pinned/matrix-drift.toml, e.g. last-bit changes between Pythons). The exit code is 1 when a finding of a ``--fail-on`` kind
exists (``all`` by default, ``none`` never), as for ``run``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragas_compat.compare.findings import out_of_range
from ragas_compat.compare.verdict import FAIL_ON_DEFAULT
from ragas_compat.errors import ExitCode
from ragas_compat.tools.matrix.drift import HARNESS_CAUSES, Matrix

# a prompt change is a note on the replayed verdicts (what the judge would answer is not shown), no finding
NOT_FINDINGS = HARNESS_CAUSES | {"unavailable", "absent", "prompt_changed"}


@dataclass(frozen=True)
class MatrixFinding:
    kind: str
    before: str
    after: str
    case_id: str
    target: str
    message: str


def matrix_findings(matrix: Matrix) -> list[MatrixFinding]:
    """One ``unexplained`` finding per changed (row, adjacent pair), plus the kind of the later cell."""
    labels = [c.label for c in matrix.columns]
    found: list[MatrixFinding] = []
    for row in matrix.rows:
        for index, causes in enumerate(row.changes):
            ragas = [c for c in causes if c.kind not in NOT_FINDINGS and c.rule is None]  # a drift rule explains it
            if not ragas:
                continue
            before, after = labels[index], labels[index + 1]
            text = "; ".join(f"{c.kind}: {c.text}" for c in ragas)
            found.append(MatrixFinding("unexplained", before, after, row.case_id, row.target, text))
            cell = row.cells[index + 1]
            if cell.classification == "divergence":
                found.append(MatrixFinding("divergence", before, after, row.case_id, row.target,
                                           f"{cell.text} diverges from the reference {row.reference}"))
            if cell.status == "error" and cell.not_run is None:
                found.append(MatrixFinding("error", before, after, row.case_id, row.target,
                                           f"{cell.error_type}: {cell.error_message}"))
            if cell.status == "value" and out_of_range(row.metric, cell.value):
                found.append(MatrixFinding("out_of_range", before, after, row.case_id, row.target,
                                           f"{cell.value!r} is outside {row.metric}'s range"))
    return found


def matrix_exit_code(found: list[MatrixFinding], fail_on: frozenset[str] = FAIL_ON_DEFAULT) -> ExitCode:
    return ExitCode.DRIFT if any(f.kind in fail_on for f in found) else ExitCode.OK
