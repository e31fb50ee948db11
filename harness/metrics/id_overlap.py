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

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    ratio_text,
)

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


# --------------------------------------------------------------------------- the metrics

ID_PRECISION = "id_context_precision"
ID_RECALL = "id_context_recall"
_ID_FIELDS = ("retrieved_context_ids", "reference_context_ids")


def _id_outcome(metric: str, case: Case, precision: bool) -> ReferenceOutcome:
    denominator = ("retrieved ID list entries (Ragas: distinct str() of retrieved IDs)" if precision
                   else "reference ID list entries (Ragas: distinct str() of reference IDs)")
    try:
        ov = id_overlap(case.retrieved_context_ids or (), case.reference_context_ids or ())
    except HarnessInputError as err:
        return ReferenceOutcome(metric, None, None, str(err), {}, {}, denominator)
    details = dataclasses.asdict(ov)
    details["collapsed"] = [dataclasses.asdict(g) for g in ov.collapsed]
    if precision:
        value, dedup, reason = ov.raw_precision, ov.ragas_precision, ov.precision_undefined_reason
    else:
        value, dedup, reason = ov.raw_recall, ov.ragas_recall, ov.recall_undefined_reason
    return ReferenceOutcome(metric, value, reason, None, {"dedup": dedup}, details, denominator)


def _id_quantities(precision: bool) -> Callable[[ReferenceOutcome, ExplainInput], tuple[list[Quantity], list[str]]]:
    """explain: the raw (lists as given) and Ragas (str() + set) values, counts and merged IDs."""
    def quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
        d = reference.details
        if reference.refused is not None:
            return [], [f"the reference refuses the IDs: {reference.refused}"]
        ret_n, ref_n = d["retrieved_count"], d["reference_count"]
        word = "precision" if precision else "recall"
        hits = d["raw_precision_hits"] if precision else d["raw_recall_hits"]
        den = ret_n if precision else ref_n
        unique_den = d["retrieved_unique"] if precision else d["reference_unique"]
        raw_value = d["raw_precision"] if precision else d["raw_recall"]
        ragas_value = d["ragas_precision"] if precision else d["ragas_recall"]
        side = "retrieved" if precision else "reference"
        formulas = [
            f"{word} (reference, lists as given, IDs compared by type and value) = {side} entries found on the "
            f"other side / {side} entries = {ratio_text(hits, den, 'empty_id_set')}",
            f"{word} (Ragas semantics: str() + set) = |S_ret ∩ S_ref| / |S_{side[:3]}| = "
            f"{ratio_text(d['ragas_hits'], unique_den, 'Ragas returns NaN')}",
        ]
        for group in d.get("collapsed", ()):
            formulas.append(f"str() + set merged {group['as_string']!r}: retrieved {list(group['retrieved'])}, "
                            f"reference {list(group['reference'])} ({', '.join(group['reasons'])})")
        return [
            Quantity(f"{word} (exact, lists as given)", raw_value),
            Quantity(f"{word} (Ragas semantics, str() + set)", ragas_value),
            Quantity(f"{side} entries", den),
            Quantity(f"{side} entries matched (type and value)", hits),
            Quantity(f"distinct str() {side} IDs", unique_den),
            Quantity("distinct str() IDs in both", d["ragas_hits"]),
        ], formulas
    return quantities


def _explain_ids(given: ExplainInput) -> dict[str, object]:
    return {"retrieved_contexts": [f"Synthetic retrieved context for ID {json.dumps(x)} (rank {i})"
                                   for i, x in enumerate(given.retrieved, start=1)],
            "retrieved_context_ids": list(given.retrieved),
            "reference_context_ids": list(given.reference)}


def _fuzz_ids(draw: FuzzDraw) -> dict[str, object]:
    return {"retrieved_context_ids": draw.retrieved_ids, "reference_context_ids": draw.reference_ids}


_IDS_HELP = "--retrieved JSON-LIST --reference JSON-LIST (e.g. '[1, \"1\"]')"
PRECISION_TARGETS = RagasTargets(("IDBasedContextPrecision",), (), "ragas.metrics._context_precision")
RECALL_TARGETS = RagasTargets(("IDBasedContextRecall",), (), "ragas.metrics._context_recall")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=ID_PRECISION,
        reference_on="retrieved_context_ids vs reference_context_ids",
        ragas=PRECISION_TARGETS,
        fields_read=_ID_FIELDS,
        denominator="retrieved ID list entries (Ragas: distinct str() of retrieved IDs)",
        undefined_policy=("None ('empty_id_set') when no ID was retrieved; Ragas returns NaN. The reference keeps "
                          "duplicates and types; Ragas's str() + set value is alternative 'dedup'."),
        compute=lambda case: _id_outcome(ID_PRECISION, case, precision=True),
        requires=_ID_FIELDS,
        fuzz_inputs=_fuzz_ids,
        explain=ExplainAdapter(command="id-precision", takes="ids", inputs_help=_IDS_HELP,
                               targets=PRECISION_TARGETS.ids(),
                               case_inputs=_explain_ids, quantities=_id_quantities(precision=True))),
    MetricSpec(
        name=ID_RECALL,
        reference_on="retrieved_context_ids vs reference_context_ids",
        ragas=RECALL_TARGETS,
        fields_read=_ID_FIELDS,
        denominator="reference ID list entries (Ragas: distinct str() of reference IDs)",
        undefined_policy=("None ('empty_id_set') when there are no reference IDs; Ragas returns NaN. The reference "
                          "keeps duplicates and types; Ragas's str() + set value is alternative 'dedup'."),
        compute=lambda case: _id_outcome(ID_RECALL, case, precision=False),
        requires=_ID_FIELDS,
        fuzz_inputs=_fuzz_ids,
        explain=ExplainAdapter(command="id-recall", takes="ids", inputs_help=_IDS_HELP,
                               targets=RECALL_TARGETS.ids(),
                               case_inputs=_explain_ids, quantities=_id_quantities(precision=False))),
)
