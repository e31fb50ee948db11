"""``ragas-compat fuzz``: differential fuzzing of Ragas against the reference.

``register(app)`` adds the command. Rows are classified and explained as ``run`` does (the pin's rules,
``--expectations`` layered over them; ``ragas_compat.tools.fuzz.runner``). Exit codes: 0 nothing ``run``
would call drift (every difference a rule or case entry explains); 1 drift (``compare.verdict``: a
row no rule explains, an error no rule explains, a row the harness could not score, a value out of
range, an unexplained legacy-vs-collections pair); 2 bad input or usage; 3 a probe process could not
run Ragas (``FuzzProbeFailed``, a ``RagasUnavailable``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ragas_compat.cli.common import exits_on_harness_errors, positive_seconds, shown, stderr, stdout
from ragas_compat.cli.output import (
    OutputFormat,
    format_option,
    narrow_table,
    print_json,
    print_markdown,
    pruned,
    quiet_option,
    resolve_metrics,
)
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.errors import ExitCode
from ragas_compat.pipeline import DEFAULT_OUT, load_run_expectations
from ragas_compat.report.atomic import check_writable
from ragas_compat.report.markdown.table import markdown_table
from ragas_compat.tools.fuzz.delta_debug import DEFAULT_SHRINK_ROUNDS, check_shrink_rounds, shrink_fuzz_run
from ragas_compat.tools.fuzz.generator import fuzz_metrics
from ragas_compat.tools.fuzz.report import FUZZ_FILES, fuzz_to_json, write_fuzz_reports
from ragas_compat.tools.fuzz.runner import (
    FuzzRun,
    batch_timeout,
    default_workers,
    plan_batches,
    run_fuzz,
    unexplained_rows,
)
from ragas_compat.tools.fuzz.shrink import smallest_per_classification


def _target_counts(run: FuzzRun) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for row in run.rows:
        per = counts.setdefault(row.target, {})
        per[row.classification.name] = per.get(row.classification.name, 0) + 1
    return {target: counts[target] for target in run.targets if target in counts}


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[name]} {name}" for name in CLASSIFICATIONS if counts.get(name))


def _result_line(run: FuzzRun) -> str:
    """``fuzz: seed S, N cases, P pairs: <run's verdict status>`` ("expected", "N unexplained, K errors" ...)."""
    status = run.verdict.status if run.verdict is not None else "expected"
    return f"fuzz: seed {run.seed}, {run.cases} cases, {len(run.rows)} pairs: {status}"


def print_fuzz_summary(run: FuzzRun, out: Path, output: OutputFormat = OutputFormat.TABLE,
                       quiet: bool = False) -> None:
    if output is OutputFormat.JSON:
        print_json({"result": _result_line(run), **fuzz_to_json(run), "reports": [str(out / f) for f in FUZZ_FILES]})
        return
    if output is OutputFormat.MD:
        rows = [[target, sum(c.values()), _counts_text(c)] for target, c in _target_counts(run).items()]
        print_markdown([f"**{_result_line(run)}**", ""] + list(markdown_table(
            ["Ragas target", "pairs", "classifications"], rows)))
        return
    console = stdout()
    console.print(f"[{'bold red' if run.drift else 'bold green'}]{shown(_result_line(run))}[/]", highlight=False)
    if run.verdict is not None:
        console.print(shown(run.verdict.line()), highlight=False)
    if quiet:
        return
    table = narrow_table(("Ragas target", {"min_width": 34}), ("pairs", {"justify": "right"}),
                         ("classifications", {"min_width": 20}),
                         title=f"Ragas {shown(run.provenance.get('ragas_version'))}")
    for target, counts in _target_counts(run).items():
        table.add_row(shown(target), str(sum(counts.values())), _counts_text(counts))
    console.print(pruned(table))
    drift = unexplained_rows(run.rows)
    for name, row in smallest_per_classification(drift, {str(r.classification.name) for r in drift}).items():
        style = "bold red" if name == "divergence" else "yellow"
        shrunk = run.shrunk.get((name, row.target))
        how = f" (shrunk to size {shrunk.size}, {shrunk.status})" if shrunk is not None else ""
        console.print(f"[{style}]{name}[/] smallest: {shown(row.case.id)} × {shown(row.target)}{how}: "
                      f"{shown(row.classification.explanation)}", highlight=False)
    rate = run.contexts_scored / run.seconds if run.seconds else 0.0
    batches = "1 batch" if len(run.batches) == 1 else f"{len(run.batches)} batches"
    console.print(f"{len(run.rows)} pairs, {run.contexts_scored} scored contexts in {run.seconds:.1f} s "
                  f"({rate:.0f} contexts/s; {batches} served by one probe importing Ragas once and forking "
                  f"{run.workers} scoring process{'es' if run.workers > 1 else ''} per batch; "
                  f"{run.probe_seconds:.1f} s of probe wall time)",
                  highlight=False)
    console.print(f"rules and case entries: {shown(run.expectations)}", highlight=False)
    console.print(f"reports written to {shown(out)}/ (fuzz.md, fuzz.json)", highlight=False)


def _progress(done: int, total: int, probe_run) -> None:
    stderr().print(f"batch {done}/{total} scored ({probe_run.seconds:.1f} s)", highlight=False)


def _shrink_progress(number: int, findings: int, candidates: int) -> None:
    stderr().print(f"shrink round {number}: {findings} findings, {candidates} candidate cases", highlight=False)


@exits_on_harness_errors()
def fuzz(
    n: int = typer.Option(1000, "--n", help="Number of generated cases."),
    seed: int = typer.Option(0, "--seed", help="Seed; the same seed generates the same cases."),
    metric: Optional[list[str]] = typer.Option(
        None, "--metric", help=f"Metric(s) to fuzz (default all with a Ragas counterpart: {', '.join(fuzz_metrics())})."),
    out: Path = typer.Option(DEFAULT_OUT / "fuzz", "--out", help="Folder for fuzz.md and fuzz.json."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1,
                                             help="Cases per batch, all served by one probe (default: even split, at most 2000)."),
    workers: int = typer.Option(default_workers(), "--workers", min=1,
                                help="Scoring processes each probe forks after its one import of Ragas."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    timeout: Optional[float] = typer.Option(None, "--timeout", callback=positive_seconds,
                                            help="Seconds per batch (default max(600, 2 per case))."),
    shrink_rounds: int = typer.Option(
        DEFAULT_SHRINK_ROUNDS, "--shrink-rounds",
        help="Probe rounds to shrink the unexplained findings to 1-minimal cases (0: only select the smallest)."),
    expectations: Optional[Path] = typer.Option(None, "--expectations",
                                                help="Your expectations file (rules and case entries), applied "
                                                     "before the pin's rules, as for run."),
    check_cases: bool = typer.Option(False, "--check-cases",
                                     help="Validate every generated case with the case-file loader (~5 ms/case)."),
    output: OutputFormat = format_option(),
    quiet: bool = quiet_option(),
) -> None:
    """Generate cases from a seed, run them through Ragas and the reference, classify and explain every
    pair as run does (the pin's rules), and shrink each unexplained finding to a 1-minimal case (delta
    debugging, re-run through Ragas)."""
    metric = resolve_metrics(metric) or None
    from ragas_compat.tools.fuzz.runner import check_fuzz_arguments  # (issue 16) --n, --workers bounded

    check_fuzz_arguments(n, workers)  # before the output folder is touched
    check_shrink_rounds(shrink_rounds)
    loaded_expectations = load_run_expectations(expectations)
    check_writable(out, FUZZ_FILES)
    from ragas_compat.cli.run import scoring_progress
    from ragas_compat.runner import StartedProbe

    batches = plan_batches(n, batch_size)
    # the probe imports Ragas while the cases are generated
    started = StartedProbe(python=python, timeout=batch_timeout(batches[0][1], timeout)) if batches else None
    with scoring_progress(enabled=not quiet and output is OutputFormat.TABLE) as on_progress:
        run = run_fuzz(n, seed, metric, workers=workers, batch_size=batch_size, python=python, timeout=timeout,
                       validate=check_cases, on_batch=None if quiet or len(batches) < 2 else _progress,
                       on_progress=on_progress, started=started, expectations=loaded_expectations)
    run = shrink_fuzz_run(run, max_rounds=shrink_rounds, python=python, timeout=timeout,
                          on_round=None if quiet else _shrink_progress, expectations=loaded_expectations)
    write_fuzz_reports(run, out)
    print_fuzz_summary(run, out, output, quiet)
    raise typer.Exit(int(ExitCode.DRIFT if run.drift else ExitCode.OK))


def register(app: typer.Typer) -> None:
    """Add the ``fuzz`` command to ``app``."""
    app.command("fuzz")(fuzz)
