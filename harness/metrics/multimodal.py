"""Judged verdicts over text and image contexts: MultiModalFaithfulness and MultiModalRelevance (both APIs).

Inputs (a single-turn case): ``response`` and ``retrieved_contexts`` (relevance also ``user_input``); a context
may be an image as a ``data:image/...;base64,...`` URI (an http(s) URL would be fetched by Ragas's LLM
wrapper; a case keeps images as data so nothing leaves the machine). The judge is asked once: the legacy
classes render an ``ImageTextPrompt`` (instruction, output signature, examples, then "Now perform the above
instruction with the following" and the inputs, one item each) -> ``{faithful}`` / ``{relevance}``, a bool
(collections: ``{faithful}`` / ``{relevant}`` and a reason).

The frozen verdicts (``verdicts.multimodal_faithfulness`` / ``verdicts.multimodal_relevance``, one object
each) hold that bool as a 0/1 label (the judge's script writes JSON ``true`` / ``false`` for 0, 1, false and
true, any other value as given, for pydantic's bool parsing).

Reference: the verdict, 1 or 0 (exact); never undefined; a verdict other than 0/1 is refused. Ragas returns
``float(verdict)`` of the reply's bool, which pydantic parses leniently: "yes", "on", "t", "1", 1.0 read as
true, "no", "off", "f", "0", 0.0 as false, any case (alternative ``coercion``); 2 or "maybe" fail to parse. What is audited is the verdict-to-score step and the prompt Ragas renders (its whole text
is the key the scripted judge answers by); the conversion of image items into image content blocks happens in
the LLM wrapper's ``to_messages()``, which the scripted judge replaces, so it is not exercised here.

The collections classes (``ragas.metrics.collections``, same names) build the message content themselves
(text blocks, an ``image_url`` block per image context) and call ``self.llm.client.chat.completions.create``
directly with InstructorLLM's ``model`` and ``_map_provider_params()``; the scripted judge answers that call
too. They raise ValueError before asking on an empty response or no retrieved context (relevance: also an
empty user_input); the legacy classes ask.
"""

from __future__ import annotations

import functools
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
)

FAITHFULNESS = "multimodal_faithfulness"
RELEVANCE = "multimodal_relevance"
DENOMINATOR = "none: the judge's one 0/1 verdict"
# a 2x2 red PNG, as a case carries an image
RED_PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGO4IycHRAwQCgAhpgRhTxp8"
           "CQAAAABJRU5ErkJggg==")


# pydantic's lax bool parsing (the reply model's ``bool`` field): these strings (any case), 0/1 and 0.0/1.0
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def pydantic_bool(value: Any) -> int | None:
    """How a pydantic ``bool`` field reads a reply value: 1, 0, or None where it refuses it (2, "maybe")."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return int(value.lower() in _TRUE)
    return None


def verdict_outcome(metric: str, case: Case) -> ReferenceOutcome:
    verdict = case.verdicts[metric][0]["verdict"]
    images = sum(1 for c in case.retrieved_contexts if isinstance(c, str) and c.startswith("data:image/"))
    details: dict[str, Any] = {"verdict": verdict, "image_contexts": images,
                               "text_contexts": len(case.retrieved_contexts) - images}
    label = binary(verdict)
    if label is None:
        parsed = pydantic_bool(verdict)  # the reply carries the value as given: pydantic's reading is Ragas's
        return ReferenceOutcome(metric, None, None, f"verdicts.{metric}[0].verdict must be 0 or 1, got {verdict!r}",
                                {} if parsed is None else {"coercion": float(parsed)}, details, DENOMINATOR)
    return ReferenceOutcome(metric, Fraction(label), None, None, {}, details, DENOMINATOR)


def _as_given(labels: Sequence[int]) -> float:
    return float(labels[0]) if labels else float("nan")


# --------------------------------------------------------------------------- fuzz and explain

def _fuzz(metric: str) -> Callable[[FuzzDraw], dict[str, Any]]:
    def fuzz(draw: FuzzDraw) -> dict[str, Any]:
        rng = draw.rng
        # a token of the case in the response: evaluate() scores all cases with one judge answering by content
        response = f"The picture shows a red square ({rng.getrandbits(40):010x})."
        # now and then a verdict pydantic's bool parsing reads ("yes", "No", "on", "0", 1.0): the reference refuses it
        verdict = rng.choice(("yes", "No", "on", "0", 1.0)) if rng.random() < 0.1 else rng.choice((0, 1, True, False))
        return {"response": response, "verdicts": {metric: [{"verdict": verdict}]}}
    return fuzz


def _explain_inputs(metric: str) -> Callable[[ExplainInput], dict[str, Any]]:
    def inputs(given: ExplainInput) -> dict[str, Any]:
        label = given.labels[0] if given.labels else 0
        return {"user_input": "What colour is the square?", "response": "The square is red.",
                "retrieved_contexts": [RED_PNG, "A photo of a square."], "verdicts": {metric: [{"verdict": label}]}}
    return inputs


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d: dict[str, Any] = dict(reference.details)
    return ([Quantity(f"{reference.metric} (exact)", reference.number), Quantity("image contexts", d["image_contexts"]),
             Quantity("text contexts", d["text_contexts"])],
            ["value = the judge's verdict" + (f" (refused: {reference.refused})" if reference.refused else ""),
             "Ragas: float(bool reply)"])


def _spec(metric: str, ragas_class: str, module: str, fields: tuple[str, ...], what: str) -> MetricSpec:
    targets = RagasTargets((ragas_class,), (ragas_class,), module, judge=metric)
    return MetricSpec(
        name=metric,
        reference_on=f"verdicts.{metric} (the judge's 0/1 verdict: {what})",
        ragas=targets,
        fields_read=fields,
        denominator=DENOMINATOR,
        undefined_policy="never undefined: the verdict, 1 or 0; a verdict other than 0/1 is refused",
        compute=functools.partial(verdict_outcome, metric),
        requires=(f"verdicts.{metric}",),
        verdicts=Verdicts(metric, "claims", "verdict"),
        as_given=_as_given,
        fuzz_inputs=_fuzz(metric),
        explain=ExplainAdapter(
            command=metric.replace("_", "-"), takes="labels",
            inputs_help="LABELS (the judge's verdict: the first label, 1 / 0)",
            targets=targets.ids(), case_inputs=_explain_inputs(metric), quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = (
    _spec(FAITHFULNESS, "MultiModalFaithfulness", "ragas.metrics._multi_modal_faithfulness",
          ("response", "retrieved_contexts"), "the text and image contexts support the response"),
    _spec(RELEVANCE, "MultiModalRelevance", "ragas.metrics._multi_modal_relevance",
          ("user_input", "response", "retrieved_contexts"), "the response and contexts are relevant to the question"),
)
