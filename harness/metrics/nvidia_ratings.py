"""The NVIDIA-style rating metrics: two judge templates each give a rating on a small scale, averaged.

``AnswerAccuracy`` (response vs reference for the question; scale 0, 2, 4), ``ContextRelevance``
(the joined retrieved contexts for the question; scale 0, 1, 2) and ``ResponseGroundedness`` (the
response against the joined retrieved contexts; scale 0, 1, 2) share one rating core. The
documented definition (Ragas docs, "Nvidia Metrics") is, in exact ``Fraction`` arithmetic,

    s_t = r_t / top            (r_t: template t's rating on the scale, top = 4 or 2)
    score = (s_1 + s_2) / 2    if both templates gave a valid rating,
          = s_t                if only template t did ("otherwise, it takes the valid one").

A rating is valid when it is on the scale; a template whose reply is not a valid rating is asked
again, up to ``ATTEMPTS`` = 5 times (Ragas's retry count, both APIs), and its rating is the first
valid one. Denominator: the number of templates with a valid rating (2 or 1). Undefined (None,
reason ``no_valid_rating``) when neither template gives a valid rating in its attempts.

Case format: ``verdicts.<answer_accuracy|context_relevance|response_groundedness>`` is the list of
the judge's replies, one per call, in the order asked: ``{"template": 1 | 2, "rating": R}``. An
integer R is the rating the judge gave (any integer: off the scale too; the legacy judge replies
``str(R)``, the collections judge ``{"rating": R}``); a string R is the judge's raw reply text,
verbatim to both APIs (never a rating for the reference). Each template needs at least one call; a
template asked more often than it has calls gets its last call's reply again.

Ragas 0.4.3, where it differs from the definition (alternatives the classifier recognises):

- legacy ``ragas.metrics`` (``_nv_metrics.py``) reads a rating out of any reply text by substring:
  AnswerAccuracy takes the first of the digits 0, 1, 2, 3, 4 that occurs, as i / 4, so an
  off-scale 1 or 3 scores 0.25 / 0.75 with no retry and "10" scores 0; ContextRelevance and
  ResponseGroundedness the first of 2, 1, 0, as i / 2 ("12" scores 1). Variant ``legacy_digit_scan``.
- legacy: with one template unread it returns ``max(s_1, s_2)`` on the NaN: ``max(nan, s_2)`` is NaN,
  ``max(s_1, nan)`` is s_1. Template 1 unread gives NaN where the definition takes s_2 (a divergence;
  ``details["legacy_first_template_unread"]``).
- fixed scores without asking the judge (variant ``text_shortcut``): legacy ContextRelevance 0.0
  for a blank question or blank joined contexts, or when the question equals or contains the joined
  contexts (the collections class likewise, but it raises ``ValueError`` for an empty string or
  list); legacy ResponseGroundedness 0.0 for a blank response or contexts and 1.0 when the response
  is contained in the joined contexts (collections: 0.0 for blank texts only). Named in
  ``details["never_asked"]``: the classifier tests it before ``empty_as_zero``, so a row the judge's replies
  leave undefined but the class scored without asking is explained by the shortcut, its true cause.
- collections ``ragas.metrics.collections``: the definition (valid ratings on the scale, 5
  attempts, the valid template alone when the other fails); it raises ``ValueError`` for an empty
  input and parses the reply as JSON ``{"rating": int}`` (a text reply is a failed attempt).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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

TEMPLATES = (1, 2)
ATTEMPTS = 5  # Ragas 0.4.3: legacy ``retry = 5``, collections ``max_retries=5``
NO_VALID_RATING = "no_valid_rating"
DIGIT_SCAN = "legacy_digit_scan"
TEXT_SHORTCUT = "text_shortcut"

Rating = int | str
Calls = dict[int, list[Rating]]


@dataclass(frozen=True)
class RatingMetric:
    """One of the three metrics: its verdict key, Ragas class, scale, the legacy digit order and the
    fixed score its legacy class gives without asking the judge (None: it asks)."""

    key: str
    ragas_class: str
    scale: tuple[int, ...]
    legacy_digits: tuple[int, ...]        # the order the legacy class looks for digits in a reply
    fields_read: tuple[str, ...]
    judged: str                           # what the judge rates, in words
    legacy_shortcut: Callable[[Case], float | None]

    @property
    def top(self) -> int:
        return max(self.scale)


def _joined(case: Case) -> str:
    return "\n".join(case.retrieved_contexts).strip()


def _relevance_shortcut(case: Case) -> float | None:
    question, contexts = case.user_input.strip(), _joined(case)
    if not question or not contexts or question == contexts or contexts in question:
        return 0.0
    return None


def _groundedness_shortcut(case: Case) -> float | None:
    response, contexts = case.response.strip(), _joined(case)
    if not response or not contexts:
        return 0.0
    return 1.0 if response in contexts else None


METRICS: tuple[RatingMetric, ...] = (
    RatingMetric("answer_accuracy", "AnswerAccuracy", (0, 2, 4), (0, 1, 2, 3, 4),
                 ("user_input", "response", "reference"), "the response against the reference, for the question",
                 lambda case: None),
    RatingMetric("context_relevance", "ContextRelevance", (0, 1, 2), (2, 1, 0),
                 ("user_input", "retrieved_contexts"), "the joined retrieved contexts, for the question",
                 _relevance_shortcut),
    RatingMetric("response_groundedness", "ResponseGroundedness", (0, 1, 2), (2, 1, 0),
                 ("response", "retrieved_contexts"), "the response, against the joined retrieved contexts",
                 _groundedness_shortcut),
)


# --------------------------------------------------------------------------- the case's judge calls

def judge_calls(items: Sequence[Any], field: str) -> Calls:
    """Template -> its replies in the order asked; HarnessInputError naming the field otherwise."""
    if not isinstance(items, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of judge calls", field=field, value=items)
    calls: Calls = {t: [] for t in TEMPLATES}
    for i, item in enumerate(items):
        template = item.get("template") if isinstance(item, Mapping) else None
        if type(template) is not int or template not in TEMPLATES:
            raise HarnessInputError(f"{field}[{i}].template: expected 1 or 2, got {template!r}",
                                    field=f"{field}[{i}].template", value=item)
        rating = item.get("rating")
        if type(rating) is not int and not isinstance(rating, str):
            raise HarnessInputError(f"{field}[{i}].rating: expected an integer rating or the reply text (a string), "
                                    f"got {rating!r}", field=f"{field}[{i}].rating", value=rating)
        calls[template].append(rating)
    for template, replies in calls.items():
        if not replies:
            raise HarnessInputError(f"{field}: template {template} has no judge call (each template is asked "
                                    f"at least once)", field=field, value=list(items))
    return calls


def attempts(replies: Sequence[Rating]) -> list[Rating]:
    """The replies to the ``ATTEMPTS`` askings of one template (the last listed reply repeats)."""
    return [replies[min(k, len(replies) - 1)] for k in range(ATTEMPTS)]


def template_rating(replies: Sequence[Rating], scale: Sequence[int]) -> int | None:
    """The first valid rating (an integer on the scale) in the template's attempts; None if none."""
    return next((r for r in attempts(replies) if type(r) is int and r in scale), None)


def rating_score(ratings: Sequence[int | None], top: int) -> Fraction | None:
    """Mean of r / top over the templates with a valid rating; None when none has one."""
    valid = [Fraction(r, top) for r in ratings if r is not None]
    return sum(valid, Fraction(0)) / len(valid) if valid else None


# --------------------------------------------------------------------------- Ragas 0.4.3, legacy

def legacy_read(reply: Rating, metric: RatingMetric) -> float:
    """What the legacy class reads from one reply: the first of its digits found in the text, / top."""
    text = str(reply)
    return next((d / metric.top for d in metric.legacy_digits if str(d) in text), math.nan)


def legacy_template(replies: Sequence[Rating], metric: RatingMetric) -> float:
    """The legacy reading of one template: the first attempt it can read, NaN after ``ATTEMPTS``."""
    return next((v for v in (legacy_read(r, metric) for r in attempts(replies)) if not math.isnan(v)), math.nan)


def legacy_average(s1: float, s2: float) -> float:
    """The legacy ``average_scores``: the mean when both are >= 0, else ``max(s1, s2)`` (NaN first wins)."""
    return (s1 + s2) / 2 if s1 >= 0 and s2 >= 0 else max(s1, s2)


# --------------------------------------------------------------------------- the outcome

def _same_reading(legacy: float, rating: int | None, top: int) -> bool:
    """The legacy reading of a template equals the definition's (NaN for no valid rating)."""
    return math.isnan(legacy) if rating is None else legacy == rating / top


def rating_outcome(metric: RatingMetric, case: Case) -> ReferenceOutcome:
    """The reference outcome of ``metric`` on the case's judge calls (module docstring)."""
    calls = judge_calls(case.verdicts[metric.key], f"verdicts.{metric.key}")
    ratings = [template_rating(calls[t], metric.scale) for t in TEMPLATES]
    value = rating_score(ratings, metric.top)
    legacy = [legacy_template(calls[t], metric) for t in TEMPLATES]
    shortcut = metric.legacy_shortcut(case)
    off_scale = tuple((t, r) for t in TEMPLATES for r in calls[t] if not (type(r) is int and r in metric.scale))
    details: dict[str, object] = {
        "scale": metric.scale,
        "replies": {f"template {t}": tuple(calls[t]) for t in TEMPLATES},
        "ratings": {f"template {t}": r for t, r in zip(TEMPLATES, ratings, strict=True)},
        "valid_templates": sum(r is not None for r in ratings),
        "off_scale_replies": off_scale,
        "legacy_readings": {f"template {t}": v for t, v in zip(TEMPLATES, legacy, strict=True)},
        "legacy_shortcut": shortcut,
        "legacy_first_template_unread": shortcut is None and math.isnan(legacy[0]),
        "legacy_reads_other_ratings": shortcut is None and any(
            not _same_reading(v, r, metric.top) for v, r in zip(legacy, ratings, strict=True)),
    }
    variants: dict[str, str] = {}
    alternatives: dict[str, float | Fraction | None] = {}
    legacy_value = legacy_average(*legacy)
    if shortcut is None and not math.isnan(legacy_value) and (value is None or legacy_value != value):
        alternatives[f"variant:{DIGIT_SCAN}"] = legacy_value
        variants[DIGIT_SCAN] = (
            f"the legacy class reads a rating out of each reply by substring (the first of the digits "
            f"{', '.join(map(str, metric.legacy_digits))} in the text, / {metric.top}) and does not retry a reply it "
            f"can read, so an off-scale rating or a text with a digit counts")
    if shortcut is not None and (value is None or shortcut != value):
        alternatives[f"variant:{TEXT_SHORTCUT}"] = Fraction(shortcut)
        variants[TEXT_SHORTCUT] = (
            f"the class returns {shortcut} without asking the judge (a blank text, or one text equal to or "
            f"contained in the other)")
        # a score given without asking the judge: checked before empty_as_zero (classify.NEVER_ASKED), so an
        # undefined row (no valid rating in the replies) scored by this 0.0 is explained by the shortcut
        details["never_asked"] = [TEXT_SHORTCUT]
    if variants:
        details["variants"] = variants
    denominator = "templates with a valid rating (2, or 1 when the other template fails)"
    return ReferenceOutcome(metric.key, value, None if value is not None else NO_VALID_RATING, None,
                            alternatives, details, denominator)


# --------------------------------------------------------------------------- fuzz and explain

TEXT_REPLIES = ("n/a", "I cannot rate this.", "Rating: 2", "10", "4 out of 4")


def _fuzz_for(metric: RatingMetric) -> Callable[[FuzzDraw], dict[str, Any]]:
    """Per template 1 to 3 calls: mostly ratings on the scale, sometimes off the scale or a text."""

    def fuzz(draw: FuzzDraw) -> dict[str, Any]:
        rng = draw.rng
        off_scale = [r for r in range(-1, 6) if r not in metric.scale]
        items: list[dict[str, Any]] = []
        for template in TEMPLATES:
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                roll = rng.random()
                rating: Rating = (rng.choice(metric.scale) if roll < 0.7 else rng.choice(off_scale) if roll < 0.85
                                  else rng.choice(TEXT_REPLIES))
                items.append({"template": template, "rating": rating})
        if rng.random() < 0.5:
            rng.shuffle(items)  # the order within a template is what counts; templates may interleave
        return {"verdicts": {metric.key: items}}

    return fuzz


def _explain_inputs_for(metric: RatingMetric) -> Callable[[ExplainInput], dict[str, Any]]:
    """LABELS: template 1's rating, template 2's rating (further labels: retries, alternating)."""

    def case_inputs(given: ExplainInput) -> dict[str, Any]:
        labels = [int(v) for v in given.labels] or [metric.top]
        first, second = labels[0::2], labels[1::2] or labels[0::2]
        items = [{"template": 1, "rating": r} for r in first] + [{"template": 2, "rating": r} for r in second]
        return {"retrieved_contexts": ["Synthetic retrieved context #1"], "verdicts": {metric.key: items}}

    return case_inputs


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    ratings: dict[str, int | None] = d["ratings"]  # type: ignore[assignment]
    top = max(d["scale"])  # type: ignore[call-overload]
    valid = {name: r for name, r in ratings.items() if r is not None}
    terms = " + ".join(f"{r}/{top}" for r in valid.values())
    formula = (f"score = ({terms}) / {len(valid)}" if valid
               else f"0/0: undefined ({NO_VALID_RATING}: neither template gave a rating on the scale)")
    quantities = [Quantity("score (exact)", reference.number)]
    quantities += [Quantity(f"{name} rating", r, "" if r is not None else "no valid rating in 5 attempts")
                   for name, r in ratings.items()]
    quantities.append(Quantity("valid templates", len(valid)))
    return quantities, [formula, "Ragas legacy: digits read out of the reply text; max(s1, s2) when one is NaN"]


def _as_given(labels: Sequence[int]) -> float:
    """Not used for pairing: the reference never refuses a rating (an off-scale one is a failed attempt)."""
    return sum(labels) / len(labels) if labels else math.nan


def _spec(metric: RatingMetric) -> MetricSpec:
    ragas = RagasTargets((metric.ragas_class,), (metric.ragas_class,), "ragas.metrics._nv_metrics", judge="rating")
    scale = ", ".join(map(str, metric.scale))
    return MetricSpec(
        name=metric.key,
        reference_on=f"verdicts.{metric.key} (the judge's replies per template, rating {scale})",
        ragas=ragas,
        fields_read=metric.fields_read,
        denominator="templates with a valid rating (2, or 1 when the other template fails)",
        undefined_policy=(f"None ('{NO_VALID_RATING}') when neither template gives a rating on the scale in "
                          f"{ATTEMPTS} attempts; Ragas: NaN. Legacy: NaN as soon as template 1 is unread."),
        compute=lambda case, _m=metric: rating_outcome(_m, case),
        requires=(f"verdicts.{metric.key}",),
        verdicts=Verdicts(metric.key, "claims", "rating"),
        as_given=_as_given,
        fuzz_inputs=_fuzz_for(metric),
        explain=ExplainAdapter(
            command=metric.key.replace("_", "-"), takes="labels",
            inputs_help=(f"LABELS (template 1's rating, template 2's rating on the scale {scale}; further labels "
                         f"are retries, alternating templates; a rating off the scale is a failed attempt)"),
            targets=ragas.ids(), case_inputs=_explain_inputs_for(metric), quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(m) for m in METRICS)
