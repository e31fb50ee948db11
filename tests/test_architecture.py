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


def test_the_host_may_import_only_the_probe_protocol():
    """One contract protects the whole probe package (sub-packages included: a new probe module is covered
    without naming it); the only import from outside it that the contract lets through is the protocol's."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    [host] = [c for c in contracts if c["name"].startswith("The host side reaches the probe only")]
    assert host["type"] == "protected" and host.get("as_packages", True)
    assert host["protected_modules"] == host["allowed_importers"] == ["ragas_compat.probe"]
    assert host["ignore_imports"] == ["ragas_compat.** -> ragas_compat.probe.protocol"]
