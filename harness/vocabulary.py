"""The harness's vocabulary as types: what a row can be classified as, and which Ragas class ran.

``Classification`` names every way Ragas's value can relate to the reference, each with its
cause written once (``cause``: the reviewer's paragraph in report.md; ``pair_meaning``: what the
name means when the legacy path stands in for the reference, in the legacy-vs-collections pairs).
``TargetId`` is a probe target name (``"legacy:Faithfulness"``) that knows its API and class.
"""

from __future__ import annotations

from enum import StrEnum

from ragas_compat.probe import protocol as probe_protocol


class Classification(StrEnum):
    """One row's relation to the reference, checked in this order by ``ragas_compat.compare.classify``."""

    IDENTICAL = "identical"
    EPSILON = "epsilon"
    UNDEFINED_NAN = "undefined_nan"
    EMPTY_AS_ZERO = "empty_as_zero"
    DEDUP = "dedup"
    COERCION = "coercion"
    ROUNDING = "rounding"
    VARIANT = "variant"
    DIVERGENCE = "divergence"
    ERROR = "error"

    @property
    def cause(self) -> str:
        """Why a row gets this name, for reviewers (one paragraph)."""
        return CAUSES[self]

    @property
    def pair_meaning(self) -> str:
        """What the name means for a (legacy, collections) pair of one case and metric."""
        return PAIR_MEANINGS[self]


CAUSES: dict[str, str] = {
    "identical": "Ragas's float is bit-equal to the reference value.",
    "epsilon": (
        "Ragas adds a small guard constant to a denominator (against a division by zero), so an exact "
        "value comes out a little lower in the last decimals (5/6 as 0.8333333332916666). The harness "
        "recomputes Ragas's formula with the constant and finds it bit-equal to Ragas's value (or within "
        "a few ulps, from summation order): the gap is the constant, not a different definition. The "
        "reason beside the rows names the formula and the constant."
    ),
    "undefined_nan": (
        "The reference value is undefined (an empty denominator: zero claims, or an empty ID "
        "set) and Ragas returns NaN. Same meaning, different encoding; note that Ragas's "
        "evaluate() then drops the row from its NaN-skipping mean."
    ),
    "empty_as_zero": (
        "The reference value is undefined (its formula has an empty denominator or nothing to score: "
        "nothing retrieved, an empty text, no claim, a zero vector ...; the row names the reason) and "
        "Ragas returns 0.0, through a guard constant in the denominator or its own check. \"Nothing to "
        "score\" and a real score of zero both read as 0.0, and evaluate() keeps the row in its mean. "
        "The reason beside the rows names the formula."
    ),
    "dedup": (
        "Ragas's ID-based metrics pass every ID through str() and into a set: duplicates "
        "collapse, and 1 and \"1\" become one ID. The reference counts the lists as given; "
        "the value under Ragas's set semantics is bit-equal to Ragas's."
    ),
    "coercion": (
        "The input holds a value the reference refuses (a verdict that is not 0/1). Ragas "
        "accepts it and maps it to 0/1 by truthiness (2 counts as 1); the value under that "
        "coercion is bit-equal to Ragas's."
    ),
    "rounding": (
        "Ragas's float differs from the exact value by a few units in the last place, from "
        "float summation order rather than meaning (Python 3.12 made sum() compensated, so "
        "the Python version is part of the provenance)."
    ),
    "variant": (
        "Ragas computes a named variant of the textbook quantity: its own preprocessing (splitting "
        "the texts on \". \", each reference sentence as a separate reference, Porter stemming, "
        "a threshold's inclusivity ...). The harness recomputes the quantity exactly under that "
        "variant and finds Ragas's value (within a few ulps); the row names the variant."
    ),
    "divergence": (
        "A difference none of the known semantics explains: Ragas measures something other "
        "than the reference definition on this input."
    ),
    "error": "Ragas (or the probe around it) raised instead of returning a value; the message is kept.",
}

PAIR_MEANINGS: dict[str, str] = {
    "identical": "both paths give the same result",
    "epsilon": "the paths differ only by a guard constant in a denominator (such as a 1e-10)",
    "undefined_nan": "the legacy path is undefined and the collections path returns NaN",
    "empty_as_zero": "the legacy path returns NaN (undefined) where the collections path returns 0.0",
    "dedup": "the paths differ by de-duplicating IDs",
    "coercion": ("the legacy path maps verdicts to 0/1 by truthiness; the collections path takes them "
                 "as given, and recomputing with the verdicts as given is bit-equal to it"),
    "rounding": "a few ulps apart: float summation order",
    "variant": "the paths compute different named variants of the metric (see the row's explanation)",
    "divergence": "a difference none of the known semantics explains",
    "error": "the collections path raises where the legacy path returns a value",
}


class Api(StrEnum):
    """The Ragas API a target belongs to (the prefix of its name)."""

    LEGACY = probe_protocol.API_LEGACY            # ragas.metrics classes, scored with single_turn_ascore
    COLLECTIONS = probe_protocol.API_COLLECTIONS  # ragas.metrics.collections classes, scored with ascore(**inputs)
    SELFTEST = probe_protocol.API_SELFTEST        # the probe's own fault-handling targets


class TargetId(str):
    """A probe target name ``"<api>:<RagasClass>"``; compares and serialises as that string.

    >>> t = TargetId("collections:ContextRecall"); (t.api, t.ragas_class)
    (<Api.COLLECTIONS: 'collections'>, 'ContextRecall')
    """

    __slots__ = ()

    def __new__(cls, name: str) -> TargetId:
        api, sep, ragas_class = str(name).partition(":")
        if not sep or not ragas_class or api not in Api.__members__.values():
            raise ValueError(f"not a target name {name!r}: expected '<api>:<RagasClass>' with api one of "
                             f"{', '.join(a.value for a in Api)}")
        return super().__new__(cls, name)

    @classmethod
    def of(cls, api: Api, ragas_class: str) -> TargetId:
        return cls(f"{api.value}:{ragas_class}")

    @property
    def api(self) -> Api:
        return Api(self.partition(":")[0])

    @property
    def ragas_class(self) -> str:
        return self.partition(":")[2]
