"""JSON encoding of probe results (standard library only).

Scores keep their exact double (json writes ``repr``); non-finite scores become the strings
"NaN", "Infinity", "-Infinity"; an exception becomes ``{"error": {"type", "message"}}``.
"""

from __future__ import annotations

import math
import numbers
import typing as t


def encode_score(value: object) -> object:
    """A Ragas score as JSON: float, "NaN"/"Infinity"/"-Infinity", or an error record."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return error_record(TypeError(f"score is not a real number: {value!r} ({type(value).__name__})"),
                            type_name="UnexpectedScoreType")
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def error_record(exc: BaseException, type_name: str | None = None) -> dict:
    """``{"error": {"type": ..., "message": ...}}`` for an exception."""
    return {"error": {"type": type_name or type(exc).__name__, "message": str(exc)}}


def encode_warnings(caught: list) -> list[dict]:
    """Captured ``warnings.WarningMessage`` objects as ``{"category", "message"}``."""
    return [{"category": w.category.__name__, "message": str(w.message)} for w in caught]


def jsonable(value: object) -> object:
    """A pydantic-validated sample field as plain JSON (lists, strings, numbers, null)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return encode_score(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return repr(value)


def new_result(case: dict, target: t.Any, api: str) -> dict:
    """The probe-output record of one (case, target), before scoring (probe format 1)."""
    return {
        "case_id": case.get("id"), "target": target.name, "api": api,
        "metric": target.metric, "ragas_class": None, "fields_read": list(target.fields_read),
        "received": None, "value": None, "prompts": 0, "expected_prompts": 0, "warnings": [],
    }
