"""The architecture holds: import contracts (pyproject.toml [tool.importlinter]) and a clean ruff check.

Both tools come with the test extra; they run on the checkout this test file belongs to.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is not installed (it is in the project's test extra)"
    return found


def test_import_contracts_are_kept():
    result = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_ruff_finds_nothing():
    result = subprocess.run([_tool("ruff"), "check", "--no-cache", "harness", "tests"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
