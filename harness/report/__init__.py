"""Audit reports: ``report.json`` (machines), ``report.md`` (reviewers), ``junit.xml`` (CI)."""
