"""A scripted judge for Ragas's legacy metric API: a ``BaseRagasLLM`` answering from a PromptBook.

Import only after RAGAS_DO_NOT_TRACK is set (it imports Ragas).
"""

from __future__ import annotations

import typing as t

from langchain_core.outputs import Generation, LLMResult
from ragas.llms.base import BaseRagasLLM
from ragas.run_config import RunConfig

if t.TYPE_CHECKING:
    from ..judge.prompt_book import PromptBook

__all__ = ["FrozenJudgeLLM"]

# One attempt per call: a stub mismatch must surface, not be retried with back-off.
# Shared: the stub never uses the config's random generator.
NO_RETRY = RunConfig(max_retries=1, max_wait=0)


class FrozenJudgeLLM(BaseRagasLLM):
    """Answers each rendered prompt with its frozen reply, looked up by content."""

    def __init__(self, book: PromptBook) -> None:
        super().__init__(run_config=NO_RETRY)
        self.book = book

    def set_run_config(self, run_config: RunConfig) -> None:  # keep one attempt per call
        self.run_config = NO_RETRY

    def _reply(self, prompt: t.Any, n: int) -> LLMResult:
        """The call's ``n`` generations: a prompt's frozen reply ``n`` times, or its first ``n``
        frozen samples (``PromptBook.expect_samples``)."""
        replies = self.book.prompt_generations(prompt, max(n, 1))
        return LLMResult(generations=[[Generation(text=reply) for reply in replies]])

    def generate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None) -> LLMResult:
        return self._reply(prompt, n)

    async def agenerate_text(self, prompt, n=1, temperature=0.01, stop=None,
                             callbacks=None) -> LLMResult:
        return self._reply(prompt, n)

    def is_finished(self, response: LLMResult) -> bool:
        return True
