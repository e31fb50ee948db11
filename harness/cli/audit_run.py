"""``ragas-compat audit-run``: audit a Ragas run you did not make, from its saved traces to a verdict.

``register(app)`` adds the command. It reads the run's traces (a ``ragas_traces`` dump, the traces list
``EvaluationResult.traces`` or a LangSmith export; the kind is read from the file) and the scores
table, the dataset when separate, grades every (row, metric), writes the case file (``--cases-out``; ``run`` and
``explain`` take it from there), runs the normal pipeline on it as ``run`` does, and writes the usual
report set plus ``audit-run.md`` / ``audit-run.json`` (the reported score, Ragas on the recorded
verdicts and the reference, per row and per metric) into ``--out``.

Exit codes: 0 every reported score of a re-derivable row reproduced, no finding and no drift of a
``--fail-on`` kind; 1 a finding (a reported score the recorded verdicts do not reproduce, a table that
is not the trace's, a mean over a subset of the rows) or drift; 2 bad input (a truncated or malformed
dump: the row and JSON path named; nothing written), or a run none of whose scores can be replayed (every
metric unrecorded or not rebuilt: nothing would be checked, as ``run`` refuses a suite that scores no row);
3 Ragas could not be run.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer

from ragas_compat.atomic_file import write_atomically
from ragas_compat.cases.loader import packed
from ragas_compat.cli.common import exits_on_harness_errors, positive_seconds, shown, stdout
from ragas_compat.cli.output import OutputFormat, format_option, print_json, quiet_option
from ragas_compat.compare.verdict import exit_code, parse_fail_on
from ragas_compat.errors import ExitCode, HarnessInputError
from ragas_compat.pin import resolve_ragas_source
from ragas_compat.pipeline import DEFAULT_OUT, REPORT_FILES, load_run_expectations, load_suite, report_chunks, run_audit
from ragas_compat.report.atomic import check_writable, signals_held, write_reports_atomically
from ragas_compat.runner import StartedProbe, default_workers
from ragas_compat.tools.audit_run.audit import json_document, json_text, markdown_text, plan_audit, side_by_side
from ragas_compat.tools.audit_run.rebuild import GRADES
from ragas_compat.write_preflight import check_output_file

AUDIT_FILES = ("audit-run.md", "audit-run.json")
FINDING_LINES = 10


class CaseFileKept:
    """``with CaseFileKept(path) as kept:``: the file at ``path`` (the case file, written before the replay
    reads it) is put back as it was, or the new one removed, unless ``kept.done()`` was called: a run that
    fails or is interrupted after writing it leaves no new case file beside the old report set."""

    def __init__(self, path: Path) -> None:
        self.path, self.finished = path, False
        self.previous: Path | None = None

    def __enter__(self) -> CaseFileKept:
        if self.path.is_file():
            self.previous = self.path.with_name(f".{self.path.name}.previous-{secrets.token_hex(4)}")
            try:
                try:
                    os.link(self.path, self.previous)
                except OSError:  # no hard links here: a copy
                    shutil.copy2(self.path, self.previous)
            except OSError as exc:
                self.previous.unlink(missing_ok=True)
                raise HarnessInputError(f"--cases-out {self.path}: cannot keep the file there while the run "
                                        f"replaces it ({exc.strerror or exc}); nothing written",
                                        field="--cases-out") from None
        return self

    def done(self) -> None:
        self.finished = True

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if not self.finished:
            if self.previous is not None:
                os.replace(self.previous, self.path)
            else:
                self.path.unlink(missing_ok=True)
        elif self.previous is not None:
            self.previous.unlink(missing_ok=True)


@exits_on_harness_errors()
def audit_run(
    traces: Path = typer.Argument(..., help="The run's traces as JSON: EvaluationResult.ragas_traces, the traces "
                                           "list (EvaluationResult.traces; needs --scores) or a LangSmith export "
                                           "(docs: 'Audit someone else's run')."),
    scores: Optional[Path] = typer.Option(None, "--scores", help="The run's scores table: to_pandas() saved as .csv "
                                                                  "or .parquet (default: the scores the trace recorded)."),
    dataset: Optional[Path] = typer.Option(None, "--dataset", help="The dataset, when separate (its id and category "
                                                                    "columns name the cases; checked against the trace)."),
    cases_out: Path = typer.Option(..., "--cases-out", help="The case file to write (replaced atomically)."),
    out: Path = typer.Option(DEFAULT_OUT, "--out", help="Folder for the report set and audit-run.md / .json."),
    expectations: Optional[Path] = typer.Option(None, "--expectations", help="Your expectations file, as for run."),
    fail_on: Optional[list[str]] = typer.Option(None, "--fail-on", help="Drift kinds of the replay that make the "
                                                                        "exit code 1, as for run (default: all)."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas replays the verdicts."),
    timeout: float = typer.Option(600.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before the probe is stopped."),
    workers: int = typer.Option(default_workers(), "--workers", min=1, help="Processes that score the cases."),
    output: OutputFormat = format_option(),
    quiet: bool = quiet_option(),
) -> None:
    """Audit a Ragas run you did not make: rebuild its verdicts from the saved traces, replay them, and put the
    reported scores beside Ragas on the recorded verdicts and the reference."""
    kinds = parse_fail_on(fail_on)
    planned = plan_audit(traces, scores, dataset)   # every input problem raised here: nothing written yet
    metrics = tuple(sorted({g.metric for g in planned.graded if g.metric is not None}))
    if not metrics:  # a run none of whose scores can be replayed: nothing would be checked, as run refuses it
        counts = ", ".join(f"{sum(1 for g in planned.graded if g.grade == grade)} {grade}" for grade in GRADES)
        raise HarnessInputError(f"{planned.traces.source}: no (row, metric) of the run can be replayed from its "
                                f"traces ({len(planned.graded)} graded: {counts}), so the audit would check nothing; "
                                "nothing written", field="traces")
    loaded_expectations = load_run_expectations(expectations)
    check_output_file(cases_out, "--cases-out")
    check_writable(out, REPORT_FILES + AUDIT_FILES)
    with CaseFileKept(cases_out) as kept:  # the case file and the reports: both new, or both as they were
        with StartedProbe(python=python, timeout=timeout) as started:
            # --python checked as run checks it (exit 3) before the case file is written
            source = resolve_ragas_source(python=python, checkout=None, git_url=None, allow_other_commit=False,
                                          timeout=timeout, located=started.located())
            write_atomically(cases_out, planned.text, "--cases-out")
            # the case file as `run --cases` reads it, its raw objects packed as `run` holds them while the probe scores
            suite = packed(load_suite([cases_out]))
            audit = run_audit(suite, loaded_expectations, source, python=python, timeout=timeout, workers=workers,
                              metrics=metrics, started=started, keep_output=False).audit
        if not audit.rows:  # the replay scored nothing: refused as run refuses it, not passed
            raise HarnessInputError(f"{planned.traces.source}: the replay of {shown(cases_out)} scored no (case, "
                                    "Ragas target) row, so the audit would check nothing; no report written",
                                    field="traces")
        result = side_by_side(planned, audit)
        with signals_held():  # a Ctrl-C now comes after the reports are published and the case file kept
            write_reports_atomically(out, {**report_chunks(audit), "audit-run.md": markdown_text(planned, result),
                                           "audit-run.json": json_text(planned, result)})
            kept.done()
    code = max(int(exit_code(audit, kinds)), int(ExitCode.DRIFT) if result.findings else 0)
    if output is OutputFormat.JSON:
        print_json({**json_document(planned, result), "verdict_line": audit.verdict.line(), "exit_code": code,
                    "case_file": str(cases_out), "reports": [str(out / n) for n in REPORT_FILES + AUDIT_FILES]})
        raise typer.Exit(code)
    console = stdout()
    grades = result.grades()
    head = (f"audit-run: {len(planned.traces.rows)} rows x {len(planned.columns)} metrics graded "
            + ", ".join(f"{n} {g}" for g, n in grades.items())
            + f"; {result.reproduced()} reported scores reproduced bit for bit; {len(result.findings)} findings")
    console.print(f"[{'bold red' if code else 'bold green'}]{shown(head)}[/]", highlight=False)
    if quiet:
        raise typer.Exit(code)
    for finding in result.findings[:FINDING_LINES]:
        console.print(f"[red]finding[/] {shown(finding.line())}", highlight=False)
    if len(result.findings) > FINDING_LINES:
        console.print(f"... and {len(result.findings) - FINDING_LINES} more (audit-run.md lists every one)")
    for mean in result.means:
        reported, replayed = mean.reported, mean.replayed
        reference = float(mean.reference[0]) if mean.reference[0] is not None else None
        console.print(shown(f"{mean.column}: reported {reported[0]!r} over {reported[1]} of {mean.rows} rows; Ragas on "
                            f"the recorded verdicts {replayed[0]!r} over {replayed[1]}; reference {reference!r} over "
                            f"{mean.reference[1]}"), highlight=False)
    console.print(f"replay audit: {shown(audit.verdict.line())}", highlight=False)
    console.print(f"case file {shown(cases_out)}; reports in {shown(out)}/ ({', '.join(REPORT_FILES + AUDIT_FILES)})",
                  highlight=False)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add the ``audit-run`` command to ``app``."""
    app.command("audit-run")(audit_run)
