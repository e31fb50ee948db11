"""Criteria votes: AspectCritic (a binary verdict) and SimpleCriteriaScore (an integer score), each a
vote over ``strictness`` samples of one judge prompt.

Documented definition (Ragas's class docstrings and the aspect-critic docs page): the judge is asked
``strictness`` times (self-consistency checks) and the final judgement is the majority vote of the
samples; the constructor makes an even strictness odd (``s + 1``) "to avoid tie in majority vote".
With ``k`` the strictness so made odd and ``v_1 .. v_k`` the first ``k`` samples the judge gives:

- AspectCritic:        the 0/1 verdict that holds a strict majority of the samples;
- SimpleCriteriaScore: the score that occurs more often than every other score (the mode).

No arithmetic beyond counting: the value is the winning sample as an exact ``Fraction``. Undefined
(None) when there is no sample (reason ``no_votes``) or no unique winner (reason ``tied_votes``: two
scores equally often, or an even number of binary samples split evenly when the case holds fewer
samples than ``k``; then the vote is over the samples given, as Ragas's ``Counter`` would count the
replies it got). A vote that is not 0/1 (AspectCritic) or not an integer (SimpleCriteriaScore;
booleans and numeric strings refused) is refused; Ragas parses it into its pydantic ``int`` field
(``"3"`` -> 3, ``2`` stays 2) and returns it as is.

Case format: ``verdicts.aspect_critic`` is a list of ``{"verdict": 0 | 1}`` and
``verdicts.simple_criteria`` a list of ``{"score": int}``, one per strictness sample in the order the
judge gave them. Each configured strictness (1, 2, 3) is its own metric and probe target
(``legacy:AspectCritic[strictness=3]``) reading the first ``k`` samples.

Ragas 0.4.3 (legacy ``ragas.metrics.AspectCritic`` / ``SimpleCriteriaScore``): ``_ascore`` asks its
prompt once with ``generate`` (``n=1``) whatever the strictness, and ``_compute_score([reply])`` takes
the most common of that one reply: the score is the first sample's vote. Strictness is stored
(made odd) and never used: alternative ``variant:first_sample`` (upstream issue #817 reported the
same for AspectCritique in 2024). There is no AspectCritic or SimpleCriteriaScore class in
``ragas.metrics.collections`` at 0.4.3 (its ``__init__`` exports none; the nearest are the rubric
classes), so both are legacy-only, although importing either from ``ragas.metrics`` warns
"deprecated ... Example: from ragas.metrics.collections import AspectCritic", an import that fails.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.labels import is_binary_label
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

ASPECT_CRITIC = "aspect_critic"
SIMPLE_CRITERIA = "simple_criteria"
STRICTNESS = (1, 2, 3)
# (verdict key, Ragas class, the sample's field, what a sample is)
FAMILY: dict[str, tuple[str, str, str]] = {
    ASPECT_CRITIC: ("AspectCritic", "verdict", "0/1 verdict"),
    SIMPLE_CRITERIA: ("SimpleCriteriaScore", "score", "integer score"),
}
MODULES = {ASPECT_CRITIC: "ragas.metrics._aspect_critic", SIMPLE_CRITERIA: "ragas.metrics._simple_criteria"}
# the criterion the AspectCritic / SimpleCriteriaScore instances judge (their prompt's instruction names it;
# the frozen votes stand for the judge's answers, so the reference does not read it)
CRITERIA_DEFINITION = "Is the response supported by the retrieved contexts and free of errors?"
FIELDS_BEFORE_0_2_6 = ("user_input", "response", "retrieved_contexts")  # AspectCritic's single-turn reads below 0.2.6


def odd_strictness(strictness: int) -> int:
    """The number of samples Ragas's constructor settles on: ``s`` when odd, ``s + 1`` when even."""
    return strictness if strictness % 2 else strictness + 1


def metric_name(key: str, strictness: int) -> str:
    return key if strictness == 1 else f"{key}_strictness_{strictness}"


def samples(key: str, items: Any, field: str | None = None) -> list[object]:
    """The votes of ``verdicts.<key>`` as given (``{"verdict": v}`` / ``{"score": v}`` objects)."""
    field = field or f"verdicts.{key}"
    sample_key = FAMILY[key][1]
    if not isinstance(items, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of {{{sample_key!r}: vote}} samples",
                                field=field, value=items)
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or sample_key not in item:
            raise HarnessInputError(f"{field}[{i}]: expected {{{sample_key!r}: vote}}, got {item!r}",
                                    field=f"{field}[{i}]", value=item)
        out.append(item[sample_key])
    return out


def is_valid_vote(key: str, vote: object) -> bool:
    if key == ASPECT_CRITIC:
        return is_binary_label(vote)
    return type(vote) is int


def majority(votes: Sequence[int]) -> tuple[int | None, str | None]:
    """(the vote that occurs more often than every other, None) or (None, reason)."""
    if not votes:
        return None, "no_votes"
    ranked = Counter(votes).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, "tied_votes"
    return ranked[0][0], None


def votes_outcome(metric: str, key: str, strictness: int, items: Any) -> ReferenceOutcome:
    """The reference outcome of one configured strictness on the case's samples (module docstring)."""
    k = odd_strictness(strictness)
    given = samples(key, items)
    used = given[:k]
    denominator = f"majority vote over k = {k} samples (strictness {strictness})"
    details: dict[str, object] = {"strictness": strictness, "samples_used": k, "votes": tuple(used),
                                  "votes_given": len(given)}
    bad = [(i, v) for i, v in enumerate(used) if not is_valid_vote(key, v)]
    if bad:
        i, v = bad[0]
        return ReferenceOutcome(metric, None, None,
                                f"verdicts.{key}[{i}] = {v!r} is not a {FAMILY[key][2]}", {}, details, denominator)
    winner, reason = majority([int(v) for v in used])  # type: ignore[call-overload]
    details["counts"] = dict(Counter(int(v) for v in used))  # type: ignore[call-overload]
    alternatives: dict[str, float | Fraction | None] = {}
    if used:
        first = int(used[0])  # type: ignore[call-overload]
        if winner is None or first != winner:
            alternatives["variant:first_sample"] = Fraction(first)
        details["variants"] = {"first_sample": (
            f"Ragas 0.4.3 asks the judge once (n=1) whatever the strictness ({strictness}) and returns "
            f"that one sample's vote ({first}), not the majority of {k}")}
    value = None if winner is None else Fraction(winner)
    return ReferenceOutcome(metric, value, reason, None, alternatives, details, denominator)


def _as_given(labels: Sequence[int]) -> float:
    """Not used for pairing (legacy-only metrics)."""
    return float(labels[0]) if labels else float("nan")


def _fuzz(key: str) -> Any:
    def fuzz(draw: FuzzDraw) -> dict[str, Any]:
        rng = draw.rng
        # at least one sample: with none the scripted judge has nothing to answer (a harness limit, shown by
        # the bundled case criteria-no-votes), which fuzzing would only repeat
        n = rng.choice((1, 1, 2, 3, 3, 3, 4, 5))
        if key == ASPECT_CRITIC:
            votes: list[object] = [rng.choice((0, 1, True, False) if rng.random() < 0.1 else (0, 1))
                                   for _ in range(n)]
        else:
            pool = rng.choice(((1, 2), (1, 2, 3), (0, 1, 2, 3, 4, 5), (3,)))
            votes = [rng.choice(pool) for _ in range(n)]
        if votes and rng.random() < 0.04:
            votes[rng.randrange(len(votes))] = 2 if key == ASPECT_CRITIC else "3"
        return {"verdicts": {key: [{FAMILY[key][1]: v} for v in votes]}}
    return fuzz


def _explain_inputs(key: str) -> Any:
    def case_inputs(given: ExplainInput) -> dict[str, Any]:
        """LABELS: one vote per strictness sample, in the judge's order."""
        return {"verdicts": {key: [{FAMILY[key][1]: v} for v in given.labels]}}
    return case_inputs


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    if reference.refused is not None:
        return [Quantity("value", None, reference.refused)], [f"the reference refuses the votes: {reference.refused}"]
    votes = d["votes"]
    first = reference.alternatives.get("variant:first_sample")
    ragas = first if first is not None else reference.number
    return ([Quantity("vote (exact)", reference.number, reference.undefined_reason or ""),
             Quantity("samples used k", int(d["samples_used"])),  # type: ignore[call-overload]
             Quantity("Ragas 0.4.3 (first sample)", ragas)],
            [f"majority of {list(votes)} (counts {d.get('counts')})"  # type: ignore[call-overload]
             + ("" if reference.value is not None else f": undefined ({reference.undefined_reason})"),
             f"Ragas: strictness {d['strictness']} made odd ({d['samples_used']}), but one sample asked (n=1)"])


def _configure(key: str, strictness: int) -> Any:
    """Options as data: the metric of ``strictness`` reads a configuration of that strictness; the
    strictness-1 metric also reads every strictness no built-in metric has (5, 7 ...)."""
    def configure(options: Mapping[str, Any]) -> Any:
        wanted = options.get("strictness", 1)
        if wanted != strictness and not (strictness == 1 and wanted not in STRICTNESS):
            return None
        return lambda case: votes_outcome(metric_name(key, strictness), key, wanted, case.verdicts[key])
    return configure


def _spec(key: str, strictness: int) -> MetricSpec:
    name = metric_name(key, strictness)
    # legacy only (no collections class at 0.4.3); built with the criterion and strictness 1 unless the
    # configuration names another strictness
    ragas = RagasTargets((FAMILY[key][0],), (), MODULES[key], (("strictness", strictness),) if strictness != 1 else (),
                         settings=(("name", key), ("definition", CRITERIA_DEFINITION), ("strictness", 1)),
                         judge="votes",
                         # single-turn AspectCritic reads the reference from 0.2.6 on (ragas#1666); before it
                         # never does (0.2.2-0.2.5's column filter drops it): not passed, not recorded there
                         class_fields=((f"legacy:{FAMILY[key][0]}", FIELDS_BEFORE_0_2_6, "0.2.6"),)
                         if key == ASPECT_CRITIC else ())
    k = odd_strictness(strictness)
    return MetricSpec(
        name=name,
        reference_on=f"verdicts.{key} (one {FAMILY[key][2]} per strictness sample)",
        ragas=ragas,
        fields_read=("user_input", "response", "retrieved_contexts", "reference"),
        denominator=f"majority vote over the first k = {k} samples (strictness {strictness}, made odd)",
        undefined_policy=("None ('no_votes') with no sample, ('tied_votes') with no unique majority. "
                          "Ragas 0.4.3 asks once and returns the first sample's vote (or raises: no reply)."),
        compute=lambda case, _n=name, _k=key, _s=strictness: votes_outcome(_n, _k, _s, case.verdicts[_k]),
        requires=(f"verdicts.{key}",),
        verdicts=Verdicts(key, "claims", FAMILY[key][1]),
        as_given=_as_given,
        fuzz_inputs=_fuzz(key),
        explain=ExplainAdapter(
            command=name.replace("_", "-"), takes="labels",
            inputs_help=f"LABELS (one {FAMILY[key][2]} per strictness sample, in the judge's order)",
            targets=ragas.ids(), case_inputs=_explain_inputs(key), quantities=_quantities),
        configure=_configure(key, strictness))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(key, s) for key in FAMILY for s in STRICTNESS)
