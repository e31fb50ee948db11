"""``ragas-compat matrix``: the same frozen cases across Ragas releases (typer + rich).

``register(app)`` adds the command. Exit codes: 0 the matrix was written and no finding of a
``--fail-on`` kind shows (columns may be unavailable; that is part of the report, not a finding);
1 a Ragas change between adjacent columns of a ``--fail-on`` kind (``ragas_compat.tools.matrix.verdict``;
the harness's own limits never count); 2 bad input or usage; 3 no column was scored (every Ragas
unavailable, or no row in any column: the reports are written and say why). ``--format table|md|json`` as for
``run``. Timings and environment build/reuse go to the console only, so the report files stay
deterministic.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragas_compat.cli.common import (
    case_judge_calls_option,
    case_memory_option,
    case_timeout_option,
    exits_on_harness_errors,
    positive_seconds,
    shown,
    stderr,
    stdout,
)
from ragas_compat.cli.output import OutputFormat, format_option, print_json, print_markdown
from ragas_compat.compare.verdict import DRIFT_KINDS, parse_fail_on
from ragas_compat.errors import ExitCode
from ragas_compat.pipeline import load_suite
from ragas_compat.report.atomic import check_writable
from ragas_compat.report.markdown.table import markdown_table
from ragas_compat.resources import DEFAULT_REPORT_DIR, display_path
from ragas_compat.runner import set_case_budget
from ragas_compat.tools.matrix.drift import Matrix, build_matrix, column_python
from ragas_compat.tools.matrix.environments import (
    DEFAULT_LOCK_DIR,
    DEFAULT_VERSIONS_FILE,
    Environment,
    default_cache_dir,
    ensure_environments,
    load_version_rules,
    parse_entries,
    record_lock,
    with_pythons,
)
from ragas_compat.tools.matrix.installers import INSTALLER_CHOICES, InstallFailed, choose_installer
from ragas_compat.tools.matrix.release_list import load_default_versions
from ragas_compat.tools.matrix.report import REPORT_FILES, cases_text, drift_what, write_matrix_reports
from ragas_compat.tools.matrix.run import VersionColumn, run_matrix
from ragas_compat.tools.matrix.verdict import MatrixFinding, matrix_exit_code, matrix_findings
from ragas_compat.write_preflight import check_output_folder

DEFAULT_MATRIX_OUT = DEFAULT_REPORT_DIR / "matrix"  # in the current folder; the committed one: --out reports/matrix --golden


def _environment_text(env: Environment) -> str:
    """``built (uv)``, ``reused (pip)``, ``checkout``: how the column's environment came to be."""
    return f"{env.status} ({env.installer})" if env.installer else env.status


def _column_json(env: Environment, column: VersionColumn) -> dict:
    return {"label": env.label, "ragas_version": column.version, "python": column_python(column),
            "environment": env.status,
            "installer": env.installer,
            "build_seconds": env.build_seconds, "size_bytes": env.size_bytes, "probe_seconds": column.probe_seconds,
            "available": column.available, "error": column.error, "notes": list(env.notes)}


def summary_json(matrix: Matrix, environments: list, columns: list, found: list[MatrixFinding],
                 fail_on: frozenset[str], out: Path, timings: dict) -> dict:
    return {"columns": [_column_json(env, column) for env, column in zip(environments, columns, strict=True)],
            "drifts": [{"from": d.before, "to": d.after, "kind": d.kind, "by": d.by, "cause": d.text,
                        **({"explained_by": d.rule} if d.rule else {}), "rows": len(d.rows)}
                       for d in matrix.drifts],
            "findings": [{"kind": f.kind, "from": f.before, "to": f.after, "case_id": f.case_id, "target": f.target,
                          "message": f.message, "fails": f.kind in fail_on} for f in found],
            "seconds": {name: round(value, 1) for name, value in timings.items()},
            "reports": [str(out / name) for name in REPORT_FILES]}


def summary_markdown(matrix: Matrix, environments: list, columns: list, found: list[MatrixFinding],
                     fail_on: frozenset[str], out: Path) -> list[str]:
    lines = ["## Ragas version matrix", ""]
    lines += markdown_table(["column", "Ragas", "environment", "build s", "size MB", "status"],
                            [[env.label, column.version or "?", _environment_text(env),
                              "" if env.build_seconds is None else f"{env.build_seconds:.0f}",
                              "" if env.size_bytes is None else f"{env.size_bytes / 1e6:.0f}",
                              "ok" if column.available else f"unavailable: {column.error}"]
                             for env, column in zip(environments, columns, strict=True)])
    total = matrix.suite.get("cases") or 0
    for by, title in (("ragas", "Ragas drifts"), ("harness", "Not compared (the harness's limits)")):
        drifts = [d for d in matrix.drifts if d.by == by]
        if drifts:
            lines += ["", f"### {title}", ""]
            lines += markdown_table(["from → to", "cause", "what", "cases"],
                                    [[f"{d.before} → {d.after}", d.kind, drift_what(d),
                                      cases_text([case for case, _ in d.rows], total)] for d in drifts])
    failing = sum(1 for f in found if f.kind in fail_on)
    lines += ["", f"Findings: {len(found)} ({failing} of a --fail-on kind).", "",
              f"Reports: {', '.join(f'`{out / name}`' for name in REPORT_FILES)}"]
    return lines


def _print_summary(console: Console, matrix: Matrix, environments: list, columns: list, timings: dict) -> None:
    table = Table(title="Ragas version matrix")
    for name in ("column", "Ragas", "Python", "environment", "build s", "size MB", "probe s", "status"):
        table.add_column(name)
    for env, column in zip(environments, columns, strict=True):
        table.add_row(shown(env.label), shown(column.version or "?"), shown(column_python(column) or "?"),
                      _environment_text(env),
                      "" if env.build_seconds is None else f"{env.build_seconds:.0f}",
                      "" if env.size_bytes is None else f"{env.size_bytes / 1e6:.0f}",
                      "" if column.probe_seconds is None else f"{column.probe_seconds:.1f}",
                      "ok" if column.available else shown(f"unavailable: {column.error}"))
    console.print(table)
    for env in environments:
        for note in env.notes:
            console.print(f"[dim]{shown(env.label)}: {shown(note)}[/]", highlight=False)
    total = matrix.suite.get("cases") or 0
    for drift in matrix.drifts:
        cases = cases_text([case for case, _ in drift.rows], total)
        if len(cases) > 80:
            cases = cases[:77] + "..."
        label = "[yellow]drift[/]" if drift.by == "ragas" else "[dim]not compared (harness)[/]"
        explained = f" [green](explained: drift rule {shown(drift.rule)})[/]" if drift.rule else ""
        console.print(f"{label} {shown(drift.before)} → {shown(drift.after)} {drift.kind}: "
                      f"{shown(drift.text[:120])}{explained} [dim]({len(drift.rows)} rows; {shown(cases)})[/]",
                      soft_wrap=True, highlight=False)
    console.print(f"environments {timings['environments']:.1f} s, probes {timings['probes']:.1f} s, "
                  f"total {timings['total']:.1f} s", highlight=False)


MATRIX_HELP = (
    "Run the same frozen cases through several Ragas releases (each in its own cached virtualenv) "
    "and report what drifted between adjacent versions: matrix.md, matrix.json, matrix.html.")


@exits_on_harness_errors()
def matrix_command(
    versions: Optional[str] = typer.Option(None, "--versions",
                                           help="Comma-separated releases (0.2.15), specifiers (>=0.3,<0.4) "
                                                "or checkout:PATH entries, oldest first, each optionally "
                                                "on another Python (0.4.3@3.13); default: "
                                                "default_versions of --versions-file."),
    pythons: Optional[str] = typer.Option(None, "--pythons",
                                          help="Comma-separated Pythons (3.11,3.13): every release without its "
                                               "own @PYTHON becomes one column per Python, each in its own "
                                               "environment (cached per release and Python)."),
    cases: Optional[list[Path]] = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    out: Path = typer.Option(DEFAULT_MATRIX_OUT, "--out", help="Folder for matrix.md, matrix.json, matrix.html."),
    golden: bool = typer.Option(False, "--golden",
                                help="Write plain files under their fixed names (no content-named set folder, no "
                                     "symlinks), as the repository's committed reports/matrix is kept."),
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
                                      help="Write each built release's freeze to --lock-dir."),
    installer_name: str = typer.Option("auto", "--installer",
                                       help=f"What builds the environments: {', '.join(INSTALLER_CHOICES)} "
                                            "(auto: uv when found, else pip)."),
    fail_on: Optional[list[str]] = typer.Option(None, "--fail-on",
                                                help="Finding kinds that make the exit code 1, comma-separated or "
                                                     f"repeated: all (default), none, {', '.join(DRIFT_KINDS)}."),
    case_timeout: Optional[float] = case_timeout_option(),
    case_judge_calls: Optional[int] = case_judge_calls_option(),
    case_memory: Optional[float] = case_memory_option(),
    telemetry: bool = typer.Option(False, "--telemetry",
                                   help="Leave Ragas's telemetry on in every column: each network attempt is "
                                        "blocked and counted, and a change in the count is a drift."),
    output: OutputFormat = format_option(),
) -> None:
    set_case_budget(judge_calls=case_judge_calls, case_seconds=case_timeout, memory_gib=case_memory)
    console = stdout() if output is OutputFormat.TABLE else stderr()  # progress; stdout keeps md/json clean
    started = time.perf_counter()
    kinds = parse_fail_on(fail_on)
    entries = with_pythons(parse_entries(versions if versions is not None else
                                         ",".join(load_default_versions(versions_file))), pythons)
    rules = load_version_rules(versions_file)
    suite = load_suite(list(cases or []))
    cache = cache_dir or default_cache_dir()
    if any(entry.kind == "release" for entry in entries):  # the releases' virtualenvs go there
        check_output_folder(cache, "--cache-dir")  # before any build: a file, read-only or full is exit 2
    if record_locks:
        check_output_folder(lock_dir, "--lock-dir")
    check_writable(out, REPORT_FILES)
    installer = choose_installer(installer_name.strip().lower())
    columns_bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=console, transient=False)
    with columns_bar:
        envs_task = columns_bar.add_task("environments", total=len(entries))
        environments = ensure_environments(
            entries, cache_dir=cache, rules=rules, installer=installer, jobs=jobs, lock_dir=lock_dir,
            progress=lambda label, event: columns_bar.advance(envs_task) if event == "done" else
            columns_bar.update(envs_task, description=f"environments (building {shown(label)})"))
        columns_bar.update(envs_task, description="environments")
        if record_locks:
            for env in environments:
                if env.kind == "release" and env.available:
                    try:
                        written = f"lock written: {shown(display_path(record_lock(env, installer, lock_dir)))}"
                    except InstallFailed as exc:
                        written = f"[yellow]no lock for {shown(env.label)}[/]: {shown(str(exc))}"
                    console.print(written, highlight=False)
        env_seconds = time.perf_counter() - started
        probes_task = columns_bar.add_task("probes", total=len(environments))
        columns, probe_seconds = run_matrix(
            environments, suite, timeout=timeout, jobs=jobs, telemetry=telemetry,
            progress=lambda label, event: columns_bar.advance(probes_task) if event == "done" else None)
    suite_info = {"name": suite.name, "source": suite.source if not cases else
                  ", ".join(display_path(p) for p in cases), "cases": len(suite.cases), "telemetry": telemetry}
    matrix = build_matrix(columns, suite_info)
    write_matrix_reports(matrix, out, golden=golden)
    found = matrix_findings(matrix)
    timings = {"environments": env_seconds, "probes": probe_seconds, "total": time.perf_counter() - started}
    if output is OutputFormat.JSON:
        print_json(summary_json(matrix, environments, columns, found, kinds, out, timings))
    elif output is OutputFormat.MD:
        print_markdown(summary_markdown(matrix, environments, columns, found, kinds, out))
    else:
        _print_summary(console, matrix, environments, columns, timings)
        failing = sum(1 for f in found if f.kind in kinds)
        console.print(f"findings: {len(found)} ({failing} of a --fail-on kind)", highlight=False)
        console.print(f"reports written to {shown(out)}/ ({', '.join(REPORT_FILES)})", highlight=False)
    if not any(column.available and column.audit.rows for column in columns):
        # a matrix of unavailable columns compares nothing: not a pass
        stderr().print(f"error: no column was scored ({len(columns)} unavailable: "
                       f"{shown('; '.join(f'{c.label}: {c.error}' for c in columns[:5]))}); the reports show "
                       "why each is unavailable", highlight=False)
        raise typer.Exit(int(ExitCode.NO_RAGAS))
    raise typer.Exit(int(matrix_exit_code(found, kinds)))


def register(app: typer.Typer) -> None:
    """Add the ``matrix`` command to ``app``."""
    app.command("matrix", help=MATRIX_HELP)(matrix_command)
