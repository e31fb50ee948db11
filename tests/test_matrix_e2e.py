"""End to end: build one real older Ragas release's virtualenv and find a known drift against 0.4.3.

Marked ``matrix_e2e`` (needs PyPI the first time). The environment is cached across runs in
``$RAGAS_COMPAT_MATRIX_CACHE`` or ``~/.cache/ragas-compat/envs`` (cache that folder in CI); a cold build
installs under ``pinned/matrix-locks/<version>.txt`` so pip does not backtrack. 0.4.3 is the project's
own interpreter (``pip install -e '.[ragas]'``), so only one environment is ever built here.

Known drift between 0.2.15 and 0.4.3: ``IDBasedContextPrecision`` / ``IDBasedContextRecall`` do not
exist in 0.2.15 (added in 0.3) - its ``SingleTurnSample`` has no ``retrieved_context_ids`` either -
while the AP loop with its ``+1e-10`` is unchanged, so the context-precision value is bit-identical.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

import pytest

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.tools.matrix.drift import build_matrix
from ragas_compat.tools.matrix.environments import Environment, default_cache_dir, ensure_environments, parse_entries
from ragas_compat.tools.matrix.run import run_matrix

pytestmark = pytest.mark.slow  # builds a real Ragas release's virtualenv

E2E_RELEASE = "0.2.15"
CASES = ("cp-worked-example", "edge-empty-retrieval")


@pytest.mark.matrix_e2e
def test_older_release_shows_the_missing_id_classes_against_the_pin():
    try:
        pinned = importlib.metadata.version("ragas")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the project interpreter has no Ragas (pip install -e '.[ragas]')")
    if pinned != "0.4.3":
        pytest.skip(f"the project interpreter has Ragas {pinned}, not 0.4.3")
    cache = Path(os.environ.get("RAGAS_COMPAT_MATRIX_CACHE") or default_cache_dir())
    [old] = ensure_environments(parse_entries(E2E_RELEASE), cache_dir=cache, jobs=1)
    assert old.available, old.error
    pin = Environment("0.4.3", "release", "0.4.3", sys.executable, status="reused")
    full = load_default_suite()
    suite = Suite(full.name, full.source, tuple(full.case(c) for c in CASES))

    columns, _ = run_matrix([old, pin], suite, jobs=2)
    assert [c.available for c in columns] == [True, True], [c.error for c in columns]
    assert [c.version for c in columns] == [E2E_RELEASE, "0.4.3"]
    matrix = build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": len(suite.cases)})

    added = {(d.kind, target, case) for d in matrix.drifts for case, target in d.rows}
    for target in ("legacy:IDBasedContextPrecision", "legacy:IDBasedContextRecall"):
        assert ("class_added", target, "cp-worked-example") in added
    cp = next(r for r in matrix.rows
              if (r.case_id, r.target) == ("cp-worked-example", "legacy:LLMContextPrecisionWithReference"))
    # the same value; only the import path's deprecation warning is new in 0.4.3, named by its drift rule
    [(change,)] = cp.changes
    assert (change.kind, change.rule) == ("upstream_change", "legacy-imports-deprecated-2519")
    assert "(+ DeprecationWarning: Importing " in change.text
    assert cp.cells[0].classification == cp.cells[1].classification == "epsilon"
    old_api = matrix.api["legacy:NonLLMContextRecall"][0]
    assert old_api.fields_accepted == ("retrieved_contexts", "reference_contexts") and not old_api.fields_dropped
