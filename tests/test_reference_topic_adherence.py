"""TopicAdherence references (precision, recall, F1) from the frozen topic verdicts: exact fractions, the
undefined cases named, Ragas's 1e-10 evaluation as the epsilon alternative, computed independently here."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import metric

SUITE = load_default_suite()
P, R, F = "topic_adherence_precision", "topic_adherence_recall", "topic_adherence_f1"


def _case(items: list, reference_topics: list | None = None) -> dict:
    raw = {"id": "t", "category": "edge",
           "user_input": [{"type": "human", "content": "Hi"}, {"type": "ai", "content": "Hello"}],
           "verdicts": {"topic_adherence": [{"statement": f"topic {i}", "refused": r, "on_topic": c}
                                            for i, (r, c) in enumerate(items)]}}
    if reference_topics is not None:
        raw["reference_topics"] = reference_topics
    return raw


def _outcomes(items: list):
    case = parse_suite({"schema_version": 1, "suite": "t", "cases": [_case(items, ["x"])]}, source="t").cases[0]
    return {name: metric(name).outcome(case) for name in (P, R, F)}


@pytest.mark.parametrize(("case_id", "p", "r", "f"), [
    ("ta-all-answered-on-topic", Fraction(1), Fraction(1), Fraction(1)),
    ("ta-mixed", Fraction(1, 2), Fraction(1, 2), Fraction(1, 2)),
    ("ta-all-refused", None, Fraction(0), Fraction(0)),
    ("ta-refused-off-topic-only", None, None, None),
    ("ta-repeated-topic", Fraction(1), Fraction(1, 2), Fraction(2, 3)),
    ("ta-no-topics", None, None, None)])
def test_bundled_values(case_id, p, r, f):
    case = SUITE.case(case_id)
    assert [metric(name).outcome(case).value for name in (P, R, F)] == [p, r, f]


def test_undefined_reasons():
    assert {n: o.undefined_reason for n, o in _outcomes([]).items()} == {P: "no_topics", R: "no_topics", F: "no_topics"}
    refused_off = _outcomes([(1, 0)])
    assert [refused_off[n].undefined_reason for n in (P, R, F)] == ["no_answered_topic", "no_on_topic_topic",
                                                                     "no_topic_counted"]
    answered_off = _outcomes([(0, 0)])
    assert answered_off[P].value == 0 and answered_off[R].undefined_reason == "no_on_topic_topic"
    assert answered_off[F].value == 0


def test_epsilon_alternative_is_ragas_float_arithmetic():
    # TP 2, FP 1, FN 1 (one refused off-topic topic counts nowhere)
    out = _outcomes([(0, 1), (0, 1), (0, 0), (1, 1), (1, 0)])
    assert (out[P].value, out[R].value, out[F].value) == (Fraction(2, 3), Fraction(2, 3), Fraction(2, 3))
    p, r = 2 / (3 + 1e-10), 2 / (3 + 1e-10)
    assert out[P].alternatives["epsilon"] == p and out[R].alternatives["epsilon"] == r
    assert out[F].alternatives["epsilon"] == 2 * (p * r) / (p + r + 1e-10)
    assert out[P].alternatives["epsilon"] != float(out[P].value)


def test_f1_is_2tp_over_2tp_fp_fn():
    out = _outcomes([(0, 1), (0, 0), (0, 0), (1, 1), (1, 1), (1, 1)])  # TP 1, FP 2, FN 3
    assert out[P].value == Fraction(1, 3) and out[R].value == Fraction(1, 4)
    assert out[F].value == Fraction(2, 2 + 2 + 3)  # = 2PR / (P + R)
    assert out[F].value == 2 * out[P].value * out[R].value / (out[P].value + out[R].value)


@pytest.mark.parametrize("label", [2, "yes", 0.5])
def test_non_binary_verdicts_are_refused(label):
    out = _outcomes([(0, 1), (label, 1)])
    assert all(o.value is None and o.refused for o in out.values())


def test_topic_verdicts_need_reference_topics():
    with pytest.raises(HarnessInputError, match="reference_topics"):
        parse_suite({"schema_version": 1, "suite": "t", "cases": [_case([(0, 1)])]}, source="t")
