"""The version matrix: the same frozen cases through several Ragas releases, and what drifted."""
