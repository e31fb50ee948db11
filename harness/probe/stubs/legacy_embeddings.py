"""The frozen, content-keyed embedding model for a Ragas without the modern embedding interface
(no ``ragas.embeddings.base.BaseRagasEmbedding``: Ragas 0.1.x to 0.2.x).

Those releases' classes take a legacy ``BaseRagasEmbeddings`` (langchain-style: ``embed_query`` /
``embed_documents`` and their async forms; ``embed_text`` / ``embed_texts`` are ASYNC there and call
``aembed_documents`` through the run config's retry). The vectors come from the case's ``embeddings``
table exactly as in ``stubs.embeddings``; a text it does not hold raises ``LookupError``. One
attempt per call, as the scripted judge: a missing vector must surface, not be retried.

Import only after RAGAS_DO_NOT_TRACK is set (it imports Ragas).
"""

from __future__ import annotations

import typing as t

from ragas.embeddings.base import BaseRagasEmbeddings
from ragas.run_config import RunConfig

NO_RETRY = RunConfig(max_retries=1, max_wait=0)


class LegacyFrozenEmbeddings(BaseRagasEmbeddings):
    def __init__(self, vectors: t.Mapping[str, t.Sequence[float]]):
        super().__init__()
        self.run_config = NO_RETRY
        self.vectors = {text: [float(x) for x in vector] for text, vector in vectors.items()}

    def set_run_config(self, run_config: RunConfig) -> None:  # keep one attempt per call
        self.run_config = NO_RETRY

    def embed_query(self, text: str) -> list[float]:
        try:
            return list(self.vectors[text])
        except KeyError:
            raise LookupError(f"no frozen embedding for the text {text!r} (case key embeddings)") from None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)
