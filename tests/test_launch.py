"""The console entry starts the audit's probe before the command line loads (harness/launch.py),
only for ``run`` on the installed Ragas, with the options it names; ``run`` takes it when they agree."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragas_compat.launch import early_probe_options, exit_code
from ragas_compat.runner import start_early_probe, take_early_probe


@pytest.mark.parametrize("argv, expected", [
    (["run"], {"python": sys.executable, "timeout": 600.0}),
    (["run", "--python", "/x/python", "--timeout=30"], {"python": "/x/python", "timeout": 30.0}),
    (["run", "--python=/y/python", "--cases", "c.json"], {"python": "/y/python", "timeout": 600.0}),
    (["run", "--ragas-checkout", "/src/ragas"], None),
    (["run", "--ragas-git=https://example.invalid/r.git"], None),
    (["run", "--help"], None),
    (["run", "--timeout", "soon"], None),
    (["run", "--timeout", "-1"], None),
    (["explain", "id-recall"], None),
    ([], None),
])
def test_early_probe_options_follow_the_command_line(argv, expected):
    assert early_probe_options(argv) == expected


def test_run_takes_the_early_probe_only_when_its_options_agree():
    start_early_probe(python=sys.executable, timeout=120.0)
    assert take_early_probe(python=sys.executable, timeout=60.0) is None  # another timeout: closed
    assert take_early_probe(python=sys.executable, timeout=120.0) is None  # and gone
    start_early_probe(python=sys.executable, timeout=120.0)
    probe = take_early_probe(python=sys.executable, timeout=120.0)
    assert probe is not None
    with probe:
        assert probe.located()["found"] is True


@pytest.mark.parametrize("code, status", [(None, 0), (0, 0), (1, 1), (2, 2), ("bad input", 1), (True, 1)])
def test_exit_code_is_what_sys_exit_gives(code, status):
    assert exit_code(code) == status


def test_the_console_entry_ends_without_teardown_but_with_its_output_and_exit_handlers(tmp_path):
    """``exit_now``: the exit status, the message of ``sys.exit("...")``, buffered output and the
    ``atexit`` handlers all survive skipping the interpreter's teardown."""
    marker = tmp_path / "handler-ran"
    script = ("import atexit, pathlib, sys\n"
              "from ragas_compat.launch import exit_now\n"
              f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes'))\n"
              "sys.stdout.write('buffered, never flushed by hand')\n"
              "exit_now(sys.argv[1] if sys.argv[1] != 'none' else None)\n")
    for argument, status in (("none", 0), ("the message", 1)):
        marker.unlink(missing_ok=True)
        proc = subprocess.run([sys.executable, "-c", script, argument], capture_output=True, text=True, timeout=60)
        assert proc.returncode == status
        assert proc.stdout == "buffered, never flushed by hand"
        assert marker.read_text() == "yes"
        assert proc.stderr == ("" if argument == "none" else "the message\n")


def test_a_running_thread_is_waited_for_as_sys_exit_would(tmp_path):
    marker = tmp_path / "thread-finished"
    script = ("import pathlib, sys, threading, time\n"
              "from ragas_compat.launch import exit_now\n"
              "def late():\n"
              "    time.sleep(0.3)\n"
              f"    pathlib.Path({str(marker)!r}).write_text('yes')\n"
              "threading.Thread(target=late).start()\n"
              "exit_now(3)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and marker.read_text() == "yes"


def test_ragas_compat_exits_with_the_commands_status():
    """The installed console entry (``python -m ragas_compat``) keeps typer's status: 2 for a usage error."""
    proc = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--no-such-option"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert "no-such-option" in proc.stderr
