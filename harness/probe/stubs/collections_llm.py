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

Import only after RAGAS_DO_NOT_TRACK is set (it imports Ragas).
"""

from __future__ import annotations

import typing as t

from pydantic import BaseModel, ValidationError
from ragas.llms.base import InstructorBaseRagasLLM

if t.TYPE_CHECKING:
    from ..judge.prompt_book import PromptBook

__all__ = ["FrozenInstructorJudge"]

Model = t.TypeVar("Model", bound=BaseModel)


class FrozenInstructorJudge(InstructorBaseRagasLLM):
    """Answers each prompt with its frozen reply, parsed into the requested response model."""

    def __init__(self, book: PromptBook) -> None:
        self.book = book
        self.rejected: list[str] = []  # one line per reply the response model refused

    def _reply(self, prompt: str, response_model: type[Model]) -> Model:
        text = self.book.answer_prompt(prompt)
        try:
            return response_model.model_validate_json(text)
        except ValidationError as exc:
            # a raw-prompt script (or a per-call script, case key judge_calls) scripts its rejected replies
            if not self.book.scripted_text(prompt) and not self.book.last_scripted:
                self.rejected.append(f"{response_model.__name__} refused the frozen reply {text}: {exc}")
            raise

    def generate(self, prompt: str, response_model: type[Model]) -> Model:
        return self._reply(prompt, response_model)

    async def agenerate(self, prompt: str, response_model: type[Model]) -> Model:
        return self._reply(prompt, response_model)
