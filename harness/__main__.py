"""``python -m harness`` is ``ragas-compat``."""

from harness.cli.app import main

main()
