"""Benchmarks run inside the Ragas environment: the probe vs a minimal stub loop (``benchmark``), and
the stub loop alone (``stub_loop``)."""
