"""Where the harness finds its files: bundled suites, schemas and the pinned data.

Everything the CLI and the pytest plugin read at run time is package data of ``harness`` and is
found with ``importlib.resources``, so an installed wheel works from any folder:

- ``harness/cases/...`` and ``harness/report/...``: the case and report schemas, the bundled suites;
- ``harness/pinned/...``: the pin manifest, constraints, expectation rules, version rules and matrix
  locks. In the repository these live in the top-level ``pinned/`` folder; ``pyproject.toml`` maps the
  package ``ragas_compat.pinned`` to that folder, so a wheel carries them at ``harness/pinned/``. In a
  checkout (editable install or ``PYTHONPATH``) there is no ``harness/pinned/`` and the top-level
  ``pinned/`` is used instead: the same files.

Nothing is written into the package except by the explicit maintainer commands that edit the pin
(``pin record``, ``matrix --record-locks``), which write where the files were found. Reports go to a
folder in the current working directory by default (``DEFAULT_REPORT_DIR``); the repository's committed
``reports/`` (``CHECKOUT_REPORTS_DIR``) are regenerated only explicitly.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

CHECKOUT_ROOT = Path(__file__).resolve().parents[1]
CHECKOUT_REPORTS_DIR = CHECKOUT_ROOT / "reports"
REPORTS_DIR = CHECKOUT_REPORTS_DIR  # the committed golden reports of a checkout (not a default output)
DEFAULT_REPORT_DIR = Path("ragas-compat-report")  # relative: resolved against the current working directory

CASES_SCHEMA = "cases/cases.schema.json"
REPORT_SCHEMA = "report/report.schema.json"
DEFAULT_SUITE = "cases/suites/default.json"
PINNED_PACKAGE_DIR = "pinned"  # inside the harness package of a wheel (pyproject: ragas_compat.pinned -> pinned/)


def package_text(relative: str) -> str:
    """The text of a file shipped inside the ``harness`` package (e.g. ``CASES_SCHEMA``)."""
    return resources.files("ragas_compat").joinpath(relative).read_text(encoding="utf-8")


def package_json(relative: str) -> Any:
    return json.loads(package_text(relative))


def pinned_dir() -> Path:
    """The folder of the pinned data: ``harness/pinned/`` of an installed wheel, else the
    checkout's top-level ``pinned/``."""
    shipped = resources.files("ragas_compat").joinpath(PINNED_PACKAGE_DIR)
    if isinstance(shipped, Path) and shipped.is_dir():
        return shipped
    return CHECKOUT_ROOT / "pinned"


PINNED_DIR = pinned_dir()


def pinned(name: str) -> Path:
    """A file of the pinned data (``pin.toml``, ``expectations.toml``, ``versions.toml``,
    ``constraints.txt``, ``matrix-locks``)."""
    return PINNED_DIR / name


def pinned_text(name: str) -> str:
    return pinned(name).read_text(encoding="utf-8")


def pinned_display(name: str) -> str:
    """The portable name of a pinned file in reports: ``pinned/NAME`` wherever it was found."""
    return f"pinned/{name}"


def display_path(path: Path) -> str:
    """A portable name for a file: ``pinned/...`` for the pinned data, relative to the checkout
    when inside it, else its name."""
    resolved = path.resolve()
    try:
        return "pinned/" + resolved.relative_to(PINNED_DIR.resolve()).as_posix()
    except ValueError:
        pass
    try:
        return resolved.relative_to(CHECKOUT_ROOT).as_posix()
    except ValueError:
        return path.name
