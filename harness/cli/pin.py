"""``ragas-compat pin``: show the pin against the current environment; record a checkout's hashes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from harness.errors import HarnessError, HarnessInputError
from harness.pin.manifest import load_constraints, load_manifest, write_manifest
from harness.pin.sources import check_constraints, measure_reference_point, resolve_installed

EXIT_BAD_INPUT = 2

pin_app = typer.Typer(add_completion=False, no_args_is_help=True,
                      help="The Ragas pin: show it against this environment, record a checkout's file hashes.")
console = Console()
errors = Console(stderr=True)


def _fail(exc: HarnessInputError) -> typer.Exit:
    errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "—"


@pin_app.command("show")
def show(
    python: str = typer.Option(sys.executable, "--python", help="Interpreter whose installed Ragas to compare."),
    manifest_path: Optional[Path] = typer.Option(None, "--manifest", help="Pin manifest (default pinned/pin.toml)."),
) -> None:
    """Print the pin and how the Ragas installed for --python compares with it."""
    try:
        manifest = load_manifest(manifest_path)
    except HarnessInputError as exc:
        raise _fail(exc) from None
    pin = manifest.pin
    table = Table(title="Pin", show_header=False)
    table.add_row("commit", pin.commit)
    table.add_row("repository", pin.repository + "".join(f" (formerly {r})" for r in pin.former_repositories))
    table.add_row("date", pin.date.isoformat())
    table.add_row("nearest release", f"{pin.nearest_release} (the pinned commit is {pin.relation} it)")
    table.add_row("pin's own file hashes", "recorded" if manifest.pin_reference_point() else
                  "not recorded (ragas-compat pin record --ragas-checkout PATH)")
    console.print(table)

    points = Table(title="Reference points (measured git blob ids)")
    for column in ("name", "kind", "commit", "date", "files", "source"):
        points.add_column(column)
    for point in manifest.reference_points:
        points.add_row(point.name, point.kind, _short(point.commit), point.date.isoformat() if point.date else "—",
                       f"{len(point.blobs)}/{len(manifest.audited_files)}", point.source)
    console.print(points)

    try:
        source = resolve_installed(manifest, python=python)
    except HarnessError as exc:
        console.print(f"[bold]Installed Ragas:[/] none usable — {exc}", highlight=False)
    else:
        files = Table(title=f"Installed Ragas ({source.display_path}, version {source.version})")
        files.add_column("audited file")
        files.add_column("blob")
        files.add_column("identical to")
        for file, entry in source.file_comparison.items():
            files.add_row(file, _short(entry["blob"]) if entry["blob"] else "absent",
                          ", ".join(entry["matches"]) or "[red]no reference point[/]")
        console.print(files)
        console.print(f"[bold]Pin status:[/] {source.pin_status}", highlight=False)
        console.print(f"[bold]Audited files vs pin:[/] {source.files_status}", highlight=False)

    constraints_path = manifest.constraints_path
    if constraints_path is not None and constraints_path.exists():
        try:
            checks = check_constraints(load_constraints(constraints_path), python=python)
        except HarnessInputError as exc:
            raise _fail(exc) from None
        table = Table(title=f"Constraints ({constraints_path.name})")
        for column in ("requirement", "installed", "ok", "why"):
            table.add_column(column)
        for check in checks:
            ok = {True: "[green]yes[/]", False: "[red]NO[/]", None: "[yellow]not installed[/]"}[check.satisfied]
            table.add_row(str(check.constraint.requirement), check.installed or "—", ok, check.constraint.reason)
        console.print(table)


@pin_app.command("record")
def record(
    ragas_checkout: Path = typer.Option(..., "--ragas-checkout", help="A git working tree of Ragas."),
    name: Optional[str] = typer.Option(None, "--name", help="Reference point name (default: 'pin' for the "
                                                             "pinned commit, else a tag at HEAD, else commit-<short>)."),
    manifest_path: Optional[Path] = typer.Option(None, "--manifest", help="Pin manifest (default pinned/pin.toml)."),
) -> None:
    """Record the audited files' git blob ids at the checkout's HEAD commit in the manifest."""
    try:
        manifest = load_manifest(manifest_path)
        point = measure_reference_point(ragas_checkout, manifest, name=name)
        written = write_manifest(manifest.with_reference_point(point))
    except HarnessInputError as exc:
        raise _fail(exc) from None
    is_pin = point.commit == manifest.pin.commit
    console.print(f"recorded reference point [bold]{point.name}[/] ({point.kind}, commit {point.commit}"
                  f"{', the pinned commit' if is_pin else ''}): {len(point.blobs)} file(s) hashed"
                  + (f", {len(point.absent)} absent ({', '.join(point.absent)})" if point.absent else "")
                  + f" -> {written.name}", highlight=False)
    for file in manifest.audited_files:
        if file in point.blobs:
            console.print(f"  {point.blobs[file]}  {file}", highlight=False)
