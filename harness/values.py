"""Ragas's value for one row (a float or the error it raised) and the report's JSON encoding of values.

JSON has no NaN:

- a float is a JSON number written with ``repr`` precision (the exact double round-trips);
- NaN is the string ``"NaN"``; infinities are ``"Infinity"`` / ``"-Infinity"``;
- undefined (the reference's ``None``) is ``null``;
- an error is an object ``{"error": {"type": ..., "message": ...}}``;
- an exact rational is a string ``"5/6"`` (``"1"`` for integers) next to its float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class RagasError:
    """Ragas (or the probe around it) raised instead of returning a value."""

    type: str
    message: str


RagasValue = float | RagasError


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def encode_float(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def encode_ragas_value(value: RagasValue) -> Any:
    if isinstance(value, RagasError):
        return {"error": {"type": value.type, "message": value.message}}
    return encode_float(value)


def decode_ragas_value(raw: Any) -> RagasValue:
    """Inverse of ``encode_ragas_value`` (also reads the probe's output)."""
    if isinstance(raw, dict) and "error" in raw:
        error = raw["error"]
        return RagasError(str(error.get("type", "Error")), str(error.get("message", "")))
    if isinstance(raw, str) and raw in _SPECIAL:
        return _SPECIAL[raw]
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return RagasError("ProbeFormatError", f"unexpected value {raw!r} in probe output")
    return float(raw)


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
