"""``ragas-compat run``: the audit (Ragas and the reference on the same frozen verdicts).

``register(app)`` adds the command. Exit codes (``harness.errors.ExitCode``): 0 no drift of a
``--fail-on`` kind; 1 drift (``harness.compare.verdict``: a row no rule explains, a divergence or
an error no rule explains, a value out of range, a problem in the expectations file); 2 bad input
or usage; 3 Ragas could not be run at all.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from harness.cli.common import exits_on_harness_errors, positive_seconds, shown, stdout
from harness.compare.audit import Audit
from harness.compare.classify import CLASSIFICATIONS
from harness.compare.verdict import DRIFT_KINDS, exit_code, findings, parse_fail_on
from harness.metrics.registry import metric
from harness.pin import resolve_ragas_source
from harness.pipeline import DEFAULT_OUT, REPORT_FILES, load_run_expectations, load_suite, run_audit, write_reports
from harness.report.atomic import check_writable


def print_summary(audit: Audit, out: Path, fail_on: frozenset[str] = frozenset(DRIFT_KINDS)) -> None:
    console = stdout()
    used = [c for c in CLASSIFICATIONS if any(r.classification.name == c for r in audit.rows)]
    table = Table(title=f"Ragas {shown(audit.provenance.get('ragas_version'))} vs reference, "
                        f"suite {shown(audit.suite.name)}")
    table.add_column("metric")
    for name in used:
        table.add_column(name, justify="right")
    table.add_column("unexpected", justify="right", style="bold red")
    for metric_name, counts in sorted(audit.counts(lambda r: r.spec.name).items()):
        unexpected = sum(1 for r in audit.unexpected if r.spec.name == metric_name)
        table.add_row(shown(metric_name), *(str(counts.get(n, 0)) for n in used), str(unexpected or ""))
    console.print(table)
    console.print(f"pin: {shown(audit.provenance['ragas'].get('pin_status'))}", highlight=False)
    if audit.provenance["ragas"].get("warning"):
        console.print(f"[bold yellow]warning:[/] {shown(audit.provenance['ragas']['warning'])}", highlight=False)
    for finding in findings(audit):
        failing_kind = finding.kind in fail_on
        console.print(f"[{'red' if failing_kind else 'yellow'}]{'drift' if failing_kind else 'finding'}[/] "
                      f"{shown(finding.line())}", highlight=False)
    console.print(f"reports written to {shown(out)}/ (report.md, report.json, junit.xml)", highlight=False)


@exits_on_harness_errors()
def run(
    cases: Optional[list[Path]] = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    out: Path = typer.Option(DEFAULT_OUT, "--out",
                             help="Folder for report.md, report.json, junit.xml (default: ./ragas-compat-report; "
                                  "the repository's committed reports: --out reports)."),
    expectations: Optional[Path] = typer.Option(None, "--expectations",
                                                help="Your expectations file (rules and case entries, e.g. from "
                                                     "`expect bless`), applied before the pin's rules."),
    fail_on: Optional[list[str]] = typer.Option(None, "--fail-on",
                                                help="Drift kinds that make the exit code 1, comma-separated or "
                                                     f"repeated: all (default), none, {', '.join(DRIFT_KINDS)}."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    ragas_checkout: Optional[Path] = typer.Option(None, "--ragas-checkout", help="A git working tree of Ragas."),
    ragas_git: Optional[str] = typer.Option(None, "--ragas-git", help="Clone this Ragas repository (cached)."),
    allow_other_commit: bool = typer.Option(False, "--allow-other-commit",
                                            help="Accept a checkout at another commit than the pin."),
    metrics: Optional[list[str]] = typer.Option(None, "--metric", help="Only these metrics (repeatable)."),
    timeout: float = typer.Option(600.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before the probe (or any other subprocess) is stopped."),
) -> None:
    """Run the audit: Ragas and the reference on the same frozen verdicts, classified and reported."""
    kinds = parse_fail_on(fail_on)
    suite = load_suite(list(cases or []))
    loaded_expectations = load_run_expectations(expectations)
    check_writable(out, REPORT_FILES)
    source = resolve_ragas_source(python=python, checkout=ragas_checkout, git_url=ragas_git,
                                  allow_other_commit=allow_other_commit, timeout=timeout)
    selected = tuple(metric(name).name for name in metrics or ())
    result = run_audit(suite, loaded_expectations, source, python=python, timeout=timeout,
                       metrics=selected or None)
    write_reports(result.audit, out)
    print_summary(result.audit, out, kinds)
    raise typer.Exit(int(exit_code(result.audit, kinds)))


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to ``app``."""
    app.command("run")(run)
