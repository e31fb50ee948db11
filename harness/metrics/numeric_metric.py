"""A user's own judged metric built with Ragas's generic ``NumericMetric`` (``ragas.metrics``), audited on frozen judge
values.

The metric is a configuration: ``name``, ``prompt`` (a ``str.format`` template over the case's ``user_input``,
``response``, ``reference`` and ``retrieved_contexts``) and ``allowed_values`` (``[low, high]``); built-in:
``DEFAULT_PROMPT`` on ``[0.0, 1.0]``; a case configures its own (``"targets": {"NumericMetric": {"name": ...,
"prompt": ..., "allowed_values": [1, 10]}}``). Ragas constructs the class without an LLM and scores with
``await metric.ascore(llm=..., **inputs)``: the template is formatted, the judge replies ``{"reason", "value"}``
and the reply is parsed into a response model whose ``value`` is a float; the MetricResult's value is returned.

The frozen verdict (``verdicts.numeric_metric``, one object) is the judge's ``value``, as given in the reply.

Reference: the judge's number, exact (a JSON decimal as written: 0.1 = 1/10), when it lies within
``allowed_values``; refused otherwise, named: ``value_out_of_range`` (Ragas 0.4.3 returns it unchecked: the range
is validated only by the ``@numeric_metric`` decorator's wrapper, not by ``ascore``), ``value_not_a_number`` (a
string: pydantic's float parsing reads a numeric one, "0.25" -> 0.25, alternative ``coercion``; any other
fails to parse). Never undefined. There is no aggregation in the class (``batch_score`` returns the results).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
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

KEY = "numeric_metric"
DEFAULT_PROMPT = ("Rate from 0 to 1 how well the response answers the question.\nQuestion: {user_input}\n"
                  "Response: {response}")
DEFAULT_RANGE = (0.0, 1.0)
FIELDS = ("user_input", "response", "reference", "retrieved_contexts")  # what the template may name
DENOMINATOR = "none: the judge's one value"


def _exact(value: int | float) -> Fraction:
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def _float_text(value: Any) -> float | None:
    """pydantic's float parsing of a string reply value (None where it refuses it)."""
    if not isinstance(value, str):
        return None
    try:
        return float(value.strip()) if value.strip() and value.strip().lower() not in ("nan", "inf", "-inf") else None
    except ValueError:
        return None


def numeric_outcome(case: Case, low: float, high: float) -> ReferenceOutcome:
    value = case.verdicts[KEY][0]["value"]
    details: dict[str, Any] = {"value": value, "allowed_values": [low, high]}
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        parsed = _float_text(value)
        return ReferenceOutcome(KEY, None, None, f"verdicts.{KEY}[0].value must be a number, got {value!r}",
                                {} if parsed is None else {"coercion": parsed},
                                {**details, "error_reason": "value_not_a_number"}, DENOMINATOR)
    exact = _exact(value)
    if not _exact(low) <= exact <= _exact(high):
        return ReferenceOutcome(KEY, None, None, f"the judge's value {value!r} is outside allowed_values "
                                f"[{low!r}, {high!r}]", {}, {**details, "error_reason": "value_out_of_range"},
                                DENOMINATOR)
    return ReferenceOutcome(KEY, exact, None, None, {}, details, DENOMINATOR)


def _as_given(labels: Sequence[int]) -> float:
    return float(labels[0]) if labels else float("nan")


# --------------------------------------------------------------------------- fuzz and explain

def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    shape = rng.random()
    value: Any = (rng.choice((7, -1, 1.5, -0.25)) if shape < 0.1                  # outside [0, 1]
                  else rng.choice(("0.25", "1", " 0.5")) if shape < 0.15          # a numeric string
                  else rng.choice((0, 1, 0.0, 1.0, 0.5, 0.1, 0.3, 0.75, round(rng.random(), 3))))
    # the prompt is formatted with user_input (unique per fuzz case), so every case asks its own prompt
    return {"verdicts": {KEY: [{"value": value}]}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    value = given.labels[0] if given.labels else 0
    return {"user_input": "What is the capital of France?", "response": "Paris.", "verdicts": {KEY: [{"value": value}]}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    return ([Quantity(f"{KEY} (exact)", reference.number), Quantity("judge's value as given", None, repr(d["value"]))],
            [f"value = the judge's value, within allowed_values {d['allowed_values']}"
             + (f" (refused: {reference.refused})" if reference.refused else ""),
             "Ragas: float(value) as the reply model parses it, the range unchecked"])


def _configure(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome] | None:
    low, high = options.get("allowed_values", DEFAULT_RANGE)
    return lambda case: numeric_outcome(case, float(low), float(high))


TARGETS = RagasTargets(("NumericMetric",), (), "ragas.metrics.numeric",
                       settings=(("name", KEY), ("prompt", DEFAULT_PROMPT), ("allowed_values", list(DEFAULT_RANGE))),
                       judge=KEY, llm_per_call=True)

SPECS: tuple[MetricSpec, ...] = (MetricSpec(
    name=KEY,
    reference_on=f"verdicts.{KEY} (the judge's value for the metric's prompt) and its allowed_values",
    ragas=TARGETS,
    fields_read=FIELDS,
    denominator=DENOMINATOR,
    undefined_policy=("never undefined: the judge's number; a value outside allowed_values (value_out_of_range) "
                      "or not a number (value_not_a_number) is refused"),
    compute=lambda case: numeric_outcome(case, *DEFAULT_RANGE),
    requires=(f"verdicts.{KEY}",),
    verdicts=Verdicts(KEY, "claims", "value"),
    as_given=_as_given,
    fuzz_inputs=_fuzz,
    explain=ExplainAdapter(
        command="numeric-metric", takes="labels",
        inputs_help="LABELS (the judge's value, 0 or 1: the first label; other values through a case file)",
        targets=TARGETS.ids(), case_inputs=_explain_inputs, quantities=_quantities),
    configure=_configure),)
