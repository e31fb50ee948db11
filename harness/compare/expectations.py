"""Expected classifications: known deviations are data (with reasons and links), not code.

File format (TOML)::

    [[deviation]]
    classification = "epsilon"
    targets = ["legacy:LLMContextPrecisionWithReference", "legacy:ContextPrecision"]
    cases = ["cp-worked-example"]
    reason = "Ragas divides the AP numerator by (hits + 1e-10)."
    upstream = "https://github.com/..."   # optional

A (case, target) row matched by no deviation is expected to be ``identical``.
A row matched by two deviations is an error in the file, and so is a deviation
that matches no row of the run (a stale entry): both are reported by ``check_coverage``.

Legacy-vs-collections pairs (``harness.report.markdown.api_paths``: a legacy row and a collections row
of the same case and metric, classified with the legacy value in the place of the reference)
have their own tables, in the same file::

    [[path_deviation]]
    classification = "error"
    legacy_targets = ["legacy:LLMContextPrecisionWithReference", "legacy:ContextPrecision"]
    collections_targets = ["collections:ContextPrecisionWithReference", "collections:ContextPrecision"]
    cases = ["edge-empty-retrieval"]
    reason = "The collections class raises on empty retrieved_contexts; the legacy class returns 0.0."
    upstream = "https://github.com/..."   # optional

It names every (case, legacy target, collections target) pair of the cross product; a pair
named by none is expected ``identical``; overlaps and stale entries are reported by
``check_path_coverage``, as for rows.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.compare.classify import CLASSIFICATIONS
from harness.errors import HarnessInputError


@dataclass(frozen=True)
class Deviation:
    classification: str
    targets: tuple[str, ...]
    cases: tuple[str, ...]
    reason: str
    upstream: str | None


@dataclass(frozen=True)
class PathDeviation:
    classification: str
    legacy_targets: tuple[str, ...]
    collections_targets: tuple[str, ...]
    cases: tuple[str, ...]
    reason: str
    upstream: str | None


@dataclass(frozen=True)
class Expectation:
    classification: str
    reason: str | None
    upstream: str | None


IDENTICAL = Expectation("identical", None, None)


@dataclass(frozen=True)
class Expectations:
    source: str
    deviations: tuple[Deviation, ...]
    path_deviations: tuple[PathDeviation, ...] = ()

    def matching(self, case_id: str, target: str) -> list[Deviation]:
        return [d for d in self.deviations if case_id in d.cases and target in d.targets]

    def expected(self, case_id: str, target: str) -> Expectation:
        """The expected classification of one row (``identical`` unless a deviation names it)."""
        found = self.matching(case_id, target)
        if not found:
            return IDENTICAL
        deviation = found[0]
        return Expectation(deviation.classification, deviation.reason, deviation.upstream)

    def check_coverage(self, rows: list[tuple[str, str]], case_ids: set[str]) -> list[str]:
        """Problems of the file against the rows of a run: overlaps, and stale entries
        (a deviation naming a case and a target of this run for which the run produced no such row)."""
        problems = []
        for case_id, target in rows:
            if len(self.matching(case_id, target)) > 1:
                problems.append(f"{self.source}: ({case_id}, {target}) is named by more than one deviation")
        present = set(rows)
        targets = {target for _, target in rows}
        for index, deviation in enumerate(self.deviations):
            for case_id in deviation.cases:
                for target in deviation.targets:
                    if case_id in case_ids and target in targets and (case_id, target) not in present:
                        problems.append(
                            f"{self.source}: deviation[{index}] names ({case_id}, {target}), "
                            "which the run did not produce"
                        )
        return problems

    def matching_path(self, case_id: str, legacy: str, collections: str) -> list[PathDeviation]:
        return [d for d in self.path_deviations
                if case_id in d.cases and legacy in d.legacy_targets and collections in d.collections_targets]

    def expected_path(self, case_id: str, legacy: str, collections: str) -> Expectation:
        """The expected classification of one legacy-vs-collections pair (``identical`` unless named)."""
        found = self.matching_path(case_id, legacy, collections)
        if not found:
            return IDENTICAL
        return Expectation(found[0].classification, found[0].reason, found[0].upstream)

    def check_path_coverage(self, pairs: list[tuple[str, str, str]], case_ids: set[str]) -> list[str]:
        """``check_coverage`` for (case, legacy target, collections target) pairs."""
        problems = []
        for case_id, legacy, collections in pairs:
            if len(self.matching_path(case_id, legacy, collections)) > 1:
                problems.append(f"{self.source}: ({case_id}, {legacy} vs {collections}) is named by "
                                "more than one path_deviation")
        present = set(pairs)
        legacies = {legacy for _, legacy, _ in pairs}
        collections_targets = {collections for _, _, collections in pairs}
        for index, deviation in enumerate(self.path_deviations):
            for case_id in deviation.cases:
                for legacy in deviation.legacy_targets:
                    for collections in deviation.collections_targets:
                        if (case_id in case_ids and legacy in legacies and collections in collections_targets
                                and (case_id, legacy, collections) not in present):
                            problems.append(
                                f"{self.source}: path_deviation[{index}] names ({case_id}, {legacy} vs "
                                f"{collections}), which the run did not produce")
        return problems


def _string_list(entry: dict, key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise HarnessInputError(f"{where}.{key}: expected a non-empty list of strings, got {value!r}",
                                field=f"{where}.{key}", value=value)
    return tuple(value)


def _entries(data: dict, key: str, source: str) -> list:
    entries = data.get(key, [])
    if not isinstance(entries, list):
        raise HarnessInputError(f"{source}: '{key}' must be an array of tables", field=key)
    return entries


def _classification_reason_upstream(entry: dict, where: str) -> tuple[str, str, str | None]:
    classification = entry.get("classification")
    if classification not in CLASSIFICATIONS or classification == "identical":
        raise HarnessInputError(
            f"{where}.classification: {classification!r} is not one of "
            f"{', '.join(c for c in CLASSIFICATIONS if c != 'identical')}",
            field=f"{where}.classification", value=classification)
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise HarnessInputError(f"{where}.reason: a one-line reason is required",
                                field=f"{where}.reason", value=reason)
    upstream = entry.get("upstream")
    if upstream is not None and not isinstance(upstream, str):
        raise HarnessInputError(f"{where}.upstream: expected a URL string", field=f"{where}.upstream",
                                value=upstream)
    return classification, reason.strip(), upstream


def parse_expectations(data: dict, source: str) -> Expectations:
    deviations = []
    for index, entry in enumerate(_entries(data, "deviation", source)):
        where = f"{source}: deviation[{index}]"
        classification, reason, upstream = _classification_reason_upstream(entry, where)
        deviations.append(Deviation(classification, _string_list(entry, "targets", where),
                                    _string_list(entry, "cases", where), reason, upstream))
    path_deviations = []
    for index, entry in enumerate(_entries(data, "path_deviation", source)):
        where = f"{source}: path_deviation[{index}]"
        classification, reason, upstream = _classification_reason_upstream(entry, where)
        path_deviations.append(PathDeviation(
            classification, _string_list(entry, "legacy_targets", where),
            _string_list(entry, "collections_targets", where), _string_list(entry, "cases", where),
            reason, upstream))
    return Expectations(source, tuple(deviations), tuple(path_deviations))


def load_expectations(path: Path) -> Expectations:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HarnessInputError(f"{path.name}: cannot read expectations: {exc.strerror}", field="expectations")
    except tomllib.TOMLDecodeError as exc:
        raise HarnessInputError(f"{path.name}: not valid TOML: {exc}", field="expectations")
    return parse_expectations(data, path.name)
