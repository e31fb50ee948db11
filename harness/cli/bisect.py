"""``ragas-compat bisect``: the first Ragas commit where one cell (case, target) changes.

Exit codes: 0 the cell is unchanged between --good and --bad, or it changed but no finding of a
``--fail-on`` kind shows (``ragas_compat.tools.bisect.finding_kinds``); 1 it changed with such a finding
(the first bad commit, or the candidates, are printed either way); 2 bad input or usage (a bad ref,
--good not an ancestor of --bad, a cell that cannot be scored at --good or --bad, a repository git
cannot read or a URL it cannot clone).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ragas_compat.cli.common import exits_on_harness_errors, positive_seconds, shown, stderr, stdout
from ragas_compat.cli.output import OutputFormat, format_option, narrow_table, print_json, print_markdown
from ragas_compat.compare.verdict import DRIFT_KINDS, parse_fail_on
from ragas_compat.errors import ExitCode, HarnessInputError
from ragas_compat.metrics.registry import metrics_for_target
from ragas_compat.pin.sources import locate_installed
from ragas_compat.pipeline import load_suite
from ragas_compat.tools.bisect import (
    BisectResult,
    CommitInfo,
    bisect_cell,
    finding_kinds,
    first_scorable,
    mirror_git,
    nearest_releases,
    prepare_checkout,
    probe_scorer,
    result_json,
)
from ragas_compat.tools.matrix.environments import default_cache_dir, ensure_environments, parse_entries

BISECT_HELP = ("Walk a Ragas git history between --good and --bad (git's bisection order, in a temporary "
               "clone: your checkout is never modified) and name the first commit where one cell changes.")


def _audited_files() -> tuple[str, ...]:
    from ragas_compat.pin import load_manifest

    return tuple(load_manifest().audited_files)


def _commit_line(info: CommitInfo) -> str:
    audited = ", ".join(info.audited_touched) or "none"
    return f"{info.hexsha} {info.date} {info.subject} (audited files touched: {audited})"


def _markdown(result: BisectResult, doc: dict) -> list[str]:
    lines = [f"# Bisect: {result.case_id} × {result.target}", "",
             f"- good `{result.good.short}` {result.good.subject}: {result.good_cell.text}",
             f"- bad `{result.bad.short}` {result.bad.subject}: {result.bad_cell.text}", ""]
    if result.status == "unchanged":
        return [*lines, "The cell is the same at both ends: nothing to bisect."]
    if result.first_bad is not None:
        info = result.first_bad
        lines += [f"**First bad commit** `{info.hexsha}` ({info.date}): {info.subject}", "",
                  "Audited files touched: " + (", ".join(f"`{f}`" for f in info.audited_touched) or "none"), "",
                  "Change: " + "; ".join(f"{c.kind}: {c.text}" for c in result.causes), ""]
    else:
        lines += ["Skipped commits hide the answer; the first bad commit is one of:", ""]
        lines += [f"- `{c.hexsha}` {c.subject}" for c in result.candidates]
        lines.append("")
    lines += ["| commit | verdict | cell | why |", "|---|---|---|---|"]
    lines += [f"| `{s.hexsha[:10]}` | {s.verdict} | {s.cell.text} | {s.why.replace('|', '/')} |"
              for s in result.steps]
    return lines


def _print_table(result: BisectResult, kinds: list[str], fails: bool) -> None:
    console = stdout()
    console.print(f"good {shown(result.good.short)}: {shown(result.good_cell.text)}   "
                  f"bad {shown(result.bad.short)}: {shown(result.bad_cell.text)}", highlight=False)
    if result.status == "unchanged":
        console.print("unchanged: the cell is the same at --good and --bad; nothing to bisect", highlight=False)
        return
    if result.steps:
        table = narrow_table("commit", "verdict", "cell", "why", title="steps (git's bisection order)")
        for step in result.steps:
            table.add_row(step.hexsha[:10], step.verdict, shown(step.cell.text), shown(step.why))
        console.print(table)
    if result.first_bad is not None:
        console.print(f"first bad commit: {shown(_commit_line(result.first_bad))}", highlight=False)
        for cause in result.causes:
            console.print(f"  {cause.kind}: {shown(cause.text)}", highlight=False)
    else:
        console.print("skipped commits hide the answer; the first bad commit is one of:", highlight=False)
        for info in result.candidates:
            console.print(f"  {shown(_commit_line(info))}", highlight=False)
    console.print(f"findings: {', '.join(kinds)}" + (" (fail)" if fails else " (not in --fail-on)"),
                  highlight=False)


def _release_pythons(checkout: Path, good: str, bad: str, release: str,
                     cache_dir: Path | None) -> list[tuple[str, str]]:
    """(version, interpreter) of the matrix environments of ``release``; "nearest": the release tag
    before ``--good``, then the one before ``--bad`` (a commit is tried in them in that order). An
    environment that cannot be built is left out; none: exit 2."""
    versions = nearest_releases(checkout, good, bad) if release == "nearest" else [release]
    envs = ensure_environments(parse_entries(",".join(versions)), cache_dir=cache_dir or default_cache_dir(),
                               jobs=1)
    chosen = []
    for version, env in zip(versions, envs, strict=True):
        if env.available:
            stderr().print(f"[dim]dependencies from the Ragas {shown(version)} environment ({env.status})[/]",
                           highlight=False)
            chosen.append((version, env.python))
        else:
            stderr().print(f"[yellow]the environment of Ragas {shown(version)} is unavailable:[/] "
                           f"{shown(env.error)}", highlight=False)
    if not chosen:
        raise HarnessInputError(f"--release-env {release}: no environment of Ragas {', '.join(versions)} is "
                                f"available", field="--release-env", value=release)
    return chosen


@exits_on_harness_errors()
def bisect_command(
    ragas_checkout: Optional[Path] = typer.Option(None, "--ragas-checkout",
                                                  help="A Ragas git repository, bare or not (left untouched)."),
    ragas_git: Optional[str] = typer.Option(None, "--ragas-git",
                                            help="Instead of --ragas-checkout: a Ragas repository URL, cloned "
                                                 "once into the cache run --ragas-git uses."),
    good: str = typer.Option(..., "--good", help="A commit (or tag, branch) where the cell is as expected."),
    bad: str = typer.Option(..., "--bad", help="A later commit where the cell has changed."),
    case: str = typer.Option(..., "--case", help="The case id."),
    target: str = typer.Option(..., "--target", help="The Ragas target, API:CLASS (legacy:Faithfulness)."),
    cases: Optional[list[Path]] = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    python: str = typer.Option(sys.executable, "--python",
                               help="Interpreter whose installed dependencies the checkout's sources run with."),
    release_env: Optional[str] = typer.Option(None, "--release-env",
                                              help="Instead of --python: the matrix environment of this Ragas "
                                                   "release (built once, cached), or 'nearest' (the release tag "
                                                   "nearest before --good, then the one before --bad for a "
                                                   "commit that cannot be scored in the first)."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir",
                                             help="Virtualenv cache for --release-env (default "
                                                  "~/.cache/ragas-compat/envs)."),
    timeout: float = typer.Option(600.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before one probe is stopped."),
    fail_on: Optional[list[str]] = typer.Option(None, "--fail-on",
                                                help="Finding kinds that make the exit code 1, comma-separated or "
                                                     f"repeated: all (default), none, {', '.join(DRIFT_KINDS)}."),
    ignore_cause: Optional[list[str]] = typer.Option(None, "--ignore-cause",
                                                     help="A change that does not make a commit bad (repeatable), "
                                                          "e.g. class_moved or prompts_changed."),
    output: OutputFormat = format_option(),
) -> None:
    kinds_failing = parse_fail_on(fail_on)
    try:
        specs = metrics_for_target(target)
    except (HarnessInputError, ValueError):
        specs = ()
    if not specs:
        raise HarnessInputError(f"--target {target!r}: not a Ragas target the harness compares "
                                f"(API:CLASS such as legacy:Faithfulness)", field="--target", value=target)
    chosen = load_suite(list(cases or [])).case(case)
    if (ragas_checkout is None) == (ragas_git is None):
        raise HarnessInputError("pass --ragas-checkout PATH or --ragas-git URL (one of them)",
                                field="--ragas-checkout", value=None)
    progress = (lambda message: None) if output == OutputFormat.JSON else \
        (lambda message: stderr().print(f"[dim]{shown(message)}[/]", highlight=False))
    repository = ragas_checkout if ragas_git is None else mirror_git(ragas_git, timeout=timeout, progress=progress)
    pythons = _release_pythons(repository, good, bad, release_env, cache_dir) if release_env else [("--python", python)]
    for _, interpreter in pythons:  # an unusable interpreter: exit 3 before any git work
        locate_installed(interpreter, timeout=min(timeout, 60.0))
    scorers = [(label, probe_scorer(chosen, target, python=interpreter, timeout=timeout))
               for label, interpreter in pythons]
    result = bisect_cell(repository, good, bad, chosen, target, audited=_audited_files(), progress=progress,
                         score=first_scorable(scorers, progress), prepare=prepare_checkout,
                         ignore=frozenset(ignore_cause or ()))
    kinds = finding_kinds(result, specs[0].name)
    doc = result_json(result, kinds, kinds_failing)
    if output == OutputFormat.JSON:
        print_json(doc)
    elif output == OutputFormat.MD:
        print_markdown(_markdown(result, doc))
    else:
        _print_table(result, kinds, doc["fails"])
    raise typer.Exit(int(ExitCode.DRIFT if doc["fails"] else ExitCode.OK))


def register(app: typer.Typer) -> None:
    """Add the ``bisect`` command to ``app``."""
    app.command("bisect", help=BISECT_HELP)(bisect_command)
