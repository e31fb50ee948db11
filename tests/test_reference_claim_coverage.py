from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.claim_coverage import context_recall, faithfulness


def test_seed_four_claim_example_recall_quarter_faithfulness_one():
    reference_claims = [
        {"statement": "method", "attributed": 1},
        {"statement": "condition", "attributed": 0},
        {"statement": "version", "attributed": 0},
        {"statement": "limitation", "attributed": 0},
    ]
    response_claims = [{"statement": "method", "verdict": 1}]
    cr = context_recall(reference_claims)
    f = faithfulness(response_claims)
    assert cr.value == Fraction(1, 4) and (cr.supported, cr.total) == (1, 4)
    assert f.value == 1 and (f.supported, f.total) == (1, 1)


def test_adding_unsupported_details_lowers_faithfulness():
    claims = [{"statement": "method", "verdict": 1}] + [{"statement": f"detail {i}", "verdict": 0} for i in range(3)]
    assert faithfulness(claims).value == Fraction(1, 4)


@pytest.mark.parametrize("fn", [context_recall, faithfulness])
def test_empty_claim_set_is_undefined_not_zero_or_one(fn):
    cov = fn([])
    assert cov.value is None
    assert cov.undefined_reason == "zero_claims"
    assert cov.total == 0


def test_non_binary_claim_label_names_claim_field_and_value():
    with pytest.raises(HarnessInputError) as info:
        faithfulness([{"statement": "a", "verdict": 1}, {"statement": "b", "verdict": 2}])
    assert "verdicts.faithfulness[1].verdict" in str(info.value)
    assert "2" in str(info.value)
    assert info.value.field == "verdicts.faithfulness[1].verdict"


def test_claim_without_label_key_is_an_input_error():
    with pytest.raises(HarnessInputError, match=r"verdicts\.context_recall\[0\].*'attributed'"):
        context_recall([{"statement": "a", "verdict": 1}])


def test_boolean_claim_labels_are_allowed():
    assert context_recall([{"statement": "a", "attributed": True},
                           {"statement": "b", "attributed": False}]).value == Fraction(1, 2)
