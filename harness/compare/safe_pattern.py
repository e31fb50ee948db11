"""Regular expressions of expectation rules (``when.error_message``) that always finish quickly.

Python's ``re`` backtracks and has no timeout, and an error message can carry a judge's text: one rule
``error_message = "(.|.)*X"`` kept ``run`` busy for more than 100 s, ``.*.*X`` takes 22 s on a 4,000-character
message, and ``a{4294967296}`` raised OverflowError (exit 4). A rule's pattern is therefore checked when
the file is read (:func:`compile_safe`; ``UnsafePattern`` names what is refused) and must stay in a subset
whose matching time is at most quadratic in the text:

- no quantifier inside a quantified group (``(a+)+``, ``(a*)*``), and no alternation inside one
  (``(.|.)*``, ``(foo|fo)+``; an alternation of single characters is a character set and is fine);
- no backreference (``\\1``, ``(?P=name)``) and no conditional group;
- at most one unbounded quantifier (``*``, ``+``, ``{m,}``) in the whole pattern;
- repeat counts at most ``MAX_REPEAT_COUNT``, and the bounded quantifiers' widths (``?``: 2, ``{2,5}``: 4)
  multiplied together at most ``MAX_REPEAT_PRODUCT``.

A message is matched on its first ``MATCH_CHARS`` characters (:func:`search`).
"""

from __future__ import annotations

import re

try:  # Python 3.11+
    from re import _constants as _sre_constants  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _sre_constants  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

MAX_REPEAT_COUNT = 1000
MAX_REPEAT_PRODUCT = 1000
MATCH_CHARS = 4096
MAX_PATTERN_CHARS = 1000

_C = _sre_constants
_REPEATS = {_C.MAX_REPEAT, _C.MIN_REPEAT} | ({_C.POSSESSIVE_REPEAT} if hasattr(_C, "POSSESSIVE_REPEAT") else set())
_BACKREFS = {_C.GROUPREF, _C.GROUPREF_EXISTS} | ({_C.GROUPREF_IGNORE} if hasattr(_C, "GROUPREF_IGNORE") else set())


class UnsafePattern(ValueError):
    """A pattern outside the subset (the message says which construct)."""


class _Tally:
    def __init__(self) -> None:
        self.unbounded = 0
        self.product = 1


def _walk(items, quantified: bool, tally: _Tally) -> None:
    for op, av in items:
        if op in _REPEATS:
            low, high, sub = av
            if low > MAX_REPEAT_COUNT or (high != _C.MAXREPEAT and high > MAX_REPEAT_COUNT):
                raise UnsafePattern(f"a repeat count over {MAX_REPEAT_COUNT}")
            if quantified and high > 1:
                raise UnsafePattern("a quantifier inside a quantified group (nested quantifiers)")
            if high == _C.MAXREPEAT:
                tally.unbounded += 1
                if tally.unbounded > 1:
                    raise UnsafePattern("more than one unbounded quantifier (*, +, {m,})")
            else:
                tally.product *= high - low + 1
                if tally.product > MAX_REPEAT_PRODUCT:
                    raise UnsafePattern(f"bounded quantifiers whose widths multiply past {MAX_REPEAT_PRODUCT}")
            _walk(sub, quantified or high > 1, tally)
        elif op is _C.BRANCH:
            if quantified:
                raise UnsafePattern("an alternation inside a quantified group")
            for branch in av[1]:
                _walk(branch, quantified, tally)
        elif op in _BACKREFS:
            raise UnsafePattern("a backreference or conditional group")
        elif op is _C.SUBPATTERN:
            _walk(av[-1], quantified, tally)
        elif op in (_C.ASSERT, _C.ASSERT_NOT):
            _walk(av[1], quantified, tally)
        elif hasattr(_C, "ATOMIC_GROUP") and op is _C.ATOMIC_GROUP:
            _walk(av, quantified, tally)


def compile_safe(pattern: str) -> re.Pattern[str]:
    """``re.compile(pattern)`` when the pattern is in the subset; ``UnsafePattern`` (why) or ``re.error``
    otherwise (never OverflowError or RecursionError)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsafePattern(f"longer than {MAX_PATTERN_CHARS} characters")
    try:
        parsed = _sre_parse.parse(pattern)
        _walk(parsed, False, _Tally())
        return re.compile(pattern)
    except (OverflowError, RecursionError) as exc:
        raise UnsafePattern(f"too large ({type(exc).__name__}: {exc})") from None


def search(compiled: re.Pattern[str], text: str) -> bool:
    """Whether ``compiled`` occurs in the first ``MATCH_CHARS`` characters of ``text``."""
    return compiled.search(text[:MATCH_CHARS]) is not None
