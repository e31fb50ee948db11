"""What every ``ragas-compat`` command shares: its consoles, how user-provided text is shown, and
the one error boundary of every command.

- ``exits_on_harness_errors()`` (a context manager, also usable as a decorator; every command has it)
  is the top-level error boundary:

  * a ``ragas_compat.errors.HarnessError`` becomes ``error: ...`` lines on stderr, one per problem, and
    ``typer.Exit(exc.exit_code)``. A ``RagasUnavailable`` is introduced by "Ragas could not be run: ";
  * any other exception (a bug) becomes one line, ``internal error: <type>: <message>; traceback
    saved to <path>``, the full traceback saved in ``traceback_folder()``, and exit code 4
    (``ExitCode.INTERNAL``);
  * SIGINT (KeyboardInterrupt) and SIGTERM kill every running probe's process group at once
    (``ragas_compat.runner.signals_raise``, also installed by the console entry before anything loads),
    let the clean-up of temporary folders, staged reports and locks run, print one line and exit 130
    and 143 (``runner.interruption``); no traceback.
- ``positive_seconds`` is the callback of every ``--timeout`` option: a positive, finite number, else
  a usage error (exit 2) naming the option.
- ``shown(text)`` is user-provided text (ids, suite names, paths, messages) ready for rich markup:
  line breaks and control characters escaped (``plain``: ``ragas_compat.report.escape.terminal_text``,
  so user text is one line and sends no escape sequence) and markup escaped, so ``[red]x`` prints
  literally.
- ``stdout()`` / ``stderr()`` make the consoles; this is the only module that writes to stderr.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from ragas_compat.errors import ExitCode, HarnessError, HarnessInputError, RagasUnavailable
from ragas_compat.report.escape import terminal_text
from ragas_compat.runner import Terminated, allow_probes, interruption, signals_raise, stop_all_probes
from ragas_compat.write_preflight import check_output_folder

try:  # typer that vendors click: its usage errors derive from TyperException
    from typer.exceptions import TyperException as _UsageErrorBase
except ImportError:  # pragma: no cover - older typer raises click's own
    from click import ClickException as _UsageErrorBase

# Characters JSON allows raw inside strings that are still control characters (DEL, C1).
_JSON_RAW_CONTROL = re.compile("[\x7f-\x9f]")

RAGAS_UNAVAILABLE_PREFIX = "Ragas could not be run: "


def plain(value: object) -> str:
    """``str(value)`` on one line: every line break (newline, CR, U+2028 ...), C0/C1 control character
    and bidirectional control shown as ``\\xNN`` / ``\\uNNNN`` (``escape.terminal_text``)."""
    return terminal_text(value)


def shown(value: object) -> str:
    """``value`` for a rich string with markup on: control characters and markup escaped."""
    return escape(plain(value))


def json_text(text: str) -> str:
    """JSON text with the control characters JSON leaves raw (DEL, C1) written as ``\\uNNNN``.

    Only valid for ``json.dumps`` output: these characters can only occur inside its strings."""
    return _JSON_RAW_CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def stdout() -> Console:
    """A console on standard output (made per command, so it sees the invocation's environment)."""
    return Console()


def stderr() -> Console:
    """A console on standard error: progress, warnings and errors."""
    return Console(stderr=True)


def error_lines(exc: HarnessError) -> list[str]:
    """What ``exits_on_harness_errors`` prints for ``exc`` (without ``error:``), one per problem."""
    prefix = RAGAS_UNAVAILABLE_PREFIX if isinstance(exc, RagasUnavailable) else ""
    return [prefix + line for line in (exc.problems or [str(exc)])]


def print_error(line: str) -> None:
    """One ``error: ...`` line on stderr; ``line`` is user-provided text (escaped here)."""
    stderr().print(f"[bold red]error:[/] {shown(line)}", highlight=False, soft_wrap=True)


def positive_seconds(value: float | None) -> float | None:
    """Typer callback of ``--timeout``: a positive, finite number of seconds (None: the default)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"{value!r} is not a positive, finite number of seconds")
    return value


def case_timeout_option() -> Any:
    """``--case-timeout`` of the commands that score through the probe (run, matrix)."""
    return typer.Option(None, "--case-timeout", callback=positive_seconds,
                        help="Seconds one case may take in one Ragas class (default 60); past it the case is "
                             "one 'Ragas did not finish' cell.")


def case_judge_calls_option() -> Any:
    return typer.Option(None, "--case-judge-calls", min=1,
                        help="Judge calls one case may make in one Ragas class beyond the prompts its script "
                             "answers (default 50).")


def case_memory_option() -> Any:
    return typer.Option(None, "--case-memory",
                        help="Memory in GiB one case may allocate in one Ragas class, beyond what the probe holds "
                             "when the case starts (default 0.5; 0: no limit); past it the case is one 'Ragas "
                             "did not finish (memory)' cell.")


def traceback_folder() -> Path:
    """Where internal errors' tracebacks are saved: ``$XDG_CACHE_HOME/ragas-compat/tracebacks``
    (default ``~/.cache/ragas-compat/tracebacks``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragas-compat" / "tracebacks"


def save_traceback(exc: BaseException) -> str:
    """Write ``exc``'s full traceback to a new file and return its path; when no folder can take it
    (read-only home, full disk), say so instead."""
    text = "".join(traceback.format_exception(exc))
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    failures = []
    for folder in (traceback_folder(), Path(tempfile.gettempdir())):
        path = None
        try:
            check_output_folder(folder, "traceback folder")  # a file, read-only or full: the next folder
            folder.mkdir(parents=True, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix=f"ragas-compat-traceback-{stamp}-", suffix=".txt", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(text)
            return path
        except HarnessInputError as refused:
            failures.append(str(refused))
        except OSError as exc_saving:
            failures.append(f"{folder}: {exc_saving.strerror or exc_saving}")
            if path is not None:  # no cut traceback left behind
                Path(path).unlink(missing_ok=True)
    return "nowhere (" + "; ".join(failures) + ")"


def internal_error_line(exc: BaseException, saved_to: str) -> str:
    """``<type>: <message>; traceback saved to <path>``, one short line (the message's first line)."""
    message = (str(exc).strip().splitlines() or [""])[0]
    if len(message) > 200:
        message = message[:197] + "..."
    kind = type(exc).__qualname__ if type(exc).__module__ == "builtins" else \
        f"{type(exc).__module__}.{type(exc).__qualname__}"
    return f"{kind}: {message}; traceback saved to {saved_to}" if message else \
        f"{kind}; traceback saved to {saved_to}"


def _print_line(text: str) -> None:
    stderr().print(text, highlight=False, soft_wrap=True)


@contextmanager
def exits_on_harness_errors() -> Iterator[None]:
    """The error boundary of a command: a ``HarnessError`` exits with its code, an interruption with
    130 (SIGINT) or 143 (SIGTERM), anything else with 4 and its traceback saved; one line each."""
    try:
        with signals_raise():
            yield
    except HarnessError as exc:
        for line in error_lines(exc):
            print_error(line)
        raise typer.Exit(int(exc.exit_code)) from None
    except (typer.Exit, typer.Abort, _UsageErrorBase):
        raise  # typer.Exit, usage errors (typer.BadParameter ...): typer's own handling
    except (KeyboardInterrupt, Terminated) as exc:
        stop_all_probes()
        word, name, code = interruption(exc)
        _print_line(f"[bold red]{word}[/] ({name})")
        raise typer.Exit(int(code)) from None
    except Exception as exc:
        stop_all_probes()
        line = internal_error_line(exc, save_traceback(exc))
        _print_line(f"[bold red]internal error:[/] {shown(line)}")
        raise typer.Exit(int(ExitCode.INTERNAL)) from None
    finally:
        allow_probes()
