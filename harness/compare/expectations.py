"""Expected classifications: known Ragas semantics as rules, a user's deliberate exceptions by case id.

An expectations file is TOML. Five kinds of entries, all optional:

``[[rule]]`` explains rows by what produces their classification, whatever their case id::

    [[rule]]
    id = "ap-empty-as-zero"                      # unique; shown on every row it explains
    classification = "empty_as_zero"             # the classification it explains (not "identical")
    ragas = ">=0.2.15,<0.5"                      # optional: PEP 440 range of the Ragas version that ran
    targets = ["legacy:*ContextPrecision*", "collections:ContextUtilization"]   # optional fnmatch globs
    metrics = ["context_precision_*"]            # optional fnmatch globs over metric names
    when = { undefined_reason = ["no_relevant_retrieved", "empty_retrieval"] }  # optional condition
    allow_out_of_range = false                   # optional: the value may lie outside the metric's range
    reason = "AP is 0/0; the 1e-10 in the denominator turns it into 0.0."
    upstream = "https://github.com/..."          # optional

A rule *explains* a row when the row's classification is the rule's, its target, metric and the
Ragas version match, and the condition holds (``when``: the vocabulary of ``ragas_compat.compare.rules``:
``reference``, ``undefined_reason``, ``reference_error_reason``, ``error_type``, ``error_message``,
``inputs``). The first rule in file order that explains a row is the one the row carries. A rule with
a ``ragas`` range never applies when the Ragas version is unknown.

``[[case]]`` names rows by case id: a user's deliberate exceptions, and what ``bless`` writes::

    [[case]]
    case = "cp-worked-example"                   # or cases = ["a", "b"]
    targets = ["legacy:LLMContextPrecisionWithReference"]   # names or globs
    classification = "epsilon"                   # any classification, "identical" included
    reason = "..."
    upstream = "..."                             # optional
    allow_out_of_range = false                   # optional

A case entry is strict: the rows it names are expected to have exactly its classification, and it
takes precedence over every rule (and a user's entry over the pin's). Two entries of one file naming
one row, and an entry naming a row of the run's cases and targets that the run did not produce
(stale: a name without its row, a glob matching none of the case's rows), are problems of the file.

``[[path_rule]]`` and ``[[path_case]]`` do the same for legacy-vs-collections pairs
(``ragas_compat.compare.api_paths``), with ``legacy_targets`` and ``collections_targets`` instead of
``targets``; their condition reads the case's reference outcome and the collections side's value.

``[[not_replayable]]`` accepts a recorded live score the offline replay cannot reproduce (a case
written by ``ragas-compat record`` lists it under ``recording.not_replayable`` with a reason), and ``bless``
writes one for each::

    [[not_replayable]]
    case = "rec-7"
    target = "legacy:LLMContextRecall"
    reason = "..."                               # the recording's reason, word for word

``ragas_compat.compare.replay`` accepts the outcome only while the recording still lists that reason for
that target: a changed reason, another target, or a live value the harness raised (no entry explains a
harness error) is still a ``replay_mismatch``; an entry naming a case of the run whose recording does not
list the target as not replayable is stale, a problem too.

Top level: ``include_pin_rules`` (default true) — a user's file is applied *before* the pin's rules
(``pinned/expectations.toml``), so it only needs its exceptions; ``false`` uses the file alone.
``[[deviation]]`` / ``[[path_deviation]]`` (the format before rules) are read as ``[[case]]`` /
``[[path_case]]``.

A row that no case entry names and no rule explains is expected ``identical``; if it is not, it is
*unexplained* (``ragas_compat.compare.verdict`` turns that into drift).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, TypeVar

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ragas_compat.cases.loader import unknown_key_message
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.compare.rules import (
    Condition,
    Subject,
    glob_list,
    matches_any,
    parse_condition,
    subject_of_pair,
    subject_of_row,
)
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import STDIN, STDIN_SOURCE, loads_toml, read_toml
from ragas_compat.probe.protocol import BUDGET_ERROR_TYPE, UNAVAILABLE_TYPE
from ragas_compat.values import RagasError

CLASSIFICATION_NAMES: tuple[str, ...] = tuple(str(c) for c in CLASSIFICATIONS)
T = TypeVar("T")


@lru_cache(maxsize=1024)
def _is_version(version: str | None) -> bool:
    try:
        Version(version or "")
    except InvalidVersion:
        return False
    return True


def version_in(specifier: SpecifierSet, version: str) -> bool:
    """Does ``specifier`` contain ``version`` (pre-releases included; an invalid version is in none)?
    Cached: every row asks every rule about the same one or two versions."""
    try:
        return specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def harness_raised(value: Any) -> bool:
    """The harness's own error (``RagasError.raised_by_harness``), which no rule or case entry explains."""
    return isinstance(value, RagasError) and value.raised_by_harness


NOT_SCORED_TYPES = (BUDGET_ERROR_TYPE, UNAVAILABLE_TYPE)


def not_scored(value: Any) -> str | None:
    """The error type of a row the probe did not score, else None: Ragas did not finish within the
    harness's budget (``BudgetExceeded``), or this Ragas has no such class or configuration
    (``TargetUnavailable``). Such a row says nothing of what Ragas computes: no case entry explains it
    (an entry records what a row scored; ``expect bless`` wrote ``error`` for every row that raised), and
    a rule only when it names the type (``when = { error_type = ["BudgetExceeded"] }``)."""
    return value.type if isinstance(value, RagasError) and value.type in NOT_SCORED_TYPES else None


@dataclass(frozen=True)
class Expectation:
    """What a row (or pair) is expected to be, and what says so.

    ``by`` names the rule or case entry (``None``: nothing names the row, so it is expected
    ``identical``); ``origin`` is the file it comes from."""

    classification: str
    reason: str | None
    upstream: str | None
    by: str | None = None
    origin: str | None = None
    allow_out_of_range: bool = False

    @property
    def explained(self) -> bool:
        return self.by is not None

    @property
    def label(self) -> str | None:
        """``rule ap-epsilon (pinned/expectations.toml)``, for reports; None when nothing names the row."""
        if self.by is None:
            return None
        return f"{self.by} ({self.origin})" if self.origin else self.by


IDENTICAL = Expectation("identical", None, None)


# --------------------------------------------------------------------------- entries

@dataclass(frozen=True)
class Rule:
    """A ``[[rule]]`` (or, with ``legacy_targets``/``collections_targets``, a ``[[path_rule]]``)."""

    id: str
    classification: str
    reason: str
    upstream: str | None
    origin: str
    ragas: SpecifierSet | None = None
    targets: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    when: Condition = field(default_factory=Condition)
    allow_out_of_range: bool = False
    legacy_targets: tuple[str, ...] = ()
    collections_targets: tuple[str, ...] = ()

    def applies_to_version(self, version: str | None) -> bool:
        if self.ragas is None:
            return True
        if version is None:
            return False
        return version_in(self.ragas, version)

    def explains(self, classification: str, target: str, subject: Subject) -> bool:
        return (classification == self.classification and matches_any(target, self.targets)
                and matches_any(subject.metric, self.metrics) and self.when.holds(subject)
                and self._may_explain(subject))

    def explains_pair(self, classification: str, legacy: str, collections: str, subject: Subject) -> bool:
        return (classification == self.classification and matches_any(legacy, self.legacy_targets)
                and matches_any(collections, self.collections_targets)
                and matches_any(subject.metric, self.metrics) and self.when.holds(subject)
                and self._may_explain(subject))

    def _may_explain(self, subject: Subject) -> bool:
        """A rule explains a row the probe did not score (``not_scored``: a budget stop, a class not in this
        Ragas) only when it names that type (``when = { error_type = ["BudgetExceeded"] }``): a rule about
        the errors Ragas raises does not cover them (a catch-all ``error`` rule turned a run whose rows all
        hit a 0.01 s budget green)."""
        kind = not_scored(subject.ragas_value)
        return kind is None or (self.when.error_type is not None and kind in self.when.error_type)

    def expectation(self) -> Expectation:
        """The expectation of every row or pair the rule explains: one object, shared by them all."""
        return self._expectation

    @cached_property
    def _expectation(self) -> Expectation:
        return Expectation(self.classification, self.reason, self.upstream, f"rule {self.id}", self.origin,
                           self.allow_out_of_range)


@dataclass(frozen=True)
class CaseEntry:
    """A ``[[case]]`` (or, with ``legacy_targets``/``collections_targets``, a ``[[path_case]]``)."""

    index: int
    cases: tuple[str, ...]
    classification: str
    reason: str
    upstream: str | None
    origin: str
    targets: tuple[str, ...] = ()
    allow_out_of_range: bool = False
    legacy_targets: tuple[str, ...] = ()
    collections_targets: tuple[str, ...] = ()
    table: str = "case"

    def names(self, case_id: str, target: str) -> bool:
        return case_id in self.cases and matches_any(target, self.targets)

    def names_pair(self, case_id: str, legacy: str, collections: str) -> bool:
        return (case_id in self.cases and matches_any(legacy, self.legacy_targets)
                and matches_any(collections, self.collections_targets))

    @property
    def where(self) -> str:
        return f"{self.table}[{self.index}]"

    def expectation(self) -> Expectation:
        """The expectation of every row or pair the entry names: one object, shared by them all."""
        return self._expectation

    @cached_property
    def _expectation(self) -> Expectation:
        return Expectation(self.classification, self.reason, self.upstream,
                           f"{self.table} entry {self.index} ({', '.join(self.cases)})", self.origin,
                           self.allow_out_of_range)


@dataclass(frozen=True)
class NotReplayableEntry:
    """A ``[[not_replayable]]``: the recorded live score of (case, target) is accepted as not replayable
    for ``reason`` (the recording's ``not_replayable`` text, compared word for word)."""

    index: int
    case: str
    target: str
    reason: str
    origin: str

    @property
    def where(self) -> str:
        return f"not_replayable[{self.index}]"

    def accepts(self, reason: str) -> bool:
        return self.reason == str(reason).strip()


def unproduced(patterns: Sequence[T], run_targets: Sequence[T], produced: Collection[T],
               match: Callable[[T, T], bool]) -> list[T]:
    """What of an entry's target ``patterns`` names rows the case did not produce (``produced``), among the
    run's targets (``run_targets``; a target the run did not score is not stale): a name (a pattern equal
    to a run target) without its row, or a glob that matches run targets (``match(target, pattern)``) but
    none of the case's rows. A glob means "the case's rows that match" (``legacy:*``): it is not stale for
    each matching target the case could never produce, only when it names none of its rows."""
    out = []
    for pattern in patterns:
        if pattern in run_targets:
            if pattern not in produced:
                out.append(pattern)
            continue
        matching = [target for target in run_targets if match(target, pattern)]
        if matching and not any(target in produced for target in matching):
            out.append(pattern)
    return out


def _matches(name: str, pattern: str) -> bool:
    return matches_any(name, (pattern,))


def _same_origin(entries: list[CaseEntry]) -> list[CaseEntry]:
    """The entries of the first entry's file: a layered file's entry overrides the pin's for the same
    row (no problem), two entries of one file naming a row are ambiguous (a problem)."""
    return [entry for entry in entries if entry.origin == entries[0].origin] if entries else []


# --------------------------------------------------------------------------- the rule set

@dataclass(frozen=True)
class Expectations:
    """Rules and case entries of one file, or of a user's file layered over the pin's rules.

    ``for_ragas(version)`` binds the Ragas version that ran (rules with a ``ragas`` range need it);
    ``ragas_compat.compare.audit.build_audit`` does that before explaining rows."""

    source: str
    rules: tuple[Rule, ...] = ()
    cases: tuple[CaseEntry, ...] = ()
    path_rules: tuple[Rule, ...] = ()
    path_cases: tuple[CaseEntry, ...] = ()
    ragas_version: str | None = None
    include_pin_rules: bool = True
    # the version rules see when the Ragas that ran reports none usable (a checkout: "unknown version"),
    # derived from its place among the release tags (pin.sources.release_position)
    release_position: str | None = None
    not_replayable: tuple[NotReplayableEntry, ...] = ()

    def for_ragas(self, version: str | None) -> Expectations:
        if self.release_position is not None and not _is_version(version):
            version = self.release_position
        return replace(self, ragas_version=version)

    def at_release_position(self, version: str | None) -> Expectations:
        """A copy matching versioned rules as Ragas ``version`` when the run's Ragas reports no version."""
        return replace(self, release_position=version)

    @cached_property
    def _rules_here(self) -> tuple[Rule, ...]:
        """``rules`` that apply to ``ragas_version``, in order: asked once, not once per row."""
        return tuple(rule for rule in self.rules if rule.applies_to_version(self.ragas_version))

    @cached_property
    def _path_rules_here(self) -> tuple[Rule, ...]:
        """``path_rules`` that apply to ``ragas_version``, in order."""
        return tuple(rule for rule in self.path_rules if rule.applies_to_version(self.ragas_version))

    def applies_versioned_rules(self) -> bool:
        """False when rules with a ``ragas`` range cannot apply: no usable version is bound."""
        return _is_version(self.ragas_version)

    def layered_over(self, base: Expectations) -> Expectations:
        """This file's entries first, then ``base``'s rules and case entries."""
        return Expectations(f"{self.source} + {base.source}", self.rules + base.rules, self.cases + base.cases,
                            self.path_rules + base.path_rules, self.path_cases + base.path_cases,
                            self.ragas_version, self.include_pin_rules, self.release_position,
                            self.not_replayable + base.not_replayable)

    def accepting_not_replayable(self, case_id: str, target: str) -> NotReplayableEntry | None:
        """The first ``[[not_replayable]]`` entry naming (case, target), whatever its reason."""
        return next((e for e in self.not_replayable if (e.case, e.target) == (case_id, target)), None)

    # rows ---------------------------------------------------------------

    def matching(self, case_id: str, target: str) -> list[CaseEntry]:
        """The case entries naming the row (more than one is a problem of the file)."""
        return [entry for entry in self.cases if entry.names(case_id, target)]

    def expected(self, case_id: str, target: str) -> Expectation:
        """What the case entries alone expect of a row (``identical`` unless one names it)."""
        found = self.matching(case_id, target)
        return found[0].expectation() if found else IDENTICAL

    def explain_subject(self, case_id: str, target: str, classification: str, subject: Subject) -> Expectation:
        """The expectation of a row: the first case entry naming it, else the first rule explaining
        its classification, else ``identical``. The harness's own error is explained by nothing
        (``ragas_compat.compare.verdict``: a ``harness_error`` finding): a rule states Ragas's semantics,
        and a row the harness failed to drive says nothing about them. A row the probe did not score
        (``not_scored``) is explained by no case entry, and by a rule only when it names the type."""
        if harness_raised(subject.ragas_value):
            return IDENTICAL
        found = self.matching(case_id, target) if not_scored(subject.ragas_value) is None else []
        if found:
            return found[0].expectation()
        if classification != "identical":
            for rule in self._rules_here:
                if rule.explains(classification, target, subject):
                    return rule.expectation()
        return IDENTICAL

    def explain(self, row: Any) -> Expectation:
        """``explain_subject`` for an audit row (``ragas_compat.compare.audit.AuditRow``)."""
        return self.explain_subject(row.case.id, row.target, str(row.classification.name), subject_of_row(row))

    def check_coverage(self, rows: list[tuple[str, str]], case_ids: set[str]) -> list[str]:
        """Problems of the case entries against a run: two entries naming one row, and stale
        entries (naming a case and a target of this run for which the run produced no row)."""
        problems = []
        for case_id, target in rows:
            found = _same_origin(self.matching(case_id, target))
            if len(found) > 1:
                problems.append(f"{found[1].origin}: ({case_id}, {target}) is named by more than one case entry "
                                f"({', '.join(e.where for e in found)})")
        produced: dict[str, set[str]] = {}
        for case_id, target in rows:
            produced.setdefault(case_id, set()).add(target)
        targets = sorted({target for _, target in rows})
        for entry in self.cases:
            for case_id in entry.cases:
                if case_id not in case_ids:
                    continue
                for named in unproduced(entry.targets or ("*",), targets, produced.get(case_id, set()), _matches):
                    problems.append(f"{entry.origin}: {entry.where} names ({case_id}, {named}), "
                                    "which the run did not produce")
        return problems

    # pairs --------------------------------------------------------------

    def matching_path(self, case_id: str, legacy: str, collections: str) -> list[CaseEntry]:
        return [entry for entry in self.path_cases if entry.names_pair(case_id, legacy, collections)]

    def expected_path(self, case_id: str, legacy: str, collections: str) -> Expectation:
        """What the path case entries alone expect of a pair (``identical`` unless one names it)."""
        found = self.matching_path(case_id, legacy, collections)
        return found[0].expectation() if found else IDENTICAL

    def explain_pair(self, legacy_row: Any, collections_row: Any, classification: str) -> Expectation:
        """The expectation of a legacy-vs-collections pair classified ``classification``."""
        case_id, legacy, collections = legacy_row.case.id, legacy_row.target, collections_row.target
        if harness_raised(legacy_row.ragas_value) or harness_raised(collections_row.ragas_value):
            return IDENTICAL  # nothing explains a side the harness failed to drive
        scored = not_scored(legacy_row.ragas_value) is None and not_scored(collections_row.ragas_value) is None
        found = self.matching_path(case_id, legacy, collections) if scored else []
        if found:
            return found[0].expectation()
        if str(classification) != "identical":
            subject = subject_of_pair(legacy_row, collections_row)
            for rule in self._path_rules_here:
                if rule.explains_pair(str(classification), legacy, collections, subject):
                    return rule.expectation()
        return IDENTICAL

    def check_path_coverage(self, pairs: list[tuple[str, str, str]], case_ids: set[str]) -> list[str]:
        """``check_coverage`` for (case, legacy target, collections target) pairs."""
        problems = []
        for case_id, legacy, collections in pairs:
            found = _same_origin(self.matching_path(case_id, legacy, collections))
            if len(found) > 1:
                problems.append(f"{found[1].origin}: ({case_id}, {legacy} vs {collections}) is named by more than "
                                f"one path case entry ({', '.join(e.where for e in found)})")
        produced: dict[str, set[tuple[str, str]]] = {}
        for case_id, legacy, collections in pairs:
            produced.setdefault(case_id, set()).add((legacy, collections))
        # every (legacy, collections) of the run's targets, paired or not: an entry naming two of them that are
        # never a pair names no pair the run could produce, and is stale as before
        legacies, collections_targets = {legacy for _, legacy, _ in pairs}, {c for _, _, c in pairs}
        names = sorted((legacy, collections) for legacy in legacies for collections in collections_targets)

        def match(name: tuple[str, str], pattern: tuple[str, str]) -> bool:
            return matches_any(name[0], (pattern[0],)) and matches_any(name[1], (pattern[1],))

        for entry in self.path_cases:
            patterns = [(legacy, collections) for legacy in entry.legacy_targets or ("*",)
                        for collections in entry.collections_targets or ("*",)]
            for case_id in (c for c in entry.cases if c in case_ids):
                for legacy, collections in unproduced(patterns, names, produced.get(case_id, set()), match):
                    problems.append(f"{entry.origin}: {entry.where} names ({case_id}, {legacy} vs "
                                    f"{collections}), which the run did not produce")
        return problems

    def order(self) -> dict[str, int]:
        """Each rule's and case entry's ``Expectation.by`` -> its position (rules, path rules, then
        case entries, each in file order), for listing them as the file does."""
        names = [rule.expectation().by for rule in self.rules + self.path_rules]
        names += [entry.expectation().by for entry in self.cases + self.path_cases]
        return {name: index for index, name in reversed(list(enumerate(names)))}

    @property
    def deviations(self) -> tuple[CaseEntry, ...]:
        """The case entries (the name of the format before rules)."""
        return self.cases


# --------------------------------------------------------------------------- parsing

TOP_LEVEL_KEYS = ("include_pin_rules", "rule", "path_rule", "case", "path_case", "deviation", "path_deviation",
                  "not_replayable")
RULE_KEYS = ("id", "classification", "ragas", "targets", "metrics", "when", "allow_out_of_range", "reason",
             "upstream")
PATH_RULE_KEYS = ("id", "classification", "ragas", "legacy_targets", "collections_targets", "metrics", "when",
                  "reason", "upstream")
CASE_KEYS = ("case", "cases", "targets", "classification", "allow_out_of_range", "reason", "upstream")
PATH_CASE_KEYS = ("case", "cases", "legacy_targets", "collections_targets", "classification", "reason", "upstream")
NOT_REPLAYABLE_KEYS = ("case", "target", "reason")


def _check_keys(entry: Mapping[str, Any], valid: tuple[str, ...], where: str) -> None:
    for key in entry:
        if key not in valid:
            raise HarnessInputError(f"{where}.{key}: {unknown_key_message(key, valid)}", field=f"{where}.{key}",
                                    value=key)


def _entries(data: Mapping[str, Any], key: str, source: str) -> list[tuple[int, dict[str, Any]]]:
    entries = data.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise HarnessInputError(f"{source}: '{key}' must be an array of tables ([[{key}]])", field=key)
    return list(enumerate(entries))


def _classification(entry: Mapping[str, Any], where: str, *, allow_identical: bool) -> str:
    classification = entry.get("classification")
    valid = [c for c in CLASSIFICATION_NAMES if allow_identical or c != "identical"]
    if classification not in valid:
        raise HarnessInputError(f"{where}.classification: {classification!r} is not one of {', '.join(valid)}",
                                field=f"{where}.classification", value=classification)
    return str(classification)


def _reason_upstream(entry: Mapping[str, Any], where: str) -> tuple[str, str | None]:
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise HarnessInputError(f"{where}.reason: a one-line reason is required", field=f"{where}.reason",
                                value=reason)
    upstream = entry.get("upstream")
    if upstream is not None and not isinstance(upstream, str):
        raise HarnessInputError(f"{where}.upstream: expected a URL string", field=f"{where}.upstream", value=upstream)
    return reason.strip(), upstream


def _flag(entry: Mapping[str, Any], key: str, where: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise HarnessInputError(f"{where}.{key}: expected true or false, got {value!r}", field=f"{where}.{key}",
                                value=value)
    return value


def _specifier(entry: Mapping[str, Any], where: str) -> SpecifierSet | None:
    if "ragas" not in entry:
        return None
    text = entry["ragas"]
    try:
        if not isinstance(text, str) or not text.strip():
            raise InvalidSpecifier(repr(text))
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise HarnessInputError(f"{where}.ragas: {text!r} is not a version range such as '>=0.2.15,<0.5'",
                                field=f"{where}.ragas", value=text) from None


def _case_ids(entry: Mapping[str, Any], where: str) -> tuple[str, ...]:
    if ("case" in entry) == ("cases" in entry):
        raise HarnessInputError(f"{where}: give exactly one of 'case' (a case id) or 'cases' (a list of ids)",
                                field=f"{where}.cases")
    if "case" in entry:
        value = entry["case"]
        if not isinstance(value, str) or not value:
            raise HarnessInputError(f"{where}.case: expected a case id string, got {value!r}",
                                    field=f"{where}.case", value=value)
        return (value,)
    value = entry["cases"]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise HarnessInputError(f"{where}.cases: expected a non-empty list of strings, got {value!r}",
                                field=f"{where}.cases", value=value)
    return tuple(value)


def _rule(entry: Mapping[str, Any], where: str, origin: str, *, path: bool) -> Rule:
    _check_keys(entry, PATH_RULE_KEYS if path else RULE_KEYS, where)
    rule_id = entry.get("id")
    if not isinstance(rule_id, str) or not rule_id.strip():
        raise HarnessInputError(f"{where}.id: a rule needs a short unique id", field=f"{where}.id", value=rule_id)
    where = f"{where} ({rule_id})"
    reason, upstream = _reason_upstream(entry, where)
    common = dict(id=rule_id.strip(), classification=_classification(entry, where, allow_identical=False),
                  reason=reason, upstream=upstream, origin=origin, ragas=_specifier(entry, where),
                  metrics=glob_list(entry, "metrics", where), when=parse_condition(entry.get("when"), f"{where}.when"))
    if path:
        return Rule(**common, legacy_targets=glob_list(entry, "legacy_targets", where),
                    collections_targets=glob_list(entry, "collections_targets", where))
    return Rule(**common, targets=glob_list(entry, "targets", where),
                allow_out_of_range=_flag(entry, "allow_out_of_range", where))


def _case_entry(entry: Mapping[str, Any], index: int, table: str, where: str, origin: str, *,
                path: bool) -> CaseEntry:
    _check_keys(entry, PATH_CASE_KEYS if path else CASE_KEYS, where)
    reason, upstream = _reason_upstream(entry, where)
    common = dict(index=index, cases=_case_ids(entry, where),
                  classification=_classification(entry, where, allow_identical=True),
                  reason=reason, upstream=upstream, origin=origin, table=table)
    if path:
        return CaseEntry(**common, legacy_targets=glob_list(entry, "legacy_targets", where, required=True),
                         collections_targets=glob_list(entry, "collections_targets", where, required=True))
    return CaseEntry(**common, targets=glob_list(entry, "targets", where, required=True),
                     allow_out_of_range=_flag(entry, "allow_out_of_range", where))


def _not_replayable_entry(entry: Mapping[str, Any], index: int, where: str, origin: str) -> NotReplayableEntry:
    _check_keys(entry, NOT_REPLAYABLE_KEYS, where)
    for key in ("case", "target"):
        value = entry.get(key)
        if not isinstance(value, str) or not value:
            raise HarnessInputError(f"{where}.{key}: expected a {'case id' if key == 'case' else 'Ragas target'} "
                                    f"string, got {value!r}", field=f"{where}.{key}", value=value)
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise HarnessInputError(f"{where}.reason: the recording's not-replayable reason is required",
                                field=f"{where}.reason", value=reason)
    return NotReplayableEntry(index, entry["case"], entry["target"], reason.strip(), origin)


def parse_expectations(data: Mapping[str, Any], source: str) -> Expectations:
    """An expectations file's parsed TOML; every problem names the file, the entry and the key."""
    _check_keys(data, TOP_LEVEL_KEYS, source)
    rules, path_rules, cases, path_cases = [], [], [], []
    seen: dict[str, str] = {}
    for table, path in (("rule", False), ("path_rule", True)):
        for index, entry in _entries(data, table, source):
            rule = _rule(entry, f"{source}: {table}[{index}]", source, path=path)
            if rule.id in seen:
                raise HarnessInputError(f"{source}: {table}[{index}].id: {rule.id!r} is already the id of "
                                        f"{seen[rule.id]}", field=f"{table}[{index}].id", value=rule.id)
            seen[rule.id] = f"{table}[{index}]"
            (path_rules if path else rules).append(rule)
    for table, path in (("case", False), ("deviation", False), ("path_case", True), ("path_deviation", True)):
        for index, entry in _entries(data, table, source):
            where = f"{source}: {table}[{index}]"
            parsed = _case_entry(entry, index, table, where, source, path=path)
            (path_cases if path else cases).append(parsed)
    not_replayable: list[NotReplayableEntry] = []
    for index, entry in _entries(data, "not_replayable", source):
        parsed_entry = _not_replayable_entry(entry, index, f"{source}: not_replayable[{index}]", source)
        twin = next((e for e in not_replayable if (e.case, e.target) == (parsed_entry.case, parsed_entry.target)), None)
        if twin is not None:
            raise HarnessInputError(f"{source}: not_replayable[{index}] names ({parsed_entry.case}, "
                                    f"{parsed_entry.target}), already named by {twin.where}",
                                    field=f"not_replayable[{index}]", value=parsed_entry.target)
        not_replayable.append(parsed_entry)
    include = data.get("include_pin_rules", True)
    if not isinstance(include, bool):
        raise HarnessInputError(f"{source}: include_pin_rules: expected true or false, got {include!r}",
                                field="include_pin_rules", value=include)
    return Expectations(source, tuple(rules), tuple(cases), tuple(path_rules), tuple(path_cases),
                        include_pin_rules=include, not_replayable=tuple(not_replayable))


def parse_expectations_text(text: str, source: str) -> Expectations:
    """Expectations from TOML text (nesting and number length bounded: ``ragas_compat.input_limits``)."""
    return parse_expectations(loads_toml(text, source, field="expectations"), source)


def load_expectations(path: Path, source: str | None = None) -> Expectations:
    """One expectations file as written (no layering); ``source`` defaults to the file name. ``-`` is
    standard input; only a regular file of at most the input limit is read (``ragas_compat.input_limits``)."""
    if str(path) == STDIN:
        source = STDIN_SOURCE
    source = source or path.name
    if str(path) != STDIN and not os.path.lexists(path):
        raise HarnessInputError(f"expectations file {source} does not exist", field="expectations",
                                value=source)
    data = read_toml(path, "expectations file", source=source, field="expectations")
    return parse_expectations(data, source)
