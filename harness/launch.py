"""The console entry ``ragas-compat``: start the audit's probe first, then load the command line.

Importing Ragas is most of a small audit's time. For ``ragas-compat run`` on the installed Ragas
(no ``--ragas-checkout`` / ``--ragas-git``) the probe is started before anything else is imported,
with the ``--python`` and ``--timeout`` the command line names, and imports Ragas while the harness
loads, parses the options and reads the cases; ``run`` takes it (``ragas_compat.runner.take_early_probe``)
when its options agree, and closes it otherwise. The guess only saves time: it never changes what runs.
``ragas-compat record`` starts its recording probe the same way (``tools.record.probe_stream.start_early``).

SIGINT and SIGTERM are handled from the first thing ``main`` does, before the early probe starts and
before the command line is imported (``runner.signals_raise``, which every command installs again): an
interruption while the harness loads ends as one inside a command does, the early probe killed, its
temporary folder removed, one line (``interrupted (SIGINT)``, ``terminated (SIGTERM)``) and exit 130 or 143.

When the command has finished (its reports written, its output flushed, the exit handlers run), the
process ends at once (``exit_now``) instead of tearing the interpreter down: with pandas, scipy and nltk
loaded for the oracles, the teardown alone took about 0.45 s of a 6.7 s default audit.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragas_compat.runner import Terminated, interruption, signals_raise, start_early_probe, stop_all_probes

if TYPE_CHECKING:  # logging and typing's names are not imported before the probe starts: it waits for nothing
    import typing as t

NO_EARLY_START = ("--ragas-checkout", "--ragas-git", "--help", "--install-completion", "--show-completion")


def _option(argv: Sequence[str], name: str) -> str | None:
    """The value of ``--name VALUE`` / ``--name=VALUE`` (the last one given), else None."""
    value = None
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            value = argv[index + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1:]
    return value


def early_probe_options(argv: Sequence[str]) -> dict | None:
    """``start_early_probe``'s arguments for a ``run`` command line, or None when none should start."""
    if not argv or argv[0] != "run" or any(a.split("=", 1)[0] in NO_EARLY_START for a in argv):
        return None
    timeout = _option(argv, "--timeout")
    try:
        seconds = 600.0 if timeout is None else float(timeout)
    except ValueError:
        return None
    if not 0 < seconds < float("inf"):
        return None
    return {"python": _option(argv, "--python") or sys.executable, "timeout": seconds}


def exit_code(code: object) -> int:
    """The process exit status ``sys.exit(code)`` gives: None is 0, an int is itself, anything else
    (a message, printed by the caller) is 1."""
    if code is None:
        return 0
    return code if isinstance(code, int) and not isinstance(code, bool) else 1


def exit_now(code: object) -> t.NoReturn:
    """End the process as ``sys.exit(code)`` would, minus the interpreter's teardown: the exit handlers
    run (temporary folders, ``atexit``) with SIGINT and SIGTERM ignored (the command is over: a signal
    would only cut its clean-up short), logging and the standard streams are flushed, then ``os._exit``.
    While a thread that is not a daemon still runs, the interpreter would wait for it: then this is
    ``sys.exit(code)`` itself."""
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.main_thread()):
        raise SystemExit(code)
    if code is not None and not isinstance(code, int):  # sys.exit prints a message, then exits 1
        print(code, file=sys.stderr)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is not None:
        run_exit_handlers()
    logging = sys.modules.get("logging")  # loaded by now if anything logged
    if logging is not None:
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said on it
            pass
    os._exit(exit_code(code))


def run_command() -> object:
    """Start the early probe for the command line (``sys.argv``), load the command line and run it; what
    ``sys.exit`` was given (``exit_now``'s argument). A SIGINT or SIGTERM the command's own
    boundary (``cli.common.exits_on_harness_errors``) did not catch, because it came while the harness
    loaded, kills every probe and ends here: one line, 130 or 143, the exit handlers left to remove the
    early probe's folder."""
    try:
        options = early_probe_options(sys.argv[1:])
        if options is not None:
            start_early_probe(**options)
        elif sys.argv[1:2] == ["record"]:  # its recording probe imports Ragas while the command line loads
            from ragas_compat.tools.record.probe_stream import start_early

            start_early(sys.argv[2:])
        from ragas_compat.cli.app import app

        app(prog_name="ragas-compat")
    except SystemExit as exc:
        return exc.code
    except (KeyboardInterrupt, Terminated) as exc:
        stop_all_probes()
        word, name, code = interruption(exc)
        print(f"{word} ({name})", file=sys.stderr)
        return int(code)
    return 0


def main() -> None:  # pragma: no cover - the console entry; tests call the app
    with signals_raise():
        exit_now(run_command())
