"""The reference, the registry and the loader work without Ragas installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys

    class BlockRagas:
        def find_spec(self, name, path=None, target=None):
            if name == "ragas" or name.startswith("ragas."):
                raise ImportError("ragas is blocked for this test")
            return None

    sys.meta_path.insert(0, BlockRagas())
    try:
        import ragas  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("the blocker did not block ragas")

    import ragas_compat.metrics.registry, ragas_compat.cases, ragas_compat.compare.audit, ragas_compat.report.json_report
    from fractions import Fraction

    suite = ragas_compat.cases.load_default_suite()
    out = ragas_compat.metrics.registry.metric("context_precision_with_reference").outcome(suite.case("cp-worked-example"))
    assert out.value == Fraction(5, 6), out
    count = sum(1 for c in suite.cases for m in ragas_compat.metrics.registry.all_metrics() if m.applies_to(c) and m.outcome(c))
    assert not any(name == "ragas" or name.startswith("ragas.") for name in sys.modules)
    print("ok", count)
""")


@pytest.mark.slow
def test_reference_registry_and_loader_import_and_run_without_ragas():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")
    assert int(result.stdout.split()[1]) > 100
