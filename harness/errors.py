"""The one error type for bad input, so callers can turn it into exit code 2."""

from __future__ import annotations


class HarnessInputError(ValueError):
    """Invalid input: names the offending field (and file / case id when known) and value.

    ``problems`` holds one line per problem when several were found at once (the case
    loader reports every problem of a file together).
    """

    def __init__(self, message: str, *, field: str | None = None, value: object = None,
                 problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.problems = problems or [message]
