"""Content-keyed answer book for a scripted judge (standard library only).

A *prompt* is keyed by ``(instruction, input)`` where ``input`` is the JSON object Ragas
renders after ``"Now perform the same with the following input\\ninput: "``. The book holds,
for each key, the frozen reply (or replies) the judge gives. Lookup is by content only,
never by call order, so concurrent calls are answered correctly.

Every lookup is recorded. A lookup fails with :class:`StubMismatch` (and the failure is
recorded in :attr:`PromptBook.problems`, so it is reported even if the caller swallows the
exception) when the prompt is not in the book, is asked more often than the book expects,
or is ambiguous (the same prompt must receive different replies, which no judge that
answers by content can do). :meth:`PromptBook.unasked` lists expected prompts never asked.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

INPUT_MARKER = "\nNow perform the same with the following input\ninput: "
OUTPUT_SUFFIX = "\nOutput: "


class StubMismatch(Exception):
    """Ragas asked the scripted judge for something the frozen verdicts do not provide."""


def canonical(obj: object) -> str:
    """A stable text form of a JSON value, used as a lookup key."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def split_prompt(prompt_text: str) -> tuple[str, object]:
    """Return ``(head, input_object)`` of a PydanticPrompt rendering.

    ``head`` is everything before the input marker (instruction, schema, examples).
    Raises StubMismatch when the text does not have the PydanticPrompt layout.
    """
    head, sep, tail = prompt_text.rpartition(INPUT_MARKER)
    if not sep or not tail.endswith(OUTPUT_SUFFIX):
        raise StubMismatch(
            "unrecognised prompt layout (no 'Now perform the same with the following input' "
            f"block): {prompt_text[:200]!r}"
        )
    try:
        data = json.loads(tail[: -len(OUTPUT_SUFFIX)])
    except json.JSONDecodeError as exc:
        raise StubMismatch(f"prompt input is not JSON ({exc}): {tail[:200]!r}") from None
    return head, data


@dataclass
class _Entry:
    label: str
    replies: list[str] = field(default_factory=list)
    asked: int = 0


class PromptBook:
    """Frozen replies keyed by prompt content; records every lookup."""

    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}  # instruction -> kind name
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._lock = threading.Lock()
        self.asked: list[dict[str, object]] = []  # one record per prompt received
        self.problems: list[str] = []  # every mismatch, in the order found

    # -- building -----------------------------------------------------------------
    def expect(self, kind: str, instruction: str, prompt_input: dict, reply: dict,
               label: str) -> None:
        """Expect one asking of prompt ``kind`` on ``prompt_input``; answer with ``reply``.

        Expecting the same (kind, input) twice expects it to be asked twice.
        """
        known = self._kinds.setdefault(instruction, kind)
        if known != kind:
            raise ValueError(f"instruction registered for both {known!r} and {kind!r}")
        key = (kind, canonical(prompt_input))
        entry = self._entries.setdefault(key, _Entry(label=label))
        entry.replies.append(json.dumps(reply, ensure_ascii=False))

    @property
    def expected_count(self) -> int:
        return sum(len(e.replies) for e in self._entries.values())

    # -- answering ----------------------------------------------------------------
    def _kind_of(self, head: str) -> str | None:
        for instruction, kind in self._kinds.items():
            if head.startswith(instruction):
                return kind
        return None

    def _fail(self, message: str) -> StubMismatch:
        self.problems.append(message)
        return StubMismatch(message)

    def answer(self, prompt_text: str) -> str:
        """Return the frozen reply (JSON text) for a rendered prompt, or raise StubMismatch."""
        with self._lock:
            try:
                head, data = split_prompt(prompt_text)
            except StubMismatch as exc:
                self.asked.append({"kind": None, "input": None})
                raise self._fail(str(exc)) from None
            kind = self._kind_of(head)
            self.asked.append({"kind": kind, "input": data})
            if kind is None:
                first_line = head.split("\n", 1)[0]
                hint = (" (Ragas rejected a frozen reply and asked the judge to fix its format)"
                        if first_line.startswith("The output string did not satisfy") else "")
                raise self._fail(
                    f"no frozen answer for a prompt of unknown kind: {first_line[:160]!r}{hint}")
            entry = self._entries.get((kind, canonical(data)))
            if entry is None:
                raise self._fail(f"no frozen answer for {kind} prompt with input {canonical(data)[:300]}")
            if entry.asked >= len(entry.replies):
                entry.asked += 1
                raise self._fail(
                    f"{kind} prompt ({entry.label}) asked {entry.asked} times; "
                    f"the frozen verdicts provide {len(entry.replies)}"
                )
            if len(set(entry.replies)) > 1:
                entry.asked += 1
                raise self._fail(
                    f"{kind} prompt ({entry.label}) is ambiguous: identical prompt content must "
                    f"receive different frozen replies {entry.replies}"
                )
            reply = entry.replies[entry.asked]
            entry.asked += 1
            return reply

    def unasked(self) -> list[str]:
        """Expected prompts Ragas never asked (one line per missing asking)."""
        out = []
        for (kind, _), entry in self._entries.items():
            missing = len(entry.replies) - entry.asked
            if missing > 0:
                out.append(f"{kind} prompt ({entry.label}) expected {len(entry.replies)} "
                           f"time(s), asked {entry.asked}")
        return out
