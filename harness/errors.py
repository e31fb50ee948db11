"""The exit codes of ``ragas-compat`` and the errors that carry them.

Every error the harness raises on purpose is a ``HarnessError`` and knows its exit code, so the
command line turns any of them into a message and that code in one place
(``ragas_compat.cli.common.exits_on_harness_errors``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    """What a ``ragas-compat`` process exit status means."""

    OK = 0          # every row has its expected classification
    DRIFT = 1       # at least one unexpected classification, or a problem in the expectations
    BAD_INPUT = 2   # bad input or usage; no report is touched
    NO_RAGAS = 3    # Ragas could not be run at all (not importable, probe crashed or timed out)
    INTERNAL = 4    # an unexpected internal error (a bug): one line on stderr, the traceback saved to a file
    INTERRUPTED = 130  # SIGINT (Ctrl-C): probes killed, temporary files removed, reports old or new, never mixed
    TERMINATED = 143   # SIGTERM: the same clean-up as SIGINT


class HarnessError(Exception):
    """An error the harness raises on purpose; ``exit_code`` is what the CLI exits with."""

    exit_code: ClassVar[ExitCode] = ExitCode.BAD_INPUT

    @property
    def problems(self) -> list[str]:
        """One line per problem (the message, unless several were collected)."""
        return [str(self)]


class HarnessInputError(HarnessError, ValueError):
    """Invalid input: names the offending field (and file / case id when known) and value.

    ``problems`` holds one line per problem when several were found at once (the case
    loader reports every problem of a file together).
    """

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, message: str, *, field: str | None = None, value: object = None,
                 problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self._problems = problems or [message]

    @property
    def problems(self) -> list[str]:
        return self._problems


class RagasUnavailable(HarnessError, RuntimeError):
    """Ragas could not be run at all: not importable, or the probe crashed or timed out."""

    exit_code = ExitCode.NO_RAGAS


class CappedProblems:
    """The problems found in one input, in order: the first ``limit`` kept (all a message lists), the rest
    only counted, so memory stays bounded however many there are (a file of millions of bad rows)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[str] = []
        self.count = 0

    def append(self, problem: str) -> None:
        self.count += 1
        if len(self.kept) < self.limit:
            self.kept.append(problem)

    def __len__(self) -> int:
        return self.count

    def shown(self, source: str) -> list[str]:
        """The kept problems, then ``SOURCE: ... and N more problems`` for the rest."""
        rest = self.count - len(self.kept)
        return self.kept + ([f"{source}: ... and {rest} more problems"] if rest else [])
