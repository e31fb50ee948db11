"""Bless: write the current classifications of a suite as an expectations file.

``bless(audit)`` renders every row of the audit as a ``[[case]]`` entry and every
legacy-vs-collections pair as a ``[[path_case]]`` entry (grouped per case and classification), with
the reason of the rule that explained it, ``bit-equal`` for ``identical`` rows, and the
classification's own explanation for rows nothing explained, and every recorded live score the offline
replay cannot reproduce (``recording.not_replayable`` of a case written by ``record``) as a
``[[not_replayable]]`` entry with the reason the recording lists (``ragas_compat.compare.replay``
accepts it while the recording lists the same reason; never a live value the harness raised). A user reviews and commits the file;
running again with it (``--expectations FILE``) exits 0, and after a change (of Ragas, or of a
verdict) exactly the rows that moved are reported, since case entries are strict and name every row.
``include_pin_rules = true`` keeps the pin's rules for cases added to the suite later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragas_compat.atomic_file import write_atomically
from ragas_compat.compare.expectations import harness_raised, not_scored
from ragas_compat.compare.findings import out_of_range
from ragas_compat.compare.replay import not_replayable_outcomes
from ragas_compat.toml_text import toml_inline_list, toml_string

IDENTICAL_REASON = "bit-equal to the reference value"


def _reason(expected: Any, classification: str, explanation: str) -> tuple[str, str | None]:
    if classification == "identical":
        return IDENTICAL_REASON, None
    if expected.explained and expected.classification == classification and expected.reason:
        return expected.reason, expected.upstream
    return f"as observed when blessed: {explanation}", None


def _entry(table: str, case_id: str, fields: list[tuple[str, str]], classification: str, reason: str,
           upstream: str | None, allow_out_of_range: bool = False) -> list[str]:
    lines = [f"[[{table}]]", f"case = {toml_string(case_id)}"]
    lines += [f"{key} = {value}" for key, value in fields]
    lines.append(f"classification = {toml_string(classification)}")
    if allow_out_of_range:
        lines.append("allow_out_of_range = true")
    lines.append(f"reason = {toml_string(reason)}")
    if upstream:
        lines.append(f"upstream = {toml_string(upstream)}")
    return [*lines, ""]


def unblessable(audit: Any) -> list[tuple[str, str, str]]:
    """(case id, target, why) of each row no entry may name (``expectations.not_scored``, ``harness_raised``):
    a row the probe did not score, or the harness failed to drive, says nothing of what Ragas computes, so
    bless writes no entry for it (one would explain nothing) and says so; the row stays drift until the
    run scores it (or a rule names its error type: ``expectations.Rule``)."""
    out = []
    for row in audit.rows:
        value = row.ragas_value
        if harness_raised(value) or not_scored(value) is not None:
            label = value.label if harness_raised(value) else f"not scored: {value.type}"
            out.append((row.case.id, row.target, f"{label}: {' '.join(str(value.message).split())[:160]}"))
    return out


def _row_entries(audit: Any, skipped: set[tuple[str, str]]) -> list[str]:
    lines: list[str] = []
    rows_by_case: dict[str, list[Any]] = {}
    for row in audit.rows:
        if (row.case.id, row.target) not in skipped:
            rows_by_case.setdefault(row.case.id, []).append(row)
    for case in audit.suite.cases:
        groups: dict[tuple[str, str, str | None, bool], list[str]] = {}
        for row in rows_by_case.get(case.id, ()):
            name = str(row.classification.name)
            reason, upstream = _reason(row.expected, name, row.classification.explanation)
            key = (name, reason, upstream, out_of_range(row.spec.name, row.ragas_value))
            groups.setdefault(key, []).append(row.target)
        for (name, reason, upstream, oor), targets in groups.items():
            lines += _entry("case", case.id, [("targets", toml_inline_list(targets))], name, reason, upstream, oor)
    return lines


def _pair_entries(audit: Any, skipped: set[tuple[str, str]]) -> list[str]:
    lines: list[str] = []
    pairs_by_case: dict[str, list[Any]] = {}
    for pair in audit.pairs:
        if (pair.case.id, pair.legacy.target) not in skipped and (pair.case.id, pair.collections.target) not in skipped:
            pairs_by_case.setdefault(pair.case.id, []).append(pair)
    for case in audit.suite.cases:
        by_legacy: dict[tuple[str, str, str | None], dict[str, list[str]]] = {}
        for pair in pairs_by_case.get(case.id, ()):
            name = str(pair.classification.name)
            reason, upstream = _reason(pair.expected, name, pair.classification.explanation)
            by_legacy.setdefault((name, reason, upstream), {}).setdefault(pair.legacy.target, []).append(
                pair.collections.target)
        for (name, reason, upstream), legacy_map in by_legacy.items():
            # legacy targets with the same collections targets share one entry: an exact cross product
            merged: dict[tuple[str, ...], list[str]] = {}
            for legacy, collections in legacy_map.items():
                merged.setdefault(tuple(collections), []).append(legacy)
            for collections, legacies in merged.items():
                lines += _entry("path_case", case.id, [("legacy_targets", toml_inline_list(legacies)),
                                                       ("collections_targets", toml_inline_list(collections))],
                                name, reason, upstream)
    return lines


def _not_replayable_entries(audit: Any) -> list[str]:
    lines: list[str] = []
    for case_id, target, why in not_replayable_outcomes(audit):
        lines += ["[[not_replayable]]", f"case = {toml_string(case_id)}", f"target = {toml_string(target)}",
                  f"reason = {toml_string(why)}", ""]
    return lines


def bless(audit: Any) -> str:
    """The expectations file (TOML text) that names every row and pair of ``audit`` as it is."""
    provenance = audit.provenance or {}
    header = [
        f"# Expected classifications of suite {audit.suite.name!r} ({audit.suite.source}), blessed from a run",
        f"# with Ragas {provenance.get('ragas_version') or 'unknown'} under Python "
        f"{(provenance.get('python') or {}).get('version') or 'unknown'} by `ragas-compat expect bless` (under",
        "# another Python a few rows may move between identical and rounding: 3.12 made sum() of floats exact).",
        "# Review it and commit it; run with `--expectations THIS_FILE`. Every row and legacy-vs-collections",
        "# pair of the suite is named with the classification it had (case entries are strict: a row that",
        "# moves is drift); the pin's rules still explain cases added to the suite later.",
        "# Format: harness/compare/expectations.py.",
        "",
        "include_pin_rules = true",
        "",
    ]
    not_replayable = _not_replayable_entries(audit)
    skipped = unblessable(audit)
    if skipped:
        header[-3:-3] = ["# Not blessed: rows that were not scored, which no case entry explains. They stay drift: a",
                         "# budget stop or a missing class until a [[rule]] (and [[path_rule]]) with",
                         "# when = { error_type = [\"<its type>\"] } accepts it, the harness's own error until fixed:",
                         *(f"#   ({case_id}, {target}) {why}" for case_id, target, why in skipped)]
    if not_replayable:
        header[-3:-3] = ["# A recorded live score the replay cannot reproduce is accepted by its [[not_replayable]]",
                         "# entry only while the recording lists the same reason."]
    left_out = {(case_id, target) for case_id, target, _ in skipped}  # rows, and the pairs they are a side of
    return "\n".join(header + _row_entries(audit, left_out) + _pair_entries(audit, left_out)
                     + not_replayable).rstrip() + "\n"


def write_blessed(audit: Any, path: Path) -> Path:
    """Write ``bless(audit)`` to ``path`` (replacing it atomically, through a temporary file of a unique
    name: ``atomic_file.write_atomically``) and return the path; HarnessInputError (exit 2) naming
    ``--out`` when it cannot be written, the file there left as it was."""
    write_atomically(path, bless(audit), "--out")
    return path
