"""``ragas-compat bench``: the project's performance measurements as a table (typer + rich).

``register(app)`` adds the command. The measurements live in ``ragas_compat.tools.bench``; this module
only prints them and writes ``--json`` (checked with ``write_preflight.check_output_file`` before anything
is measured, then written atomically). Exit code 0 whenever the bench ran (a missed target is reported,
not an error); 2 when the JSON file cannot be written (a folder, FIFO or device there is refused, not
replaced).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ragas_compat.cli.common import exits_on_harness_errors, shown, stderr, stdout
from ragas_compat.cli.output import (
    OutputFormat,
    format_option,
    narrow_table,
    print_json,
    print_markdown,
    pruned,
    quiet_option,
)
from ragas_compat.errors import HarnessInputError
from ragas_compat.report.markdown.table import markdown_table
from ragas_compat.tools.bench import ROW_IDS, BenchRow, bench_to_json, run_bench, summarize, write_json
from ragas_compat.write_preflight import check_output_file


def _seconds(value: float, unit: str) -> str:
    """A sample in its unit: seconds (scaled to ms or µs), ms, KiB of memory (as MiB) or bytes (as kB, MB)."""
    if unit == "KiB":
        return f"{value / 1024:.0f} MiB"
    if unit == "bytes":
        return f"{value / 1e6:.2f} MB" if value >= 1e6 else f"{value / 1e3:.1f} kB"
    if unit == "ms":
        return f"{value:.3f} ms"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3f} ms"
    return f"{value * 1e6:.2f} µs"


def _cells(row: BenchRow) -> list[str]:
    if not row.measured:
        return ["—", f"not measured: {shown(row.reason)}", "—", "—", "—"]
    summary = summarize(row.samples)
    cells = [str(summary.n), _seconds(summary.median, row.unit),
             f"{_seconds(summary.minimum, row.unit)} – {_seconds(summary.maximum, row.unit)}"]
    if row.ratios:
        ratio = summarize(row.ratios)
        cells.append(f"ratio {ratio.median:.3f} ({ratio.minimum:.3f}–{ratio.maximum:.3f})")
        if row.target is None:
            cells.append("no target")
        else:
            verdict = "[green]met[/]" if row.met else "[bold red]missed[/]"
            cells.append(f"{'≥' if row.at_least else '≤'} {row.target:g} {verdict}")
    else:
        cells.append(f"exponent {row.exponent:.2f} (last decade {row.tail_exponent:.2f})")
        cells.append(f"at K = {row.extra['largest_k']:,}")
    return cells


def bench_table(rows: list[BenchRow], quick: bool) -> Table:
    table = narrow_table(("measurement", {"min_width": 14}), ("n", {"justify": "right"}),
                         ("median", {"justify": "right", "min_width": 8}), ("min–max", {"min_width": 9}),
                         ("ratio / exponent", {"min_width": 10}), ("target / size", {"min_width": 8}),
                         title=f"ragas-compat bench{' --quick' if quick else ''}: median and min–max per repetition")
    for row in rows:
        table.add_row(shown(row.measurement), *_cells(row))
    return table


def scaling_table(rows: list[BenchRow]) -> Table | None:
    scaling = [row for row in rows if row.points]
    if not scaling:
        return None
    ks = sorted({point["k"] for row in scaling for point in row.points})
    table = narrow_table(("implementation", {"min_width": 12}),
                         *((f"K={k:,}", {"justify": "right", "min_width": 7}) for k in ks),
                         ("exponent", {"justify": "right"}), title="scaling: median seconds per call by K")
    for row in scaling:
        by_k = {point["k"]: point["median"] for point in row.points}
        table.add_row(shown(row.measurement.removeprefix("scaling: ")),
                      *(_seconds(by_k[k], "s") if k in by_k else "—" for k in ks), f"{row.exponent:.2f}")
    return table


def bench_markdown(rows: list[BenchRow], quick: bool) -> list[str]:
    cells = [[row.measurement, *(_cells(row))] for row in rows]
    cells = [[cell.replace("[green]", "").replace("[bold red]", "").replace("[/]", "") for cell in row] for row in cells]
    return [f"**ragas-compat bench{' --quick' if quick else ''}**: median and min–max per repetition", ""] + \
        list(markdown_table(["measurement", "n", "median", "min–max", "ratio / exponent", "target / size"], cells))


BENCH_HELP = (
    "Measure the harness against its floors, alternating measured and baseline: run vs "
    "`import ragas.metrics` (and vs every import the audit needs), probe vs a minimal stub loop per "
    "scored context, reference vs Ragas context-AP scaling (growth exponents), and a warm matrix vs "
    "single-version runs when environments are built. Prints median and min–max; ratios are the "
    "numbers to compare.")


@exits_on_harness_errors()
def bench_command(
    quick: bool = typer.Option(False, "--quick", help="Fewer repetitions and smaller K (well under a minute)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Also write the numbers to this JSON file."),
    row: Optional[list[str]] = typer.Option(None, "--row", help="Measure only this row (repeatable; a row id, "
                                            "e.g. record_vs_evaluate, fuzz_per_process, run_vs_ragas_floor)."),
    output: OutputFormat = format_option(),
    quiet: bool = quiet_option(),
) -> None:
    console = stdout()
    progress = stderr()
    unknown = sorted(set(row or ()) - set(ROW_IDS))
    if unknown:
        raise HarnessInputError(f"--row {unknown[0]}: no such bench row; rows: {', '.join(ROW_IDS)}", field="--row",
                                value=unknown[0])
    if json_path is not None:  # a folder, FIFO, device or unwritable place: exit 2 before anything is measured
        check_output_file(json_path, "--json")
    rows = run_bench(quick, only=row or None,
                     progress=(lambda message: None) if quiet else
                     lambda message: progress.print(f"[dim]bench: {shown(message)}…[/]", highlight=False))
    if json_path is not None:  # HarnessInputError naming --json when it cannot be written (or is no longer a file)
        write_json(json_path, bench_to_json(rows, quick=quick))
    if output is OutputFormat.JSON:
        print_json(bench_to_json(rows, quick=quick))
        return
    if output is OutputFormat.MD:
        print_markdown(bench_markdown(rows, quick))
        return
    if quiet:
        missed = [row.measurement for row in rows if row.met is False]
        console.print(f"bench: {sum(1 for r in rows if r.measured)} measured, "
                      + (f"targets missed: {', '.join(missed)}" if missed else "every target met"), highlight=False)
        return
    console.print(pruned(bench_table(rows, quick)))
    extra = scaling_table(rows)
    if extra is not None:
        console.print(pruned(extra))
    for row in rows:
        if not row.measured:
            console.print(f"{shown(row.measurement)}: not measured: {shown(row.reason)}", highlight=False,
                          soft_wrap=True)
        for note in row.notes:
            console.print(f"[dim]{shown(row.measurement)}:[/] {shown(note)}", highlight=False, soft_wrap=True)
    if json_path is not None:
        console.print(f"numbers written to {shown(json_path)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command to ``app``."""
    app.command("bench", help=BENCH_HELP)(bench_command)
