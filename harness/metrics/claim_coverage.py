"""Share of claims the context supports: context recall (reference claims) and faithfulness (response claims).

- context recall CR = |{g in G : attributed(g) = 1}| / |G|   (G = reference-answer claims, label key ``attributed``)
- faithfulness   F  = |{a in A : verdict(a) = 1}| / |A|      (A = response claims, label key ``verdict``)

The two use different claim sets, so faithfulness is not completeness. An empty claim set is
undefined (None, reason "zero_claims"), never 0 and never 1. Labels must be 0/1 (booleans
allowed). O(number of claims).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from harness.errors import HarnessInputError
from harness.metrics.labels import is_binary_label


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
