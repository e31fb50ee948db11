"""Case files: load, validate (every problem at once) and hold frozen judge verdicts.

A case file is ``{"schema_version": 1, "suite": NAME, "cases": [...]}`` (schema:
``harness/cases/cases.schema.json``). Validation is the JSON Schema plus checks a schema cannot
express: unique case ids, one label per retrieved context, integer ``corpus_relevant_count``
(JSON Schema would accept ``4.0``). Every problem is reported in one HarnessInputError, one line
each: ``FILE: case 'ID': $.json.path: what was expected``; no case is loaded unless all are valid.
Judge-audit key sets and 0/1 label values are *not* checked here: verdicts are stored as given
and the reference implementations refuse what they cannot score.

Optional ``judge_replies``: ``{verdict key: {"i": raw text}}`` (label-list verdicts only) — the
judge's raw reply for retrieved context i, used verbatim by the probe's scripted judge instead of
the frozen verdict (e.g. malformed JSON, so Ragas fails to parse it). The reference refuses such a
row as an error with reason ``judge_reply_unparseable`` (not undefined: the formula is fine, the
judge failed). Checked: the verdict key is present and i < len(retrieved_contexts).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema

from harness.cases.model import DEFAULT_SUITE_SOURCE, Case, Suite
from harness.errors import HarnessInputError
from harness.resources import CASES_SCHEMA, DEFAULT_SUITE, package_text

LABEL_LIST_VERDICTS = ("context_precision_with_reference", "context_precision_without_reference")
CLAIM_VERDICTS = ("context_recall", "faithfulness")


# --------------------------------------------------------------------------- validation

def _schema() -> dict[str, Any]:
    text = package_text(CASES_SCHEMA)
    return json.loads(text)


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def json_path(path: tuple[Any, ...] | list[Any]) -> str:
    """``("cases", 3, "verdicts", "x")`` -> ``$.cases[3].verdicts.x`` (odd keys as ``["a b"]``)."""
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out


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
    if v == "additionalProperties" and isinstance(inst, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(k for k in inst if k not in allowed)
        return f"unexpected key(s) {', '.join(map(repr, extra))}; allowed: {', '.join(allowed)}"
    return error.message


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


def _semantic_problems(obj: Any) -> list[tuple[tuple[Any, ...], str]]:
    """Checks JSON Schema cannot express; tolerant of ill-typed input (the schema reports that)."""
    found: list[tuple[tuple[Any, ...], str]] = []
    if not isinstance(obj, dict) or not isinstance(obj.get("cases"), list):
        return found
    first_use: dict[str, int] = {}
    for i, case in enumerate(obj["cases"]):
        if not isinstance(case, dict):
            continue
        case_id = case.get("id")
        if isinstance(case_id, str) and case_id:
            if case_id in first_use:
                found.append((("cases", i, "id"),
                              f"duplicate case id {case_id!r} (first used at $.cases[{first_use[case_id]}])"))
            else:
                first_use[case_id] = i
        r = case.get("corpus_relevant_count")
        if isinstance(r, float):
            found.append((("cases", i, "corpus_relevant_count"), f"expected an integer, got number {_short(r)}"))
        contexts, verdicts = case.get("retrieved_contexts"), case.get("verdicts")
        if isinstance(contexts, list) and isinstance(verdicts, dict):
            for key in LABEL_LIST_VERDICTS:
                labels = verdicts.get(key)
                if isinstance(labels, list) and len(labels) != len(contexts):
                    found.append((("cases", i, "verdicts", key),
                                  f"expected {len(contexts)} labels (one per retrieved context), got {len(labels)}"))
        replies = case.get("judge_replies")
        if isinstance(replies, dict) and isinstance(contexts, list):
            for key, by_index in replies.items():
                if key in LABEL_LIST_VERDICTS and not (isinstance(verdicts, dict) and key in verdicts):
                    found.append((("cases", i, "judge_replies", key),
                                  f"raw judge replies for a verdict the case does not have (verdicts.{key})"))
                for index in (by_index if isinstance(by_index, dict) else {}):
                    if index.isdigit() and int(index) >= len(contexts):
                        found.append((("cases", i, "judge_replies", key, index),
                                      f"context index {index} out of range ({len(contexts)} retrieved contexts)"))
    return found


def suite_problems(obj: Any, source: str) -> list[str]:
    """Every problem of a parsed case file, one line each (empty list = valid)."""
    validator = jsonschema.Draft202012Validator(_schema())
    located = [(tuple(e.absolute_path), _describe(e)) for e in validator.iter_errors(obj)]
    located += _semantic_problems(obj)
    located.sort(key=lambda item: _document_order(obj, item[0]))
    lines: list[str] = []
    for path, what in located:
        line = f"{source}: {_where(obj, path)}{json_path(path)}: {what}"
        if line not in lines:
            lines.append(line)
    return lines


def _raise(source: str, problems: list[str], field_: str | None = None) -> None:
    plural = "problem" if len(problems) == 1 else "problems"
    raise HarnessInputError(f"{source}: {len(problems)} {plural} in case file:\n" + "\n".join(problems),
                            field=field_, problems=problems)


# --------------------------------------------------------------------------- building

def _opt_tuple(case: dict[str, Any], key: str) -> tuple[Any, ...] | None:
    return tuple(case[key]) if key in case else None


def _build_case(raw: dict[str, Any]) -> Case:
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
        verdicts=MappingProxyType(frozen_verdicts),
        judge_replies=MappingProxyType({key: MappingProxyType({int(i): text for i, text in by_index.items()})
                                        for key, by_index in raw.get("judge_replies", {}).items()}),
        judge_audit=None if audit is None else MappingProxyType(
            {"human": MappingProxyType(dict(audit["human"])), "judge": MappingProxyType(dict(audit["judge"]))}),
        raw=raw,
    )


def parse_suite(obj: Any, source: str = "<memory>") -> Suite:
    """Validate a parsed case file and build the Suite; HarnessInputError lists every problem."""
    problems = suite_problems(obj, source)
    if problems:
        _raise(source, problems)
    obj = copy.deepcopy(obj)
    return Suite(name=obj["suite"], source=source, cases=tuple(_build_case(c) for c in obj["cases"]))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} does not fit in a double")
    return value


def parse_suite_text(text: str, source: str) -> Suite:
    """Parse JSON text (strict: no NaN/Infinity) and validate it as a case file."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as err:
        _raise(source, [f"{source}: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"])
    except ValueError as err:
        _raise(source, [f"{source}: not valid JSON: {err}"])
    return parse_suite(obj, source=source)


def load_cases(path: str | Path) -> Suite:
    """Load and validate a case file; the suite's ``source`` is the file name."""
    path = Path(path)
    source = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        _raise(source, [f"{source}: case file not found"], "path")
    except (OSError, UnicodeDecodeError) as err:
        _raise(source, [f"{source}: cannot read case file: {err}"], "path")
    return parse_suite_text(text, source)


def load_default_suite() -> Suite:
    """The bundled default suite (package data ``harness/cases/suites/default.json``)."""
    text = package_text(DEFAULT_SUITE)
    return parse_suite_text(text, DEFAULT_SUITE_SOURCE)
