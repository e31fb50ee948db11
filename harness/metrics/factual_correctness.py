"""Factual correctness: claims of the response checked against the reference, and back.

The judge decomposes the response into claims and checks each against the reference (NLI), and,
outside precision mode, decomposes the reference and checks each of its claims against the
response. With

- TP = response claims the reference supports, FP = response claims it does not support,
- FN = reference claims the response does not support,

the documented definition (Ragas docs, "Factual Correctness") is

- precision P = TP / (TP + FP)                  (denominator: response claims)
- recall    R = TP / (TP + FN)                  (denominator: supported response claims + unsupported
  reference claims; TP counts response claims, FN reference claims, exactly as documented)
- F-beta    F = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP)   (= (1 + b^2) P R / (b^2 P + R))

in exact ``Fraction`` arithmetic (``beta`` is a float: ``Fraction(beta)`` is its exact value). Each
is undefined (None, reason ``zero_claims``) when its denominator is 0; F is 0 when TP = 0 and
some claim exists. ``atomicity`` and ``coverage`` change only the decomposition prompt's examples,
i.e. which claims the judge produces: they are frozen in the case, so they do not enter the formula.

Case format: ``verdicts.factual_correctness`` is one list of claims
``{"statement", "from": "response" | "reference", "verdict"}`` (``verdict``: supported by the
other text). Labels must be 0/1 (booleans allowed); the reference refuses others and gives the
value under Ragas's ``bool(verdict)`` coercion as alternative ``coercion``.

Ragas 0.4.3 (legacy ``ragas.metrics.FactualCorrectness`` and ``ragas.metrics.collections``):
precision and recall divide by ``(tp + fp + 1e-8)`` / ``(tp + fn + 1e-8)``; F-beta uses
``fbeta_score`` (precision or recall 0 when its denominator is 0, F 0.0 when both are 0);
the final score is ``np.round(score, 2)``. Alternatives the classifier recognises:

- ``rounding``: Ragas's float formula without the guard, rounded to 2 decimals as numpy does
  (``rint(x * 100) / 100``, half to even) - the documented value as Ragas reports it;
- ``epsilon``: the formula with the ``1e-8`` guard, rounded, when that differs from ``rounding``: the
  guard pulls an exact half-way value (3/8 = 0.375) below the half, so it rounds down (0.37, not 0.38).

Undefined rows (no claims) come out as 0.0 in Ragas (``empty_as_zero``).

Named variant ``verdicts_returned``: when a per-call script's NLI reply (``judge_calls.factual_correctness
.claim_nli``) returns verdicts for fewer (or more) claims than the side has, Ragas counts TP and FP (or
FN) over the verdicts returned (``sum(reference_response)``, ``sum(~reference_response)``), so a claim
the judge left out counts nowhere; the variant is Ragas's rounded score on those counts. A reply names
its side by ``when.context`` (the reference: response claims; the response: reference claims); an entry
without ``when`` is read only in precision mode, where a single NLI call is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.claim_coverage import reply_verdicts
from ragas_compat.metrics.labels import is_binary_label, ragas_labels
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

KEY = "factual_correctness"
SIDES = ("response", "reference")
RAGAS_GUARD = 1e-8
# The farthest np.round(score, 2) of the guarded formula lies from the exact value: half a hundredth, plus
# what the 1e-8 guard moves a half-way value (classify: farther is not rounding).
ROUNDING_BOUND = 0.005 + 1e-7

# metric name -> (mode, beta, the non-default configuration of the classes: constructor options, named in the target)
MODES: dict[str, tuple[str, float, tuple[tuple[str, object], ...]]] = {
    "factual_correctness_f1": ("f1", 1.0, ()),
    "factual_correctness_precision": ("precision", 1.0, (("mode", "precision"),)),
    "factual_correctness_recall": ("recall", 1.0, (("mode", "recall"),)),
    "factual_correctness_fbeta": ("f1", 0.5, (("beta", 0.5),)),
}


def np_round2(x: float) -> float:
    """``np.round(x, 2)`` for a float64: ``rint(x * 100) / 100`` (Python's ``round`` is half to even
    on the exact float, like ``rint``)."""
    if not math.isfinite(x):
        return x
    return round(x * 100.0) / 100.0


def counts(labelled: Sequence[tuple[str, int]]) -> tuple[int, int, int]:
    """(TP, FP, FN) from ``(from, label)`` pairs."""
    tp = sum(1 for side, v in labelled if side == "response" and v)
    fp = sum(1 for side, v in labelled if side == "response" and not v)
    fn = sum(1 for side, v in labelled if side == "reference" and not v)
    return tp, fp, fn


def exact_score(mode: str, beta: float, tp: int, fp: int, fn: int) -> Fraction | None:
    """The documented value (module docstring); None when its denominator is 0."""
    if mode == "precision":
        return Fraction(tp, tp + fp) if tp + fp else None
    if mode == "recall":
        return Fraction(tp, tp + fn) if tp + fn else None
    b2 = Fraction(beta) ** 2
    den = (1 + b2) * tp + b2 * fn + fp
    return (1 + b2) * tp / den if den else None


def ragas_float(mode: str, beta: float, tp: int, fp: int, fn: int, guard: float) -> float:
    """Ragas's float score before rounding, with ``guard`` (1e-8, or 0.0 for the unguarded formula
    where the denominator is non-zero) in the precision / recall denominators."""
    if mode == "precision":
        den = tp + fp + guard
        return tp / den if den else 0.0
    if mode == "recall":
        den = tp + fn + guard
        return tp / den if den else 0.0
    precision = 0 if tp + fp == 0 else tp / (tp + fp)
    recall = 0 if tp + fn == 0 else tp / (tp + fn)
    if precision == 0 and recall == 0:
        return 0.0
    b2 = beta ** 2
    return (1 + b2) * (precision * recall) / ((b2 * precision) + recall)


def ragas_score(mode: str, beta: float, tp: int, fp: int, fn: int) -> float:
    """What Ragas 0.4.3 returns for these counts: ``np.round(score, 2)`` of its guarded formula."""
    return np_round2(ragas_float(mode, beta, tp, fp, fn, RAGAS_GUARD))


def _claims(case_claims: Sequence[Any], field: str) -> list[tuple[str, object]]:
    if not isinstance(case_claims, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of claims", field=field, value=case_claims)
    out = []
    for i, claim in enumerate(case_claims):
        if not isinstance(claim, Mapping) or "verdict" not in claim or claim.get("from") not in SIDES:
            raise HarnessInputError(f"{field}[{i}]: expected a claim with 'from' (response|reference) and "
                                    f"'verdict', got {claim!r}", field=f"{field}[{i}]", value=claim)
        out.append((claim["from"], claim["verdict"]))
    return out


def factual_outcome(metric: str, mode: str, beta: float, claims: Sequence[Any],
                    field: str = f"verdicts.{KEY}", case: Any = None) -> ReferenceOutcome:
    """The reference outcome of one mode on the case's claims (module docstring)."""
    denominator = {"precision": "response claims (TP + FP)", "recall": "TP + FN",
                   "f1": "(1 + b^2) TP + b^2 FN + FP"}[mode]
    raw = _claims(claims, field)
    if mode == "precision":
        raw = [(side, v) for side, v in raw if side == "response"]  # Ragas never asks for the reference side
    details: dict[str, object] = {
        "mode": mode, "beta": beta,
        "response_labels": tuple(v for side, v in raw if side == "response"),
        "reference_labels": tuple(v for side, v in raw if side == "reference"),
    }
    bad = [(i, v) for i, (_, v) in enumerate(raw) if not is_binary_label(v)]
    if bad:
        _, v = bad[0]
        coerced = ragas_labels([v for _, v in raw])
        alternatives: dict[str, float | Fraction | None] = {}
        if coerced is not None:
            tp, fp, fn = counts([(side, c) for (side, _), c in zip(raw, coerced, strict=True)])
            alternatives["coercion"] = ragas_score(mode, beta, tp, fp, fn)
            details.update(coerced_counts={"tp": tp, "fp": fp, "fn": fn})
        return ReferenceOutcome(metric, None, None,
                                f"non-binary label {v!r} in {field}: labels must be 0 or 1 (booleans allowed)",
                                alternatives, details, denominator)
    tp, fp, fn = counts([(side, int(v)) for side, v in raw])
    value = exact_score(mode, beta, tp, fp, fn)
    details.update(tp=tp, fp=fp, fn=fn)
    alternatives = {}
    if value is not None:
        plain = np_round2(ragas_float(mode, beta, tp, fp, fn, 0.0))
        guarded = ragas_score(mode, beta, tp, fp, fn)
        alternatives["rounding"] = plain
        if guarded != plain:
            alternatives["epsilon"] = guarded
        details["rounding_bound"] = ROUNDING_BOUND
        details["ragas_semantics"] = {
            "rounding": "Ragas rounds its final score to 2 decimals (np.round(score, 2))",
            "epsilon": ("Ragas divides by (TP + FP + 1e-8) / (TP + FN + 1e-8) before rounding to 2 decimals: "
                        "the guard moves an exact half-way value below the half"),
        }
        returned = verdicts_returned_variant(case, mode, beta, raw) if case is not None else None
        if returned is not None:
            alternatives["variant:" + VERDICTS_RETURNED] = returned[0]
            details["variants"] = {VERDICTS_RETURNED: VERDICTS_RETURNED_TEXT}
            details["verdicts_returned"] = returned[1]
    return ReferenceOutcome(metric, value, None if value is not None else "zero_claims", None,
                            alternatives, details, denominator)


VERDICTS_RETURNED = "verdicts_returned"
VERDICTS_RETURNED_TEXT = ("the judge's NLI reply returned verdicts for fewer (or more) claims than the side has; "
                          "Ragas counts TP, FP and FN over the verdicts returned, not over the claims")


def returned_by_side(case: Any, mode: str) -> dict[str, list[object]]:
    """Per side ("response": response claims checked against the reference; "reference": reference claims
    checked against the response), the verdicts a per-call script's ``claim_nli`` reply returns for it
    (module docstring); sides the script does not answer are absent."""
    calls = getattr(case, "judge_calls", {}).get(KEY, {}).get("claim_nli", ())
    found: dict[str, list[object]] = {}
    for entry in calls:
        when = entry.get("when") if isinstance(entry, dict) else None
        reply = entry.get("reply") if isinstance(entry, dict) else entry
        if isinstance(when, dict) and "context" in when:
            side = ("response" if when["context"] == case.reference
                    else "reference" if when["context"] == case.response else None)
        else:
            side = "response" if mode == "precision" and len(calls) == 1 else None
        verdicts = reply_verdicts(reply)
        if side is not None and verdicts is not None and side not in found:
            found[side] = verdicts
    return found


def verdicts_returned_variant(case: Any, mode: str, beta: float,
                              raw: Sequence[tuple[str, object]]) -> tuple[float, dict[str, int]] | None:
    """Ragas's score over the verdicts the scripted replies return, with the counts per side, when a
    reply returns another number of verdicts than its side has claims; else None."""
    returned = returned_by_side(case, mode)
    if mode == "precision":
        returned.pop("reference", None)  # never asked in precision mode
    claims = {side: [v for s, v in raw if s == side] for side in SIDES}
    if not returned or all(len(verdicts) == len(claims[side]) for side, verdicts in returned.items()):
        return None
    labels = {side: [bool(v) for v in returned.get(side, claims[side])] for side in SIDES}
    tp, fp = sum(labels["response"]), sum(1 for v in labels["response"] if not v)
    fn = 0 if mode == "precision" else sum(1 for v in labels["reference"] if not v)
    return ragas_score(mode, beta, tp, fp, fn), {side: len(labels[side]) for side in SIDES}


def _as_given(labels: Sequence[int]) -> float:
    """Not used for pairing (the details hold no flat ``labels``): both APIs coerce with ``bool()``."""
    return sum(labels) / len(labels) if labels else math.nan


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    n_response, n_reference = rng.choice((0, 1, 2, 3, 4, 8)), rng.choice((0, 1, 2, 3, 5, 8))
    claims = [{"statement": f"fuzz response claim {j}", "from": "response",
               "verdict": rng.choice((0, 1, 1, True, False) if rng.random() < 0.2 else (0, 1))}
              for j in range(n_response)]
    claims += [{"statement": f"fuzz reference claim {j}", "from": "reference", "verdict": rng.randint(0, 1)}
               for j in range(n_reference)]
    if claims and rng.random() < 0.05:
        claims[rng.randrange(len(claims))]["verdict"] = 2
    return {"verdicts": {KEY: claims}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    claims = [{"statement": f"Synthetic response claim #{i}", "from": "response", "verdict": v}
              for i, v in enumerate(given.labels, start=1)]
    claims += [{"statement": f"Synthetic reference claim #{i}", "from": "reference", "verdict": v}
               for i, v in enumerate(given.labels, start=1)]
    return {"verdicts": {KEY: claims}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    if reference.refused is not None:
        return ([Quantity("value (coerced, Ragas semantics)", reference.alternatives.get("coercion"))],
                [f"the reference refuses the labels: {reference.refused}"])
    tp, fp, fn = int(d["tp"]), int(d["fp"]), int(d["fn"])  # type: ignore[call-overload]
    mode, beta = d["mode"], d["beta"]
    formula = {"precision": f"P = TP / (TP + FP) = {tp}/{tp + fp}",
               "recall": f"R = TP / (TP + FN) = {tp}/{tp + fn}",
               "f1": f"F(beta={beta}) = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP) with TP={tp}, FN={fn}, FP={fp}"}
    return ([Quantity("value (exact)", reference.number), Quantity("TP", tp), Quantity("FP", fp), Quantity("FN", fn),
             Quantity("Ragas's rounded value", reference.alternatives.get("epsilon",
                                                                          reference.alternatives.get("rounding")))],
            [formula[str(mode)] + ("" if reference.value is not None else ": undefined (zero_claims)"),
             "Ragas: np.round(score, 2), precision/recall denominators + 1e-8"])


def _configure(name: str, mode: str, beta: float) -> Any:
    """Options as data: each mode's metric reads the configurations of its mode (f1: the F1 metric at
    beta 1.0, the F-beta one at any other beta; precision and recall at any beta, which they do not read).
    ``atomicity`` and ``coverage`` change only the decomposition prompt's examples, so not the formula."""
    def configure(options: Mapping[str, Any]) -> Any:
        wanted_mode, wanted_beta = options.get("mode", "f1"), options.get("beta", 1.0)
        if wanted_mode != mode or (mode == "f1" and (wanted_beta == 1.0) != (beta == 1.0)):
            return None
        return lambda case: factual_outcome(name, wanted_mode, float(wanted_beta), case.verdicts[KEY])
    return configure


def _spec(name: str, mode: str, beta: float, options: tuple[tuple[str, object], ...]) -> MetricSpec:
    ragas = RagasTargets(("FactualCorrectness",), ("FactualCorrectness",), "ragas.metrics._factual_correctness",
                         options, judge="factual_correctness")
    denominator = {"precision": "response claims TP + FP", "recall": "TP + FN (supported response claims + "
                   "unsupported reference claims)", "f1": "(1 + b^2) TP + b^2 FN + FP"}[mode]
    return MetricSpec(
        name=name,
        reference_on=f"verdicts.{KEY} (claims from response/reference with verdict)",
        ragas=ragas,
        fields_read=("response", "reference"),
        denominator=denominator,
        undefined_policy=("None ('zero_claims') when the denominator is 0 (no response claim for precision; "
                          "no claim at all for F). Ragas: 0.0 (1e-8 guard / fbeta_score's 0 branch), rounded "
                          "to 2 decimals. Non-0/1 labels are refused (Ragas: bool(verdict))."),
        compute=lambda case, _n=name, _m=mode, _b=beta: factual_outcome(_n, _m, _b, case.verdicts[KEY], case=case),
        requires=(f"verdicts.{KEY}",),
        verdicts=Verdicts(KEY, "claims", "verdict"),
        as_given=_as_given,
        fuzz_inputs=_fuzz,
        explain=ExplainAdapter(
            command=name.replace("_", "-"), takes="labels",
            inputs_help=("LABELS (one 0/1 verdict per response claim; the same labels are used for the "
                         "reference claims)"),
            targets=ragas.ids()[:1], case_inputs=_explain_inputs, quantities=_quantities),
        configure=_configure(name, mode, beta))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(name, *config) for name, config in MODES.items())
