"""``ragas-compat run``: the audit (Ragas and the reference on the same frozen verdicts).

``register(app)`` adds the command. Exit codes (``ragas_compat.errors.ExitCode``): 0 no drift of a
``--fail-on`` kind; 1 drift (``ragas_compat.compare.verdict``: a row no rule explains, a divergence or
an error no rule explains, a value out of range, a problem in the expectations file, a row the
harness could not score); 2 bad input or usage (also a suite of which no row was scored: nothing
would be checked; refused before Ragas runs when no metric with a Ragas target applies to any case);
3 Ragas could not be run at all; 4 internal error (``ragas_compat.cli.common``).
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ragas_compat.cases.loader import packed
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
from ragas_compat.compare.audit import Audit
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.compare.findings import DRIFT_KINDS
from ragas_compat.compare.headlines import headline_json
from ragas_compat.compare.replay import replay_account
from ragas_compat.compare.verdict import exit_code, parse_fail_on, verdict_json
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.names import short_label
from ragas_compat.metrics.registry import metric
from ragas_compat.pin import resolve_ragas_source
from ragas_compat.pipeline import (
    DEFAULT_OUT,
    REPORT_FILES,
    load_run_expectations,
    load_suite,
    may_score_a_row,
    no_row_message,
    run_audit,
    write_reports,
)
from ragas_compat.report.atomic import check_writable
from ragas_compat.report.markdown.findings import findings_markdown
from ragas_compat.report.markdown.table import markdown_table
from ragas_compat.runner import StartedProbe, default_workers, set_case_budget, take_early_probe
from ragas_compat.tools import shards


def counts_text(counts) -> str:
    """``52 epsilon, 18 empty_as_zero`` in classification order."""
    return ", ".join(f"{counts[name]} {name}" for name in CLASSIFICATIONS if counts.get(name))


def summary_json(audit: Audit, out: Path, fail_on: frozenset[str]) -> dict:
    found = audit.findings
    return {"verdict": verdict_json(audit), "findings": [headline_json(f) for f in audit.headlines],
            "by_metric": {name: {c: counts.get(c, 0) for c in CLASSIFICATIONS if counts.get(c)}
                          for name, counts in sorted(audit.counts(lambda r: r.spec.name).items())},
            "drift": [{"kind": f.kind, "case_id": f.case_id, "target": f.target, "classification": f.classification,
                       "expected": f.expected, "message": f.message, "fails": f.kind in fail_on} for f in found],
            "replay": account.as_json() if (account := replay_account(audit)) is not None else None,
            "ragas_version": audit.provenance.get("ragas_version"),
            "pin_status": (audit.provenance.get("ragas") or {}).get("pin_status"),
            "reports": [str(out / name) for name in REPORT_FILES]}


def summary_markdown(audit: Audit, out: Path) -> list[str]:
    lines = findings_markdown(audit)
    rows = [[name, sum(counts.values()), counts_text(counts)]
            for name, counts in sorted(audit.counts(lambda r: r.spec.name).items())]
    lines += ["Classifications per metric:", ""] + list(markdown_table(["metric", "rows", "classifications"], rows))
    from ragas_compat.report.escape import md_code  # --out is user text

    return lines + [f"Reports: {', '.join(md_code(out / name) for name in REPORT_FILES)}"]


@contextlib.contextmanager
def scoring_progress(*, enabled: bool):
    """A progress bar on stderr (a terminal only) with counts and an ETA while the probe scores;
    yields its update callback, or None."""
    console = stderr()
    if not enabled or not console.is_terminal:
        yield None
        return
    columns = (TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("scoring", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        yield update


DRIFT_LINES = 10  # drift lines printed without --verbose; the reports list every one
FINDING_LINES = 10  # findings printed without --verbose (one per metric with a mean gap, and the rest)


def print_summary(audit: Audit, out: Path, fail_on: frozenset[str] = frozenset(DRIFT_KINDS),
                  output: OutputFormat = OutputFormat.TABLE, quiet: bool = False, verbose: bool = False) -> None:
    """The verdict line first and its notes (the replay accounting of a recorded suite, what the verdict
    means), then the findings (one sentence and one example each), the counts per metric, the first drift
    lines (all with ``verbose``) and where the reports are; ``quiet``: the verdict line only (``--quiet`` is
    the one-line result; the notes are in every report). The length does not grow with the number of rows
    unless ``verbose``."""
    if output is OutputFormat.JSON:
        print_json(summary_json(audit, out, fail_on))
        return
    if output is OutputFormat.MD:
        print_markdown(summary_markdown(audit, out))
        return
    console = stdout()
    v = audit.verdict
    console.print(f"[{'bold green' if v.ok else 'bold red'}]{shown(v.line())}[/]", highlight=False)
    if quiet:
        return
    for note in v.notes():  # the replay accounting (a recorded suite), what the verdict means, what next
        console.print(shown(note), highlight=False)
    console.print(f"Ragas {shown(audit.provenance.get('ragas_version'))}, suite {shown(audit.suite.name)}: "
                  "findings, most consequential first", highlight=False)
    listing = Table.grid(padding=(0, 1))
    listing.add_column(justify="right", no_wrap=True)
    listing.add_column(overflow="fold")
    shown_findings = audit.headlines if verbose else audit.headlines[:FINDING_LINES]
    for index, finding in enumerate(shown_findings, start=1):
        e = finding.example
        where = ", ".join(x for x in (e.case_id, short_label(e.metric) if e.metric else None, e.target) if x)
        listing.add_row(f"{index}.", shown(finding.sentence))
        listing.add_row("", f"[dim]e.g. {shown(where)}: Ragas {shown(e.ragas)}; reference {shown(e.reference)}[/]")
    console.print(listing, highlight=False)
    if len(audit.headlines) > len(shown_findings):
        console.print(f"... and {len(audit.headlines) - len(shown_findings)} more findings (report.md lists every "
                      "one; --verbose prints them here)", highlight=False)
    unexpected_by_metric = Counter(row.spec.name for row in audit.unexpected)  # once, not once per metric
    any_unexpected = bool(unexpected_by_metric)
    columns = [("metric", {"min_width": 10}), ("rows", {"justify": "right"}), ("classifications", {"min_width": 20})]
    table = narrow_table(*columns, *([("unexpected", {"justify": "right"})] if any_unexpected else []))
    for metric_name, counts in sorted(audit.counts(lambda r: r.spec.name).items()):
        unexpected = unexpected_by_metric[metric_name]
        cells = [shown(short_label(metric_name)), str(sum(counts.values())), counts_text(counts)]
        table.add_row(*cells, *([str(unexpected)] if any_unexpected else []))
    console.print(pruned(table))
    console.print(f"pin: {shown(audit.provenance['ragas'].get('pin_status'))}", highlight=False)
    if audit.provenance["ragas"].get("warning"):
        console.print(f"[bold yellow]warning:[/] {shown(audit.provenance['ragas']['warning'])}", highlight=False)
    found = audit.findings
    for finding in found if verbose else found[:DRIFT_LINES]:
        failing_kind = finding.kind in fail_on
        console.print(f"[{'red' if failing_kind else 'yellow'}]{'drift' if failing_kind else 'finding'}[/] "
                      f"{shown(finding.line())}", highlight=False)
    if len(found) > DRIFT_LINES and not verbose:
        console.print(f"... and {len(found) - DRIFT_LINES} more drift lines (report.md lists every one; "
                      "--verbose prints them here)", highlight=False)
    console.print(f"reports written to {shown(out)}/ ({', '.join(REPORT_FILES)})", highlight=False)


@exits_on_harness_errors()
def run(
    cases: Optional[list[Path]] = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    out: Path = typer.Option(DEFAULT_OUT, "--out",
                             help="Folder for report.md, report.html, report.json, junit.xml (default: ./ragas-compat-report; "
                                  "the repository's committed reports: --out reports --golden)."),
    golden: bool = typer.Option(False, "--golden",
                                help="Write plain files under their fixed names (no content-named set folder, no "
                                     "symlinks), as the repository's committed golden reports are kept."),
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
    metrics: Optional[list[str]] = typer.Option(None, "--metric",
                                                help="Only these metrics (repeatable; registry names such as "
                                                     "context_precision_with_reference)."),
    timeout: float = typer.Option(600.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before the probe (or any other subprocess) is stopped."),
    workers: int = typer.Option(default_workers(), "--workers", min=1,
                                help="Processes that score the cases (forked after one Ragas import); "
                                     "default: one per core."),
    output: OutputFormat = format_option(),
    quiet: bool = quiet_option(),
    verbose: bool = typer.Option(False, "--verbose", help="Print every finding and drift line (default: the "
                                                          f"first {FINDING_LINES} and {DRIFT_LINES})."),
    case_timeout: Optional[float] = case_timeout_option(),
    case_judge_calls: Optional[int] = case_judge_calls_option(),
    case_memory: Optional[float] = case_memory_option(),
    shard: Optional[str] = typer.Option(None, "--shard", metavar="K/N",
                                        help="Score only shard K of N (cases split by a hash of their id) and write "
                                             "OUT/shard.json; `ragas-compat merge` makes the N shards one report set."),
) -> None:
    """Run the audit: Ragas and the reference on the same frozen verdicts, classified and reported."""
    set_case_budget(judge_calls=case_judge_calls, case_seconds=case_timeout, memory_gib=case_memory)
    installed = ragas_checkout is None and ragas_git is None
    # the installed Ragas needs no source resolution first: its probe imports Ragas meanwhile
    started = (take_early_probe(python=python, timeout=timeout) or StartedProbe(python=python, timeout=timeout)
               if installed else None)
    with started or contextlib.nullcontext():
        kinds = parse_fail_on(fail_on)
        selected = tuple(metric(name).name for name in resolve_metrics(metrics))
        part = shards.parse_shard(shard) if shard is not None else None
        if part is not None and golden:
            raise HarnessInputError("--golden with --shard: a shard writes shard.json, not reports; give --golden "
                                    "to `ragas-compat merge`", field="--golden")
        suite = load_suite(list(cases or []))
        if part is None and not may_score_a_row(suite, selected or None):
            raise HarnessInputError(no_row_message(suite, selected) + "; no report written", field="--cases")
        # each metric named with --metric is checked, or the run says why not: one that no case can score
        # was dropped silently while the others made the verdict
        unscorable = [name for name in selected if not may_score_a_row(suite, (name,))]
        if part is None and unscorable:
            no_class = [name for name in unscorable if not metric(name).ragas_targets]
            raise HarnessInputError(
                (f"--metric {', '.join(no_class)}: no Ragas class computes it (the reference alone: `ragas-compat "
                 "explain` shows it), so run would check nothing of it" if no_class else no_row_message(suite, unscorable))
                + "; drop it from --metric or add cases with its inputs; no report written", field="--metric",
                value=unscorable)
        loaded_expectations = load_run_expectations(expectations)
        check_writable(out, (shards.SHARD_FILE,) if part else REPORT_FILES)
        source = resolve_ragas_source(python=python, checkout=ragas_checkout, git_url=ragas_git,
                                      allow_other_commit=allow_other_commit, timeout=timeout,
                                      located=started.located() if started else None)
        # the cases' raw objects are read whole only for the probe's request (a shard's: and the suite's
        # digest): packed, they take a third
        suite = packed(suite)
        if part is not None:
            with scoring_progress(enabled=not quiet and output is OutputFormat.TABLE) as on_progress:
                document = shards.run_shard(suite, part, loaded_expectations, source, python=python,
                                            case_files=list(cases or []), expectations_file=expectations,
                                            timeout=timeout, metrics=selected or None, workers=workers,
                                            started=started, on_progress=on_progress)
            path = shards.write_shard(document, out)
            if not quiet:
                stdout().print(f"shard {part}: {document['shard']['cases']} of {len(suite.cases)} cases scored; "
                               f"written to {shown(path)} (merge the {part.count} shards with `ragas-compat merge`)",
                               highlight=False)
            raise typer.Exit(0)
        with scoring_progress(enabled=not quiet and output is OutputFormat.TABLE) as on_progress:
            audit = run_audit(suite, loaded_expectations, source, python=python, timeout=timeout,
                              metrics=selected or None, workers=workers, started=started,
                              on_progress=on_progress, keep_output=False).audit
    scored = {row.spec.name for row in audit.rows}
    unscored = [name for name in selected if name not in scored]
    if not audit.rows or unscored:  # a suite that scores nothing checks nothing: refused, not passed
        named = unscored if audit.rows else list(selected)
        raise HarnessInputError(
            f"no (case, Ragas target) row was scored for suite {audit.suite.name!r} ({len(audit.suite.cases)} "
            f"case(s){', metrics ' + ', '.join(named) if named else ''}): no Ragas class applies to these "
            "inputs, so nothing would be checked; no report written", field="--cases")
    write_reports(audit, out, golden=golden)
    print_summary(audit, out, kinds, output, quiet, verbose)
    raise typer.Exit(int(exit_code(audit, kinds)))


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to ``app``."""
    app.command("run")(run)
