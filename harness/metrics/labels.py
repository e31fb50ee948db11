"""Validation of binary judge labels: 0/1 integers or booleans, nothing else.

Ragas coerces labels by truthiness (``1 if verdict else 0``), so ``2`` or ``"no"`` count as 1
there; the reference refuses them instead, so the difference is reported rather than hidden.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragas_compat.errors import HarnessInputError


def is_binary_label(value: object) -> bool:
    """True for ``0``, ``1``, ``False``, ``True``; False for everything else (``1.0``, ``2``, ``"1"``, None)."""
    return isinstance(value, bool) or (type(value) is int and value in (0, 1))


def validate_label(value: object, field: str) -> int:
    """Return the label as int 0/1, or raise HarnessInputError naming ``field`` and the value."""
    if not is_binary_label(value):
        raise HarnessInputError(
            f"non-binary label {value!r} at {field}: labels must be 0 or 1 (booleans allowed)",
            field=field, value=value)
    return int(value)


def validate_labels(values: Sequence[object], field: str) -> tuple[int, ...]:
    """Return the labels as a tuple of ints 0/1.

    Raises HarnessInputError naming the first offending position (``field[i]``) and its value when
    any label is not 0/1; ``problems`` lists every offending position. ``values`` must be a list or
    tuple (a string is not a label list).
    """
    if not isinstance(values, (list, tuple)):
        raise HarnessInputError(
            f"{field}: expected a list of 0/1 labels, got {type(values).__name__} {values!r}",
            field=field, value=values)
    bad = [(i, v) for i, v in enumerate(values) if not is_binary_label(v)]
    if bad:
        problems = [f"non-binary label {v!r} at {field}[{i}]: labels must be 0 or 1 (booleans allowed)"
                    for i, v in bad]
        i, v = bad[0]
        raise HarnessInputError(problems[0], field=f"{field}[{i}]", value=v, problems=problems)
    return tuple(int(v) for v in values)


def coerce_by_truthiness(values: Sequence[object]) -> tuple[int, ...]:
    """What Ragas does with labels: ``1 if value else 0`` for each value."""
    return tuple(1 if v else 0 for v in values)


def ragas_int(value: object) -> int | None:
    """A label as Ragas's output models read it (a pydantic ``int`` field, lax mode): booleans and
    integers as they are, floats and numeric strings with no fractional part as their integer
    (``"1"``, ``" 1"``, ``"1.0"`` -> 1); None where pydantic refuses the value (``"yes"``, ``1.5``),
    so Ragas fails to parse the judge's reply."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return None


def ragas_labels(values: Sequence[object]) -> tuple[int, ...] | None:
    """What Ragas scores for frozen labels: each parsed by its output model (``ragas_int``), then
    ``1 if value else 0``; None when some label cannot be parsed (Ragas raises there)."""
    parsed = [ragas_int(v) for v in values]
    if any(p is None for p in parsed):
        return None
    return coerce_by_truthiness(parsed)
