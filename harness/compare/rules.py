"""Conditions over a classified row: the small vocabulary expectation rules are written in.

An expectation *rule* (``ragas_compat.compare.expectations``) explains rows by what produces their
classification, not by case id. Its ``when`` table is a conjunction of the predicates below; a
predicate given a list holds when any of the values does. Every name is data in the TOML file and is
checked when the file is read (an unknown predicate or fact names the closest valid one).

Predicates (``when.<name>``):

- ``reference``: the state of the reference outcome: ``"defined"`` (a value), ``"undefined"``
  (an empty denominator; the reason is ``undefined_reason``) or ``"refused"`` (the reference
  refuses the input, e.g. a verdict that is not 0/1, or an unparseable judge reply).
- ``undefined_reason``: the reference's undefined reason (``no_relevant_retrieved``,
  ``empty_retrieval``, ``zero_claims``, ``empty_id_set``, ``empty_reference_contexts`` ...).
- ``reference_error_reason``: why the reference refused the row, when it says
  (``judge_reply_unparseable``).
- ``error_type``: Ragas raised an exception of this class name (``ValueError``).
- ``error_message``: Ragas raised and the message matches this regular expression (``re.search`` over
  its first 4,096 characters; the pattern must be in ``compare.safe_pattern``'s subset: no nested
  quantifiers or alternation inside a quantifier, no backreference, at most one unbounded quantifier,
  repeat counts up to 1,000, checked when the file is read).
- ``variant``: Ragas's value is the reference recomputed under one of these named variants of the
  metric (its alternatives ``variant:<name>``: ``bleu_first_sentence``, ``rouge_porter_stemming`` ...).
- ``inputs``: facts about the case's inputs as this row's metric reads them, all of which must
  hold; ``"!fact"`` negates one (``INPUT_FACTS`` lists them with their meaning; e.g.
  ``verdict_statements_repeat``: the judge lists one claim or entity twice from the same text;
  ``no_reference_statements``: the judge found no statement in the reference).

For a legacy-vs-collections pair the reference predicates read the case's reference outcome, the
error predicates the collections side (the side classified against the legacy value), and ``inputs``
the case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from ragas_compat.cases import Case
from ragas_compat.cases.loader import unknown_key_message
from ragas_compat.compare.classify import matching_variant
from ragas_compat.compare.safe_pattern import UnsafePattern, compile_safe
from ragas_compat.compare.safe_pattern import search as pattern_search
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.text_reference import levenshtein_distance, levenshtein_similarity
from ragas_compat.values import RagasError

REFERENCE_STATES = ("defined", "undefined", "refused")

# Ragas's string-similarity classes (NonLLMContextPrecisionWithReference, NonLLMContextRecall) count a
# retrieved context as matching a reference context when 1 - normalized Levenshtein distance >= 0.5.
STRING_SIMILARITY_THRESHOLD = 0.5


class Subject(Protocol):
    """What a condition reads: one row (or the collections side of a pair) and its case."""

    case: Case
    metric: str
    ragas_value: Any
    reference: Any           # ragas_compat.metrics.outcome.ReferenceOutcome
    received: Mapping[str, Any]


# --------------------------------------------------------------------------- input facts

def _is_binary(value: object) -> bool:
    return isinstance(value, bool) or (type(value) is int and value in (0, 1))


# keys of a claim object that are not labels: its text, and which text it was taken from (and the goal and
# end state a judge inferred from a conversation: AgentGoalAccuracy's verdicts)
NON_LABEL_KEYS = frozenset({"statement", "from", "user_goal", "end_state"})


def verdict_key(metric: str) -> str:
    """The verdict key the metric reads: its registered ``verdicts.key`` (several metrics may share
    one, e.g. the factual-correctness modes), else the metric name."""
    from ragas_compat.metrics.registry import metric as metric_spec
    from ragas_compat.metrics.registry import metric_names  # registry imports compare lazily

    if metric in metric_names():
        spec = metric_spec(metric)
        if spec.verdicts is not None:
            return spec.verdicts.key
    return metric


def verdict_labels(case: Case, metric: str) -> tuple[Any, ...]:
    """The labels of the verdict the metric reads: a label list as given, or each claim's label
    (every key of a claim but ``statement`` and ``from``)."""
    verdict = case.verdicts.get(verdict_key(metric), ())
    labels: list[Any] = []
    for item in verdict:
        if isinstance(item, Mapping):
            for key, value in item.items():
                if key not in NON_LABEL_KEYS:  # a list value holds one label per retrieved context
                    labels.extend(value if isinstance(value, (list, tuple)) else [value])
        else:
            labels.append(item)
    return tuple(labels)


def verdict_statements_repeat(case: Case, metric: str) -> bool:
    """True when the judge lists one statement (claim or entity) twice from the same text."""
    seen: set[tuple[Any, Any]] = set()
    for item in case.verdicts.get(verdict_key(metric), ()):
        if isinstance(item, Mapping) and "statement" in item:
            key = (item.get("from"), item["statement"])
            if key in seen:
                return True
            seen.add(key)
    return False


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def ids_collapse(retrieved: Sequence[Any] | None, reference: Sequence[Any] | None) -> bool:
    """True when ``str()`` + set semantics merge IDs the lists keep apart: an ID repeated within a
    list, or two IDs of different JSON type or spelling with one ``str()`` (``1`` and ``"1"``),
    within a list or across the two."""
    lists = [list(retrieved or ()), list(reference or ())]
    for ids in lists:
        if len({str(x) for x in ids}) < len(ids):
            return True
    spellings: dict[str, set[str]] = {}
    for ids in lists:
        for x in ids:
            spellings.setdefault(str(x), set()).add(_json(x))
    return any(len(forms) > 1 for forms in spellings.values())


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one character each): the reference's
    (``text_reference.levenshtein_distance``)."""
    return levenshtein_distance(a, b)


def string_similarity(a: str, b: str) -> float:
    """1 - Levenshtein distance / the longer length (1.0 for two empty strings)."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1 - levenshtein(a, b) / longest


def contexts_near_duplicate(retrieved: Sequence[str], reference: Sequence[str] | None,
                            threshold: float = STRING_SIMILARITY_THRESHOLD) -> bool:
    """True when some retrieved context differs from a reference context yet is at least
    ``threshold`` similar to it: a match for Ragas's string-similarity classes, none for exact
    string identity."""
    for r in retrieved:
        for c in reference or ():
            if r == c:
                continue
            longest = max(len(r), len(c))
            if longest and abs(len(r) - len(c)) / longest > 1 - threshold:
                continue  # the length difference alone puts the similarity under the threshold
            if string_similarity(r, c) >= threshold:
                return True
    return False


def contexts_at_similarity_threshold(retrieved: Sequence[str], reference: Sequence[str] | None,
                                     threshold: Fraction = Fraction(1, 2)) -> bool:
    """True when some retrieved context is exactly ``threshold`` similar (1 - normalized Levenshtein
    distance, computed exactly) to a reference context: where ``>=`` and ``>`` disagree."""
    return any(r != c and levenshtein_similarity(c, r) == threshold for r in retrieved for c in reference or ())


def received_differs(case: Case, received: Mapping[str, Any]) -> bool:
    """True when Ragas's sample held a field with another JSON value than the case gave
    (e.g. ``SingleTurnSample`` turned the ID ``1.0`` into ``1``)."""
    return any(name in case.raw and _json(case.raw[name]) != _json(value) for name, value in received.items())


SAMPLE_FIELDS = ("user_input", "reference", "response", "retrieved_contexts", "reference_contexts",
                 "retrieved_context_ids", "reference_context_ids")


def error_names_empty_input(case: Case, value: Any) -> bool:
    """True when Ragas raised and its message names (as a word) a sample field the case gives empty
    (``""`` or ``[]``): ``ValueError('response cannot be empty')`` on a case whose response is ``""``.
    An error the harness raised (its scripted judge's message quotes prompt inputs) is not Ragas's."""
    if not isinstance(value, RagasError) or value.raised_by_harness:
        return False
    message = value.message or ""
    return any(name in case.raw and case.raw[name] in ("", []) and re.search(rf"\b{name}\b", message)
               for name in SAMPLE_FIELDS)


@dataclass(frozen=True)
class InputFact:
    name: str
    meaning: str
    holds: Callable[[Subject], bool]


INPUT_FACTS: dict[str, InputFact] = {fact.name: fact for fact in (
    InputFact("retrieved_contexts_empty", "the case retrieved nothing (retrieved_contexts is [])",
              lambda s: len(s.case.retrieved_contexts) == 0),
    InputFact("reference_contexts_empty", "reference_contexts is given and empty",
              lambda s: s.case.reference_contexts is not None and len(s.case.reference_contexts) == 0),
    InputFact("retrieved_ids_empty", "retrieved_context_ids is given and empty",
              lambda s: s.case.retrieved_context_ids is not None and len(s.case.retrieved_context_ids) == 0),
    InputFact("reference_ids_empty", "reference_context_ids is given and empty",
              lambda s: s.case.reference_context_ids is not None and len(s.case.reference_context_ids) == 0),
    InputFact("non_binary_verdicts",
              "a verdict label the row's metric reads is not 0, 1, false or true (2, 1.0, \"1\" ...)",
              lambda s: not all(_is_binary(v) for v in verdict_labels(s.case, s.metric))),
    InputFact("ids_collapse",
              "str() + set semantics merge context IDs the lists keep apart (a repeated ID, or 1 and \"1\")",
              lambda s: ids_collapse(s.case.retrieved_context_ids, s.case.reference_context_ids)),
    InputFact("received_differs",
              "Ragas's sample held an input with another JSON value than the case gave (ID 1.0 became 1)",
              lambda s: received_differs(s.case, s.received)),
    InputFact("contexts_near_duplicate",
              "a retrieved context differs from a reference context but is >= 0.5 similar to it "
              "(1 - normalized Levenshtein distance, Ragas's string-similarity threshold)",
              lambda s: contexts_near_duplicate(s.case.retrieved_contexts, s.case.reference_contexts)),
    InputFact("contexts_at_similarity_threshold",
              "a retrieved context is exactly 0.5 similar to a reference context (1 - normalized Levenshtein "
              "distance, exact): a match for NonLLMContextPrecisionWithReference (>= 0.5), none for "
              "NonLLMContextRecall (> 0.5)",
              lambda s: contexts_at_similarity_threshold(s.case.retrieved_contexts, s.case.reference_contexts)),
    InputFact("error_names_empty_input",
              "Ragas raised naming a sample field (user_input, reference, response, retrieved_contexts ...) "
              "that the case gives empty",
              lambda s: error_names_empty_input(s.case, s.ragas_value)),
    InputFact("verdict_statements_repeat",
              "the judge lists one statement (claim or entity) twice from the same text",
              lambda s: verdict_statements_repeat(s.case, s.metric)),
    InputFact("no_reference_statements",
              "the row's verdict lists no statement taken from the reference (\"from\": \"reference\")",
              lambda s: not any(isinstance(i, Mapping) and i.get("from") == "reference"
                                for i in s.case.verdicts.get(verdict_key(s.metric), ()))),
    InputFact("verdict_statement_empty",
              "the row's verdict lists a statement (claim, entity or generated question) that is the empty string",
              lambda s: any(isinstance(i, Mapping) and i.get("statement") == ""
                            for i in s.case.verdicts.get(verdict_key(s.metric), ()))),
    InputFact("datacompy_reads_no_match",
              "DataCompyScore: under pandas' and datacompy's reading of the two CSV tables no row (rows mode) or "
              "no column (columns mode) matches, so Ragas's F1 is 2PR/(P+R) with P = R = 0",
              lambda s: s.reference.details.get("datacompy_reads_no_match") is True),
    InputFact("judge_reply_replaced",
              "the case replaces a judge reply for this metric with raw text (judge_replies)",
              lambda s: bool(s.case.judge_replies.get(s.metric))),
    InputFact("rating_first_template_unread",
              "a two-template rating metric (AnswerAccuracy, ContextRelevance, ResponseGroundedness): the legacy "
              "class reads no rating from any of template 1's replies in its attempts (its max(nan, s2) is NaN)",
              lambda s: s.reference.details.get("legacy_first_template_unread") is True),
    InputFact("rating_legacy_reads_other_ratings",
              "a two-template rating metric: the legacy class reads another rating than the definition from a "
              "template's replies (a digit in an off-scale reply or a text; no retry)",
              lambda s: s.reference.details.get("legacy_reads_other_ratings") is True),
    InputFact("rating_legacy_shortcut",
              "a two-template rating metric: the legacy class returns a fixed score without asking the judge "
              "(a blank text; ContextRelevance: the question equals or contains the joined contexts; "
              "ResponseGroundedness: the response is contained in them)",
              lambda s: s.reference.details.get("legacy_shortcut") is not None),
)}


# --------------------------------------------------------------------------- predicates

def reference_state(reference: Any) -> str:
    if reference.refused is not None:
        return "refused"
    return "undefined" if reference.value is None else "defined"


@dataclass(frozen=True)
class Condition:
    """A conjunction of predicates (module docstring); the empty condition always holds."""

    reference: frozenset[str] | None = None
    undefined_reason: frozenset[str] | None = None
    reference_error_reason: frozenset[str] | None = None
    error_type: frozenset[str] | None = None
    error_message: re.Pattern[str] | None = None
    inputs: tuple[tuple[str, bool], ...] = ()       # (fact, expected truth)
    variant: frozenset[str] | None = None
    source: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def holds(self, subject: Subject) -> bool:
        reference = subject.reference
        if self.reference is not None and reference_state(reference) not in self.reference:
            return False
        if self.undefined_reason is not None and (
                reference.value is not None or reference.refused is not None
                or reference.undefined_reason not in self.undefined_reason):
            return False
        if self.reference_error_reason is not None and (
                reference.refused is None
                or reference.details.get("error_reason") not in self.reference_error_reason):
            return False
        value = subject.ragas_value
        if self.error_type is not None and not (isinstance(value, RagasError) and value.type in self.error_type):
            return False
        if self.error_message is not None and not (
                isinstance(value, RagasError) and pattern_search(self.error_message, value.message or "")):
            return False
        if self.variant is not None and matching_variant(value, reference) not in self.variant:
            return False
        return all(INPUT_FACTS[name].holds(subject) is truth for name, truth in self.inputs)

    def describe(self) -> str:
        """The condition in words, for the report (``"always"`` when empty)."""
        parts = []
        if self.reference is not None:
            parts.append("reference " + " or ".join(sorted(self.reference)))
        if self.undefined_reason is not None:
            parts.append("undefined because " + " or ".join(sorted(self.undefined_reason)))
        if self.reference_error_reason is not None:
            parts.append("reference refused because " + " or ".join(sorted(self.reference_error_reason)))
        if self.error_type is not None:
            parts.append("Ragas raised " + " or ".join(sorted(self.error_type)))
        if self.error_message is not None:
            parts.append(f"error message matches /{self.error_message.pattern}/")
        if self.variant is not None:
            parts.append("Ragas's value is the variant " + " or ".join(sorted(self.variant)))
        parts += [("not " if not truth else "") + name for name, truth in self.inputs]
        return "; ".join(parts) or "always"


PREDICATES: dict[str, str] = {
    "reference": f"the reference's state: one of {', '.join(REFERENCE_STATES)}",
    "undefined_reason": "the reference is undefined for one of these reasons",
    "reference_error_reason": "the reference refused the row for one of these reasons (details.error_reason)",
    "error_type": "Ragas raised an exception of one of these class names",
    "error_message": "Ragas raised and its message matches this regular expression (re.search)",
    "variant": ("Ragas's value is, within a few ulps, the reference recomputed under one of these named "
                "variants (the metric's alternatives 'variant:<name>', e.g. bleu_first_sentence)"),
    "inputs": f"facts about the inputs, all of which hold ('!fact' negates): {', '.join(INPUT_FACTS)}",
}


def _names(value: Any, where: str) -> frozenset[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise HarnessInputError(f"{where}: expected a string or a non-empty list of strings, got {value!r}",
                                field=where, value=value)
    return frozenset(values)


def parse_condition(data: Any, where: str) -> Condition:
    """A ``when`` table of an expectations file; every problem names ``where`` and the key."""
    if data is None:
        return Condition()
    if not isinstance(data, dict):
        raise HarnessInputError(f"{where}: expected a table of predicates, got {data!r}", field=where, value=data)
    for key in data:
        if key not in PREDICATES:
            raise HarnessInputError(f"{where}.{key}: {unknown_key_message(key, tuple(PREDICATES))}",
                                    field=f"{where}.{key}", value=key)
    kwargs: dict[str, Any] = {"source": dict(data)}
    if "reference" in data:
        states = _names(data["reference"], f"{where}.reference")
        bad = sorted(states - set(REFERENCE_STATES))
        if bad:
            raise HarnessInputError(f"{where}.reference: {bad[0]!r} is not one of {', '.join(REFERENCE_STATES)}",
                                    field=f"{where}.reference", value=bad[0])
        kwargs["reference"] = states
    for key in ("undefined_reason", "reference_error_reason", "error_type", "variant"):
        if key in data:
            kwargs[key] = _names(data[key], f"{where}.{key}")
    if "error_message" in data:
        pattern = data["error_message"]
        if not isinstance(pattern, str) or not pattern:
            raise HarnessInputError(f"{where}.error_message: expected a regular expression string, got {pattern!r}",
                                    field=f"{where}.error_message", value=pattern)
        try:
            kwargs["error_message"] = compile_safe(pattern)
        except UnsafePattern as exc:  # backtracking without end, or too large to compile
            raise HarnessInputError(f"{where}.error_message: refused: {exc} (the patterns a rule may use: "
                                    "ragas_compat.compare.safe_pattern)", field=f"{where}.error_message",
                                    value=pattern[:200]) from None
        except (re.error, OverflowError, RecursionError) as exc:
            raise HarnessInputError(f"{where}.error_message: not a valid regular expression: {exc}",
                                    field=f"{where}.error_message", value=pattern[:200]) from None
    if "inputs" in data:
        facts = []
        for name in sorted(_names(data["inputs"], f"{where}.inputs")):
            fact, truth = (name[1:], False) if name.startswith("!") else (name, True)
            if fact not in INPUT_FACTS:
                raise HarnessInputError(f"{where}.inputs: {unknown_key_message(fact, tuple(INPUT_FACTS))}"
                                        .replace("unknown key", "unknown input fact"),
                                        field=f"{where}.inputs", value=name)
            facts.append((fact, truth))
        kwargs["inputs"] = tuple(facts)
    return Condition(**kwargs)


def glob_list(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> tuple[str, ...]:
    """An optional (or required) non-empty list of fnmatch patterns; absent = match anything."""
    if key not in data:
        if required:
            raise HarnessInputError(f"{where}.{key}: required (a non-empty list of names or globs)",
                                    field=f"{where}.{key}")
        return ()
    value = data[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise HarnessInputError(f"{where}.{key}: expected a non-empty list of strings, got {data[key]!r}",
                                field=f"{where}.{key}", value=data[key])
    return tuple(value)


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Equal to, or fnmatch (case-sensitive) against, any pattern; no patterns matches every name. A target
    name with options has brackets (``legacy:BleuScore[kwargs={lowercase=True}]``), which fnmatch reads as a
    character class: the name itself, as ``expect bless`` writes it, must match it."""
    from fnmatch import fnmatchcase

    patterns = tuple(patterns)
    return not patterns or any(name == p or fnmatchcase(name, p) for p in patterns)


@dataclass(frozen=True)
class RowSubject:
    """A ``Subject`` built from a row (``subject_of_row``) or a pair (``subject_of_pair``)."""

    case: Case
    metric: str
    ragas_value: Any
    reference: Any
    received: Mapping[str, Any]


def subject_of_row(row: Any) -> RowSubject:
    """An audit row (``ragas_compat.compare.audit.AuditRow``) as a Subject."""
    return RowSubject(row.case, row.spec.name, row.ragas_value, row.reference, row.received or {})


def subject_of_pair(legacy: Any, collections: Any) -> RowSubject:
    """A (legacy row, collections row) pair: the case's reference outcome, the collections value."""
    return RowSubject(legacy.case, legacy.spec.name, collections.ragas_value, legacy.reference,
                      collections.received or {})
