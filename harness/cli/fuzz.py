"""``ragas-compat fuzz``: differential fuzzing of Ragas against the reference.

``register(app)`` adds the command. Exit codes: 0 no divergence (errors raised by Ragas are
reported, not failed on); 1 at least one ``divergence``; 2 bad input or usage; 3 a probe process
could not run Ragas (``FuzzProbeFailed``, a ``RagasUnavailable``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from harness.cli.common import exits_on_harness_errors, positive_seconds, shown, stderr, stdout
from harness.compare.classify import CLASSIFICATIONS
from harness.errors import ExitCode
from harness.pipeline import DEFAULT_OUT
from harness.report.atomic import check_writable
from harness.tools.fuzz.generator import fuzz_metrics
from harness.tools.fuzz.report import FUZZ_FILES, write_fuzz_reports
from harness.tools.fuzz.runner import UNEXPLAINED, FuzzRun, default_workers, run_fuzz
from harness.tools.fuzz.shrink import smallest_per_classification


def print_fuzz_summary(run: FuzzRun, out: Path) -> None:
    console = stdout()
    used = [c for c in CLASSIFICATIONS if any(r.classification.name == c for r in run.rows)]
    table = Table(title=f"fuzz: seed {run.seed}, {run.cases} cases, "
                        f"Ragas {shown(run.provenance.get('ragas_version'))}")
    table.add_column("target")
    for name in used:
        table.add_column(name, justify="right")
    counts: dict[str, dict[str, int]] = {}
    for row in run.rows:
        per = counts.setdefault(row.target, {})
        per[row.classification.name] = per.get(row.classification.name, 0) + 1
    for target in run.targets:
        if target in counts:
            table.add_row(shown(target), *(str(counts[target].get(n, 0)) for n in used))
    console.print(table)
    for name, row in smallest_per_classification(run.rows, UNEXPLAINED).items():
        style = "bold red" if name == "divergence" else "yellow"
        console.print(f"[{style}]{name}[/] smallest: {shown(row.case.id)} × {shown(row.target)}: "
                      f"{shown(row.classification.explanation)}", highlight=False, soft_wrap=True)
    rate = run.contexts_scored / run.seconds if run.seconds else 0.0
    console.print(f"{len(run.rows)} pairs, {run.contexts_scored} scored contexts in {run.seconds:.1f} s "
                  f"({rate:.0f} contexts/s; {len(run.batches)} probe processes, {run.workers} at a time, "
                  f"{run.probe_seconds:.1f} s of probe wall time)", highlight=False)
    console.print(f"reports written to {shown(out)}/ (fuzz.md, fuzz.json)", highlight=False)


def _progress(done: int, total: int, probe_run) -> None:
    stderr().print(f"probe process {done}/{total} finished ({probe_run.seconds:.1f} s)", highlight=False)


@exits_on_harness_errors()
def fuzz(
    n: int = typer.Option(1000, "--n", help="Number of generated cases."),
    seed: int = typer.Option(0, "--seed", help="Seed; the same seed generates the same cases."),
    metric: Optional[list[str]] = typer.Option(
        None, "--metric", help=f"Metric(s) to fuzz (default all with a Ragas counterpart: {', '.join(fuzz_metrics())})."),
    out: Path = typer.Option(DEFAULT_OUT / "fuzz", "--out", help="Folder for fuzz.md and fuzz.json."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1,
                                             help="Cases per probe process (default: even split, at most 2000)."),
    workers: int = typer.Option(default_workers(), "--workers", min=1, help="Probe processes run at the same time."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    timeout: Optional[float] = typer.Option(None, "--timeout", callback=positive_seconds,
                                            help="Seconds per probe process (default max(600, 2 per case))."),
    check_cases: bool = typer.Option(False, "--check-cases",
                                     help="Validate every generated case with the case-file loader (~5 ms/case)."),
) -> None:
    """Generate cases from a seed, run them through Ragas and the reference, classify every pair."""
    check_writable(out, FUZZ_FILES)
    run = run_fuzz(n, seed, metric, workers=workers, batch_size=batch_size, python=python,
                   timeout=timeout, validate=check_cases, on_batch=_progress)
    write_fuzz_reports(run, out)
    print_fuzz_summary(run, out)
    raise typer.Exit(int(ExitCode.DRIFT if run.divergence else ExitCode.OK))


def register(app: typer.Typer) -> None:
    """Add the ``fuzz`` command to ``app``."""
    app.command("fuzz")(fuzz)
