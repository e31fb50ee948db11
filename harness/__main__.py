"""``python -m harness`` is ``ragas-compat``."""

from harness.cli.launch import main

main()
