"""A user's own judged metrics built with Ragas's generic ``DiscreteMetric`` and ``RankingMetric`` (``ragas.metrics``),
audited on frozen judge values: values that are not numbers, a label and a ranking (``ragas_compat.values``).

Each metric is a configuration like ``NumericMetric``'s (``metrics/numeric_metric.py``): ``name``, ``prompt`` (a
``str.format`` template over the case's ``user_input``, ``response``, ``reference`` and ``retrieved_contexts``) and
``allowed_values``; a case configures its own (``"targets": {"DiscreteMetric": {...}}``). Ragas constructs the class
without an LLM and scores with ``await metric.ascore(llm=..., **inputs)``: the template is formatted, the judge
replies ``{"reason", "value"}``, the reply is validated by the class's auto-generated response model and the
MetricResult's value returned (``SimpleLLMMetric.ascore``, ragas/metrics/base.py).

The frozen verdict (``verdicts.discrete_metric`` / ``verdicts.ranking_metric``, one object) is the judge's ``value``,
as given in the reply.

DiscreteMetric (ragas/metrics/discrete.py): ``allowed_values`` is a list of strings (default ``["pass", "fail"]``) and
the response model's ``value`` is ``Literal[*allowed_values]``, so pydantic refuses anything else, case-sensitively
("PASS" for "pass", " pass", 1). Reference: the label, when it is one of ``allowed_values`` exactly; refused
otherwise, ``value_not_allowed`` (Ragas raises pydantic's ``ValidationError``: the expected outcome, rule
``discrete-metric-value-not-allowed``).

RankingMetric (ragas/metrics/ranking.py): ``allowed_values`` is the expected number of items (default 2) and the
response model's ``value`` is ``List[str]``. Reference: the list as given, in its order, when it is a list of strings
of ``allowed_values`` items; refused otherwise and named: ``ranking_wrong_length`` (Ragas returns the list unchecked:
the length is validated only by the ``@ranking_metric`` decorator's wrapper, ``RankingValidator``; rule
``ranking-metric-length-unchecked``), ``value_not_a_ranking`` (not a list of strings: pydantic refuses it,
``ValidationError``, rule ``ranking-metric-not-a-list``).

Neither class aggregates: ``batch_score`` / ``abatch_score`` return the list of MetricResults (base.py), so there is
no dataset value to check, and neither is an ``evaluate()`` metric. Never undefined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
from ragas_compat.probe.protocol import VALUE_LABEL, VALUE_RANKING
from ragas_compat.values import Label, Ranking

DISCRETE = "discrete_metric"
RANKING = "ranking_metric"
FIELDS = ("user_input", "response", "reference", "retrieved_contexts")  # what the template may name
DENOMINATOR = "none: the judge's one value"

DISCRETE_PROMPT = ("Does the response answer the question? Reply pass or fail.\nQuestion: {user_input}\n"
                   "Response: {response}")
DISCRETE_ALLOWED = ("pass", "fail")  # Ragas's default
RANKING_PROMPT = ("Rank the retrieved contexts by their relevance to the question, most relevant first; reply "
                  "with their numbers.\nQuestion: {user_input}\nContexts: {retrieved_contexts}")
RANKING_LENGTH = 2  # Ragas's default


def discrete_outcome(case: Case, allowed: Sequence[str]) -> ReferenceOutcome:
    value = case.verdicts[DISCRETE][0]["value"]
    details: dict[str, Any] = {"value": value, "allowed_values": list(allowed)}
    if isinstance(value, str) and value in allowed:
        return ReferenceOutcome(DISCRETE, Label(value), None, None, {}, details, DENOMINATOR)
    near = [a for a in allowed if isinstance(value, str) and a.casefold() == value.strip().casefold()]
    why = f" (it differs from {near[0]!r} in case or spacing; the comparison is exact)" if near else ""
    return ReferenceOutcome(DISCRETE, None, None,
                            f"the judge's value {value!r} is not one of allowed_values {list(allowed)!r}{why}",
                            {}, {**details, "error_reason": "value_not_allowed"}, DENOMINATOR)


def ranking_outcome(case: Case, length: int) -> ReferenceOutcome:
    value = case.verdicts[RANKING][0]["value"]
    details: dict[str, Any] = {"value": value, "allowed_values": length}
    if not (isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value)):
        return ReferenceOutcome(RANKING, None, None, f"the judge's value {value!r} is not a list of strings", {},
                                {**details, "error_reason": "value_not_a_ranking"}, DENOMINATOR)
    if len(value) != length:
        return ReferenceOutcome(RANKING, None, None,
                                f"the judge's ranking has {len(value)} items, allowed_values asks for {length}",
                                {}, {**details, "error_reason": "ranking_wrong_length"}, DENOMINATOR)
    return ReferenceOutcome(RANKING, Ranking(tuple(value)), None, None, {}, details, DENOMINATOR)


# --------------------------------------------------------------------------- fuzz and explain

def _fuzz_discrete(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    shape = rng.random()
    value: Any = (rng.choice(("PASS", "Fail", " pass", "pass ", "maybe", "", "passed")) if shape < 0.2  # refused
                  else rng.choice((1, 0, True, None, ["pass"])) if shape < 0.25                       # not a string
                  else rng.choice(DISCRETE_ALLOWED))
    return {"verdicts": {DISCRETE: [{"value": value}]}}


def _fuzz_ranking(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    shape = rng.random()
    items = [str(i + 1) for i in range(len(draw.retrieved_contexts) or 3)]
    rng.shuffle(items)
    value: Any = (items[:rng.randrange(0, len(items) + 1)] + rng.choice(([], ["1"], ["x", "y"])) if shape < 0.3
                  else rng.choice(("1,2", 1, [1, 2], ["1", 2], None)) if shape < 0.35               # not a ranking
                  else rng.sample(["1", "2", "3", "a", "B", "b"], RANKING_LENGTH))
    return {"verdicts": {RANKING: [{"value": value}]}}


def _discrete_explain_inputs(given: ExplainInput) -> dict[str, Any]:
    label = given.labels[0] if given.labels else 1
    names: dict[object, str] = {1: "pass", 0: "fail"}  # LABELS are parsed values (object): looked up as given
    value = names.get(label, f"label-{label}") if not isinstance(label, bool) else ("pass" if label else "fail")
    return {"user_input": "What is the capital of France?", "response": "Paris.",
            "verdicts": {DISCRETE: [{"value": value}]}}


def _ranking_explain_inputs(given: ExplainInput) -> dict[str, Any]:
    return {"user_input": "What is the capital of France?", "response": "Paris.",
            "retrieved_contexts": ["Paris is the capital of France.", "France is in Europe."],
            "verdicts": {RANKING: [{"value": [str(label) for label in given.labels]}]}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    shown = repr(reference.value) if reference.value is not None else f"refused: {reference.refused}"
    return ([Quantity("the reference's value", None, shown), Quantity("judge's value as given", None, repr(d["value"]))],
            [f"value = the judge's value, exactly, checked against allowed_values {d['allowed_values']!r}",
             "Ragas: the reply model's value (a Literal of allowed_values for DiscreteMetric, a List[str] of any "
             "length for RankingMetric)"])


def _configure_discrete(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome]:
    allowed = tuple(options.get("allowed_values", DISCRETE_ALLOWED))
    return lambda case: discrete_outcome(case, allowed)


def _configure_ranking(options: Mapping[str, Any]) -> Callable[[Case], ReferenceOutcome]:
    length = int(options.get("allowed_values", RANKING_LENGTH))
    return lambda case: ranking_outcome(case, length)


DISCRETE_TARGETS = RagasTargets(("DiscreteMetric",), (), "ragas.metrics.discrete",
                                settings=(("name", DISCRETE), ("prompt", DISCRETE_PROMPT),
                                          ("allowed_values", list(DISCRETE_ALLOWED))),
                                judge=DISCRETE, llm_per_call=True, value_kind=VALUE_LABEL)
RANKING_TARGETS = RagasTargets(("RankingMetric",), (), "ragas.metrics.ranking",
                               settings=(("name", RANKING), ("prompt", RANKING_PROMPT),
                                         ("allowed_values", RANKING_LENGTH)),
                               judge=RANKING, llm_per_call=True, value_kind=VALUE_RANKING)

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=DISCRETE,
        reference_on=f"verdicts.{DISCRETE} (the judge's label for the metric's prompt) and its allowed_values",
        ragas=DISCRETE_TARGETS,
        fields_read=FIELDS,
        denominator=DENOMINATOR,
        undefined_policy=("never undefined: the judge's label; one that is not in allowed_values, exactly "
                          "(case-sensitive), is refused (value_not_allowed), as Ragas's response model refuses it"),
        compute=lambda case: discrete_outcome(case, DISCRETE_ALLOWED),
        requires=(f"verdicts.{DISCRETE}",),
        verdicts=Verdicts(DISCRETE, "claims", "value"),
        fuzz_inputs=_fuzz_discrete,
        explain=ExplainAdapter(
            command="discrete-metric", takes="labels",
            inputs_help="LABELS (the judge's label: 1 = pass, 0 = fail, another number an unknown label; other "
                        "labels through a case file)",
            targets=DISCRETE_TARGETS.ids(), case_inputs=_discrete_explain_inputs, quantities=_quantities),
        configure=_configure_discrete),
    MetricSpec(
        name=RANKING,
        reference_on=f"verdicts.{RANKING} (the judge's ranked list for the metric's prompt) and its allowed_values "
                     "(the list's length)",
        ragas=RANKING_TARGETS,
        fields_read=FIELDS,
        denominator=DENOMINATOR,
        undefined_policy=("never undefined: the judge's list, in order; one of another length than allowed_values "
                          "(ranking_wrong_length) or not a list of strings (value_not_a_ranking) is refused"),
        compute=lambda case: ranking_outcome(case, RANKING_LENGTH),
        requires=(f"verdicts.{RANKING}",),
        verdicts=Verdicts(RANKING, "claims", "value"),
        fuzz_inputs=_fuzz_ranking,
        explain=ExplainAdapter(
            command="ranking-metric", takes="labels",
            inputs_help="LABELS (the judge's ranking of the two contexts, e.g. 2,1; other lists through a case file)",
            targets=RANKING_TARGETS.ids(), case_inputs=_ranking_explain_inputs, quantities=_quantities),
        configure=_configure_ranking),
)
