"""ragas-compat: run Ragas's own scoring classes and reference implementations on
identical frozen judge verdicts, and classify every difference."""

__version__ = "0.1.0"
