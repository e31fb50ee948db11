"""``ragas-compat explain``: one input through Ragas and the reference, side by side (typer + rich).

``register(app)`` adds the command. Exit codes: 0 explained; 2 bad input or usage; 3 Ragas could
not be run. The logic lives in ``harness.tools.explain``.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from harness.cli.common import exits_on_harness_errors, json_text, plain, positive_seconds, shown, stdout
from harness.tools.explain import Explanation, explain, explain_metrics, explanation_to_json, ragas_value_text

_METRIC_HELP = "; ".join(f"{m.name}: {m.inputs}" for m in explain_metrics())


def _exact_text(value: Fraction | int | float | None) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return "—"
    return str(Fraction(value))


def _float_text(value: Fraction | int | float | None) -> str:
    if value is None or type(value) is int:  # counts are shown once, in the exact column
        return "—"
    return repr(float(value))


def _reference_value_text(explanation: Explanation) -> tuple[str, str]:
    ref = explanation.reference
    if ref.refused is not None:
        return "refused", "—"
    if ref.value is None:
        return f"undefined ({ref.undefined_reason})", "—"
    return str(ref.value), repr(float(ref.value))


def print_explanation(explanation: Explanation, console: Console) -> None:
    """The side-by-side table, the reference quantities and the substituted formulas."""
    inputs = ", ".join(f"{k}={json.dumps(v)}" for k, v in explanation.inputs.items())
    exact, as_float = _reference_value_text(explanation)
    if explanation.rows:
        title = f"{explanation.metric.name} ({shown(inputs)}): Ragas {shown(explanation.ragas_version)} vs reference"
        table = Table(title=title, title_justify="left", show_lines=True)
        table.add_column("Ragas class")
        table.add_column("Ragas value", no_wrap=True)
        table.add_column("reference (exact)", no_wrap=True)
        table.add_column("reference (float)", no_wrap=True)
        table.add_column("classification", no_wrap=True)
        for row in explanation.rows:
            table.add_row(shown(row.ragas_class.rsplit(".", 1)[-1]), shown(ragas_value_text(row.value)), shown(exact),
                          as_float, row.classification.name)
        console.print(table)
        for row in explanation.rows:
            console.print(f"[bold]{row.classification.name}[/] ({shown(row.target)}): "
                          f"{shown(row.classification.explanation)}", highlight=False)
    else:
        console.print(f"[bold]{explanation.metric.name}[/] ({shown(inputs)}): reference {shown(exact)}"
                      + (f" = {as_float}" if as_float != "—" else ""), highlight=False)
    if explanation.note:
        console.print(f"[yellow]note:[/] {shown(explanation.note)}", highlight=False)
    if explanation.reference.refused:
        console.print(f"[yellow]reference refuses the input:[/] {shown(explanation.reference.refused)}",
                      highlight=False)

    quantities = Table(title="reference quantities", title_justify="left")
    quantities.add_column("quantity")
    quantities.add_column("exact", no_wrap=True)
    quantities.add_column("float", no_wrap=True)
    quantities.add_column("formula / note")
    for q in explanation.quantities:
        quantities.add_row(shown(q.name), _exact_text(q.value), _float_text(q.value), shown(q.note))
    if explanation.quantities:
        console.print(quantities)
    console.print("[bold]formulas[/] (input numbers substituted)", highlight=False)
    for line in explanation.formulas:
        console.print(f"  {plain(line)}", highlight=False, soft_wrap=True, markup=False)
    console.print(f"denominator: {plain(explanation.reference.denominator)}", highlight=False, markup=False)


EXPLAIN_HELP = (
    "Explain one input: the real Ragas classes (stubbed judge, in the probe subprocess) beside the "
    "reference's exact quantities, the classification and the formulas. METRIC is one of "
    f"{', '.join(m.name for m in explain_metrics())}. Inputs: {_METRIC_HELP}. "
    "ID lists are JSON arrays so the integer 1 and the string \"1\" stay distinct.")


@exits_on_harness_errors()
def explain_command(
    metric: str = typer.Argument(..., help="Metric to explain."),
    labels: Optional[str] = typer.Argument(None, help='Labels, e.g. 1,0,1 ("" = none).'),
    corpus_relevant: Optional[int] = typer.Option(None, "--corpus-relevant",
                                                  help="R: relevant items in the whole corpus (context-precision)."),
    retrieved: Optional[str] = typer.Option(None, "--retrieved", help="Retrieved IDs, a JSON array: '[1, \"1\"]'."),
    reference: Optional[str] = typer.Option(None, "--reference", help="Reference IDs, a JSON array."),
    human: Optional[str] = typer.Option(None, "--human", help="Human labels, a JSON object: '{\"c1\": 1}'."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge labels, a JSON object: '{\"c1\": 0}'."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (the report's encoding) instead of tables."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    timeout: float = typer.Option(300.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before the probe is stopped."),
) -> None:
    explanation = explain(metric, labels=labels, corpus_relevant=corpus_relevant, retrieved=retrieved,
                          reference=reference, human=human, judge=judge, python=python, timeout=timeout)
    if as_json:
        typer.echo(json_text(json.dumps(explanation_to_json(explanation), indent=2, ensure_ascii=False,
                                        allow_nan=False)))
        return
    print_explanation(explanation, stdout())


def register(app: typer.Typer) -> None:
    """Add the ``explain`` command to ``app``."""
    app.command("explain", help=EXPLAIN_HELP)(explain_command)
