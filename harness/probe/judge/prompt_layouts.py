"""How each Ragas PydanticPrompt generation lays a rendered prompt out (standard library only).

A rendered prompt is ``head + input marker + JSON input + output suffix``; ``head`` holds the
instruction, the output schema and the examples. Two generations are known, recognised by their text
(never by a version number):

- ``current`` (Ragas 0.2.6 onward, and the 0.3.x collections prompt functions, which copy it):
  ``...\\nNow perform the same with the following input\\ninput: {json}\\nOutput: ``; the input is
  dumped with ``exclude_none``. (0.3.x ``context_recall_prompt`` labels the input ``Input:``: same layout.)
- ``early-0.2`` (Ragas 0.2.0 to 0.2.5): ``...\\nNow perform the above instruction with the following
  input\\ninput: {json}\\nRespond only with a valid JSON object that complies with the specified
  schema.\\noutput: ``; the input is dumped WITH its ``null`` fields. Its top-level ``null`` fields are
  dropped on reading, so one expected input (written as the current generation renders it) keys both.
  Ragas 0.2.0 ends the block with ``\noutput: `` alone (no "Respond only ..." line).

- ``0.1`` (Ragas 0.1.x ``Prompt.format``): ``head + "\nYour actual task:\n"``, then one ``\nkey: value``
  line per input key (a string value JSON-encoded, so one line), then ``\n<output key>: \n``. A value
  that is itself the text of a list (0.1.x passes statements as ``json.dumps(list)``, AnswerCorrectness
  as ``str(list)``) is read as that list, so one expected input keys every generation.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass


class LayoutMismatch(ValueError):
    """The text is not a rendering of any known PydanticPrompt generation (or its input is not JSON)."""


def last_index(text: str, marker: str) -> int:
    """``text.rfind(marker)``, found by searching forward (``str.find``): CPython's backward search reads
    a 4 KB prompt about five times slower than its forward one, and the marker occurs about once."""
    at = text.find(marker)
    while at >= 0:
        following = text.find(marker, at + 1)
        if following < 0:
            return at
        at = following
    return at


@dataclass(frozen=True)
class PromptLayout:
    """One generation's input block: what precedes the JSON input and what follows it."""

    name: str
    input_marker: str
    output_suffix: str
    drops_nulls: bool  # the generation renders null fields; reading drops them (exclude_none)

    def split(self, text: str) -> tuple[str, object] | None:
        """``(head, input)`` when ``text`` has this layout, None when it does not; LayoutMismatch
        when it has the layout but the input is not JSON."""
        at = last_index(text, self.input_marker)
        if at < 0:
            return None
        return self.split_at(text, at, text[:at])

    def split_at(self, text: str, at: int, head: str) -> tuple[str, object] | None:
        """:meth:`split` once the input marker's last occurrence in ``text`` is known to be at ``at``
        (``head`` is ``text[:at]``, possibly an equal string already held)."""
        tail = text[at + len(self.input_marker):]
        if not tail.endswith(self.output_suffix):
            return None
        try:
            data = json.loads(tail[: -len(self.output_suffix)])
        except json.JSONDecodeError as exc:
            raise LayoutMismatch(f"prompt input is not JSON ({exc}): {tail[:200]!r}") from None
        if self.drops_nulls and isinstance(data, dict):
            data = {key: value for key, value in data.items() if value is not None}
        return head, data


CURRENT = PromptLayout("current", "\nNow perform the same with the following input\ninput: ", "\nOutput: ", False)
EARLY_0_2 = PromptLayout(
    "early-0.2", "\nNow perform the above instruction with the following input\ninput: ",
    "\nRespond only with a valid JSON object that complies with the specified schema.\noutput: ", True)
# Ragas 0.2.0 alone: the early-0.2 input block without the "Respond only with ..." line
EARLY_0_2_0 = PromptLayout("early-0.2 (0.2.0)", EARLY_0_2.input_marker, "\noutput: ", True)
# 0.3.x ``context_recall_prompt`` writes its input label capitalised (``Input: ``); otherwise current
CURRENT_CAPITALISED = PromptLayout("current (Input:)", "\nNow perform the same with the following input\nInput: ",
                                   "\nOutput: ", False)
TASK_MARKER = "\nYour actual task:\n"


@dataclass(frozen=True)
class TaskLinesLayout:
    """Ragas 0.1.x: ``key: value`` lines after "Your actual task:", the last one the empty output key."""

    name: str = "0.1"

    def split(self, text: str) -> tuple[str, object] | None:
        head, sep, tail = text.rpartition(TASK_MARKER)
        lines = tail.strip("\n").split("\n") if sep else []
        if not lines or not lines[-1].rstrip().endswith(":"):
            return None
        data: dict[str, object] = {}
        for line in lines[:-1]:
            key, colon, value = line.partition(": ")
            if not colon:
                raise LayoutMismatch(f"0.1 prompt input line is not 'key: value': {line[:200]!r}")
            data[key] = _task_value(value)
        return head, data


def _task_value(text: str) -> object:
    """One 0.1 input value: JSON (a JSON-encoded string, possibly holding the text of a list), a list
    written with ``str()`` (a Python literal), else the text as written."""
    try:
        value: object = json.loads(text)
    except json.JSONDecodeError:
        value = text
        if not text.startswith("["):
            return value
    if isinstance(value, str) and value.startswith("["):
        return _list_text(value)
    return value


def _list_text(text: str) -> object:
    """The list a text spells, as JSON or as a Python literal; the text itself otherwise."""
    try:
        inner = json.loads(text)
    except json.JSONDecodeError:
        try:
            inner = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
    return inner if isinstance(inner, list) else text


TASK_LINES = TaskLinesLayout()
LAYOUTS: tuple[PromptLayout | TaskLinesLayout, ...] = (CURRENT, CURRENT_CAPITALISED, EARLY_0_2, EARLY_0_2_0,
                                                       TASK_LINES)


def split_layout(text: str) -> tuple[str, object, PromptLayout | TaskLinesLayout]:
    """``(head, input, layout)`` of a rendered PydanticPrompt of any known generation.

    Raises LayoutMismatch when no layout fits (or the input block is not JSON)."""
    known = known_head(text)
    if known is not None:
        found = CURRENT.split_at(text, len(known), known)
        if found is not None:
            return found[0], found[1], CURRENT
    for layout in LAYOUTS:
        found = layout.split(text)
        if found is not None:
            if layout is CURRENT:
                remember_head(found[0])
            return found[0], found[1], layout
    raise LayoutMismatch(
        "unrecognised prompt layout (no 'Now perform the same with the following input', 'Now perform "
        f"the above instruction with the following input' or 'Your actual task:' block): {text[:200]!r}")


# heads of the current layout met lately (``remember_head``): the askings of one prompt kind share their
# head (instruction, schema, examples), so a prompt that starts with one is split without searching its
# whole text for the input marker or copying the head out of it (a tuple replaced whole: thread-safe)
_KNOWN_HEADS: tuple[str, ...] = ()
KNOWN_HEADS_KEPT = 32
KNOWN_HEAD_LIMIT = 1 << 16  # characters: a longer head is split the ordinary way each time


def remember_head(head: str) -> None:
    """Note ``head``, the head of a prompt ``split_layout`` split with the :data:`CURRENT` layout."""
    global _KNOWN_HEADS
    if len(head) <= KNOWN_HEAD_LIMIT and head not in _KNOWN_HEADS:
        _KNOWN_HEADS = (head, *_KNOWN_HEADS[:KNOWN_HEADS_KEPT - 1])


def known_head(text: str) -> str | None:
    """A remembered head that ``text`` is in the :data:`CURRENT` layout after: ``text`` starts with it and
    the input marker, and the marker occurs nowhere later, so the marker's last occurrence is there and
    ``CURRENT.split`` would cut ``text`` at exactly that head (None when no remembered head is such)."""
    marker = CURRENT.input_marker
    for head in _KNOWN_HEADS:
        if text.startswith(head) and text.startswith(marker, len(head)) and text.find(marker, len(head) + 1) < 0:
            return head
    return None
