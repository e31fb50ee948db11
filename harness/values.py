"""Ragas's value for one row (a float or the error it raised) and the report's JSON encoding of values.

JSON has no NaN:

- a float is a JSON number written with ``repr`` precision (the exact double round-trips);
- NaN is the string ``"NaN"``; infinities are ``"Infinity"`` / ``"-Infinity"``;
- undefined (the reference's ``None``) is ``null``;
- an error is an object ``{"error": {"type": ..., "message": ...}}``;
- an exact rational is a string ``"5/6"`` (``"1"`` for integers) next to its float.

Floats and errors are encoded exactly as the probe encodes scores: the encoding lives once, in
the probe's protocol (``harness/probe/probe_protocol.py``, standard library only), and the
functions here delegate to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from harness.probe import probe_protocol


@dataclass(frozen=True)
class RagasError:
    """Ragas (or the probe around it) raised instead of returning a value."""

    type: str
    message: str


RagasValue = float | RagasError


def encode_float(value: float) -> float | str:
    """A float as JSON: itself, or "NaN" / "Infinity" / "-Infinity"."""
    return probe_protocol.encode_float(value)


def encode_ragas_value(value: RagasValue) -> Any:
    if isinstance(value, RagasError):
        return probe_protocol.encode_error(value.type, value.message)
    return probe_protocol.encode_float(value)


def decode_ragas_value(raw: Any) -> RagasValue:
    """Inverse of ``encode_ragas_value`` (also reads the probe's output)."""
    value = probe_protocol.decode_score(raw)
    if isinstance(value, probe_protocol.ScoreError):
        return RagasError(value.type, value.message)
    return value


def encode_fraction(value: Fraction | None) -> str | None:
    return None if value is None else str(value)


def encode_detail(value: Any) -> Any:
    """JSON-ready form of a reference detail (Fractions as strings, floats via encode_float)."""
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, float):
        return encode_float(value)
    if isinstance(value, dict):
        return {str(k): encode_detail(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [encode_detail(v) for v in value]
    return value
