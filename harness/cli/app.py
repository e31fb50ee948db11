"""``ragas-compat``: the command line (typer + rich).

Exit codes of ``run``: 0 every row matches its expectation; 1 drift (an unexpected
classification or a problem in the expectations file); 2 bad input or usage;
3 Ragas could not be run at all.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from harness.cli import bench as cli_bench, explain as cli_explain, fuzz as cli_fuzz, matrix as cli_matrix
from harness.compare.audit import Audit
from harness.cli.pin import pin_app
from harness.compare.classify import CLASSIFICATIONS
from harness.errors import HarnessInputError
from harness.pin import RagasNotInstalled, resolve_ragas_source
from harness.metrics.registry import metric
from harness.report.atomic import check_writable
from harness.errors import RagasUnavailable
from harness.pipeline import DEFAULT_OUT, load_run_expectations, load_suite, run_audit, write_reports

EXIT_OK, EXIT_DRIFT, EXIT_BAD_INPUT, EXIT_NO_RAGAS = 0, 1, 2, 3

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Verify Ragas metric semantics against reference implementations on frozen verdicts.")
app.add_typer(pin_app, name="pin")
for module in (cli_explain, cli_fuzz, cli_matrix, cli_bench):
    module.register(app)
console = Console()
errors = Console(stderr=True)


def fail(message: str, code: int) -> typer.Exit:
    errors.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def print_summary(audit: Audit, out: Path) -> None:
    used = [c for c in CLASSIFICATIONS if any(r.classification.name == c for r in audit.rows)]
    table = Table(title=f"Ragas {audit.provenance.get('ragas_version')} vs reference, suite {audit.suite.name}")
    table.add_column("metric")
    for name in used:
        table.add_column(name, justify="right")
    table.add_column("unexpected", justify="right", style="bold red")
    for metric_name, counts in sorted(audit.counts(lambda r: r.spec.name).items()):
        unexpected = sum(1 for r in audit.unexpected if r.spec.name == metric_name)
        table.add_row(metric_name, *(str(counts.get(n, 0)) for n in used), str(unexpected or ""))
    console.print(table)
    console.print(f"pin: {audit.provenance['ragas'].get('pin_status')}", highlight=False)
    if audit.provenance["ragas"].get("warning"):
        console.print(f"[bold yellow]warning:[/] {audit.provenance['ragas']['warning']}", highlight=False)
    for row in audit.unexpected:
        console.print(f"[red]drift[/] {row.case.id} × {row.target}: {row.classification.name} "
                      f"(expected {row.expected.classification}) — {row.classification.explanation}",
                      highlight=False)
    for problem in audit.expectation_problems:
        console.print(f"[red]expectations[/] {problem}", highlight=False)
    console.print(f"reports written to {out}/ (report.md, report.json, junit.xml)", highlight=False)


@app.command()
def run(
    cases: Optional[list[Path]] = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    out: Path = typer.Option(DEFAULT_OUT, "--out", help="Folder for report.md, report.json, junit.xml."),
    expectations: Optional[Path] = typer.Option(None, "--expectations",
                                                help="Expected classifications (default pinned/expectations.toml)."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    ragas_checkout: Optional[Path] = typer.Option(None, "--ragas-checkout", help="A git working tree of Ragas."),
    ragas_git: Optional[str] = typer.Option(None, "--ragas-git", help="Clone this Ragas repository (cached)."),
    allow_other_commit: bool = typer.Option(False, "--allow-other-commit",
                                            help="Accept a checkout at another commit than the pin."),
    metrics: Optional[list[str]] = typer.Option(None, "--metric", help="Only these metrics (repeatable)."),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds before the probe is stopped."),
) -> None:
    """Run the audit: Ragas and the reference on the same frozen verdicts, classified and reported."""
    try:
        suite = load_suite(list(cases or []))
        loaded_expectations = load_run_expectations(expectations)
        check_writable(out)
        source = resolve_ragas_source(python=python, checkout=ragas_checkout, git_url=ragas_git,
                                      allow_other_commit=allow_other_commit)
        selected = tuple(metric(name).name for name in metrics or ())
        result = run_audit(suite, loaded_expectations, source, python=python, timeout=timeout,
                           metrics=selected or None)
        write_reports(result.audit, out)
    except RagasNotInstalled as exc:
        raise fail(f"Ragas could not be run: {exc}", EXIT_NO_RAGAS)
    except HarnessInputError as exc:
        for line in exc.problems:
            errors.print(f"[bold red]error:[/] {line}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    except RagasUnavailable as exc:
        raise fail(f"Ragas could not be run: {exc}", EXIT_NO_RAGAS)
    print_summary(result.audit, out)
    raise typer.Exit(EXIT_DRIFT if result.audit.drift else EXIT_OK)


def main() -> None:  # pragma: no cover - console entry for python -m harness
    app(prog_name="ragas-compat")
