"""The one recording probe of a ``record`` run, read batch by batch.

``RecordingProbe`` starts ``harness/probe/record/`` once with every sample still to record (Ragas, the
judge's client and the network guard are set up once), and ``batches()`` yields each batch document
the probe writes (``OUTPUT.<k>``, every ``batch_size`` finished samples; see the probe's docstring) as
soon as it appears, so the caller rewrites the case file after each batch while the probe scores on.

Budgets: ``timeout`` is the seconds the probe may take for one batch, counted from the start or from
the moment the caller finished with the batch before (the caller's own writing is not counted); past
it the probe's process group is killed and ``RagasUnavailable`` says which batch it was (earlier
batches are the caller's). Leaving the ``with`` block (done, an error, Ctrl-C, SIGTERM) kills the
probe's group and removes its temporary folder; a probe whose command was killed with SIGKILL ends
itself (``exit_with_parent`` in the probe).

Early start (``start_early``, called by the console entry ``launch.main`` for a ``record`` command line
before the command line loads): the probe is started at once with the endpoints and import path that
command line would give it, installs its network guard and imports Ragas while the harness loads, reads
the dataset and checks the judge, then waits for its request. ``RecordingProbe`` takes it when the
interpreter, endpoints and import path of its request are exactly those (the probe refuses a request
that differs), and closes it otherwise; one not taken is closed at exit. The guess only saves time: it
never changes what records.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.probe.protocol import ENTRY_RECORD, Budget, probe_command
from ragas_compat.runner import GroupProcess, resolve_executable

POLL_FIRST, POLL_MAX = 0.001, 0.05  # seconds between looks for the next batch (doubling up to the max)


def probe_env() -> dict[str, str]:
    """The recording probe's environment: telemetry off, no PYTHONHOME, PYTHONPATH made absolute."""
    env = dict(os.environ)
    env["RAGAS_DO_NOT_TRACK"] = "true"
    env.pop("PYTHONHOME", None)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    return env


def build_request(samples: list[dict[str, Any]], metrics: tuple[str, ...], judge: Any, *, concurrency: int,
                  batch_size: int, budget: Budget, output: str) -> dict[str, Any]:
    """The recording probe's request (the probe's docstring): ``judge`` a ``session.Judge`` or None."""
    from ragas_compat.metrics.registry import metric as metric_spec

    return {"samples": samples, "metrics": list(metrics),
            "targets": [target for name in metrics for target in metric_spec(name).probe_targets()],
            "judge": None if judge is None else judge.request(),
            "allow": [list(a) for a in (judge.allow if judge else ())], "sys_path": [os.getcwd()],
            "concurrency": concurrency, "batch_size": batch_size, "budget": budget, "output": output}


class EarlyProbe:
    """A recording probe started before the command line was read (``start_early``): its folder, its
    process and what it was started with."""

    def __init__(self, python: str, allow: list[list[Any]], sys_path: list[str]) -> None:
        self.python, self.allow, self.sys_path = resolve_executable(python), allow, sys_path
        self._tmp: tempfile.TemporaryDirectory | None = tempfile.TemporaryDirectory(
            prefix="ragas-compat-record-", ignore_cleanup_errors=True)
        self.folder = Path(self._tmp.name)
        self.request = self.folder / "request.json"
        start = self.folder / "start.json"
        self.process: GroupProcess | None = None
        try:
            start.write_text(json.dumps({"early": True, "allow": allow, "sys_path": sys_path,
                                         "request": str(self.request), "host_pid": os.getpid()}), encoding="utf-8")
            self.process = GroupProcess(probe_command(self.python, ENTRY_RECORD, str(start)), folder=self.folder,
                                        cwd=self.folder, env=probe_env())
        except OSError:
            self.close()  # its folder too
            raise

    def matches(self, python: str, request: dict[str, Any]) -> bool:
        return (self.process is not None and not self.process.exited() and resolve_executable(python) == self.python
                and request.get("allow") == self.allow and request.get("sys_path") == self.sys_path)

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


_EARLY: list[EarlyProbe] = []


def _values(argv: Sequence[str], name: str) -> list[str]:
    """Every value of ``--name VALUE`` / ``--name=VALUE`` in ``argv``, in order."""
    found = []
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            found.append(argv[index + 1])
        elif arg.startswith(name + "="):
            found.append(arg[len(name) + 1:])
    return found


def _endpoint(url: str) -> list[Any] | None:
    """``[host, port]`` as ``session.endpoint`` makes it (None when it would refuse the URL)."""
    parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:
        return None
    return [parsed.hostname, port] if parsed.scheme in ("http", "https") and parsed.hostname else None


def early_options(argv: Sequence[str]) -> dict[str, Any] | None:
    """What ``record``'s command line ``argv`` (after ``record``) would start its probe with: interpreter,
    endpoints (``--openai-base-url`` first, then each ``--allow-endpoint``) and import path; None when
    it cannot be told (help, a URL the command refuses)."""
    if any(arg.split("=", 1)[0] in ("--help", "--install-completion", "--show-completion") for arg in argv):
        return None
    base = _values(argv, "--openai-base-url")[-1:]
    allow = [_endpoint(url) for url in base + _values(argv, "--allow-endpoint")]
    if any(a is None for a in allow) or (base and "://" not in base[0]):
        return None
    python = (_values(argv, "--python") or [sys.executable])[-1]
    return {"python": python, "allow": allow, "sys_path": [os.getcwd()]}


def start_early(argv: Sequence[str]) -> None:
    """Start the recording probe for the ``record`` command line ``argv`` now (the module docstring);
    nothing when its options cannot be told or it cannot be started."""
    options = early_options(argv)
    if options is None:
        return
    try:
        probe = EarlyProbe(**options)
    except OSError:
        return
    _EARLY.append(probe)
    atexit.register(probe.close)


def take_early(python: str, request: dict[str, Any]) -> EarlyProbe | None:
    """The early probe started for this interpreter, endpoints and import path, or None (any other is
    closed: the command asked for something else)."""
    while _EARLY:
        probe = _EARLY.pop()
        if probe.matches(python, request):
            return probe
        probe.close()
    return None


class RecordingProbe:
    """``with RecordingProbe(...) as probe: for document in probe.batches(): ...`` (the module docstring)."""

    def __init__(self, samples: list[dict[str, Any]], metrics: tuple[str, ...], judge: Any, *, python: str,
                 concurrency: int, batch_size: int, timeout: float, budget: Budget) -> None:
        self.samples, self.metrics, self.judge = samples, metrics, judge
        self.python, self.concurrency, self.batch_size = python, concurrency, batch_size
        self.timeout, self.budget = timeout, budget
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._early: EarlyProbe | None = None
        self.process: GroupProcess | None = None

    def __enter__(self) -> RecordingProbe:
        executable = resolve_executable(self.python)
        probe_request = {"allow": [list(a) for a in (self.judge.allow if self.judge else ())],
                         "sys_path": [os.getcwd()]}
        self._early = take_early(executable, probe_request)
        if self._early is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="ragas-compat-record-", ignore_cleanup_errors=True)
            folder = Path(self._tmp.name)
        else:
            folder = self._early.folder
        self.output = folder / "result.json"
        request = build_request(self.samples, self.metrics, self.judge, concurrency=self.concurrency,
                                batch_size=self.batch_size, budget=self.budget, output=str(self.output))
        try:
            if self._early is not None:  # written whole, then renamed: the waiting probe never reads a torn one
                partial = folder / "request.json.partial"
                partial.write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
                os.replace(partial, self._early.request)
                self.process = self._early.process
            else:
                (folder / "request.json").write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
                self.process = GroupProcess(probe_command(executable, ENTRY_RECORD, str(folder / "request.json")),
                                            folder=folder, cwd=folder, env=probe_env())
        except OSError as exc:
            self.__exit__(None, None, None)
            raise RagasUnavailable(f"cannot start the recording probe with {self.python}: {exc}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.kill()
        if self._early is not None:
            self._early.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _batch(self, index: int) -> Path:
        return self.output.with_name(f"{self.output.name}.{index}")

    def batches(self) -> Iterator[dict[str, Any]]:
        """Each batch document in the order the probe wrote them; then the probe's exit is checked:
        KeyboardInterrupt when ``stop_all_probes`` ended it, HarnessInputError when it refused the
        request or the judge (exit 2), RagasUnavailable when Ragas could not be imported, it failed,
        or a batch took longer than ``timeout``."""
        assert self.process is not None, "use RecordingProbe in a with block"
        index = 0
        since = time.perf_counter()
        pause = POLL_FIRST
        while True:
            path = self._batch(index)
            if path.exists():
                document = self._read(path)
                path.unlink(missing_ok=True)
                index += 1
                yield document
                since, pause = time.perf_counter(), POLL_FIRST
                continue
            if self.process.exited():
                if self._batch(index).exists():  # written just before it exited
                    continue
                break
            if time.perf_counter() - since > self.timeout:
                self.process.kill()
                raise RagasUnavailable(f"the recording probe timed out after {self.timeout:g} s without finishing a "
                                       f"batch (batch {index + 1}, of up to {self.batch_size} samples; earlier "
                                       "batches are saved)")
            time.sleep(pause)
            pause = min(pause * 2, POLL_MAX)
        self._check_exit(index)

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RagasUnavailable(f"the recording probe wrote an unreadable batch {path.name}: {exc}") from None
        if not isinstance(document, dict):
            raise RagasUnavailable(f"the recording probe wrote a batch {path.name} that is not an object")
        return document

    def _check_exit(self, batches: int) -> None:
        assert self.process is not None
        proc = self.process.finish(time.perf_counter())  # it has exited: reap it and read its output
        if proc.stopped:
            raise KeyboardInterrupt()
        refused = [line.removeprefix("record error: ") for line in proc.stderr.splitlines()
                   if line.startswith("record error: ")]
        if proc.returncode == 2 and refused:
            raise HarnessInputError(refused[-1], field="--llm")
        document = None
        if self.output.exists():
            try:
                document = json.loads(self.output.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                document = None
        if proc.returncode == 3 and isinstance(document, dict):
            raise RagasUnavailable(f"Ragas could not be imported: {(document.get('ragas') or {}).get('import_error')}")
        if proc.returncode != 0 or not isinstance(document, dict) or document.get("batches") != batches:
            tail = proc.stderr.strip()[-2000:] or "(no stderr)"
            raise RagasUnavailable(f"the recording probe failed (exit {proc.returncode}): {tail}")
