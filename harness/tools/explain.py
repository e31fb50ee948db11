"""Explain one input: what Ragas gives for it, what the reference gives, and why they differ.

``explain("context-precision", labels="1,0,1", corpus_relevant=4)`` builds a one-case suite (a
synthetic Case whose retrieved contexts and claims are generated and distinct, so the scripted
judge can answer every prompt by content), runs it through the real Ragas classes in the probe
subprocess (stubbed LLM), computes the reference through the registry, classifies each Ragas
target with ``harness.compare.classify.classify`` (via ``harness.compare.audit.build_audit``) and returns every
reference quantity (exact Fraction and float) with the formulas, numbers substituted.

Command-line input syntax (parsed here, so the errors can name position and token):

- label lists: comma-separated integers or ``true``/``false``, e.g. ``1,0,1``; ``""`` is the
  empty list (zero claims / nothing retrieved). Values other than 0/1 (e.g. ``2``) are accepted
  on purpose: the reference refuses them and Ragas coerces them, which is worth explaining.
- ID lists: a JSON array, e.g. ``'[1, "1", "d2"]'``: ``1`` is the integer ID and ``"1"`` the
  string ID, so the two stay distinguishable. Items must be strings or finite numbers.
- judge-audit label maps: JSON objects ``'{"c1": 1, "c2": 0}'`` (claim ID -> label).

judge-audit has no Ragas counterpart: only the reference is computed (no probe run).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from harness.compare.audit import build_audit
from harness.cases import Case, parse_suite
from harness.compare.classify import Classification
from harness.values import RagasValue
from harness.values import encode_detail, encode_float, encode_fraction, encode_ragas_value
from harness.errors import HarnessInputError
from harness.compare.expectations import Expectations
from harness.metrics.context_precision import RAGAS_EPSILON
from harness.metrics.labels import coerce_by_truthiness, is_binary_label
from harness.metrics.outcome import ReferenceOutcome
from harness.metrics.registry import metric as registry_metric
from harness.errors import RagasUnavailable

EXPLAIN_FORMAT = 1
CASE_ID = "explain"


@dataclass(frozen=True)
class ExplainMetric:
    """A command-line metric name: the registry metric it explains and the Ragas targets run."""

    name: str
    registry_name: str
    targets: tuple[str, ...]     # probe target names; () = no Ragas counterpart
    inputs: str                  # the inputs it takes, in words (for help and errors)


EXPLAIN_METRICS: tuple[ExplainMetric, ...] = (
    ExplainMetric("context-precision", "context_precision_with_reference",
                  ("legacy:LLMContextPrecisionWithReference", "legacy:ContextPrecision"),
                  "LABELS (one 0/1 per retrieved context, rank order, e.g. 1,0,1) [--corpus-relevant R]"),
    ExplainMetric("context-recall", "context_recall", ("legacy:LLMContextRecall", "legacy:ContextRecall"),
                  'LABELS (one 0/1 "attributed" per reference claim; "" = zero claims)'),
    ExplainMetric("faithfulness", "faithfulness", ("legacy:Faithfulness",),
                  'LABELS (one 0/1 verdict per response claim; "" = zero claims)'),
    ExplainMetric("id-precision", "id_context_precision", ("legacy:IDBasedContextPrecision",),
                  "--retrieved JSON-LIST --reference JSON-LIST (e.g. '[1, \"1\"]')"),
    ExplainMetric("id-recall", "id_context_recall", ("legacy:IDBasedContextRecall",),
                  "--retrieved JSON-LIST --reference JSON-LIST (e.g. '[1, \"1\"]')"),
    ExplainMetric("judge-audit", "judge_audit", (),
                  "--human JSON-OBJECT --judge JSON-OBJECT (claim ID -> 0/1)"),
)
EXPLAIN_NAMES: tuple[str, ...] = tuple(m.name for m in EXPLAIN_METRICS)
_BY_NAME = {m.name: m for m in EXPLAIN_METRICS}


def explain_metric(name: str) -> ExplainMetric:
    """The explain metric called ``name`` (``_`` accepted for ``-``); the valid names otherwise."""
    found = _BY_NAME.get(name.strip().lower().replace("_", "-"))
    if found is None:
        raise HarnessInputError(f"unknown metric {name!r}; valid metrics: {', '.join(EXPLAIN_NAMES)}",
                                field="METRIC", value=name)
    return found


# --------------------------------------------------------------------------- parsing inputs

_INTEGER = re.compile(r"^[+-]?\d+$")


def parse_labels(text: str, field_name: str = "LABELS") -> list[int | bool]:
    """``"1,0,1"`` -> ``[1, 0, 1]``; ``""`` -> ``[]``; ``true``/``false`` -> booleans.

    Raises HarnessInputError naming the item position (1-based), the character column and the
    token when an item is not an integer or boolean.
    """
    if text.strip() == "":
        return []
    labels: list[int | bool] = []
    column = 1
    for position, token in enumerate(text.split(","), start=1):
        stripped = token.strip()
        lowered = stripped.lower()
        if _INTEGER.match(stripped):
            labels.append(int(stripped))
        elif lowered in ("true", "false"):
            labels.append(lowered == "true")
        else:
            where = column + (len(token) - len(token.lstrip()) if stripped else 0)
            what = "an empty item" if stripped == "" else f"token {stripped!r}"
            raise HarnessInputError(
                f"{field_name} {text!r}: cannot parse {what} at item {position} (column {where}): "
                f"expected comma-separated labels 0 or 1 (or true/false), e.g. 1,0,1\n"
                f"  {text}\n  {' ' * (where - 1)}^",
                field=f"{field_name}[{position - 1}]", value=stripped)
        column += len(token) + 1
    return labels


def _parse_json(text: str, option: str, example: str) -> Any:
    try:
        return json.loads(text, parse_constant=lambda c: _reject(option, text, c))
    except json.JSONDecodeError as err:
        raise HarnessInputError(
            f"{option} {text!r}: not valid JSON: {err.msg} at column {err.colno} "
            f"({'at ' + repr(text[err.pos]) if err.pos < len(text) else 'at the end of the input'})"
            f"\n  {text}\n  {' ' * err.pos}^\n"
            f"  expected e.g. {option} '{example}'",
            field=option, value=text) from None


def _reject(option: str, text: str, constant: str) -> Any:
    raise HarnessInputError(f"{option} {text!r}: {constant} is not a valid ID or label", field=option,
                            value=constant)


def parse_id_list(text: str, option: str) -> list[str | int | float]:
    """A JSON array of IDs: ``'[1, "1", "d2"]'`` (the integer 1 and the string "1" stay distinct)."""
    example = '[1, "1", "d2"]'
    value = _parse_json(text, option, example)
    if not isinstance(value, list):
        raise HarnessInputError(
            f"{option} {text!r}: expected a JSON array of IDs, e.g. {option} '{example}', "
            f"got a JSON {type(value).__name__}", field=option, value=value)
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise HarnessInputError(
                f"{option} {text!r}: item {index} is {json.dumps(item)}; an ID must be a JSON string or number",
                field=f"{option}[{index}]", value=item)
    return value


def parse_label_map(text: str, option: str) -> dict[str, int | float | bool]:
    """A JSON object mapping claim IDs to labels: ``'{"c1": 1, "c2": 0}'``."""
    example = '{"c1": 1, "c2": 0}'
    value = _parse_json(text, option, example)
    if not isinstance(value, dict):
        raise HarnessInputError(
            f"{option} {text!r}: expected a JSON object mapping claim IDs to 0/1, e.g. {option} '{example}'",
            field=option, value=value)
    for key, label in value.items():
        if not isinstance(label, (bool, int, float)):
            raise HarnessInputError(
                f"{option} {text!r}: claim {key!r} has label {json.dumps(label)}; a label must be a number "
                "or boolean (0 or 1)", field=f"{option}.{key}", value=label)
    return value


# --------------------------------------------------------------------------- the synthetic case

def synthetic_case(spec: ExplainMetric, *, labels: Sequence[object] = (), corpus_relevant: int | None = None,
                   retrieved_ids: Sequence[object] = (), reference_ids: Sequence[object] = (),
                   human: dict | None = None, judge: dict | None = None) -> Case:
    """One case carrying only the inputs ``spec`` reads; contexts and claims are generated and
    distinct so the scripted judge can tell every prompt apart by content."""
    raw: dict[str, Any] = {
        "id": CASE_ID, "category": "edge",
        "description": f"ragas-compat explain {spec.name}",
        "user_input": "Synthetic question generated by ragas-compat explain",
        "reference": "Synthetic reference answer generated by ragas-compat explain",
        "response": "Synthetic response generated by ragas-compat explain",
        "retrieved_contexts": [],
    }
    if spec.name == "context-precision":
        raw["retrieved_contexts"] = [f"Synthetic retrieved context #{i} (rank {i})"
                                     for i in range(1, len(labels) + 1)]
        raw["verdicts"] = {spec.registry_name: list(labels)}
        if corpus_relevant is not None:
            raw["corpus_relevant_count"] = corpus_relevant
    elif spec.name in ("context-recall", "faithfulness"):
        raw["retrieved_contexts"] = ["Synthetic retrieved context #1", "Synthetic retrieved context #2"]
        key, label_key, who = (("context_recall", "attributed", "reference") if spec.name == "context-recall"
                               else ("faithfulness", "verdict", "response"))
        raw["verdicts"] = {key: [{"statement": f"Synthetic {who} claim #{i}", label_key: v}
                                 for i, v in enumerate(labels, start=1)]}
    elif spec.name in ("id-precision", "id-recall"):
        raw["retrieved_contexts"] = [f"Synthetic retrieved context for ID {json.dumps(x)} (rank {i})"
                                     for i, x in enumerate(retrieved_ids, start=1)]
        raw["retrieved_context_ids"] = list(retrieved_ids)
        raw["reference_context_ids"] = list(reference_ids)
    elif spec.name == "judge-audit":
        raw["judge_audit"] = {"human": dict(human or {}), "judge": dict(judge or {})}
    suite = parse_suite({"schema_version": 1, "suite": "explain", "cases": [raw]}, source="explain")
    return suite.cases[0]


# --------------------------------------------------------------------------- the explanation

@dataclass(frozen=True)
class RagasRow:
    """One Ragas class's value for the input, classified against the reference."""

    target: str
    ragas_class: str
    value: RagasValue
    classification: Classification
    received: dict[str, Any]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Quantity:
    """A reference quantity: ``value`` is exact (Fraction / int), a float, or None (undefined)."""

    name: str
    value: Fraction | int | float | None
    note: str = ""


@dataclass(frozen=True)
class Explanation:
    metric: ExplainMetric
    inputs: dict[str, Any]
    reference: ReferenceOutcome
    quantities: tuple[Quantity, ...]
    formulas: tuple[str, ...]
    rows: tuple[RagasRow, ...]
    ragas_version: str | None
    note: str | None = None
    probe_seconds: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _fraction_text(value: Fraction | int) -> str:
    return str(Fraction(value))


def ratio_text(num: int, den: int, undefined: str) -> str:
    """``"2/4 = 1/2"``, ``"2/3"`` (already in lowest terms), or ``"0/0: undefined (...)"``."""
    if den == 0:
        return f"{num}/{den}: undefined ({undefined})"
    reduced = str(Fraction(num, den))
    return f"{num}/{den}" if reduced == f"{num}/{den}" else f"{num}/{den} = {reduced}"


def ragas_value_text(value: RagasValue) -> str:
    """A Ragas value as shown: the exact double's repr, or the error."""
    if isinstance(value, float):
        return repr(value)
    return f"error {value.type}: {value.message}"  # RagasError


def _ap_quantities(reference: ReferenceOutcome, r: int | None) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    labels = list(d.get("labels", ()))
    binary = all(is_binary_label(v) for v in labels)
    used = [int(v) for v in labels] if binary else list(coerce_by_truthiness(labels))
    k = len(used)
    hits, terms_text, numerator = 0, [], Fraction(0)
    for i, v in enumerate(used, start=1):
        hits += v
        if v:
            terms_text.append(f"{hits}/{i}·1")
            numerator += Fraction(hits, i)
    ragas_float = reference.alternatives.get("epsilon", reference.alternatives.get("coercion"))
    exact = numerator / hits if hits else None
    formulas: list[str] = []
    prefix = ""
    if not binary:
        prefix = "(labels coerced by truthiness as Ragas does) "
        formulas.append(f"the reference refuses labels {labels}: {reference.refused}; Ragas counts them as {used}")
    sum_text = " + ".join(terms_text) if terms_text else "0"
    formulas.append(f"{prefix}AP (Ragas) = ({sum_text}) / ({hits} + 1e-10) = {ragas_float!r}")
    if exact is None:
        why = "nothing retrieved" if k == 0 else "no retrieved context is relevant"
        formulas.append(f"{prefix}AP (exact) = {_fraction_text(numerator)} / {hits}: undefined ({why}); "
                        "Ragas's 1e-10 turns 0/0 into 0.0")
    else:
        line = f"{prefix}AP (exact) = {_fraction_text(numerator)} / {hits} = {exact} = {float(exact)!r}"
        if ragas_float is not None and float(ragas_float) != float(exact):
            line += (f"; gap Ragas − exact = {float(ragas_float) - float(exact):.3g}, "
                     f"from the {RAGAS_EPSILON:g} added to the denominator")
        formulas.append(line)
    formulas.append(f"P@{k} = h_K / K = {ratio_text(hits, k, 'K = 0')}")
    if r:
        formulas.append(f"corpus AP = {_fraction_text(numerator)} / R = {_fraction_text(numerator)} / {r} = "
                        f"{numerator / r}")
        formulas.append(f"recall@{k} = h_K / R = {ratio_text(hits, r, 'R = 0')}")
    else:
        formulas.append("corpus AP and recall@K need R (--corpus-relevant): not computed")
    quantities = [
        Quantity("context AP (exact)", exact, "numerator / relevant retrieved"
                 + ("" if binary else " (on coerced labels; the reference refuses the input)")),
        Quantity("context AP (Ragas float, +1e-10)", ragas_float, "numerator / (relevant retrieved + 1e-10)"),
        Quantity("numerator Σ v_i·h_i/i", numerator),
        Quantity("retrieved K", k),
        Quantity("relevant retrieved h_K", hits),
        Quantity(f"P@{k}", Fraction(hits, k) if k else None, "h_K / K"),
        Quantity("corpus relevant R", r, "" if r is not None else "not given (--corpus-relevant)"),
        Quantity("corpus AP", numerator / r if r else None, "numerator / R (trec_eval AP)"),
        Quantity(f"recall@{k}", Fraction(hits, r) if r else None, "h_K / R"),
    ]
    return quantities, formulas


def _claim_quantities(reference: ReferenceOutcome, symbol: str, claims_word: str) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    labels = list(d.get("labels", ()))
    if reference.refused is not None:
        coerced = list(d.get("coerced_labels", ()))
        value = reference.alternatives.get("coercion")
        formulas = [f"the reference refuses labels {labels}: {reference.refused}",
                    f"Ragas coerces them by truthiness to {coerced}: {symbol} = "
                    f"{ratio_text(sum(coerced), len(coerced), 'zero_claims')}"]
        return [Quantity(f"{symbol} (coerced, Ragas semantics)", value),
                Quantity(f"{claims_word} claims", len(labels))], formulas
    supported, total = int(d["supported"]), int(d["total"])
    if total:
        formula = (f"{symbol} = supported {claims_word} claims / {claims_word} claims = "
                   f"{ratio_text(supported, total, 'zero_claims')}")
    else:
        formula = (f"{symbol} = {supported}/{total}: undefined (zero_claims): no {claims_word} claim to support; "
                   "never 0 and never 1")
    return [Quantity(f"{symbol} (exact)", reference.value),
            Quantity(f"supported {claims_word} claims", supported),
            Quantity(f"{claims_word} claims", total)], [formula]


def _id_quantities(reference: ReferenceOutcome, precision: bool) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    if reference.refused is not None:
        return [], [f"the reference refuses the IDs: {reference.refused}"]
    ret_n, ref_n = d["retrieved_count"], d["reference_count"]
    word = "precision" if precision else "recall"
    hits = d["raw_precision_hits"] if precision else d["raw_recall_hits"]
    den = ret_n if precision else ref_n
    unique_den = d["retrieved_unique"] if precision else d["reference_unique"]
    raw_value = d["raw_precision"] if precision else d["raw_recall"]
    ragas_value = d["ragas_precision"] if precision else d["ragas_recall"]
    side = "retrieved" if precision else "reference"
    formulas = [
        f"{word} (reference, lists as given, IDs compared by type and value) = {side} entries found on the other side"
        f" / {side} entries = {ratio_text(hits, den, 'empty_id_set')}",
        f"{word} (Ragas semantics: str() + set) = |S_ret ∩ S_ref| / |S_{side[:3]}| = "
        f"{ratio_text(d['ragas_hits'], unique_den, 'Ragas returns NaN')}",
    ]
    for group in d.get("collapsed", ()):
        formulas.append(f"str() + set merged {group['as_string']!r}: retrieved {list(group['retrieved'])}, "
                        f"reference {list(group['reference'])} ({', '.join(group['reasons'])})")
    quantities = [
        Quantity(f"{word} (exact, lists as given)", raw_value),
        Quantity(f"{word} (Ragas semantics, str() + set)", ragas_value),
        Quantity(f"{side} entries", den),
        Quantity(f"{side} entries matched (type and value)", hits),
        Quantity(f"distinct str() {side} IDs", unique_den),
        Quantity("distinct str() IDs in both", d["ragas_hits"]),
    ]
    return quantities, formulas


def _judge_audit_quantities(reference: ReferenceOutcome) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    if reference.refused is not None:
        formulas = [f"the reference refuses the audit: {reference.refused}"]
        if reference.alternatives.get("coercion") is not None:
            formulas.append(f"mean bias on labels coerced by truthiness = {reference.alternatives['coercion']}")
        return [], formulas
    tp, fn, fp, tn, n = d["tp"], d["fn"], d["fp"], d["tn"], d["count"]

    formulas = [
        f"mean bias = (fp − fn) / n = ({fp} − {fn}) / {n} = {ratio_text(fp - fn, n, 'no audited claims')}",
        f"sensitivity = tp / (tp + fn) = {ratio_text(tp, tp + fn, 'the human marked no claim supported')}",
        f"false-positive rate = fp / (fp + tn) = {ratio_text(fp, fp + tn, 'the human marked no claim unsupported')}",
        f"judge support rate (tp + fp) / n = {ratio_text(tp + fp, n, 'n = 0')}; human support rate (tp + fn) / n = "
        f"{ratio_text(tp + fn, n, 'n = 0')}; their difference is the mean bias",
    ]
    quantities = [Quantity("mean bias (fp − fn) / n", d["mean_bias"]),
                  Quantity("sensitivity", d["sensitivity"]),
                  Quantity("false-positive rate", d["false_positive_rate"]),
                  Quantity("human support rate", d["human_support_rate"]),
                  Quantity("judge support rate", d["judge_support_rate"]),
                  Quantity("tp", tp), Quantity("fn", fn), Quantity("fp", fp), Quantity("tn", tn),
                  Quantity("audited claims n", n)]
    return quantities, formulas


def reference_quantities(spec: ExplainMetric, reference: ReferenceOutcome,
                         corpus_relevant: int | None = None) -> tuple[list[Quantity], list[str]]:
    """Every reference quantity worth showing, and the formulas with the input's numbers substituted
    (``corpus_relevant`` is R, used by context-precision only)."""
    if spec.name == "context-precision":
        return _ap_quantities(reference, corpus_relevant)
    if spec.name == "context-recall":
        return _claim_quantities(reference, "CR", "reference")
    if spec.name == "faithfulness":
        return _claim_quantities(reference, "F", "response")
    if spec.name in ("id-precision", "id-recall"):
        return _id_quantities(reference, precision=spec.name == "id-precision")
    return _judge_audit_quantities(reference)


def _check_corpus_relevant(spec: ExplainMetric, labels: Sequence[object], corpus_relevant: int | None) -> None:
    if corpus_relevant is None:
        return
    if spec.name != "context-precision":
        raise HarnessInputError(f"--corpus-relevant applies only to context-precision, not {spec.name}",
                                field="--corpus-relevant", value=corpus_relevant)
    hits = sum(coerce_by_truthiness(labels))
    if corpus_relevant < hits:
        raise HarnessInputError(
            f"--corpus-relevant {corpus_relevant}: R counts every relevant item in the corpus, so it cannot be "
            f"smaller than the {hits} relevant contexts among the labels", field="--corpus-relevant",
            value=corpus_relevant)


def explain(metric_name: str, *, labels: str | None = None, corpus_relevant: int | None = None,
            retrieved: str | None = None, reference: str | None = None, human: str | None = None,
            judge: str | None = None, python: str = sys.executable, timeout: float = 300.0) -> Explanation:
    """Parse the command-line inputs, run Ragas (probe) and the reference, and explain the result.

    Raises HarnessInputError for bad input (CLI exit 2) and RagasUnavailable when the probe
    cannot run Ragas (CLI exit 3).
    """
    spec = explain_metric(metric_name)
    inputs: dict[str, Any] = {}
    parsed_labels: list[int | bool] = []
    if spec.name in ("context-precision", "context-recall", "faithfulness"):
        if labels is None:
            raise HarnessInputError(f"{spec.name} needs {spec.inputs}", field="LABELS")
        _reject_options(spec, retrieved=retrieved, reference=reference, human=human, judge=judge)
        parsed_labels = parse_labels(labels)
        inputs["labels"] = parsed_labels
        _check_corpus_relevant(spec, parsed_labels, corpus_relevant)
        if corpus_relevant is not None:
            inputs["corpus_relevant_count"] = corpus_relevant
        case = synthetic_case(spec, labels=parsed_labels, corpus_relevant=corpus_relevant)
    elif spec.name in ("id-precision", "id-recall"):
        _reject_options(spec, labels=labels, human=human, judge=judge)
        _check_corpus_relevant(spec, (), corpus_relevant)
        if retrieved is None or reference is None:
            raise HarnessInputError(f"{spec.name} needs {spec.inputs}", field="--retrieved/--reference")
        inputs["retrieved_context_ids"] = parse_id_list(retrieved, "--retrieved")
        inputs["reference_context_ids"] = parse_id_list(reference, "--reference")
        case = synthetic_case(spec, retrieved_ids=inputs["retrieved_context_ids"],
                              reference_ids=inputs["reference_context_ids"])
    else:
        _reject_options(spec, labels=labels, retrieved=retrieved, reference=reference)
        _check_corpus_relevant(spec, (), corpus_relevant)
        if human is None or judge is None:
            raise HarnessInputError(f"{spec.name} needs {spec.inputs}", field="--human/--judge")
        inputs["human"] = parse_label_map(human, "--human")
        inputs["judge"] = parse_label_map(judge, "--judge")
        case = synthetic_case(spec, human=inputs["human"], judge=inputs["judge"])

    registry_spec = registry_metric(spec.registry_name)
    outcome = registry_spec.outcome(case)
    quantities, formulas = reference_quantities(spec, outcome, corpus_relevant)
    if not spec.targets:
        return Explanation(spec, inputs, outcome, tuple(quantities), tuple(formulas), (), None,
                           note="judge-audit has no Ragas counterpart: the reference only, nothing to compare")

    from harness.runner import run_probe  # the subprocess runner; Ragas never loads here

    probe = run_probe([case.raw], python=python, targets=list(spec.targets), timeout=timeout)
    if not probe.ok:
        raise RagasUnavailable(probe.error or "the Ragas probe failed")
    suite = parse_suite({"schema_version": 1, "suite": "explain", "cases": [case.raw]}, source="explain")
    audit = build_audit(suite, probe.output, Expectations("explain", ()), {})
    ordered = sorted(audit.rows, key=lambda row: spec.targets.index(row.target))
    rows = tuple(RagasRow(row.target, row.ragas_class, row.ragas_value, row.classification, row.received,
                          row.warnings) for row in ordered)
    reference_used = audit.rows[0].reference if audit.rows else outcome
    return Explanation(spec, inputs, reference_used, tuple(quantities), tuple(formulas), rows,
                       probe.output.get("ragas", {}).get("version"), probe_seconds=probe.seconds)


def _reject_options(spec: ExplainMetric, **given: str | None) -> None:
    extra = [name for name, value in given.items() if value is not None]
    if extra:
        shown = ", ".join("LABELS" if n == "labels" else f"--{n}" for n in extra)
        raise HarnessInputError(f"{spec.name} does not take {shown}; it takes {spec.inputs}",
                                field=extra[0], value=given[extra[0]])


# --------------------------------------------------------------------------- JSON

def _encode_quantity_value(value: Fraction | int | float | None) -> dict[str, Any]:
    if value is None:
        return {"exact": None, "float": None}
    if isinstance(value, float):
        return {"exact": None, "float": encode_float(value)}
    return {"exact": encode_fraction(Fraction(value)), "float": encode_float(float(value))}


def explanation_to_json(explanation: Explanation) -> dict[str, Any]:
    """The explanation in the report's JSON encoding (NaN as "NaN", undefined as null, exact
    rationals as "5/6" strings next to their float)."""
    ref = explanation.reference
    return {
        "explain_format": EXPLAIN_FORMAT,
        "metric": explanation.metric.name,
        "registry_metric": explanation.metric.registry_name,
        "inputs": encode_detail(explanation.inputs),
        "ragas_version": explanation.ragas_version,
        "note": explanation.note,
        "rows": [{
            "target": row.target,
            "ragas_class": row.ragas_class,
            "ragas_value": encode_ragas_value(row.value),
            "classification": row.classification.name,
            "explanation": row.classification.explanation,
            "received": row.received,
            "warnings": list(row.warnings),
        } for row in explanation.rows],
        "reference": {
            "value": encode_fraction(ref.value),
            "value_float": None if ref.value is None else encode_float(float(ref.value)),
            "undefined_reason": ref.undefined_reason,
            "refused": ref.refused,
            "denominator": ref.denominator,
            "alternatives": encode_detail(ref.alternatives),
            "details": encode_detail(ref.details),
        },
        "quantities": [{"name": q.name, **_encode_quantity_value(q.value), "note": q.note or None}
                       for q in explanation.quantities],
        "formulas": list(explanation.formulas),
    }

