"""Shared fixtures. The markers (``slow``, ``wheel``, ``matrix_e2e``) are declared in pyproject.toml."""

from __future__ import annotations

pytest_plugins = ["pytester"]
