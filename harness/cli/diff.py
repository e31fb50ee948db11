"""``ragas-compat diff A B``: two report.json (or two matrix.json) files compared row by row.

Lists every row whose value changed bit for bit or whose classification changed, with both values and
both classifications, every row whose explanation changed (the rule or entry that explains it, whether it
is expected), with both, the rows on one side only, the verdicts when they differ (with the expectations
each report was judged by), and the provenance fields that differ (Ragas version and commit, Python,
platform, harness version; ``ragas_compat.tools.diff_reports``).

Exit codes: 0 no row changed and the same verdict; 1 a row changed or is on one side only, or the verdicts
differ; 2 a file is unreadable or not a
report.json (format 4) / matrix.json (the error names it), or the two are not of a kind.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ragas_compat.cli.common import exits_on_harness_errors, shown, stdout
from ragas_compat.cli.output import OutputFormat, format_option, narrow_table, print_json, print_markdown
from ragas_compat.errors import ExitCode
from ragas_compat.report.escape import md_code, md_text
from ragas_compat.tools.diff_reports import (
    Diff,
    diff_files,
    diff_json,
    explanation_text,
    summary_line,
    value_text,
    verdict_line,
)

DIFF_HELP = ("Compare two report.json (or two matrix.json) files row by row: values bit for bit, "
             "classifications, explanations (rule or entry, expected or not), rows on one side only, the "
             "verdicts, and the provenance (Ragas, Python, platform). "
             "Exit 1 on any changed row or a different verdict, 0 on none, 2 on an unreadable or invalid file.")


def _changed_values(diff: Diff) -> list:
    return [c for c in diff.changes if c.value_changed or c.classification_changed]


def _changed_explanations(diff: Diff) -> list:
    return [c for c in diff.changes if c.explanation_changed]


def _markdown(diff: Diff) -> list[str]:
    lines = [f"# Diff of two {md_text(diff.kind)} files", "",
             f"- A: {md_code(diff.a_path)} ({diff.a_rows} rows)",
             f"- B: {md_code(diff.b_path)} ({diff.b_rows} rows)", "",
             f"**{md_text(summary_line(diff))}**", ""]
    if diff.provenance:
        lines += ["## Provenance", "", "| field | A | B |", "|---|---|---|"]
        lines += [f"| {md_text(p.field)} | {md_text(p.a)} | {md_text(p.b)} |" for p in diff.provenance]
        lines.append("")
    if diff.verdict:
        lines += ["## Verdict", "", f"{md_text(verdict_line(diff))}", "", "| field | A | B |", "|---|---|---|"]
        lines += [f"| {md_text(p.field)} | {md_text(p.a)} | {md_text(p.b)} |" for p in diff.verdict]
        lines.append("")
    if _changed_values(diff):
        lines += ["## Changed rows", "", "| row | A value | B value | ulps | A classification | B classification |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {md_code(c.key)} | {md_text(value_text(c.a.value))} | {md_text(value_text(c.b.value))} | "
                  f"{'' if c.ulps is None else c.ulps} | {md_text(c.a.classification)} | "
                  f"{md_text(c.b.classification)} |" for c in _changed_values(diff)]
        lines.append("")
    if _changed_explanations(diff):
        lines += ["## Changed explanations", "", "| row | A explanation | B explanation |", "|---|---|---|"]
        lines += [f"| {md_code(c.key)} | {md_text(explanation_text(c.a))} | {md_text(explanation_text(c.b))} |"
                  for c in _changed_explanations(diff)]
        lines.append("")
    for title, side in (("Only in A", diff.only_in_a), ("Only in B", diff.only_in_b)):
        if side:
            lines += [f"## {title}", "", "| row | value | classification |", "|---|---|---|"]
            lines += [f"| {md_code(r.key)} | {md_text(value_text(r.value))} | {md_text(r.classification)} |"
                      for r in side]
            lines.append("")
    return lines


def _print_table(diff: Diff) -> None:
    console = stdout()
    console.print(f"A: {shown(diff.a_path)}   B: {shown(diff.b_path)}", highlight=False)
    if diff.provenance:
        table = narrow_table("provenance", "A", "B")
        for p in diff.provenance:
            table.add_row(shown(p.field), shown(p.a), shown(p.b))
        console.print(table)
    if diff.verdict:
        table = narrow_table("field", "A", "B", title="verdict")
        for p in diff.verdict:
            table.add_row(shown(p.field), shown(p.a), shown(p.b))
        console.print(table)
    if _changed_values(diff):
        table = narrow_table("row", "A value", "B value", "ulps", "A class", "B class", title="changed rows")
        for c in _changed_values(diff):
            table.add_row(shown(c.key), shown(value_text(c.a.value)), shown(value_text(c.b.value)),
                          "" if c.ulps is None else str(c.ulps), shown(c.a.classification),
                          shown(c.b.classification))
        console.print(table)
    if _changed_explanations(diff):
        table = narrow_table("row", "A explanation", "B explanation", title="changed explanations")
        for c in _changed_explanations(diff):
            table.add_row(shown(c.key), shown(explanation_text(c.a)), shown(explanation_text(c.b)))
        console.print(table)
    for title, side in (("only in A", diff.only_in_a), ("only in B", diff.only_in_b)):
        if side:
            table = narrow_table("row", "value", "classification", title=title)
            for r in side:
                table.add_row(shown(r.key), shown(value_text(r.value)), shown(r.classification))
            console.print(table)
    console.print(shown(summary_line(diff)), highlight=False)


@exits_on_harness_errors()
def diff_command(
    a: Path = typer.Argument(..., help="The first report.json (or matrix.json): the before."),
    b: Path = typer.Argument(..., help="The second report.json (or matrix.json): the after."),
    output: OutputFormat = format_option(),
) -> None:
    diff = diff_files(a, b)
    if output == OutputFormat.JSON:
        print_json(diff_json(diff))
    elif output == OutputFormat.MD:
        print_markdown(_markdown(diff))
    else:
        _print_table(diff)
    raise typer.Exit(int(ExitCode.DRIFT if diff.changed else ExitCode.OK))


def register(app: typer.Typer) -> None:
    """Add the ``diff`` command to ``app``."""
    app.command("diff", help=DIFF_HELP)(diff_command)
