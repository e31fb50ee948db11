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
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.diff import CLASSIFICATIONS
from harness.errors import HarnessInputError


@dataclass(frozen=True)
class Deviation:
    classification: str
    targets: tuple[str, ...]
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


def _string_list(entry: dict, key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise HarnessInputError(f"{where}.{key}: expected a non-empty list of strings, got {value!r}",
                                field=f"{where}.{key}", value=value)
    return tuple(value)


def parse_expectations(data: dict, source: str) -> Expectations:
    entries = data.get("deviation", [])
    if not isinstance(entries, list):
        raise HarnessInputError(f"{source}: 'deviation' must be an array of tables", field="deviation")
    deviations = []
    for index, entry in enumerate(entries):
        where = f"{source}: deviation[{index}]"
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
        deviations.append(Deviation(classification, _string_list(entry, "targets", where),
                                    _string_list(entry, "cases", where), reason.strip(), upstream))
    return Expectations(source, tuple(deviations))


def load_expectations(path: Path) -> Expectations:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HarnessInputError(f"{path.name}: cannot read expectations: {exc.strerror}", field="expectations")
    except tomllib.TOMLDecodeError as exc:
        raise HarnessInputError(f"{path.name}: not valid TOML: {exc}", field="expectations")
    return parse_expectations(data, path.name)
