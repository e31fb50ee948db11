"""Known changes between two matrix columns, as rules (``pinned/matrix-drift.toml``).

A ``[[drift_rule]]`` explains a change of a cell between two adjacent columns by what produces it,
whatever the case: the cause kinds it explains (``explains``, e.g. ``value_changed``), the targets
and metrics (globs), and facts about the two columns: the same Ragas release in both
(``same_ragas``), both inside a Ragas range (``ragas``), Pythons on both sides of a version
(``python_crosses = "3.12"``: one column below 3.12, the other at or above), the Ragas release where an
upstream change landed between them (``ragas_crosses = "0.3.3"``: the earlier column's Ragas below
0.3.3, the later one's at or above: a change of one release that bisect pins to a commit), the type of
the exception one of the two cells raised (``errors``, globs: ``ZeroDivisionError``), and how far apart
the two doubles are (``max_ulps``). An explained change is still shown (kind ``kind``, text ``cause``,
the rule's id and reason) but is no finding. A change between columns whose Ragas or Python is not
known is never explained, and neither is anything a rule does not name, such as the harness's
own error (those causes are never ``value_changed``).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ragas_compat.compare.rules import glob_list, matches_any
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import read_toml, source_name
from ragas_compat.resources import pinned

DEFAULT_DRIFT_RULES_FILE = pinned("matrix-drift.toml")
RULE_KEYS = ("id", "kind", "explains", "cause", "reason", "upstream", "targets", "metrics", "ragas",
             "same_ragas", "python_crosses", "ragas_crosses", "errors", "max_ulps")


def ulps_between(a: float | None, b: float | None) -> int | None:
    """How many doubles lie between ``a`` and ``b`` (1: adjacent); None for a NaN, an infinity or None."""
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return None

    def ordered(x: float) -> int:
        bits = struct.unpack("<q", struct.pack("<d", x))[0]
        return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)

    return abs(ordered(a) - ordered(b))


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


@dataclass(frozen=True)
class ColumnFacts:
    """What a drift rule may ask about a column."""

    label: str
    ragas: str | None
    python: str | None  # the interpreter's version, "3.13.0"


@dataclass(frozen=True)
class DriftRule:
    id: str
    kind: str
    explains: tuple[str, ...]
    cause: str
    reason: str
    upstream: str | None
    origin: str
    targets: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    ragas: SpecifierSet | None = None
    same_ragas: bool = False
    python_crosses: Version | None = None
    max_ulps: int | None = None
    ragas_crosses: Version | None = None
    errors: tuple[str, ...] = ()

    def explains_change(self, cause_kind: str, target: str, metric: str, before: ColumnFacts, after: ColumnFacts,
                        before_value: float | None, after_value: float | None,
                        error_types: tuple[str | None, str | None] = (None, None)) -> bool:
        """``error_types``: the exception type each of the two cells raised (None: it did not)."""
        if cause_kind not in self.explains or not matches_any(target, self.targets) \
                or not matches_any(metric, self.metrics):
            return False
        if self.errors and not any(t is not None and matches_any(t, self.errors) for t in error_types):
            return False
        ragas = (_version(before.ragas), _version(after.ragas))
        if (self.same_ragas or self.ragas is not None or self.ragas_crosses is not None) and None in ragas:
            return False
        if self.ragas_crosses is not None and not (ragas[0] < self.ragas_crosses <= ragas[1]):
            return False
        if self.same_ragas and ragas[0] != ragas[1]:
            return False
        if self.ragas is not None and not all(self.ragas.contains(v, prereleases=True) for v in ragas):
            return False
        if self.python_crosses is not None:
            pythons = (_version(before.python), _version(after.python))
            if None in pythons or (pythons[0] < self.python_crosses) == (pythons[1] < self.python_crosses):
                return False
        if self.max_ulps is not None:
            ulps = ulps_between(before_value, after_value)
            if ulps is None or ulps > self.max_ulps:
                return False
        return True


def _text(entry: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise HarnessInputError(f"{where}.{key}: expected a non-empty string, got {value!r}",
                                field=f"{where}.{key}", value=value)
    return value.strip()


def parse_drift_rules(data: dict[str, Any], source: str) -> tuple[DriftRule, ...]:
    unknown = sorted(set(data) - {"drift_rule"})
    if unknown:
        raise HarnessInputError(f"{source}: unknown table(s) {', '.join(unknown)} (expected [[drift_rule]])",
                                field="drift_rule", value=unknown)
    table = data.get("drift_rule", [])
    if not isinstance(table, list):
        raise HarnessInputError(f"{source}: drift_rule: expected [[drift_rule]] tables", field="drift_rule")
    rules: list[DriftRule] = []
    for index, entry in enumerate(table):
        where = f"{source}: drift_rule[{index}]"
        if not isinstance(entry, dict):
            raise HarnessInputError(f"{where}: expected a table", field=where, value=entry)
        extra = sorted(set(entry) - set(RULE_KEYS))
        if extra:
            raise HarnessInputError(f"{where}: unknown key(s) {', '.join(extra)}", field=where, value=extra)
        rule_id = _text(entry, "id", where)
        where = f"{where} ({rule_id})"
        ragas = None
        if "ragas" in entry:
            try:
                ragas = SpecifierSet(_text(entry, "ragas", where))
            except InvalidSpecifier:
                raise HarnessInputError(f"{where}.ragas: {entry['ragas']!r} is not a PEP 440 specifier set",
                                        field=f"{where}.ragas", value=entry["ragas"]) from None
        crosses = None
        if "python_crosses" in entry:
            crosses = _version(_text(entry, "python_crosses", where))
            if crosses is None:
                raise HarnessInputError(f"{where}.python_crosses: expected a Python version like \"3.12\"",
                                        field=f"{where}.python_crosses", value=entry["python_crosses"])
        ragas_crosses = None
        if "ragas_crosses" in entry:
            ragas_crosses = _version(_text(entry, "ragas_crosses", where))
            if ragas_crosses is None:
                raise HarnessInputError(f"{where}.ragas_crosses: expected a Ragas release like \"0.3.3\"",
                                        field=f"{where}.ragas_crosses", value=entry["ragas_crosses"])
        max_ulps = entry.get("max_ulps")
        if max_ulps is not None and (isinstance(max_ulps, bool) or not isinstance(max_ulps, int) or max_ulps < 1):
            raise HarnessInputError(f"{where}.max_ulps: expected a positive integer", field=f"{where}.max_ulps",
                                    value=max_ulps)
        same_ragas = entry.get("same_ragas", False)
        if not isinstance(same_ragas, bool):
            raise HarnessInputError(f"{where}.same_ragas: expected true or false", field=f"{where}.same_ragas",
                                    value=same_ragas)
        if any(r.id == rule_id for r in rules):
            raise HarnessInputError(f"{where}.id: given twice", field=f"{where}.id", value=rule_id)
        rules.append(DriftRule(
            id=rule_id, kind=_text(entry, "kind", where), explains=glob_list(entry, "explains", where, required=True),
            cause=_text(entry, "cause", where), reason=_text(entry, "reason", where),
            upstream=_text(entry, "upstream", where, required=False), origin=source,
            targets=glob_list(entry, "targets", where), metrics=glob_list(entry, "metrics", where), ragas=ragas,
            same_ragas=same_ragas, python_crosses=crosses, max_ulps=max_ulps, ragas_crosses=ragas_crosses,
            errors=glob_list(entry, "errors", where)))
    return tuple(rules)


def load_drift_rules(path: Path = DEFAULT_DRIFT_RULES_FILE) -> tuple[DriftRule, ...]:
    source = "pinned/matrix-drift.toml" if path == DEFAULT_DRIFT_RULES_FILE else source_name(path)
    return parse_drift_rules(read_toml(path, "matrix drift rules", source=source, field="drift_rules"), source)
