"""The scripted judge's speed-only shortcuts give exactly what the plain computations give (issue 40).

- ``prompt_layouts.last_index`` (a forward search for the last occurrence) is ``str.rfind``, for any text
  and marker, including overlapping occurrences and markers absent or empty;
- a PromptBook's template digest, taken once per distinct head, is ``prompt_hash.template_digest`` of
  that head on every asking, whether the head repeats or changes;
- a frozen reply's text (``reply_text``, remembered for flat replies) is ``json.dumps(reply,
  ensure_ascii=False)``, for replies whose values Python finds equal but JSON writes otherwise;
- a prompt input's lookup key (``content_key``) is equal for two inputs exactly when their canonical JSON
  texts are;
- ``split_layout`` splitting a prompt at a head it met before (``known_head``) gives what trying each
  layout in turn gives (the same head, input and layout, or the same error), whatever heads it holds.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragas_compat.probe.judge import prompt_layouts
from ragas_compat.probe.judge.prompt_book import (
    INPUT_MARKER,
    OUTPUT_SUFFIX,
    PromptBook,
    canonical,
    content_key,
    reply_text,
)
from ragas_compat.probe.judge.prompt_layouts import CURRENT, LAYOUTS, LayoutMismatch, last_index, split_layout
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


def split_by_each_layout(text: str) -> tuple:
    """What ``split_layout`` gives with no head remembered: each layout tried in turn (or the error)."""
    for layout in LAYOUTS:
        try:
            found = layout.split(text)
        except LayoutMismatch as exc:
            return ("error", str(exc))
        if found is not None:
            return (found[0], found[1], layout)
    return ("error", "no layout")


def outcome(text: str) -> tuple:
    try:
        return split_layout(text)
    except LayoutMismatch as exc:
        return ("error", "no layout") if str(exc).startswith("unrecognised prompt layout") else ("error", str(exc))


# pieces a prompt is made of: heads that are prefixes of each other, markers of several layouts, inputs that
# are JSON or not, the output suffix or not
pieces = st.lists(st.sampled_from(["a", "{}", "[1", INPUT_MARKER, OUTPUT_SUFFIX, INPUT_MARKER + "{}" + OUTPUT_SUFFIX,
                                   INPUT_MARKER + "{}" + OUTPUT_SUFFIX, prompt_layouts.EARLY_0_2.input_marker,
                                   prompt_layouts.EARLY_0_2.output_suffix, "\nOutput:"]), max_size=6)


@settings(max_examples=500)
@given(st.lists(pieces, min_size=1, max_size=3), st.integers(0, 3), pieces)
def test_a_known_head_splits_as_every_layout_would(earlier: list[list[str]], start: int,
                                                   text_pieces: list[str]) -> None:
    saved = prompt_layouts._KNOWN_HEADS
    try:
        prompt_layouts._KNOWN_HEADS = ()
        for before in earlier:  # the heads these prompts have are remembered
            outcome("".join(before))
        # the text starts with one of those heads (or not) and goes on with any pieces
        prefix = "".join(earlier[start]).rpartition(INPUT_MARKER)[0] if start < len(earlier) else ""
        text = prefix + "".join(text_pieces)
        assert outcome(text) == split_by_each_layout(text)
        assert outcome(text) == split_by_each_layout(text)  # again, its own head now remembered too
    finally:
        prompt_layouts._KNOWN_HEADS = saved


def test_a_head_is_taken_from_memory_only_where_the_marker_does_not_come_again() -> None:
    saved = prompt_layouts._KNOWN_HEADS
    try:
        prompt_layouts._KNOWN_HEADS = ()
        short = "Judge.\nschema"
        split_layout(short + INPUT_MARKER + "{}" + OUTPUT_SUFFIX)
        assert prompt_layouts._KNOWN_HEADS == (short,)
        # a longer head that starts with the remembered one and an input block: cut at the last marker
        longer = short + INPUT_MARKER + '{"example": 1}' + OUTPUT_SUFFIX + "{}"
        head, data, layout = split_layout(longer + INPUT_MARKER + '{"q": 2}' + OUTPUT_SUFFIX)
        assert (head, data, layout) == (longer, {"q": 2}, CURRENT)
        assert prompt_layouts.known_head(short + INPUT_MARKER + '{"q": 3}' + OUTPUT_SUFFIX) == short
        # the remembered head, then no input marker at all (as long as one): no layout fits
        unmarked = short + "b" * len(INPUT_MARKER) + "{}" + OUTPUT_SUFFIX
        assert prompt_layouts.known_head(unmarked) is None
        with pytest.raises(LayoutMismatch, match="unrecognised prompt layout"):
            split_layout(unmarked)
    finally:
        prompt_layouts._KNOWN_HEADS = saved


# JSON values from few texts and numbers, so that equal and nearly equal inputs come up
json_values = st.recursive(
    st.none() | st.booleans() | st.sampled_from([0, 1, 1.0, -0.0]) | st.sampled_from(["", "a", "b", "1", "true"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "q"]), inner, max_size=3),
    max_leaves=6)
flat_inputs = st.dictionaries(st.sampled_from(["question", "context", "answer"]), st.sampled_from(["", "x", "1"]),
                              max_size=3)


def lookalike(value: object) -> object:
    """A value Python finds equal to ``value`` but JSON writes otherwise (or the same value laid out anew):
    an object's keys in reverse order, 1 as 1.0 or True, 0 as False."""
    if isinstance(value, dict):
        return {key: lookalike(item) for key, item in reversed(list(value.items()))}
    if isinstance(value, list):
        return [lookalike(item) for item in value]
    return {1: True, 0: False}.get(value, value) if type(value) is int else (1 if value == 1.0 and type(value) is float else value)


@example({"question": "q", "context": "c"}, None, True)
@example({"a": 1, "b": 0}, None, True)
@given(json_values | flat_inputs, json_values | flat_inputs, st.booleans())
def test_a_content_key_is_equal_exactly_when_the_canonical_text_is(first: object, other: object, alike: bool) -> None:
    second = lookalike(first) if alike else other
    assert (content_key(first) == content_key(second)) == (canonical(first) == canonical(second))
    assert hash(content_key(first)) == hash(content_key(first))


@example([{"reason": "r", "verdict": 1}, {"reason": "r", "verdict": True}, {"verdict": 1, "reason": "r"},
          {"reason": "r", "verdict": 1.0}, {"reason": "r", "verdict": -0.0}, {"reason": "r", "verdict": 0.0}])
@given(st.lists(json_values | st.dictionaries(st.sampled_from(["reason", "verdict"]), json_values, max_size=2),
                max_size=6))
def test_a_reply_text_is_the_reply_s_json_whatever_was_encoded_before(replies: list) -> None:
    for reply in replies + [lookalike(reply) for reply in replies] + replies:
        assert reply_text(reply) == json.dumps(reply, ensure_ascii=False)
