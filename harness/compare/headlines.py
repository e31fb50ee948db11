"""Headlines: what this audit means for the numbers a reviewer is about to quote.

``headlines(audit)`` derives, for *this* suite, a short ranked list of findings, each one sentence
with one example row (case, metric, Ragas target, Ragas's value and the reference's); ``build_audit``
stores them once as ``Audit.headlines``, after the drift findings (``ragas_compat.compare.findings``)
and before the verdict (``ragas_compat.compare.verdict``). No rendering here: report.md, report.html,
the terminal and report.json all show these.

Ranking, by consequence for a reported score (within a kind, the one with more rows first):

0. ``unexplained``: drift (a row or pair no rule explains, a value out of range, an expectations
   problem): the audit cannot vouch for these at all;
1. ``mean_gap``: Ragas's ``evaluate()`` mean differs from the explicit-policy mean (the headline number);
2. ``empty_as_zero``: undefined rows scored 0.0, indistinguishable from a real zero, kept in means;
3. ``divergence`` (explained): Ragas measures something else on these inputs;
4. ``dedup`` and ``coercion``: Ragas scored other inputs than the case gave;
5. ``collections_raise``: the collections API raises where the legacy API returns a value;
6. ``error``: a Ragas class raises (evaluate() turns the row into NaN and drops it);
7. ``undefined_nan``: same meaning, NaN encoding; evaluate() drops the row from its mean;
8. ``epsilon``: the 1e-10 in the AP denominator (tenth decimal), and what AP is divided by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragas_compat.compare.rows import AuditRow
from ragas_compat.compare.rows import reference_text as row_reference_text
from ragas_compat.values import RagasError
from ragas_compat.vocabulary import TargetId

Audit = Any  # ragas_compat.compare.audit.Audit (which imports this module): rows, pairs, findings, dataset_level

RANKS: dict[str, int] = {
    "unexplained": 0, "mean_gap": 1, "empty_as_zero": 2, "divergence": 3, "variant": 3, "dedup": 4, "coercion": 4,
    "collections_raise": 5, "error": 6, "undefined_nan": 7, "epsilon": 8,
}


@dataclass(frozen=True)
class ExampleRow:
    """The one row that shows a finding (a dataset-level finding names a target's mean instead)."""

    case_id: str | None
    metric: str | None
    target: str | None
    ragas: str          # Ragas's value as shown (repr, "NaN", "error: Type: message")
    reference: str      # the reference's value ("5/6 = 0.8333333333333334", "undefined (reason)")


@dataclass(frozen=True)
class Headline:
    """One finding: a stable ``key``, its ``kind`` (RANKS), one sentence, one example, how many rows."""

    key: str
    kind: str
    sentence: str
    example: ExampleRow
    rows: int
    explained_by: str | None = None

    @property
    def rank(self) -> int:
        return RANKS[self.kind]


# --------------------------------------------------------------------------- value texts

def value_text(value: Any) -> str:
    if isinstance(value, RagasError):
        first = (value.message.strip().splitlines() or [""])[0]
        return f"{value.label}: {first}"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return repr(value)


def exact_text(value: Fraction | float | None) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, Fraction):
        return str(value) if value.denominator == 1 else f"{value} = {float(value)!r}"
    return repr(value)


def reference_text(row: AuditRow) -> str:
    """The reference value in words, an exact value with its float."""
    return row_reference_text(row, exact_text)


def example_of(row: AuditRow) -> ExampleRow:
    return ExampleRow(row.case.id, row.spec.name, str(row.target), value_text(row.ragas_value), reference_text(row))


def short_float(value: float) -> str:
    return "NaN" if math.isnan(value) else f"{value:.3f}"


def first_sentence(text: str) -> str:
    """The text up to its first full stop followed by a space (the whole text when there is none)."""
    head, sep, _ = text.partition(". ")
    return head + "." if sep else text


def _class(target: str) -> str:
    try:
        return TargetId(target).ragas_class
    except ValueError:
        return target


# --------------------------------------------------------------------------- the findings

def _unexplained(audit: Audit) -> list[Headline]:
    groups: dict[tuple[str, str | None], list[Any]] = {}
    for finding in audit.findings:
        groups.setdefault((finding.kind, finding.classification), []).append(finding)
    out = []
    for (kind, classification), members in groups.items():
        first = members[0]
        row = next((r for r in audit.rows if r.case.id == first.case_id and r.target == first.target), None)
        example = example_of(row) if row is not None else ExampleRow(first.case_id, None, first.target, "—", "—")
        what = f"classified {classification}" if classification else \
            "a recorded live score" if kind == "replay_mismatch" else \
            "not scored: the harness's own error" if kind == "harness_error" else "an expectations-file problem"
        sentence = (f"{len(members)} finding{'' if len(members) == 1 else 's'} of kind {kind} ({what}) that no rule "
                    f"or case entry explains: {first.message}")
        out.append(Headline(f"unexplained:{kind}:{classification}", "unexplained", sentence, example, len(members)))
    return out


def _mean_gap(audit: Audit) -> list[Headline]:
    level = audit.dataset_level
    if level is None:
        return []
    candidates = []
    for agg in level.targets:
        if agg.classification.name == "identical" or agg.policy.mean is None or math.isnan(agg.ragas_mean):
            continue
        candidates.append((abs(agg.ragas_mean - float(agg.policy.mean)), agg))
    if not candidates:
        return []
    gap, agg = max(candidates, key=lambda item: (item[0], item[1].target))
    policy = agg.policy
    kept = agg.kept_but_dropped_by_reference
    ragas = f"{agg.ragas_mean!r}"
    reference = f"{policy.mean} = {float(policy.mean)!r} over {policy.defined} of {policy.cases} rows"
    if kept:
        sentence = (f"evaluate() kept {len(kept)} undefined row{'' if len(kept) == 1 else 's'} as 0.0 in its "
                    f"{agg.metric} mean ({_class(agg.target)}): it reports {short_float(agg.ragas_mean)}, "
                    f"{policy.mean} ≈ {short_float(float(policy.mean))} without them.")
        example = ExampleRow(kept[0].case_id, agg.metric, agg.target,
                             f"{value_text(kept[0].evaluate_value)} kept in the mean {ragas}",
                             f"undefined ({kept[0].reference.undefined_reason}), dropped: mean {reference}")
    else:
        sentence = (f"evaluate()'s {agg.metric} mean ({_class(agg.target)}) is {short_float(agg.ragas_mean)} where "
                    f"the explicit policy gives {policy.mean} ≈ {short_float(float(policy.mean))} "
                    f"({agg.classification.name}, a gap of {gap:.3f}).")
        example = ExampleRow(None, agg.metric, agg.target, f"mean {ragas}", f"mean {reference}")
    gaps = sum(1 for _, a in candidates if a.metric != agg.metric or a.target == agg.target)
    return [Headline("mean_gap", "mean_gap", sentence, example, gaps)]


def _rows(audit: Audit, name: str) -> list[AuditRow]:
    return [r for r in audit.rows if r.classification.name == name and not r.unexpected]


def _prefer_legacy(rows: list[AuditRow]) -> list[AuditRow]:
    return sorted(rows, key=lambda r: 0 if str(r.target).startswith("legacy:") else 1)


def _epsilon(audit: Audit) -> list[Headline]:
    rows = _prefer_legacy(_rows(audit, "epsilon"))
    if not rows:
        return []
    with_r = [r for r in rows if r.reference.details.get("corpus_ap") is not None]
    row = (with_r or rows)[0]
    d = row.reference.details
    labels = list(d.get("labels", ()))
    sentence = (f"Ragas's context precision is AP over the retrieved relevant contexts with a 1e-10 guard "
                f"in the denominator: labels {labels} score {value_text(row.ragas_value)}, not "
                f"{row.reference.value}")
    if d.get("corpus_ap") is not None:
        sentence += (f"; trec_eval AP over all R={d.get('corpus_relevant')} relevant items would be "
                     f"{d['corpus_ap']} here")
    perfect = next((r for r in rows if r.reference.value == 1), None)
    if perfect is not None and d.get("corpus_ap") is None:
        sentence += f"; a perfect ranking scores {value_text(perfect.ragas_value)}"
    return [Headline("epsilon", "epsilon", sentence + ".", example_of(row), len(rows), row.expected.label)]


def _empty_as_zero(audit: Audit) -> list[Headline]:
    rows = _prefer_legacy(_rows(audit, "empty_as_zero"))
    if not rows:
        return []
    row = rows[0]
    reasons = sorted({r.reference.undefined_reason or "undefined" for r in rows})
    sentence = (f"{len(rows)} rows where AP is undefined ({', '.join(reasons)}) score 0.0, the same number as a "
                f"real zero, and count in every mean: e.g. {_class(row.target)} on {row.case.id}.")
    return [Headline("empty_as_zero", "empty_as_zero", sentence, example_of(row), len(rows), row.expected.label)]


def _undefined_nan(audit: Audit) -> list[Headline]:
    rows = _prefer_legacy(_rows(audit, "undefined_nan"))
    if not rows:
        return []
    claims = [r for r in rows if r.reference.undefined_reason == "zero_claims"]
    row = (claims or rows)[0]
    what = "zero claims" if claims else (row.reference.undefined_reason or "an empty denominator")
    sentence = (f"With {what} the metric is undefined and Ragas returns NaN ({len(rows)} rows), which evaluate() "
                f"silently drops from its mean: e.g. {_class(row.target)} on {row.case.id}.")
    return [Headline("undefined_nan", "undefined_nan", sentence, example_of(row), len(rows), row.expected.label)]


def _dedup(audit: Audit) -> list[Headline]:
    rows = _rows(audit, "dedup")
    if not rows:
        return []
    row = rows[0]
    d = row.reference.details
    ids = d.get("retrieved_ids", d.get("retrieved", None))
    shown = f" (retrieved IDs {list(ids)})" if isinstance(ids, (list, tuple)) else ""
    sentence = (f"Ragas's ID-based metrics pass IDs through str() into a set, so duplicates collapse and 1 and "
                f"\"1\" are one ID: {_class(row.target)} on {row.case.id}{shown} gives {value_text(row.ragas_value)} "
                f"where the IDs as given give {reference_text(row)}.")
    return [Headline("dedup", "dedup", sentence, example_of(row), len(rows), row.expected.label)]


def _coercion(audit: Audit) -> list[Headline]:
    rows = _prefer_legacy(_rows(audit, "coercion"))
    if not rows:
        return []
    row = rows[0]
    sentence = (f"Ragas accepts inputs the reference refuses and coerces them ({len(rows)} rows; a verdict of 2 "
                f"counts as 1, an ID 1.0 becomes 1): {_class(row.target)} on {row.case.id} gives "
                f"{value_text(row.ragas_value)}.")
    return [Headline("coercion", "coercion", sentence, example_of(row), len(rows), row.expected.label)]


def _collections_raise(audit: Audit) -> tuple[list[Headline], set[tuple[str, str]]]:
    """Pairs where the collections path raises and the legacy path returns a value (and those rows)."""
    pairs = [p for p in audit.pairs if isinstance(p.collections.ragas_value, RagasError)
             and not isinstance(p.legacy.ragas_value, RagasError)]
    if not pairs:
        return [], set()
    empty = [p for p in pairs if not p.case.retrieved_contexts]
    pair = (empty or pairs)[0]
    covered = {(p.case.id, str(p.collections.target)) for p in pairs}
    where = "on empty retrieval" if empty else "on some inputs"
    legacy_value = value_text(pair.legacy.ragas_value)
    error = pair.collections.ragas_value
    sentence = (f"The collections API raises {where} where the legacy API returns {legacy_value} "
                f"({len(pairs)} pairs): on {pair.case.id}, {pair.collections.target} raises {error.type} "
                f"'{(error.message.strip().splitlines() or [''])[0]}' and {pair.legacy.target} returns "
                f"{legacy_value}.")
    example = ExampleRow(pair.case.id, pair.metric, f"{pair.legacy.target} vs {pair.collections.target}",
                         f"legacy {legacy_value}; collections {value_text(error)}", reference_text(pair.legacy))
    return [Headline("collections_raise", "collections_raise", sentence, example, len(pairs),
                       pair.expected.label)], covered


def _by_rule(audit: Audit, name: str, kind: str, skip: set[tuple[str, str]]) -> list[Headline]:
    """One finding per explaining rule or entry for errors and explained divergences."""
    groups: dict[str | None, list[AuditRow]] = {}
    for row in _rows(audit, name):
        if (row.case.id, str(row.target)) not in skip:
            groups.setdefault(row.expected.by, []).append(row)
    out = []
    for by, rows in groups.items():
        row = _prefer_legacy(rows)[0]
        reason = (row.expected.reason or row.classification.explanation).strip()
        first = reason.split(": ", 1)[0] if name in ("divergence", "variant") else None
        if name == "error":
            error = row.ragas_value if isinstance(row.ragas_value, RagasError) else None
            error_type = error.type if error is not None else "an error"
            if error is not None and error.raised_by_harness:
                subject = f"The harness raises {error_type} driving {_class(row.target)}"
            elif error is not None and error.not_in_this_ragas:
                subject = f"{_class(row.target)} is not in this Ragas ({error_type})"
            else:
                subject = f"{_class(row.target)} raises {error_type}"
            sentence = (f"{subject} on {row.case.id} ({len(rows)} "
                        f"row{'' if len(rows) == 1 else 's'}), a row evaluate() turns into NaN and drops: "
                        f"{first_sentence(reason)}")
        else:
            sentence = (f"{first}: {_class(row.target)} gives {value_text(row.ragas_value)} on {row.case.id} "
                        f"where the reference gives {reference_text(row)} ({len(rows)} "
                        f"row{'' if len(rows) == 1 else 's'}).")
        out.append(Headline(f"{name}:{by}", kind, sentence, example_of(row), len(rows), row.expected.label))
    return out


def headlines(audit: Audit, limit: int | None = None) -> list[Headline]:
    """The audit's findings, ranked by consequence (module docstring); at most ``limit``."""
    raised, covered = _collections_raise(audit)
    found = (_unexplained(audit) + _mean_gap(audit) + _empty_as_zero(audit)
             + _by_rule(audit, "divergence", "divergence", set()) + _by_rule(audit, "variant", "variant", set())
             + _dedup(audit) + _coercion(audit)
             + raised + _by_rule(audit, "error", "error", covered) + _undefined_nan(audit) + _epsilon(audit))
    found.sort(key=lambda f: (f.rank, -f.rows))
    return found[:limit] if limit is not None else found


def headline_json(finding: Headline) -> dict[str, Any]:
    e = finding.example
    return {"key": finding.key, "kind": finding.kind, "rank": finding.rank, "sentence": finding.sentence,
            "rows": finding.rows, "explained_by": finding.explained_by,
            "example": {"case_id": e.case_id, "metric": e.metric, "target": e.target, "ragas": e.ragas,
                        "reference": e.reference}}
