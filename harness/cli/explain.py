"""``ragas-compat explain``: one input through Ragas and the reference, side by side (typer + rich).

``register(app)`` adds the command. Exit codes: 0 explained; 2 bad input or usage; 3 Ragas could
not be run. The logic lives in ``ragas_compat.tools.explain``.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from typing import Optional

import typer
from rich.console import Console

from ragas_compat.cli.common import exits_on_harness_errors, plain, positive_seconds, shown, stdout
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
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.names import resolve
from ragas_compat.report.markdown.table import markdown_cell, markdown_table
from ragas_compat.tools.explain import Explanation, explain, explain_metrics, explanation_to_json, ragas_value_text
from ragas_compat.values import NON_NUMERIC

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
    if isinstance(ref.value, NON_NUMERIC):  # a label or a ranking: no float
        return repr(ref.value), "—"
    return str(ref.value), repr(float(ref.value))


def _api(target: str) -> str:
    return target.partition(":")[0]


def print_explanation(explanation: Explanation, console: Console, quiet: bool = False) -> None:
    """Every Ragas target (legacy and collections) beside the reference, the reference quantities and the
    substituted formulas, in tables that wrap at 80 columns; ``quiet``: one line per target."""
    inputs = ", ".join(f"{k}={json.dumps(v)}" for k, v in explanation.inputs.items())
    exact, as_float = _reference_value_text(explanation)
    reference = exact + (f" = {as_float}" if as_float != "—" else "")
    if quiet:
        for row in explanation.rows:
            console.print(f"{shown(row.target)} {shown(ragas_value_text(row.value))} {row.classification.name}",
                          highlight=False, soft_wrap=True)
        if not explanation.rows:
            console.print(f"reference {shown(reference)}", highlight=False, soft_wrap=True)
        return
    console.print(f"[bold]{explanation.metric.name}[/] ({shown(inputs)}): Ragas "
                  f"{shown(explanation.ragas_version or '—')} vs reference {shown(reference)}", highlight=False)
    if explanation.rows:
        width = max(len(row.ragas_class.rsplit(".", 1)[-1]) for row in explanation.rows)
        table = narrow_table(("Ragas class (API)", {"min_width": min(width, 36)}),
                             ("Ragas value", {"min_width": 10}), ("classification", {"min_width": 8}), lines=True)
        for row in explanation.rows:
            table.add_row(f"{shown(row.ragas_class.rsplit('.', 1)[-1])}\n[dim]{_api(row.target)}[/]",
                          shown(ragas_value_text(row.value)), row.classification.name)
        console.print(pruned(table))
        why: dict[tuple[str, str], list[str]] = {}
        for row in explanation.rows:
            why.setdefault((row.classification.name, row.classification.explanation), []).append(row.target)
        for (name, text), targets in why.items():
            console.print(f"[bold]{name}[/] ({shown(', '.join(targets))}): {shown(text)}", highlight=False)
    if explanation.note:
        console.print(f"[yellow]note:[/] {shown(explanation.note)}", highlight=False)
    if explanation.reference.refused:
        console.print(f"[yellow]reference refuses the input:[/] {shown(explanation.reference.refused)}",
                      highlight=False)

    quantities = narrow_table(("quantity", {"min_width": 12}), ("exact", {"min_width": 6}),
                              ("float", {"min_width": 8}), ("formula / note", {"min_width": 10}),
                              title="reference quantities")
    for q in explanation.quantities:
        quantities.add_row(shown(q.name), _exact_text(q.value), _float_text(q.value), shown(q.note))
    if explanation.quantities:
        console.print(pruned(quantities))
    console.print("[bold]formulas[/] (input numbers substituted)", highlight=False)
    for line in explanation.formulas:
        console.print(f"  {plain(line)}", highlight=False, markup=False)
    console.print(f"denominator: {plain(explanation.reference.denominator)}", highlight=False, markup=False)


def explanation_markdown(explanation: Explanation) -> list[str]:
    exact, as_float = _reference_value_text(explanation)
    inputs = ", ".join(f"{k}={json.dumps(v)}" for k, v in explanation.inputs.items())
    lines = [f"## {explanation.metric.name} ({markdown_cell(inputs)})", "",
             f"Ragas {explanation.ragas_version or '—'} vs reference {exact}"
             + (f" = {as_float}" if as_float != "—" else ""), ""]
    if explanation.rows:
        lines += markdown_table(["Ragas target", "Ragas value", "reference", "classification", "why"],
                                [[row.target, ragas_value_text(row.value), exact, row.classification.name,
                                  row.classification.explanation] for row in explanation.rows])
    if explanation.note:
        lines += [f"Note: {explanation.note}", ""]
    if explanation.quantities:
        lines += markdown_table(["quantity", "exact", "float", "formula / note"],
                                [[q.name, _exact_text(q.value), _float_text(q.value), q.note]
                                 for q in explanation.quantities])
    lines += ["Formulas (input numbers substituted):", ""] + [f"- `{line}`" for line in explanation.formulas]
    return lines + ["", f"Denominator: {explanation.reference.denominator}"]


EXPLAIN_HELP = (
    "Explain one input: the real Ragas classes (stubbed judge, in the probe subprocess) beside the "
    "reference's exact quantities, the classification and the formulas. METRIC is one of "
    f"{', '.join(m.name for m in explain_metrics())}. Inputs: {_METRIC_HELP}. "
    "ID lists are JSON arrays so the integer 1 and the string \"1\" stay distinct.")


@exits_on_harness_errors()
def explain_command(
    metric: str = typer.Argument(..., help="Metric to explain (its registry name, e.g. "
                                              "context_precision_with_reference; other spellings work with a hint)."),
    labels: Optional[str] = typer.Argument(None, help='Labels, e.g. 1,0,1 ("" = none).'),
    corpus_relevant: Optional[int] = typer.Option(None, "--corpus-relevant",
                                                  help="R: relevant items in the whole corpus (context-precision)."),
    retrieved: Optional[str] = typer.Option(None, "--retrieved", help="Retrieved IDs, a JSON array: '[1, \"1\"]'."),
    reference: Optional[str] = typer.Option(None, "--reference", help="Reference IDs, a JSON array."),
    human: Optional[str] = typer.Option(None, "--human", help="Human labels, a JSON object: '{\"c1\": 1}'."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge labels, a JSON object: '{\"c1\": 0}'."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose Ragas the probe runs."),
    timeout: float = typer.Option(300.0, "--timeout", callback=positive_seconds,
                                  help="Seconds before the probe is stopped."),
    output: OutputFormat = format_option(),
    quiet: bool = quiet_option(),
) -> None:
    metric = resolve_metrics([metric], option="METRIC")[0] if _is_metric(metric) else metric
    explanation = explain(metric, labels=labels, corpus_relevant=corpus_relevant, retrieved=retrieved,
                          reference=reference, human=human, judge=judge, python=python, timeout=timeout)
    if as_json or output is OutputFormat.JSON:
        print_json(explanation_to_json(explanation))
        return
    if output is OutputFormat.MD:
        print_markdown(explanation_markdown(explanation))
        return
    print_explanation(explanation, stdout(), quiet)


def _is_metric(name: str) -> bool:
    """True when ``name`` is some spelling of a registered metric (the hint is printed once, here)."""
    try:
        resolve(name)
    except HarnessInputError:
        return False
    return True


def register(app: typer.Typer) -> None:
    """Add the ``explain`` command to ``app``."""
    app.command("explain", help=EXPLAIN_HELP)(explain_command)
