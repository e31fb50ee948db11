"""``python -m harness`` is ``ragas-compat``."""

from harness.cli import main

main()
