"""The Ragas probe: a stdlib + Ragas script run as a subprocess (see run_probe.py)."""
