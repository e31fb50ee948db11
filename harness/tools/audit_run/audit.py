"""``ragas-compat audit-run``: a Ragas run someone else made, from its saved traces to a verdict.

``plan_audit`` reads everything (the ``ragas_traces`` dump, the scores table, the dataset when
separate), grades every (row, metric) (``rebuild``) and builds the case file; any problem is a
``HarnessInputError`` (exit 2) before anything is written. The command then writes the case file, loads
it as ``run`` does and runs the normal pipeline on it; ``side_by_side`` puts, per row and per dataset,
the score the run *reported*, what Ragas gives on the *recorded* verdicts (the replay) and the
*reference*. Findings:

- ``not_reproduced``: a reported score of a re-derivable (row, metric) that the replay does not give
  bit for bit (compared as ``ragas_compat.compare.replay.same_value`` does);
- ``table_differs``: the scores table's score is not the one the trace recorded for that row (the
  row chain's outputs are evaluate()'s own scores): an edited table, or a table of another run;
- ``subset_mean``: a metric whose reported scores hold NaN, so the mean Ragas reports (``nanmean``)
  is over a subset of the rows ("mean over 61 of 78 rows").
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import ragas_compat
from ragas_compat.cases import parse_suite_text
from ragas_compat.compare.audit import Audit
from ragas_compat.compare.replay import same_value
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.audit_run.langsmith import read_langsmith
from ragas_compat.tools.audit_run.rebuild import (
    GRADES,
    LOSSY,
    REDERIVABLE,
    Graded,
    RowRebuild,
    case_of,
    grade_metric,
)
from ragas_compat.tools.audit_run.scores import ScoresTable, read_scores
from ragas_compat.tools.audit_run.traces import (
    LANGSMITH,
    TRACES_LIST,
    Traces,
    input_kind,
    keyed_chains,
    load_document,
    parse_traces,
)
from ragas_compat.tools.audit_run.traces_list import read_traces_list
from ragas_compat.tools.record.cases import DEFAULT_CATEGORY
from ragas_compat.tools.record.dataset import read_dataset
from ragas_compat.values import RagasError, encode_float

MAX_PROBLEMS = 20
FINDING_KINDS = ("not_reproduced", "table_differs", "subset_mean")


@dataclass(frozen=True)
class Planned:
    traces: Traces
    table: ScoresTable | None
    columns: tuple[str, ...]                        # the run's metric columns, in order
    graded: tuple[Graded, ...]
    reported: dict[tuple[int, str], float]          # (row, column) -> the score the run reported
    recorded: dict[tuple[int, str], float]          # (row, column) -> the score the trace holds for it
    case_ids: tuple[str, ...]
    text: str                                       # the case file


def _trace_score(traces: Traces, row: int, column: str) -> float | None:
    """evaluate()'s score of ``column`` in ``row`` as the trace holds it: the row chain's outputs (NaN for
    null), else the metric chain's output."""
    traced = traces.rows[row]
    if column in traced.scores:
        value = traced.scores[column]
        if value is None:
            return math.nan
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    run = traced.metrics.get(column.split("(mode=", 1)[0])
    return run.score if run is not None and run.ended else None


def _columns(traces: Traces, table: ScoresTable | None) -> list[str]:
    columns: list[str] = []
    if traces.kind == TRACES_LIST and table is not None:   # it names metrics, not columns, and has no scores
        sample_fields = {name for row in traces.rows for name in row.sample}
        return [name for name in table.columns if name not in sample_fields and name != "__line__"
                and all(table.score(i, name)[0] is not None for i in range(len(table.rows)))]
    for row in traces.rows:
        scored = {column.split("(mode=", 1)[0] for column in row.scores}   # a mode metric's chain is its bare name
        for name in [*row.scores, *(m for m in row.metrics if m not in scored)]:
            if name not in columns and name not in row.sample:
                columns.append(name)
    if table is not None:
        sample_fields = {name for row in traces.rows for name in row.sample}
        for name in table.columns:
            if name in columns or name in sample_fields or name == "__line__":
                continue
            if all(table.score(i, name)[0] is not None for i in range(len(table.rows))):
                columns.append(name)   # a score column the trace does not know (e.g. the collections API)
    return columns


def _check_table(traces: Traces, table: ScoresTable, problems: list[str]) -> None:
    if len(table.rows) != len(traces.rows):
        raise HarnessInputError(f"{table.source}: {len(table.rows)} rows, but the traces ({traces.source}) hold "
                                f"{len(traces.rows)}: the table and the traces are not of the same run", field="--scores")
    if "user_input" in table.columns:
        for i, row in enumerate(traces.rows):
            if isinstance(row.sample.get("user_input"), str) and table.rows[i]["user_input"] != row.sample["user_input"]:
                problems.append(f"{table.where(i, 'user_input')}: not the user_input of the traces' row {i} "
                                f"({row.sample['user_input'][:60]!r}): the table and the traces are not aligned")


def _dataset_ids(path: Path, traces: Traces, problems: list[str]) -> tuple[list[str], list[str]]:
    dataset = read_dataset(path, {})
    if len(dataset.samples) != len(traces.rows):
        raise HarnessInputError(f"{dataset.name}: {len(dataset.samples)} samples, but the traces hold "
                                f"{len(traces.rows)} rows", field="--dataset")
    for sample, row in zip(dataset.samples, traces.rows, strict=True):
        for name, value in sample.fields.items():
            if name in row.sample and row.sample[name] != value:
                problems.append(f"{dataset.name}: row {sample.row}, column {name!r}: not the value the traces' "
                                f"row {row.index} holds")
    return [s.id for s in dataset.samples], [s.category or DEFAULT_CATEGORY for s in dataset.samples]


def plan_audit(traces_path: Path, scores_path: Path | None = None, dataset_path: Path | None = None, *,
               suite: str | None = None) -> Planned:
    """Read, check and grade a run; the case file's text (nothing is written here)."""
    source, document = load_document(traces_path)
    kind = input_kind(document)
    table = read_scores(scores_path) if scores_path is not None else None
    if kind == TRACES_LIST:
        if scores_path is None:
            raise HarnessInputError(f"{source}: a traces list (EvaluationResult.traces) holds no scores and no samples: "
                                    "give the run's scores table (--scores)", field="--scores")
        samples_path = dataset_path if dataset_path is not None else scores_path
        samples = [sample.fields for sample in read_dataset(samples_path, {}).samples]
        traces = read_traces_list(source, document, samples, samples_path.name)
    elif kind == LANGSMITH:
        traces = read_langsmith(source, document)
    else:
        traces = parse_traces(source, keyed_chains(source, document))
    problems: list[str] = []
    if table is not None:
        _check_table(traces, table, problems)
    ids = [f"row-{row.index}" for row in traces.rows]
    categories = [DEFAULT_CATEGORY] * len(ids)
    if dataset_path is not None:
        ids, categories = _dataset_ids(dataset_path, traces, problems)
    columns = _columns(traces, table)
    reported: dict[tuple[int, str], float] = {}
    recorded: dict[tuple[int, str], float] = {}
    for row in traces.rows:
        for column in columns:
            traced = _trace_score(traces, row.index, column)
            if traced is not None:
                recorded[(row.index, column)] = traced
            if table is not None:
                value, why = table.score(row.index, column)
                if value is None:
                    problems.append(f"{table.where(row.index, column)}: {why}")
                    continue
                reported[(row.index, column)] = value
            elif traced is not None:
                reported[(row.index, column)] = traced
    if problems:
        shown = problems[:MAX_PROBLEMS] + ([f"... and {len(problems) - MAX_PROBLEMS} more problems"]
                                           if len(problems) > MAX_PROBLEMS else [])
        raise HarnessInputError(f"{len(problems)} problem(s) in the run's files", field="--scores", problems=shown)
    graded: list[Graded] = []
    cases = []
    for row in traces.rows:
        rebuild = RowRebuild(row)
        live: dict[str, Any] = {}
        for column in columns:
            run = row.metrics.get(column.split("(mode=", 1)[0])
            result = grade_metric(rebuild, column, run, kind=traces.kind, reported=reported.get((row.index, column)))
            graded.append(result)
            replayed = result.grade == REDERIVABLE or (result.grade == LOSSY and result.target in rebuild.not_frozen)
            if replayed and (row.index, column) in reported and result.target is not None:
                live[result.target] = encode_float(reported[(row.index, column)])
        cases.append(case_of(rebuild, ids[row.index], categories[row.index], live))
    document = {
        "schema_version": 1,
        "suite": suite or f"{Path(traces.source).stem}-audit",
        "description": (f"Rebuilt by ragas-compat {ragas_compat.__version__} audit-run from the {traces.kind} "
                        f"{traces.source} (evaluation {traces.name!r}, {len(traces.rows)} rows)"
                        + (f" and the scores table {table.source}" if table is not None else "")
                        + ": each case's verdicts are what Ragas parsed from the judge's replies; recording.live "
                          "holds the score the run reported for each re-derivable metric, which `run` replays."),
        "cases": cases,
    }
    text = json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    parse_suite_text(text, source="audit-run")  # never write a file `run` would refuse
    return Planned(traces, table, tuple(columns), tuple(graded), reported, recorded, tuple(ids), text)


# --------------------------------------------------------------------------- side by side

@dataclass(frozen=True)
class Line:
    """One (row, metric): the three numbers side by side."""

    graded: Graded
    case_id: str
    reported: float | None
    replayed: Any = None            # float | RagasError | None (not replayed)
    reference: Fraction | None = None
    reference_note: str | None = None
    status: str = "not replayed"    # reproduced, differs, not replayed


@dataclass(frozen=True)
class Mean:
    column: str
    rows: int
    reported: tuple[float, int]     # (nanmean, rows it is over)
    replayed: tuple[float, int]
    reference: tuple[Fraction | None, int]


@dataclass(frozen=True)
class Finding:
    kind: str
    row: int | None
    column: str
    message: str

    def line(self) -> str:
        where = f"row {self.row}, {self.column}" if self.row is not None else self.column
        return f"{self.kind}: {where}: {self.message}"


@dataclass
class SideBySide:
    lines: list[Line] = field(default_factory=list)
    means: list[Mean] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def grades(self) -> dict[str, int]:
        return {grade: sum(1 for line in self.lines if line.graded.grade == grade) for grade in GRADES}

    def reproduced(self) -> int:
        return sum(1 for line in self.lines if line.status == "reproduced")


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, RagasError):
        return f"error {value.type}"
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}" if value.denominator != 1 else str(value.numerator)
    return repr(value)


def _nanmean(values: list[float]) -> tuple[float, int]:
    kept = [v for v in values if not math.isnan(v)]
    return (math.fsum(kept) / len(kept) if kept else math.nan), len(kept)


def side_by_side(planned: Planned, audit: Audit) -> SideBySide:
    """Per (row, metric) and per metric: reported, Ragas on the recorded verdicts, the reference."""
    rows = {(row.case.id, str(row.target)): row for row in audit.rows}
    out = SideBySide()
    for graded in planned.graded:
        case_id = planned.case_ids[graded.row]
        reported = planned.reported.get((graded.row, graded.column))
        audited = rows.get((case_id, graded.target)) if graded.target else None
        line = Line(graded, case_id, reported)
        if audited is not None:
            ref = audited.reference
            note = ref.undefined_reason or ref.refused
            replayed_it = graded.grade == REDERIVABLE or (graded.grade == LOSSY and str(audited.target) == graded.target)
            status = "not replayed"
            if replayed_it and reported is not None:
                status = "reproduced" if same_value(reported, audited.ragas_value) else "differs"
            line = Line(graded, case_id, reported, audited.ragas_value if replayed_it else None, ref.value, note, status)
        out.lines.append(line)
        if line.status == "differs":
            out.findings.append(Finding("not_reproduced", graded.row, graded.column,
                                        f"the run reported {_shown(reported)}, but Ragas on the recorded verdicts "
                                        f"({graded.target}) gives {_shown(line.replayed)}"))
        recorded = planned.recorded.get((graded.row, graded.column))
        if planned.table is not None and reported is not None and recorded is not None \
                and not same_value(reported, recorded):
            out.findings.append(Finding("table_differs", graded.row, graded.column,
                                        f"the table ({planned.table.source}) says {_shown(reported)}, the trace "
                                        f"recorded {_shown(recorded)} for this row"))
    for column in planned.columns:
        mine = [line for line in out.lines if line.graded.column == column]
        reported_scores = [line.reported for line in mine if line.reported is not None]
        replayed = [line.replayed for line in mine if isinstance(line.replayed, float)]
        references = [line.reference for line in mine if line.reference is not None]
        reference_mean = (sum(references, Fraction(0)) / len(references)) if references else None
        mean = Mean(column, len(mine), _nanmean(reported_scores), _nanmean(replayed), (reference_mean, len(references)))
        out.means.append(mean)
        over = mean.reported[1]
        if over < len(mine):
            out.findings.append(Finding("subset_mean", None, column,
                                        f"the reported mean {_shown(mean.reported[0])} is a mean over {over} of "
                                        f"{len(mine)} rows ({len(mine) - over} NaN dropped by nanmean)"))
    return out


# --------------------------------------------------------------------------- rendering

def _mean_cell(value: Any, over: int, rows: int) -> str:
    return f"{_shown(value)} (over {over} of {rows})" if over != rows else _shown(value)


def markdown_text(planned: Planned, result: SideBySide) -> str:
    """``audit-run.md``: grades, findings, the means and every (row, metric) side by side."""
    grades = result.grades()
    lines = ["# audit-run: the reported scores against Ragas on the recorded verdicts and the reference", "",
             f"Traces `{planned.traces.source}` (evaluation {planned.traces.name!r}, {len(planned.traces.rows)} rows)"
             + (f", scores table `{planned.table.source}`" if planned.table is not None else
                ", reported scores as the trace recorded them (no table given)") + ".", "",
             "Grades: " + ", ".join(f"{n} {g}" for g, n in grades.items()) + f"; {result.reproduced()} reported scores "
             f"reproduced bit for bit by the replay.", ""]
    lines += ["## Findings", ""] + ([f"- {f.line()}" for f in result.findings] or ["None."]) + [""]
    lines += ["## Per metric (dataset means)", "", "| metric | reported | Ragas on recorded verdicts | reference |",
              "|---|---|---|---|"]
    for m in result.means:
        lines.append(f"| {m.column} | {_mean_cell(m.reported[0], m.reported[1], m.rows)} | "
                     f"{_mean_cell(m.replayed[0], m.replayed[1], m.rows)} | "
                     f"{_mean_cell(float(m.reference[0]) if m.reference[0] is not None else None, m.reference[1], m.rows)} |")
    lines += ["", "## Per row", "", "| case | metric | grade | reported | Ragas on recorded verdicts | reference | why |",
              "|---|---|---|---|---|---|---|"]
    for line in result.lines:
        g = line.graded
        why = "; ".join(x for x in (g.reason, g.note, line.reference_note and f"reference: {line.reference_note}")
                        if x)
        cells = [line.case_id, g.column, g.grade + (" (differs)" if line.status == "differs" else ""),
                 _shown(line.reported), _shown(line.replayed), _shown(line.reference), why]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return encode_float(value)
    if isinstance(value, RagasError):
        return {"error": {"type": value.type, "message": value.message}}
    if isinstance(value, Fraction):
        return _shown(value)
    return value


def json_document(planned: Planned, result: SideBySide) -> dict[str, Any]:
    """``audit-run.json``: the same as the Markdown, for machines."""
    return {
        "traces": planned.traces.source, "scores": planned.table.source if planned.table is not None else None,
        "rows": len(planned.traces.rows), "grades": result.grades(), "reproduced": result.reproduced(),
        "findings": [{"kind": f.kind, "row": f.row, "metric": f.column, "message": f.message} for f in result.findings],
        "means": [{"metric": m.column, "rows": m.rows,
                   "reported": {"mean": _json_value(m.reported[0]), "over": m.reported[1]},
                   "replayed": {"mean": _json_value(m.replayed[0]), "over": m.replayed[1]},
                   "reference": {"mean": _json_value(m.reference[0]), "over": m.reference[1]}} for m in result.means],
        "lines": [{"case": line.case_id, "row": line.graded.row, "metric": line.graded.column,
                   "grade": line.graded.grade, "reason": line.graded.reason, "note": line.graded.note,
                   "target": line.graded.target, "reported": _json_value(line.reported),
                   "replayed": _json_value(line.replayed), "reference": _json_value(line.reference),
                   "reference_note": line.reference_note, "status": line.status} for line in result.lines],
    }


def json_text(planned: Planned, result: SideBySide) -> str:
    return json.dumps(json_document(planned, result), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
