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


def test_every_probe_module_but_the_protocol_is_forbidden_to_the_host():
    """The host-side contract lists the probe's modules by name: a new probe module must join the list."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    [host] = [c for c in contracts if c["name"].startswith("The host side reaches the probe only")]
    modules = {f"ragas_compat.probe.{path.stem}" for path in (ROOT / "harness" / "probe").glob("*.py")
               if path.stem not in ("__init__", "probe_protocol")}
    assert modules == set(host["forbidden_modules"])
