"""``python -m harness`` is ``ragas-compat``."""

from harness.launch import main

main()
