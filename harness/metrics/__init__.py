"""Metrics: one module per metric family (reference formulas and its MetricSpec) and the registry."""
