"""The Ragas pin: the manifest in ``pinned/``, git blob ids, and resolving which Ragas a run uses."""
