"""The judged metrics of issue 18 through the real Ragas classes of both APIs (the probe, the scripted
judge): the bundled worked examples reproduce their hand-computed values, and Ragas's known semantics
show exactly as the rules in pinned/expectations.toml describe them."""

from __future__ import annotations

import pytest
from bundled_probe import bundled_values

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

IDS = ("fc-worked-example", "fc-half-way-precision", "fc-zero-claims", "cer-repeated-entity",
       "ns-worked-example", "ns-zero-response-statements", "ns-zero-reference-statements")
TARGETS = [f"{api}:{cls}" for api in ("legacy", "collections") for cls in (
    "FactualCorrectness", "FactualCorrectness[mode=precision]", "FactualCorrectness[mode=recall]",
    "FactualCorrectness[beta=0.5]", "ContextEntityRecall", "NoiseSensitivity", "NoiseSensitivity[mode=irrelevant]")]


@pytest.fixture(scope="module")
def values():
    return bundled_values(IDS.__contains__, TARGETS)


@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_factual_correctness_worked_example_rounded_to_two_decimals(values, api):
    # P = 2/3, R = 1/2, F1 = 4/7, F(0.5) = 5/8 (a half-way value, rounded to even)
    assert values[("fc-worked-example", f"{api}:FactualCorrectness[mode=precision]")] == 0.67
    assert values[("fc-worked-example", f"{api}:FactualCorrectness[mode=recall]")] == 0.5
    assert values[("fc-worked-example", f"{api}:FactualCorrectness")] == 0.57
    assert values[("fc-worked-example", f"{api}:FactualCorrectness[beta=0.5]")] == 0.62


@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_factual_correctness_guard_rounds_three_eighths_down(values, api):
    assert values[("fc-half-way-precision", f"{api}:FactualCorrectness[mode=precision]")] == 0.37


@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_factual_correctness_zero_claims_is_zero(values, api):
    for cls in ("FactualCorrectness", "FactualCorrectness[mode=precision]", "FactualCorrectness[mode=recall]"):
        assert values[("fc-zero-claims", f"{api}:{cls}")] == 0.0


def test_context_entity_recall_apis_disagree_on_a_repeated_entity(values):
    assert values[("cer-repeated-entity", "legacy:ContextEntityRecall")] == 1 / (3 + 1e-8)
    assert values[("cer-repeated-entity", "collections:ContextEntityRecall")] == 1 / (2 + 1e-8)


@pytest.mark.parametrize("api", ["legacy", "collections"])
def test_noise_sensitivity_worked_example_and_its_edges(values, api):
    import math

    from ragas_compat.values import RagasError

    assert values[("ns-worked-example", f"{api}:NoiseSensitivity")] == 0.25
    assert values[("ns-worked-example", f"{api}:NoiseSensitivity[mode=irrelevant]")] == 0.5
    assert math.isnan(values[("ns-zero-response-statements", f"{api}:NoiseSensitivity")])
    error = values[("ns-zero-reference-statements", f"{api}:NoiseSensitivity")]
    assert isinstance(error, RagasError) and error.type == "ValueError" and "zero-size array" in error.message
