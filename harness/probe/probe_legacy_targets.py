"""Legacy-API targets: which Ragas class scores which of our metrics, on which sample fields.

Each target names a class of ``ragas.metrics`` (legacy API), our metric name, the
``SingleTurnSample`` fields the class reads, when it applies to a case (its inputs are
present), and - for LLM metrics - how to script the judge: which prompts Ragas will ask and
the frozen reply to each, derived from the case's verdicts. Verdict values go into the
replies AS GIVEN (2 stays 2, true stays true); Ragas's own parsing decides what they mean.

Importing this module does not import Ragas (target names can be checked first); running a
target does, so set RAGAS_DO_NOT_TRACK before that.
"""

from __future__ import annotations

import importlib
import typing as t
import warnings
from dataclasses import dataclass

try:
    from .probe_encoding import encode_score, encode_warnings, error_record, jsonable, new_result
    from .probe_prompt_book import PromptBook, StubMismatch
except ImportError:
    from probe_encoding import encode_score, encode_warnings, error_record, jsonable, new_result  # type: ignore[no-redef]
    from probe_prompt_book import PromptBook, StubMismatch  # type: ignore[no-redef]

FROZEN_REASON = "frozen verdict (ragas-compat scripted judge)"

Script = t.Callable[[t.Any, dict, PromptBook], None]


@dataclass(frozen=True)
class LegacyTarget:
    """One Ragas legacy class run through ``single_turn_ascore`` for one of our metrics."""

    class_name: str
    private_module: str  # where the class lives when ``ragas.metrics`` does not export it
    metric: str
    fields_read: tuple[str, ...]
    applies: t.Callable[[dict], bool]
    script: Script | None = None  # None: the class needs no LLM

    @property
    def name(self) -> str:
        return f"legacy:{self.class_name}"


# -- applicability -----------------------------------------------------------------------
def _has_verdict(key: str) -> t.Callable[[dict], bool]:
    return lambda case: key in (case.get("verdicts") or {})


def _has_fields(*names: str) -> t.Callable[[dict], bool]:
    return lambda case: all(case.get(n) is not None for n in names)


# -- judge scripts: the prompts Ragas will ask and the frozen replies --------------------
def _context_precision_script(verdict_key: str, answer_field: str) -> Script:
    """One prompt per retrieved context: (question, context, answer) -> {reason, verdict}.

    A raw reply in ``judge_replies.<verdict_key>.<i>`` replaces context i's reply verbatim;
    Ragas then asks its "fix output format" prompt once, which gets the same text back (as
    ``{"text": ...}``), so parsing fails and the metric raises. Ragas asks context by context,
    so no prompt is expected after the first raw reply.
    """

    def script(metric: t.Any, case: dict, book: PromptBook) -> None:
        prompt = metric.context_precision_prompt
        contexts = case.get("retrieved_contexts") or []
        raw_replies = (case.get("judge_replies") or {}).get(verdict_key) or {}
        for i, label in enumerate(case["verdicts"][verdict_key]):
            context = contexts[i] if i < len(contexts) else f"<no retrieved_contexts[{i}]>"
            prompt_input = {"question": case.get("user_input"), "context": context,
                            "answer": case.get(answer_field)}
            where = f"verdicts.{verdict_key}[{i}]"
            if str(i) in raw_replies:
                raw = raw_replies[str(i)]
                book.expect_raw("context_precision", prompt.instruction, prompt_input, raw,
                                label=f"judge_replies.{verdict_key}.{i}")
                book.expect_format_fix(_fix_output_format_instruction(), "context_precision",
                                       prompt_input, raw, raw,
                                       label=f"format fix of judge_replies.{verdict_key}.{i}")
                return
            book.expect("context_precision", prompt.instruction, prompt_input,
                        {"reason": FROZEN_REASON, "verdict": label}, label=where)

    return script


def _fix_output_format_instruction() -> str:
    from ragas.prompt.pydantic_prompt import fix_output_format_prompt

    return fix_output_format_prompt.instruction


def _context_recall_script(metric: t.Any, case: dict, book: PromptBook) -> None:
    """One prompt: (question, joined contexts, reference) -> {classifications: [...]}."""
    prompt = metric.context_recall_prompt
    claims = case["verdicts"]["context_recall"]
    book.expect(
        "context_recall_classification", prompt.instruction,
        {"question": case.get("user_input"),
         "context": "\n".join(case.get("retrieved_contexts") or []),
         "answer": case.get("reference")},
        {"classifications": [
            {"statement": c["statement"], "reason": FROZEN_REASON, "attributed": c["attributed"]}
            for c in claims]},
        label="verdicts.context_recall",
    )


def _faithfulness_script(metric: t.Any, case: dict, book: PromptBook) -> None:
    """Statement generation (question, response) -> {statements}; then, only when there is
    at least one statement, NLI (joined contexts, statements) -> {statements: [verdicts]}."""
    claims = case["verdicts"]["faithfulness"]
    statements = [c["statement"] for c in claims]
    generator = metric.statement_generator_prompt
    book.expect(
        "statement_generator", generator.instruction,
        {"question": case.get("user_input"), "answer": case.get("response")},
        {"statements": statements},
        label="verdicts.faithfulness (statements)",
    )
    if statements:
        nli = metric.nli_statements_prompt
        book.expect(
            "nli_statements", nli.instruction,
            {"context": "\n".join(case.get("retrieved_contexts") or []), "statements": statements},
            {"statements": [
                {"statement": c["statement"], "reason": FROZEN_REASON, "verdict": c["verdict"]}
                for c in claims]},
            label="verdicts.faithfulness (verdicts)",
        )


_CP = "ragas.metrics._context_precision"
_CR = "ragas.metrics._context_recall"
_WITH_REF = ("user_input", "retrieved_contexts", "reference")
_WITHOUT_REF = ("user_input", "retrieved_contexts", "response")
_STRINGS = ("retrieved_contexts", "reference_contexts")
_IDS = ("retrieved_context_ids", "reference_context_ids")

LEGACY_TARGETS: tuple[LegacyTarget, ...] = (
    LegacyTarget("LLMContextPrecisionWithReference", _CP, "context_precision_with_reference",
                 _WITH_REF, _has_verdict("context_precision_with_reference"),
                 _context_precision_script("context_precision_with_reference", "reference")),
    LegacyTarget("ContextPrecision", _CP, "context_precision_with_reference",
                 _WITH_REF, _has_verdict("context_precision_with_reference"),
                 _context_precision_script("context_precision_with_reference", "reference")),
    LegacyTarget("LLMContextPrecisionWithoutReference", _CP, "context_precision_without_reference",
                 _WITHOUT_REF, _has_verdict("context_precision_without_reference"),
                 _context_precision_script("context_precision_without_reference", "response")),
    LegacyTarget("ContextUtilization", _CP, "context_precision_without_reference",
                 _WITHOUT_REF, _has_verdict("context_precision_without_reference"),
                 _context_precision_script("context_precision_without_reference", "response")),
    LegacyTarget("NonLLMContextPrecisionWithReference", _CP, "context_precision_string_match",
                 _STRINGS, _has_fields("reference_contexts")),
    LegacyTarget("LLMContextRecall", _CR, "context_recall",
                 _WITH_REF, _has_verdict("context_recall"), _context_recall_script),
    LegacyTarget("ContextRecall", _CR, "context_recall",
                 _WITH_REF, _has_verdict("context_recall"), _context_recall_script),
    LegacyTarget("NonLLMContextRecall", _CR, "context_recall_string_match",
                 _STRINGS, _has_fields("reference_contexts")),
    LegacyTarget("IDBasedContextPrecision", _CP, "id_context_precision", _IDS, _has_fields(*_IDS)),
    LegacyTarget("IDBasedContextRecall", _CR, "id_context_recall", _IDS, _has_fields(*_IDS)),
    LegacyTarget("Faithfulness", "ragas.metrics._faithfulness", "faithfulness",
                 ("user_input", "response", "retrieved_contexts"), _has_verdict("faithfulness"),
                 _faithfulness_script),
)

TARGETS_BY_NAME = {target.name: target for target in LEGACY_TARGETS}


class TargetUnavailable(Exception):
    """The installed Ragas has no such class."""


def resolve_class(target: LegacyTarget) -> type:
    """The class as a user imports it (``ragas.metrics.X``), else from its private module."""
    import ragas.metrics

    try:
        return getattr(ragas.metrics, target.class_name)
    except AttributeError:
        pass
    try:
        return getattr(importlib.import_module(target.private_module), target.class_name)
    except (ImportError, AttributeError) as exc:
        raise TargetUnavailable(
            f"this Ragas has no {target.class_name} (neither ragas.metrics.{target.class_name} "
            f"nor {target.private_module}.{target.class_name}: {exc})"
        ) from None


def _ragas_runtime() -> tuple[type | None, type]:
    """``(SingleTurnSample, FrozenJudgeLLM)``, imported on first use; SingleTurnSample is
    None in Ragas 0.1.x, which scores row dicts."""
    try:
        from ragas.dataset_schema import SingleTurnSample
    except ImportError:
        SingleTurnSample = None

    if __package__:
        from .probe_legacy_stub import FrozenJudgeLLM
    else:
        from probe_legacy_stub import FrozenJudgeLLM  # type: ignore[no-redef]
    return SingleTurnSample, FrozenJudgeLLM


# Ragas 0.1.x scores a row dict under these names instead of a SingleTurnSample.
ROW_NAMES_0_1 = {"user_input": "question", "retrieved_contexts": "contexts", "response": "answer",
                 "reference": "ground_truth"}


def adapt_inputs(sample_cls: type | None, inputs: dict) -> tuple[t.Any, list[str], list[str]]:
    """``(sample, accepted, dropped)`` for this Ragas: a SingleTurnSample of the fields it declares
    (it would silently drop the others, so they are reported as dropped), or - without
    SingleTurnSample (0.1.x) - a row dict under that version's names."""
    if sample_cls is not None:
        declared = getattr(sample_cls, "model_fields", None) or getattr(sample_cls, "__fields__", {})
        accepted = [f for f in inputs if f in declared]
        return (sample_cls(**{f: inputs[f] for f in accepted}), accepted,
                [f for f in inputs if f not in declared])
    accepted = [f for f in inputs if f in ROW_NAMES_0_1]
    return ({ROW_NAMES_0_1[f]: inputs[f] for f in accepted}, [ROW_NAMES_0_1[f] for f in accepted],
            [f for f in inputs if f not in ROW_NAMES_0_1])


def declared_columns(metric: t.Any) -> list[str]:
    """The sample columns the class declares it needs (``_required_columns``; 0.1.x: its
    ``evaluation_mode``)."""
    required = getattr(metric, "_required_columns", None)
    if isinstance(required, dict):
        return sorted({c for columns in required.values() for c in columns})
    mode = getattr(metric, "evaluation_mode", None)
    return [f"evaluation_mode={getattr(mode, 'name', mode)}"] if mode is not None else []


def _record_received(metric: t.Any, fields: tuple[str, ...], received: dict) -> None:
    """Wrap the instance's ``_single_turn_ascore`` (0.1.x: ``_ascore``) to record the sample
    Ragas hands it, under our field names."""
    name = "_single_turn_ascore" if hasattr(metric, "_single_turn_ascore") else "_ascore"
    inner = getattr(metric, name)

    async def recording(*args: t.Any, **kwargs: t.Any) -> t.Any:
        sample = kwargs.get("sample", kwargs.get("row", args[0] if args else None))
        if isinstance(sample, dict):
            received.update({f: jsonable(sample.get(ROW_NAMES_0_1.get(f, f))) for f in fields})
        else:
            received.update({f: jsonable(getattr(sample, f, None)) for f in fields})
        return await inner(*args, **kwargs)

    setattr(metric, name, recording)


async def run_legacy_target(target: LegacyTarget, case: dict) -> dict:
    """Score one case with one target; every failure becomes the result's error value."""
    result = new_result(case, target, "legacy")
    book = PromptBook()
    received: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cls = resolve_class(target)
            result["ragas_class"] = f"{cls.__module__}.{cls.__qualname__}"
            SingleTurnSample, FrozenJudgeLLM = _ragas_runtime()
            metric = cls(llm=FrozenJudgeLLM(book)) if target.script else cls()
            result["exported"] = getattr(importlib.import_module("ragas.metrics"), cls.__name__, None) is cls
            result["required_columns"] = declared_columns(metric)
            if target.script:
                target.script(metric, case, book)
            result["expected_prompts"] = book.expected_count
            _record_received(metric, target.fields_read, received)
            sample, result["fields_accepted"], result["fields_dropped"] = adapt_inputs(
                SingleTurnSample, {f: case[f] for f in target.fields_read if f in case})
            scored = (metric.ascore(sample) if isinstance(sample, dict)
                      else metric.single_turn_ascore(sample))
            value = encode_score(await scored)
        except Exception as exc:  # noqa: BLE001 - every failure is a recorded result
            value = (error_record(StubMismatch("; ".join(book.problems)))
                     if book.problems else error_record(exc))
        else:
            problems = book.problems + book.unasked()
            if problems:
                value = error_record(StubMismatch("; ".join(problems)))
    result["received"] = received or None
    result["value"] = value
    result["prompts"] = len(book.asked)
    result["warnings"] = encode_warnings(caught)
    return result
