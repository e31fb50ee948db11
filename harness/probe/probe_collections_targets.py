"""Collections-API targets: the ``ragas.metrics.collections`` classes for our metrics.

Each target names a class of ``ragas.metrics.collections``, our metric name (the same names as
the legacy targets, so both paths are compared with the same reference), the keyword arguments
its ``ascore`` takes (``fields_read``), when it applies to a case, and how to script the judge.
A target runs as a user runs it: ``await metric.ascore(**inputs)`` with a
``FrozenInstructorJudge`` as its ``llm``; the recorded value is ``MetricResult.value`` exactly
(float repr, "NaN", or the exception). ``received`` is the keyword arguments ``ascore`` got
(there is no ``SingleTurnSample`` on this path, so nothing is coerced before the metric).

Verified at Ragas 0.4.3: the collections API has the four context-precision classes,
``ContextRecall`` and ``Faithfulness``, and no ID-based or string-match (non-LLM) context
precision/recall classes, so those metrics are legacy-only there. When the running Ragas lacks
the collections module, a class, its ``ascore`` or the instructor LLM interface, the target's
result is an error record of type ``TargetUnavailable`` with the reason.

Importing this module does not import Ragas; running a target does.
"""

from __future__ import annotations

import importlib
import inspect
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
COLLECTIONS_MODULE = "ragas.metrics.collections"
PREFIX = "collections:"

Script = t.Callable[[t.Any, dict, PromptBook], None]


class TargetUnavailable(Exception):
    """The running Ragas has no such collections class (or no collections API at all)."""


class TargetNotScripted(TargetUnavailable):
    """The class exists but asks its judge through an interface the scripted judge cannot answer
    (an earlier collections API): it is not scored, and that is the harness's limit, not Ragas's."""


@dataclass(frozen=True)
class CollectionsTarget:
    """One ``ragas.metrics.collections`` class run through ``ascore`` for one of our metrics."""

    class_name: str
    metric: str
    fields_read: tuple[str, ...]  # also the keyword arguments of ``ascore``
    applies: t.Callable[[dict], bool]
    script: Script
    module: str = COLLECTIONS_MODULE

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.class_name}"


def _has_verdict(key: str) -> t.Callable[[dict], bool]:
    return lambda case: key in (case.get("verdicts") or {})


# -- judge scripts: the prompts the collections classes ask and the frozen replies --------
def _context_precision_script(verdict_key: str, answer_field: str) -> Script:
    """One prompt per retrieved context: (question, context, answer) -> {reason, verdict}.

    A raw reply at ``judge_replies.<verdict_key>.<i>`` replaces context i's reply verbatim; the
    stub hands it to the response model, which refuses it (there is no format-fix prompt on this
    path: retries belong to the instructor client, which the stub replaces)."""

    def script(metric: t.Any, case: dict, book: PromptBook) -> None:
        contexts = case.get("retrieved_contexts") or []
        raw_replies = (case.get("judge_replies") or {}).get(verdict_key) or {}
        for i, label in enumerate(case["verdicts"][verdict_key]):
            context = contexts[i] if i < len(contexts) else f"<no retrieved_contexts[{i}]>"
            prompt_input = {"question": case.get("user_input"), "context": context,
                            "answer": case.get(answer_field)}
            if str(i) in raw_replies:  # a raw (e.g. malformed) reply: the response model refuses
                book.expect_raw("context_precision", metric.prompt.instruction, prompt_input,
                                raw_replies[str(i)], label=f"judge_replies.{verdict_key}.{i}")
                return  # ascore raises there; no later context is asked
            book.expect("context_precision", metric.prompt.instruction, prompt_input,
                        {"reason": FROZEN_REASON, "verdict": label},
                        label=f"verdicts.{verdict_key}[{i}]")

    return script


def _context_recall_script(metric: t.Any, case: dict, book: PromptBook) -> None:
    """One prompt: (question, joined contexts, reference) -> {classifications: [...]}."""
    book.expect(
        "context_recall_classification", metric.prompt.instruction,
        {"question": case.get("user_input"),
         "context": "\n".join(case.get("retrieved_contexts") or []),
         "answer": case.get("reference")},
        {"classifications": [
            {"statement": c["statement"], "reason": FROZEN_REASON, "attributed": c["attributed"]}
            for c in case["verdicts"]["context_recall"]]},
        label="verdicts.context_recall",
    )


def _faithfulness_script(metric: t.Any, case: dict, book: PromptBook) -> None:
    """Statements (question, response) -> {statements}; then, only when there is at least one
    statement, NLI (joined contexts, statements) -> {statements: [verdicts]}."""
    claims = case["verdicts"]["faithfulness"]
    statements = [c["statement"] for c in claims]
    book.expect(
        "statement_generator", metric.statement_generator_prompt.instruction,
        {"question": case.get("user_input"), "answer": case.get("response")},
        {"statements": statements},
        label="verdicts.faithfulness (statements)",
    )
    if statements:
        book.expect(
            "nli_statements", metric.nli_statement_prompt.instruction,
            {"context": "\n".join(case.get("retrieved_contexts") or []), "statements": statements},
            {"statements": [
                {"statement": c["statement"], "reason": FROZEN_REASON, "verdict": c["verdict"]}
                for c in claims]},
            label="verdicts.faithfulness (verdicts)",
        )


_WITH_REF = ("user_input", "retrieved_contexts", "reference")
_WITHOUT_REF = ("user_input", "retrieved_contexts", "response")
_CPR = "context_precision_with_reference"
_CPN = "context_precision_without_reference"

COLLECTIONS_TARGETS: tuple[CollectionsTarget, ...] = (
    CollectionsTarget("ContextPrecisionWithReference", _CPR, _WITH_REF, _has_verdict(_CPR),
                      _context_precision_script(_CPR, "reference")),
    CollectionsTarget("ContextPrecision", _CPR, _WITH_REF, _has_verdict(_CPR),
                      _context_precision_script(_CPR, "reference")),
    CollectionsTarget("ContextPrecisionWithoutReference", _CPN, _WITHOUT_REF, _has_verdict(_CPN),
                      _context_precision_script(_CPN, "response")),
    CollectionsTarget("ContextUtilization", _CPN, _WITHOUT_REF, _has_verdict(_CPN),
                      _context_precision_script(_CPN, "response")),
    CollectionsTarget("ContextRecall", "context_recall", _WITH_REF, _has_verdict("context_recall"),
                      _context_recall_script),
    CollectionsTarget("Faithfulness", "faithfulness", ("user_input", "response", "retrieved_contexts"),
                      _has_verdict("faithfulness"), _faithfulness_script),
)

COLLECTIONS_TARGETS_BY_NAME = {target.name: target for target in COLLECTIONS_TARGETS}


def resolve_class(target: CollectionsTarget) -> type:
    """The class as a user imports it (``ragas.metrics.collections.X``), with an async ``ascore``."""
    try:
        module = importlib.import_module(target.module)
    except ImportError as exc:
        raise TargetUnavailable(
            f"this Ragas has no collections API ({target.module} cannot be imported: "
            f"{type(exc).__name__}: {exc})") from None
    cls = getattr(module, target.class_name, None)
    if not isinstance(cls, type):
        raise TargetUnavailable(f"this Ragas has no {target.module}.{target.class_name}")
    if not inspect.iscoroutinefunction(getattr(cls, "ascore", None)):
        raise TargetUnavailable(f"{target.module}.{target.class_name} has no async ascore() method")
    return cls


def _judge_class() -> type:
    """``FrozenInstructorJudge``, imported on first use (it needs Ragas's instructor LLM interface)."""
    try:
        if __package__:
            from .probe_collections_stub import FrozenInstructorJudge
        else:
            from probe_collections_stub import FrozenInstructorJudge  # type: ignore[no-redef]
    except ImportError as exc:
        raise TargetUnavailable(
            f"this Ragas has no instructor LLM interface (ragas.llms.base.InstructorBaseRagasLLM): {exc}"
        ) from None
    return FrozenInstructorJudge


def _metric_value(result: t.Any) -> object:
    """``MetricResult.value`` exactly (a bare number is taken as is)."""
    return encode_score(result.value if hasattr(result, "value") else result)


async def run_collections_target(target: CollectionsTarget, case: dict) -> dict:
    """Score one case with one collections target; every failure becomes the result's error value."""
    result = new_result(case, target, "collections")
    book = PromptBook()
    judge = None
    inputs = {f: case[f] for f in target.fields_read if f in case}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cls = resolve_class(target)
            result["ragas_class"] = f"{cls.__module__}.{cls.__qualname__}"
            judge = _judge_class()(book)
            metric = cls(llm=judge)
            try:
                target.script(metric, case, book)
            except AttributeError as exc:
                # An earlier collections API (e.g. 0.3.x) lays its prompts out differently: the
                # scripted judge cannot answer it, so the class is not scored here (not a Ragas error).
                raise TargetNotScripted(f"{cls.__qualname__} has no prompt interface the scripted judge "
                                        f"knows ({exc})") from None
            result["expected_prompts"] = book.expected_count
            result["received"] = {f: jsonable(v) for f, v in inputs.items()}
            value = _metric_value(await metric.ascore(**inputs))
        except TargetUnavailable as exc:
            value = error_record(exc)
        except Exception as exc:  # noqa: BLE001 - every failure is a recorded result
            value = (error_record(StubMismatch("; ".join(book.problems)))
                     if book.problems else error_record(exc))
        else:
            problems = book.problems + book.unasked() + (judge.rejected if judge else [])
            if problems:
                value = error_record(StubMismatch("; ".join(problems)))
    result["value"] = value
    result["prompts"] = len(book.asked)
    result["warnings"] = encode_warnings(caught)
    return result
