"""Ragas's value for one row (a float, a label, a ranking or the error it raised) and the report's JSON
encoding of values.

JSON has no NaN:

- a float is a JSON number written with ``repr`` precision (the exact double round-trips);
- NaN is the string ``"NaN"``; infinities are ``"Infinity"`` / ``"-Infinity"``;
- undefined (the reference's ``None``) is ``null``;
- an error is an object ``{"error": {"type": ..., "message": ...}}``, with ``"origin": "harness"`` when
  the harness raised it rather than Ragas (its scripted judge had no frozen answer, it cannot drive the
  class, its frozen embedding model lacks a text, or the probe's own code failed);
- an exact rational is a string ``"5/6"`` (``"1"`` for integers) next to its float;
- a label (a category a class returns instead of a number: a DiscreteMetric's value, :class:`Label`) is
  an object ``{"label": "pass"}``; a ranking (a list it returns: a RankingMetric's, :class:`Ranking`) is
  ``{"ranking": ["b", "a"]}``, in its order. Neither is ever a float, NaN, undefined or an error, and
  both are compared exactly: the same text (case-sensitive) or the same items in the same order are
  identical, anything else is a divergence (never rounding). The reference's value of such a metric
  is a Label or a Ranking too (``ReferenceOutcome.value``).

Floats, labels, rankings and errors are encoded exactly as the probe encodes scores: the encoding lives once, in
the probe's protocol (``harness/probe/protocol.py``, standard library only), and the
functions here delegate to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragas_compat.probe import protocol as probe_protocol


@dataclass(frozen=True)
class RagasError:
    """Ragas raised instead of returning a value, or - ``origin`` "harness" - the harness did while
    driving it (then the row has no Ragas value, and nothing is said of Ragas)."""

    type: str
    message: str
    origin: str | None = None

    @property
    def raised_by_harness(self) -> bool:
        """The harness's own error: marked so by the probe, or of a type only the harness raises."""
        return self.origin == probe_protocol.HARNESS_ORIGIN or self.type in probe_protocol.HARNESS_ERROR_TYPES

    @property
    def not_in_this_ragas(self) -> bool:
        """The probe found no such class or configuration in this Ragas (a fact about Ragas that
        Ragas did not raise)."""
        return self.type == probe_protocol.UNAVAILABLE_TYPE

    @property
    def label(self) -> str:
        """``error: <type>`` (Ragas raised it), ``not scored (harness error): <type>`` or
        ``not scored (not in this Ragas): <type>``."""
        if self.raised_by_harness:
            return f"not scored (harness error): {self.type}"
        return f"not scored (not in this Ragas): {self.type}" if self.not_in_this_ragas else f"error: {self.type}"


Label = probe_protocol.Label        # a category: Label("pass"), repr 'pass'
Ranking = probe_protocol.Ranking    # a ranked list: Ranking(("b", "a")), repr ['b', 'a']
NON_NUMERIC = (Label, Ranking)      # the values that are not numbers (isinstance checks)

RagasValue = float | RagasError | Label | Ranking


def encode_float(value: float | Label | Ranking) -> Any:
    """A float as JSON: itself, or "NaN" / "Infinity" / "-Infinity" (a label or a ranking: its object)."""
    if isinstance(value, NON_NUMERIC):
        return encode_non_numeric(value)
    return probe_protocol.encode_float(value)


def encode_non_numeric(value: Label | Ranking) -> dict[str, Any]:
    """``{"label": text}`` or ``{"ranking": [items]}``."""
    return {"label": value.text} if isinstance(value, Label) else {"ranking": list(value.items)}


def encode_ragas_value(value: RagasValue) -> Any:
    if isinstance(value, NON_NUMERIC):
        return encode_non_numeric(value)
    if isinstance(value, RagasError):
        return probe_protocol.encode_error(value.type, value.message,
                                           probe_protocol.HARNESS_ORIGIN if value.raised_by_harness else None)
    return probe_protocol.encode_float(value)


def decode_ragas_value(raw: Any) -> RagasValue:
    """Inverse of ``encode_ragas_value`` (also reads the probe's output)."""
    value = probe_protocol.decode_score(raw)
    if isinstance(value, probe_protocol.ScoreError):
        return RagasError(value.type, value.message, value.origin)
    return value


def _decimal(n: int) -> str:
    """``str(n)`` for any size: Python refuses to print ints of more than 4,300 digits at once (the
    exact mean of many rows reaches that), so long ones are printed 1,000 digits at a time."""
    if n < 0:
        return "-" + _decimal(-n)
    chunk, parts = 10 ** 1000, []
    while n >= chunk:
        n, low = divmod(n, chunk)
        parts.append(f"{low:01000d}")
    return str(n) + "".join(reversed(parts))


def fraction_text(value: Fraction) -> str:
    """``"5/6"``, ``"2"``: the exact value, whatever its size."""
    if value.denominator == 1:
        return _decimal(value.numerator)
    return f"{_decimal(value.numerator)}/{_decimal(value.denominator)}"


def short_fraction_text(value: Fraction | float | int, max_digits: int = 60) -> str:
    """The exact value for a sentence: ``"5/6"``, or for a long one ``"0.8571428571428571 (an exact
    fraction of about 4,400 digits)"``; the reports keep the whole fraction. A float is its repr."""
    if not isinstance(value, Fraction):
        return str(value)
    digits = int((value.numerator.bit_length() + value.denominator.bit_length()) * 0.30103) + 1
    if digits <= max_digits:
        return str(value)
    return f"{float(value)!r} (an exact fraction of about {digits:,} digits)"


def encode_fraction(value: Fraction | Label | Ranking | None) -> str | None:
    """The exact rational's text; None when undefined, and for a label or a ranking (not a number: a
    report gives it as its value, ``encode_non_numeric``)."""
    return None if value is None or isinstance(value, NON_NUMERIC) else fraction_text(value)


def encode_detail(value: Any) -> Any:
    """JSON-ready form of a reference detail (Fractions as strings, floats via encode_float)."""
    if isinstance(value, Fraction):
        return fraction_text(value)
    if isinstance(value, float):
        return encode_float(value)
    if isinstance(value, dict):
        return {str(k): encode_detail(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [encode_detail(v) for v in value]
    return value
