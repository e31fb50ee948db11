"""ID-based context precision and recall, under two semantics, plus what de-duplication collapsed.

Ragas semantics (``IDBasedContextPrecision`` / ``IDBasedContextRecall``): every ID goes through
``str()``, each list becomes a set, order is ignored.
    precision = |S_ret ∩ S_ref| / |S_ret|      recall = |S_ref ∩ S_ret| / |S_ref|
    undefined (None; Ragas: NaN) when the denominator set is empty.

Raw-list semantics (the reference value): every list entry counts (duplicates kept) and an ID is
its (type, value) pair, so ``1``, ``"1"`` and ``1.0`` are three different IDs. A JSON integer and
a JSON float with the same value (``1`` vs ``1.0``) are distinct: they are distinct JSON tokens,
and ``str()`` keeps them apart too (``"1"`` vs ``"1.0"``), so the two semantics agree on that pair.
    precision = #{retrieved entries whose ID occurs in the reference list} / len(retrieved list)
    recall    = #{reference entries whose ID occurs in the retrieved list} / len(reference list)
    undefined (None) when the denominator list is empty.

``collapsed`` lists every group of entries that ``str()`` + set turned into one ID: an ID that
occurs more than once in a list, or distinct (type, value) IDs sharing one string (``1`` and ``"1"``).
IDs must be strings or finite numbers (booleans are not IDs). O(len(retrieved) + len(reference)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from harness.errors import HarnessInputError

RawId = tuple[str, object]  # (type name, value)


@dataclass(frozen=True)
class CollapsedGroup:
    """Entries that ``str()`` + set semantics merged into the single ID ``as_string``."""

    as_string: str
    retrieved: tuple[str | int | float, ...]   # the raw retrieved entries (in order, duplicates kept)
    reference: tuple[str | int | float, ...]   # the raw reference entries
    reasons: tuple[str, ...]                   # "duplicate_in_retrieved", "duplicate_in_reference", "types_merged"


@dataclass(frozen=True)
class IdOverlap:
    """ID precision and recall under raw-list and Ragas (str + set) semantics."""

    retrieved_count: int                 # len(retrieved list)
    reference_count: int                 # len(reference list)
    raw_precision_hits: int              # retrieved entries whose (type, value) occurs in the reference list
    raw_recall_hits: int                 # reference entries whose (type, value) occurs in the retrieved list
    raw_precision: Fraction | None       # raw_precision_hits / retrieved_count
    raw_recall: Fraction | None          # raw_recall_hits / reference_count
    retrieved_unique: int                # |S_ret| (distinct str() of retrieved IDs)
    reference_unique: int                # |S_ref|
    ragas_hits: int                      # |S_ret ∩ S_ref|
    ragas_precision: Fraction | None     # ragas_hits / |S_ret|
    ragas_recall: Fraction | None        # ragas_hits / |S_ref|
    collapsed: tuple[CollapsedGroup, ...]

    @property
    def precision_undefined_reason(self) -> str | None:
        return "empty_id_set" if self.retrieved_count == 0 else None

    @property
    def recall_undefined_reason(self) -> str | None:
        return "empty_id_set" if self.reference_count == 0 else None


def _validate_ids(ids: Sequence[object], field: str) -> list[str | int | float]:
    if not isinstance(ids, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of IDs, got {ids!r}", field=field, value=ids)
    for i, x in enumerate(ids):
        ok = (isinstance(x, str) or type(x) is int
              or (type(x) is float and math.isfinite(x)))
        if not ok:
            raise HarnessInputError(
                f"{field}[{i}]: an ID must be a string or a finite number, got {x!r}",
                field=f"{field}[{i}]", value=x)
    return list(ids)


def _raw_key(x: str | int | float) -> RawId:
    return (type(x).__name__, x)


def _collapsed_groups(retrieved: list, reference: list) -> tuple[CollapsedGroup, ...]:
    by_string: dict[str, tuple[list, list]] = {}
    for side, items in ((0, retrieved), (1, reference)):
        for x in items:
            by_string.setdefault(str(x), ([], []))[side].append(x)
    groups = []
    for as_string, (ret, ref) in by_string.items():
        reasons = []
        if len(ret) > 1:
            reasons.append("duplicate_in_retrieved")
        if len(ref) > 1:
            reasons.append("duplicate_in_reference")
        if len({_raw_key(x) for x in ret + ref}) > 1:
            reasons.append("types_merged")
        if reasons:
            groups.append(CollapsedGroup(as_string, tuple(ret), tuple(ref), tuple(reasons)))
    return tuple(groups)


def id_overlap(retrieved_ids: Sequence[object], reference_ids: Sequence[object], *,
               retrieved_field: str = "retrieved_context_ids",
               reference_field: str = "reference_context_ids") -> IdOverlap:
    """Compare retrieved and reference IDs; raises HarnessInputError naming the field on a bad ID."""
    ret = _validate_ids(retrieved_ids, retrieved_field)
    ref = _validate_ids(reference_ids, reference_field)
    ret_keys = {_raw_key(x) for x in ret}
    ref_keys = {_raw_key(x) for x in ref}
    raw_p_hits = sum(1 for x in ret if _raw_key(x) in ref_keys)
    raw_r_hits = sum(1 for x in ref if _raw_key(x) in ret_keys)
    s_ret = {str(x) for x in ret}
    s_ref = {str(x) for x in ref}
    hits = len(s_ret & s_ref)
    return IdOverlap(
        retrieved_count=len(ret),
        reference_count=len(ref),
        raw_precision_hits=raw_p_hits,
        raw_recall_hits=raw_r_hits,
        raw_precision=Fraction(raw_p_hits, len(ret)) if ret else None,
        raw_recall=Fraction(raw_r_hits, len(ref)) if ref else None,
        retrieved_unique=len(s_ret),
        reference_unique=len(s_ref),
        ragas_hits=hits,
        ragas_precision=Fraction(hits, len(s_ret)) if s_ret else None,
        ragas_recall=Fraction(hits, len(s_ref)) if s_ref else None,
        collapsed=_collapsed_groups(ret, ref),
    )
