"""DataCompyScore: the exact reference over CSV tables, its undefined reasons, pandas' typed reading as a
named variant, the classification of what Ragas 0.4.3 returns, and (when datacompy is installed) the
cross-check against datacompy itself on hypothesis-drawn tables."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.compare.classify import classify
from ragas_compat.metrics import datacompy_score as dc
from ragas_compat.metrics import oracles
from ragas_compat.metrics.registry import metric
from ragas_compat.metrics.spec import FuzzDraw
from ragas_compat.vocabulary import Classification


def case(reference: str, response: str, table_metrics: object = True):
    raw = {"id": "c", "category": "edge", "user_input": "q", "reference": reference, "response": response,
           "retrieved_contexts": []}
    if table_metrics is not None:
        raw["table_metrics"] = table_metrics
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}).cases[0]


def outcome(name: str, reference: str, response: str):
    return metric(f"datacompy_{name}").outcome(case(reference, response))


TWO = "id,name\n1,Alice\n2,Bob\n"
THREE = "id,name\n1,Alice\n2,Bob\n3,Charlie\n"


def test_the_metrics_run_only_on_cases_that_ask_for_them():
    assert metric("datacompy_rows_f1").applies_to(case(TWO, TWO))
    assert not metric("datacompy_rows_f1").applies_to(case(TWO, TWO, table_metrics=None))
    assert not metric("datacompy_rows_f1").applies_to(case(TWO, TWO, table_metrics=False))


def test_one_extra_row():
    assert outcome("rows_precision", TWO, THREE).value == Fraction(2, 3)
    assert outcome("rows_recall", TWO, THREE).value == 1
    assert outcome("rows_f1", TWO, THREE).value == Fraction(4, 5)
    assert outcome("columns_f1", TWO, THREE).value == 1


def test_rows_are_paired_by_position_and_compared_on_shared_columns():
    # the response's rows in another order: no row matches at its position
    assert outcome("rows_recall", TWO, "id,name\n2,Bob\n1,Alice\n").value == 0
    # a column only the response has is not compared; the shared one is
    assert outcome("rows_precision", "id\n1\n2\n", "id,extra\n1,x\n2,y\n").value == 1
    assert outcome("columns_precision", "id\n1\n2\n", "id,extra\n1,x\n2,y\n").value == Fraction(1, 2)
    assert outcome("columns_recall", "id\n1\n2\n", "id,extra\n1,x\n2,y\n").value == 1


def test_columns_compare_only_the_rows_both_tables_have():
    assert outcome("columns_f1", TWO, THREE).value == 1
    assert outcome("columns_precision", TWO, "id,name\n1,Alice\n2,Robert\n").value == Fraction(1, 2)


@pytest.mark.parametrize(("reference", "response", "reason"), [
    ("", "", "unparseable_csv"),
    (TWO, 'id,name\n1,"Alice\n', "unparseable_csv"),
    (TWO, "id,name\n1,Alice,extra\n", "ragged_csv"),
    (TWO, "id,id\n1,1\n", "duplicate_column"),
])
def test_a_text_that_is_not_a_table_is_undefined_with_its_reason(reference, response, reason):
    for name in ("rows_precision", "columns_f1"):
        out = outcome(name, reference, response)
        assert out.value is None and out.undefined_reason == reason and out.refused is None
        assert classify(float("nan"), out).name is Classification.UNDEFINED_NAN


def test_empty_tables_are_undefined_and_no_match_in_two_non_empty_tables_is_0():
    header_only = outcome("rows_precision", "id,name\n", "id,name\n")
    assert header_only.value is None and header_only.undefined_reason == "empty_response_rows"
    assert outcome("rows_recall", "id,name\n", TWO).undefined_reason == "empty_reference_rows"
    assert outcome("columns_f1", "id,name\n", "id,name\n").value == 1   # no row differs
    assert outcome("rows_f1", "id,name\n", TWO).undefined_reason == "empty_reference_rows"  # R is 0/0: F1 too
    # both tables non-empty, nothing matched: P = 0/2 and R = 0/2 are defined, F1 = 0 (hand-computed), not 0/0
    no_match = outcome("rows_f1", TWO, "id,name\n3,Carol\n4,Dan\n")
    assert no_match.value == Fraction(0) and no_match.undefined_reason is None
    assert outcome("rows_precision", TWO, "id,name\n3,Carol\n4,Dan\n").value == 0
    assert outcome("columns_f1", "id,name\n1,Alice\n", "code,label\n1,Alice\n").value == Fraction(0)
    # measured at Ragas 0.4.3: collections 0.0 (the value), legacy NaN (numpy 0/0: a divergence its rule names)
    assert classify(0.0, no_match).name is Classification.IDENTICAL
    assert classify(float("nan"), no_match).name is Classification.DIVERGENCE


def test_pandas_typed_values_are_a_named_variant():
    reference, response = "id,score\n1,2.5\n2,3\n", "id,score\n1,2.50\n2,3.0\n"
    rows = outcome("rows_recall", reference, response)
    assert rows.value == 0 and rows.alternatives["variant:datacompy_typed_values"] == 1
    columns = outcome("columns_precision", reference, response)
    assert columns.value == Fraction(1, 2)
    diagnosis = classify(1.0, columns)    # what Ragas returns on the bundled case tables-typed-values
    assert diagnosis.name is Classification.VARIANT and "pandas" in diagnosis.explanation
    # F1 is 0/0 as written (nothing matched), 1 under pandas' reading
    assert classify(1.0, outcome("rows_f1", reference, response)).name is Classification.VARIANT


@pytest.mark.parametrize(("ref_cells", "resp_cells", "equal"), [
    (["1", "2"], ["1.0", "2"], True),       # a numeric column: 1 == 1.0
    (["01", "2"], ["1", "2"], True),        # integers: leading zeros vanish
    (["1", "x"], ["1.0", "x"], False),      # a text column: "1" != "1.0"
    (["1"], ["1", "x"], True),              # int against text: the one compared cell converts to a float
    (["1", "y"], ["1.0", "x"], False),
    (["", "2"], ["NA", "2"], True),         # both missing
    (["True", "false"], ["TRUE", "False"], True),
    (["x"], [" x"], False),                 # text is not stripped
])
def test_pandas_reading_of_a_column(ref_cells, resp_cells, equal):
    ref = dc.Table(("a",), tuple((c,) for c in ref_cells))
    resp = dc.Table(("a",), tuple((c,) for c in resp_cells))
    typed = dc.typed_counts("columns", dc.as_pandas_reads(ref), dc.as_pandas_reads(resp))
    assert (typed.matched == 1) is equal


def test_datacompy_lower_cases_column_names_in_the_variant_only():
    ref, resp = dc.read_table("ID\n1\n"), dc.read_table("id\n1\n")
    assert dc.counts("columns", ref, resp).matched == 0
    assert dc.typed_counts("columns", dc.as_pandas_reads(ref), dc.as_pandas_reads(resp)).matched == 1


def test_column_names_equal_once_lower_cased_make_ragas_raise_and_the_reference_score():
    out = outcome("columns_recall", "name,Name\n1,2\n", "name,Name\n1,2\n")
    assert out.value == 1      # the reference reads two columns; datacompy raises ValueError (rule)


def test_rows_that_match_as_written_but_not_as_pandas_types_them():
    # fuzz seed 0 case 163: 'True' in a text column (with '01') against a boolean column. Ragas 0.4.3 with
    # datacompy 0.7.3: precision and recall 0, legacy F1 NaN, collections F1 0.0
    reference, response = "ok\nTrue\n01\n", "ok\nTrue\n"
    f1 = outcome("rows_f1", reference, response)
    assert f1.value == Fraction(2, 3) and f1.details[dc.READS_NO_MATCH] is True
    assert f1.alternatives["variant:datacompy_typed_values"] == 0
    assert classify(0.0, f1).name is Classification.VARIANT
    assert outcome("rows_precision", reference, response).alternatives["variant:datacompy_typed_values"] == 0


def test_a_quoted_comma_is_one_cell():
    assert dc.read_table('a,b\n"x,y",2\n').rows == (("x,y", "2"),)


def test_the_oracle_says_when_datacompy_is_absent(monkeypatch):
    monkeypatch.setitem(oracles.ORACLE_LIBRARIES, "datacompy", "no_such_module_datacompy")
    out = oracles.datacompy_oracle("rows", "f1", TWO, TWO)
    assert "absent" in out and "datacompy" in out["absent"] and "value" not in out
    assert oracles.oracle_status()["datacompy"] is None


def test_the_bundled_cases_cover_the_named_shapes():
    ids = {c.id for c in load_default_suite().cases if c.table_metrics}
    assert {"tables-identical", "tables-no-matching-rows", "tables-extra-row", "tables-unparseable",
            "tables-empty", "tables-typed-values", "tables-header-only"} <= ids


def test_fuzz_tables_are_read_by_both_readers():
    for i in range(200):
        draw = FuzzDraw([], [], [], None, [], [], [], [], [], rng=random.Random(i))
        inputs = dc.fuzz_tables(draw)
        for text in (inputs["reference"], inputs["response"]):
            dc.read_table(text)     # never ragged, never a repeated column


# --------------------------------------------------------------------------- cross-check against datacompy

CELLS = st.sampled_from(["1", "2", "1.0", "01", "2.5", "x", "X", "", "NA", "null", "True", "false", "a b", "é"])


@st.composite
def tables(draw):
    columns = draw(st.lists(st.sampled_from(["id", "name", "Name", "v"]), min_size=1, max_size=3, unique=True))
    rows = draw(st.lists(st.lists(CELLS, min_size=len(columns), max_size=len(columns)), max_size=4))
    return dc._csv(columns, rows)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(tables(), tables(), st.sampled_from(dc.MODES), st.sampled_from(dc.SCORES))
def test_the_typed_reading_matches_datacompy(reference, response, mode, score):
    pytest.importorskip("datacompy")
    pytest.importorskip("pandas")
    ref, resp = dc.read_table(reference), dc.read_table(response)
    assume(all(len({c.lower() for c in t.columns}) == len(t.columns) for t in (ref, resp)))  # else Compare raises
    oracle = oracles.datacompy_oracle(mode, score, reference, response)
    expected, _ = dc.score(mode, score, dc.typed_counts(mode, dc.as_pandas_reads(ref), dc.as_pandas_reads(resp)))
    got = oracle["value"]
    assert (got is None) == (expected is None), (reference, response, got, expected)
    if expected is not None:
        assert got == pytest.approx(float(expected), abs=1e-15), (reference, response)
