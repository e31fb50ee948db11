"""``record`` rewrites its case file after each batch: each case is serialized once per run
(``session.document_text``) and the text is byte for byte ``json.dumps(document, indent=1)``."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.tools.record.session import document_text


def _plain(document: dict) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _document(cases: list[dict], **extra) -> dict:
    return {"schema_version": 1, "suite": "s", "description": "d \u00e9\n",
            "recording": {"complete": False, "cases": len(cases), "network": {"allowed": [], "blocked": []}},
            "cases": cases, **extra}


CASE = {"id": "row-1", "category": "single_source", "user_input": "Qu\u00e9?\nline two", "reference": "",
        "retrieved_contexts": ["a", "b \"quoted\" \\ back", "\u0000ragas-compat-cases\u0000"],
        "verdicts": {"context_precision_with_reference": [1, 0, 1], "faithfulness": []},
        "recording": {"dataset_row": 1, "live": {"legacy:X": 0.8333333332916666, "legacy:Y": {"error": {
            "type": "E", "message": "m"}}}, "replies": {}, "empty": {}}}


def test_the_text_is_json_dumps_and_each_case_is_serialized_once():
    texts: dict = {}
    cases = [CASE, {**CASE, "id": "row-2", "verdicts": {}}]
    document = _document(cases, warnings=["w"])
    assert document_text(document, texts) == _plain(document) == document_text(document)
    cached = dict(texts)
    assert set(cached) == {"row-1", "row-2"}
    # the next batch: one more case; the earlier ones' texts are reused as they are
    more = _document([*cases, {**CASE, "id": "row-3"}])
    assert document_text(more, texts) == _plain(more)
    assert all(texts[k] is cached[k] for k in cached)
    # a case object replaced under the same id is serialized anew
    changed = _document([{**CASE, "verdicts": {"faithfulness": [{"statement": "s", "verdict": 1}]}}, *cases[1:]])
    assert document_text(changed, texts) == _plain(changed)
    assert texts["row-1"] is not cached["row-1"]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), JSON, max_size=4), max_size=4), st.text(max_size=10))
def test_any_cases_give_the_same_bytes_as_json_dumps(bodies, suite):
    cases = [{**body, "id": f"c{i}"} for i, body in enumerate(bodies)]
    document = {**_document(cases), "suite": suite}
    texts: dict = {}
    assert document_text(document, texts) == _plain(document)
    assert document_text(document, texts) == _plain(document)  # from the kept texts


def test_a_dangling_symlink_as_out_is_named_as_one(tmp_path):
    """``record --out LINK`` with LINK pointing at nothing said "exists and is not a readable case file (case file
    not found)": exists and not found at once."""
    import pytest

    from ragas_compat.errors import HarnessInputError
    from ragas_compat.tools.record.session import load_existing

    link = tmp_path / "rec.json"
    link.symlink_to(tmp_path / "gone.json")
    with pytest.raises(HarnessInputError) as caught:
        load_existing(link, "fingerprint")
    message = str(caught.value)
    assert "rec.json: is a symlink to a missing file" in message and "gone.json" in message
    assert "exists" not in message and caught.value.exit_code == 2
