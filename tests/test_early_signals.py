"""A signal while ``ragas-compat run`` is still loading (harness/launch.py) ends it as one inside the command
does: the early probe killed, its temporary folder removed, one line, exit 130 or 143; and a probe whose host
has gone, even before the probe started, stops waiting for its request (harness/probe/__main__.py).

The process tests find what a run left by a marker in the environment (every probe inherits it) and keep
its temporary folders apart (``TMPDIR``), so other runs on the machine do not count."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragas_compat.probe.protocol import ENTRY_PROBE, EXIT_BAD_REQUEST, HOST_PID_FLAG, WAIT_FLAG, probe_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the processes")

MARKER = "RAGAS_COMPAT_EARLY_SIGNAL_TEST"
WITHIN = 60.0  # seconds anything here may take to happen before the test gives up


def marked(value: str) -> list[int]:
    """The live processes (not zombies: their environ reads empty) whose environment holds MARKER=value."""
    entry = f"{MARKER}={value}".encode()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
        except OSError:
            continue
        if entry in environ:
            pids.append(int(name))
    return pids


def wait_until(condition, within: float = WITHIN) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def start_run(tmp_path: Path, value: str) -> tuple[subprocess.Popen, Path]:
    """``python -m ragas_compat run`` marked with ``value``, its temporary folders in a folder of its own."""
    tmpdir = tmp_path / f"tmp-{value}"
    tmpdir.mkdir()
    env = {**os.environ, MARKER: value, "TMPDIR": str(tmpdir)}
    proc = subprocess.Popen([sys.executable, "-m", "ragas_compat", "run", "--out", str(tmp_path / f"out-{value}"),
                             "-q", "--metric", "faithfulness"],
                            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            # a Ctrl-C the test sends must not find SIGINT ignored (as in a background job)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, tmpdir


def interrupt_early(proc: subprocess.Popen, value: str, sig: int, at: float, started: float) -> tuple[str, str]:
    """Send ``sig`` once the early probe has started and ``at`` seconds after ``started``; the run's output."""
    assert wait_until(lambda: proc.poll() is not None or any(pid != proc.pid for pid in marked(value))), \
        "the early probe never started"
    time.sleep(max(0.0, started + at - time.monotonic()))
    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=WITHIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


@pytest.fixture
def leftovers():
    """Kills (by pid) whatever marked process a test leaves, whether it passed or not."""
    values: list[str] = []
    yield values
    for value in values:
        for pid in marked(value):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("at", [0.0, 0.2, 0.3, 0.4])
def test_sigterm_while_loading_leaves_no_probe_and_no_folder(tmp_path, leftovers, at):
    """SIGTERM just after the early probe started (0.0: before the probe's own start-up is over) and at
    0.2-0.4 s: exit 143, one line; no process of the run is left and no ragas-compat-probe-* folder."""
    value = f"term-{at}-{os.getpid()}"
    leftovers.append(value)
    started = time.monotonic()
    proc, tmpdir = start_run(tmp_path, value)
    _, stderr = interrupt_early(proc, value, signal.SIGTERM, at, started)
    assert wait_until(lambda: not marked(value)), f"processes of the run still alive: {marked(value)}"
    assert list(tmpdir.glob("ragas-compat-probe-*")) == []
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1:] == ["terminated (SIGTERM)"]


def test_ctrl_c_while_loading_is_one_line_and_exit_130(tmp_path, leftovers):
    """SIGINT while the command line is still being imported: exit 130, ``interrupted (SIGINT)``, no
    traceback, and the early probe and its folder gone as for SIGTERM."""
    value = f"int-{os.getpid()}"
    leftovers.append(value)
    started = time.monotonic()
    proc, tmpdir = start_run(tmp_path, value)
    _, stderr = interrupt_early(proc, value, signal.SIGINT, 0.3, started)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines() == ["interrupted (SIGINT)"]
    assert wait_until(lambda: not marked(value)), f"processes of the run still alive: {marked(value)}"
    assert list(tmpdir.glob("ragas-compat-probe-*")) == []


def test_a_waiting_probe_whose_host_is_dead_stops_waiting(tmp_path):
    """A probe told a host pid that names no process (its host died before the probe started, so its parent
    is some other process that lives on) stops waiting for its request at once, as for a host that died
    later ("the host ... has gone", exit 2), and removes nothing of the folder it was given."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid names no process
    request = tmp_path / "request.json"
    # -S: no site-packages, so no Ragas to import and the probe is at its wait within a moment
    command = probe_command(sys.executable, ENTRY_PROBE, WAIT_FLAG, str(request), HOST_PID_FLAG, str(gone.pid),
                            python_flags=["-S"])
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=WITHIN)
    assert proc.returncode == EXIT_BAD_REQUEST, proc.stderr
    assert "the host that started the probe has gone" in proc.stderr
    assert (tmp_path / "located.json").is_file() and not request.exists()
