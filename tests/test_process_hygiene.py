"""Process hygiene (ragas_compat.runner): the probe runs in its own process group; a timeout, the harness's
SIGTERM or SIGINT end the whole group (grandchildren too, and a probe that ignores SIGTERM) and remove
its temporary folder; relative paths are resolved before the probe starts; the timeout is validated
and bounds every subprocess, the interpreter-locating step included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli import app
from ragas_compat.errors import ExitCode, HarnessInputError
from ragas_compat.pin.manifest import load_manifest
from ragas_compat.pin.sources import PythonUnusable, resolve_installed
from ragas_compat.probe.protocol import ENTRY_LOCATE
from ragas_compat.runner import _environment, check_timeout, resolve_executable, run_in_own_group, run_probe

ID_CASE = [{"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "a",
            "retrieved_contexts": [], "retrieved_context_ids": [1], "reference_context_ids": [1]}]
ID_TARGETS = ["legacy:IDBasedContextRecall"]
EXPLAIN_ID = ["explain", "id-recall", "--retrieved", "[1]", "--reference", "[1]"]
# "At once", as a bound and not a measurement: far below the fake probe's 300 s sleep, so a pass means
# the harness ended it, and high enough that a loaded machine never fails a correct harness.
PROMPTLY = 30.0


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as dead: it runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def wait_dead(pids: list[int], within: float = PROMPTLY) -> float:
    """Seconds until every pid is dead; fails after ``within``."""
    started = time.monotonic()
    while any(alive(pid) for pid in pids):
        assert time.monotonic() - started < within, f"still alive: {[p for p in pids if alive(p)]}"
        time.sleep(0.005)
    return time.monotonic() - started


def fake_python(folder: Path, *, ignore_term: bool = False, then: str = "sleep 300",
                locate: str = "exec {python} \"$@\"") -> Path:
    """A "python" that forks a grandchild which sleeps, records "<grandchild> <itself> <cwd>" in
    folder/pids/<its pid>, then runs ``then``. Run on the probe's locate entry (locating Ragas) it does ``locate``."""
    (folder / "pids").mkdir(exist_ok=True)
    script = folder / "fake-python"
    script.write_text("#!/bin/sh\n"
                      + ("trap '' TERM INT\n" if ignore_term else "")
                      + f'if [ "$4" = "{ENTRY_LOCATE}" ]; then {locate.format(python=sys.executable)}; fi\n'
                      + "sleep 300 &\n"
                      + f'echo "$! $$ $(pwd)" > "{folder}/pids/$$.tmp" && mv "{folder}/pids/$$.tmp" "{folder}/pids/$$"\n'
                      + f"{then}\n")
    script.chmod(0o755)
    return script


def recorded(folder: Path) -> list[tuple[int, int, Path]]:
    found = []
    for entry in sorted((folder / "pids").glob("[0-9]*")):
        if not entry.name.isdigit():  # "<pid>.tmp": being written, renamed in a moment
            continue
        grandchild, child, cwd = entry.read_text().split(maxsplit=2)
        found.append((int(grandchild), int(child), Path(cwd.strip())))
    return found


def wait_recorded(folder: Path, count: int = 1, within: float = 30.0) -> list[tuple[int, int, Path]]:
    started = time.monotonic()
    while len(recorded(folder)) < count:
        assert time.monotonic() - started < within, "the fake probe did not start"
        time.sleep(0.02)
    return recorded(folder)


# ------------------------------------------------------------------ timeouts end the whole group

@pytest.mark.parametrize("ignore_term", [False, True], ids=["plain", "ignores-SIGTERM"])
def test_a_timeout_kills_the_probe_and_its_grandchild_and_removes_the_temp_folder(tmp_path, monkeypatch,
                                                                                  ignore_term):
    script = fake_python(tmp_path, ignore_term=ignore_term)
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    run = run_probe(ID_CASE, python="./" + script.name, targets=ID_TARGETS, timeout=1)  # relative, too
    elapsed = time.monotonic() - started
    assert run.error == "probe timed out after 1 s" and not run.ok
    assert 1 <= elapsed < PROMPTLY
    [(grandchild, child, cwd)] = recorded(tmp_path)
    assert cwd.name.startswith("ragas-compat-probe-")
    wait_dead([grandchild, child])
    assert not cwd.exists()


def test_grandchildren_left_by_a_probe_that_exits_are_killed(tmp_path):
    script = fake_python(tmp_path, then="exit 0")
    run = run_probe(ID_CASE, python=str(script), targets=ID_TARGETS, timeout=30)
    assert not run.ok and run.error.startswith("probe exited without a result (is ")
    [(grandchild, _, cwd)] = recorded(tmp_path)
    wait_dead([grandchild])
    assert not cwd.exists()


def test_run_in_own_group_reports_output_exit_code_and_timeout(tmp_path):
    done = run_in_own_group(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (done.returncode, done.stdout, done.stderr, done.timed_out) == (3, "out\n", "err\n", False)
    late = run_in_own_group(["/bin/sh", "-c", "sleep 30"], timeout=0.2)
    assert late.returncode is None and late.timed_out and late.seconds < PROMPTLY


def test_an_exception_in_the_harness_kills_the_group(tmp_path, monkeypatch):
    import ragas_compat.runner as runner

    script = fake_python(tmp_path)

    def interrupted(self, done, on_progress):  # Ctrl-C while the harness waits for the probe's answer
        wait_recorded(tmp_path)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.StartedProbe, "_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):  # at once: the probe's timeout (10 s) is never reached
        run_probe(ID_CASE, python=str(script), targets=ID_TARGETS, timeout=10)
    [(grandchild, child, cwd)] = recorded(tmp_path)
    wait_dead([grandchild, child])
    assert not cwd.exists()


# ------------------------------------------------------------------ the harness's own signals

def _signals_at_default() -> None:
    """In the child: SIGINT and SIGTERM at their defaults. The harness keeps signals its caller ignores
    ignored (as a background job's SIGINT is), so the test gives it a caller that does not."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _harness(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.Popen([sys.executable, "-m", "ragas_compat", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_signals_at_default)


@pytest.mark.parametrize("sig, code, line", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                             (signal.SIGINT, 130, "interrupted (SIGINT)")], ids=["TERM", "INT"])
def test_a_signal_to_the_harness_ends_the_probe_group_and_removes_its_temp_folder(tmp_path, sig, code, line):
    fake_python(tmp_path, ignore_term=True)
    harness = _harness([*EXPLAIN_ID, "--python", "./fake-python", "--timeout", "300"], tmp_path)
    [(grandchild, child, cwd)] = wait_recorded(tmp_path)
    harness.send_signal(sig)
    out, err = harness.communicate(timeout=10)
    assert harness.returncode == code, out + err
    assert err.strip().splitlines()[-1] == line and "Traceback" not in err
    wait_dead([grandchild, child])
    assert not cwd.exists()


def test_sigterm_during_a_chain_of_batches_kills_the_probe_group_and_starts_no_more(tmp_path):
    """Six batches are one chain of requests to one probe: a SIGTERM ends its group, and nothing else starts."""
    fake_python(tmp_path)
    harness = _harness(["fuzz", "--n", "6", "--batch-size", "1", "--workers", "2", "--metric", "id_context_recall",
                        "--python", "./fake-python", "--timeout", "300", "--out", "out"], tmp_path)
    running = wait_recorded(tmp_path, 1)
    time.sleep(0.2)
    started = time.monotonic()
    harness.send_signal(signal.SIGTERM)
    out, err = harness.communicate(timeout=20)
    assert harness.returncode == ExitCode.TERMINATED, out + err
    assert time.monotonic() - started < PROMPTLY
    assert "Traceback" not in err
    assert len(recorded(tmp_path)) == 1  # one probe for the whole chain, and none started after the signal
    wait_dead([pid for grandchild, child, _ in running for pid in (grandchild, child)])
    assert not any(cwd.exists() for _, _, cwd in running)
    assert not (tmp_path / "out" / "fuzz.json").exists()


# ------------------------------------------------------------------ relative paths

@pytest.mark.slow
def test_relative_python_is_resolved_before_the_probe_starts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(sys.executable, tmp_path)  # the venv's own bin/python, not its target
    assert not os.path.isabs(relative)
    assert resolve_executable(relative) == sys.executable
    result = CliRunner().invoke(app, [*EXPLAIN_ID, "--python", relative, "--json"])
    assert result.exit_code == 0, result.output
    assert '"ragas_version"' in result.output


def test_resolve_executable():
    assert resolve_executable("sh") == os.path.abspath(subprocess.run(["sh", "-c", "command -v sh"],
                                                                      capture_output=True, text=True).stdout.strip())
    assert resolve_executable("no-such-python-anywhere") == "no-such-python-anywhere"
    assert resolve_executable("bin/python") == os.path.join(os.getcwd(), "bin", "python")


def test_relative_pythonpath_entries_are_made_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["lib", "", "/abs/site"]))
    env = _environment(["src"])
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "src"), str(tmp_path / "lib"), "/abs/site"]


# ------------------------------------------------------------------ the timeout itself

@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 0, 0.0, -1, True, "5"])
def test_a_timeout_must_be_positive_and_finite(bad):
    with pytest.raises(HarnessInputError, match=r"--timeout .*positive, finite") as raised:
        check_timeout(bad)
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    with pytest.raises(HarnessInputError):
        run_probe(ID_CASE, timeout=bad)
    assert check_timeout(0.5) == 0.5 and check_timeout(3) == 3.0


def test_the_locating_step_honours_the_timeout_and_kills_its_group(tmp_path):
    script = fake_python(tmp_path, locate="sleep 300 & echo \"$! $$ $(pwd)\" > " + str(tmp_path / "pids" / "1")
                                          + "; sleep 300")
    started = time.monotonic()
    with pytest.raises(PythonUnusable, match=r"did not say where Ragas is within 1 s") as raised:
        resolve_installed(load_manifest(), python=str(script), timeout=1)
    assert 1 <= time.monotonic() - started < PROMPTLY
    assert raised.value.exit_code == ExitCode.NO_RAGAS
    [(grandchild, child, _)] = recorded(tmp_path)
    wait_dead([grandchild, child])


def test_run_applies_its_timeout_to_the_locating_step(tmp_path, monkeypatch):
    script = fake_python(tmp_path, locate="sleep 300")
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    result = CliRunner().invoke(app, ["run", "--python", str(script), "--timeout", "1", "--out", "out"])
    assert result.exit_code == ExitCode.NO_RAGAS, result.output
    assert "Ragas could not be run: " in result.output and "within 1 s" in result.output
    assert time.monotonic() - started < PROMPTLY
