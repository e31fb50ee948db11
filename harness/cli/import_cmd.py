"""``ragas-compat import``: a dataset plus a CSV of human or judge labels made elsewhere -> a case file.

``register(app)`` adds the command (the module is ``import_cmd`` because ``import`` is a keyword).
Prints the judge audit pooled over every claim with both labels (counts, agreement, sensitivity,
false-positive rate, mean bias, exact fractions; undefined where a denominator is 0). Offline: no model is asked. Exit codes: 0 written; 2 bad input or usage (the dataset's or the labels'
problems, each naming the file, row and column; nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragas_compat.cli.common import exits_on_harness_errors, shown, stderr, stdout
from ragas_compat.tools.record.importer import import_labels


@exits_on_harness_errors()
def import_command(
    dataset: Path = typer.Argument(..., help="Ragas EvaluationDataset file (.jsonl, .json, .csv; old column "
                                             "names too), a .parquet file or a Hugging Face save_to_disk folder."),
    labels: Path = typer.Argument(..., help="CSV with columns sample_id, claim_id, human_label, judge_label "
                                            "(optional: metric, statement)."),
    out: Path = typer.Option(..., "--out", help="The case file to write (replaced atomically)."),
    verdicts_from: str = typer.Option("judge", "--verdicts-from",
                                      help="Which label column fills the verdict lists: judge or human."),
    suite: Optional[str] = typer.Option(None, "--suite", help="Suite name (default: <dataset>-imported)."),
) -> None:
    """Turn a dataset and a CSV of labels (a judge's verdicts, human labels) into a case file that
    `ragas-compat run --cases FILE` audits: judge_audit rows give the judge-vs-human audit, context
    precision / recall / faithfulness rows give the frozen verdicts Ragas and the reference score."""
    result = import_labels(dataset, labels, out, verdicts_from=verdicts_from, suite=suite)
    for warning in result.warnings:  # also in the case file's "warnings"
        stderr().print(f"[bold yellow]warning:[/] {shown(warning)}", highlight=False, soft_wrap=True)
    stdout().print(f"{result.cases} cases in {shown(result.path)} ({result.labelled} with labels from "
                   f"{result.rows} rows; {result.audited} claims in judge audits)", highlight=False)
    summary = result.judge_audit
    if summary is None or summary.count == 0:
        stdout().print("judge audit over all claims: no claim has both a human and a judge label", highlight=False)
        return
    for index, line in enumerate(summary.lines()):  # numbers and fixed words only: no user text
        stdout().print(("  " if index else "") + shown(line), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``import`` command to ``app``."""
    app.command("import")(import_command)
