"""Headlines: what this audit means for the numbers a reviewer is about to quote.

``headlines(audit)`` derives, for *this* suite, a short ranked list of findings, each one sentence
with one example row (case, metric, Ragas target, Ragas's value and the reference's); ``build_audit``
stores them once as ``Audit.headlines``, after the drift findings (``ragas_compat.compare.findings``)
and before the verdict (``ragas_compat.compare.verdict``). No rendering here: report.md, report.html,
the terminal and report.json all show these.

Ranking, by consequence for a reported score (within a kind, the one with more rows first):

0. ``unexplained``: drift (a row or pair no rule explains, a value out of range, an expectations
   problem): the audit cannot vouch for these at all;
1. ``mean_gap``: Ragas's ``evaluate()`` mean differs from the explicit-policy mean (the headline number):
   one finding per metric that has one, a configuration cases name (``aspect_critic[strictness=5]``) counting
   as a metric of its own since its mean and reference are its own (metrics of one Ragas class with the same
   two means share it; the key is ``mean_gap:<gap_label>``), ranked by ``weight``: the gap relative to the
   metric's range (``value_range``; for a metric with no fixed range, the span of its values in this suite)
   times the rows evaluate() averages. That product is the sum, over those rows, of Ragas's value minus the
   explicit-policy mean, in units of the range (its absolute value); as the reference's own values sum to
   its mean times its rows, it is the rows that move the mean, each weighed by how far it moves it: rows
   Ragas keeps that the reference drops (their distance from the policy mean), rows Ragas drops that the
   reference defines (the same, subtracted), rows both define scored otherwise beyond a guard constant or
   rounding (Ragas's value minus the reference's); a row scored as the reference scores it adds nothing.
   The gap alone is diluted by the rows that agree (six moved rows of 21 make a smaller gap than four of
   six), and multiplying that diluted gap by the rows moved kept the dilution: a four-row gap on a six-row
   configuration outranked the six-row gap on the 21-row context-precision mean a RAG team quotes. On equal
   weights, the finding that moves more rows comes first. A gap under
   ``MEAN_GAP_FLOOR`` of the range, or one no such row moves (every row identical, ``epsilon`` or
   ``rounding``), is a guard constant or rounding, which the per-row findings name; it is no mean-gap finding;
2. ``empty_as_zero``: undefined rows scored 0.0, indistinguishable from a real zero, kept in means;
3. ``divergence`` (explained): Ragas measures something else on these inputs;
4. ``dedup``, ``coercion`` and ``repeat``: Ragas scored other inputs than the case gave, or counted an input
   twice: ``repeat`` is a context-precision row whose relevant chunk is retrieved more than once (the
   reference's ``details.repeats``) and where Ragas's value is the label-level AP (the row is explained,
   identical or by its guard constant): the finding shows the difference to AP over distinct items;
5. ``collections_raise``: the collections API raises where the legacy API returns a value;
6. ``error``: a Ragas class raises (evaluate() turns the row into NaN and drops it);
7. ``undefined_nan``: same meaning, NaN encoding; evaluate() drops the row from its mean;
8. ``epsilon``: a guard constant in a denominator (a difference in the tenth decimal); the explaining
   rule's reason names the formula.

Exact values print as fractions up to ``EXACT_DIGITS`` digits; a longer fraction (a mean of floats)
prints as its float, "(exact value in report.json)". A whole number prints once ("4", not "4 ≈ 4.000").
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragas_compat.compare.dataset_level import row_status
from ragas_compat.compare.findings import value_range
from ragas_compat.compare.rows import AuditRow
from ragas_compat.compare.rows import reference_text as row_reference_text
from ragas_compat.values import Label, RagasError, Ranking
from ragas_compat.vocabulary import Classification, TargetId

Audit = Any  # ragas_compat.compare.audit.Audit (which imports this module): rows, pairs, findings, dataset_level

RANKS: dict[str, int] = {
    "unexplained": 0, "mean_gap": 1, "empty_as_zero": 2, "divergence": 3, "variant": 3, "dedup": 4, "coercion": 4,
    "repeat": 4,
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
    weight: float | None = None  # mean_gap: the gap relative to the range times the rows averaged (ranks the kind)

    @property
    def rank(self) -> int:
        return RANKS[self.kind]

    def sort_key(self) -> tuple[int, float, int]:
        return self.rank, -(self.weight if self.weight is not None else 0.0), -self.rows


# --------------------------------------------------------------------------- value texts

def value_text(value: Any) -> str:
    if isinstance(value, RagasError):
        first = (value.message.strip().splitlines() or [""])[0]
        return f"{value.label}: {first}"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return repr(value)


EXACT_DIGITS = 20  # a fraction with more digits than this prints as its float (the exact value is in report.json)
EXACT_IN_JSON = "(exact value in report.json)"


def long_fraction(value: Fraction) -> bool:
    return len(str(abs(value.numerator))) + len(str(value.denominator)) > EXACT_DIGITS


def exact_text(value: Fraction | float | Label | Ranking | None) -> str:
    """``5/6 = 0.8333333333333334``; ``4``; a long fraction as ``0.859... (exact value in report.json)``; a label
    or a ranking as its repr (``'pass'``, ``['b', 'a']``)."""
    if value is None:
        return "undefined"
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value)
        if long_fraction(value):
            return f"{float(value)!r} {EXACT_IN_JSON}"
        return f"{value} = {float(value)!r}"
    return repr(value)


def short_exact(value: Fraction) -> str:
    """An exact mean for a sentence: ``4``, ``67/78 ≈ 0.859``, or ``0.859 (exact value in report.json)``."""
    if value.denominator == 1:
        return str(value)
    if long_fraction(value):
        return f"{short_float(float(value))} {EXACT_IN_JSON}"
    return f"{value} ≈ {short_float(float(value))}"


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

def _what(audit: Audit, finding: Any) -> tuple[str | None, str]:
    """What an unexplained finding is about: a part of its headline's stable key (its classification; for a
    finding of none, None or what sets it apart) and the words: its row's classification, or what a finding
    of no classification is (a recorded live score, the harness's own error, a dataset-level evaluate()
    result, a problem of the expectations file)."""
    if finding.classification:
        return finding.classification, f"classified {finding.classification}"
    if finding.kind == "replay_mismatch":
        return None, "a recorded live score"
    if finding.kind == "harness_error":
        return None, "not scored: the harness's own error"
    if finding.message.startswith("dataset level: "):
        return "dataset_level", "a dataset-level evaluate() result"
    if finding.message in audit.expectation_problems:
        return None, "an expectations-file problem"
    return "no_row", "a finding of no row"


def _unexplained(audit: Audit) -> list[Headline]:
    groups: dict[tuple[str, str | None, str], list[Any]] = {}
    for finding in audit.findings:  # grouped by what they are about, so a headline quotes one of a kind
        groups.setdefault((finding.kind, *_what(audit, finding)), []).append(finding)
    out = []
    for (kind, key, what), members in groups.items():
        first = members[0]
        row = next((r for r in audit.rows if r.case.id == first.case_id and r.target == first.target), None)
        example = example_of(row) if row is not None else ExampleRow(first.case_id, None, first.target, "—", "—")
        sentence = (f"{len(members)} finding{'' if len(members) == 1 else 's'} of kind {kind} ({what}) that no rule "
                    f"or case entry explains: {first.message}")
        out.append(Headline(f"unexplained:{kind}:{key}", "unexplained", sentence, example, len(members)))
    return out


MEAN_GAP_FLOOR = 0.001  # of the metric's range: below it, a mean gap is a guard constant or float rounding
# rows that differ from the reference only by a guard constant or a rounding of the score: they move no mean
GUARD_CLASSES = frozenset({Classification.IDENTICAL, Classification.EPSILON, Classification.ROUNDING})


def gap_label(agg: Any) -> str:
    """The metric, or the case-named configuration of it (``aspect_critic[strictness=5]``): the unit of one
    mean-gap finding, as ``DatasetLevel.by_metric`` groups the targets (its reference is its own)."""
    return agg.group or agg.metric


def gap_span(agg: Any) -> tuple[float, float, bool]:
    """The range a gap of ``agg``'s metric is measured against: ``value_range`` when finite, else the span
    of this suite's values (Ragas's rows and the reference's); the flag says which."""
    bounds = value_range(agg.metric)
    if bounds is not None and math.isfinite(bounds[1] - bounds[0]) and bounds[1] > bounds[0]:
        return bounds[0], bounds[1], True
    values = [r.evaluate_value for r in agg.rows if not math.isnan(r.evaluate_value)]
    values += [float(r.reference.value) for r in agg.rows if r.reference.value is not None]
    values += [agg.ragas_mean, float(agg.policy.mean)]
    low, high = min(values), max(values)
    return (low, high, False) if high > low else (low, low + 1.0, False)


@dataclass(frozen=True)
class MeanGap:
    agg: Any
    gap: float
    relative: float
    span: tuple[float, float, bool]
    kept: tuple[Any, ...]       # rows Ragas keeps that the reference drops (undefined or refused)
    dropped: tuple[Any, ...]    # rows Ragas drops (NaN) that the reference defines
    changed: tuple[Any, ...]    # rows both define, scored otherwise (beyond a guard constant or rounding)

    @property
    def moved(self) -> int:
        return len(self.kept) + len(self.dropped) + len(self.changed)

    @property
    def weight(self) -> float:
        """The gap relative to the range times the rows evaluate() averages: the summed distance of those
        rows from the explicit-policy mean, in units of the range (module docstring)."""
        return self.relative * max(len(self.agg.kept), 1)


def mean_gap_of(agg: Any) -> MeanGap | None:
    """The gap of one target's evaluate() mean from the explicit policy's, or None below ``MEAN_GAP_FLOOR``."""
    if agg.classification.name == "identical" or agg.policy.mean is None or math.isnan(agg.ragas_mean):
        return None
    span = gap_span(agg)
    width = span[1] - span[0]
    gap = abs(agg.ragas_mean - float(agg.policy.mean))
    if gap < MEAN_GAP_FLOOR * width:
        return None
    tolerance = 1e-9 * width
    kept = agg.kept_but_dropped_by_reference
    dropped = tuple(r for r in agg.dropped_rows if row_status(r.reference)[0] == "defined")
    changed = tuple(r for r in agg.kept if r.reference.value is not None and row_status(r.reference)[0] == "defined"
                    and r.row_classification not in GUARD_CLASSES
                    and abs(r.evaluate_value - float(r.reference.value)) > tolerance)
    if not (kept or dropped or changed):
        return None  # every row is the reference's value up to a guard constant or rounding: no mean gap
    return MeanGap(agg, gap, gap / width, span, kept, dropped, changed)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _values_text(rows: tuple[Any, ...]) -> str:
    """What Ragas scored the rows, read from them: ``scored 0.0`` (all alike), ``scored 1.0 and 0.0`` (one
    each), ``scored 0.0 (5 rows) and 0.9999999999 (1 row)``."""
    counts = Counter(repr(r.evaluate_value) for r in rows)
    if len(counts) == 1:
        return f"{'all ' if len(rows) > 1 else ''}scored {next(iter(counts))}"
    items = [value if len(rows) == len(counts) else f"{value} ({_plural(n, 'row')})" for value, n in counts.items()]
    return f"scored {', '.join(items[:-1])} and {items[-1]}"


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.01 else f"{share:.1%}"


def _dropped_as(rows: tuple[Any, ...]) -> str:
    statuses = {row_status(r.reference)[0] for r in rows}
    return "undefined" if statuses == {"undefined"} else "refused" if statuses == {"error"} else \
        "undefined or refused"


def _range_text(span: tuple[float, float, bool]) -> str:
    low, high, fixed = span
    return (f"of the metric's range [{low:g}, {high:g}]" if fixed
            else f"of the span of its values here, [{low:g}, {high:g}] (the metric has no fixed range)")


def _mean_gap_headline(group: list[MeanGap]) -> Headline:
    first = group[0]
    agg, policy = first.agg, first.agg.policy
    metrics = list(dict.fromkeys(gap_label(g.agg) for g in group))
    classes = ", ".join(dict.fromkeys(_class(g.agg.target) for g in group))
    means = f"{' and '.join(metrics)} mean{'s' if len(metrics) > 1 else ''}"
    parts = []
    if first.kept:
        parts.append(f"it keeps {_plural(len(first.kept), 'row')} the reference drops as {_dropped_as(first.kept)}, "
                     f"{_values_text(first.kept)}")
    if first.dropped:
        parts.append(f"it drops {_plural(len(first.dropped), 'row')} the reference defines (NaN)")
    if first.changed:
        parts.append(f"{_plural(len(first.changed), 'row')} score{'s' if len(first.changed) == 1 else ''} otherwise")
    sentence = (f"evaluate()'s {means} ({classes}) {'is' if len(metrics) == 1 else 'are'} "
                f"{short_float(agg.ragas_mean)} where the explicit policy gives {short_exact(policy.mean)} over "
                f"{policy.defined} of {policy.cases} rows, a gap of {_percent(first.relative)} {_range_text(first.span)}"
                + (f": {'; '.join(parts)}." if parts else "."))
    reference = f"{exact_text(policy.mean)} over {policy.defined} of {policy.cases} rows"
    ragas = f"{agg.ragas_mean!r}"
    if first.kept:
        row = first.kept[0]
        reason = row_status(row.reference)[1]
        example = ExampleRow(row.case_id, agg.metric, agg.target, f"{row.evaluate_value!r} kept in the mean {ragas}",
                             f"{_dropped_as((row,))} ({reason}), dropped: mean {reference}")
    elif first.changed or first.dropped:
        row = (first.changed or first.dropped)[0]
        example = ExampleRow(row.case_id, agg.metric, agg.target, f"{row.evaluate_value!r} in the mean {ragas}",
                             f"{exact_text(row.reference.value)} in the mean {reference}")
    else:
        example = ExampleRow(None, agg.metric, agg.target, f"mean {ragas}", f"mean {reference}")
    return Headline(f"mean_gap:{gap_label(agg)}", "mean_gap", sentence, example, first.moved, weight=first.weight)


def _mean_gap(audit: Audit) -> list[Headline]:
    """One finding per metric (or case-named configuration of it, ``gap_label``: each is its own evaluate()
    mean against its own reference) whose evaluate() mean is off the explicit policy's (its target farthest
    from it, the first on a tie); metrics of one Ragas class with the same two means share one finding."""
    return [_mean_gap_headline(group) for group in mean_gap_groups(audit)]


def mean_gap_groups(audit: Audit) -> list[list[MeanGap]]:
    """The mean gaps one finding each shows: per metric or configuration (``gap_label``) its target farthest
    from the policy's mean (the first on a tie), those of one Ragas class with the same two means together."""
    level = audit.dataset_level
    if level is None:
        return []
    groups: dict[tuple[str, float, Fraction], list[MeanGap]] = {}
    for aggregates in level.by_metric().values():
        gaps = [g for g in map(mean_gap_of, aggregates) if g is not None]
        if not gaps:
            continue
        best = max(gaps, key=lambda g: g.gap)  # max keeps the first of equal gaps
        key = (_class(best.agg.target).partition("[")[0], best.agg.ragas_mean, best.agg.policy.mean)
        groups.setdefault(key, []).append(best)
    return list(groups.values())


def mean_gap_order(audit: Audit) -> dict[str, tuple[int, int]]:
    """Each metric or configuration with a mean-gap finding (``gap_label``) -> (the finding's place among
    ``audit.headlines``, its place among the labels that finding names): what a chart of the means follows."""
    place = {h.key: index for index, h in enumerate(audit.headlines)}
    order: dict[str, tuple[int, int]] = {}
    for group in mean_gap_groups(audit):
        index = place.get(f"mean_gap:{gap_label(group[0].agg)}", len(place))
        for position, gap in enumerate(group):
            order.setdefault(gap_label(gap.agg), (index, position))
    return order


def _rows(audit: Audit, name: str) -> list[AuditRow]:
    return [r for r in audit.rows if r.classification.name == name and not r.unexpected]


def _prefer_legacy(rows: list[AuditRow]) -> list[AuditRow]:
    return sorted(rows, key=lambda r: 0 if str(r.target).startswith("legacy:") else 1)


def _rule_reason(row: AuditRow) -> str:
    """The first sentence of the reason of the rule or case entry that explains ``row`` (the specifics),
    without its full stop."""
    return first_sentence((row.expected.reason or row.classification.explanation).strip()).rstrip(".")


def _epsilon(audit: Audit) -> list[Headline]:
    rows = _prefer_legacy(_rows(audit, "epsilon"))
    if not rows:
        return []
    with_r = [r for r in rows if r.reference.details.get("corpus_ap") is not None]
    row = (with_r or rows)[0]
    d = row.reference.details
    metrics = {r.spec.name for r in rows}
    sentence = (f"{len(rows)} rows of {_plural(len(metrics), 'metric')} differ from the exact value only by a guard "
                f"constant Ragas adds to a denominator: {_class(row.target)} on {row.case.id} gives "
                f"{value_text(row.ragas_value)}, not {exact_text(row.reference.value)}: {_rule_reason(row)}")
    if d.get("corpus_ap") is not None:
        sentence += (f"; trec_eval AP over all R={d.get('corpus_relevant')} relevant items would be "
                     f"{d['corpus_ap']} here")
    else:
        perfect = next((r for r in rows if r.reference.value == 1 and r.spec.name == row.spec.name), None)
        if perfect is not None:
            sentence += f"; a perfect score comes out as {value_text(perfect.ragas_value)}"
    return [Headline("epsilon", "epsilon", sentence + ".", example_of(row), len(rows), row.expected.label)]


def _empty_as_zero(audit: Audit) -> list[Headline]:
    rows = _prefer_legacy(_rows(audit, "empty_as_zero"))
    if not rows:
        return []
    row = rows[0]
    reasons = sorted({r.reference.undefined_reason or "undefined" for r in rows})
    metrics = {r.spec.name for r in rows}
    rules = {r.expected.by for r in rows}
    sentence = (f"{len(rows)} rows of {_plural(len(metrics), 'metric')} where the reference is undefined "
                f"({', '.join(reasons)}) score 0.0, the same number as a real zero, and count in evaluate()'s "
                f"mean ({_plural(len(rules), 'rule')} name the causes): e.g. {_class(row.target)} on "
                f"{row.case.id}: {_rule_reason(row)}.")
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


def _repeat(audit: Audit) -> list[Headline]:
    """Context-precision rows whose relevant chunk is retrieved more than once and whose Ragas value is the
    label-level AP (every repeat counted): the reference's distinct-items reading beside it."""
    rows = _prefer_legacy([r for r in audit.rows if isinstance(r.reference.details.get("repeats"), dict)
                           and not r.unexpected and r.classification.name in ("identical", "epsilon")])
    if not rows:
        return []
    row = rows[0]
    repeats: dict[str, Any] = row.reference.details["repeats"]  # type-checked above (isinstance dict)
    distinct = repeats["context_ap_distinct"]
    sentence = (f"Ragas's context precision counts a relevant chunk retrieved more than once as relevant again "
                f"({_plural(len(rows), 'row')}; the AP of its labels, not of the corpus items): "
                f"{_class(row.target)} on {row.case.id} gives {value_text(row.ragas_value)}, the AP over its "
                f"{repeats['relevant_labels']} relevant labels ({exact_text(row.reference.value)}), where AP over "
                f"the {repeats['distinct_relevant_items']} distinct relevant items gives {exact_text(distinct)}")
    details = row.reference.details
    if details.get("corpus_relevant") is not None and repeats.get("corpus_ap_label_level") is not None:
        sentence += (f"; with R={details['corpus_relevant']} relevant items, corpus AP is "
                     f"{exact_text(details.get('corpus_ap'))} and recall@K {exact_text(details.get('recall_at_k'))} "
                     f"(counting every label: {exact_text(repeats['corpus_ap_label_level'])} and "
                     f"{exact_text(repeats['recall_at_k_label_level'])})")
    example = ExampleRow(row.case.id, row.spec.name, str(row.target), value_text(row.ragas_value),
                         f"distinct items: {exact_text(distinct)}; every label: {reference_text(row)}")
    return [Headline("repeat", "repeat", sentence + ".", example, len(rows), row.expected.label)]


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
        first = reason.split(": ", 1)[0].rstrip(".") if name in ("divergence", "variant") else None
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
             + _dedup(audit) + _coercion(audit) + _repeat(audit)
             + raised + _by_rule(audit, "error", "error", covered) + _undefined_nan(audit) + _epsilon(audit))
    found.sort(key=Headline.sort_key)
    return found[:limit] if limit is not None else found


def headline_json(finding: Headline) -> dict[str, Any]:
    e = finding.example
    return {"key": finding.key, "kind": finding.kind, "rank": finding.rank, "sentence": finding.sentence,
            "rows": finding.rows, "explained_by": finding.explained_by, "weight": finding.weight,
            "example": {"case_id": e.case_id, "metric": e.metric, "target": e.target, "ragas": e.ragas,
                        "reference": e.reference}}
