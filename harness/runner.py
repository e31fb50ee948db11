"""Run the Ragas probe (the package ``ragas_compat_probe``, harness/probe/) as a subprocess and collect its JSON.

The probe runs under any interpreter (``python``) with ``sys_path_prefix`` prepended to
PYTHONPATH (e.g. a Ragas git checkout's ``src/``), RAGAS_DO_NOT_TRACK=true, and a timeout.
Every way it can fail becomes ``ProbeRun.error``; nothing here raises for a probe failure.
The launch command, the request, the output and the exit codes are those of ``harness/probe/protocol.py``.

Process hygiene (``run_in_own_group``, also used to locate an installed Ragas):

- every subprocess starts in its own session, so its own process group: a Ctrl-C at the terminal
  reaches the harness only, and the harness decides what to end;
- when it ends, however it ends (exit, timeout, an exception such as KeyboardInterrupt in the
  harness), its whole process group is killed (SIGKILL: grandchildren too, and a probe that
  ignores SIGTERM) before it is reaped, and its temporary folder is removed;
- ``stop_all_probes()`` kills every running group at once, from any thread, and makes new ones fail
  at once until ``allow_probes()``;
- ``signals_raise()`` is the SIGINT/SIGTERM handling of the console entry (installed before it starts
  the early probe) and of every command: it calls ``stop_all_probes()`` and raises KeyboardInterrupt or
  ``Terminated``, so clean-up runs; ``interruption`` says how such an exception ends the process;
- the probe is told the host's pid (``HOST_PID_FLAG``) and stops waiting for a request once that
  process has gone, even when it died before the probe started;
- paths are made absolute before the subprocess starts (it runs in a temporary folder):
  ``--python`` (``resolve_executable``), the sys.path prefix and relative PYTHONPATH entries;
- ``check_timeout`` refuses a timeout that is not a positive, finite number of seconds.
"""

from __future__ import annotations

import atexit
import json
import marshal
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ragas_compat.errors import ExitCode, HarnessInputError, RagasUnavailable
from ragas_compat.probe.protocol import (
    API_SELFTEST,
    ENTRY_PROBE,
    EXIT_BAD_REQUEST,
    EXIT_OK,
    EXIT_RAGAS_IMPORT,
    HOST_PID_FLAG,
    LOCATED_FILE,
    PROGRESS_PREFIX,
    RESULTS_LINE,
    TELEMETRY_ENV,
    WAIT_FLAG,
    Budget,
    ProbeRequest,
    TargetSpec,
    full_budget,
    probe_command,
)

STDERR_TAIL_CHARS = 2000
STOPPED_MESSAGE = "probe stopped: the run was interrupted"
LOCATED_WITHIN = 15.0  # seconds a started probe has to say where Ragas is before it is asked directly
PROGRESS_EVERY = 0.2  # seconds between two progress callbacks while a probe works
POLL_AT_MOST = 0.02   # seconds between two looks for a probe's output or exit (backing off from 1 ms)

_RUNNING: dict[int, subprocess.Popen] = {}  # pid -> process, for stop_all_probes (any thread)
_STOPPING = threading.Event()


def check_timeout(timeout: object, option: str = "--timeout") -> float:
    """``timeout`` as seconds; HarnessInputError (exit 2) unless it is a positive, finite number."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise HarnessInputError(f"{option} {timeout!r}: must be a positive, finite number of seconds",
                                field=option, value=timeout)
    return float(timeout)


_CASE_BUDGET: dict = {}  # set_case_budget: the command line's per-case budget, sent with every probe request


def set_case_budget(*, judge_calls: int | None = None, case_seconds: float | None = None,
                    memory_gib: float | None = None) -> None:
    """The per-(case, target) budget of every probe request this process sends (``protocol.Budget``;
    None: the default). ``memory_gib``: the memory in GiB one case may allocate in the probe (0: no limit).
    HarnessInputError (exit 2) for a value out of range."""
    _CASE_BUDGET.clear()
    if judge_calls is not None:
        if isinstance(judge_calls, bool) or not isinstance(judge_calls, int) or judge_calls < 1:
            raise HarnessInputError(f"--case-judge-calls {judge_calls!r}: must be a positive integer",
                                    field="--case-judge-calls", value=judge_calls)
        _CASE_BUDGET["judge_calls"] = judge_calls
    if case_seconds is not None:
        _CASE_BUDGET["case_seconds"] = check_timeout(case_seconds, "--case-timeout")
    if memory_gib is not None:
        if isinstance(memory_gib, bool) or not isinstance(memory_gib, (int, float)) or not math.isfinite(memory_gib) \
                or memory_gib < 0 or 0 < memory_gib < 0.25:
            raise HarnessInputError(f"--case-memory {memory_gib!r}: the memory one case may allocate, in GiB, "
                                    "at least 0.25 (0: no limit)", field="--case-memory", value=memory_gib)
        _CASE_BUDGET["memory"] = int(memory_gib * 2**30) if memory_gib else None


def case_budget() -> Budget:
    """The budget a probe request carries (``set_case_budget``, the defaults for the rest)."""
    return full_budget(_CASE_BUDGET)


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


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that clean-up (``finally`` blocks) runs as for Ctrl-C."""


@contextmanager
def signals_raise() -> Iterator[None]:
    """In the main thread: SIGINT raises KeyboardInterrupt and SIGTERM raises ``Terminated``, both after
    killing every running probe group (so worker threads waiting on a probe return at once). Signals
    the caller ignores stay ignored; the previous handlers are restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, frame: object) -> None:
        stop_all_probes()
        raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated()

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) not in (signal.SIG_IGN, None):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def interruption(exc: BaseException) -> tuple[str, str, ExitCode]:
    """How an interruption ends a command: ``("interrupted", "SIGINT", 130)`` for a KeyboardInterrupt,
    ``("terminated", "SIGTERM", 143)`` for ``Terminated`` (docs/cli.md, exit codes); the one line said
    is ``<word> (<signal>)``."""
    if isinstance(exc, Terminated):
        return "terminated", "SIGTERM", ExitCode.TERMINATED
    return "interrupted", "SIGINT", ExitCode.INTERRUPTED


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


class GroupProcess:
    """A subprocess in its own session (own process group), stdin from /dev/null, stdout and stderr
    into files in ``folder`` (no pipe a grandchild could hold open). ``finish`` waits for it within
    a deadline, then kills its whole group and reaps it; ``kill`` ends it at once.

    Raises OSError when it cannot be started (or the output files cannot be created)."""

    def __init__(self, argv: Sequence[str], *, folder: str | Path, cwd: str | Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.out_path, self.err_path = Path(folder) / "stdout.txt", Path(folder) / "stderr.txt"
        self.started = time.perf_counter()
        self.proc: subprocess.Popen | None = None
        if _STOPPING.is_set():
            return
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err, start_new_session=True)
        _RUNNING[self.proc.pid] = self.proc
        if _STOPPING.is_set():  # stop_all_probes() ran while this one was starting
            _kill_group(self.proc)

    def exited(self) -> bool:
        """Has it exited (or was it never started)? It is left unreaped."""
        return self.proc is None or _exited(self.proc)

    def finish(self, deadline: float) -> Completed:
        """Wait until ``deadline`` (a ``time.perf_counter()`` value) at most, then kill the group and reap."""
        if self.proc is None:
            return Completed(None, "", "", 0.0, stopped=True)
        exited = False
        try:
            exited = _wait_for_exit(self.proc, deadline - time.perf_counter())
        finally:
            self.kill()
        stopped = _STOPPING.is_set() and self.proc.returncode == -signal.SIGKILL
        return Completed(self.proc.returncode if exited and not stopped else None,
                         self.out_path.read_bytes().decode("utf-8", errors="replace"),
                         self.err_path.read_bytes().decode("utf-8", errors="replace"),
                         time.perf_counter() - self.started, stopped=stopped)

    def kill(self) -> None:
        """Kill the whole group (grandchildren of a finished process too) and reap the process."""
        if self.proc is None:
            return
        _kill_group(self.proc)
        _RUNNING.pop(self.proc.pid, None)
        self.proc.wait()


def run_in_own_group(argv: Sequence[str], *, timeout: float, cwd: str | Path | None = None,
                     env: dict[str, str] | None = None, folder: str | Path | None = None) -> Completed:
    """Run ``argv`` as a ``GroupProcess`` (output files in ``folder``, default a temporary folder
    removed afterwards) for at most ``timeout`` seconds; then kill its whole process group and reap it.

    Raises OSError when it cannot be started (or the output files cannot be created)."""
    timeout = check_timeout(timeout, "timeout")
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="ragas-compat-run-", ignore_cleanup_errors=True) as tmp:
            return run_in_own_group(argv, timeout=timeout, cwd=cwd, env=env, folder=tmp)
    process = GroupProcess(argv, folder=folder, cwd=cwd, env=env)
    return process.finish(process.started + timeout)


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
    seconds: wall time of the subprocess (of a chained request: since the previous answer).
    """

    ok: bool
    error: str | None
    output: dict = field(default_factory=dict)
    stderr: str = ""
    seconds: float = 0.0


def request_targets(names: Sequence[str] | None = None, cases: Sequence[dict] = ()) -> list[TargetSpec]:
    """The ``targets`` of a probe request, from the metric registry (where every target is declared):
    every registered target (``names`` None), or the named ones in the given order (a ``selftest:``
    name is the probe's own fault-handling target). A name no registered metric declares stays a bare
    string, which the probe rejects (``unknown targets [...]``) for that request only. ``cases`` (raw,
    validated case dicts) may configure targets (``"targets"``, ``ragas_compat.cases.configurations``):
    those are requested too, for the cases that name them (with ``names``: those of the named targets'
    metrics), and a built-in target only for the cases that keep it."""
    from ragas_compat.cases.configurations import resolve
    from ragas_compat.metrics.registry import metrics_for_target, probe_targets, suite_probe_targets

    declared = suite_probe_targets([(str(case.get("id")), resolve(case.get("targets")))
                                    for case in cases if isinstance(case, dict)])
    if names is None:
        return list(declared.values())
    builtin = probe_targets()
    selftest = API_SELFTEST + ":"
    chosen: list = []
    for name in names:
        if name in declared:
            chosen.append(declared[name])
        elif name.startswith(selftest):
            chosen.append({"api": API_SELFTEST, "ragas_class": name.removeprefix(selftest)})
        elif name not in builtin:  # a built-in target every case replaced is left out
            chosen.append(name)
    selected = {spec.name for name in names for spec in metrics_for_target(name)}
    chosen += [spec for name, spec in declared.items() if name not in builtin and spec["metric"] in selected]
    return chosen


def _tail(text: str) -> str:
    text = text.strip()
    if not text:
        return "(no stderr)"
    return text if len(text) <= STDERR_TAIL_CHARS else "..." + text[-STDERR_TAIL_CHARS:]


def _environment(sys_path_prefix: Sequence[str], telemetry: bool = False) -> dict[str, str]:
    """The probe's environment: telemetry off (``RAGAS_DO_NOT_TRACK=true``) unless ``telemetry``, when the
    probe leaves Ragas's telemetry on and its network guard blocks and counts every attempt."""
    env = dict(os.environ)
    env["RAGAS_DO_NOT_TRACK"] = "false" if telemetry else "true"
    if telemetry:
        env[TELEMETRY_ENV] = "on"
    else:
        env.pop(TELEMETRY_ENV, None)
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


def _read_output_streamed(path: Path) -> dict | str:
    """The probe's output document with ``results`` an iterator that parses one result line at a time
    (probe format 2: the layout after ``RESULTS_LINE``); an output in another layout is read whole
    (``_read_output``). A result line that does not parse raises RagasUnavailable when it is reached."""
    if not path.exists():
        return {}
    lines = _format_2_lines(path)
    try:
        head = next(lines)
    except OSError as exc:
        return f"probe wrote unreadable output: {exc}"
    if head is None:
        return _read_output(path)  # not laid out one result per line
    return {**head, "results": lines}


def _format_2_lines(path: Path) -> Iterator[dict | None]:
    """The probe's output at ``path``, read once: first the document without its results (None when
    it is not in probe format 2's layout), then each result, parsed when it is reached."""
    with open(path, encoding="utf-8") as handle:
        head: list[str] = []
        for line in handle:
            if line.rstrip("\n") == RESULTS_LINE:
                break
            head.append(line)
        else:
            yield None
            return
        while head and not head[-1].strip():
            head.pop()
        if head:  # the last member's comma (the results follow it), as one piece of text with the close
            head[-1] = head[-1].rstrip().removesuffix(",")
        head.append("\n}")
        text = "".join(head)
        del head  # the lines and the text are not held together with what they parse to
        try:
            output = json.loads(text)
        except ValueError:
            output = None
        del text
        if not isinstance(output, dict) or not isinstance(output.get("probe_format"), int) \
                or output["probe_format"] < 2:
            yield None
            return
        yield _evaluate_runs_packed(output)
        for line in handle:
            text = line.rstrip("\n").removesuffix(",")
            if text.strip() == "]":
                return
            try:
                yield json.loads(text)
            except ValueError as exc:
                raise RagasUnavailable(f"probe wrote unreadable output: {exc}") from None


class PackedRuns(Sequence):
    """The runs of an output's ``evaluate`` section, each kept packed (``marshal``: about a fifth of its
    parsed size) and unpacked when it is read, a new copy each time: the host reads them after every
    row is classified (``ragas_compat.compare.dataset_level.from_probe``, a target at a time), when
    holding all of them parsed (about 3 KB a case) is what made its peak. Equal to the list of the runs."""

    __slots__ = ("_packed",)

    def __init__(self, packed: list[bytes]) -> None:
        self._packed = packed  # each run's marshal bytes, in order

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [marshal.loads(data) for data in self._packed[index]]
        return marshal.loads(self._packed[index])

    def __len__(self) -> int:
        return len(self._packed)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (list, PackedRuns)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedRuns({list(self)!r})"


def _evaluate_runs_packed(output: dict) -> dict:
    """``output`` with its ``evaluate`` section's runs packed (``PackedRuns``), each freed as it is
    packed; runs ``marshal`` cannot pack (not JSON data) stay as they are."""
    evaluate = output.get("evaluate")
    runs = evaluate.get("runs") if isinstance(evaluate, dict) else None
    if not isinstance(runs, list):
        return output
    packed: list[bytes] = []
    while runs:  # from the end: each parsed run goes as its bytes are made
        run = runs.pop()
        try:
            packed.append(marshal.dumps(run))
        except ValueError:  # put every run back as it was
            runs.append(run)
            runs.extend(marshal.loads(data) for data in reversed(packed))
            return output
    packed.reverse()
    evaluate["runs"] = PackedRuns(packed)
    return output


class StartedProbe:
    """A probe started before its request: it locates Ragas (``located.json``, at once) and imports
    it while the host loads cases and expectations; ``submit`` hands it the request, ``result``
    waits for the outcome. The deadline (``timeout`` seconds) counts from the start. Requests may
    be chained (``submit(..., chained=True)``, then another ``submit``): one process, one import of
    Ragas, one ``result`` per request in order.

    ``python`` may be relative (to the current folder) or a name on PATH. Nothing here raises for
    a probe failure: ``result()`` returns a ``ProbeRun`` saying what happened. Use it as a context
    manager (or call ``close()``): the process group and the temporary folder go away on exit."""

    def __init__(self, *, python: str = sys.executable, sys_path_prefix: Sequence[str] = (),
                 timeout: float = 600.0, telemetry: bool = False) -> None:
        self.timeout = check_timeout(timeout)
        self.python = python
        self.sys_path_prefix = tuple(str(p) for p in sys_path_prefix)
        self.error: str | None = None
        self.process: GroupProcess | None = None
        self.folder: tempfile.TemporaryDirectory | None = None
        self.deadline = time.perf_counter() + self.timeout
        self.submitted: list[tuple[Path, bool]] = []  # (output path, chained) of each request, in order
        self.answered = 0  # requests whose result() has been asked for (the last one: being waited for)
        self.answered_at = time.perf_counter()
        try:
            self.folder = tempfile.TemporaryDirectory(prefix="ragas-compat-probe-", ignore_cleanup_errors=True)
        except OSError as exc:
            self.error = f"cannot create the probe's temporary folder: {exc}"
            return
        tmp = Path(self.folder.name)
        self.request_path, self.output_path = self._paths(0)
        self.located_path = tmp / LOCATED_FILE
        try:
            # the host's own pid: a probe whose host died before it started would not know whose exit to wait for
            self.process = GroupProcess(probe_command(resolve_executable(python), ENTRY_PROBE, WAIT_FLAG,
                                                      str(self.request_path), HOST_PID_FLAG, str(os.getpid())),
                                        folder=tmp, cwd=tmp, env=_environment(self.sys_path_prefix, telemetry))
        except OSError as exc:
            self.error = f"cannot start the probe with {python}: {exc}"

    def __enter__(self) -> StartedProbe:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def matches(self, python: str, sys_path_prefix: Sequence[str]) -> bool:
        """Was it started for this interpreter and import path?"""
        return (resolve_executable(python) == resolve_executable(self.python)
                and tuple(str(p) for p in sys_path_prefix) == self.sys_path_prefix)

    def located(self, within: float = LOCATED_WITHIN) -> dict | None:
        """Where the probe's interpreter finds Ragas (the probe's ``locate`` answer, written before it
        imports Ragas), waiting ``within`` seconds of the start at most; None when the probe ended or
        did not say (the caller then asks the interpreter directly)."""
        if self.process is None:
            return None
        pause = 0.001
        until = min(self.deadline, self.process.started + within)
        while not self.located_path.exists():
            if self.process.exited() or time.perf_counter() >= until:
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        try:
            located = json.loads(self.located_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return located if isinstance(located, dict) else None

    def _paths(self, index: int) -> tuple[Path, Path]:
        """The request and output files of request ``index`` (0: request.json, result.json)."""
        tmp = Path(self.folder.name)
        suffix = "" if index == 0 else f"-{index}"
        return tmp / f"request{suffix}.json", tmp / f"result{suffix}.json"

    def submit(self, cases: list[dict], *, targets: Sequence[str] | None = None,
               evaluate: bool | dict | None = None, workers: int = 1, chained: bool = False) -> None:
        """Write the request (atomically: the probe waits for the file to appear). ``targets``: names of
        registered targets (``request_targets``; None = every one), each case scored by those whose
        inputs it has; ``evaluate`` (true or a settings
        object, see harness/probe/evaluate.py) also runs Ragas's evaluate()/aevaluate();
        ``workers``: processes the probe forks after importing Ragas to score the cases.
        ``chained``: another ``submit`` follows, and the same probe process serves it after this one
        with the Ragas it has imported (a chain ends with a request that is not chained)."""
        if self.error is not None:
            return
        index = len(self.submitted)
        request_path, output_path = self._paths(index)
        request: ProbeRequest = {"cases": cases, "targets": request_targets(targets, cases),
                                 "output": str(output_path), "workers": max(1, int(workers)),
                                 "budget": case_budget()}
        if evaluate:
            request["evaluate"] = evaluate
        if chained:
            request["next_request"] = str(self._paths(index + 1)[0])
        partial = request_path.with_name(request_path.name + ".partial")
        try:
            partial.write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
            os.replace(partial, request_path)
        except OSError as exc:
            self.error = f"cannot write the probe's request into its temporary folder: {exc}"
            return
        self.submitted.append((output_path, chained))

    def progress(self) -> tuple[int, int]:
        """(units done, units in all) over the probe's workers so far, for the request being waited
        for (the first before any ``result``); (0, 0) before they start."""
        done = total = 0
        if self.folder is not None:
            request = self._paths(max(0, self.answered - 1))[0].name.removesuffix(".json")
            for path in Path(self.folder.name).glob(f"{PROGRESS_PREFIX}{request}-*.txt"):
                try:  # a symbolic link whose target is the count (Progress.write), or a file holding it
                    try:
                        text = os.readlink(path)
                    except OSError:
                        text = path.read_text(encoding="utf-8")
                    worker_done, worker_total = (int(n) for n in text.split())
                except (OSError, ValueError):
                    continue
                done, total = done + worker_done, total + worker_total
        return done, total

    def result(self, on_progress: Callable[[int, int], None] | None = None, *,
               streamed: bool = False, while_exiting: Callable[[dict], None] | None = None) -> ProbeRun:
        """Wait for the next request's outcome (until the deadline) and say what happened;
        ``on_progress(done, total)`` is called about five times a second meanwhile. A chained request's
        outcome is its output file, the probe going on with the next one; the last request's is the
        probe's exit. ``streamed``: the output's ``results`` is an iterator reading them one at a time
        from the probe's file (read it before the next ``result`` or ``close``). ``while_exiting(output)``:
        called with the last request's output as soon as it is read, while the probe exits (the caller
        works on it meanwhile); the outcome still comes from the exit, so a caller discards that work
        when the run is not ok (an exception it raises propagates, the probe left to ``close``)."""
        if self.error is not None or self.process is None:
            return ProbeRun(False, self.error or STOPPED_MESSAGE, {}, "", 0.0)
        output_path, chained = (self.submitted[self.answered] if self.answered < len(self.submitted)
                                else (self.output_path, False))
        self.answered += 1
        read = _read_output_streamed if streamed else _read_output
        if chained and self._wait(lambda: output_path.exists(), on_progress):
            since, self.answered_at = self.answered_at, time.perf_counter()
            output = read(output_path)
            if not streamed:  # read whole: a long chain does not keep every answer in the temporary folder
                for answered_file in (output_path, self._paths(self.answered - 1)[0]):
                    answered_file.unlink(missing_ok=True)
            stderr = self.process.err_path.read_bytes().decode("utf-8", errors="replace")
            if isinstance(output, str):
                return ProbeRun(False, output, {}, stderr, self.answered_at - since)
            return ProbeRun(True, None, output, stderr, self.answered_at - since)
        # the last request's output is read as soon as it is there (the probe renames it into place
        # whole), while the probe exits; its outcome still waits for the exit code
        output = read(output_path) if self._wait(output_path.exists, on_progress) else None
        if while_exiting is not None and isinstance(output, dict) and output:
            while_exiting(output)
        proc = self.process.finish(self.deadline)
        if proc.stopped:
            return ProbeRun(False, STOPPED_MESSAGE, {}, proc.stderr, proc.seconds)
        if proc.timed_out:
            return ProbeRun(False, timed_out_message(self.timeout, self.progress()), {}, proc.stderr, proc.seconds)
        run = _outcome(proc, read(output_path) if output is None else output, self.python)
        # the last request of a chain: its own time, since the answer before it
        return run if self.answered == 1 else replace(run, seconds=time.perf_counter() - self.answered_at)

    def _wait(self, done: Callable[[], bool], on_progress: Callable[[int, int], None] | None) -> bool:
        """Poll until ``done()`` (True), or the probe exited, the deadline passed or the harness is
        stopping (False); ``on_progress`` at most every PROGRESS_EVERY seconds, and once at the end."""
        pause, reported = 0.001, 0.0
        while not (done() or self.process.exited() or time.perf_counter() >= self.deadline or _STOPPING.is_set()):
            if on_progress is not None and time.perf_counter() - reported >= PROGRESS_EVERY:
                on_progress(*self.progress())
                reported = time.perf_counter()
            time.sleep(pause)
            pause = min(pause * 2, POLL_AT_MOST)
        if on_progress is not None:
            on_progress(*self.progress())
        return done()  # asked again: the output may have appeared just before the probe exited

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
        if self.folder is not None:
            self.folder.cleanup()


def timed_out_message(timeout: float, progress: tuple[int, int]) -> str:
    """``probe timed out after 600 s``, and while it was scoring how far it got and what to do: the
    timeout bounds the whole probe, so a bigger suite needs a larger ``--timeout``."""
    done, total = progress
    if not total:
        return f"probe timed out after {timeout:g} s"
    return (f"probe timed out after {timeout:g} s with {done:,} of {total:,} scoring units done; "
            "the timeout bounds the whole run, so a suite this size needs a larger --timeout")


def _outcome(proc: Completed, output: dict | str, python: str) -> ProbeRun:
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


def run_probe(cases: list[dict], *, python: str = sys.executable,
              sys_path_prefix: Sequence[str] = (), targets: Sequence[str] | None = None,
              timeout: float = 600.0, evaluate: bool | dict | None = None, workers: int = 1,
              telemetry: bool = False) -> ProbeRun:
    """Run the probe on ``cases`` (raw case dicts) and return what happened (see ``StartedProbe``
    for the arguments; ``telemetry``: leave Ragas's telemetry on, every attempt blocked and counted in
    the output's ``network_attempts``). Raises HarnessInputError only for a timeout that is not
    positive and finite."""
    with StartedProbe(python=python, sys_path_prefix=sys_path_prefix, timeout=timeout, telemetry=telemetry) as probe:
        probe.submit(cases, targets=targets, evaluate=evaluate, workers=workers)
        return probe.result()


# -- a probe started before the command line has loaded (ragas_compat.launch) -----------------
_EARLY: list[StartedProbe] = []


def default_workers() -> int:
    """Processes to score in by default: one per core."""
    return max(1, os.cpu_count() or 1)


def start_early_probe(*, python: str, sys_path_prefix: Sequence[str] = (), timeout: float = 600.0) -> None:
    """Start a probe now, for a command that will ask for it with ``take_early_probe``; it is
    closed at exit if nobody takes it."""
    probe = StartedProbe(python=python, sys_path_prefix=sys_path_prefix, timeout=timeout)
    _EARLY.append(probe)
    atexit.register(probe.close)


def take_early_probe(*, python: str, sys_path_prefix: Sequence[str] = (), timeout: float) -> StartedProbe | None:
    """The probe ``start_early_probe`` started for this interpreter, import path and timeout, or
    None (any other early probe is closed: the command asked for something else)."""
    while _EARLY:
        probe = _EARLY.pop()
        if probe.error is None and probe.timeout == timeout and probe.matches(python, sys_path_prefix):
            return probe
        probe.close()
    return None
