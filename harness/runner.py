"""Run the Ragas probe (harness/probe/run_probe.py) as a subprocess and collect its JSON.

The probe runs under any interpreter (``python``) with ``sys_path_prefix`` prepended to
PYTHONPATH (e.g. a Ragas git checkout's ``src/``), RAGAS_DO_NOT_TRACK=true, and a timeout.
Every way it can fail becomes ``ProbeRun.error``; nothing here raises for a probe failure.
The request, the output and the exit codes are those of ``harness/probe/probe_protocol.py``.

Process hygiene (``run_in_own_group``, also used to locate an installed Ragas):

- every subprocess starts in its own session, so its own process group: a Ctrl-C at the terminal
  reaches the harness only, and the harness decides what to end;
- when it ends, however it ends (exit, timeout, an exception such as KeyboardInterrupt in the
  harness), its whole process group is killed (SIGKILL: grandchildren too, and a probe that
  ignores SIGTERM) before it is reaped, and its temporary folder is removed;
- ``stop_all_probes()`` (the command line's SIGINT/SIGTERM handler calls it) kills every running
  group at once, from any thread, and makes new ones fail at once until ``allow_probes()``;
- paths are made absolute before the subprocess starts (it runs in a temporary folder):
  ``--python`` (``resolve_executable``), the sys.path prefix and relative PYTHONPATH entries;
- ``check_timeout`` refuses a timeout that is not a positive, finite number of seconds.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessInputError
from harness.probe.probe_protocol import EXIT_BAD_REQUEST, EXIT_OK, EXIT_RAGAS_IMPORT, ProbeRequest

PROBE_DIR: Path = Path(__file__).resolve().parent / "probe"  # the probe scripts, run by file path
PROBE_SCRIPT: Path = PROBE_DIR / "run_probe.py"
STDERR_TAIL_CHARS = 2000
STOPPED_MESSAGE = "probe stopped: the run was interrupted"

_RUNNING: dict[int, subprocess.Popen] = {}  # pid -> process, for stop_all_probes (any thread)
_STOPPING = threading.Event()


def check_timeout(timeout: object, option: str = "--timeout") -> float:
    """``timeout`` as seconds; HarnessInputError (exit 2) unless it is a positive, finite number."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise HarnessInputError(f"{option} {timeout!r}: must be a positive, finite number of seconds",
                                field=option, value=timeout)
    return float(timeout)


def resolve_executable(python: str) -> str:
    """``python`` as an absolute path, valid whatever the subprocess's working folder.

    A path with a separator is made absolute against the current folder without following
    symlinks (a virtualenv's ``bin/python`` stays itself); a bare name is looked up on PATH;
    a bare name not found is returned unchanged (starting it then fails cleanly)."""
    python = os.fspath(python)
    if os.sep in python or (os.altsep and os.altsep in python):
        return os.path.abspath(os.path.expanduser(python))
    found = shutil.which(python)
    return os.path.abspath(found) if found else python


def stop_all_probes() -> None:
    """Kill the process group of every running subprocess started here and refuse new ones (until
    ``allow_probes()``). Safe from a signal handler and from any thread."""
    _STOPPING.set()
    for proc in list(_RUNNING.copy().values()):
        _kill_group(proc)


def allow_probes() -> None:
    """Undo ``stop_all_probes()`` for subprocesses started from now on."""
    _STOPPING.clear()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # the group is gone (macOS: EPERM for a zombie leader)
        pass


def _exited(proc: subprocess.Popen) -> bool:
    """Has ``proc`` exited? Not reaped (WNOWAIT): its pid keeps naming its process group."""
    if hasattr(os, "waitid"):
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _wait_for_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """True when ``proc`` exited within ``timeout`` seconds (left unreaped), False otherwise."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while not _exited(proc):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)
    return True


@dataclass(frozen=True)
class Completed:
    """What ``run_in_own_group`` saw: ``returncode`` None when the timeout ended the process."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    stopped: bool = False  # ended by stop_all_probes()

    @property
    def timed_out(self) -> bool:
        return self.returncode is None and not self.stopped


def run_in_own_group(argv: Sequence[str], *, timeout: float, cwd: str | Path | None = None,
                     env: dict[str, str] | None = None, folder: str | Path | None = None) -> Completed:
    """Run ``argv`` in a new session with stdin from /dev/null, stdout and stderr into files (in
    ``folder``, default a temporary folder removed afterwards; no pipe a grandchild could hold
    open), for at most ``timeout`` seconds; then kill its whole process group and reap it.

    Raises OSError when it cannot be started (or the output files cannot be created)."""
    timeout = check_timeout(timeout, "timeout")
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="ragas-compat-run-", ignore_cleanup_errors=True) as tmp:
            return run_in_own_group(argv, timeout=timeout, cwd=cwd, env=env, folder=tmp)
    out_path, err_path = Path(folder) / "stdout.txt", Path(folder) / "stderr.txt"
    if _STOPPING.is_set():
        return Completed(None, "", "", 0.0, stopped=True)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        _RUNNING[proc.pid] = proc
        exited = False
        try:
            if _STOPPING.is_set():  # stop_all_probes() ran while this one was starting
                _kill_group(proc)
            exited = _wait_for_exit(proc, timeout)
        finally:
            _kill_group(proc)  # grandchildren of a finished process; everything on timeout or an exception
            _RUNNING.pop(proc.pid, None)
            proc.wait()
        seconds = time.perf_counter() - started
    stopped = _STOPPING.is_set() and proc.returncode == -signal.SIGKILL
    return Completed(proc.returncode if exited and not stopped else None,
                     out_path.read_bytes().decode("utf-8", errors="replace"),
                     err_path.read_bytes().decode("utf-8", errors="replace"), seconds, stopped=stopped)


@dataclass(frozen=True)
class ProbeRun:
    """The outcome of one probe subprocess.

    ok:     True when the probe ran to completion and wrote its output (individual results
            may still hold per-(case, target) errors).
    error:  run-level error when not ok, e.g. "Ragas could not be imported:
            ModuleNotFoundError: No module named 'ragas'", "probe timed out after 600 s",
            "probe crashed (exit -6): <stderr tail>", "probe rejected the request: ...".
    output: the parsed probe output (a ``ProbeOutput``, probe format 1); {} when none could be
            read. On a Ragas import failure it still holds the probe's python/ragas/network sections.
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
    if env.get("PYTHONPATH"):  # relative entries would be read against the probe's temporary folder
        parts += [os.path.abspath(entry) for entry in env["PYTHONPATH"].split(os.pathsep) if entry]
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        env.pop("PYTHONPATH", None)
    return env


def _read_output(path: Path) -> dict | str:
    """The probe's output document, {} when absent, or a message saying why it cannot be read."""
    if not path.exists():
        return {}
    try:
        output = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"probe wrote unreadable output: {exc}"
    return output if isinstance(output, dict) else f"probe wrote unreadable output: a JSON {type(output).__name__}"


def run_probe(cases: list[dict], *, python: str = sys.executable,
              sys_path_prefix: Sequence[str] = (), targets: Sequence[str] | None = None,
              timeout: float = 600.0, evaluate: bool | dict | None = None) -> ProbeRun:
    """Run the probe on ``cases`` (raw case dicts) for ``targets`` (None = every legacy and
    collections target whose inputs a case has) and return what happened. ``evaluate`` (true or
    a settings object, see harness/probe/probe_evaluate.py) also runs Ragas's
    evaluate()/aevaluate() on the suite. ``python`` may be relative (to the current folder) or a
    name on PATH. Raises HarnessInputError only for a timeout that is not positive and finite."""
    timeout = check_timeout(timeout)
    executable = resolve_executable(python)
    try:
        folder = tempfile.TemporaryDirectory(prefix="ragas-compat-probe-", ignore_cleanup_errors=True)
    except OSError as exc:
        return ProbeRun(False, f"cannot create the probe's temporary folder: {exc}", {}, "", 0.0)
    with folder as tmp:
        request_path = Path(tmp) / "request.json"
        output_path = Path(tmp) / "result.json"
        request: ProbeRequest = {"cases": cases, "targets": None if targets is None else list(targets),
                                 "output": str(output_path)}
        if evaluate:
            request["evaluate"] = evaluate
        try:
            request_path.write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
        except OSError as exc:
            return ProbeRun(False, f"cannot write the probe's request into its temporary folder: {exc}", {}, "", 0.0)
        try:
            proc = run_in_own_group([executable, str(PROBE_SCRIPT), str(request_path)], timeout=timeout,
                                    cwd=tmp, env=_environment(sys_path_prefix), folder=tmp)
        except OSError as exc:
            return ProbeRun(False, f"cannot start the probe with {python}: {exc}", {}, "", 0.0)
        if proc.stopped:
            return ProbeRun(False, STOPPED_MESSAGE, {}, proc.stderr, proc.seconds)
        if proc.timed_out:
            return ProbeRun(False, f"probe timed out after {timeout:g} s", {}, proc.stderr, proc.seconds)
        output = _read_output(output_path)
    seconds = proc.seconds
    if isinstance(output, str):
        return ProbeRun(False, output, {}, proc.stderr, seconds)
    if proc.returncode == EXIT_OK and output:
        return ProbeRun(True, None, output, proc.stderr, seconds)
    if proc.returncode == EXIT_RAGAS_IMPORT and output:
        reason = output.get("ragas", {}).get("import_error")
        return ProbeRun(False, f"Ragas could not be imported: {reason}", output, proc.stderr, seconds)
    if proc.returncode == EXIT_BAD_REQUEST:
        return ProbeRun(False, f"probe rejected the request: {_tail(proc.stderr)}", output,
                        proc.stderr, seconds)
    if proc.returncode == EXIT_OK:
        return ProbeRun(False, f"probe exited without a result (is {python} a Python interpreter?): "
                               f"{_tail(proc.stderr)}", output, proc.stderr, seconds)
    return ProbeRun(False, f"probe crashed (exit {proc.returncode}): {_tail(proc.stderr)}", output,
                    proc.stderr, seconds)
