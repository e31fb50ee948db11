"""Bounded reading and parsing of every file the command line reads from users.

Case files, expectations files, the pin manifest and its constraints file, and the versions file of
``matrix`` are read through ``read_text`` and parsed with ``loads_json`` / ``loads_toml``. Whatever
their content, the result is the parsed value or a ``HarnessInputError`` (exit 2) whose one line
names the file (and the JSON path, or line and column, where known); nothing else escapes, nothing
blocks and memory stays bounded:

- only a regular file is read (``-`` is standard input, read with the same limits). A directory, a
  FIFO, a character device (``/dev/zero``), a socket are refused from ``fstat`` without reading a
  byte; a FIFO is opened non-blocking, so a FIFO with no writer does not hang;
- at most ``max_input_bytes`` bytes (default 64 MiB; ``RAGAS_COMPAT_MAX_INPUT_BYTES``): a larger
  file is refused from its size, and a file (or stdin) that grows while read is cut at the limit
  plus one byte and refused;
- strict UTF-8 (a leading BOM is ignored), refused with the line and column of the first bad byte;
- JSON: strict (no NaN/Infinity), nesting at most ``MAX_DEPTH`` (64) arrays/objects deep, every
  number token at most ``MAX_NUMBER_CHARS`` (100) characters long (checked before ``int()`` or
  ``float()`` see it: Python refuses more than 4,300 digits and a few thousand digits already cost
  quadratic time), finite floats, and no lone surrogate (``"\\ud800"``) in any string or key;
- TOML: the same depth and number limits (after ``tomllib``, which itself refuses lone surrogates
  and control characters), and ``tomllib``'s own recursion and integer-size failures reported as
  the limits they are.

The case count (``max_cases``, default 100,000; ``RAGAS_COMPAT_MAX_CASES``) and the length of each list
of a case (``MAX_LIST_ITEMS``) are enforced by the case loader, which knows what a case is.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragas_compat.errors import HarnessInputError

MIB = 1024 * 1024
DEFAULT_MAX_INPUT_BYTES = 64 * MIB
DEFAULT_MAX_CASES = 100_000
MAX_DEPTH = 64               # nested arrays/objects (a case file needs 6)
MAX_NUMBER_CHARS = 100       # characters of one JSON/TOML number token (a double needs at most 24)
MAX_LIST_ITEMS = 5_000       # items of one list of a case (contexts, labels, IDs, claims)
# a file this harness wrote, read back (report.json, matrix.json by ``diff``; shard.json by ``merge``): at most
# this many times max_input_bytes (a run within the input limits writes report.json at about 8 times its
# case file: 302,570,834 bytes for a 40,077,120-byte suite of 50,000 cases)
READ_BACK_FACTOR = 16
MAX_INPUT_BYTES_ENV = "RAGAS_COMPAT_MAX_INPUT_BYTES"
MAX_CASES_ENV = "RAGAS_COMPAT_MAX_CASES"
STDIN = "-"
STDIN_SOURCE = "<stdin>"

_READ_CHUNK = 1 << 20
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# --------------------------------------------------------------------------- the limits

def _env_limit(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or text.strip() == "":
        return default
    cleaned = text.strip().replace("_", "")
    if not cleaned.isascii() or not cleaned.isdigit() or len(cleaned) > 18 or int(cleaned) <= 0:
        raise HarnessInputError(f"{name}={text!r}: expected a positive whole number", field=name, value=text)
    return int(cleaned)


@dataclass(frozen=True)
class Limits:
    """The limits in force: ``Limits.current()`` reads the environment overrides."""

    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    max_cases: int = DEFAULT_MAX_CASES
    max_depth: int = MAX_DEPTH
    max_number_chars: int = MAX_NUMBER_CHARS
    max_list_items: int = MAX_LIST_ITEMS

    @classmethod
    def current(cls) -> Limits:
        """The defaults with ``RAGAS_COMPAT_MAX_INPUT_BYTES`` / ``RAGAS_COMPAT_MAX_CASES`` applied (a
        value that is not a positive whole number is refused, exit 2)."""
        return cls(max_input_bytes=_env_limit(MAX_INPUT_BYTES_ENV, DEFAULT_MAX_INPUT_BYTES),
                   max_cases=_env_limit(MAX_CASES_ENV, DEFAULT_MAX_CASES))


def size_text(size: int) -> str:
    """``67108864`` -> ``64 MiB``; other sizes in bytes."""
    return f"{size // MIB} MiB" if size % MIB == 0 and size else f"{size} bytes"


# --------------------------------------------------------------------------- paths as shown

def json_path(path: Sequence[Any]) -> str:
    """``("cases", 3, "verdicts", "x")`` -> ``$.cases[3].verdicts.x`` (odd keys as ``["a b"]``)."""
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out


def source_name(path: str | Path) -> str:
    """How a file is named in messages: ``<stdin>`` for ``-``, else its name."""
    return STDIN_SOURCE if str(path) == STDIN else Path(path).name


def _line_column(data: bytes | str, offset: int) -> tuple[int, int]:
    newline = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1
    start = data.rfind(newline, 0, offset) + 1
    return line, offset - start + 1


# --------------------------------------------------------------------------- reading

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))

# The standard input object last read to its end, and what read it: a second read would see nothing.
_stdin_read_by: list[Any] = [None, None]


def _too_big(source: str, what: str, limits: Limits, size: str, factor: int = 1) -> HarnessInputError:
    limit = f"the input limit of {size_text(limits.max_input_bytes)}"
    return HarnessInputError(
        f"{source}: the {what} is larger than {f'{factor} times {limit}' if factor > 1 else limit} ({size}; "
        f"raise it with {MAX_INPUT_BYTES_ENV}=BYTES)", field="size", value=source)


def _read_bounded(read: Callable[[int], bytes], limit: int) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes, and whether there was more (one byte past the limit is read to know)."""
    data = bytearray()
    while len(data) <= limit:
        chunk = read(min(_READ_CHUNK, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk
    more = len(data) > limit
    if more:
        del data[limit:]
    return bytes(data) if len(data) < _READ_CHUNK else data, more  # type: ignore[return-value]


def _read_stdin(what: str, limits: Limits, factor: int = 1) -> bytes:
    stream = sys.stdin
    if stream is None:
        raise HarnessInputError(f"{STDIN_SOURCE}: cannot read the {what}: there is no standard input",
                                field="path", value=STDIN)
    if _stdin_read_by[0] is stream:
        raise HarnessInputError(f"{STDIN_SOURCE}: standard input was already read for the {_stdin_read_by[1]}; "
                                f"give the {what} as a file", field="path", value=STDIN)
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            data, more = _read_bounded(buffer.read, factor * limits.max_input_bytes)
        else:  # a text stream without bytes underneath (tests, embedding)
            data, more = _read_bounded(lambda n: stream.read(n).encode("utf-8", "surrogatepass"),
                                       factor * limits.max_input_bytes)
    except OSError as exc:
        raise HarnessInputError(f"{STDIN_SOURCE}: cannot read the {what}: {exc.strerror or exc}",
                                field="path", value=STDIN) from None
    _stdin_read_by[:] = [stream, what]
    if more:
        raise _too_big(STDIN_SOURCE, what, limits, "more was sent", factor)
    return data


def open_regular_file(path: str | Path, what: str, source: str, *, stdin_hint: bool = True) -> int:
    """A file descriptor open for reading on the regular file at ``path`` (never blocking on a FIFO or
    device); HarnessInputError naming ``source`` when it is missing, unreadable or not a regular file
    (a FIFO's says ``-`` reads standard input, unless ``stdin_hint`` is false: the caller takes no ``-``).
    The caller closes it and bounds what it reads."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise HarnessInputError(f"{source}: {what} not found", field="path", value=str(path)) from None
    except OSError as exc:
        raise HarnessInputError(f"{source}: cannot read the {what}: {exc.strerror or exc}",
                                field="path", value=str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise HarnessInputError(f"{source}: the {what} is {kind}, not a regular file"
                                    + ("; use - to read standard input" if stat.S_ISFIFO(info.st_mode) and stdin_hint else ""),
                                    field="path", value=str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | Path, what: str, *, source: str | None = None, limits: Limits | None = None,
               allow_stdin: bool = True, factor: int = 1) -> bytes:
    """The bytes of the regular file at ``path`` (``-``: standard input), at most ``factor`` times
    ``limits.max_input_bytes`` (``READ_BACK_FACTOR`` for a file this harness wrote); anything else is a
    HarnessInputError naming the file (as ``source``, default its name)."""
    limits = limits or Limits.current()
    most = factor * limits.max_input_bytes
    source = source or source_name(path)
    if str(path) == STDIN:
        source = STDIN_SOURCE
        if not allow_stdin:
            raise HarnessInputError(f"{STDIN_SOURCE}: the {what} cannot be read from standard input; give a file",
                                    field="path", value=STDIN)
        return _read_stdin(what, limits, factor)
    fd = open_regular_file(path, what, source, stdin_hint=allow_stdin)
    try:
        info = os.fstat(fd)
        if info.st_size > most:
            raise _too_big(source, what, limits, size_text(info.st_size), factor)
        try:
            data, more = _read_bounded(lambda n: os.read(fd, n), most)
        except OSError as exc:
            raise HarnessInputError(f"{source}: cannot read the {what}: {exc.strerror or exc}",
                                    field="path", value=str(path)) from None
        if more:
            raise _too_big(source, what, limits, "it grew while being read", factor)
        return data
    finally:
        os.close(fd)


def decode_utf8(data: bytes, source: str, what: str) -> str:
    """Strict UTF-8 (a leading BOM dropped); the first bad byte is named with its line and column."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_column(data, exc.start)
        raise HarnessInputError(
            f"{source}: the {what} is not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line} column {column} "
            f"({exc.reason})", field="encoding", value=source) from None
    return text.removeprefix("\ufeff")


def read_text(path: str | Path, what: str, *, source: str | None = None, limits: Limits | None = None,
              allow_stdin: bool = True, factor: int = 1) -> str:
    """``read_bytes`` then ``decode_utf8``: the text of a user's file, within the limits."""
    source = source or source_name(path)
    return decode_utf8(read_bytes(path, what, source=source, limits=limits, allow_stdin=allow_stdin, factor=factor),
                       source, what)


# --------------------------------------------------------------------------- JSON

class _LongNumber:
    """Stands in for a number token over the limit until the walk reports it with its path."""

    __slots__ = ("token",)

    def __init__(self, token: str) -> None:
        self.token = token

    def describe(self, limits: Limits) -> str:
        return (f"a number of {len(self.token)} characters ({self.token[:12]}...); "
                f"numbers are limited to {limits.max_number_chars} characters")


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _first_problem(value: Any, limits: Limits, strings: bool) -> tuple[tuple[Any, ...], str] | None:
    """The first (path, problem) of a parsed document: too deep, a long number, a lone surrogate
    (``strings``: only when the text has surrogate escapes). Iterative; paths built only for the
    containers on the way."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        kind = type(node)
        if kind is dict or kind is list:
            if depth > limits.max_depth:
                return path, f"nested deeper than {limits.max_depth} arrays/objects"
            items = node.items() if kind is dict else enumerate(node)
            for key, child in reversed(list(items)):
                if strings and kind is dict and _LONE_SURROGATE.search(key):
                    return (*path, key), "a key with a lone surrogate (an unpaired \\ud800-\\udfff escape)"
                child_kind = type(child)
                if child_kind is dict or child_kind is list or child_kind is _LongNumber or \
                        (strings and child_kind is str):
                    stack.append((child, depth + 1, (*path, key)))
        elif kind is _LongNumber:
            return path, node.describe(limits)
        elif kind is str and _LONE_SURROGATE.search(node):
            return path, "a string with a lone surrogate (an unpaired \\ud800-\\udfff escape)"
    return None


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NUMBER_CHARS = str.maketrans(dict.fromkeys("-+.eE0123456789", "0"))
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


def _nesting_exceeds(text: str, max_depth: int) -> bool:
    """Whether valid JSON ``text`` nests deeper than ``max_depth``, at C speed: strings and everything
    but brackets removed, then the innermost empty pairs peeled one level per pass."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets = _INNERMOST.sub("", brackets)
    return bool(brackets)


def _depth_position(text: str, limit: int) -> tuple[int, int] | None:
    """Line and column where the nesting of ``text`` first exceeds ``limit`` (strings skipped)."""
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return _line_column(text, match.start())
        elif token in "]}":
            depth -= 1
    return None


Locate = Callable[[Any, tuple[Any, ...]], str]


def loads_json(text: str, source: str, *, limits: Limits | None = None, locate: Locate | None = None,
               field: str = "json") -> Any:
    """Strict, bounded ``json.loads``; HarnessInputError ``SOURCE: [where: ]problem`` otherwise.
    ``locate(document, path)`` says where a problem is (default: the JSON path)."""
    limits = limits or Limits.current()

    def number(token: str, convert: Callable[[str], Any]) -> Any:
        if len(token) > limits.max_number_chars:
            return _LongNumber(token)
        value = convert(token)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"number {token} does not fit in a double")
        return value

    # Integers go through a Python hook only when the text has a run of number characters longer
    # than the limit somewhere (in a string, most likely): the C scanner's int() is fast and safe below it.
    long_run = "0" * (limits.max_number_chars + 1) in text.translate(_NUMBER_CHARS)
    try:
        document = json.loads(text, parse_constant=_constant, parse_float=lambda t: number(t, float),
                              **({"parse_int": lambda t: number(t, int)} if long_run else {}))
    except json.JSONDecodeError as err:
        raise HarnessInputError(f"{source}: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}",
                                field=field, value=source) from None
    except RecursionError:
        where = _depth_position(text, limits.max_depth)
        at = f" (at line {where[0]} column {where[1]})" if where else ""
        raise HarnessInputError(f"{source}: JSON nested deeper than {limits.max_depth} arrays/objects{at}",
                                field=field, value=source) from None
    except ValueError as err:
        raise HarnessInputError(f"{source}: not valid JSON: {err}", field=field, value=source) from None
    strings = bool(_SURROGATE_ESCAPE.search(text))
    suspect = strings or long_run or _nesting_exceeds(text, limits.max_depth)
    problem = _first_problem(document, limits, strings) if suspect else None  # the slow walk names the path
    if problem is not None:
        path, what = problem
        where = locate(document, path) if locate is not None else f"{json_path(path)}: "
        raise HarnessInputError(f"{source}: {where}{what}", field=json_path(path), value=source)
    return document


# --------------------------------------------------------------------------- TOML

def toml_path(path: Sequence[Any]) -> str:
    """``("rule", 0, "when")`` -> ``rule[0].when``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + (
            part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part)))
    return out or "(top level)"


def _first_toml_problem(value: Any, limits: Limits) -> tuple[tuple[Any, ...], str] | None:
    bound = 10 ** limits.max_number_chars
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict | list):
            if depth > limits.max_depth:
                return path, f"nested deeper than {limits.max_depth} arrays/tables"
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((child, depth + 1, (*path, key)) for key, child in reversed(list(items)))
        elif type(node) is int and abs(node) >= bound:
            return path, f"an integer of more than {limits.max_number_chars} digits"
    return None


class _TomlLimit(Exception):
    """A float token over the limit, raised out of tomllib's parse_float hook."""


def loads_toml(text: str, source: str, *, limits: Limits | None = None, field: str = "toml") -> dict[str, Any]:
    """``tomllib.loads`` within the limits; HarnessInputError ``SOURCE: not valid TOML: ...`` or
    ``SOURCE: PATH: problem`` otherwise."""
    limits = limits or Limits.current()

    def parse_float(token: str) -> float:
        if len(token) > limits.max_number_chars:
            raise _TomlLimit(f"a number of {len(token)} characters; numbers are limited to "
                             f"{limits.max_number_chars} characters")
        return float(token)

    try:
        data = tomllib.loads(text, parse_float=parse_float)
    except tomllib.TOMLDecodeError as exc:
        raise HarnessInputError(f"{source}: not valid TOML: {exc}", field=field, value=source) from None
    except _TomlLimit as exc:
        raise HarnessInputError(f"{source}: {exc}", field=field, value=source) from None
    except RecursionError:
        raise HarnessInputError(f"{source}: TOML nested deeper than {limits.max_depth} arrays/tables",
                                field=field, value=source) from None
    except ValueError as exc:  # int(): more than sys.get_int_max_str_digits() digits
        raise HarnessInputError(f"{source}: an integer of more than {limits.max_number_chars} digits ({exc})",
                                field=field, value=source) from None
    problem = _first_toml_problem(data, limits)
    if problem is not None:
        path, what = problem
        raise HarnessInputError(f"{source}: {toml_path(path)}: {what}", field=toml_path(path), value=source)
    return data


def read_json(path: str | Path, what: str, *, limits: Limits | None = None, locate: Locate | None = None) -> Any:
    """A user's JSON file (``-``: standard input), read and parsed within the limits."""
    limits = limits or Limits.current()
    return loads_json(read_text(path, what, limits=limits), source_name(path), limits=limits, locate=locate)


def read_toml(path: str | Path, what: str, *, source: str | None = None, limits: Limits | None = None,
              allow_stdin: bool = True, field: str = "toml") -> dict[str, Any]:
    """A user's TOML file (``-``: standard input), read and parsed within the limits; ``source``
    names it in messages (default: its name)."""
    limits = limits or Limits.current()
    name = STDIN_SOURCE if str(path) == STDIN else source or source_name(path)
    text = read_text(path, what, source=name, limits=limits, allow_stdin=allow_stdin)
    return loads_toml(text, name, limits=limits, field=field)
