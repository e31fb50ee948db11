"""``ragas-compat expect``: expectations files.

``expect bless --cases FILE [--out expectations.toml]`` runs the suite through Ragas and writes its
current classifications as an expectations file (``ragas_compat.compare.bless``): every row and
legacy-vs-collections pair named with the classification it has, and the reason of the rule that
explains it, and every recorded live score the replay cannot reproduce with the recording's reason.
Review it, commit it, and run with ``ragas-compat run --cases FILE --expectations expectations.toml``:
that exits 0, and after a change (a Ragas upgrade, an edited verdict) it
reports exactly the rows that moved.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ragas_compat.cli.common import exits_on_harness_errors, positive_seconds, shown, stdout
from ragas_compat.compare.bless import unblessable
from ragas_compat.compare.replay import not_replayable_outcomes
from ragas_compat.pin import resolve_ragas_source
from ragas_compat.pipeline import bless_suite, load_suite
from ragas_compat.write_preflight import check_output_file

DEFAULT_BLESSED = Path("expectations.toml")

expect_app = typer.Typer(no_args_is_help=True, help="Expectations files: bless the current classifications.")


@expect_app.command("bless")
@exits_on_harness_errors()
def bless(
    cases: list[Path] | None = typer.Option(None, "--cases", help="Case file(s); default: the bundled suite."),
    out: Path = typer.Option(DEFAULT_BLESSED, "--out", help="The expectations file to write (replaced)."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    ragas_checkout: Path | None = typer.Option(None, "--ragas-checkout", help="A git working tree of Ragas."),
    ragas_git: str | None = typer.Option(None, "--ragas-git", help="Clone this Ragas repository (cached)."),
    allow_other_commit: bool = typer.Option(False, "--allow-other-commit",
                                            help="Accept a checkout at another commit than the pin."),
    timeout: float = typer.Option(600.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before the probe (or any other subprocess) is stopped."),
) -> None:
    """Write the current classifications of a suite as an expectations file to review and commit."""
    check_output_file(out)  # a folder, FIFO or unwritable place: exit 2 before the suite is read or Ragas run
    suite = load_suite(list(cases or []))
    source = resolve_ragas_source(python=python, checkout=ragas_checkout, git_url=ragas_git,
                                  allow_other_commit=allow_other_commit, timeout=timeout)
    audit = bless_suite(suite, source, out, python=python, timeout=timeout).audit
    moved = sum(1 for row in audit.rows if row.classification.name != "identical")
    not_replayable = len(not_replayable_outcomes(audit))
    also = f", {not_replayable} recorded live score(s) the replay cannot reproduce (with the recording's reason)," \
        if not_replayable else ""
    console = stdout()
    console.print(f"blessed {len(audit.rows)} rows ({moved} not identical){also} and {len(audit.pairs)} "
                  f"legacy-vs-collections pairs of suite {shown(suite.name)} with Ragas "
                  f"{shown(audit.provenance.get('ragas_version'))} into {shown(out)}", highlight=False)
    skipped = unblessable(audit)
    if skipped:
        console.print(f"not blessed: {len(skipped)} row(s) that were not scored (a budget stop, a class not in "
                      "this Ragas, or the harness's own error; listed at the top of the file): no entry explains "
                      f"such a row, so it stays drift. First: ({skipped[0][0]}, {skipped[0][1]}) {skipped[0][2]}",
                      highlight=False)
    console.print(f"review it, commit it, and run: ragas-compat run --cases FILE --expectations {shown(out)}",
                  highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``expect`` command group to ``app``."""
    app.add_typer(expect_app, name="expect")
