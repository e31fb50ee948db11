"""``python -m ragas_compat`` is ``ragas-compat``."""

from ragas_compat.launch import main

main()
