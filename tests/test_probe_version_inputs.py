"""How the probe adapts sample inputs to the installed Ragas (no Ragas needed: fake sample classes)."""

from __future__ import annotations

from typing import ClassVar

from ragas_compat.probe.scoring import ROW_NAMES_0_1, adapt_inputs, declared_columns, row_fields

INPUTS = {"user_input": "q", "retrieved_contexts": ["c"], "reference": "r", "retrieved_context_ids": ["d1"]}


class Sample_0_2:  # SingleTurnSample of 0.2.x: no ID fields (it would silently drop them)
    model_fields: ClassVar[dict] = {"user_input": None, "retrieved_contexts": None, "reference": None, "response": None}

    def __init__(self, **kwargs):
        self.kwargs = kwargs


def test_fields_the_sample_does_not_declare_are_reported_as_dropped():
    sample, accepted, dropped = adapt_inputs(Sample_0_2, INPUTS)
    assert accepted == ["user_input", "retrieved_contexts", "reference"] and dropped == ["retrieved_context_ids"]
    assert sample.kwargs == {"user_input": "q", "retrieved_contexts": ["c"], "reference": "r"}


def test_without_single_turn_sample_a_0_1_row_uses_that_version_s_names():
    row, accepted, dropped = adapt_inputs(None, INPUTS)
    assert row == {"question": "q", "contexts": ["c"], "ground_truth": "r"}
    assert accepted == ["question", "contexts", "ground_truth"] and dropped == ["retrieved_context_ids"]
    assert ROW_NAMES_0_1["response"] == "answer"


def test_declared_columns_from_required_columns_or_evaluation_mode():
    class Modern:
        _required_columns: ClassVar[dict] = {"SINGLE_TURN": {"user_input", "reference"}}

    class Mode:
        name = "qcg"

    class Old:
        evaluation_mode = Mode()

    assert declared_columns(Modern()) == ["reference", "user_input"]
    assert declared_columns(Old()) == ["evaluation_mode=qcg"] and declared_columns(object()) == []


def test_a_0_1_row_also_holds_the_columns_its_evaluation_mode_names():
    class Mode:
        name = "qac"  # 0.1.x AnswerRelevancy: reads the contexts that later releases do not

    metric = type("Old", (), {"evaluation_mode": Mode()})()
    assert row_fields(None, metric, ("user_input", "response")) == ("user_input", "response", "retrieved_contexts")
    # a release with SingleTurnSample, or a class without a mode: the fields the target reads, as given
    assert row_fields(Sample_0_2, metric, ("user_input", "response")) == ("user_input", "response")
    assert row_fields(None, object(), ("response",)) == ("response",)
