"""Share of claims the context supports: context recall (reference claims) and faithfulness (response claims).

- context recall CR = |{g in G : attributed(g) = 1}| / |G|   (G = reference-answer claims, label key ``attributed``)
- faithfulness   F  = |{a in A : verdict(a) = 1}| / |A|      (A = response claims, label key ``verdict``)

The two use different claim sets, so faithfulness is not completeness. An empty claim set is
undefined (None, reason "zero_claims"), never 0 and never 1. Labels must be 0/1 (booleans
allowed). O(number of claims).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.labels import is_binary_label, ragas_labels
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainInput, Quantity, ratio_text


@dataclass(frozen=True)
class ClaimCoverage:
    """Supported claims over all claims, with the counts."""

    label_key: str                 # "attributed" or "verdict"
    supported: int                 # claims labelled 1
    total: int                     # claims in the set (the denominator)
    value: Fraction | None         # supported / total; None when total == 0
    undefined_reason: str | None   # "zero_claims" when total == 0


def claim_labels(claims: Sequence[Mapping[str, object]], label_key: str, field: str) -> list[object]:
    """The raw label of each claim (``claims[i][label_key]``), checking the claim shape."""
    if not isinstance(claims, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of claims, got {claims!r}", field=field, value=claims)
    raw: list[object] = []
    for i, claim in enumerate(claims):
        if not isinstance(claim, Mapping) or label_key not in claim:
            raise HarnessInputError(
                f"{field}[{i}]: expected a claim object with key {label_key!r}, got {claim!r}",
                field=f"{field}[{i}]", value=claim)
        raw.append(claim[label_key])
    return raw


def claim_coverage(claims: Sequence[Mapping[str, object]], label_key: str, field: str) -> ClaimCoverage:
    """Supported share of ``claims`` by ``label_key``.

    Raises HarnessInputError naming ``field[i].label_key`` and the value when a label is not 0/1
    (``problems`` lists every offending claim), or when a claim lacks ``label_key``.
    """
    raw = claim_labels(claims, label_key, field)
    bad = [(i, v) for i, v in enumerate(raw) if not is_binary_label(v)]
    if bad:
        problems = [f"non-binary label {v!r} at {field}[{i}].{label_key}: labels must be 0 or 1 "
                    f"(booleans allowed)" for i, v in bad]
        i, v = bad[0]
        raise HarnessInputError(problems[0], field=f"{field}[{i}].{label_key}", value=v, problems=problems)
    total = len(raw)
    supported = sum(int(v) for v in raw)
    return ClaimCoverage(
        label_key=label_key,
        supported=supported,
        total=total,
        value=Fraction(supported, total) if total else None,
        undefined_reason=None if total else "zero_claims",
    )


def context_recall(claims: Sequence[Mapping[str, object]],
                   field: str = "verdicts.context_recall") -> ClaimCoverage:
    """Context recall over reference claims labelled ``attributed``."""
    return claim_coverage(claims, "attributed", field)


def faithfulness(claims: Sequence[Mapping[str, object]],
                 field: str = "verdicts.faithfulness") -> ClaimCoverage:
    """Faithfulness over response claims labelled ``verdict``."""
    return claim_coverage(claims, "verdict", field)


def claim_outcome(metric: str, claims: Sequence[object], label_key: str, field: str,
                  denominator: str) -> ReferenceOutcome:
    """The outcome of a claim list: the supported share, or a refusal with the truthiness-coerced
    share as alternative ``coercion`` when a label is not 0/1."""
    try:
        cov = claim_coverage(claims, label_key, field)  # type: ignore[arg-type]
    except HarnessInputError as err:
        alternatives: dict[str, float | Fraction | None] = {}
        details: dict[str, object] = {"label_key": label_key}
        try:
            raw = claim_labels(claims, label_key, field)  # type: ignore[arg-type]
        except HarnessInputError:
            raw = None
        coerced = None if raw is None else ragas_labels(raw)
        if coerced is not None:  # else Ragas cannot parse a label: no value to expect
            alternatives["coercion"] = Fraction(sum(coerced), len(coerced)) if coerced else None
            details.update(labels=tuple(raw), coerced_labels=coerced)
        elif raw is not None:
            details.update(labels=tuple(raw))
        return ReferenceOutcome(metric, None, None, str(err), alternatives, details, denominator)
    details = dataclasses.asdict(cov)
    details["labels"] = tuple(claim[label_key] for claim in claims)  # type: ignore[index]
    return ReferenceOutcome(metric, cov.value, cov.undefined_reason, None, {}, details, denominator)


def share_as_given(labels: Sequence[int]) -> float:
    """The supported share with the labels taken as given (a 2 counts twice), in float."""
    return sum(labels) / len(labels)


def claim_quantities(reference: ReferenceOutcome, symbol: str, claims_word: str) -> tuple[list[Quantity], list[str]]:
    """explain: the supported share, its counts and formula (or the coerced share when refused)."""
    d = reference.details
    labels = list(d.get("labels", ()))
    if reference.refused is not None:
        coerced = list(d.get("coerced_labels", ()))
        value = reference.alternatives.get("coercion")
        formulas = [f"the reference refuses labels {labels}: {reference.refused}",
                    f"Ragas coerces them by truthiness to {coerced}: {symbol} = "
                    f"{ratio_text(sum(coerced), len(coerced), 'zero_claims')}"]
        return [Quantity(f"{symbol} (coerced, Ragas semantics)", value),
                Quantity(f"{claims_word} claims", len(labels))], formulas
    supported, total = int(d["supported"]), int(d["total"])
    if total:
        formula = (f"{symbol} = supported {claims_word} claims / {claims_word} claims = "
                   f"{ratio_text(supported, total, 'zero_claims')}")
    else:
        formula = (f"{symbol} = {supported}/{total}: undefined (zero_claims): no {claims_word} claim to support; "
                   "never 0 and never 1")
    return [Quantity(f"{symbol} (exact)", reference.number),
            Quantity(f"supported {claims_word} claims", supported),
            Quantity(f"{claims_word} claims", total)], [formula]


def explain_claims(key: str, label_key: str, who: str) -> Callable[[ExplainInput], dict[str, object]]:
    """explain's case inputs for a claim metric: two generated contexts, one generated claim per label."""
    def case_inputs(given: ExplainInput) -> dict[str, object]:
        return {"retrieved_contexts": ["Synthetic retrieved context #1", "Synthetic retrieved context #2"],
                "verdicts": {key: [{"statement": f"Synthetic {who} claim #{i}", label_key: v}
                                   for i, v in enumerate(given.labels, start=1)]}}
    return case_inputs


def reply_verdicts(reply: object) -> list[object] | None:
    """The verdicts of one scripted NLI reply (a JSON text with a ``statements`` list, or a list of
    generations, the first read), or None when it is not one (unparseable: no variant)."""
    if isinstance(reply, list):
        reply = reply[0] if reply else None
    if isinstance(reply, str):
        try:
            reply = json.loads(reply)
        except ValueError:
            return None
    statements = reply.get("statements") if isinstance(reply, dict) else None
    if not isinstance(statements, list) or not all(isinstance(s, dict) and "verdict" in s for s in statements):
        return None
    return [s["verdict"] for s in statements]
