"""Case files: load, validate (every problem at once) and hold frozen judge verdicts.

A case file is ``{"schema_version": 1, "suite": NAME, "cases": [...]}`` (schema:
``harness/cases/cases.schema.json``). Validation is the JSON Schema plus checks a schema cannot
express: unique case ids, one label per retrieved context, integer ``corpus_relevant_count``
(JSON Schema would accept ``4.0``), at least one case. Every problem is reported in one
HarnessInputError, one line each: ``FILE: case 'ID': $.json.path: what was expected``; no case is
loaded unless all are valid. An unknown key anywhere is an error at its own path naming the closest
valid key (``unknown key 'corpus_relevent_count'; did you mean 'corpus_relevant_count'?``).

Inputs are stored as given: verdict labels may be numbers, booleans or strings (``"1"``), context
IDs any JSON scalar. Judge-audit key sets and 0/1 label values are *not* checked here: the
reference implementations refuse what they cannot score and Ragas coerces what it does.

Which verdict keys hold label lists and which hold claim lists is read from the schema
(``LABEL_LIST_VERDICTS``, ``CLAIM_VERDICTS``): a verdict property ``$ref``s ``#/$defs/labelList`` or a
claim-list definition, each marked ``"x-verdict-kind"``; a new metric's verdict key is one schema line.

Optional ``judge_replies``: ``{verdict key: {"i": raw text}}`` (label-list verdicts only) — the
judge's raw reply for retrieved context i, used verbatim by the probe's scripted judge instead of
the frozen verdict (e.g. malformed JSON, so Ragas fails to parse it). The reference refuses such a
row as an error with reason ``judge_reply_unparseable`` (not undefined: the formula is fine, the
judge failed). Checked: the verdict key is present and i is a canonical decimal index below
len(retrieved_contexts) (``"01"`` or ``"1\\n"`` would be read as 1 by the reference but never asked
for by the probe's judge, so they are refused).

Optional ``judge_calls``: ``{verdict key: {prompt kind: [call, ...]}}`` — a per-call judge script the
probe's scripted judge answers in call order (schema ``judgeCallList``). The reference still computes
from the verdicts, so the verdict key must be present in ``verdicts``, and a verdict key is scripted
by ``judge_calls`` or ``judge_replies``, not both (checked here).

Inconsistent inputs are refused here, so every command (run, explain, fuzz --check-cases, the pytest
plugin) refuses them the same way: ``corpus_relevant_count`` R smaller than the number of distinct
items labelled relevant (``1`` or ``true``) in ``verdicts.context_precision_with_reference`` (an item is
its ``retrieved_context_ids`` entry when given, else its exact text: a chunk retrieved twice is one item).

A Ragas EvaluationDataset given as a case file (JSONL, a JSON list of samples, ``{"samples": [...]}``,
CSV: samples with ``user_input``, ``response``, ``retrieved_contexts`` ... or the old column names) is
refused with the commands that turn it into cases, ``record`` and ``import`` (``dataset_problem``).

Limits (``ragas_compat.input_limits``): a JSON case file is read as a regular file or ``-`` (stdin) of at
most 64 MiB, parsed with bounded nesting and number length; it holds at most 100,000 cases (``max_cases``;
also the total over several files) and every list of a case at most 5,000 items (``MAX_LIST_ITEMS``).
Both are checked before the schema, so a huge file costs no schema validation.

JSONL case files (``read_jsonl_cases``): an optional header line (the top level without ``cases``), then
one case per line, read line by line (never whole): each line at most 64 MiB, the file at most 16 times
that, the same schema, checks and limits per case, every problem naming the file, line and field.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import io
import json
import marshal
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import jsonschema

from ragas_compat.cases.configurations import configurations_of, merged, resolve, target_keys
from ragas_compat.cases.model import DEFAULT_SUITE_SOURCE, Case, Message, Suite, ToolCall
from ragas_compat.errors import CappedProblems, HarnessInputError
from ragas_compat.input_limits import (
    MAX_CASES_ENV,
    MAX_INPUT_BYTES_ENV,
    STDIN,
    Limits,
    json_path,
    loads_json,
    open_regular_file,
    read_text,
    size_text,
    source_name,
)
from ragas_compat.resources import CASES_SCHEMA, DEFAULT_SUITE, package_text

VERDICT_KIND = "x-verdict-kind"  # annotation on a list definition: "label_list" or "claim_list"


def _schema() -> dict[str, Any]:
    text = package_text(CASES_SCHEMA)
    return json.loads(text)


def verdict_keys_by_kind(schema: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """``{"label_list": (...), "claim_list": (...)}``: each verdict key of the case schema, by the
    ``x-verdict-kind`` of the definition its property ``$ref``s (``#/$defs/labelList`` ...), in
    schema order. A verdict property without such a ``$ref`` is an error in the schema."""
    defs = schema.get("$defs", {})
    properties = {**defs["case"]["properties"]["verdicts"]["properties"],
                  **defs.get("multiTurnCase", {}).get("properties", {}).get("verdicts", {}).get("properties", {})}
    kinds: dict[str, list[str]] = {"label_list": [], "claim_list": []}
    for key, subschema in properties.items():
        ref = subschema.get("$ref", "") if isinstance(subschema, dict) else ""
        target = defs.get(ref.removeprefix("#/$defs/"), {}) if ref.startswith("#/$defs/") else {}
        kind = target.get(VERDICT_KIND)
        if kind not in kinds:
            raise RuntimeError(f"case schema: verdicts.{key} must $ref a definition with "
                               f"{VERDICT_KIND} 'label_list' or 'claim_list' (got $ref {ref!r})")
        kinds[kind].append(key)
    return {kind: tuple(keys) for kind, keys in kinds.items()}


_VERDICT_KINDS = verdict_keys_by_kind(_schema())
# the keys of a multi-turn case (user_input a list of messages) and of a single-turn case, from the schema
MULTI_TURN_KEYS: tuple[str, ...] = tuple(_schema()["$defs"]["multiTurnCase"]["properties"])
SINGLE_TURN_KEYS: tuple[str, ...] = tuple(_schema()["$defs"]["case"]["properties"])
LABEL_LIST_VERDICTS: tuple[str, ...] = _VERDICT_KINDS["label_list"]
CLAIM_VERDICTS: tuple[str, ...] = _VERDICT_KINDS["claim_list"]


# --------------------------------------------------------------------------- validation


# json_path (``("cases", 3, "verdicts", "x")`` -> ``$.cases[3].verdicts.x``) lives in ragas_compat.input_limits.
_CANONICAL_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")


_JSON_TYPE_WORDS = {"string": "a string", "number": "a number", "integer": "an integer",
                    "boolean": "a boolean", "object": "an object", "array": "an array", "null": "null"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _got(value: Any) -> str:
    kind = _json_type(value)
    if kind in ("object", "array", "null"):
        return kind
    return f"{kind} {_short(value)}"


def _describe(error: jsonschema.ValidationError) -> str:
    v, inst = error.validator, error.instance
    if v == "type":
        types = [error.validator_value] if isinstance(error.validator_value, str) else error.validator_value
        return f"expected {' or '.join(_JSON_TYPE_WORDS.get(t, t) for t in types)}, got {_got(inst)}"
    if v == "required":
        missing = re.match(r"^'(.*)' is a required property$", error.message)
        return f"missing required key {missing.group(1)!r}" if missing else error.message
    if v == "enum":
        return f"expected one of {', '.join(map(str, error.validator_value))}, got {_got(inst)}"
    if v == "const":
        return f"expected {_short(error.validator_value)}, got {_got(inst)}"
    if v == "minLength":
        return f"expected a non-empty string, got {_got(inst)}"
    if v == "minimum":
        return f"expected a number >= {error.validator_value}, got {_got(inst)}"
    if v == "minItems" and isinstance(inst, list) and not inst:
        if tuple(error.absolute_path) == ("cases",):
            return "expected at least one case, got an empty list"
        return f"expected at least {error.validator_value} item(s), got an empty list"
    return error.message


def closest_name(key: str, valid: list[str] | tuple[str, ...], cutoff: float = 0.6) -> str | None:
    """The valid name closest to ``key`` (difflib's similarity ratio, at least ``cutoff``), also
    comparing ``key`` with each name's beginning, so a misspelt prefix (``context_precison``) finds
    ``context_precision_with_reference`` rather than a shorter name that shares fewer letters; None
    when nothing is close. Ties go to the earlier name."""
    def score(name: str) -> float:
        whole = difflib.SequenceMatcher(None, key, name).ratio()
        start = difflib.SequenceMatcher(None, key, name[:len(key)]).ratio() - 0.05 if len(name) > len(key) else 0.0
        return max(whole, start)

    scored = [(score(name), -index, name) for index, name in enumerate(valid)]
    best = max(scored, default=None)
    return best[2] if best is not None and best[0] >= cutoff else None


def unknown_key_message(key: str, valid: list[str] | tuple[str, ...]) -> str:
    """``unknown key 'x'; did you mean 'y'?`` (the closest valid name), or the valid names."""
    close = closest_name(key, valid)
    if close is not None:
        return f"unknown key {key!r}; did you mean {close!r}?"
    return f"unknown key {key!r}; valid keys: {', '.join(sorted(valid)) or '(none)'}"


def _located(error: jsonschema.ValidationError) -> list[tuple[tuple[Any, ...], str]]:
    """(path, message) lines of one schema error; an unknown key is reported at its own path,
    one line per key, naming the closest valid key."""
    path = tuple(error.absolute_path)
    if (error.validator == "additionalProperties" and error.validator_value is False
            and isinstance(error.instance, dict)):
        allowed = list(error.schema.get("properties", {}))
        multi_turn, single_turn = allowed == list(MULTI_TURN_KEYS), allowed == list(SINGLE_TURN_KEYS)
        return [((*path, key), _single_turn_key_message(key) if multi_turn and key in SINGLE_TURN_KEYS
                 else _multi_turn_key_message(key) if single_turn and key in MULTI_TURN_KEYS
                 else unknown_key_message(key, allowed))
                for key in error.instance if key not in allowed]
    return [(path, _describe(error))]


def _single_turn_key_message(key: str) -> str:
    """A single-turn key in a multi-turn case (its user_input is a list of messages)."""
    return (f"{key!r} is a single-turn key, but this case is multi-turn (user_input is a list of messages: "
            f"Ragas's MultiTurnSample); a multi-turn case takes {', '.join(MULTI_TURN_KEYS)}")


def _multi_turn_key_message(key: str) -> str:
    """A multi-turn key in a single-turn case (its user_input is a text)."""
    return (f"{key!r} is a multi-turn key, but this case is single-turn (user_input is a text); a multi-turn "
            "case gives user_input as a list of messages ({\"type\": \"human\"|\"ai\"|\"tool\", \"content\": ...})")


def _where(obj: Any, path: tuple[Any, ...]) -> str:
    """``case 'x': `` (or ``case #3: `` when the id is unusable) for paths under $.cases[i]."""
    if len(path) >= 2 and path[0] == "cases" and isinstance(path[1], int):
        case = obj["cases"][path[1]]
        if isinstance(case, dict) and isinstance(case.get("id"), str) and case["id"]:
            return f"case {case['id']!r}: "
        return f"case #{path[1]}: "
    return ""


def _document_order(obj: Any, path: tuple[Any, ...]) -> tuple[int, ...]:
    """Sort key that puts problems in the order their fields appear in the file."""
    key: list[int] = []
    node = obj
    for part in path:
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            key.append(part)
            node = node[part]
        elif isinstance(node, dict) and part in node:
            key.append(list(node).index(part))
            node = node[part]
        else:  # a missing key (e.g. reported by "required") sorts after the present ones
            key.append(1 << 30)
            node = None
    return tuple(key)


R_LABELS = "context_precision_with_reference"  # the labels R (corpus_relevant_count) is checked against


def relevant_label_count(labels: list[Any] | tuple[Any, ...]) -> int:
    """How many labels say "relevant" unambiguously (``1`` or ``true``): R cannot be smaller. Other
    values (``2``, ``"1"``, ``1.0``) are refused by the reference on their own, so they are not counted."""
    return sum(1 for v in labels if v is True or (type(v) is int and v == 1))


def _relevant(v: Any) -> bool:
    return v is True or (type(v) is int and v == 1)


def distinct_relevant_count(labels: list[Any] | tuple[Any, ...], items: list[Any] | tuple[Any, ...] | None) -> int:
    """How many distinct corpus items the labels call relevant (``1`` or ``true``): R counts relevant
    items of the corpus, so a chunk retrieved twice counts once. ``items``: one identity per label (the
    retrieved context IDs when given, else the context texts); without them every label is its own item."""
    if items is None or len(items) != len(labels):
        return relevant_label_count(labels)
    return len({json.dumps(item, sort_keys=True) for item, v in zip(items, labels, strict=True) if _relevant(v)})


def _size_problems(obj: Any, limits: Limits) -> list[tuple[tuple[Any, ...], str]]:
    """Lists of a case longer than ``limits.max_list_items`` (checked before the schema: cheap)."""
    found: list[tuple[tuple[Any, ...], str]] = []
    cases = obj.get("cases") if isinstance(obj, dict) else None
    most = limits.max_list_items

    def check(path: tuple[Any, ...], value: Any) -> None:
        if isinstance(value, (list, dict)) and len(value) > most:
            found.append((path, f"{len(value)} items; a case's lists hold at most {most} items"))

    for i, case in enumerate(cases if isinstance(cases, list) else ()):
        if not isinstance(case, dict):
            continue
        for key, value in case.items():  # every list of a case, and every list of its tables (verdicts ...)
            check(("cases", i, key), value)
            if isinstance(value, dict):
                for inner, item in value.items():
                    check(("cases", i, key, inner), item)
    return found


def _target_problems(path: tuple[Any, ...], value: Any) -> list[tuple[tuple[Any, ...], str]]:
    """A ``targets`` object checked against the configurable classes the schema declares
    (``ragas_compat.cases.configurations``): known keys (the closest one named), each (API, class) named
    once, every configuration an object of the class's own options with values of their declared types
    (an integer option takes no 3.0), no configuration twice."""
    found: list[tuple[tuple[Any, ...], str]] = []
    if not isinstance(value, dict):
        return found  # the schema says what it should be
    keys = target_keys()
    named: dict[str, str] = {}
    for key, configured in value.items():
        if key not in keys:
            close = closest_name(key, list(keys))
            found.append(((*path, key), f"unknown target {key!r}; " + (
                f"did you mean {close!r}?" if close else f"configurable targets: {', '.join(keys)}")))
            continue
        declared, apis = keys[key]
        for api in apis:
            target = f"{api}:{declared.apis[api]}"
            if target in named:
                found.append(((*path, key), f"{target} is named twice (also by {named[target]!r})"))
            named[target] = key
        if isinstance(configured, list) and not configured:
            found.append(((*path, key), "expected a configuration object or a non-empty list of them, got an empty list"))
        validator = jsonschema.Draft202012Validator({"type": "object", "additionalProperties": False,
                                                     "properties": dict(declared.options)})
        seen: dict[str, int] = {}
        for j, options in enumerate(configurations_of(configured)):
            where = (*path, key, j) if isinstance(configured, list) else (*path, key)
            if not isinstance(options, dict):
                found.append((where, f"expected an object of {declared.name} options, got {_got(options)}"))
                continue
            for error in validator.iter_errors(options):
                for sub, what in _located(error):
                    what = what.replace("unknown key", f"unknown {declared.name} option", 1)
                    found.append(((*where, *sub), what.replace("valid keys:", "its options:")))
            for option, schema in declared.options.items():
                if schema.get("type") == "integer" and isinstance(options.get(option), float):
                    found.append(((*where, option), f"expected an integer, got number {_short(options[option])}"))
            text = json.dumps(sorted(options.items()), default=str)
            if text in seen:
                found.append((where, f"the same configuration as configuration {seen[text]} of {key!r}"))
            seen.setdefault(text, j)
    return found


def _semantic_problems(obj: Any) -> list[tuple[tuple[Any, ...], str]]:
    """Checks JSON Schema cannot express; tolerant of ill-typed input (the schema reports that)."""
    found: list[tuple[tuple[Any, ...], str]] = []
    if not isinstance(obj, dict) or not isinstance(obj.get("cases"), list):
        return found
    found += _target_problems(("targets",), obj.get("targets"))
    first_use: dict[str, int] = {}
    for i, case in enumerate(obj["cases"]):
        if not isinstance(case, dict):
            continue
        found += _target_problems(("cases", i, "targets"), case.get("targets"))
        case_id = case.get("id")
        if isinstance(case_id, str) and case_id:
            if case_id in first_use:
                found.append((("cases", i, "id"),
                              f"duplicate case id {case_id!r} (first used at $.cases[{first_use[case_id]}])"))
            else:
                first_use[case_id] = i
        r = case.get("corpus_relevant_count")
        contexts, verdicts = case.get("retrieved_contexts"), case.get("verdicts")
        if isinstance(r, float):
            found.append((("cases", i, "corpus_relevant_count"), f"expected an integer, got number {_short(r)}"))
        elif type(r) is int and isinstance(verdicts, dict):
            labels = verdicts.get(R_LABELS)
            ids = case.get("retrieved_context_ids")
            by_ids = isinstance(ids, list) and isinstance(labels, list) and len(ids) == len(labels)
            items = ids if by_ids else contexts if isinstance(contexts, list) else None
            hits = distinct_relevant_count(labels, items) if isinstance(labels, list) else 0
            if r < hits:
                found.append((("cases", i, "corpus_relevant_count"),
                              f"R = {r} is smaller than the {hits} distinct items labelled relevant in "
                              f"verdicts.{R_LABELS} (by {'retrieved_context_ids' if by_ids else 'exact context text'}): "
                              "R counts every relevant item in the corpus"))
        if isinstance(contexts, list) and isinstance(verdicts, dict):
            for key in LABEL_LIST_VERDICTS:
                labels = verdicts.get(key)
                if isinstance(labels, list) and len(labels) != len(contexts):
                    found.append((("cases", i, "verdicts", key),
                                  f"expected {len(contexts)} labels (one per retrieved context), got {len(labels)}"))
        replies = case.get("judge_replies")
        if isinstance(replies, dict):
            for key in replies:
                if key in CLAIM_VERDICTS:
                    found.append((("cases", i, "judge_replies", key),
                                  f"raw judge replies replace label-list verdicts only "
                                  f"({', '.join(LABEL_LIST_VERDICTS)}), not {key!r}"))
                elif key not in LABEL_LIST_VERDICTS:
                    found.append((("cases", i, "judge_replies", key), unknown_key_message(key, LABEL_LIST_VERDICTS)))
        found += _judge_call_problems(i, case)
        found += _hhem_score_problems(i, case)
        found += _message_problems(i, case)
        if isinstance(replies, dict) and isinstance(contexts, list):
            for key, by_index in replies.items():
                if key in LABEL_LIST_VERDICTS and not (isinstance(verdicts, dict) and key in verdicts):
                    found.append((("cases", i, "judge_replies", key),
                                  f"raw judge replies for a verdict the case does not have (verdicts.{key})"))
                for index in (by_index if isinstance(by_index, dict) else {}):
                    if not _CANONICAL_INDEX.fullmatch(index):
                        found.append((("cases", i, "judge_replies", key, index),
                                      f"context index {_short(index)}: expected a decimal index without sign, "
                                      f"spaces or leading zeros (0, 1, 2 ...)"))
                    elif int(index) >= len(contexts):
                        found.append((("cases", i, "judge_replies", key, index),
                                      f"context index {index} out of range ({len(contexts)} retrieved contexts)"))
    return found


def _message_problems(i: int, case: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """Tool calls on a message that is not an ai message (Ragas's HumanMessage and ToolMessage have no
    tool calls: pydantic would drop them silently)."""
    messages = case.get("user_input")
    found: list[tuple[tuple[Any, ...], str]] = []
    for j, message in enumerate(messages if isinstance(messages, list) else ()):
        if isinstance(message, dict) and "tool_calls" in message and message.get("type") in ("human", "tool"):
            found.append((("cases", i, "user_input", j, "tool_calls"),
                          f"only ai messages make tool calls; this is a {message['type']} message"))
    return found


HHEM_STATEMENTS = "faithfulness"  # the verdict key whose statements hhem_scores scores


def _hhem_score_problems(i: int, case: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """``hhem_scores`` (FaithfulnesswithHHEM's frozen classifier) without the statements it scores
    (``verdicts.faithfulness``), a statement without its score, a score for no statement."""
    scores, verdicts = case.get("hhem_scores"), case.get("verdicts")
    if not isinstance(scores, dict):
        return []
    claims = verdicts.get(HHEM_STATEMENTS) if isinstance(verdicts, dict) else None
    if claims is None:
        return [(("cases", i, "hhem_scores"), f"HHEM scores without the statements they score (verdicts."
                 f"{HHEM_STATEMENTS}: the judge's statements of the response); give them too")]
    if not isinstance(claims, list):
        return []  # the schema says what it should be
    statements = [c["statement"] for c in claims if isinstance(c, dict) and isinstance(c.get("statement"), str)]
    found: list[tuple[tuple[Any, ...], str]] = []
    for j, statement in enumerate(statements):
        if statement not in scores:
            found.append((("cases", i, "hhem_scores"), f"no score for statement {j} of verdicts.{HHEM_STATEMENTS} "
                          f"({_short(statement)}): the frozen classifier scores every statement"))
    for key in scores:
        if key not in statements:
            found.append((("cases", i, "hhem_scores", key), f"a score for a statement verdicts.{HHEM_STATEMENTS} "
                          "does not have (statements are matched by their exact text)"))
    return found


def _judge_call_problems(i: int, case: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """``judge_calls`` keys without their verdict (the reference computes from it) or also scripted by
    ``judge_replies`` (two scripts for one judge)."""
    calls, verdicts, replies = case.get("judge_calls"), case.get("verdicts"), case.get("judge_replies")
    found: list[tuple[tuple[Any, ...], str]] = []
    for key in calls if isinstance(calls, dict) else ():
        if not (isinstance(verdicts, dict) and key in verdicts):
            found.append((("cases", i, "judge_calls", key),
                          f"a per-call script for a verdict the case does not have (verdicts.{key}); the "
                          f"reference computes from the verdicts, so give them too"))
        if isinstance(replies, dict) and key in replies:
            found.append((("cases", i, "judge_calls", key),
                          f"judge_replies.{key} also scripts this judge; use one of judge_calls and judge_replies"))
    return found


def suite_problems(obj: Any, source: str, limits: Limits | None = None) -> list[str]:
    """Every problem of a parsed case file, one line each (empty list = valid). Lists over the
    limit are reported alone (before the schema, which would spend its time on them)."""
    located = _size_problems(obj, limits or Limits.current())
    if not located:
        validator = jsonschema.Draft202012Validator(_schema())
        located = [line for e in validator.iter_errors(obj) for line in _located(e)]
        located += _semantic_problems(obj)
    located.sort(key=lambda item: _document_order(obj, item[0]))
    lines: list[str] = []
    for path, what in located:
        line = f"{source}: {_where(obj, path)}{json_path(path)}: {what}"
        if line not in lines:
            lines.append(line)
    return lines


def check_case_count(count: int, source: str, limits: Limits) -> None:
    """More than ``limits.max_cases`` cases is refused (exit 2) before anything is validated."""
    if count > limits.max_cases:
        _raise(source, [f"{source}: $.cases: {count} cases; at most {limits.max_cases} are read "
                        f"(raise the limit with {MAX_CASES_ENV}=N)"], "cases")


def _raise(source: str, problems: list[str], field_: str | None = None) -> None:
    plural = "problem" if len(problems) == 1 else "problems"
    raise HarnessInputError(f"{source}: {len(problems)} {plural} in case file:\n" + "\n".join(problems),
                            field=field_, problems=problems)


# --------------------------------------------------------------------------- building

def _opt_tuple(case: dict[str, Any], key: str) -> tuple[Any, ...] | None:
    return tuple(case[key]) if key in case else None


def _tool_calls(calls: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(call["name"], MappingProxyType(dict(call["args"]))) for call in calls)


def _build_multi_turn_case(raw: dict[str, Any]) -> Case:
    """One validated multi-turn case (user_input a list of messages: Ragas's MultiTurnSample)."""
    conversation = tuple(Message(m["type"], m["content"], None if "tool_calls" not in m else _tool_calls(m["tool_calls"]))
                         for m in raw["user_input"])
    return Case(
        id=raw["id"], category=raw["category"], description=raw.get("description"),
        user_input="", reference=raw.get("reference", ""), response="", retrieved_contexts=(),
        conversation=conversation,
        reference_tool_calls=None if "reference_tool_calls" not in raw else _tool_calls(raw["reference_tool_calls"]),
        reference_topics=_opt_tuple(raw, "reference_topics"),
        verdicts=MappingProxyType({key: tuple(MappingProxyType(dict(item)) for item in items)
                                   for key, items in raw.get("verdicts", {}).items()}),
        raw=raw,
    )


def _build_case(raw: dict[str, Any], suite_targets: Any = None) -> Case:
    """One validated case; ``suite_targets``: the file's default ``targets``, merged into the case's
    (and into its raw object, which the probe reads: ``configurations.merged``)."""
    if isinstance(raw.get("user_input"), list):
        return _build_multi_turn_case(raw)
    targets = merged(suite_targets, raw.get("targets"))
    if suite_targets:
        raw = {**raw, "targets": targets}
    verdicts = raw.get("verdicts", {})
    frozen_verdicts: dict[str, tuple[Any, ...]] = {}
    for key in LABEL_LIST_VERDICTS:
        if key in verdicts:
            frozen_verdicts[key] = tuple(verdicts[key])
    for key in CLAIM_VERDICTS:
        if key in verdicts:
            frozen_verdicts[key] = tuple(MappingProxyType(dict(claim)) for claim in verdicts[key])
    audit = raw.get("judge_audit")
    return Case(
        id=raw["id"],
        category=raw["category"],
        description=raw.get("description"),
        user_input=raw["user_input"],
        reference=raw["reference"],
        response=raw["response"],
        retrieved_contexts=tuple(raw["retrieved_contexts"]),
        candidate_contexts=_opt_tuple(raw, "candidate_contexts"),
        reference_contexts=_opt_tuple(raw, "reference_contexts"),
        retrieved_context_ids=_opt_tuple(raw, "retrieved_context_ids"),
        reference_context_ids=_opt_tuple(raw, "reference_context_ids"),
        corpus_relevant_count=raw.get("corpus_relevant_count"),
        string_metrics=True if raw.get("string_metrics") is True else None,
        table_metrics=True if raw.get("table_metrics") is True else None,
        quoted_spans=True if raw.get("quoted_spans") is True else None,
        embeddings=None if raw.get("embeddings") is None else MappingProxyType(
            {text: tuple(vector) for text, vector in raw["embeddings"].items()}),
        rubrics=None if raw.get("rubrics") is None else MappingProxyType(dict(raw["rubrics"])),
        hhem_scores=None if raw.get("hhem_scores") is None else MappingProxyType(dict(raw["hhem_scores"])),
        verdicts=MappingProxyType(frozen_verdicts),
        judge_replies=MappingProxyType({key: MappingProxyType({int(i): text for i, text in by_index.items()})
                                        for key, by_index in raw.get("judge_replies", {}).items()}),
        judge_calls=MappingProxyType({key: MappingProxyType({kind: tuple(calls) for kind, calls in by_kind.items()})
                                      for key, by_kind in raw.get("judge_calls", {}).items()}),
        judge_audit=None if audit is None else MappingProxyType(
            {"human": MappingProxyType(dict(audit["human"])), "judge": MappingProxyType(dict(audit["judge"]))}),
        targets=resolve(targets),
        raw=raw,
    )


def parse_suite(obj: Any, source: str = "<memory>", limits: Limits | None = None) -> Suite:
    """Validate a parsed case file and build the Suite; HarnessInputError lists every problem."""
    problems = suite_problems(obj, source, limits)
    if problems:
        _raise(source, problems)
    obj = copy.deepcopy(obj)
    return Suite(name=obj["suite"], source=source, cases=tuple(_build_case(c, obj.get("targets")) for c in obj["cases"]))


def _locate(document: Any, path: tuple[Any, ...]) -> str:
    return f"{_where(document, path)}{json_path(path)}: "


# --------------------------------------------------------------------------- not a case file: a dataset

# The columns of a Ragas EvaluationDataset's single-turn sample (and their old names): a file whose
# samples carry them is a dataset that ``ragas-compat record`` or ``ragas-compat import`` turns into cases.
DATASET_COLUMNS = frozenset({"user_input", "response", "retrieved_contexts", "reference", "reference_contexts",
                             "retrieved_context_ids", "reference_context_ids", "multi_responses", "rubrics",
                             "question", "contexts", "answer", "ground_truth"})
CASE_FILE_KEYS = frozenset({"schema_version", "suite", "cases"})


def _is_sample(value: Any) -> bool:
    return isinstance(value, dict) and bool(DATASET_COLUMNS & value.keys()) and not CASE_FILE_KEYS & value.keys()


def _dataset_form(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """How a parsed JSON document holds a Ragas EvaluationDataset's samples, and its first sample (None:
    it is no dataset)."""
    if _is_sample(obj):
        return "JSONL, one sample", obj
    if isinstance(obj, list) and obj and all(_is_sample(item) for item in obj[:20]):
        return "a JSON list of samples", obj[0]
    if (isinstance(obj, dict) and "cases" not in obj and isinstance(obj.get("samples"), list)
            and obj["samples"] and all(_is_sample(item) for item in obj["samples"][:20])):
        return 'a {"samples": [...]} document', obj["samples"][0]
    return None


def _jsonl_dataset(text: str) -> dict[str, Any] | None:
    """The first sample when the text's first lines are JSON objects of sample columns, one per line (JSONL)."""
    lines = [line for line in text.split("\n", 21)[:20] if line.strip()]
    try:
        samples = [json.loads(line) for line in lines]
    except (ValueError, RecursionError):
        return None
    return samples[0] if samples and all(_is_sample(sample) for sample in samples) else None


def _csv_dataset(text: str) -> dict[str, Any] | None:
    """The header's sample columns (as an empty first sample) when the text is a CSV of samples (what
    ``EvaluationDataset.to_csv`` writes): two or more of its header's cells are sample columns."""
    header = text.lstrip("\ufeff").split("\n", 1)[0].strip()
    cells = [cell.strip().strip('"') for cell in header.split(",")]
    found = {cell: None for cell in cells if cell in DATASET_COLUMNS}
    return found if len(found) >= 2 else None


def dataset_problem(source: str, form: str, sample: Mapping[str, Any]) -> str:
    """What ``run --cases`` says about a Ragas EvaluationDataset: which command turns it into cases."""
    columns = ", ".join(key for key in sample if key in DATASET_COLUMNS)
    name = "DATASET" if source.startswith("<") else source
    return (f"{source} is a Ragas EvaluationDataset ({form}; columns {columns}), not a case file. Turn it into "
            f"cases first: `ragas-compat record {name} --out cases.json` (a live judge scores it; its verdicts and "
            f"Ragas's scores are recorded and replayed offline) or `ragas-compat import {name} LABELS.csv --out "
            "cases.json` (judge or human labels you already have); then `ragas-compat run --cases cases.json`")


def parse_suite_text(text: str, source: str, limits: Limits | None = None) -> Suite:
    """Parse JSON text (strict: no NaN/Infinity; nesting, number length and unicode checked by
    ``ragas_compat.input_limits.loads_json``) and validate it as a case file (at most ``max_cases`` cases).
    A Ragas EvaluationDataset (JSONL, a JSON list of samples, ``{"samples": [...]}``, CSV) is refused
    with the command that turns it into cases (``dataset_problem``)."""
    limits = limits or Limits.current()
    try:
        obj = loads_json(text, source, limits=limits, locate=_locate, field="case file")
    except HarnessInputError as err:
        first = _jsonl_dataset(text)
        if first is not None:
            _raise(source, [dataset_problem(source, "JSONL", first)], "case file")
        header = _csv_dataset(text)
        if header is not None:
            _raise(source, [dataset_problem(source, "CSV", header)], "case file")
        _raise(source, [str(err)], err.field)
    dataset = _dataset_form(obj)
    if dataset is not None:
        _raise(source, [dataset_problem(source, *dataset)], "case file")
    cases = obj.get("cases") if isinstance(obj, dict) else None
    if isinstance(cases, list):
        check_case_count(len(cases), source, limits)
    return parse_suite(obj, source=source, limits=limits)


# --------------------------------------------------------------------------- JSONL: one case per line, streamed

JSONL_SNIFF_BYTES = 1 << 20  # the first line of a JSONL case file is recognised within this many bytes
JSONL_TOTAL_FACTOR = 16      # a JSONL case file holds at most this many times max_input_bytes in all
MAX_LISTED_PROBLEMS = 100    # problems listed one by one; the rest are counted
_BOM = b"\xef\xbb\xbf"


def jsonl_first_line(head: bytes) -> str | None:
    """``"header"`` or ``"case"`` when ``head`` (a file's first bytes) begins a JSONL case file, else None.
    Its first non-blank line, complete within ``JSONL_SNIFF_BYTES``, is one JSON object without ``cases``: a
    header (``schema_version`` or ``suite``, top-level keys) or a case (``id``). The schema then names what the line
    lacks (a header's ``schema_version``, a case's ``category``) against its line, not "not valid JSON".
    A JSON case file's first line is never either (``{`` alone, or the whole document with its ``cases``), and a
    Ragas EvaluationDataset's samples have no ``id`` (refused apart, with how to convert them)."""
    head = head.removeprefix(_BOM).lstrip(b" \t\r\n")  # blank lines before it are skipped
    end = head.find(b"\n")
    if end < 0 and len(head) > JSONL_SNIFF_BYTES:
        return None
    try:
        first = json.loads(head if end < 0 else head[:end])
    except (ValueError, RecursionError):
        return None
    if _is_header(first):
        return "header"
    return "case" if _is_case_line(first) else None


def _is_case_line(obj: Any) -> bool:
    """A JSONL case line: an object with an ``id`` (a Ragas EvaluationDataset's samples have none)."""
    return isinstance(obj, dict) and "cases" not in obj and "id" in obj


def _is_header(obj: Any) -> bool:
    """A JSONL header line: the case file's top level without ``cases`` (it names ``schema_version`` or ``suite``)."""
    return isinstance(obj, dict) and "cases" not in obj and ("schema_version" in obj or "suite" in obj)


def _header_validator() -> jsonschema.Draft202012Validator:
    """The case file's top level without ``cases``: what a JSONL header line may hold."""
    schema = _schema()
    schema["properties"] = {key: value for key, value in schema["properties"].items() if key != "cases"}
    schema["required"] = [key for key in schema["required"] if key != "cases"]
    return jsonschema.Draft202012Validator(schema)


class _JsonlProblems(CappedProblems):
    """The problems of a JSONL case file, one line each: the first ``MAX_LISTED_PROBLEMS`` listed."""

    def __init__(self, source: str) -> None:
        super().__init__(MAX_LISTED_PROBLEMS)
        self.source = source

    def raise_now(self, line: str | None = None, field_: str | None = None) -> None:
        if line is not None:
            self.append(line)
        listed = self.shown(self.source)
        plural = "problem" if len(self) == 1 else "problems"
        raise HarnessInputError(f"{self.source}: {len(self)} {plural} in case file:\n" + "\n".join(listed),
                                field=field_, problems=listed)


def _case_line_problems(case: Any, where: str, validator: jsonschema.Draft202012Validator,
                        limits: Limits) -> list[str]:
    """One case line's problems, the JSON case file's checks on a one-case document, its paths
    relative to the line (``$.verdicts.x``)."""
    document = {"schema_version": 1, "suite": "jsonl", "cases": [case]}
    located = _size_problems(document, limits)
    if not located:
        located = [line for e in validator.iter_errors(document) for line in _located(e)]
        located += _semantic_problems(document)
    located.sort(key=lambda item: _document_order(document, item[0]))
    lines: list[str] = []
    for path, what in located:
        inner = path[2:] if path[:2] == ("cases", 0) else path
        line = f"{where}: {_where(document, path)}{json_path(inner)}: {what}"
        if line not in lines:
            lines.append(line)
    return lines


def read_jsonl_cases(stream: Any, source: str, limits: Limits | None = None, *, default_name: str = "cases") -> Suite:
    """A JSONL case file read from the binary ``stream`` line by line, never whole: an optional header
    line (the case file's top level without ``cases``: ``schema_version``, ``suite``, suite ``targets``
    ...), then one case per line (the JSON case file's schema and checks, blank lines skipped). Every
    problem names the file, the line and the field (``big.jsonl: line 7: case 'x': $.verdicts.y: ...``);
    none is loaded unless all are valid. Limits: each line at most ``max_input_bytes``, the file at most
    ``JSONL_TOTAL_FACTOR`` times that, at most ``max_cases`` cases (refused as soon as one more is read)
    and as many blank lines; depth, number length and list lengths per line as in a JSON case file.
    Without a header the suite is named ``default_name``."""
    limits = limits or Limits.current()
    problems = _JsonlProblems(source)
    case_validator = jsonschema.Draft202012Validator(_schema())
    header: dict[str, Any] | None = None
    cases: list[Case] = []
    seen: dict[str, int] = {}
    total = number = count = blank = 0
    while True:
        data = stream.readline(limits.max_input_bytes + 1)
        if not data:
            break
        number += 1
        total += len(data)
        where = f"{source}: line {number}"
        if len(data) > limits.max_input_bytes:
            problems.raise_now(f"{where}: longer than the input limit of {size_text(limits.max_input_bytes)} "
                               f"per line (raise it with {MAX_INPUT_BYTES_ENV}=BYTES)", "size")
        if total > JSONL_TOTAL_FACTOR * limits.max_input_bytes:
            problems.raise_now(f"{where}: the file is larger than {JSONL_TOTAL_FACTOR} times the input limit of "
                               f"{size_text(limits.max_input_bytes)} (raise it with {MAX_INPUT_BYTES_ENV}=BYTES)",
                               "size")
        if number == 1:
            data = data.removeprefix(_BOM)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{where}: not UTF-8 text: byte 0x{data[exc.start]:02x} at column {exc.start + 1} "
                         f"({exc.reason})")
            continue
        if not text.strip():
            blank += 1
            if blank > limits.max_cases:
                problems.raise_now(f"{where}: more than {limits.max_cases} blank lines", "cases")
            continue
        try:
            obj = loads_json(text.rstrip("\r\n"), where, limits=limits, locate=lambda _doc, path: f"{json_path(path)}: ",
                             field="case file")
        except HarnessInputError as err:
            problems.append(str(err).replace(" at line 1 column ", " at column "))
            continue
        if number - blank == 1 and _is_header(obj):
            header = obj
            for error in _header_validator().iter_errors(obj):
                for path, what in _located(error):
                    problems.append(f"{where}: (header) {json_path(path)}: {what}")
            for path, what in _target_problems(("targets",), obj.get("targets")):
                problems.append(f"{where}: (header) {json_path(path)}: {what}")
            continue
        if count == 0 and _is_sample(obj) and not _is_case_line(obj):
            _raise(source, [dataset_problem(source, "JSONL", obj)], "case file")
        count += 1
        if count > limits.max_cases:
            problems.raise_now(f"{where}: more than {limits.max_cases} cases; at most {limits.max_cases} are read "
                               f"(raise the limit with {MAX_CASES_ENV}=N)", "cases")
        found = _case_line_problems(obj, where, case_validator, limits)
        for line in found:
            problems.append(line)
        case_id = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(case_id, str) and case_id:
            if case_id in seen:
                problems.append(f"{where}: case {case_id!r}: $.id: duplicate case id (first used on line {seen[case_id]})")
            seen.setdefault(case_id, number)
        if not found and not problems:  # build only while the file is valid so far
            cases.append(_build_case(obj, header.get("targets") if header else None))
    if not count and not problems:
        problems.append(f"{source}: no cases: a JSONL case file holds one case per line (after an optional header "
                     f"line such as {{\"schema_version\": 1, \"suite\": \"NAME\"}})")
    if problems:
        problems.raise_now()
    name = header["suite"] if header else default_name
    return Suite(name=name, source=source, cases=tuple(cases))


def load_cases(path: str | Path, limits: Limits | None = None) -> Suite:
    """Load and validate a case file (``-``: standard input); the suite's ``source`` is the file
    name (``<stdin>``). A JSON case file is read whole: a regular file of at most ``max_input_bytes``.
    A JSONL case file (``jsonl_first_line``) is read as a stream, line by line (``read_jsonl_cases``);
    from standard input it is read whole first, within ``max_input_bytes``."""
    limits = limits or Limits.current()
    source = source_name(path)
    default_name = Path(source).stem if str(path) != STDIN else "stdin"
    if str(path) != STDIN:
        try:
            fd = open_regular_file(path, "case file", source)
        except HarnessInputError as err:
            _raise(source, [str(err)], "path")
        with open(fd, "rb", closefd=True) as stream:
            try:
                head = stream.read(JSONL_SNIFF_BYTES + 1)
            except OSError as exc:
                _raise(source, [f"{source}: cannot read the case file: {exc.strerror or exc}"], "path")
            if jsonl_first_line(head) is not None:
                stream.seek(0)
                return read_jsonl_cases(stream, source, limits, default_name=default_name)
    try:
        text = read_text(path, "case file", limits=limits)
    except HarnessInputError as err:
        _raise(source, [str(err)], "path")
    if str(path) == STDIN and jsonl_first_line(text[:JSONL_SNIFF_BYTES + 1].encode("utf-8")) is not None:
        return read_jsonl_cases(io.BytesIO(text.encode("utf-8")), source, limits, default_name=default_name)
    return parse_suite_text(text, source, limits)


def load_default_suite() -> Suite:
    """The bundled default suite (package data ``harness/cases/suites/default.json``)."""
    text = package_text(DEFAULT_SUITE)
    return parse_suite_text(text, DEFAULT_SUITE_SOURCE)


class PackedRaw(Mapping):
    """A case's raw JSON object kept packed (``marshal``: exact types, key order and values; about a
    third of the parsed object's size) and read as a read-only mapping, unpacked when a value is read.
    A large run holds its cases' raw objects this way once the probe's request is written (``packed``):
    after that only a few fields are read (the inputs Ragas received, a recording, judge scripts), and
    for one case at a time, so the last object unpacked is kept (one slot for all: a case's rows
    unpack it once). The keys are kept apart (one frozenset for every object with the same keys), so
    asking for a key the object lacks (most cases hold no ``recording``) unpacks nothing."""

    __slots__ = ("_data", "_keys")
    _last: ClassVar[tuple[object, dict[str, Any]] | None] = None  # (the PackedRaw last unpacked, its object)
    _key_sets: ClassVar[dict[frozenset[str], frozenset[str]]] = {}

    def __init__(self, raw: dict[str, Any]) -> None:
        self._data = marshal.dumps(raw)
        keys = frozenset(raw)
        self._keys = PackedRaw._key_sets.setdefault(keys, keys)

    def unpack(self) -> dict[str, Any]:
        """The raw object, a new copy (for a probe request, or a caller that changes it)."""
        return marshal.loads(self._data)

    def _object(self) -> dict[str, Any]:
        last = PackedRaw._last
        if last is not None and last[0] is self:
            return last[1]
        unpacked = marshal.loads(self._data)
        PackedRaw._last = (self, unpacked)
        return unpacked

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return self._object()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._object()[key] if key in self._keys else default

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._object())

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"PackedRaw({self._object()!r})"


def raw_object(case: Case) -> dict[str, Any]:
    """``case.raw`` as a JSON object (a packed one unpacked: a new copy)."""
    raw = case.raw
    if isinstance(raw, PackedRaw):
        return raw.unpack()
    return raw if isinstance(raw, dict) else dict(raw)


def packed(suite: Suite) -> Suite:
    """``suite`` with each case's raw object packed (``PackedRaw``): for a run that has written its
    probe request and reads the raw objects only field by field after that. The cases are otherwise
    the same (equal: ``raw`` is not compared). A raw object ``marshal`` cannot pack stays as it is."""
    def pack(case: Case) -> Case:
        if not isinstance(case.raw, dict):  # packed already
            return case
        try:
            return dataclasses.replace(case, raw=PackedRaw(case.raw))
        except ValueError:  # an object marshal refuses (not one of its exact types)
            return case
    return Suite(suite.name, suite.source, tuple(pack(case) for case in suite.cases))
