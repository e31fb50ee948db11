"""``ragas-compat merge``: the N shards of one run (``run --shard K/N``) as the unsharded run's report set.

``register(app)`` adds the command. The merge lives in ``ragas_compat.tools.shards``; the summary and
exit codes are ``run``'s: 0 no drift of a ``--fail-on`` kind, 1 drift, 2 bad input (a shard missing
or given twice, shards of different runs: the differing field is named; cases or expectations other
than the shards ran), 4 internal error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragas_compat.cli.common import exits_on_harness_errors
from ragas_compat.cli.output import OutputFormat, format_option, quiet_option
from ragas_compat.cli.run import DRIFT_LINES, FINDING_LINES, print_summary
from ragas_compat.compare.findings import DRIFT_KINDS
from ragas_compat.compare.verdict import exit_code, parse_fail_on
from ragas_compat.errors import HarnessInputError
from ragas_compat.pipeline import DEFAULT_OUT, REPORT_FILES, write_reports
from ragas_compat.report.atomic import check_writable
from ragas_compat.tools.shards import merge_shards


@exits_on_harness_errors()
def merge(
    shard_dirs: list[Path] = typer.Argument(..., metavar="SHARD_DIR",
                                            help="The --out folders of `run --shard K/N`, one per shard (each "
                                                 "holding shard.json), in any order."),
    out: Path = typer.Option(DEFAULT_OUT, "--out", help="Folder for the merged report set (as `run --out`)."),
    golden: bool = typer.Option(False, "--golden", help="Write plain files under their fixed names (as `run "
                                                        "--golden`)."),
    cases: Optional[list[Path]] = typer.Option(None, "--cases",
                                               help="The case file(s) the shards ran (default: the files recorded in "
                                                    "the shards; standard input must be given again)."),
    expectations: Optional[Path] = typer.Option(None, "--expectations",
                                                help="The expectations file the shards ran (default: the one "
                                                     "recorded in the shards)."),
    fail_on: Optional[list[str]] = typer.Option(None, "--fail-on",
                                                help="Drift kinds that make the exit code 1, as for `run`: all "
                                                     f"(default), none, {', '.join(DRIFT_KINDS)}."),
    output: OutputFormat = format_option(),
    quiet: bool = quiet_option(),
    verbose: bool = typer.Option(False, "--verbose", help="Print every finding and drift line (default: the "
                                                          f"first {FINDING_LINES} and {DRIFT_LINES})."),
) -> None:
    """Merge the shards of one run into the report set the unsharded run writes, byte for byte."""
    kinds = parse_fail_on(fail_on)
    audit = merge_shards(shard_dirs, case_files=cases, expectations_file=expectations)
    check_writable(out, REPORT_FILES)  # after the shards are read, as run after its cases: bad input writes nothing
    if not audit.rows:
        raise HarnessInputError(f"no (case, Ragas target) row was scored in the shards of suite {audit.suite.name!r}: "
                                "nothing would be checked; no report written", field="shard")
    write_reports(audit, out, golden=golden)
    print_summary(audit, out, kinds, output, quiet, verbose)
    raise typer.Exit(int(exit_code(audit, kinds)))


def register(app: typer.Typer) -> None:
    """Add the ``merge`` command to ``app``."""
    app.command("merge")(merge)
