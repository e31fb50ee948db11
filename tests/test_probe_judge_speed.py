"""The scripted judge's speed-only shortcuts give exactly what the plain computations give (issue 40).

- ``prompt_layouts.last_index`` (a forward search for the last occurrence) is ``str.rfind``, for any text
  and marker, including overlapping occurrences and markers absent or empty;
- a PromptBook's template digest, taken once per distinct head, is ``prompt_hash.template_digest`` of
  that head on every asking, whether the head repeats or changes.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ragas_compat.probe.judge.prompt_book import INPUT_MARKER, OUTPUT_SUFFIX, PromptBook
from ragas_compat.probe.judge.prompt_layouts import CURRENT, last_index, split_layout
from ragas_compat.probe.prompt_hash import template_digest

# a small alphabet so that markers repeat and overlap ("aa" in "aaaa")
small_text = st.text(alphabet="ab\n:", max_size=60)


@given(small_text, small_text)
def test_last_index_is_rfind(text: str, marker: str) -> None:
    assert last_index(text, marker) == text.rfind(marker)


@given(st.lists(small_text, max_size=4))
def test_last_index_finds_the_last_of_several_markers(parts: list[str]) -> None:
    text = CURRENT.input_marker.join(parts)
    assert last_index(text, CURRENT.input_marker) == text.rfind(CURRENT.input_marker)


@given(small_text, st.dictionaries(st.sampled_from(["question", "context"]), small_text, min_size=1))
def test_split_layout_takes_the_input_after_the_last_marker(head: str, data: dict) -> None:
    # the head itself may hold an earlier input block (an example): the input is the last one
    text = head + INPUT_MARKER + "{}" + OUTPUT_SUFFIX + INPUT_MARKER + json.dumps(data) + OUTPUT_SUFFIX
    found_head, found, layout = split_layout(text)
    assert layout is CURRENT
    assert found == data
    assert found_head == text.rpartition(INPUT_MARKER)[0]


def test_each_asking_records_the_digest_of_its_own_head() -> None:
    book = PromptBook()
    heads = ["Judge the context.\nschema A", "Judge the context.\nschema B", "Judge the context.\nschema A"]
    for number, head in enumerate(heads):
        data = {"question": "q", "context": str(number)}
        book.expect("kind", "Judge the context.", data, {"verdict": 1}, label=f"c{number}")
        book.answer(head + INPUT_MARKER + json.dumps(data) + OUTPUT_SUFFIX)
    assert [record["template"] for record in book.asked] == [template_digest(h, CURRENT.name) for h in heads]
    assert book.asked[0]["template"] != book.asked[1]["template"]
    assert book.problems == []
