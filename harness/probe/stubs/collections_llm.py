"""A scripted judge for Ragas's collections API: an ``InstructorBaseRagasLLM`` answering from a PromptBook.

The collections metrics (``ragas.metrics.collections``) call ``await llm.agenerate(prompt,
response_model)`` with a rendered ``BasePrompt`` string and expect an instance of
``response_model`` back. The stub looks the prompt up by content in a PromptBook (the same
book, and the same layout, as the legacy judge), and validates the frozen reply with
``response_model.model_validate_json``. Verdict values reach pydantic AS GIVEN (2 stays 2,
``true`` stays ``true``): whatever the response model does with them is Ragas's behaviour.
When pydantic rejects a reply, the ``ValidationError`` propagates (the target records it as
the result's error) and is also kept in :attr:`FrozenInstructorJudge.rejected`, so a rejection
is reported even if Ragas swallowed the exception (not for a prompt the book knows by its whole
text, ``PromptBook.expect_text``, nor a reply from a per-call script, ``PromptBook.script_calls``: their
unusable replies are scripted on purpose).

A call the case scripts call for call (a per-call script answered it: a case's ``judge_calls``, which
``record`` writes from the judge's raw replies when a live call was re-asked) goes through Ragas's own
instructor path instead (``instructor_path``): instructor parses the scripted raw text as in a live run
(code fence, strict validation) and, when it refuses it, re-asks; each re-ask takes the book's next
answer for the prompt (the script's next entry, else the frozen reply), so a recorded re-ask replays
call for call and a reply that is never valid ends in instructor's own ``InstructorRetryException``.

Import only after RAGAS_DO_NOT_TRACK is set (it imports Ragas).
"""

from __future__ import annotations

import typing as t

from pydantic import BaseModel, ValidationError
from ragas.llms.base import InstructorBaseRagasLLM

from . import instructor_path

if t.TYPE_CHECKING:
    from ..judge.prompt_book import PromptBook

__all__ = ["FrozenInstructorJudge"]

Model = t.TypeVar("Model", bound=BaseModel)


class FrozenInstructorJudge(InstructorBaseRagasLLM):
    """Answers each prompt with its frozen reply, parsed into the requested response model."""

    def __init__(self, book: PromptBook) -> None:
        self.book = book
        self.rejected: list[str] = []  # one line per reply the response model refused

    def _validated(self, prompt: str, response_model: type[Model], text: str) -> Model:
        try:
            return response_model.model_validate_json(text)
        except ValidationError as exc:
            # a raw-prompt script (or a per-call script, case key judge_calls) scripts its rejected replies
            if not self.book.scripted_text(prompt) and not self.book.last_scripted:
                self.rejected.append(f"{response_model.__name__} refused the frozen reply {text}: {exc}")
            raise

    def _again(self, prompt: str) -> t.Callable[[], str]:
        return lambda: self.book.answer_prompt(prompt)

    def generate(self, prompt: str, response_model: type[Model]) -> Model:
        text = self.book.answer_prompt(prompt)
        if self.book.last_scripted and instructor_path.available():
            return instructor_path.ask(prompt, response_model, text, self._again(prompt))
        return self._validated(prompt, response_model, text)

    async def agenerate(self, prompt: str, response_model: type[Model]) -> Model:
        text = self.book.answer_prompt(prompt)
        if self.book.last_scripted and instructor_path.available():
            return await instructor_path.ask_async(prompt, response_model, text, self._again(prompt))
        return self._validated(prompt, response_model, text)

    # -- the client a collections class may call directly -----------------------------------------
    # Ragas 0.4.3's collections MultiModalFaithfulness / MultiModalRelevance bypass agenerate: they call
    # ``self.llm.client.chat.completions.create(model=self.llm.model, messages=[...], response_model=...,
    # **self.llm._map_provider_params())`` (InstructorLLM's attributes) with text and image content blocks.
    # The judge answers that call from the same book, the prompt being the messages' canonical JSON
    # (``judge.multimodal.messages_text``, which the script expects by its whole text).
    provider = "openai"  # the branch a class reading self.llm.provider takes: chat.completions.create
    model = "ragas-compat-frozen-judge"

    def _map_provider_params(self) -> dict[str, t.Any]:
        return {}

    @property
    def client(self) -> _Client:
        return _Client(self)


class _Completions:
    def __init__(self, judge: FrozenInstructorJudge) -> None:
        self._judge = judge

    async def create(self, *, messages: list, response_model: type[Model], **_: t.Any) -> Model:
        from ..judge.multimodal import messages_text

        prompt = messages_text(messages)
        return self._judge._validated(prompt, response_model, self._judge.book.answer_prompt(prompt))


class _Chat:
    def __init__(self, judge: FrozenInstructorJudge) -> None:
        self.completions = _Completions(judge)


class _Client:
    """The instructor-patched chat client's one call a collections class makes directly."""

    def __init__(self, judge: FrozenInstructorJudge) -> None:
        self.chat = _Chat(judge)
