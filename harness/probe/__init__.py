"""The Ragas probe: a stdlib + Ragas script run as a subprocess (see run_probe.py).

The host imports only ``probe_protocol`` from here (request/result/output documents, exit codes,
score encoding); the other modules run inside the probe process. Tests may read the target table
(``probe_targets.targets_by_metric()``), which imports no Ragas.
"""
