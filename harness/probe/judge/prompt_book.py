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

Replay by order (``row``): identical prompt content expected more than once within ONE row, by a
script that knows Ragas asks those prompts one after another (context precision asks a row's
contexts in index order, in both APIs), is a queue: its k-th asking gets the k-th reply, so a judge
(or a labeller) that gave two identical chunks different verdicts replays as it was recorded. Asked
more often than the queue holds is still a mismatch. Identical content with different replies from
different rows (or expected without a row) is ambiguous: ``evaluate()`` scores rows concurrently,
so the order between rows is not Ragas's to give.

Replay per asyncio task: rows whose identical content expects the SAME reply sequence (copies of a case,
duplicate rows; a sampled prompt's generations, :meth:`PromptBook.expect_samples`) are served by the task
asking. ``evaluate()`` runs each (row, metric) job as its own
asyncio task, and a legacy metric makes one row's judge calls one after another inside it; so each asking
task gets its own cursor over that one sequence, and any assignment of tasks to rows gives every row
exactly its own replies. Guarded: more asking tasks than rows expecting the prompt is a mismatch when
asked (a metric asking each call from a child task of its own), and at the end (:meth:`PromptBook.unasked`)
a content-keyed prompt's every asking task must have asked one row's whole sequence. Outside a running
event loop, and for rows with different sequences, such a prompt stays ambiguous. A prompt expected by
one row only is answered as above, never per task.

Per-call scripts (:meth:`PromptBook.script_calls`; a case's ``judge_calls``): the askings of one prompt
kind answered in CALL order, not by content, each with the scripted raw reply text verbatim (or the
``n`` generations of that call). An entry with ``when`` answers only an asking whose input has those
field values (``null``: the field is absent); one with ``repeat`` answers every further asking it fits (a
judge that always says the same, e.g. never valid JSON). A call no entry answers falls back to the content-keyed
replies; with a script, the kind's content-keyed entries may go unasked and entries never used are not
a mismatch (a release that asks less is the behaviour recorded).

Raw-prompt mode (:meth:`PromptBook.expect_text`): a prompt that is a plain string template
(Ragas's NVIDIA-style rating metrics) is recognised by its whole rendered text and answered with
its scripted replies in asking order (a retry asks the same text again); any other text still
fails as above.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import typing as t
from dataclasses import dataclass, field

from ..prompt_hash import WHOLE_TEXT, template_digest
from .prompt_layouts import TASK_LINES, LayoutMismatch, split_layout

INPUT_MARKER = "\nNow perform the same with the following input\ninput: "
OUTPUT_SUFFIX = "\nOutput: "
FORMAT_FIX_KIND = "fix_output_format"


class StubMismatch(Exception):
    """Ragas asked the scripted judge for something the frozen verdicts do not provide."""


# one encoder each, built once (``json.dumps`` with options builds an encoder on every call)
_canonical_text = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode
_reply_text = json.JSONEncoder(ensure_ascii=False).encode  # = json.dumps(value, ensure_ascii=False)


# a template's digest, once per distinct head: every asking of a prompt kind shares its head (instruction,
# schema, examples), and hashing the head as a dict key costs a fraction of its SHA-256
_head_digest = functools.lru_cache(maxsize=256)(template_digest)


_REPLY_SCALARS = (str, int, bool, type(None))  # JSON writes equal values of one of these types alike (not float: -0.0)
_reply_texts: dict[tuple, str] = {}  # reply_text's memory of flat replies
REPLY_TEXTS_KEPT = 4096


def reply_text(reply: object) -> str:
    """``json.dumps(reply, ensure_ascii=False)``, the text a frozen reply is given as. A flat reply (an object
    of text, integer, boolean and null fields: most scripted replies, ``{"reason": ..., "verdict": 1}``) is
    encoded once and remembered under its fields, their types and their order (all that its text depends on)."""
    if type(reply) is not dict:
        return _reply_text(reply)
    key = []
    for name, value in reply.items():
        if type(name) is not str or type(value) not in _REPLY_SCALARS:
            return _reply_text(reply)
        key += (name, type(value), value)
    memo = tuple(key)
    text = _reply_texts.get(memo)
    if text is None:
        if len(_reply_texts) >= REPLY_TEXTS_KEPT:
            _reply_texts.clear()
        text = _reply_texts[memo] = _reply_text(reply)
    return text


def canonical(obj: object) -> str:
    """A stable text form of a JSON value, used as a lookup key."""
    return _canonical_text(obj)


def content_key(obj: object) -> object:
    """The lookup key of a prompt's input: two inputs (JSON values: an object's keys are text) have equal
    keys exactly when their :func:`canonical` texts are equal. An object of text fields (most prompts'
    input) is keyed by its sorted items, which is cheaper to make than its JSON text; anything else by its
    :func:`canonical` text (a key of another type, never equal to an items key)."""
    if type(obj) is dict:
        for key, value in obj.items():
            if type(key) is not str or type(value) is not str:
                break
        else:
            return tuple(sorted(obj.items()))
    return _canonical_text(obj)


def split_prompt(prompt_text: str) -> tuple[str, object]:
    """Return ``(head, input_object)`` of a PydanticPrompt rendering of any known generation
    (``prompt_layouts``: the current layout and the early 0.2.x one).

    ``head`` is everything before the input marker (instruction, schema, examples).
    Raises StubMismatch when the text does not have a PydanticPrompt layout.
    """
    try:
        head, data, _ = split_layout(prompt_text)
    except LayoutMismatch as exc:
        raise StubMismatch(str(exc)) from None
    return head, data


def _asking_task() -> object | None:
    """The asyncio task making this asking; None outside a running event loop (on this thread)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _prompt_text(prompt: object) -> str:
    if isinstance(prompt, str):
        return prompt
    return prompt.to_string() if hasattr(prompt, "to_string") else str(prompt)


@dataclass
class _Entry:
    label: str
    replies: list[str] = field(default_factory=list)
    asked: int = 0
    samples: bool = False  # one asking, answered with the replies as its generations (expect_samples)
    askings: int = 1  # a samples entry: the askings expected (rows of one dataset with identical input)
    ambiguous: bool = False  # a samples entry expected again with other generations (rows disagree)
    in_order: bool = False  # one asking per reply, answered in order (expect_in_order)
    served: int = 0  # samples already handed out (a Ragas that asks one generation per call takes the next)
    optional: bool = False  # may be asked, never missed (allow)
    repeatable: bool = False  # asked again on identical content: the same (last) reply (a format fix)
    rows: list[object] = field(default_factory=list)  # the row token of each reply (None: no row given)
    per_task: dict[object, int] = field(default_factory=dict)  # served per task: asking task -> askings made
    _split_at: int = -1  # len(replies) when _split was worked out
    _split: tuple[list[str], int] | None = None

    def one_row(self) -> bool:
        """Every reply was expected by one and the same row (asked one after another, in order)."""
        return bool(self.rows) and self.rows[0] is not None and all(r is self.rows[0] for r in self.rows)

    def row_sequence(self) -> tuple[list[str], int] | None:
        """``(sequence, rows)`` when more than one row (each with a row token) expects this prompt and every
        one of them the same reply ``sequence`` (copies of a case): servable per asking task; else None."""
        if self._split_at != len(self.replies):
            by_row: dict[int, list[str]] = {}
            for row, reply in zip(self.rows, self.replies):
                if row is None:
                    by_row = {}
                    break
                by_row.setdefault(id(row), []).append(reply)
            sequences = list(by_row.values())
            self._split = ((sequences[0], len(sequences)) if len(sequences) > 1
                           and all(s == sequences[0] for s in sequences) else None)
            self._split_at = len(self.replies)
        return self._split


@dataclass
class ScriptedCall:
    """One entry of a per-call script: the reply texts of one call (one per generation; a single text
    answers every generation) and, optionally, the input field values an asking must have."""

    replies: tuple[str, ...]
    when: dict | None = None
    repeat: bool = False  # answers every asking it fits, never used up
    used: bool = False

    def matches(self, data: object) -> bool:
        if not self.when:
            return True
        if not isinstance(data, dict):
            return False
        return all(canonical(data.get(name)) == canonical(value) for name, value in self.when.items())


def scripted_call(entry: object) -> ScriptedCall:
    """A case's call entry (a text, a list of texts, or ``{"reply": ..., "when": {...}, "repeat": bool}``)
    as a :class:`ScriptedCall`; ValueError for any other shape."""
    when, repeat = None, False
    if isinstance(entry, dict):
        when, repeat, entry = entry.get("when"), entry.get("repeat") is True, entry.get("reply")
        if when is not None and not isinstance(when, dict):
            raise ValueError(f"a scripted call's 'when' must be an object, got {when!r}")
    replies = [entry] if isinstance(entry, str) else entry
    if not isinstance(replies, list) or not replies or not all(isinstance(r, str) for r in replies):
        raise ValueError(f"a scripted call is a reply text or a non-empty list of them, got {entry!r}")
    return ScriptedCall(tuple(replies), when, repeat)


@dataclass
class _TextEntry:
    """A prompt known by its whole text (:meth:`PromptBook.expect_text`): replies in asking order."""

    kind: str
    label: str
    replies: list[str]
    asked: int = 0
    ambiguous: bool = False  # expected again with other replies
    rows: int = 1  # rows expecting it (expected again with the same replies: identical rows)
    per_task: dict[object, int] = field(default_factory=dict)  # served per task: asking task -> askings made

    def per_row(self) -> bool:
        """Rows that expect the same replies, which change from asking to asking: served per asking task."""
        return self.rows > 1 and len(set(self.replies)) > 1


class PromptBook:
    """Frozen replies keyed by prompt content; records every lookup."""

    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}  # instruction -> kind name
        self._entries: dict[tuple[str, object], _Entry] = {}  # (kind, content_key of the input)
        self._lock = threading.Lock()
        self.asked: list[dict[str, object]] = []  # one record per prompt received
        self._texts: dict[str, _TextEntry] = {}  # raw-prompt mode: whole prompt text -> its replies
        self.problems: list[str] = []  # every mismatch, in the order found
        self._ignored: dict[str, frozenset[str]] = {}  # kind -> input fields left out of its key
        self._calls: dict[str, tuple[str, list[ScriptedCall]]] = {}  # kind -> (label, per-call script)
        self.last_scripted = False  # the latest answer came from a per-call script (script_calls)


    def scripted_prompts(self) -> int:
        """How many prompts the case's script answers: its entries, whole-prompt texts and per-call replies
        (the judge calls a case may legitimately make, before any retry)."""
        return (len(self._entries) + sum(len(e.replies) for e in self._texts.values())
                + sum(len(calls) for _, calls in self._calls.values()))
    def ignore_fields(self, kind: str, names: t.Iterable[str]) -> None:
        """Leave the input fields ``names`` of prompt ``kind`` out of its lookup key: fields a Ragas
        generation derives itself and renders into the input (e.g. 0.2.x's own sentence segmentation),
        which no frozen verdict states (``dialects``)."""
        self._ignored[kind] = self._ignored.get(kind, frozenset()) | frozenset(names)

    # -- building -----------------------------------------------------------------
    def script_calls(self, kind: str, instruction: str, calls: t.Iterable[object], label: str) -> None:
        """Answer the askings of prompt ``kind`` in call order from ``calls`` (each a reply text, a list
        of the call's generations, or ``{"reply": ..., "when": {field: value}, "repeat": true}``), verbatim:
        an asking takes the first unused entry whose ``when`` its input satisfies (no ``when``: any); a
        ``repeat`` entry is never used up. Askings no
        entry answers get the content-keyed replies; the kind's content-keyed expectations become
        optional, and unused entries are no mismatch."""
        known = self._kinds.setdefault(instruction, kind)
        if known != kind:
            raise ValueError(f"instruction registered for both {known!r} and {kind!r}")
        self._calls[kind] = (label, [scripted_call(entry) for entry in calls])

    def expect(self, kind: str, instruction: str, prompt_input: dict, reply: dict,
               label: str, row: object | None = None) -> None:
        """Expect one asking of prompt ``kind`` on ``prompt_input``; answer with ``reply``.

        Expecting the same (kind, input) twice expects it to be asked twice. ``row``: a token of the
        one row whose askings of this prompt come one after another (module docstring: replay by
        order); the same content expected with different replies by one row is answered in order.
        """
        known = self._kinds.setdefault(instruction, kind)
        if known != kind:
            raise ValueError(f"instruction registered for both {known!r} and {kind!r}")
        self._add((kind, content_key(prompt_input)), reply_text(reply), label, row)

    def expect_raw(self, kind: str, instruction: str, prompt_input: dict, text: str,
                   label: str, row: object | None = None) -> None:
        """Like :meth:`expect`, but the judge replies with ``text`` verbatim (e.g. malformed JSON)."""
        known = self._kinds.setdefault(instruction, kind)
        if known != kind:
            raise ValueError(f"instruction registered for both {known!r} and {kind!r}")
        self._add((kind, content_key(prompt_input)), text, label, row)

    def expect_format_fix(self, fix_instruction: str, kind: str, prompt_input: dict,
                          output_string: str, fixed_text: str, label: str) -> None:
        """Expect Ragas's "fix output format" retry for the reply ``output_string`` to a ``kind``
        prompt on ``prompt_input``; answer ``{"text": fixed_text}``.

        The retry prompt's input is ``{"output_string", "prompt_value"}`` where ``prompt_value``
        is the whole original prompt; it is keyed by content: the original prompt's kind and
        input (decoded from ``prompt_value``) and the output string.
        """
        known = self._kinds.setdefault(fix_instruction, FORMAT_FIX_KIND)
        if known != FORMAT_FIX_KIND:
            raise ValueError(f"instruction registered for both {known!r} and {FORMAT_FIX_KIND!r}")
        key = (FORMAT_FIX_KIND, content_key({"kind": kind, "input": prompt_input,
                                           "output_string": output_string}))
        self._add(key, _reply_text({"text": fixed_text}), label)
        # the judge fixes a given output string the same way every time: 0.2.0-0.2.2 ask again (recursively)
        # while the fix still does not parse, 0.2.3 on once
        self._entries[key].repeatable = True

    def expect_samples(self, kind: str, instruction: str, prompt_input: dict, replies: list[dict],
                       label: str) -> None:
        """Expect ONE asking of prompt ``kind`` on ``prompt_input`` whose generations are ``replies``
        in order (a judge sampled several times, e.g. a ``strictness`` vote): a call for ``n``
        generations gets the next ``n`` (one call for ``n``: the first ``n``; a Ragas asking one
        generation per call, 0.2.x, gets them one by one); more than given is a mismatch; a plain
        :meth:`answer` (one generation) gets the next one.

        Expected again (rows of one dataset with identical input, scored by one ``evaluate()``): one more
        asking, its generations after the others'; asked from an asyncio task, each asking task is served
        its own row's generations (module docstring: a Ragas that reads only the first of ``strictness``
        samples would otherwise get the previous row's second). Rows that give identical input different
        generations are ambiguous, as :meth:`expect` (no asking order between rows): a mismatch when asked."""
        if not replies:
            raise ValueError("expect_samples needs at least one reply")
        known = self._kinds.setdefault(instruction, kind)
        if known != kind:
            raise ValueError(f"instruction registered for both {known!r} and {kind!r}")
        key = (kind, content_key(prompt_input))
        texts = [_reply_text(r) for r in replies]
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(label=label, replies=texts, samples=True)
            return
        if not entry.samples:
            raise ValueError(f"{kind} prompt ({label}) is expected both as sampled and as one reply")
        first = entry.replies[:len(entry.replies) // entry.askings]
        entry.ambiguous = entry.ambiguous or texts != first
        entry.replies.extend(texts)
        entry.askings += 1

    def allow(self, kind: str, instruction: str, prompt_input: dict, reply: dict, label: str) -> None:
        """Answer prompt ``kind`` on ``prompt_input`` with ``reply`` IF a Ragas asks it, without expecting
        it: an asking some releases make and others do not (e.g. the NLI prompt on zero statements, the
        next context after an unparseable reply). Its askings are recorded like any other; a prompt
        already expected stays expected as it was."""
        known = self._kinds.setdefault(instruction, kind)
        if known != kind:
            raise ValueError(f"instruction registered for both {known!r} and {kind!r}")
        key = (kind, content_key(prompt_input))
        if key not in self._entries:
            self._entries[key] = _Entry(label=label, replies=[_reply_text(reply)],
                                        optional=True)

    def alias(self, kind: str, prompt_input: dict, other_input: dict) -> None:
        """Answer prompt ``kind`` on ``other_input`` from the SAME entry as on ``prompt_input`` (expected
        earlier): one asking, whichever input a release renders (0.2.x SimpleCriteriaScore folds the
        contexts into its question). Askings of either count together."""
        entry = self._entries.get((kind, content_key(prompt_input)))
        if entry is None:
            raise ValueError(f"alias of a {kind} prompt that is not expected")
        self._entries.setdefault((kind, content_key(other_input)), entry)

    def _unique_entries(self) -> dict[tuple[str, object], _Entry]:
        """Each entry once (an :meth:`alias` shares its entry), under its first key."""
        seen: set[int] = set()
        out = {}
        for key, entry in self._entries.items():
            if id(entry) not in seen:
                seen.add(id(entry))
                out[key] = entry
        return out

    def expect_text(self, kind: str, prompt_text: str, replies: list[str], label: str) -> None:
        """Raw-prompt mode, for a prompt that is a plain string template (no input block): the
        prompt is recognised by its whole rendered text, and its k-th asking gets ``replies[k]``
        verbatim (the last one again when asked more often: a judge asked again after a reply its
        caller could not use). Call order matters only among askings of this one text, which Ragas
        makes one after another (a retry). Replies never asked are not a mismatch (the caller
        stops at the first reply it can use). The same text expected again with other replies is
        ambiguous and fails when asked. Expected again with the same replies (an identical row), they
        are served per asking task when they change from asking to asking (module docstring); outside
        a running event loop that is ambiguous too."""
        if not replies:
            raise ValueError("expect_text needs at least one reply")
        entry = self._texts.get(prompt_text)
        if entry is None:
            self._texts[prompt_text] = _TextEntry(kind, label, list(replies))
        elif entry.replies != replies:
            entry.ambiguous = True
        else:
            entry.rows += 1

    def scripted_text(self, prompt: object) -> bool:
        """True when the prompt is expected by its whole text (:meth:`expect_text`): every reply to
        it is scripted as given, including replies its caller rejects."""
        return _prompt_text(prompt) in self._texts

    def _answer_text(self, entry: _TextEntry, prompt_text: str) -> str:
        self.asked.append({"kind": entry.kind, "input": None, "template": template_digest(prompt_text, WHOLE_TEXT)})
        task = _asking_task() if entry.per_row() else None
        if entry.ambiguous or (entry.per_row() and task is None):
            raise self._fail(f"{entry.kind} prompt ({entry.label}) is ambiguous: the same prompt text is "
                             f"expected with different replies")
        if task is None:
            reply = entry.replies[min(entry.asked, len(entry.replies) - 1)]
            entry.asked += 1
            return reply
        entry.asked += 1
        made = self._task_askings(entry.per_task, task, entry.rows, entry.kind, entry.label)
        return entry.replies[min(made, len(entry.replies) - 1)]

    def _task_askings(self, per_task: dict[object, int], task: object, rows: int, kind: str, label: str,
                      step: int = 1) -> int:
        """The askings (a sampled prompt's: generations) ``task`` made of a prompt served per task before this
        one (its cursor), counting this one's ``step``; StubMismatch when a task beyond the ``rows`` that expect
        the prompt asks it."""
        made = per_task.get(task)
        per_task[task] = (made or 0) + step
        if made is None and len(per_task) > rows:
            raise self._fail(f"{kind} prompt ({label}) asked from {len(per_task)} asyncio tasks; {rows} rows "
                             f"expect it, each asking in turn within one task (a metric asking each call from "
                             f"a task of its own: the judge cannot tell which row asks)")
        return made or 0

    def expect_in_order(self, kind: str, instruction: str, prompt_input: dict, replies: list[dict],
                        label: str) -> None:
        """Expect ``len(replies)`` askings of one prompt, the k-th answered with ``replies[k]``: a judge
        sampled by asking the same prompt again (collections AnswerRelevancy awaits its ``strictness``
        calls one after another), so identical content with different replies is not ambiguous here."""
        for reply in replies:
            self.expect(kind, instruction, prompt_input, reply, label)
        if replies:
            self._entries[(kind, content_key(prompt_input))].in_order = True

    def _add(self, key: tuple[str, object], reply_text: str, label: str, row: object | None = None) -> None:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(label=label)
        entry.replies.append(reply_text)
        entry.rows.append(row)

    @property
    def expected_count(self) -> int:
        return (sum(e.askings if e.samples else len(e.replies) for (kind, _), e in self._unique_entries().items()
                    if not e.optional and kind not in self._calls)
                + len(self._texts))

    # -- answering ----------------------------------------------------------------
    def _kind_of(self, head: str) -> str | None:
        for instruction, kind in self._kinds.items():
            if head.startswith(instruction):
                return kind
        return None

    def _fail(self, message: str) -> StubMismatch:
        self.problems.append(message)
        return StubMismatch(message)

    def answer_prompt(self, prompt: object) -> str:
        """:meth:`answer` for a prompt as either Ragas API hands it to its LLM: the rendered string
        (collections) or a prompt value with ``to_string()`` (legacy)."""
        return self.answer(_prompt_text(prompt))

    def prompt_generations(self, prompt: object, n: int) -> list[str]:
        """:meth:`answer_generations` for a prompt as :meth:`answer_prompt` takes it."""
        return self.answer_generations(_prompt_text(prompt), n)

    def answer(self, prompt_text: str) -> str:
        """Return the frozen reply (JSON text) for a rendered prompt, or raise StubMismatch."""
        return self.answer_generations(prompt_text, 1)[0]

    def answer_generations(self, prompt_text: str, n: int) -> list[str]:
        """The ``n`` generations of one call: the first ``n`` samples of an :meth:`expect_samples`
        entry, else the entry's next reply ``n`` times; StubMismatch as :meth:`answer`."""
        with self._lock:
            if self._texts and prompt_text in self._texts:  # (hashing a long prompt costs: only when scripted)
                return [self._answer_text(self._texts[prompt_text], prompt_text)] * n
            try:
                head, data, layout = split_layout(prompt_text)
            except LayoutMismatch as exc:
                self.asked.append({"kind": None, "input": None, "template": template_digest(prompt_text, WHOLE_TEXT)})
                raise self._fail(str(exc)) from None
            kind = self._kind_of(head)
            template = _head_digest(head, layout.name)  # what the judge is shown, without the case's input
            self.last_scripted = False
            scripted = self._scripted_reply(kind, data, n, template)
            if scripted is not None:
                return scripted
            self.asked.append({"kind": kind, "input": data, "template": template})
            if kind is None:
                first_line = head.split("\n", 1)[0]
                hint = (" (Ragas rejected a frozen reply and asked the judge to fix its format)"
                        if first_line.startswith("The output string did not satisfy") else "")
                raise self._fail(
                    f"no frozen answer for a prompt of unknown kind: {first_line[:160]!r}{hint}")
            entry = self._entries.get((kind, self._content_key(kind, data)))
            if entry is None:
                raise self._fail(f"no frozen answer for {kind} prompt with input {canonical(data)[:300]}")
            if entry.samples:
                entry.asked += 1
                if entry.ambiguous:
                    raise self._fail(f"{kind} prompt ({entry.label}) is ambiguous: identical prompt content is "
                                     f"expected with different sampled replies in different rows (evaluate() "
                                     f"scores rows concurrently: no asking order between them)")
                task = _asking_task() if entry.askings > 1 else None
                if task is not None:  # identical rows with the same samples: the asking task's row's next ones
                    own = len(entry.replies) // entry.askings
                    start = self._task_askings(entry.per_task, task, entry.askings, kind, entry.label, n)
                    if start + n > own:
                        raise self._fail(f"{kind} prompt ({entry.label}) asked for {n} generations within one "
                                         f"asyncio task; one row's frozen verdicts provide {max(own - start, 0)} "
                                         f"samples")
                    return entry.replies[start:start + n]
                if entry.served >= len(entry.replies):
                    raise self._fail(f"{kind} prompt ({entry.label}) asked {entry.asked} times; "
                                     f"the frozen samples ({len(entry.replies)}) are all used")
                if entry.served + n > len(entry.replies):
                    raise self._fail(f"{kind} prompt ({entry.label}) asked for {n} generations; "
                                     f"the frozen verdicts provide {len(entry.replies) - entry.served} samples")
                entry.served += n
                return entry.replies[entry.served - n:entry.served]
            if entry.asked >= len(entry.replies) and not entry.repeatable:
                entry.asked += 1
                raise self._fail(
                    f"{kind} prompt ({entry.label}) asked {entry.asked} times; "
                    f"the frozen verdicts provide {len(entry.replies)}"
                )
            if len(set(entry.replies)) > 1 and not (entry.in_order or entry.one_row()):
                entry.asked += 1
                split = entry.row_sequence()
                task = _asking_task() if split is not None else None
                if task is not None:  # identical rows with one reply sequence: the asking task's next reply
                    sequence, rows = split
                    made = self._task_askings(entry.per_task, task, rows, kind, entry.label)
                    if made >= len(sequence):
                        raise self._fail(f"{kind} prompt ({entry.label}) asked {made + 1} times within one asyncio "
                                         f"task; one row's frozen verdicts provide {len(sequence)}")
                    return [sequence[made]] * n
                rows = ("" if not any(r is not None for r in entry.rows) else
                        " in different rows (evaluate() scores rows concurrently: no asking order between them)")
                raise self._fail(
                    f"{kind} prompt ({entry.label}) is ambiguous: identical prompt content must "
                    f"receive different frozen replies {entry.replies}{rows}"
                )
            reply = entry.replies[min(entry.asked, len(entry.replies) - 1)]
            entry.asked += 1
            if kind == FORMAT_FIX_KIND and layout is TASK_LINES:  # 0.1.x takes the fixed completion verbatim
                reply = json.loads(reply)["text"]
            return [reply] * n

    def _scripted_reply(self, kind: str | None, data: object, n: int, template: str | None = None) -> list[str] | None:
        """The ``n`` generations of this asking from ``kind``'s per-call script, None when no entry
        answers it (the asking is recorded here when one does)."""
        if not self._calls:  # no per-call script in this book (most cases): nothing to search
            return None
        label, calls = self._calls.get(kind or "", ("", []))
        index = next((i for i, call in enumerate(calls) if not call.used and call.matches(data)), None)
        if index is None:
            return None
        call = calls[index]
        call.used = not call.repeat
        self.asked.append({"kind": kind, "input": data, "scripted": f"{label}[{index}]", "template": template})
        self.last_scripted = True
        if len(call.replies) == 1:
            return list(call.replies) * n
        if n > len(call.replies):
            raise self._fail(f"{kind} prompt ({label}[{index}]) asked for {n} generations; "
                             f"the script gives {len(call.replies)}")
        return list(call.replies[:n])

    def _content_key(self, kind: str, data: object) -> object:
        """The lookup key of a prompt's input; a format-fix request is keyed by the original
        prompt's kind and input plus the output string it asks to fix."""
        if kind != FORMAT_FIX_KIND or not isinstance(data, dict):
            return content_key(self._kept(kind, data))
        # 0.2 on: {"output_string", "prompt_value"}; 0.1.x: {"completion", "prompt"}
        try:
            head, original = split_prompt(str(data.get("prompt_value", data.get("prompt", ""))))
        except StubMismatch:
            return content_key(data)
        original_kind = self._kind_of(head)
        return content_key({"kind": original_kind, "input": self._kept(original_kind, original),
                          "output_string": data.get("output_string", data.get("completion"))})

    def _kept(self, kind: str | None, data: object) -> object:
        """The input without the fields :meth:`ignore_fields` leaves out of ``kind``'s key."""
        ignored = self._ignored.get(kind or "")
        if not ignored or not isinstance(data, dict):
            return data
        return {key: value for key, value in data.items() if key not in ignored}

    def unasked(self) -> list[str]:
        """Expected prompts Ragas never asked (one line per missing asking), and each prompt served per
        asyncio task (module docstring) whose asking tasks did not each ask one row's whole reply
        sequence (the per-task answers then need not be the rows' own)."""
        out = []
        for (kind, _), entry in self._unique_entries().items():
            missing = 0 if entry.optional or kind in self._calls else (entry.askings if entry.samples else len(entry.replies)) - entry.asked
            if missing > 0:
                out.append(f"{kind} prompt ({entry.label}) expected {len(entry.replies)} "
                           f"time(s), asked {entry.asked}")
            split = entry.row_sequence() if entry.per_task else None
            if split is not None:
                length = len(split[0])
                off = sorted(made for made in entry.per_task.values() if made != length)
                if off:
                    out.append(f"{kind} prompt ({entry.label}) asked across {len(entry.per_task)} asyncio tasks, "
                               f"{len(off)} of them not {length} times (one row's replies in turn): {off}")
        return out
