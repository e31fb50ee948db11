"""Record a live judge while Ragas scores with it (imports Ragas and LangChain; the recording probe only).

- :class:`RecordingLLM` is a ``BaseRagasLLM`` around the user's judge (a Ragas LLM, or a LangChain
  chat model wrapped in Ragas's own ``LangchainLLMWrapper``). Every text generation goes to that
  judge unchanged; the recorder keeps the reply text of each attempt (and the exception of a failed
  attempt). Ragas's retries (``run_config``) are the judge's own: the recorder mirrors its run config.
- :func:`capture_prompts` wraps ``PydanticPrompt.generate_multiple`` so that each prompt a metric
  asks is recorded with the output *Ragas's own output model parsed* (``model_dump()``: what the
  metric scored) or the exception the parse raised, and the raw replies the judge gave for it
  (a "fix output format" retry prompt is kept inside the prompt it repairs).
- Collections API (``ragas.metrics.collections``): :class:`RecordingInstructorLLM` is an
  ``InstructorBaseRagasLLM`` around the user's instructor LLM (``llm_factory``); each
  ``agenerate(prompt, response_model)`` is one prompt call, with the response model instructor
  parsed (what the metric scored) or the exception. Instructor parses the reply itself, so the raw
  reply text is taken where it arrives: :func:`keep_http_reply` is an ``httpx`` response hook on the
  OpenAI client's HTTP client that keeps each response's message content (and each HTTP error
  status as a failed attempt).

Budget (``..budget``, the request's): every judge call a wrapper passes on is counted per (sample,
metric) with its prompt's characters; the call past the judge-call cap or the prompt-size cap raises
``OverBudget`` before it reaches the judge. A reply over the probe's reply cap
(``reply_cap.REPLY_CAP``) never reaches Ragas: :func:`reply_too_large` records the refused attempt.

What belongs to which (sample, metric) scoring travels in a ``contextvars`` variable, so samples
scored concurrently never mix.

Import only after RAGAS_DO_NOT_TRACK is set and the network guard is installed.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import typing as t
from dataclasses import dataclass, field

from ragas.llms.base import BaseRagasLLM
from ragas.prompt.pydantic_prompt import PydanticPrompt

from ..budget import BUDGET, OverBudget
from ..protocol import error_record, jsonable

FIX_KIND = "fix_output_format"


@dataclass
class PromptCall:
    """One prompt a metric asked (with any format-fix prompts Ragas asked to repair its reply)."""

    kind: str
    replies: list[str] = field(default_factory=list)          # every reply text, in order (fixes included)
    failed_attempts: list[dict] = field(default_factory=list)  # exceptions of attempts Ragas retried or gave up on
    output: list[t.Any] | None = None                          # the parsed output models, model_dump()
    error: dict | None = None                                  # what parsing (or the judge) raised

    def to_json(self) -> dict:
        out: dict[str, t.Any] = {"kind": self.kind, "replies": self.replies}
        if self.failed_attempts:
            out["failed_attempts"] = self.failed_attempts
        if self.output is not None:
            out["output"] = self.output
        if self.error is not None:
            out["error"] = self.error["error"]
        return out


@dataclass
class Scoring:
    """What one (sample, metric) scoring asked its judge."""

    kinds: dict[int, str]                       # id(prompt object of the metric) -> prompt kind
    calls: list[PromptCall] = field(default_factory=list)
    stray_replies: list[str] = field(default_factory=list)  # generations outside any prompt (none expected)
    transport_errors: list[dict] = field(default_factory=list)
    judge_calls: int = 0                        # calls passed on to the judge (the budget counts them)
    prompt_chars: int = 0                       # characters of their prompts
    too_large: list[dict] = field(default_factory=list)  # attempts whose reply was over the reply cap

    def count_call(self, prompt_chars: int) -> None:
        """One more judge call of ``prompt_chars`` characters; OverBudget (Ragas's: no origin) past the
        request's judge-call or prompt-size cap, before the call is made."""
        self.judge_calls += 1
        self.prompt_chars += prompt_chars
        if self.judge_calls > BUDGET["judge_calls"]:
            raise OverBudget("judge calls", self.judge_calls)
        if self.prompt_chars > BUDGET["judge_chars"]:
            raise OverBudget("prompt size", self.judge_calls, None, self.prompt_chars)


_SCORING: contextvars.ContextVar[Scoring | None] = contextvars.ContextVar("ragas_compat_scoring", default=None)
_CALL: contextvars.ContextVar[PromptCall | None] = contextvars.ContextVar("ragas_compat_call", default=None)


def start_scoring(kinds: dict[int, str]) -> Scoring:
    """Begin recording for the current task (and the tasks it spawns)."""
    scoring = Scoring(kinds)
    _SCORING.set(scoring)
    _CALL.set(None)
    return scoring


def _count(prompt: t.Any) -> None:
    scoring = _SCORING.get()
    if scoring is not None:
        text = prompt if isinstance(prompt, str) else getattr(prompt, "to_string", lambda: str(prompt))()
        scoring.count_call(len(text))


def reply_too_large(exc: BaseException) -> None:
    """``reply_cap``'s listener: an HTTP attempt whose reply was over the cap is a failed attempt of the
    call being asked (a transport failure, as the client sees it) and is remembered by the scoring."""
    record = {"type": type(exc).__name__, "message": str(exc)}
    call, scoring = _CALL.get(), _SCORING.get()
    if call is not None:
        call.failed_attempts.append(record)
    if scoring is not None:
        scoring.transport_errors.append(record)
        scoring.too_large.append(record)


def capture_prompts() -> None:
    """Wrap ``PydanticPrompt.generate_multiple`` (once) to record each prompt's parsed output."""
    original = PydanticPrompt.generate_multiple
    if getattr(original, "_ragas_compat_recorder", False):
        return

    async def generate_multiple(self, *args: t.Any, **kwargs: t.Any) -> t.Any:
        scoring, parent = _SCORING.get(), _CALL.get()
        if scoring is None or parent is not None:  # not recording, or a format fix inside a prompt
            return await original(self, *args, **kwargs)
        call = PromptCall(kind=scoring.kinds.get(id(self), type(self).__name__))
        scoring.calls.append(call)
        token = _CALL.set(call)
        try:
            outputs = await original(self, *args, **kwargs)
        except Exception as exc:
            call.error = error_record(exc)
            raise
        finally:
            _CALL.reset(token)
        call.output = [jsonable(o.model_dump()) if hasattr(o, "model_dump") else jsonable(o) for o in outputs]
        return outputs

    generate_multiple._ragas_compat_recorder = True  # type: ignore[attr-defined]
    PydanticPrompt.generate_multiple = generate_multiple  # type: ignore[method-assign]


class RecordingLLM(BaseRagasLLM):
    """The user's judge, unchanged, with every reply recorded into the current scoring."""

    def __init__(self, inner: BaseRagasLLM) -> None:
        super().__init__(run_config=inner.run_config)
        self.inner = inner

    def set_run_config(self, run_config: t.Any) -> None:
        self.run_config = run_config
        self.inner.set_run_config(run_config)

    def _keep(self, result: t.Any) -> None:
        texts = [g.text for gens in (result.generations or []) for g in gens]
        call, scoring = _CALL.get(), _SCORING.get()
        if call is not None:
            call.replies.extend(texts)
        elif scoring is not None:
            scoring.stray_replies.extend(texts)

    def _failed(self, exc: BaseException) -> None:
        record = error_record(exc)["error"]
        call, scoring = _CALL.get(), _SCORING.get()
        if call is not None:
            call.failed_attempts.append(record)
        if scoring is not None:
            scoring.transport_errors.append(record)

    @contextlib.contextmanager
    def _attempt(self) -> t.Iterator[None]:
        """One judge call: a failure is recorded as a failed attempt; a MemoryError (over the memory budget:
        no retry of Ragas's can help) is the case's memory budget, raised past Ragas's retries."""
        try:
            yield
        except MemoryError:
            raise OverBudget("memory") from None
        except Exception as exc:
            self._failed(exc)
            raise

    def generate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):
        _count(prompt)
        with self._attempt():
            result = self.inner.generate_text(prompt, n=n, temperature=temperature, stop=stop, callbacks=callbacks)
        self._keep(result)
        return result

    async def agenerate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):
        _count(prompt)
        with self._attempt():
            result = await self.inner.agenerate_text(prompt, n=n, temperature=temperature, stop=stop,
                                                     callbacks=callbacks)
        self._keep(result)
        return result

    def is_finished(self, response: t.Any) -> bool:
        return self.inner.is_finished(response)


# -- the collections API ---------------------------------------------------------------------------
# the response models of the recordable collections classes -> the prompt kind (as for the legacy prompts)
KIND_BY_RESPONSE_MODEL = {
    "ContextPrecisionOutput": "context_precision",
    "ContextRecallOutput": "context_recall_classification",
    "StatementGeneratorOutput": "statement_generator",
    "NLIStatementOutput": "nli_statements",
}


def _record_reply(text: str) -> None:
    call, scoring = _CALL.get(), _SCORING.get()
    if call is not None:
        call.replies.append(text)
    elif scoring is not None:
        scoring.stray_replies.append(text)


async def keep_http_reply(response: t.Any) -> None:
    """``httpx`` response event hook: keep the judge's reply text (or the failed attempt)."""
    if _SCORING.get() is None:
        return
    await response.aread()
    if response.status_code >= 400:
        record = {"type": f"HTTP {response.status_code}", "message": response.text[:500]}
        call, scoring = _CALL.get(), _SCORING.get()
        if call is not None:
            call.failed_attempts.append(record)
        scoring.transport_errors.append(record)
        return
    try:
        body = json.loads(response.content)
        texts = [_reply_text(choice["message"]) for choice in body["choices"]]
    except (ValueError, KeyError, TypeError):
        texts = [response.text]
    for text in texts:
        _record_reply(text if isinstance(text, str) else json.dumps(text))


def _reply_text(message: dict) -> t.Any:
    """The judge's reply in a chat-completions message: its content, or, when the request asked for a tool
    or function call (instructor's TOOLS / FUNCTIONS modes, which ``llm_factory`` uses before Ragas 0.4.3),
    the call's arguments, the text instructor parses there."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    calls = message.get("tool_calls") or []
    if calls and isinstance(calls[0], dict) and isinstance((calls[0].get("function") or {}).get("arguments"), str):
        return calls[0]["function"]["arguments"]
    function = message.get("function_call")
    if isinstance(function, dict) and isinstance(function.get("arguments"), str):
        return function["arguments"]
    return content


try:
    from ragas.llms.base import InstructorBaseRagasLLM
except ImportError:  # a Ragas without the collections API: nothing to record there
    InstructorBaseRagasLLM = None  # type: ignore[assignment,misc]

if InstructorBaseRagasLLM is not None:
    class RecordingInstructorLLM(InstructorBaseRagasLLM):  # type: ignore[valid-type,misc]
        """The user's instructor LLM, unchanged; each call recorded with what instructor parsed."""

        def __init__(self, inner: t.Any) -> None:
            self.inner = inner

        def _call(self, response_model: t.Any) -> PromptCall | None:
            scoring = _SCORING.get()
            if scoring is None:
                return None
            call = PromptCall(kind=KIND_BY_RESPONSE_MODEL.get(response_model.__name__, response_model.__name__))
            scoring.calls.append(call)
            return call

        @staticmethod
        def _parsed(call: PromptCall | None, result: t.Any) -> t.Any:
            if call is not None:
                call.output = [jsonable(result.model_dump()) if hasattr(result, "model_dump") else jsonable(result)]
            return result

        @contextlib.contextmanager
        def _calling(self, call: t.Any) -> t.Iterator[None]:
            """One structured judge call as ``call`` (the current call while it runs): its error recorded;
            a MemoryError is the case's memory budget, raised past Ragas's retries."""
            token = _CALL.set(call)
            try:
                yield
            except MemoryError:
                raise OverBudget("memory") from None
            except Exception as exc:
                if call is not None:
                    call.error = error_record(exc)
                raise
            finally:
                _CALL.reset(token)

        def generate(self, prompt: str, response_model: t.Any) -> t.Any:
            _count(prompt)
            call = self._call(response_model)
            with self._calling(call):
                result = self.inner.generate(prompt, response_model)
            return self._parsed(call, result)

        async def agenerate(self, prompt: str, response_model: t.Any) -> t.Any:
            _count(prompt)
            call = self._call(response_model)
            with self._calling(call):
                result = await self.inner.agenerate(prompt, response_model)
            return self._parsed(call, result)


def observe_http(llm: t.Any) -> bool:
    """Hook :func:`keep_http_reply` into the HTTP client under an instructor LLM (``llm.client`` is
    instructor's client, its ``client`` the OpenAI client, whose ``_client`` is an ``httpx`` client);
    False when there is none to observe."""
    openai_client = getattr(getattr(llm, "client", None), "client", None)
    http = getattr(openai_client, "_client", None)
    hooks = getattr(http, "event_hooks", None)
    if not isinstance(hooks, dict) or not isinstance(hooks.get("response"), list):
        return False
    if keep_http_reply not in hooks["response"]:
        hooks["response"].append(keep_http_reply)
    return True
