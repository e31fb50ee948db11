"""``ragas-compat pin``: show the pin against the current environment; record a checkout's hashes.

``register(app)`` adds the ``pin`` command group (``pin show``, ``pin record``). Exit codes: 0 done;
2 bad input (manifest, checkout, constraints file); 3 ``--python`` cannot be run as an interpreter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ragas_compat.cli.common import exits_on_harness_errors, shown, stdout
from ragas_compat.errors import HarnessError
from ragas_compat.pin.manifest import load_constraints, load_manifest, write_manifest
from ragas_compat.pin.sources import PythonUnusable, check_constraints, measure_reference_point, resolve_installed

PIN_HELP = "The Ragas pin: show it against this environment, record a checkout's file hashes."


def _short(sha: str | None) -> str:
    return shown(sha[:12]) if sha else "—"


@exits_on_harness_errors()
def show(
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose installed Ragas to compare."),
    manifest_path: Optional[Path] = typer.Option(None, "--manifest", help="Pin manifest (default pinned/pin.toml)."),
) -> None:
    """Print the pin and how the Ragas installed for --python compares with it."""
    console = stdout()
    manifest = load_manifest(manifest_path)
    pin = manifest.pin
    table = Table(title="Pin", show_header=False)
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    table.add_row("commit", shown(pin.commit))
    table.add_row("repository", shown(pin.repository + "".join(f" (formerly {r})" for r in pin.former_repositories)))
    table.add_row("date", pin.date.isoformat())
    table.add_row("nearest release", f"{shown(pin.nearest_release)} (the pinned commit is {shown(pin.relation)} it)")
    table.add_row("pin's own file hashes", "recorded" if manifest.pin_reference_point() else
                  "not recorded (ragas-compat pin record --ragas-checkout PATH)")
    console.print(table)

    points = Table(title="Reference points (measured git blob ids)")
    for column in ("name", "kind", "commit", "date", "files", "source"):
        points.add_column(column, overflow="fold")
    for point in manifest.reference_points:
        points.add_row(shown(point.name), shown(point.kind), _short(point.commit),
                       point.date.isoformat() if point.date else "—",
                       f"{len(point.blobs)}/{len(manifest.audited_files)}", shown(point.source))
    console.print(points)

    try:
        source = resolve_installed(manifest, python=python)
    except PythonUnusable:
        raise  # --python itself cannot be used: exit 3, as for every command
    except HarnessError as exc:  # part of what is shown, not a failure of the command
        console.print(f"[bold]Installed Ragas:[/] none usable — {shown(exc)}", highlight=False)
    else:
        files = Table(title=f"Installed Ragas ({shown(source.display_path)}, version {shown(source.version)})")
        files.add_column("audited file", overflow="fold")
        files.add_column("blob", overflow="fold")
        files.add_column("identical to", overflow="fold")
        for file, entry in source.file_comparison.items():
            files.add_row(shown(file), _short(entry["blob"]) if entry["blob"] else "absent",
                          shown(", ".join(entry["matches"])) or "[red]no reference point[/]")
        console.print(files)
        console.print(f"[bold]Pin status:[/] {shown(source.pin_status)}", highlight=False)
        console.print(f"[bold]Audited files vs pin:[/] {shown(source.files_status)}", highlight=False)

    constraints_path = manifest.constraints_path
    if constraints_path is not None and constraints_path.exists():
        checks = check_constraints(load_constraints(constraints_path), python=python)
        table = Table(title=f"Constraints ({shown(constraints_path.name)})")
        for column in ("requirement", "installed", "ok", "why"):
            table.add_column(column, overflow="fold")
        for check in checks:
            ok = {True: "[green]yes[/]", False: "[red]NO[/]", None: "[yellow]not installed[/]"}[check.satisfied]
            table.add_row(shown(check.constraint.requirement), shown(check.installed or "—"), ok,
                          shown(check.constraint.reason))
        console.print(table)


@exits_on_harness_errors()
def record(
    ragas_checkout: Path = typer.Option(..., "--ragas-checkout", help="A git working tree of Ragas."),
    name: Optional[str] = typer.Option(None, "--name", help="Reference point name (default: 'pin' for the "
                                                             "pinned commit, else a tag at HEAD, else commit-<short>)."),
    manifest_path: Optional[Path] = typer.Option(None, "--manifest", help="Pin manifest (default pinned/pin.toml)."),
) -> None:
    """Record the audited files' git blob ids at the checkout's HEAD commit in the manifest."""
    console = stdout()
    manifest = load_manifest(manifest_path)
    point = measure_reference_point(ragas_checkout, manifest, name=name)
    written = write_manifest(manifest.with_reference_point(point))
    is_pin = point.commit == manifest.pin.commit
    console.print(f"recorded reference point [bold]{shown(point.name)}[/] ({shown(point.kind)}, commit "
                  f"{shown(point.commit)}{', the pinned commit' if is_pin else ''}): {len(point.blobs)} file(s) hashed"
                  + (f", {len(point.absent)} absent ({shown(', '.join(point.absent))})" if point.absent else "")
                  + f" -> {shown(written.name)}", highlight=False)
    for file in manifest.audited_files:
        if file in point.blobs:
            console.print(f"  {shown(point.blobs[file])}  {shown(file)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``pin`` command group (``pin show``, ``pin record``) to ``app``."""
    pin_app = typer.Typer(no_args_is_help=True, help=PIN_HELP)
    pin_app.command("show")(show)
    pin_app.command("record")(record)
    app.add_typer(pin_app, name="pin")
