"""A frozen, content-keyed embedding model for the probe: the vector a case gives for each text.

Ragas's SemanticSimilarity (both APIs) embeds the reference and the response (an empty text as
" "), AnswerCorrectness the response and the reference, ResponseRelevancy the user input and the generated
questions; this model answers from the case's ``embeddings`` table and raises ``LookupError`` for a text
it does not hold, so no network and no model weights are involved. It is a modern
``BaseRagasEmbedding`` (the collections classes accept nothing else; the legacy class takes either).
"""

from __future__ import annotations

import typing as t

from ragas.embeddings.base import BaseRagasEmbedding


class FrozenEmbeddings(BaseRagasEmbedding):
    def __init__(self, vectors: t.Mapping[str, t.Sequence[float]]):
        super().__init__()
        self.vectors = {text: [float(x) for x in vector] for text, vector in vectors.items()}

    def embed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        try:
            return list(self.vectors[text])
        except KeyError:
            raise LookupError(f"no frozen embedding for the text {text!r} (case key embeddings)") from None

    async def aembed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        return self.embed_text(text)

    def embed_texts(self, texts: list[str], **kwargs: t.Any) -> list[list[float]]:
        return [self.embed_text(text) for text in texts]

    async def aembed_texts(self, texts: list[str], **kwargs: t.Any) -> list[list[float]]:
        return self.embed_texts(texts)

    # The legacy (langchain-style) names: legacy ResponseRelevancy calls embed_query / embed_documents,
    # which a modern BaseRagasEmbedding does not have (a user must pass a legacy BaseRagasEmbeddings there).
    def embed_query(self, text: str) -> list[float]:
        return self.embed_text(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_texts(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_text(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_texts(texts)
