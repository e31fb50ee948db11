"""The frozen models handed to Ragas: LLM judges answering from a prompt book (legacy and collections
APIs) and content-keyed embedding models (modern and legacy interfaces). Each module imports Ragas."""
