"""Ragas's own instructor path, run for real on scripted raw replies (collections API; imports Ragas).

Ragas's collections classes ask ``await llm.agenerate(prompt, response_model)`` of the LLM that
``llm_factory`` builds: an ``InstructorLLM`` over instructor's patched OpenAI client (JSON mode).
Instructor, not Ragas, parses the reply: it takes the JSON out of a code fence, validates it strictly
against the response model and, when that fails (``ValidationError`` or ``JSONDecodeError``), asks
again: it appends the refused reply as an assistant message and a user message quoting the error,
and calls the model once more, up to its ``max_retries`` (Ragas passes none: instructor's default),
then raises ``InstructorRetryException``. That re-ask is the collections API's only retry of an
unusable reply (the legacy API's is Ragas's "fix output format" prompt, which a per-call script
answers through the PromptBook as any prompt).

:func:`ask` and :func:`ask_async` run that real path: ``llm_factory`` over an OpenAI client whose
HTTP transport is an ``httpx.MockTransport`` (no socket is opened) answering each chat-completions
request with the next raw reply text the caller gives. The request's conversation says which attempt
it is (one assistant message per earlier reply), so attempt 0 is answered with ``first`` and each
re-ask by ``answer()`` (the PromptBook: the script's next entry for the prompt, else its frozen
reply), in the form the request's mode asks for (message content in JSON mode, which Ragas 0.4.3 uses;
the arguments of the one offered tool call in TOOLS mode, which earlier ``llm_factory`` releases use).
What instructor parses, re-asks and raises is then instructor's, as in a live run. A
``StubMismatch`` (or any error) raised by ``answer()`` inside the transport is re-raised as itself, not
as the OpenAI client's connection error.
"""

from __future__ import annotations

import json
import typing as t

__all__ = ["ask", "ask_async", "available"]

MODEL = "frozen-judge"
BASE_URL = "http://frozen-judge.invalid/v1"


class _Conversation:
    """The raw replies of one call, attempt by attempt, and what answering raised."""

    def __init__(self, prompt: str, first: str, answer: t.Callable[[], str]) -> None:
        self.prompt = prompt
        self.served = [first]
        self.answer = answer
        self.failure: BaseException | None = None

    def handle(self, request: t.Any) -> t.Any:
        import httpx

        body = json.loads(request.content or b"{}")
        messages = body.get("messages") or []
        attempt = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        try:
            asked = next((m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
            if asked != self.prompt:
                raise RuntimeError("instructor's request does not carry the prompt Ragas asked")
            while len(self.served) <= attempt:
                self.served.append(self.answer())
        except BaseException as exc:
            self.failure = exc
            raise
        return httpx.Response(200, json={
            "id": f"frozen-{attempt}", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": _message(body, self.served[attempt], attempt)}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})


def _message(body: dict, text: str, attempt: int) -> dict:
    """The assistant message carrying ``text`` as the request's mode asks for it: the arguments of a call of
    the one tool offered (instructor's TOOLS mode, Ragas 0.3.x-0.4.2's ``llm_factory``) or of the function
    (FUNCTIONS), else the message content (JSON mode, Ragas 0.4.3)."""
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict):
        name = (tools[0].get("function") or {}).get("name")
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call-{attempt}", "type": "function", "function": {"name": name, "arguments": text}}]}
    functions = body.get("functions")
    if isinstance(functions, list) and functions and isinstance(functions[0], dict):
        return {"role": "assistant", "content": None,
                "function_call": {"name": functions[0].get("name"), "arguments": text}}
    return {"role": "assistant", "content": text}


def available() -> bool:
    """True when this Ragas builds an instructor LLM with ``llm_factory`` over an OpenAI client."""
    try:
        import httpx  # noqa: F401
        import openai  # noqa: F401
        from ragas.llms import llm_factory  # noqa: F401
    except ImportError:
        return False
    return True


def _llm(conversation: _Conversation, is_async: bool) -> tuple[t.Any, t.Any]:
    import httpx
    import openai
    from ragas.llms import llm_factory

    transport = httpx.MockTransport(conversation.handle)
    if is_async:
        client: t.Any = openai.AsyncOpenAI(api_key="frozen", base_url=BASE_URL, max_retries=0,
                                           http_client=httpx.AsyncClient(transport=transport))
    else:
        client = openai.OpenAI(api_key="frozen", base_url=BASE_URL, max_retries=0,
                               http_client=httpx.Client(transport=transport))
    return llm_factory(MODEL, client=client), client


def _reraise(conversation: _Conversation, exc: BaseException) -> t.NoReturn:
    if conversation.failure is not None and conversation.failure is not exc:
        raise conversation.failure from None
    raise exc


async def ask_async(prompt: str, response_model: t.Any, first: str, answer: t.Callable[[], str]) -> t.Any:
    """``await InstructorLLM.agenerate(prompt, response_model)`` with ``first`` as the judge's reply, and
    ``answer()`` for each re-ask."""
    conversation = _Conversation(prompt, first, answer)
    llm, client = _llm(conversation, is_async=True)
    try:
        return await llm.agenerate(prompt, response_model)
    except Exception as exc:
        _reraise(conversation, exc)
    finally:
        await client.close()


def ask(prompt: str, response_model: t.Any, first: str, answer: t.Callable[[], str]) -> t.Any:
    """:func:`ask_async` for the synchronous ``InstructorLLM.generate``."""
    conversation = _Conversation(prompt, first, answer)
    llm, client = _llm(conversation, is_async=False)
    try:
        return llm.generate(prompt, response_model)
    except Exception as exc:
        _reraise(conversation, exc)
    finally:
        client.close()
