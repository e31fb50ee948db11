"""Explain one input: what Ragas gives for it, what the reference gives, and why they differ.

``explain("context-precision", labels="1,0,1", corpus_relevant=4)`` builds a one-case suite (a
synthetic Case whose retrieved contexts and claims are generated and distinct, so the scripted
judge can answer every prompt by content), runs it through the real Ragas classes in the probe
subprocess (stubbed LLM), computes the reference through the registry, classifies each Ragas
target with ``ragas_compat.compare.classify.classify`` (via ``ragas_compat.compare.audit.build_audit``) and returns every
reference quantity (exact Fraction and float) with the formulas, numbers substituted.

Command-line input syntax (parsed here, so the errors can name position and token):

- label lists: comma-separated integers or ``true``/``false``, e.g. ``1,0,1``; ``""`` is the
  empty list (zero claims / nothing retrieved). Values other than 0/1 (e.g. ``2``) are accepted
  on purpose: the reference refuses them and Ragas coerces them, which is worth explaining.
- ID lists: a JSON array, e.g. ``'[1, "1", "d2"]'``: ``1`` is the integer ID and ``"1"`` the
  string ID, so the two stay distinguishable. Items are any JSON scalar, as in a case file.
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

from ragas_compat.cases import Case, parse_suite
from ragas_compat.cases.loader import MULTI_TURN_KEYS, relevant_label_count
from ragas_compat.compare.audit import build_audit
from ragas_compat.compare.classify import Diagnosis
from ragas_compat.compare.expectations import Expectations
from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.input_limits import MAX_DEPTH, MAX_LIST_ITEMS, MAX_NUMBER_CHARS, loads_json
from ragas_compat.metrics.names import resolve
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.registry import all_metrics
from ragas_compat.metrics.spec import ExplainAdapter, ExplainInput, MetricSpec, Quantity
from ragas_compat.values import (
    NON_NUMERIC,
    RagasValue,
    encode_detail,
    encode_float,
    encode_fraction,
    encode_non_numeric,
    encode_ragas_value,
)

EXPLAIN_FORMAT = 1
CASE_ID = "explain"


@dataclass(frozen=True)
class ExplainMetric:
    """A metric ``explain`` can explain: a registered metric with an explain adapter, named by its
    registry name (``ragas_compat.metrics.names``)."""

    spec: MetricSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def registry_name(self) -> str:
        return self.spec.name

    @property
    def adapter(self) -> ExplainAdapter:
        assert self.spec.explain is not None
        return self.spec.explain

    @property
    def targets(self) -> tuple[str, ...]:
        """The adapter's targets; every legacy and collections target of the metric when it names none."""
        return tuple(self.adapter.targets or self.spec.ragas_targets)

    @property
    def inputs(self) -> str:
        """The inputs it takes, in words (for help and errors)."""
        return self.adapter.inputs_help


def explain_metrics() -> tuple[ExplainMetric, ...]:
    """Every registered metric with an explain adapter, in registry order."""
    return tuple(ExplainMetric(spec) for spec in all_metrics() if spec.explain is not None)


def explain_names() -> tuple[str, ...]:
    return tuple(m.name for m in explain_metrics())


def explain_metric(name: str) -> ExplainMetric:
    """The explain metric called ``name`` (its registry name, or another spelling that
    ``ragas_compat.metrics.names.resolve`` accepts); HarnessInputError listing the valid names otherwise."""
    candidates = explain_metrics()
    spec, _ = resolve(name, option="METRIC", among=tuple(m.spec for m in candidates))
    return next(m for m in candidates if m.registry_name == spec.name)


# --------------------------------------------------------------------------- parsing inputs

_INTEGER = re.compile(r"^[+-]?\d+$")


def parse_labels(text: str, field_name: str = "LABELS") -> list[int | bool]:
    """``"1,0,1"`` -> ``[1, 0, 1]``; ``""`` -> ``[]``; ``true``/``false`` -> booleans.

    Raises HarnessInputError naming the item position (1-based), the character column and the
    token when an item is not an integer or boolean.
    """
    if text.strip() == "":
        return []
    count = text.count(",") + 1
    if count > MAX_LIST_ITEMS:
        raise HarnessInputError(
            f"{field_name}: {count} labels; at most {MAX_LIST_ITEMS} are explained (the limit of a case's lists)",
            field=field_name, value=count)
    labels: list[int | bool] = []
    column = 1
    for position, token in enumerate(text.split(","), start=1):
        stripped = token.strip()
        lowered = stripped.lower()
        if _INTEGER.match(stripped) and len(stripped) > MAX_NUMBER_CHARS:
            raise HarnessInputError(
                f"{field_name}: item {position} is a number of {len(stripped)} characters; numbers are limited "
                f"to {MAX_NUMBER_CHARS} characters", field=f"{field_name}[{position - 1}]", value=stripped[:12])
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
    """The option's JSON, parsed within ``ragas_compat.input_limits`` (nesting, number length, unicode)
    and holding at most MAX_LIST_ITEMS items."""
    try:
        value = json.loads(text, parse_constant=lambda c: _reject(option, text, c),
                           parse_int=lambda t: _bounded_number(option, t, int),
                           parse_float=lambda t: _bounded_number(option, t, float))
    except RecursionError:
        raise HarnessInputError(f"{option}: JSON nested deeper than {MAX_DEPTH} arrays/objects",
                                field=option) from None
    except json.JSONDecodeError as err:
        raise HarnessInputError(
            f"{option} {text!r}: not valid JSON: {err.msg} at column {err.colno} "
            f"({'at ' + repr(text[err.pos]) if err.pos < len(text) else 'at the end of the input'})"
            f"\n  {text}\n  {' ' * err.pos}^\n"
            f"  expected e.g. {option} '{example}'",
            field=option, value=text) from None
    loads_json(json.dumps(value), option)  # depth and lone surrogates, the same checks as a case file
    if isinstance(value, (list, dict)) and len(value) > MAX_LIST_ITEMS:
        raise HarnessInputError(f"{option}: {len(value)} items; at most {MAX_LIST_ITEMS} are explained "
                                "(the limit of a case's lists)", field=option, value=len(value))
    return value


def _bounded_number(option: str, token: str, convert: Any) -> Any:
    if len(token) > MAX_NUMBER_CHARS:
        raise HarnessInputError(f"{option}: a number of {len(token)} characters; numbers are limited to "
                                f"{MAX_NUMBER_CHARS} characters", field=option, value=token[:12])
    return convert(token)


def _reject(option: str, text: str, constant: str) -> Any:
    raise HarnessInputError(f"{option} {text!r}: {constant} is not a valid ID or label", field=option,
                            value=constant)


def parse_id_list(text: str, option: str) -> list[str | int | float | bool | None]:
    """A JSON array of IDs: ``'[1, "1", "d2"]'`` (the integer 1 and the string "1" stay distinct).
    Any JSON scalar is an ID, as in a case file (``true`` and ``null`` too: the reference refuses them
    and Ragas coerces them, which ``run`` reports and ``explain`` explains alike)."""
    example = '[1, "1", "d2"]'
    value = _parse_json(text, option, example)
    if not isinstance(value, list):
        raise HarnessInputError(
            f"{option} {text!r}: expected a JSON array of IDs, e.g. {option} '{example}', "
            f"got a JSON {type(value).__name__}", field=option, value=value)
    for index, item in enumerate(value):
        if isinstance(item, (list, dict)):
            raise HarnessInputError(
                f"{option} {text!r}: item {index} is {json.dumps(item)}; an ID must be a JSON scalar "
                "(string, number, boolean or null)", field=f"{option}[{index}]", value=item)
    return value


def parse_text_list(text: str, option: str) -> list[str]:
    """A JSON array of context texts: ``'["chunk a", "chunk b"]'``."""
    example = '["chunk a", "chunk b"]'
    value = _parse_json(text, option, example)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise HarnessInputError(f"{option} {text!r}: expected a JSON array of strings, e.g. {option} '{example}'",
                                field=option, value=value)
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

def synthetic_case(spec: ExplainMetric, given: ExplainInput) -> Case:
    """One case carrying only the inputs ``spec`` reads (its adapter's ``case_inputs``)."""
    raw: dict[str, Any] = {
        "id": CASE_ID, "category": "edge",
        "description": f"ragas-compat explain {spec.name}",
        "user_input": "Synthetic question generated by ragas-compat explain",
        "reference": "Synthetic reference answer generated by ragas-compat explain",
        "response": "Synthetic response generated by ragas-compat explain",
        "retrieved_contexts": [],
    }
    raw.update(spec.adapter.case_inputs(given))
    if isinstance(raw["user_input"], list):  # a multi-turn case has none of the single-turn keys
        raw = {key: value for key, value in raw.items() if key in MULTI_TURN_KEYS}
    suite = parse_suite({"schema_version": 1, "suite": "explain", "cases": [raw]}, source="explain")
    return suite.cases[0]


# --------------------------------------------------------------------------- the explanation

@dataclass(frozen=True)
class RagasRow:
    """One Ragas class's value for the input, classified against the reference."""

    target: str
    ragas_class: str
    value: RagasValue
    classification: Diagnosis
    received: dict[str, Any]
    warnings: tuple[str, ...]


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


def ragas_value_text(value: RagasValue) -> str:
    """A Ragas value as shown: the exact double's repr, a label's or a ranking's repr, or the error."""
    if isinstance(value, (float, *NON_NUMERIC)):
        return repr(value)
    return f"error {value.type}: {value.message}"  # RagasError


def reference_quantities(spec: ExplainMetric, reference: ReferenceOutcome,
                         given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    """Every reference quantity worth showing, and the formulas with the input's numbers substituted."""
    return spec.adapter.quantities(reference, given)


def _check_corpus_relevant(spec: ExplainMetric, labels: Sequence[object], corpus_relevant: int | None) -> None:
    if corpus_relevant is None:
        return
    if not spec.adapter.takes_corpus_relevant:
        raise HarnessInputError(f"--corpus-relevant does not apply to {spec.name}",
                                field="--corpus-relevant", value=corpus_relevant)
    hits = relevant_label_count(tuple(labels))  # the case loader's rule: run and explain refuse alike
    if corpus_relevant < hits:
        raise HarnessInputError(
            f"--corpus-relevant {corpus_relevant}: R counts every relevant item in the corpus, so it cannot be "
            f"smaller than the {hits} relevant contexts among the labels (1 or true)", field="--corpus-relevant",
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
    takes = spec.adapter.takes
    if takes == "labels":
        if labels is None:
            raise HarnessInputError(f"{spec.name} needs {spec.inputs}", field="LABELS")
        _reject_options(spec, retrieved=retrieved, reference=reference, human=human, judge=judge)
        parsed_labels = parse_labels(labels)
        inputs["labels"] = parsed_labels
        _check_corpus_relevant(spec, parsed_labels, corpus_relevant)
        if corpus_relevant is not None:
            inputs["corpus_relevant_count"] = corpus_relevant
        given = ExplainInput(labels=tuple(parsed_labels), corpus_relevant=corpus_relevant)
    elif takes in ("ids", "texts"):
        _reject_options(spec, labels=labels, human=human, judge=judge)
        _check_corpus_relevant(spec, (), corpus_relevant)
        if retrieved is None or reference is None:
            raise HarnessInputError(f"{spec.name} needs {spec.inputs}", field="--retrieved/--reference")
        parse = parse_id_list if takes == "ids" else parse_text_list
        fields = (("retrieved_context_ids", "reference_context_ids") if takes == "ids"
                  else ("retrieved_contexts", "reference_contexts"))
        inputs[fields[0]] = parse(retrieved, "--retrieved")
        inputs[fields[1]] = parse(reference, "--reference")
        given = ExplainInput(retrieved=tuple(inputs[fields[0]]), reference=tuple(inputs[fields[1]]))
    else:
        _reject_options(spec, labels=labels, retrieved=retrieved, reference=reference)
        _check_corpus_relevant(spec, (), corpus_relevant)
        if human is None or judge is None:
            raise HarnessInputError(f"{spec.name} needs {spec.inputs}", field="--human/--judge")
        inputs["human"] = parse_label_map(human, "--human")
        inputs["judge"] = parse_label_map(judge, "--judge")
        given = ExplainInput(human=inputs["human"], judge=inputs["judge"])
    case = synthetic_case(spec, given)

    outcome = spec.spec.outcome(case)
    quantities, formulas = reference_quantities(spec, outcome, given)
    if not spec.targets:
        return Explanation(spec, inputs, outcome, tuple(quantities), tuple(formulas), (), None,
                           note=f"{spec.name} has no Ragas counterpart: the reference only, nothing to compare")

    from ragas_compat.runner import run_probe  # the subprocess runner; Ragas never loads here

    probe = run_probe([case.raw], python=python, targets=list(spec.targets), timeout=timeout)
    if not probe.ok:
        raise RagasUnavailable(probe.error or "the Ragas probe failed")
    suite = parse_suite({"schema_version": 1, "suite": "explain", "cases": [case.raw]}, source="explain")
    audit = build_audit(suite, probe.output, Expectations("explain", ()), {}, metrics=[spec.registry_name])
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
            "value": encode_non_numeric(ref.value) if isinstance(ref.value, NON_NUMERIC) else encode_fraction(ref.value),
            "value_float": None if ref.value is None or isinstance(ref.value, NON_NUMERIC)
            else encode_float(float(ref.value)),
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

