"""Classify one (case, metric, Ragas target) pair: Ragas's value against the reference outcome.

Every pair gets exactly one ``Classification`` (ragas_compat.vocabulary), with an explanation. The checks run in a fixed
order and each one recomputes the semantics it names (the epsilon value, the
de-duplicated value, the truthiness-coerced value) instead of relying on a tolerance;
the only tolerances are those of ``rounding``: ``ROUNDING_ULPS`` units in the last place of the
exact value, or the absolute bound the metric states (``ROUNDING_BOUND``: FactualCorrectness's
two decimals; ``FLOAT_TOLERANCE``: the absolute error of a float evaluation, a cosine's or 1 - d/n's,
which does not shrink with a result near 0). A recomputed float evaluation
bit-equal to Ragas but farther than that from the exact value (an overflow to inf, an underflow
to 0.0 of a value that is not 0) is a divergence, never rounding.

A value that is not a number (a label, a ranking: ``ragas_compat.values``) on either side is compared
exactly (``compare_exactly``): the same label or the same list in the same order is identical, anything
else a divergence; none of the numeric semantics applies to it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from fractions import Fraction

from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.roots import SignedRoot
from ragas_compat.values import NON_NUMERIC, Label, RagasError, RagasValue, Ranking, short_fraction_text
from ragas_compat.vocabulary import Classification

CLASSIFICATIONS: tuple[Classification, ...] = tuple(Classification)  # in the order checked

# A difference of at most this many units in the last place, with no semantic
# explanation, is attributed to float summation order (e.g. Python 3.12's compensated sum()).
ROUNDING_ULPS = 4


# Semantics Ragas is known to apply, checked (in this order) by recomputing the value under them.
RECOMPUTED_SEMANTICS: dict[str, str] = {
    "dedup": "Ragas turns IDs into str() and de-duplicates them into sets",
    "coercion": "Ragas coerced the input before scoring it (see the received inputs)",
    # only for dataset means: a single undefined row scored 0.0 is caught before (value None)
    "empty_as_zero": "Ragas scores rows the reference leaves undefined as 0.0 and keeps them in the mean",
    # a metric whose Ragas class rounds its final score (FactualCorrectness: np.round(score, 2))
    "rounding": "Ragas rounds its final score",
}


def _semantics(reference: ReferenceOutcome, name: str, default: str) -> str:
    """The metric's own wording of a known semantics (``details["ragas_semantics"][name]``), else ``default``."""
    own = reference.details.get("ragas_semantics")
    return own.get(name, default) if isinstance(own, dict) else default


# A metric whose Ragas class rounds its score to a fixed number of decimals states the largest distance
# that rounding puts between its score and the exact value (details["rounding_bound"]: 0.005 and a hair
# for np.round(score, 2)); without it, and without FLOAT_TOLERANCE, rounding means ROUNDING_ULPS.
ROUNDING_BOUND = "rounding_bound"

# A metric whose Ragas side evaluates its value in doubles with an absolute error set by its operands, not
# by its result (cosines of unit vectors; 1 - d/n, where the ulps of 1.0 bound the error), states that
# error as an absolute tolerance (details["float_tolerance"], derived in the metric): within it of the exact
# value is rounding, even where a result near 0 (0.75 F + 0.25 cos cancelling, 1 - 19/20) puts the float
# many ulps away. Such tolerances are small multiples of 2^-52, so a lost half (0.0 for 1/2) stays a divergence.
FLOAT_TOLERANCE = "float_tolerance"

# Named variants of a metric's definition (Ragas's own preprocessing): alternatives keyed
# "variant:<name>", described in details["variants"][<name>]; a match is within ROUNDING_ULPS.
VARIANT_PREFIX = "variant:"

# The variants that are a score the class returns without asking its judge (details["never_asked"]: their
# names; a rating metric's fixed 0.0 for a blank text): checked before undefined_nan and empty_as_zero, so an
# undefined row whose 0.0 comes from that shortcut is explained by the shortcut, not read as "undefined scored 0".
NEVER_ASKED = "never_asked"


def matching_variant(ragas: object, reference: ReferenceOutcome, names: tuple[str, ...] | None = None) -> str | None:
    """The name of the first named variant (of ``names``, when given) whose recomputed value is within
    ``ROUNDING_ULPS`` of Ragas's float (None when Ragas raised or none matches)."""
    if not isinstance(ragas, float):
        return None
    candidates = [(key.removeprefix(VARIANT_PREFIX), value) for key, value in reference.alternatives.items()
                  if key.startswith(VARIANT_PREFIX)
                  and (names is None or key.removeprefix(VARIANT_PREFIX) in names)]
    if math.isnan(ragas):  # a variant that is itself NaN (e.g. a zero vector it reads) matches NaN
        return next((name for name, value in candidates if isinstance(value, float) and math.isnan(value)), None)
    for name, value in candidates:
        if value is not None and ulps_between(ragas, float(value)) <= ROUNDING_ULPS:
            return name
    return None


def never_asked_variants(reference: ReferenceOutcome) -> tuple[str, ...]:
    """The variants the metric names as scores given without asking the judge (``details["never_asked"]``)."""
    names = reference.details.get(NEVER_ASKED)
    return tuple(str(n) for n in names) if isinstance(names, (list, tuple)) else ()


def variant_description(reference: ReferenceOutcome, name: str) -> str:
    described = reference.details.get("variants")
    return described.get(name, name) if isinstance(described, dict) else name


@dataclass(frozen=True)
class Diagnosis:
    """A row's classification and the sentence that explains it (with the numbers)."""

    name: Classification
    explanation: str


def ordered_bits(x: float) -> int:
    """Map a finite double to an integer so that adjacent doubles differ by 1."""
    (bits,) = struct.unpack("<q", struct.pack("<d", x))
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def ulps_between(a: float | Label | Ranking, b: float | Label | Ranking) -> int:
    """Number of representable doubles between ``a`` and ``b`` (0 when bit-equal; a label or a ranking on
    either side: 0 when equal, else infinitely far)."""
    if isinstance(a, NON_NUMERIC) or isinstance(b, NON_NUMERIC):
        return 0 if a == b else 2**63
    if not (math.isfinite(a) and math.isfinite(b)):
        return 0 if a == b else 2**63
    return abs(ordered_bits(a) - ordered_bits(b))


def same_float(a: float | Label | Ranking, b: float | Label | Ranking) -> bool:
    """Bit-equal, with 0.0 and -0.0 kept apart and NaN equal to NaN; a label or a ranking (either side) is
    the same only as an equal one (never as a number)."""
    if isinstance(a, NON_NUMERIC) or isinstance(b, NON_NUMERIC):
        return a == b
    return struct.pack("<d", a) == struct.pack("<d", b)


# A metric whose exact value is irrational but the signed square root of a rational (a cosine) states that root
# (details["exact_root"], ragas_compat.metrics.roots); its value field then holds an approximation, and the
# double nearest the value and a float's distance from it are decided against the root, exactly.
EXACT_ROOT = "exact_root"


def reference_double(reference: ReferenceOutcome) -> float:
    """The double nearest the reference value: from its stated exact root when it has one, else its Fraction's."""
    root = SignedRoot.from_detail(reference.details.get(EXACT_ROOT))
    return root.nearest_double() if root is not None else float(reference.value)  # type: ignore[arg-type]


def within_of_reference(value: float, bound: Fraction, reference: ReferenceOutcome) -> bool:
    """|value - the reference value| <= bound, decided exactly (against the stated root when there is one)."""
    root = SignedRoot.from_detail(reference.details.get(EXACT_ROOT))
    if root is not None:
        return root.within(Fraction(value) - bound, Fraction(value) + bound)
    return abs(Fraction(value) - Fraction(reference.value)) <= bound  # type: ignore[arg-type]


def rounding_excess(value: float, exact: Fraction, reference: ReferenceOutcome) -> str | None:
    """None when ``value`` is within what rounding can do to the exact value (``ROUNDING_ULPS`` ulps,
    or the metric's stated ``ROUNDING_BOUND`` / ``FLOAT_TOLERANCE``); else why it is not: a value that
    is not 0 read as 0.0 (underflow), an infinite or NaN float (overflow), or a distance beyond the bound.
    An exact value stated as a root (``EXACT_ROOT``) is compared as the root, not as ``exact``'s digits."""
    as_float = reference_double(reference) if reference.value is not None else float(exact)
    if not math.isfinite(value):
        return f"{value!r} is not a finite number (an overflow), the exact value is {short_fraction_text(exact)}"
    distance = ulps_between(value, as_float)
    if distance <= ROUNDING_ULPS and (value != 0.0 or exact == 0):
        return None
    bounds = [b for b in (reference.details.get(ROUNDING_BOUND), reference.details.get(FLOAT_TOLERANCE))
              if isinstance(b, float)]
    gap = abs(Fraction(value) - exact)
    if reference.value is not None and exact == reference.value:
        if any(within_of_reference(value, Fraction(bound), reference) for bound in bounds):
            return None
    elif any(gap <= Fraction(bound) for bound in bounds):
        return None
    stated = " or ".join(f"{b:.3g}" for b in bounds)
    if value == 0.0:
        return (f"0.0 where the exact value is {short_fraction_text(exact)}: an underflow to zero (or a lost term), "
                f"beyond the rounding bound of {ROUNDING_ULPS} ulps" + (f" and the metric's stated {stated}" if stated else ""))
    return (f"{float(gap):.3g} ({distance} ulps) from the exact {short_fraction_text(exact)}, beyond the rounding bound "
            f"of {ROUNDING_ULPS} ulps" + (f" and the metric's stated {stated}" if stated else ""))


def _as_float(value: float | Fraction | None) -> float | None:
    return None if value is None else float(value)


def _kind(value: object) -> str:
    return "a label" if isinstance(value, Label) else "a ranking" if isinstance(value, Ranking) else "a number"


def compare_exactly(ragas: float | Label | Ranking, reference: ReferenceOutcome) -> Diagnosis:
    """A label or a ranking (on either side) against the reference: identical only when it is the same
    kind and equal (a label's text case-sensitively; a ranking item for item, in order); else a divergence,
    which says how they differ (the kind, a label's case, a ranking's order or length)."""
    if reference.refused is not None:
        return Diagnosis(Classification.DIVERGENCE,
                         f"the reference refuses the judge's output ({reference.refused}); Ragas returned {ragas!r}")
    expected = reference.value
    if expected is None:
        return Diagnosis(Classification.DIVERGENCE,
                         f"reference undefined ({reference.undefined_reason or 'undefined'}) but Ragas returned {ragas!r}")
    if _kind(ragas) != _kind(expected):
        return Diagnosis(Classification.DIVERGENCE, f"Ragas returned {_kind(ragas)}, {ragas!r}, where the reference "
                         f"is {_kind(expected)}, {expected!r}: values of different kinds are never equal")
    if ragas == expected:
        return Diagnosis(Classification.IDENTICAL, f"the same {_kind(ragas).removeprefix('a ')} as the reference: "
                         f"{ragas!r}" + (", item for item in order" if isinstance(ragas, Ranking) else ""))
    if isinstance(ragas, Label) and isinstance(expected, Label) and ragas.text.casefold() == expected.text.casefold():
        how = "differs only in case (labels are compared case-sensitively, as Ragas's allowed_values are)"
    elif isinstance(ragas, Ranking) and isinstance(expected, Ranking) and sorted(ragas.items) == sorted(expected.items):
        how = "holds the same items in another order (a ranking is compared in order)"
    elif isinstance(ragas, Ranking) and isinstance(expected, Ranking) and len(ragas.items) != len(expected.items):
        how = f"has {len(ragas.items)} items, the reference {len(expected.items)}"
    else:
        how = "is another value"
    return Diagnosis(Classification.DIVERGENCE, f"Ragas {ragas!r} against reference {expected!r}: it {how}")


def classify(ragas: RagasValue, reference: ReferenceOutcome) -> Diagnosis:
    """Classify Ragas's value against the reference outcome (see module docstring)."""
    if isinstance(ragas, RagasError):
        if ragas.raised_by_harness:
            return Diagnosis(Classification.ERROR,
                             f"the harness raised {ragas.type} driving Ragas (not an error of Ragas): {ragas.message}")
        if ragas.not_in_this_ragas:
            return Diagnosis(Classification.ERROR, f"not scored ({ragas.type}): {ragas.message}")
        return Diagnosis(Classification.ERROR, f"Ragas raised {ragas.type}: {ragas.message}")
    if isinstance(ragas, NON_NUMERIC) or isinstance(reference.value, NON_NUMERIC):
        return compare_exactly(ragas, reference)

    if reference.refused is not None:
        coerced = _as_float(reference.alternatives.get("coercion"))
        if (coerced is None and math.isnan(ragas)) or (
            coerced is not None and same_float(ragas, coerced)
        ):
            return Diagnosis(Classification.COERCION,
                f"the reference refuses the input ({reference.refused}); Ragas accepted it "
                "and coerced it by truthiness",
            )
        return Diagnosis(Classification.DIVERGENCE,
            f"the reference refuses the input ({reference.refused}); Ragas returned {ragas!r}, "
            f"which is not the truthiness-coerced value {coerced!r}",
        )

    if reference.value is None:
        reason = reference.undefined_reason or "undefined"
        shortcut = matching_variant(ragas, reference, never_asked_variants(reference)) \
            if never_asked_variants(reference) else None
        if shortcut is not None:  # before NaN and 0.0: the judge's replies were never asked, the shortcut is the cause
            return Diagnosis(Classification.VARIANT,
                             f"reference undefined ({reason}) on the judge's replies, which Ragas never asked for: "
                             f"{variant_description(reference, shortcut)}: recomputed "
                             f"{float(reference.alternatives[VARIANT_PREFIX + shortcut])!r}, "  # type: ignore[arg-type]
                             f"Ragas {ragas!r}")
        if math.isnan(ragas):
            return Diagnosis(Classification.UNDEFINED_NAN, f"reference undefined ({reason}); Ragas encodes it as NaN"
            )
        if ragas == 0.0:
            return Diagnosis(Classification.EMPTY_AS_ZERO,
                f"reference undefined ({reason}); Ragas returns 0.0, indistinguishable from a real zero",
            )
        variant = matching_variant(ragas, reference)
        if variant is not None:  # e.g. AnswerCorrectness: no statement -> factuality 1.0
            return Diagnosis(Classification.VARIANT,
                             f"reference undefined ({reason}); {variant_description(reference, variant)}: "
                             f"recomputed {float(reference.alternatives[VARIANT_PREFIX + variant])!r}, "  # type: ignore[arg-type]
                             f"Ragas {ragas!r}")
        return Diagnosis(Classification.DIVERGENCE, f"reference undefined ({reason}) but Ragas returned {ragas!r}"
        )

    exact = reference_double(reference)
    received = reference.details.get("ragas_received")
    coerced = _as_float(reference.alternatives.get("coercion"))
    if received and coerced is not None and same_float(ragas, coerced):
        # identical means identical semantics: Ragas scored other inputs than the case gave
        coincidence = " (equal to the reference value only by coincidence)" if same_float(ragas, exact) else ""
        return Diagnosis(Classification.COERCION,
                         f"Ragas's sample coerced the inputs before scoring ({', '.join(sorted(received))} "
                         f"arrived as {received}); recomputed on what it received: {coerced!r}, bit-equal to "
                         f"Ragas{coincidence}, against {short_fraction_text(reference.value)}")
    if math.isnan(ragas):
        nan_variant = matching_variant(ragas, reference)
        if nan_variant is not None:  # e.g. legacy ResponseRelevancy embeds an empty question whose vector is zero
            return Diagnosis(Classification.VARIANT,
                             f"{variant_description(reference, nan_variant)}: recomputed NaN, as Ragas, against the "
                             f"textbook {short_fraction_text(reference.value)}")
        return Diagnosis(Classification.DIVERGENCE, f"Ragas returned NaN where the reference is defined ({short_fraction_text(reference.value)})"
        )
    if same_float(ragas, exact):
        return Diagnosis(Classification.IDENTICAL, "bit-equal to the reference value")

    epsilon_value = _as_float(reference.alternatives.get("epsilon"))
    if epsilon_value is not None and not same_float(epsilon_value, exact):
        distance = ulps_between(ragas, epsilon_value)
        if distance <= ROUNDING_ULPS:
            closeness = "bit-equal to Ragas" if distance == 0 else (
                f"{distance} ulp(s) from Ragas's {ragas!r} (summation order)")
            return Diagnosis(Classification.EPSILON,
                f"{_semantics(reference, 'epsilon', 'Ragas divides by (hits + 1e-10)')}; recomputing that gives {epsilon_value!r}, "
                f"{closeness}, against the exact {short_fraction_text(reference.value)}",
            )

    beyond_rounding = None
    for name, semantics in RECOMPUTED_SEMANTICS.items():
        alternative = _as_float(reference.alternatives.get(name))
        if alternative is not None and same_float(ragas, alternative):
            if name == "rounding":
                beyond_rounding = rounding_excess(alternative, Fraction(reference.value), reference)
                if beyond_rounding is not None:
                    continue
            return Diagnosis(
                Classification(name), f"{_semantics(reference, name, semantics)}: recomputed {alternative!r}, "
                f"bit-equal to Ragas, against {short_fraction_text(reference.value)}"
            )

    distance = ulps_between(ragas, exact)
    if distance <= ROUNDING_ULPS and rounding_excess(ragas, Fraction(reference.value), reference) is None:
        return Diagnosis(Classification.ROUNDING,
            f"{distance} ulp(s) from the exact {short_fraction_text(reference.value)}: float summation order, not meaning",
        )
    tolerance = reference.details.get(FLOAT_TOLERANCE)
    if isinstance(tolerance, float) and within_of_reference(ragas, Fraction(tolerance), reference):
        return Diagnosis(Classification.ROUNDING,
                         f"{abs(ragas - exact):.3g} from the exact {short_fraction_text(reference.value)}, within the metric's stated "
                         f"absolute tolerance {tolerance:.3g} for its float evaluation (its rounding error is set "
                         f"by the operands and does not shrink with a result near 0)")
    variant = matching_variant(ragas, reference)
    if variant is not None:
        value = float(reference.alternatives[VARIANT_PREFIX + variant])  # type: ignore[arg-type]
        closeness = "bit-equal to Ragas" if same_float(ragas, value) else (
            f"{ulps_between(ragas, value)} ulp(s) from Ragas's {ragas!r}")
        return Diagnosis(Classification.VARIANT,
                         f"{variant_description(reference, variant)}: recomputed {value!r}, {closeness}, "
                         f"against the textbook {short_fraction_text(reference.value)} ({exact!r})")
    if beyond_rounding is not None:
        return Diagnosis(Classification.DIVERGENCE,
                         f"Ragas {ragas!r} equals the recomputed float evaluation, but that is not rounding: "
                         f"{beyond_rounding}")
    return Diagnosis(Classification.DIVERGENCE, f"Ragas {ragas!r} against reference {short_fraction_text(reference.value)} ({exact!r})"
    )
