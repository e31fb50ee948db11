"""The matrix on constructed cells: the harness's limits are the harness's, and exact doubles are shown
wherever 6 significant digits would hide a difference between adjacent columns."""

from __future__ import annotations

import json
import re
import struct

from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.compare.classify import same_float
from ragas_compat.tools.matrix.drift import (
    HARNESS_CAUSES,
    MISSING_CLASS_ERROR,
    NOT_SCRIPTED_ERROR,
    Cell,
    ColumnInfo,
    Matrix,
    MatrixRow,
    causes_between,
    summarise_drifts,
)
from ragas_compat.tools.matrix.report import _COLORS, cell_texts, render_html, render_json, render_markdown

LABELS = ("0.2.3", "0.2.15", "0.3.9", "0.4.3")

STUB = Cell("error", error_type="StubMismatch", error_message="no frozen reply for a prompt of this layout",
            classification="error")
NOT_SCRIPTED = Cell("error", error_type=NOT_SCRIPTED_ERROR, error_message="no prompt interface the judge knows",
                    classification="error")
OWN = Cell("error", error_type="AttributeError", error_message="'Faithfulness' object has no attribute 'x'",
           classification="error", error_origin="harness")
MISSING = Cell("error", error_type=MISSING_CLASS_ERROR, error_message="this Ragas has no IDBasedContextPrecision",
               classification="error")
RAGAS_ERROR = Cell("error", error_type="ValueError", error_message="max() arg is an empty sequence",
                   classification="error")


def value(number: float, classification: str = "identical") -> Cell:
    return Cell("value", number, classification=classification)


def matrix_of(rows: dict[str, tuple[Cell, ...]], labels: tuple[str, ...] = LABELS) -> Matrix:
    built = [MatrixRow(f"case-{target}", "c", "faithfulness", target, "1/2", cells,
                       tuple(causes_between(cells[i - 1], cells[i], labels[i - 1], labels[i])
                             for i in range(1, len(cells))))
             for target, cells in rows.items()]
    columns = tuple(ColumnInfo(label, label, "release", "built", True, None, (), 0, ()) for label in labels)
    return Matrix({"name": "t", "source": "t", "cases": len(rows)}, columns, tuple(built), {},
                  summarise_drifts(built, list(labels)))


LIMITS = matrix_of({
    "legacy:Faithfulness": (OWN, STUB, value(0.5), value(0.5)),
    "legacy:ContextRecall": (STUB, value(0.5), value(0.5), RAGAS_ERROR),
    "collections:ContextPrecision": (MISSING, MISSING, NOT_SCRIPTED, value(0.5)),
})


def test_cells_the_harness_cannot_drive_are_labelled_in_its_name():
    assert STUB.text == "harness: judge cannot answer" and STUB.harness_limit == "stub_mismatch"
    assert NOT_SCRIPTED.text == "harness: not scripted" and NOT_SCRIPTED.harness_limit == "not_scripted"
    assert OWN.text == "harness: own error (AttributeError)" and OWN.harness_limit == "harness_error"
    assert MISSING.text == "missing class" and MISSING.harness_limit is None and MISSING.not_run == "missing_class"
    assert RAGAS_ERROR.text == "error: ValueError" and RAGAS_ERROR.harness_limit is None
    # The same AttributeError raised by Ragas (no harness origin) stays Ragas's error.
    ragas_attribute = Cell("error", error_type="AttributeError", error_message="x")
    assert ragas_attribute.text == "error: AttributeError" and ragas_attribute.harness_limit is None


def test_harness_limits_are_never_a_ragas_drift_cause():
    by = {(d.before, d.after, d.kind): d.by for d in LIMITS.drifts}
    assert by[("0.2.3", "0.2.15", "stub_mismatch")] == "harness"
    assert by[("0.3.9", "0.4.3", "exception")] == "ragas"  # Ragas's own ValueError stays a Ragas drift
    assert by[("0.2.15", "0.3.9", "class_added")] == "ragas"  # a class appearing is an API fact of Ragas
    assert by[("0.2.15", "0.3.9", "not_scripted")] == "harness"
    faithfulness = LIMITS.rows[0].changes[0]  # own error -> judge cannot answer: both the harness's
    assert {c.kind for c in faithfulness} == {"harness_error", "stub_mismatch"}
    for drift in LIMITS.drifts:
        if drift.by == "harness":
            assert "not a Ragas change" in drift.text and "raised" not in drift.text

    md = render_markdown(LIMITS)
    ragas_section = md.split("## Drifts between adjacent versions")[1].split("## Not compared")[0]
    harness_section = md.split("## Not compared: the harness's limits")[1].split("## Matrix")[0]
    assert "ValueError" in ragas_section and "class_added" in ragas_section
    for word in ("StubMismatch", "stub_mismatch", "not_scripted", "harness_error", "AttributeError", "raised"):
        assert word not in ragas_section, word
    assert "stub_mismatch" in harness_section and "harness_error" in harness_section

    data = json.loads(render_json(LIMITS))
    assert {(d["kind"], d["by"]) for d in data["drifts"]} >= {("stub_mismatch", "harness"), ("exception", "ragas")}
    cell = next(r for r in data["rows"] if r["target"] == "legacy:Faithfulness")["cells"]
    assert cell["0.2.3"]["not_run"] == {"why": "harness_error", "by": "harness"}
    assert cell["0.2.3"]["error"]["origin"] == "harness" and cell["0.2.3"]["text"].startswith("harness: ")
    missing = next(r for r in data["rows"] if r["target"] == "collections:ContextPrecision")["cells"]["0.2.3"]
    assert missing["not_run"] == {"why": "missing_class", "by": "ragas"}


def _td_classes(html: str, text: str) -> list[str]:
    return re.findall(r'<td class="([^"]*)"[^>]*>' + re.escape(text), html)


def test_html_draws_harness_limits_and_missing_classes_in_neutral_colours():
    html = render_html(LIMITS)
    for text in ("harness: judge cannot answer", "harness: not scripted", "harness: own error (AttributeError)"):
        classes = _td_classes(html, text)
        assert classes and all("k-harness" in c and "k-error" not in c for c in classes), (text, classes)
    assert all("k-missing" in c for c in _td_classes(html, "missing class"))
    assert all("k-error" in c for c in _td_classes(html, "error: ValueError"))
    assert _COLORS["harness"] != _COLORS["error"] and _COLORS["missing"] != _COLORS["error"]
    assert f"td.k-harness{{background:{_COLORS['harness']}}}" in html
    assert "<h2>Not compared: the harness's limits</h2>" in html


harness_cells = st.sampled_from([STUB, NOT_SCRIPTED, OWN])
any_cells = st.one_of(harness_cells, st.sampled_from([MISSING, RAGAS_ERROR]),
                      st.floats(allow_nan=True).map(value))


@given(harness_cells, any_cells, st.booleans())
def test_a_harness_limit_on_either_side_gives_only_harness_causes_or_class_facts(limit, other, limit_first):
    before, after = (limit, other) if limit_first else (other, limit)
    kinds = {c.kind for c in causes_between(before, after, "a", "b")}
    assert kinds <= HARNESS_CAUSES | {"class_missing", "class_added"}


# ---------------------------------------------------------------- exact doubles

def test_exact_double_where_six_digits_would_hide_the_difference():
    hidden = matrix_of({"legacy:Faithfulness": (value(0.9999999999, "epsilon"), value(1.0), value(1.0), value(0.5))},)
    row = hidden.rows[0]
    assert cell_texts(row) == ["0.9999999999", "1.0", "1", "0.5"]
    md = render_markdown(hidden)
    assert "| 0.9999999999 epsilon | **1.0 identical** Δ | 1 identical | **0.5 identical** Δ |" in md
    html = render_html(hidden)
    assert ">0.9999999999<span" in html and ">1.0<span" in html
    plain = matrix_of({"legacy:Faithfulness": (value(0.5), value(0.25), RAGAS_ERROR, value(1 / 3))})
    assert cell_texts(plain.rows[0]) == ["0.5", "0.25", "error: ValueError", "0.3333333333333333"]


def test_every_changed_cell_shows_its_exact_double():
    """0.9999999999666667 in a changed cell never reads "1" (issue 38), whatever its neighbours read."""
    near_one = 0.9999999999666667
    matrix = matrix_of({"legacy:ContextPrecision": (value(0.5), value(near_one, "epsilon"), value(near_one, "epsilon"),
                                                    value(2 / 3))})
    row = matrix.rows[0]
    assert [bool(c) for c in row.changes] == [True, False, True]
    assert cell_texts(row) == ["0.5", "0.9999999999666667", "1", "0.6666666666666666"]
    md = render_markdown(matrix)
    assert "| 0.5 identical | **0.9999999999666667 epsilon** Δ | 1 epsilon | **0.6666666666666666 identical** Δ |" in md
    assert ">0.9999999999666667<span" in render_html(matrix)


finite_or_nan = st.one_of(st.floats(allow_nan=False, allow_infinity=True), st.just(float("nan")))


@given(finite_or_nan, finite_or_nan)
def test_adjacent_different_doubles_never_read_the_same(a, b):
    texts = cell_texts(matrix_of({"t": (value(a), value(b))}, ("x", "y")).rows[0])
    if not same_float(a, b):
        assert texts[0] != texts[1], (a, b, texts)
    else:
        assert texts[0] == texts[1]


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_neighbouring_doubles_are_told_apart(bits):
    a = struct.unpack("<d", struct.pack("<Q", bits))[0]
    b = struct.unpack("<d", struct.pack("<Q", bits ^ 1))[0]  # the adjacent bit pattern
    texts = cell_texts(matrix_of({"t": (value(a), value(b))}, ("x", "y")).rows[0])
    if not same_float(a, b):
        assert texts[0] != texts[1]
