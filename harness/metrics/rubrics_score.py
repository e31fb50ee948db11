"""Rubric scores: the judge's score of the response on a rubric's scale (RubricsScore with one rubric
for every sample, InstanceRubrics with the case's own rubric).

Documented definition (Ragas docs "Rubrics based criteria scoring"; collections docstrings: "a score
(1-5) with detailed feedback"): the judge reads the rubric, whose levels are ``scoreN_description``
entries, and gives one of its levels N. The value is that level, an exact integer (``Fraction``):

    value = s   when s is a level of the rubric (the N of some ``scoreN_description``)

Scale: RubricsScore's default reference-free rubric (levels 1..5, the class's default in both APIs);
InstanceRubrics: the levels of the case's ``rubrics``. Undefined (None, reason ``no_rubric_levels``)
when the rubric has no level (an empty ``rubrics``), whatever the score. Otherwise a score that
is not an integer (booleans and numeric strings refused), or not a level of the rubric (a 7 on a
1..5 rubric), is refused (``details["error_reason"]``: ``score_not_integer`` /
``score_out_of_scale``): it is no point of the scale.

Case format: ``verdicts.rubrics_score`` / ``verdicts.instance_rubrics`` hold one ``{"score": s}`` (the
judge's one reply); InstanceRubrics reads the case key ``rubrics`` (``{"score1_description": text,
...}``), which Ragas receives as the sample's ``rubrics``.

Ragas 0.4.3: legacy ``RubricsScore`` / ``InstanceRubrics`` return the reply's ``score`` (a pydantic
``int``) unchanged, collections ``DomainSpecificRubrics`` / ``InstanceSpecificRubrics`` return
``float(score)``. Neither checks the score against the rubric (the collections classes declare
``allowed_values=(1.0, 5.0)`` but ``ascore`` never validates it), so an out-of-scale score comes back
as the score. With an empty rubric the legacy InstanceRubrics still asks the judge and returns its
score; the collections class raises ``ValueError`` ("rubrics must be provided").

Ragas 0.2.0-0.2.5 (targets of those releases only, ``RagasTargets.releases``; renamed in 0.2.6, ragas#1666):
legacy ``RubricsScoreWithReference`` / ``RubricsScoreWithoutReference`` score on their own default 1..5
rubrics (the reference-free one later RubricsScore's default) with the contexts folded into the question,
and return the reply's score as given. ``InstanceRubricsWithReference`` /
``InstanceRubricsScoreWithoutReference`` read ``rubrics`` from the sample, whose field is still called
``rubric`` there: given the case's rubric as ``rubric`` (the probe passes it under the name the release's
sample declares, ``sample_names``), the sample keeps it but the class's column filter (0.2.2 on) drops it, and
``row["rubrics"]`` raises ``KeyError: 'rubrics'`` on every single-turn sample (given as ``rubrics``, as those
releases' docs show, the sample drops it silently: the same KeyError).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

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
    Verdicts,
)

RUBRICS_SCORE = "rubrics_score"
INSTANCE_RUBRICS = "instance_rubrics"
LEVEL_KEY = re.compile(r"score(0|[1-9][0-9]*)_description")
DEFAULT_LEVELS = (1, 2, 3, 4, 5)  # RubricsScore's default rubric: score1_description .. score5_description
FIELDS = ("user_input", "response", "retrieved_contexts", "reference")


def rubric_levels(rubric: Mapping[str, Any], field: str = "rubrics") -> tuple[int, ...]:
    """The levels N of a rubric's ``scoreN_description`` keys, ascending."""
    levels = []
    for key in rubric:
        match = LEVEL_KEY.fullmatch(key)
        if match is None:
            raise HarnessInputError(f"{field}.{key}: a rubric key is scoreN_description (score1_description ...)",
                                    field=f"{field}.{key}", value=key)
        levels.append(int(match.group(1)))
    return tuple(sorted(levels))


def judge_score(key: str, items: Any) -> object:
    """The one ``{"score": s}`` of ``verdicts.<key>``, as given."""
    field = f"verdicts.{key}"
    if not isinstance(items, (list, tuple)) or len(items) != 1:
        raise HarnessInputError(f"{field}: expected one {{'score': s}} (the judge's one reply)", field=field, value=items)
    item = items[0]
    if not isinstance(item, Mapping) or "score" not in item:
        raise HarnessInputError(f"{field}[0]: expected {{'score': s}}, got {item!r}", field=f"{field}[0]", value=item)
    return item["score"]


def rubric_outcome(metric: str, score: object, levels: Sequence[int]) -> ReferenceOutcome:
    """The reference outcome of one judge score on a rubric with ``levels`` (module docstring)."""
    scale = f"{min(levels)}..{max(levels)}" if levels else "none"
    denominator = f"none: the judge's level on the rubric's scale ({scale})"
    details: dict[str, object] = {"score": score, "levels": tuple(levels)}
    if not levels:
        return ReferenceOutcome(metric, None, "no_rubric_levels", None, {}, details, denominator)
    if type(score) is not int:
        details["error_reason"] = "score_not_integer"
        return ReferenceOutcome(metric, None, None, f"the judge's score {score!r} is not an integer",
                                {}, details, denominator)
    if score not in levels:
        details["error_reason"] = "score_out_of_scale"
        return ReferenceOutcome(metric, None, None,
                                f"the judge's score {score} is not a level of the rubric ({', '.join(map(str, levels))})",
                                {}, details, denominator)
    return ReferenceOutcome(metric, Fraction(score), None, None, {}, details, denominator)


def _rubric_of(case: Case) -> Mapping[str, Any]:
    if case.rubrics is None:
        raise HarnessInputError(f"case {case.id!r}: instance_rubrics needs the case key 'rubrics'",
                                field="rubrics", value=None)
    return case.rubrics


def _compute(metric: str) -> Any:
    def compute(case: Case) -> ReferenceOutcome:
        score = judge_score(metric, case.verdicts[metric])
        levels = DEFAULT_LEVELS if metric == RUBRICS_SCORE else rubric_levels(_rubric_of(case))
        return rubric_outcome(metric, score, levels)
    return compute


def _as_given(labels: Sequence[int]) -> float:
    """Both APIs return the judge's score as given."""
    return float(labels[0]) if labels else float("nan")


def _fuzz(metric: str) -> Any:
    def fuzz(draw: FuzzDraw) -> dict[str, Any]:
        rng = draw.rng
        out: dict[str, Any] = {}
        levels: Sequence[int] = DEFAULT_LEVELS
        if metric == INSTANCE_RUBRICS:
            levels = rng.choice(((1, 2, 3, 4, 5), (0, 1), (1, 2, 3), (), (0, 5, 10)))
            out["rubrics"] = {f"score{n}_description": f"fuzz level {n}" for n in levels}
        roll = rng.random()
        if roll < 0.1:
            score: object = rng.choice((0, 6, 7, -1, 11))
        elif roll < 0.13:
            score = rng.choice((True, "4"))
        else:
            score = rng.choice(tuple(levels) or (1, 3))
        out["verdicts"] = {metric: [{"score": score}]}
        return out
    return fuzz


def _explain_inputs(metric: str) -> Any:
    def case_inputs(given: ExplainInput) -> dict[str, Any]:
        """LABELS: the judge's score (the first label); InstanceRubrics gets a 1..5 rubric."""
        out: dict[str, Any] = {"verdicts": {metric: [{"score": given.labels[0] if given.labels else 1}]}}
        if metric == INSTANCE_RUBRICS:
            out["rubrics"] = {f"score{n}_description": f"Synthetic level {n}" for n in DEFAULT_LEVELS}
        return out
    return case_inputs


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    levels = d["levels"]
    note = reference.refused or reference.undefined_reason or ""
    return ([Quantity("score (exact)", reference.number, note), Quantity("judge's score", d["score"]
                                                                         if isinstance(d["score"], (int, float)) else None),
             Quantity("rubric levels", len(levels))],  # type: ignore[arg-type]
            [f"value = the judge's level, one of {list(levels)}",  # type: ignore[call-overload]
             "Ragas: the judge's score as given (no check against the rubric)"])


# Ragas 0.2.0-0.2.5's legacy classes, renamed in 0.2.6 (ragas#1666, "make general purpose metrics more
# general"): RubricsScoreWithReference / WithoutReference became RubricsScore (their 1..5 default rubrics,
# the reference-free one RubricsScore's default), InstanceRubricsWithReference /
# InstanceRubricsScoreWithoutReference became InstanceRubrics. The same release renamed SingleTurnSample's
# ``rubric`` to ``rubrics``: before it, the instance classes read ``rubrics`` from a sample that declares
# only ``rubric`` (they raise KeyError: 'rubrics' on every single-turn sample).
RENAMED_IN = "0.2.6"
EARLIER_RUBRICS = ("RubricsScoreWithReference", "RubricsScoreWithoutReference")
EARLIER_INSTANCE = ("InstanceRubricsWithReference", "InstanceRubricsScoreWithoutReference")

_SPECS = {
    # RubricsScoreWithReference / WithoutReference: DomainSpecificRubrics subclasses with with_reference preset
    RUBRICS_SCORE: (("RubricsScore", *EARLIER_RUBRICS),
                    ("DomainSpecificRubrics", "RubricsScoreWithReference", "RubricsScoreWithoutReference"),
                    "ragas.metrics._domain_specific_rubrics", FIELDS,
                    "RubricsScore's default 1..5 rubric", "RubricsScore"),
    INSTANCE_RUBRICS: (("InstanceRubrics", *EARLIER_INSTANCE), ("InstanceSpecificRubrics",),
                       "ragas.metrics._instance_specific_rubrics", (*FIELDS, "rubrics"), "the case's rubrics",
                       "InstanceRubrics"),
}


def _spec(metric: str) -> MetricSpec:
    legacy, collections, module, fields, scale, successor = _SPECS[metric]
    earlier = EARLIER_RUBRICS if metric == RUBRICS_SCORE else EARLIER_INSTANCE
    ragas = RagasTargets(legacy, collections, module, judge="rubrics",
                         releases=tuple((f"legacy:{name}", "0.2.0", RENAMED_IN, successor) for name in earlier),
                         sample_names=(("rubrics", "rubric"),) if metric == INSTANCE_RUBRICS else (),
                         # the reference-free classes never read the case's reference (0.2.2-0.2.5's column
                         # filter drops it): not passed, not recorded
                         class_fields=((f"legacy:{earlier[1]}", tuple(f for f in fields if f != "reference"), ""),))
    return MetricSpec(
        name=metric,
        reference_on=f"verdicts.{metric} (the judge's score on {scale})",
        ragas=ragas,
        fields_read=fields,
        denominator=f"none: the judge's level on {scale}",
        undefined_policy=("None ('no_rubric_levels') for a rubric with no level; a score that is not an integer "
                          "level of the rubric is refused. Ragas returns the score as given (collections "
                          "InstanceSpecificRubrics raises ValueError on an empty rubric)."),
        compute=_compute(metric),
        requires=(f"verdicts.{metric}", "rubrics") if metric == INSTANCE_RUBRICS else (f"verdicts.{metric}",),
        verdicts=Verdicts(metric, "claims", "score"),
        as_given=_as_given,
        fuzz_inputs=_fuzz(metric),
        explain=ExplainAdapter(
            command=metric.replace("_", "-"), takes="labels",
            inputs_help="LABELS (the judge's score: the first label)",
            targets=ragas.ids()[:1], case_inputs=_explain_inputs(metric), quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = (_spec(RUBRICS_SCORE), _spec(INSTANCE_RUBRICS))
