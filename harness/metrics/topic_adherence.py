"""Whether a conversation kept to its reference topics: TopicAdherenceScore (legacy) / TopicAdherence
(collections), modes precision, recall and f1.

Inputs (a multi-turn case): the conversation and ``reference_topics``. The judge extracts the topics of the
conversation; for each topic it says whether the AI refused to answer it; then it classifies each topic as
falling into one of the reference topics or not. The frozen verdicts (``verdicts.topic_adherence``) are the
extracted topics in order, each ``{"statement": topic, "refused": 0/1, "on_topic": 0/1}``.

With answered a_i = not refused_i and on-topic c_i over the extracted topics:
TP = |{i: a_i and c_i}| (on-topic and answered), FP = |{i: a_i and not c_i}| (answered off-topic),
FN = |{i: not a_i and c_i}| (refused on-topic); a refused off-topic topic counts nowhere.

- ``topic_adherence_precision`` = TP / (TP + FP): the share of answered topics that are on-topic; undefined
  ("no_answered_topic") when the AI answered no topic.
- ``topic_adherence_recall`` = TP / (TP + FN): the share of on-topic topics that were answered; undefined
  ("no_on_topic_topic") when no topic is on-topic.
- ``topic_adherence_f1`` = 2TP / (2TP + FP + FN); undefined ("no_topic_counted") when every topic was
  refused and off-topic.
- every mode is undefined ("no_topics") when the judge extracted no topic.

Ragas 0.4.3 (both APIs) computes on boolean arrays with ``+ 1e-10`` in every denominator:
``TP / (TP + FP + 1e-10)``, ``TP / (TP + FN + 1e-10)``, and ``2PR / (P + R + 1e-10)`` over those
(alternative ``epsilon``: 1 becomes 0.9999999999); an undefined value is 0.0. With no topic at all the
legacy class still asks the classification and returns 0.0; the collections class returns NaN. A
classification list of another length than the topics is padded with False or cut (not reachable from
these verdicts, which give one classification per topic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.agent_goal import binary
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
    ratio_text,
)

KEY = "topic_adherence"
EPS = 1e-10
MODES = ("f1", "precision", "recall")
DENOMINATORS = {"precision": "answered topics TP + FP", "recall": "on-topic topics TP + FN",
                "f1": "2TP + FP + FN (topics answered or on-topic)"}
UNDEFINED = {"precision": "no_answered_topic", "recall": "no_on_topic_topic", "f1": "no_topic_counted"}


def counts(answered: Sequence[bool], on_topic: Sequence[bool]) -> tuple[int, int, int]:
    """(TP, FP, FN) of the answered flags against the on-topic flags."""
    pairs = list(zip(answered, on_topic, strict=True))
    return (sum(1 for a, c in pairs if a and c), sum(1 for a, c in pairs if a and not c),
            sum(1 for a, c in pairs if not a and c))


def exact(mode: str, tp: int, fp: int, fn: int) -> Fraction | None:
    num, den = {"precision": (tp, tp + fp), "recall": (tp, tp + fn), "f1": (2 * tp, 2 * tp + fp + fn)}[mode]
    return Fraction(num, den) if den else None


def ragas_float(mode: str, tp: int, fp: int, fn: int) -> float:
    """Ragas's float evaluation, 1e-10 in every denominator (0.0 for an empty one)."""
    precision = tp / (tp + fp + EPS)
    recall = tp / (tp + fn + EPS)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 2 * (precision * recall) / (precision + recall + EPS)


def topic_outcome(metric: str, mode: str, case: Case) -> ReferenceOutcome:
    items = case.verdicts[KEY]
    labels = [v for item in items for v in (item["refused"], item["on_topic"])]
    details: dict[str, Any] = {"topics": [item["statement"] for item in items], "labels": labels,
                               "reference_topics": list(case.reference_topics or ()), "mode": mode,
                               "ragas_semantics": {"epsilon": "Ragas adds 1e-10 to every denominator "
                                                   "(and to P + R in F1)"}}
    denominator = DENOMINATORS[mode]
    bad = [(i, key, item[key]) for i, item in enumerate(items) for key in ("refused", "on_topic")
           if binary(item[key]) is None]
    if bad:
        i, key, value = bad[0]
        return ReferenceOutcome(metric, None, None, f"verdicts.{KEY}[{i}].{key} must be 0 or 1, got {value!r}",
                                {}, details, denominator)
    answered = [not binary(item["refused"]) for item in items]
    on_topic = [bool(binary(item["on_topic"])) for item in items]
    tp, fp, fn = counts(answered, on_topic)
    details.update(answered=answered, on_topic=on_topic, tp=tp, fp=fp, fn=fn,
                   ragas_float=ragas_float(mode, tp, fp, fn) if items else None)
    if not items:
        return ReferenceOutcome(metric, None, "no_topics", None, {}, details, denominator)
    value = exact(mode, tp, fp, fn)
    if value is None:
        return ReferenceOutcome(metric, None, UNDEFINED[mode], None, {}, details, denominator)
    return ReferenceOutcome(metric, value, None, None, {"epsilon": ragas_float(mode, tp, fp, fn)}, details,
                            denominator)


def _as_given(mode: str) -> Callable[[Sequence[int]], float]:
    """Ragas's float on the labels (refused, on_topic per topic) taken as truth values."""
    def as_given(labels: Sequence[int]) -> float:
        answered = [not bool(v) for v in labels[0::2]]
        on_topic = [bool(v) for v in labels[1::2]]
        return ragas_float(mode, *counts(answered, on_topic))
    return as_given


# --------------------------------------------------------------------------- fuzz and explain

_SUBJECTS = ("billing", "refunds", "the weather", "football", "passwords", "recipes")
_REFERENCE_TOPICS = (["billing", "refunds"], ["passwords"], ["billing", "passwords", "refunds"])


def conversation_about(topics: Sequence[str], refused: Sequence[bool]) -> list[dict[str, Any]]:
    """A conversation asking about each topic in turn, each answered or refused."""
    messages: list[dict[str, Any]] = []
    for topic, no in zip(topics, refused, strict=True):
        messages.append({"type": "human", "content": f"Tell me about {topic}."})
        messages.append({"type": "ai", "content": f"I cannot help with {topic}." if no else f"Here is {topic}."})
    return messages or [{"type": "human", "content": "Hello"}, {"type": "ai", "content": "Hello!"}]


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    # a token of the case in every topic: evaluate() scores all cases with one judge answering by content,
    # so two cases must not ask one classification with different replies
    token = f"{rng.getrandbits(40):010x}"
    topics = [f"{t} ({token})" for t in rng.sample(_SUBJECTS, rng.choice((0, 1, 2, 2, 3, 4)))]
    if topics and rng.random() < 0.15:
        topics.append(topics[0])  # the judge extracts a topic twice
    refused = [rng.random() < 0.35 for _ in topics]
    reference_topics = rng.choice(_REFERENCE_TOPICS)
    labels = (0, 1, False, True)
    items = [{"statement": t, "refused": rng.choice(labels[1::2]) if r else rng.choice(labels[0::2]),
              "on_topic": rng.choice(labels)} for t, r in zip(topics, refused, strict=True)]
    messages = conversation_about(topics, refused) if topics else [
        {"type": "human", "content": f"Hello ({token})"}, {"type": "ai", "content": "Hello!"}]
    return {"user_input": messages, "reference_topics": list(reference_topics),
            "verdicts": {KEY: items}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    """LABELS: two per topic, refused then on_topic (1,0,0,1: topic 1 refused and off-topic, topic 2 answered
    and on-topic); an odd count gives the last topic on_topic 0."""
    labels = list(given.labels)
    if len(labels) % 2:
        labels.append(0)
    topics = [f"topic {i + 1}" for i in range(len(labels) // 2)]
    items = [{"statement": t, "refused": labels[2 * i], "on_topic": labels[2 * i + 1]} for i, t in enumerate(topics)]
    return {"user_input": conversation_about(topics, [binary(item["refused"]) == 1 for item in items]),
            "reference_topics": ["topic 1", "topic 3"], "verdicts": {KEY: items}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    mode = d["mode"]
    quantities = [Quantity(f"{reference.metric} (exact)", reference.number), Quantity("topics", len(d["topics"]))]
    if reference.refused is not None:
        return quantities, [f"the reference refuses the verdicts: {reference.refused}"]
    tp, fp, fn = d["tp"], d["fp"], d["fn"]
    quantities += [Quantity("TP (answered, on-topic)", tp), Quantity("FP (answered, off-topic)", fp),
                   Quantity("FN (refused, on-topic)", fn), Quantity("Ragas float (+1e-10)", d["ragas_float"])]
    num, den = {"precision": (tp, tp + fp), "recall": (tp, tp + fn), "f1": (2 * tp, 2 * tp + fp + fn)}[mode]
    reason = "no_topics" if not d["topics"] else UNDEFINED[mode]
    formulas = [f"{mode} = {ratio_text(num, den, reason)}",
                "Ragas: TP / (TP + FP + 1e-10), TP / (TP + FN + 1e-10), F1 = 2PR / (P + R + 1e-10); 0.0 when "
                "undefined (collections: NaN with no topic)"]
    return quantities, formulas


RAGAS_MODULE = "ragas.metrics._topic_adherence"


def _targets(mode: str) -> RagasTargets:
    return RagasTargets(("TopicAdherenceScore",), ("TopicAdherence",), RAGAS_MODULE,
                        options=() if mode == "f1" else (("mode", mode),), judge="topic_adherence")


def _spec(mode: str) -> MetricSpec:
    metric = f"{KEY}_{mode}"
    targets = _targets(mode)
    return MetricSpec(
        name=metric,
        reference_on=f"verdicts.{KEY} (topics: refused, on_topic) and reference_topics",
        ragas=targets,
        fields_read=("user_input", "reference_topics"),
        denominator=DENOMINATORS[mode],
        undefined_policy=(f"None ('no_topics') when no topic was extracted, ('{UNDEFINED[mode]}') when the "
                          f"denominator is 0; Ragas: 0.0 (1e-10 in the denominators), the collections class NaN "
                          f"with no topic. Non-0/1 verdicts are refused."),
        compute=lambda case, _m=metric, _mode=mode: topic_outcome(_m, _mode, case),
        requires=(f"verdicts.{KEY}", "reference_topics"),
        verdicts=Verdicts(KEY, "claims", None),
        as_given=_as_given(mode),
        fuzz_inputs=_fuzz,
        multi_turn=True,
        explain=ExplainAdapter(
            command=metric.replace("_", "-"), takes="labels",
            inputs_help="LABELS (two per extracted topic: refused 0/1, then on_topic 0/1)",
            targets=targets.ids(), case_inputs=_explain_inputs, quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(mode) for mode in MODES)
