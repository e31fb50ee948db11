"""Run the Ragas probe (harness/probe/run_probe.py) as a subprocess and collect its JSON.

The probe runs under any interpreter (``python``) with ``sys_path_prefix`` prepended to
PYTHONPATH (e.g. a Ragas git checkout's ``src/``), RAGAS_DO_NOT_TRACK=true, and a timeout.
Every way it can fail becomes ``ProbeRun.error``; nothing here raises for a probe failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROBE_SCRIPT: Path = Path(__file__).resolve().parent / "probe" / "run_probe.py"
EXIT_BAD_REQUEST = 2
EXIT_RAGAS_IMPORT = 3
STDERR_TAIL_CHARS = 2000


@dataclass(frozen=True)
class ProbeRun:
    """The outcome of one probe subprocess.

    ok:     True when the probe ran to completion and wrote its output (individual results
            may still hold per-(case, target) errors).
    error:  run-level error when not ok, e.g. "Ragas could not be imported:
            ModuleNotFoundError: No module named 'ragas'", "probe timed out after 600 s",
            "probe crashed (exit -6): <stderr tail>", "probe rejected the request: ...".
    output: the parsed probe output (probe format 1); {} when none could be read. On a Ragas
            import failure it still holds the probe's python/ragas/network sections.
    stderr: the probe's stderr (Ragas log lines land here).
    seconds: wall time of the subprocess.
    """

    ok: bool
    error: str | None
    output: dict = field(default_factory=dict)
    stderr: str = ""
    seconds: float = 0.0


def _tail(text: str) -> str:
    text = text.strip()
    if not text:
        return "(no stderr)"
    return text if len(text) <= STDERR_TAIL_CHARS else "..." + text[-STDERR_TAIL_CHARS:]


def _environment(sys_path_prefix: Sequence[str]) -> dict[str, str]:
    env = dict(os.environ)
    env["RAGAS_DO_NOT_TRACK"] = "true"
    env.pop("PYTHONHOME", None)
    parts = [str(Path(p).resolve()) for p in sys_path_prefix]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        env.pop("PYTHONPATH", None)
    return env


def run_probe(cases: list[dict], *, python: str = sys.executable,
              sys_path_prefix: Sequence[str] = (), targets: Sequence[str] | None = None,
              timeout: float = 600.0, evaluate: bool | dict | None = None) -> ProbeRun:
    """Run the probe on ``cases`` (raw case dicts) for ``targets`` (None = every legacy target
    whose inputs a case has) and return what happened. ``evaluate`` (true or a settings object,
    see harness/probe/probe_evaluate.py) also runs Ragas's evaluate()/aevaluate() on the suite."""
    import time

    with tempfile.TemporaryDirectory(prefix="ragas-compat-probe-") as tmp:
        request_path = Path(tmp) / "request.json"
        output_path = Path(tmp) / "result.json"
        request = {"cases": cases, "targets": None if targets is None else list(targets),
                   "output": str(output_path)}
        if evaluate:
            request["evaluate"] = evaluate
        request_path.write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                [python, str(PROBE_SCRIPT), str(request_path)],
                cwd=tmp, env=_environment(sys_path_prefix), stdin=subprocess.DEVNULL,
                capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            return ProbeRun(False, f"probe timed out after {timeout:g} s", {}, stderr,
                            time.perf_counter() - started)
        except OSError as exc:
            return ProbeRun(False, f"cannot start the probe with {python}: {exc}", {}, "", 0.0)
        seconds = time.perf_counter() - started
        output: dict = {}
        if output_path.exists():
            try:
                output = json.loads(output_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                return ProbeRun(False, f"probe wrote unreadable output: {exc}", {}, proc.stderr, seconds)

    if proc.returncode == 0 and output:
        return ProbeRun(True, None, output, proc.stderr, seconds)
    if proc.returncode == EXIT_RAGAS_IMPORT and output:
        reason = output.get("ragas", {}).get("import_error")
        return ProbeRun(False, f"Ragas could not be imported: {reason}", output, proc.stderr, seconds)
    if proc.returncode == EXIT_BAD_REQUEST:
        return ProbeRun(False, f"probe rejected the request: {_tail(proc.stderr)}", output,
                        proc.stderr, seconds)
    return ProbeRun(False, f"probe crashed (exit {proc.returncode}): {_tail(proc.stderr)}", output,
                    proc.stderr, seconds)
