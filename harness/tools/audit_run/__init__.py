"""``ragas-compat audit-run``: a Ragas run someone else made, from its saved ``ragas_traces`` to a verdict."""
