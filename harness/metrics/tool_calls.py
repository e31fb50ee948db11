"""Tool calls of a multi-turn case against its reference tool calls: ToolCallAccuracy and ToolCallF1.

Inputs (a multi-turn case): the predicted calls P are the tool calls of the conversation's ai messages in
order (a message's parallel calls in their order), the reference calls R are ``reference_tool_calls``.
A call is a name and its arguments (JSON values). The reference compares argument values as JSON values:
same type and value (an integer and a float of equal value are one JSON number; a boolean is not a
number; objects compare key by key whatever their order; lists element by element).

``tool_call_accuracy`` (strict order, Ragas's default ``strict_order=True``):
    1 when P and R are both empty; 0 when exactly one is empty;
    0 unless the name sequences of P and R are equal (same names, same order, same length: a missing or
    an extra call, or a wrong order, gives 0);
    else mean over i of arg(P_i, R_i), arg(p, r) = |{k in r: k in p and p[k] = r[k]}| / |r| (1 when both
    have no argument, 0 when only r has none; an extra predicted argument costs nothing).
``tool_call_accuracy_flexible`` (``strict_order=False``): the same with the name multisets equal instead of
    the sequences, each reference call paired with a predicted call of its name so that the total
    argument score is the largest possible (an optimal assignment, Kuhn-Munkres, exact).
``tool_call_f1``: calls as a multiset; TP = calls found on both sides (each matched once), FP = |P| - TP,
    FN = |R| - TP; F1 = 2TP / (2TP + FP + FN); undefined when both are empty (0/0).

Ragas 0.4.3's known semantics, recomputed exactly (alternatives):

- ToolCallAccuracy compares an argument by ``str(pred) == str(ref)`` (``ExactMatch`` on the str() of each
  value; collections: ``exact_match_args``): ``1`` and ``"1"`` match, ``1`` and ``1.0`` do not, two objects
  with their keys in another order do not (``variant:str_arguments``). With ``strict_order=False`` it sorts
  both lists by (name, argument name, str(value), ...) and pairs them in that order, which is not always
  the best pairing (``variant:sorted_pairing``). Its coverage penalty for a length mismatch is never
  reached: unequal lengths make the name sequences differ, so the score is 0 (ragas#1894, #2300).
- ToolCallF1 puts the calls into sets (a call made twice counts once: ``dedup``), compares them by
  Python's hash equality (``True == 1``: ``variant:hash_equality``), returns 0.0 for no call on either side
  (``empty_as_zero``) and rounds to 4 decimals (``round(f1, 4)``: ``rounding``).
O(|P| |R|) for the strict metrics and F1, O(n^3) per tool name for the flexible pairing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case, ToolCall
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
)

Equal = Callable[[Any, Any], bool]

# F1's rounding: round(f1, 4) moves the value by at most half a unit of the 4th decimal (and a hair for
# the float evaluation before it)
ROUNDING_BOUND = 0.00005 + 1e-9


# --------------------------------------------------------------------------- argument comparison

def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: booleans only equal booleans, numbers compare by value (1 = 1.0), strings,
    null, lists element by element, objects key by key (order ignored)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (isinstance(a, Mapping) and isinstance(b, Mapping) and a.keys() == b.keys()
                and all(json_equal(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b, strict=True)))
    return type(a) is type(b) and a == b


def str_equal(a: Any, b: Any) -> bool:
    """Ragas ToolCallAccuracy's comparison: ``str(pred) == str(ref)`` (JSON objects are Python dicts,
    whose str() keeps the key order)."""
    return str(_python(a)) == str(_python(b))


def _python(value: Any) -> Any:
    """A JSON value as Ragas holds it (a read-only mapping becomes the dict it was)."""
    if isinstance(value, Mapping):
        return {k: _python(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_python(v) for v in value]
    return value


def _hashable(value: Any) -> Any:
    """Ragas ToolCallF1's ``make_hashable``: objects as frozensets of pairs, lists as tuples."""
    if isinstance(value, Mapping):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def arg_score(pred: Mapping[str, Any], ref: Mapping[str, Any], equal: Equal) -> Fraction:
    """The share of the reference arguments the predicted call has with an equal value (Ragas's
    ``_get_arg_score``): 1 with no argument on either side, 0 when only the reference has none."""
    if not ref and not pred:
        return Fraction(1)
    if not ref:
        return Fraction(0)
    return Fraction(sum(1 for k in ref if k in pred and equal(pred[k], ref[k])), len(ref))


# --------------------------------------------------------------------------- ToolCallAccuracy

def _optimal_total(weights: list[list[Fraction]]) -> Fraction:
    """The largest total weight of a perfect matching of a square matrix (Kuhn-Munkres on the costs
    1 - w, exact)."""
    n = len(weights)
    if n == 0:
        return Fraction(0)
    cost = [[1 - w for w in row] for row in weights]
    u, v = [Fraction(0)] * (n + 1), [Fraction(0)] * (n + 1)
    match, way = [0] * (n + 1), [0] * (n + 1)
    for i in range(1, n + 1):
        match[0], j0 = i, 0
        minv: list[Fraction | None] = [None] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = match[j0], None, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if minv[j] is None or cur < minv[j]:  # type: ignore[operator]
                        minv[j], way[j] = cur, j0
                    if delta is None or minv[j] < delta:  # type: ignore[operator]
                        delta, j1 = minv[j], j
            assert delta is not None
            for j in range(n + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta  # type: ignore[operator]
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    return sum((weights[match[j] - 1][j - 1] for j in range(1, n + 1)), Fraction(0))


def _ragas_sort_key(call: ToolCall) -> tuple[str, ...]:
    """Ragas's ``sorted_key_for_tool_call``: the name, then each argument name (sorted) and str(value)."""
    key = [call.name]
    for name in sorted(call.args):
        key += [name, str(_python(call.args[name]))]
    return tuple(key)


def accuracy(pred: Sequence[ToolCall], ref: Sequence[ToolCall], equal: Equal, *, strict: bool,
             pairing: str = "aligned") -> tuple[Fraction, dict[str, Any]]:
    """ToolCallAccuracy's value and how it came about. ``pairing``: "aligned" (strict: position i with
    position i), "optimal" (flexible: the best pairing within each name) or "sorted" (flexible, as Ragas:
    both lists sorted by Ragas's key, then position with position)."""
    details: dict[str, Any] = {"predicted_calls": len(pred), "reference_calls": len(ref),
                               "predicted_names": [c.name for c in pred], "reference_names": [c.name for c in ref]}
    if not pred and not ref:
        return Fraction(1), {**details, "case": "no tool call on either side"}
    if not pred or not ref:
        return Fraction(0), {**details, "case": "no predicted call" if not pred else "no reference call"}
    names_p, names_r = [c.name for c in pred], [c.name for c in ref]
    aligned = names_p == names_r if strict else sorted(names_p) == sorted(names_r)
    details["aligned"] = aligned
    if not aligned:
        details["case"] = ("length mismatch" if len(pred) != len(ref)
                           else "names out of order" if sorted(names_p) == sorted(names_r) else "different tools")
        return Fraction(0), details
    if pairing == "optimal":
        total = Fraction(0)
        for name in dict.fromkeys(names_r):
            ps = [c for c in pred if c.name == name]
            rs = [c for c in ref if c.name == name]
            total += _optimal_total([[arg_score(p.args, r.args, equal) for p in ps] for r in rs])
    else:
        if pairing == "sorted":
            pred, ref = sorted(pred, key=_ragas_sort_key), sorted(ref, key=_ragas_sort_key)
        total = sum((arg_score(p.args, r.args, equal) for p, r in zip(pred, ref, strict=True) if p.name == r.name),
                    Fraction(0))
    details["argument_score_total"] = total
    return total / len(ref), details


ACCURACY = "tool_call_accuracy"
ACCURACY_FLEXIBLE = "tool_call_accuracy_flexible"
F1 = "tool_call_f1"
_VARIANTS = {
    "str_arguments": ("Ragas compares each argument as str(pred) == str(ref): 1 and \"1\" match, 1 and 1.0 do "
                      "not, nor two objects with their keys in another order"),
    "sorted_pairing": ("Ragas (strict_order=False) sorts both call lists by (name, argument name, str(value), "
                       "...) and pairs them in that order, not the pairing with the best argument score; "
                       "arguments compared by str()"),
    "hash_equality": ("Ragas puts the calls into sets compared by Python's hash equality (True == 1 == 1.0), "
                      "then rounds F1 to 4 decimals"),
}
_ACCURACY_DENOMINATOR = "reference tool calls (0 unless the tool names line up)"


def _accuracy_outcome(metric: str, case: Case, strict: bool) -> ReferenceOutcome:
    pred, ref = case.predicted_tool_calls, case.reference_tool_calls or ()
    value, details = accuracy(pred, ref, json_equal, strict=strict, pairing="aligned" if strict else "optimal")
    alternatives: dict[str, float | Fraction | None] = {}
    as_str, _ = accuracy(pred, ref, str_equal, strict=strict, pairing="aligned" if strict else "optimal")
    if as_str != value:
        alternatives["variant:str_arguments"] = as_str
    if not strict:
        sorted_value, _ = accuracy(pred, ref, str_equal, strict=False, pairing="sorted")
        if sorted_value != value:
            alternatives["variant:sorted_pairing"] = sorted_value
    details["variants"] = {name: text for name, text in _VARIANTS.items() if f"variant:{name}" in alternatives}
    return ReferenceOutcome(metric, value, None, None, alternatives, details, _ACCURACY_DENOMINATOR)


# --------------------------------------------------------------------------- ToolCallF1

def multiset_counts(pred: Sequence[ToolCall], ref: Sequence[ToolCall]) -> tuple[int, int, int]:
    """(TP, FP, FN) with every call counted as made: each reference call matches at most one predicted
    call of the same name and JSON-equal arguments."""
    unmatched = list(ref)
    tp = 0
    for call in pred:
        for i, other in enumerate(unmatched):
            if call.name == other.name and json_equal(call.args, other.args):
                del unmatched[i]
                tp += 1
                break
    return tp, len(pred) - tp, len(ref) - tp


def set_counts(pred: Sequence[ToolCall], ref: Sequence[ToolCall]) -> tuple[int, int, int]:
    """Ragas's (TP, FP, FN): sets of (name, make_hashable(args)) under Python's equality."""
    actual = {(c.name, _hashable(c.args)) for c in pred}
    expected = {(c.name, _hashable(c.args)) for c in ref}
    return len(actual & expected), len(actual - expected), len(expected - actual)


def ragas_f1_float(tp: int, fp: int, fn: int) -> float:
    """Ragas's float evaluation: p and r as floats (0.0 on an empty denominator), 2pr/(p+r), round(., 4)."""
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return round(f1, 4)


def _f1_outcome(case: Case) -> ReferenceOutcome:
    pred, ref = case.predicted_tool_calls, case.reference_tool_calls or ()
    tp, fp, fn = multiset_counts(pred, ref)
    ragas_counts = set_counts(pred, ref)
    details: dict[str, Any] = {"tp": tp, "fp": fp, "fn": fn, "ragas_set_counts": list(ragas_counts),
                               "predicted_calls": len(pred), "reference_calls": len(ref),
                               "rounding_bound": ROUNDING_BOUND,
                               "ragas_semantics": {"rounding": "Ragas rounds F1 to 4 decimals (round(f1, 4))",
                                                   "dedup": ("Ragas puts the calls into sets: a call made (or "
                                                             "expected) twice counts once")}}
    denominator = "2TP + FP + FN over the calls as made (a repeated call counts every time)"
    if tp + fp + fn == 0:
        return ReferenceOutcome(F1, None, "no_tool_calls", None, {}, details, denominator)
    value = Fraction(2 * tp, 2 * tp + fp + fn)
    alternatives: dict[str, float | Fraction | None] = {"rounding": ragas_f1_float(tp, fp, fn)}
    repeated = (len({(c.name, _hashable(c.args)) for c in pred}) < len(pred)
                or len({(c.name, _hashable(c.args)) for c in ref}) < len(ref))
    ragas_value = ragas_f1_float(*ragas_counts)
    if ragas_counts != (tp, fp, fn):
        if repeated:
            alternatives["dedup"] = ragas_value
        else:
            alternatives["variant:hash_equality"] = ragas_value
            details["variants"] = {"hash_equality": _VARIANTS["hash_equality"]}
    return ReferenceOutcome(F1, value, None, None, alternatives, details, denominator)


# --------------------------------------------------------------------------- fuzz and explain

_NAMES = ("search", "fetch", "book")
_VALUES: tuple[Any, ...] = ("a", "b", 1, "1", 1.0, True, None, [1, 2], {"x": 1, "y": 2}, {"y": 2, "x": 1})


def _random_call(rng: random.Random) -> dict[str, Any]:
    keys = rng.sample(("q", "n", "when"), rng.randint(0, 2))
    return {"name": rng.choice(_NAMES), "args": {k: rng.choice(_VALUES) for k in keys}}


def _perturbed(rng: random.Random, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference: the predicted calls as they are, permuted, with one changed, dropped or added."""
    calls = json.loads(json.dumps(calls))
    shape = rng.choice(("same", "permuted", "argument", "drop", "add", "fresh"))
    if shape == "permuted":
        rng.shuffle(calls)
    elif shape == "argument" and calls:
        call = rng.choice(calls)
        call["args"][rng.choice(("q", "n"))] = rng.choice(_VALUES)
    elif shape == "drop" and calls:
        del calls[rng.randrange(len(calls))]
    elif shape == "add":
        calls.insert(rng.randint(0, len(calls)), _random_call(rng))
    elif shape == "fresh":
        calls = [_random_call(rng) for _ in range(rng.randint(0, 3))]
    return calls


def conversation_of(calls: Sequence[dict[str, Any]], rng: random.Random | None = None) -> list[dict[str, Any]]:
    """A conversation whose ai messages make ``calls`` in order (with ``rng``: some of them in parallel, in
    one message), each followed by one tool message per call, as Ragas's MultiTurnSample wants."""
    messages: list[dict[str, Any]] = [{"type": "human", "content": "Please help"}]
    i = 0
    while i < len(calls):
        size = 1 if rng is None else rng.randint(1, min(3, len(calls) - i))
        messages.append({"type": "ai", "content": "", "tool_calls": [dict(c) for c in calls[i:i + size]]})
        messages += [{"type": "tool", "content": f"result of {c['name']}"} for c in calls[i:i + size]]
        i += size
    messages.append({"type": "ai", "content": "Done"})
    return messages


def _fuzz_inputs(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    predicted = [_random_call(rng) for _ in range(rng.choice((0, 1, 2, 2, 3, 4)))]
    return {"user_input": conversation_of(predicted, rng), "reference_tool_calls": _perturbed(rng, predicted)}


def parse_call_text(text: str) -> dict[str, Any]:
    """``"name"`` or ``"name {json args}"`` (explain's --retrieved / --reference items) as a tool call: the
    name is the text before the first ``{`` (stripped), the arguments the JSON object from there."""
    name, brace, args = str(text).partition("{")
    parsed = json.loads(brace + args) if brace else {}
    if not isinstance(parsed, dict):
        raise ValueError(f"tool call {text!r}: the arguments must be a JSON object")
    return {"name": name.strip(), "args": parsed}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    return {"user_input": conversation_of([parse_call_text(t) for t in given.retrieved]),
            "reference_tool_calls": [parse_call_text(t) for t in given.reference]}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    name = reference.metric
    quantities = [Quantity(f"{name} (exact)", reference.number),
                  Quantity("predicted calls", d.get("predicted_calls")), Quantity("reference calls", d.get("reference_calls"))]
    formulas = []
    if name == F1:
        formulas.append(f"F1 = 2TP / (2TP + FP + FN) with TP {d['tp']}, FP {d['fp']}, FN {d['fn']} (calls as made)")
        formulas.append(f"Ragas: sets, TP/FP/FN {tuple(d['ragas_set_counts'])}, round(f1, 4)")
    else:
        formulas.append(f"{name}: {d.get('case', 'names line up')}; predicted {d.get('predicted_names')}, "
                        f"reference {d.get('reference_names')}")
    for key, value in reference.alternatives.items():
        quantities.append(Quantity(f"Ragas semantics: {key}", value))
    return quantities, formulas


_HELP = "--retrieved JSON-LIST (predicted calls) --reference JSON-LIST (reference calls), items 'name {json args}'"
STRICT_TARGETS = RagasTargets(("ToolCallAccuracy",), ("ToolCallAccuracy",), "ragas.metrics._tool_call_accuracy")
FLEXIBLE_TARGETS = RagasTargets(("ToolCallAccuracy",), ("ToolCallAccuracy",), "ragas.metrics._tool_call_accuracy",
                                options=(("strict_order", False),))
F1_TARGETS = RagasTargets(("ToolCallF1",), ("ToolCallF1",), "ragas.metrics._tool_call_f1")
_FIELDS = ("user_input", "reference_tool_calls")


def _spec(name: str, targets: RagasTargets, compute: Callable[[Case], ReferenceOutcome], denominator: str,
          undefined: str, reference_on: str) -> MetricSpec:
    return MetricSpec(
        name=name, reference_on=reference_on, ragas=targets, fields_read=_FIELDS, denominator=denominator,
        undefined_policy=undefined, compute=compute, requires=("reference_tool_calls",), multi_turn=True,
        fuzz_inputs=_fuzz_inputs,
        explain=ExplainAdapter(command=name.replace("_", "-"), takes="texts", inputs_help=_HELP,
                               targets=targets.ids(), case_inputs=_explain_inputs, quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = (
    _spec(ACCURACY, STRICT_TARGETS, lambda case: _accuracy_outcome(ACCURACY, case, strict=True),
          _ACCURACY_DENOMINATOR, "never undefined: 1 when neither side has a call, 0 when one side has none",
          "the conversation's tool calls vs reference_tool_calls, in order"),
    _spec(ACCURACY_FLEXIBLE, FLEXIBLE_TARGETS, lambda case: _accuracy_outcome(ACCURACY_FLEXIBLE, case, strict=False),
          _ACCURACY_DENOMINATOR, "never undefined: 1 when neither side has a call, 0 when one side has none",
          "the conversation's tool calls vs reference_tool_calls, in any order (best pairing)"),
    _spec(F1, F1_TARGETS, _f1_outcome, "2TP + FP + FN over the calls as made",
          "None ('no_tool_calls') when neither side has a call; Ragas returns 0.0",
          "the conversation's tool calls vs reference_tool_calls, as multisets"),
)
