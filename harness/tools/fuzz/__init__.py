"""Differential fuzzing: generated cases through Ragas (probe) and the reference, every pair classified."""
