"""Dataset-level scores: Ragas's ``evaluate()`` mean next to an explicit missing-value policy.

**Reference policy** (per metric, over the M cases the metric applies to). Each row is

- *defined*: the reference has a value;
- *undefined*, by ``undefined_reason`` (empty_retrieval, no_relevant_retrieved, zero_claims,
  empty_reference_contexts, empty_id_set): the formula's denominator is empty;
- an *error*, by reason: ``judge_reply_unparseable`` (the judge's reply is not a verdict) or
  ``refused_input`` (the reference refuses an input, e.g. a label 2).

The reference mean is the exact mean over defined rows (sum / defined, a Fraction; None when no
row is defined); every other row is *dropped*, and the dropped share is (M - defined) / M.

**Ragas.** ``evaluate()`` reports ``safe_nanmean`` of its per-row values (numpy ``nanmean``:
NaN rows are skipped). With ``raise_exceptions=False`` an exception in a row is NaN too, so
undefined and failed rows both vanish; and rows Ragas scores 0.0 where the reference is undefined
(the AP epsilon) stay in. N is the number of non-NaN rows, K = M - N were dropped.

**What explains Ragas's mean.** Each row's value is recomputed from the reference under the
semantics its per-row classification established (identical: the exact value; epsilon, dedup,
coercion: that alternative; empty_as_zero: 0.0; undefined_nan and error: NaN; rounding and
divergence: the exact value, i.e. unexplained), and averaged with numpy's own algorithm
(``numpy_nanmean``: NaN replaced by 0 in place, pairwise summation, divided by the non-NaN
count). The pair (Ragas's mean, reference mean) is classified by ``ragas_compat.compare.classify.classify`` with
that recomputed mean as the alternative named after the most consequential semantics involved
(``MEAN_SEMANTICS``: rows kept as 0.0, then coercion, de-duplication, the epsilon). No Ragas import here.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ragas_compat.compare.classify import VARIANT_PREFIX, Diagnosis, classify, matching_variant, same_float
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.registry import metric_names
from ragas_compat.values import NON_NUMERIC, RagasError, RagasValue, decode_ragas_value

POLICY = ("A row is defined (the reference has a value), undefined (empty denominator; by reason) or an error "
          "(the judge's reply is not a verdict, or the reference refuses an input; by reason). The reference "
          "mean is the exact mean over defined rows; every other row is dropped. Ragas's evaluate() mean is "
          "numpy nanmean over its per-row values, where an exception (raise_exceptions=False) and an undefined "
          "claim/ID metric are NaN and skipped, and an undefined AP row is 0.0 and kept.")

REFUSED_INPUT = "refused_input"
PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE


# --------------------------------------------------------------------------- numpy's mean

def pairwise_sum(values: Sequence[float]) -> float:
    """numpy's float64 ``add.reduce`` on a contiguous array: 8 interleaved accumulators up to 128
    items, halves (rounded down to a multiple of 8) above; plain loop below 8 items."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    if n <= PAIRWISE_BLOCK:
        r = list(values[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += values[i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in values[i:]:
            total += v
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values[:half]) + pairwise_sum(values[half:])


def numpy_nanmean(values: Sequence[float]) -> float:
    """``numpy.nanmean`` as Ragas's ``safe_nanmean`` calls it: NaN when empty or all NaN, else the
    pairwise sum with NaN replaced by 0 (in place) divided by the number of non-NaN values."""
    count = sum(1 for v in values if not math.isnan(v))
    if count == 0:
        return math.nan
    return pairwise_sum([0.0 if math.isnan(v) else v for v in values]) / count


# --------------------------------------------------------------------------- reference policy

def row_status(outcome: ReferenceOutcome) -> tuple[str, str | None]:
    """``("defined", None)``, ``("undefined", reason)`` or ``("error", reason)`` for one row."""
    if outcome.refused is not None:
        return "error", str(outcome.details.get("error_reason") or REFUSED_INPUT)
    if outcome.value is None:
        return "undefined", outcome.undefined_reason or "undefined"
    return "defined", None


@dataclass(frozen=True)
class PolicyCounts:
    """The reference policy over a set of rows: counts, exact mean over defined rows, dropped share."""

    cases: int
    defined: int
    undefined: dict[str, int]
    errors: dict[str, int]
    mean: Fraction | None

    @property
    def dropped(self) -> int:
        return self.cases - self.defined

    @property
    def dropped_share(self) -> Fraction | None:
        return Fraction(self.dropped, self.cases) if self.cases else None


def policy_counts(outcomes: Iterable[ReferenceOutcome]) -> PolicyCounts:
    outcomes = list(outcomes)
    undefined: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    values: list[Fraction] = []
    for outcome in outcomes:
        status, reason = row_status(outcome)
        if status == "defined":
            values.append(Fraction(outcome.value))  # type: ignore[arg-type]
        elif status == "undefined":
            undefined[reason or "undefined"] += 1
        else:
            errors[reason or REFUSED_INPUT] += 1
    mean = sum(values, Fraction(0)) / len(values) if values else None
    return PolicyCounts(len(outcomes), len(values), dict(sorted(undefined.items())),
                        dict(sorted(errors.items())), mean)


# --------------------------------------------------------------------------- Ragas side

@dataclass(frozen=True)
class AggregationRow:
    """One case of one Ragas target: what evaluate() produced next to the per-row audit."""

    case_id: str
    category: str
    reference: ReferenceOutcome
    row_classification: str                   # the per-row (single_turn_ascore) classification
    evaluate_value: float                     # the value evaluate() put in its row (NaN kept)
    single_turn_value: RagasValue             # what single_turn_ascore returned for the same case
    evaluate_error: tuple[str, str] | None = None  # (type, message) evaluate() turned into NaN


def explained_row_value(row: AggregationRow) -> float:
    """The row's value recomputed from the reference under the semantics its classification names."""
    ref, name = row.reference, row.row_classification
    number = ref.number  # evaluate() aggregates numbers: a label or a ranking never has an aggregation row
    exact = math.nan if number is None else float(number)
    if name in ("epsilon", "dedup", "coercion"):
        alternative = ref.alternatives.get(name)
        return math.nan if alternative is None else float(alternative)
    if name == "empty_as_zero":
        return 0.0
    if name in ("undefined_nan", "error"):
        return math.nan
    if name == "variant":
        variant = matching_variant(row.single_turn_value, ref)
        return exact if variant is None else float(ref.alternatives[VARIANT_PREFIX + variant])  # type: ignore[arg-type]
    if name == "rounding" and ref.alternatives.get("rounding") is not None:
        return float(ref.alternatives["rounding"])  # type: ignore[arg-type]  # the float evaluation recomputed
    return exact  # identical; rounding without a recomputed float and divergence stay unexplained


def _same_value(evaluate_value: float, single_turn: RagasValue) -> bool:
    if isinstance(single_turn, RagasError):
        return math.isnan(evaluate_value)  # raise_exceptions=False turns the exception into NaN
    return same_float(evaluate_value, single_turn)


@dataclass(frozen=True)
class TargetAggregate:
    """One Ragas target over the suite: evaluate()'s mean, the policy, and the classified pair."""

    metric: str
    target: str
    apis: dict[str, float]                  # api -> the dataset-level score Ragas reported
    rows: tuple[AggregationRow, ...]
    policy: PolicyCounts
    explained_mean: float
    recomputed_mean: float                  # numpy_nanmean over evaluate()'s own per-row values
    classification: Diagnosis
    alternative_key: str | None
    run_problems: tuple[str, ...] = field(default=())
    # the metric and a case-named configuration of it (MetricSpec.reference_key): its own reference
    group: str = ""
    # Ragas's runs of the target that disagree with themselves (a batch's reported mean is not the safe_nanmean of
    # its rows), with each other row by row, or score a case the audit has no row of
    run_disagreements: tuple[str, ...] = field(default=())
    # the harness's scripted judge was asked amiss in a run of the target: a harness error says the check was not
    # made (DatasetLevel.harness_problems), and nothing of its disagreements is said of Ragas
    judged_amiss: bool = False

    @property
    def ragas_mean(self) -> float:
        return self.apis.get("evaluate", next(iter(self.apis.values()), math.nan))

    @property
    def kept(self) -> tuple[AggregationRow, ...]:
        return tuple(r for r in self.rows if not math.isnan(r.evaluate_value))

    @property
    def dropped_rows(self) -> tuple[AggregationRow, ...]:
        return tuple(r for r in self.rows if math.isnan(r.evaluate_value))

    @property
    def kept_but_dropped_by_reference(self) -> tuple[AggregationRow, ...]:
        """Rows the reference drops (undefined or error) that Ragas kept in its mean (e.g. 0.0)."""
        return tuple(r for r in self.kept if row_status(r.reference)[0] != "defined")

    @property
    def apis_agree(self) -> bool:
        values = list(self.apis.values())
        return all(same_float(v, values[0]) for v in values)

    def disagreements(self) -> list[str]:
        """What of Ragas's own dataset-level run does not hold together with its per-row scoring: its mean is
        not numpy's nanmean over its own rows, its APIs' means or rows differ, or a case's ``evaluate()`` row
        is not what ``single_turn_ascore`` returned for that case (NaN where that raised). Nothing explains
        them: each is an unexplained finding of the audit (``compare.findings``); the default audit has none.
        Nothing when the harness's judge was asked amiss in a run of the target (``judged_amiss``), and no row
        the harness failed to score on either side: the harness's errors are never said of Ragas."""
        if self.judged_amiss:
            return []
        out = [] if self.mean_recomputed_exactly else [
            f"{self.target}: evaluate()'s mean {self.ragas_mean!r} is not numpy's nanmean over its own rows "
            f"({self.recomputed_mean!r})"]
        if not self.apis_agree:
            out.append(f"{self.target}: the APIs' means differ: "
                       + ", ".join(f"{api}() {value!r}" for api, value in sorted(self.apis.items())))
        out += [f"{self.target}: {problem}" for problem in self.run_disagreements]
        differ = [row.case_id for row in self._mismatched_rows() if not _harness_side(row)]
        if differ:
            shown = ", ".join(differ[:DISAGREEING_SHOWN]) + (
                f" and {len(differ) - DISAGREEING_SHOWN} more" if len(differ) > DISAGREEING_SHOWN else "")
            out.append(f"{self.target}: evaluate()'s row is not single_turn_ascore's value (NaN where that raised) "
                       f"for {len(differ)} case(s): {shown}")
        return out

    def _mismatched_rows(self) -> list[AggregationRow]:
        return [r for r in self.rows if not _same_value(r.evaluate_value, r.single_turn_value)]

    @property
    def single_turn_mismatches(self) -> tuple[str, ...]:
        return tuple(r.case_id for r in self._mismatched_rows())

    @property
    def mean_recomputed_exactly(self) -> bool:
        return same_float(self.recomputed_mean, self.ragas_mean)


DISAGREEING_SHOWN = 5  # rows named in a disagreement's line


def _harness_side(row: AggregationRow) -> bool:
    """The harness failed to score the case: per row (its own error) or in evaluate() (the row's exception)."""
    raised = [row.single_turn_value] + ([RagasError(*row.evaluate_error)] if row.evaluate_error is not None else [])
    return any(isinstance(value, RagasError) and value.raised_by_harness for value in raised)


def drop_cause(row: AggregationRow) -> str:
    """Why evaluate() dropped a row: the exception it swallowed, or the NaN the metric returned."""
    status, reason = row_status(row.reference)
    reference = "reference: defined" if status == "defined" else f"reference: {status}, {reason}"
    if row.evaluate_error is not None:
        kind, message = row.evaluate_error
        first_line = message.strip().splitlines()[0] if message.strip() else ""
        return f"error turned into NaN: {kind}: {first_line} ({reference})"
    return f"NaN returned by the metric ({reference})"


# What a recomputed mean is named after, most consequential first: rows Ragas keeps as 0.0 change
# the set the mean is taken over; coercion and de-duplication change row values by a lot; the
# epsilon only in the tenth decimal.
MEAN_SEMANTICS = ("empty_as_zero", "coercion", "dedup", "epsilon")


def _alternative_key(rows: Sequence[AggregationRow]) -> str | None:
    names = {r.row_classification for r in rows}
    return next((name for name in MEAN_SEMANTICS if name in names), None)


def mean_outcome(metric: str, policy: PolicyCounts, explained_mean: float,
                 alternative_key: str | None) -> ReferenceOutcome:
    """The reference side of the mean pair: the exact policy mean; Ragas's recomputed mean as the
    alternative ``alternative_key``."""
    alternatives: dict[str, float | Fraction | None] = {}
    if alternative_key is not None:
        alternatives[alternative_key] = explained_mean
    return ReferenceOutcome(metric, policy.mean, None if policy.mean is not None else "no_defined_rows",
                            None, alternatives, {"defined": policy.defined, "cases": policy.cases},
                            "defined rows")


def aggregate_target(metric: str, target: str, apis: dict[str, float], rows: Sequence[AggregationRow],
                     run_problems: Sequence[str] = ()) -> TargetAggregate:
    rows = tuple(rows)
    policy = policy_counts(r.reference for r in rows)
    explained = numpy_nanmean([explained_row_value(r) for r in rows])
    recomputed = numpy_nanmean([r.evaluate_value for r in rows])
    key = _alternative_key(rows)
    ragas_mean = apis.get("evaluate", next(iter(apis.values()), math.nan))
    classification = classify(ragas_mean, mean_outcome(metric, policy, explained, key))
    return TargetAggregate(metric, target, dict(apis), rows, policy, explained, recomputed,
                           classification, key, tuple(run_problems))


def sentence(agg: TargetAggregate) -> str:
    """"Ragas's mean of X is over N of M cases; K were dropped: …" (plus rows kept as 0.0)."""
    dropped = agg.dropped_rows
    text = (f"Ragas's mean of {agg.ragas_mean!r} is over {len(agg.kept)} of {len(agg.rows)} cases; "
            f"{len(dropped)} were dropped")
    text += (": " + "; ".join(f"{r.case_id} ({drop_cause(r)})" for r in dropped)) if dropped else ""
    kept = agg.kept_but_dropped_by_reference
    if kept:
        text += (f". {len(kept)} kept although the reference drops them: "
                 + ", ".join(f"{r.case_id} ({row_status(r.reference)[1]}; Ragas {r.evaluate_value!r})"
                             for r in kept))
    return text + "."


def by_category(agg: TargetAggregate) -> dict[str, tuple[PolicyCounts, int, float]]:
    """category -> (reference policy, Ragas rows kept N, numpy nanmean of Ragas's rows)."""
    out: dict[str, tuple[PolicyCounts, int, float]] = {}
    for category in sorted({r.category for r in agg.rows}):
        rows = [r for r in agg.rows if r.category == category]
        out[category] = (policy_counts(r.reference for r in rows),
                         sum(1 for r in rows if not math.isnan(r.evaluate_value)),
                         numpy_nanmean([r.evaluate_value for r in rows]))
    return out


# --------------------------------------------------------------------------- from the probe output

@dataclass(frozen=True)
class DatasetLevel:
    """Every Ragas target that ran through evaluate(), aggregated (registry order)."""

    settings: dict
    targets: tuple[TargetAggregate, ...]
    problems: tuple[str, ...] = field(default=())
    # the problems of runs that failed while the harness prepared them (its scripted judges, the metrics), and
    # of a target's run whose scripted judge was asked amiss (or left prompts unasked): nothing of Ragas was
    # checked there, so each is a harness error of the audit (compare.findings)
    harness_problems: tuple[str, ...] = field(default=())
    # the problems of runs Ragas's own evaluate() / aevaluate() raised in (or a run whose raiser is not
    # recorded): nothing was aggregated there, so each is an unexplained Ragas error of the audit
    ragas_problems: tuple[str, ...] = field(default=())

    def by_metric(self) -> dict[str, list[TargetAggregate]]:
        """The targets grouped by metric, in registry order (a configuration cases name, e.g.
        ``aspect_critic[strictness=5]``, is a group of its own: its reference is its own)."""
        grouped: dict[str, list[TargetAggregate]] = {}
        for aggregate in self.targets:
            grouped.setdefault(aggregate.group or aggregate.metric, []).append(aggregate)
        return grouped


def _decode(raw: object) -> float:
    value = decode_ragas_value(raw)
    if isinstance(value, NON_NUMERIC):  # evaluate() runs legacy targets; DiscreteMetric / RankingMetric are not
        raise TypeError(f"evaluate() gave {value!r}, not a number: a label or a ranking is never aggregated")
    return math.nan if isinstance(value, RagasError) else value


def from_probe(audit_rows: Sequence, evaluate_output: dict | None) -> DatasetLevel | None:
    """Join the probe's ``evaluate`` section with the audit rows (``case.id``, ``target``,
    ``reference``, ``classification``, ``ragas_value``); only targets with audit rows take part."""
    if not evaluate_output:
        return None
    by_key = {(row.case.id, row.target): row for row in audit_rows}
    audited_targets = {row.target for row in audit_rows}
    all_runs = evaluate_output.get("runs", [])  # read a run at a time (the host's may unpack each when read)
    runs: dict[str, dict[str, int]] = {}   # target -> api -> the run's place in all_runs
    problems: list[str] = []
    harness_problems: list[str] = []
    ragas_problems: list[str] = []
    for index, run in enumerate(all_runs):
        if run.get("run_error"):
            error = run["run_error"]
            problems.append(f"{run.get('api')}() on {', '.join(run.get('targets', []))} failed: "
                            f"{error.get('type')}: {error.get('message')}")
            (harness_problems if error.get("by") == "harness" else ragas_problems).append(problems[-1])
            continue
        for target in run.get("targets", []):
            if target in audited_targets:
                runs.setdefault(target, {})[run["api"]] = index
    targets = []
    for target, places in runs.items():
        by_api = {api: all_runs[index] for api, index in places.items()}
        main_api = "evaluate" if "evaluate" in by_api else sorted(by_api)[0]
        run = by_api[main_api]
        errors = {(e["case_id"], e["target"]): (e["type"], e["message"]) for e in run.get("errors", [])}
        judged_amiss = {api: [p for p in r.get("judge_problems", []) if p.startswith(target + ":")]
                        for api, r in sorted(by_api.items())}
        rows, target_problems = [], judged_amiss[main_api]
        # Ragas's runs against themselves (a batch's own mean, stated without the target's name), each other and
        # the audited cases
        disagreeing = [p.removeprefix(target + ": ") for _, r in sorted(by_api.items(), key=lambda item: item[0] != main_api)
                       for p in r.get("stub_problems", []) if p.startswith(target + ":")]
        # the harness's scripted judge asked amiss in a run: its check of the target is not made (one per run)
        harness_problems += [f"{api}() on {found[0]}" + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
                             for api, found in judged_amiss.items() if found]
        metric: str | None = None
        group = ""
        for entry in run.get("rows", []):
            audit_row = by_key.get((entry["case_id"], target))
            if audit_row is None:
                disagreeing.append(f"{entry['case_id']}: {main_api}() scored a case with no per-row result")
                continue
            metric, group = audit_row.spec.name, audit_row.spec.reference_key
            # the case's own id (equal to the entry's), not one more copy per row
            rows.append(AggregationRow(audit_row.case.id, audit_row.case.category, audit_row.reference,
                                       audit_row.classification.name, _decode(entry["values"].get(target)),
                                       audit_row.ragas_value, errors.get((entry["case_id"], target))))
        for api, other in sorted(by_api.items()):
            if api == main_api:
                continue
            theirs = {e["case_id"]: _decode(e["values"].get(target)) for e in other.get("rows", [])}
            differ = [r.case_id for r in rows if not same_float(theirs.get(r.case_id, math.nan), r.evaluate_value)]
            if differ:
                disagreeing.append(f"{api}() row values differ from {main_api}() for {', '.join(differ)}")
        if metric is None:
            continue
        apis = {api: _decode(r.get("scores", {}).get(target)) for api, r in sorted(by_api.items())}
        targets.append(dataclasses.replace(aggregate_target(metric, target, apis, rows, target_problems + disagreeing),
                                           group="" if group == metric else group,
                                           run_disagreements=tuple(disagreeing),
                                           judged_amiss=any(judged_amiss.values())))
    order = {name: i for i, name in enumerate(metric_names())}
    targets.sort(key=lambda a: (order.get(a.metric, len(order)), a.target))
    return DatasetLevel(dict(evaluate_output.get("settings", {})), tuple(targets), tuple(problems),
                        tuple(harness_problems), tuple(ragas_problems))
