from __future__ import annotations

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.labels import coerce_by_truthiness, is_binary_label, validate_label, validate_labels


@pytest.mark.parametrize("value", [0, 1, True, False])
def test_binary_labels(value):
    assert is_binary_label(value)
    assert validate_label(value, "x") == int(value)


@pytest.mark.parametrize("value", [2, -1, 1.0, 0.0, "1", None, [1]])
def test_non_binary_label_names_field_and_value(value):
    assert not is_binary_label(value)
    with pytest.raises(HarnessInputError) as info:
        validate_label(value, "judge_audit.human.c3")
    assert "judge_audit.human.c3" in str(info.value)
    assert repr(value) in str(info.value)
    assert info.value.value == value


def test_validate_labels_returns_ints():
    assert validate_labels([True, 0, 1, False], "f") == (1, 0, 1, 0)


def test_coercion_by_truthiness_is_what_ragas_does():
    assert coerce_by_truthiness([2, 0, "no", "", True, 0.0]) == (1, 0, 1, 0, 1, 0)


def test_ragas_labels_parse_like_ragas_output_models_then_truthiness():
    from pydantic import BaseModel, ValidationError

    from ragas_compat.metrics.labels import ragas_int, ragas_labels

    class Verdict(BaseModel):  # the shape of Ragas's verdict fields (int, lax mode)
        verdict: int

    for value in ["0", "1", "2", " 1", "1.0", "-3", "true", "yes", "", 1.0, 1.5, True, False, 2, None, [1]]:
        try:
            expected = Verdict(verdict=value).verdict
        except ValidationError:
            expected = None
        assert ragas_int(value) == expected, value
    assert ragas_labels(["0", "1", 2, True]) == (0, 1, 1, 1)
    assert ragas_labels(["1", "yes"]) is None
