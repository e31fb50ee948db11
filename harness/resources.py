"""Where the harness finds its files: bundled suites, schemas and the ``pinned/`` folder.

Package data (the bundled case suites, the case and report schemas) is read with
``importlib.resources``, so it works from a wheel as from a checkout. ``pinned/`` (the pin
manifest, constraints, expectations, version rules, matrix locks) and ``reports/`` sit next to
the package in a checkout; this module is the one place that computes where.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

CHECKOUT_ROOT = Path(__file__).resolve().parents[1]
PINNED_DIR = CHECKOUT_ROOT / "pinned"
REPORTS_DIR = CHECKOUT_ROOT / "reports"

CASES_SCHEMA = "cases/cases.schema.json"
REPORT_SCHEMA = "report/report.schema.json"
DEFAULT_SUITE = "cases/suites/default.json"


def package_text(relative: str) -> str:
    """The text of a file shipped inside the ``harness`` package (e.g. ``CASES_SCHEMA``)."""
    return resources.files("harness").joinpath(relative).read_text(encoding="utf-8")


def package_json(relative: str) -> Any:
    return json.loads(package_text(relative))


def pinned(name: str) -> Path:
    """A file of the ``pinned/`` folder (``pin.toml``, ``expectations.toml``, ``versions.toml`` ...)."""
    return PINNED_DIR / name


def display_path(path: Path) -> str:
    """A portable name for a file: relative to the checkout when inside it, else its name."""
    try:
        return path.resolve().relative_to(CHECKOUT_ROOT).as_posix()
    except ValueError:
        return path.name
