"""Context entity recall: the share of the reference's entities that the retrieved contexts mention.

With GN the set of entities the judge extracts from the reference and CN the set it extracts from
the retrieved contexts (joined with newlines, one extraction), the documented definition (Ragas docs
and the class docstring) is

    CER = |CN ∩ GN| / |GN|

over sets: an entity the judge lists twice counts once, on both sides; entities match by exact
string equality. Exact ``Fraction``; undefined (None, reason ``no_reference_entities``) when GN is
empty.

Case format: ``verdicts.context_entity_recall`` is a list of ``{"statement": entity, "from":
"reference" | "contexts"}`` (the judge's extraction, in its order, duplicates kept).

Ragas 0.4.3:

- legacy ``ContextEntityRecall``: ``len(set(CN) & set(GN)) / (len(GN as listed) + 1e-8)``: the
  denominator counts a repeated reference entity every time (``dedup`` alternative, here meaning
  *not* de-duplicated in the denominator), and always carries the guard (``epsilon``);
- collections ``ContextEntityRecall``: ``... / (len(set(GN)) + 1e-8)``: sets on both sides, the guard
  (``epsilon``).

Both return 0.0 for an empty GN (``empty_as_zero``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
)

KEY = "context_entity_recall"
SIDES = ("reference", "contexts")
RAGAS_GUARD = 1e-8


def entities(items: Sequence[Any], field: str = f"verdicts.{KEY}") -> tuple[list[str], list[str]]:
    """(reference entities, context entities) as listed by the judge (order and duplicates kept)."""
    if not isinstance(items, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of entities", field=field, value=items)
    out: dict[str, list[str]] = {side: [] for side in SIDES}
    for i, item in enumerate(items):
        if (not isinstance(item, Mapping) or item.get("from") not in SIDES
                or not isinstance(item.get("statement"), str)):
            raise HarnessInputError(f"{field}[{i}]: expected {{'statement': entity, 'from': reference|contexts}}, "
                                    f"got {item!r}", field=f"{field}[{i}]", value=item)
        out[item["from"]].append(item["statement"])
    return out["reference"], out["contexts"]


def context_entity_recall(reference_entities: Sequence[str], context_entities: Sequence[str]) -> Fraction | None:
    """|CN ∩ GN| / |GN| over sets; None when GN is empty."""
    gn, cn = set(reference_entities), set(context_entities)
    return Fraction(len(gn & cn), len(gn)) if gn else None


def legacy_value(reference_entities: Sequence[str], context_entities: Sequence[str]) -> float:
    """Ragas 0.4.3 legacy: set intersection over the listed reference entities + 1e-8."""
    both = len(set(context_entities).intersection(set(reference_entities)))
    return both / (len(reference_entities) + RAGAS_GUARD)


def collections_value(reference_entities: Sequence[str], context_entities: Sequence[str]) -> float:
    """Ragas 0.4.3 collections: set intersection over the reference entity set + 1e-8."""
    reference_set = set(reference_entities)
    both = len(reference_set.intersection(set(context_entities)))
    return both / (len(reference_set) + RAGAS_GUARD)


def entity_outcome(items: Sequence[Any]) -> ReferenceOutcome:
    gn, cn = entities(items)
    value = context_entity_recall(gn, cn)
    details: dict[str, object] = {
        "reference_entities": tuple(gn), "context_entities": tuple(cn),
        "matched": len(set(gn) & set(cn)), "reference_entity_set": len(set(gn)),
        "reference_entities_listed": len(gn),
    }
    alternatives: dict[str, float | Fraction | None] = {}
    if value is not None:
        alternatives["epsilon"] = collections_value(gn, cn)
        listed = legacy_value(gn, cn)
        if listed != alternatives["epsilon"]:
            alternatives["dedup"] = listed
        details["ragas_semantics"] = {
            "epsilon": "Ragas divides by (reference entities + 1e-8)",
            "dedup": ("the legacy class divides the de-duplicated match count by the reference entities as "
                      "listed (a repeated entity counts every time) + 1e-8"),
        }
    return ReferenceOutcome(KEY, value, None if value is not None else "no_reference_entities", None,
                            alternatives, details, "reference entities |GN| (a set)")


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    pool = [f"Entity{k}" for k in range(rng.choice((1, 3, 6, 12)))]
    reference = [rng.choice(pool) for _ in range(rng.choice((0, 1, 2, 3, 5, 8)))]
    if reference and rng.random() < 0.5:
        reference = list(dict.fromkeys(reference))  # half the draws list each entity once
    contexts = [rng.choice(pool) for _ in range(rng.choice((0, 1, 3, 6)))]
    items = [{"statement": e, "from": "reference"} for e in reference]
    items += [{"statement": e, "from": "contexts"} for e in contexts]
    return {"verdicts": {KEY: items}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    """LABELS: one per reference entity, 1 when the contexts also mention it."""
    items = [{"statement": f"Entity{i}", "from": "reference"} for i, _ in enumerate(given.labels, start=1)]
    items += [{"statement": f"Entity{i}", "from": "contexts"} for i, v in enumerate(given.labels, start=1) if v]
    return {"retrieved_contexts": ["Synthetic retrieved context #1"], "verdicts": {KEY: items}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    matched, total = int(d["matched"]), int(d["reference_entity_set"])  # type: ignore[call-overload]
    formula = (f"CER = |CN ∩ GN| / |GN| = {matched}/{total}" if total
               else "CER = 0/0: undefined (no_reference_entities)")
    return ([Quantity("CER (exact)", reference.number), Quantity("matched entities", matched),
             Quantity("reference entities (set)", total),
             Quantity("reference entities (as listed)", int(d["reference_entities_listed"]))],  # type: ignore[call-overload]
            [formula, "Ragas: denominator + 1e-8; legacy counts the reference entities as listed"])


_TARGETS = RagasTargets(("ContextEntityRecall",), ("ContextEntityRecall",), "ragas.metrics._context_entities_recall",
                        judge="context_entity_recall")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=KEY,
        reference_on=f"verdicts.{KEY} (entities from the reference and from the contexts)",
        ragas=_TARGETS,
        fields_read=("reference", "retrieved_contexts"),
        denominator="reference entities |GN| (a set)",
        undefined_policy=("None ('no_reference_entities') when the judge extracts no reference entity; "
                          "Ragas returns 0.0 (1e-8 guard)."),
        compute=lambda case: entity_outcome(case.verdicts[KEY]),
        requires=(f"verdicts.{KEY}",),
        verdicts=Verdicts(KEY, "claims", None),
        as_given=lambda labels: sum(labels) / len(labels) if labels else float("nan"),
        fuzz_inputs=_fuzz,
        explain=ExplainAdapter(
            command="context-entity-recall", takes="labels",
            inputs_help="LABELS (one per reference entity: 1 when the retrieved contexts mention it too)",
            targets=_TARGETS.ids()[:1], case_inputs=_explain_inputs, quantities=_quantities)),
)
