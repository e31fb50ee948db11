"""``ragas-compat matrix``: the same frozen cases across Ragas releases (typer + rich).

``register(app)`` adds the command. Exit codes: 0 the matrix was written (columns may be
unavailable; that is part of the report); 2 bad input or usage. Timings and environment
build/reuse go to the console only, so the report files stay deterministic.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness.cli.common import exits_on_harness_errors, positive_seconds, shown, stdout
from harness.errors import ExitCode
from harness.pipeline import load_suite
from harness.report.atomic import check_writable
from harness.resources import DEFAULT_REPORT_DIR, display_path
from harness.tools.matrix.drift import Matrix, build_matrix
from harness.tools.matrix.environments import (
    DEFAULT_LOCK_DIR,
    DEFAULT_VERSIONS_FILE,
    PipInstaller,
    default_cache_dir,
    ensure_environments,
    load_version_rules,
    parse_entries,
    record_lock,
)
from harness.tools.matrix.report import REPORT_FILES, cases_text, write_matrix_reports
from harness.tools.matrix.run import run_matrix

DEFAULT_MATRIX_OUT = DEFAULT_REPORT_DIR / "matrix"  # in the current folder; the committed one: --out reports/matrix


def _print_summary(console: Console, matrix: Matrix, environments: list, columns: list, timings: dict) -> None:
    table = Table(title="Ragas version matrix")
    for name in ("column", "Ragas", "environment", "build s", "size MB", "probe s", "status"):
        table.add_column(name)
    for env, column in zip(environments, columns, strict=True):
        table.add_row(shown(env.label), shown(column.version or "?"), env.status,
                      "" if env.build_seconds is None else f"{env.build_seconds:.0f}",
                      "" if env.size_bytes is None else f"{env.size_bytes / 1e6:.0f}",
                      "" if column.probe_seconds is None else f"{column.probe_seconds:.1f}",
                      "ok" if column.available else shown(f"unavailable: {column.error}"))
    console.print(table)
    total = matrix.suite.get("cases") or 0
    for drift in matrix.drifts:
        cases = cases_text([case for case, _ in drift.rows], total)
        if len(cases) > 80:
            cases = cases[:77] + "..."
        console.print(f"[yellow]drift[/] {shown(drift.before)} → {shown(drift.after)} {drift.kind}: "
                      f"{shown(drift.text[:120])} [dim]({len(drift.rows)} rows; {shown(cases)})[/]",
                      soft_wrap=True, highlight=False)
    console.print(f"environments {timings['environments']:.1f} s, probes {timings['probes']:.1f} s, "
                  f"total {timings['total']:.1f} s", highlight=False)


MATRIX_HELP = (
    "Run the same frozen cases through several Ragas releases (each in its own cached virtualenv) "
    "and report what drifted between adjacent versions: matrix.md, matrix.json, matrix.html.")


@exits_on_harness_errors()
def matrix_command(
    versions: str = typer.Option(..., "--versions",
                                 help="Comma-separated releases (0.2.15), specifiers (>=0.3,<0.4) "
                                      "or checkout:PATH entries, oldest first."),
    cases: Optional[list[Path]] = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    out: Path = typer.Option(DEFAULT_MATRIX_OUT, "--out", help="Folder for matrix.md, matrix.json, matrix.html."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir",
                                             help="Virtualenv cache (default ~/.cache/ragas-compat/envs)."),
    versions_file: Path = typer.Option(DEFAULT_VERSIONS_FILE, "--versions-file",
                                       help="Per-version extra requirements (pinned/versions.toml)."),
    jobs: int = typer.Option(2, "--jobs", min=1, help="Environments built / probes run at a time."),
    timeout: float = typer.Option(600.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before one probe is stopped."),
    lock_dir: Path = typer.Option(DEFAULT_LOCK_DIR, "--lock-dir",
                                  help="pip constraints per release (<version>.txt), used when present."),
    record_locks: bool = typer.Option(False, "--record-locks",
                                      help="Write each built release's pip freeze to --lock-dir."),
) -> None:
    console = stdout()
    started = time.perf_counter()
    entries = parse_entries(versions)
    rules = load_version_rules(versions_file)
    suite = load_suite(list(cases or []))
    check_writable(out, REPORT_FILES)
    cache = cache_dir or default_cache_dir()
    columns_bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=console, transient=False)
    with columns_bar:
        envs_task = columns_bar.add_task("environments", total=len(entries))
        environments = ensure_environments(
            entries, cache_dir=cache, rules=rules, jobs=jobs, lock_dir=lock_dir,
            progress=lambda label, event: columns_bar.advance(envs_task) if event == "done" else
            columns_bar.update(envs_task, description=f"environments (building {shown(label)})"))
        columns_bar.update(envs_task, description="environments")
        if record_locks:
            for env in environments:
                if env.kind == "release" and env.available:
                    console.print(f"lock written: {shown(display_path(record_lock(env, PipInstaller(), lock_dir)))}",
                                  highlight=False)
        env_seconds = time.perf_counter() - started
        probes_task = columns_bar.add_task("probes", total=len(environments))
        columns, probe_seconds = run_matrix(
            environments, suite, timeout=timeout, jobs=jobs,
            progress=lambda label, event: columns_bar.advance(probes_task) if event == "done" else None)
    suite_info = {"name": suite.name, "source": suite.source if not cases else
                  ", ".join(display_path(p) for p in cases), "cases": len(suite.cases)}
    matrix = build_matrix(columns, suite_info)
    write_matrix_reports(matrix, out)
    _print_summary(console, matrix, environments, columns,
                   {"environments": env_seconds, "probes": probe_seconds,
                    "total": time.perf_counter() - started})
    console.print(f"reports written to {shown(out)}/ ({', '.join(REPORT_FILES)})", highlight=False)
    raise typer.Exit(int(ExitCode.OK))


def register(app: typer.Typer) -> None:
    """Add the ``matrix`` command to ``app``."""
    app.command("matrix", help=MATRIX_HELP)(matrix_command)
