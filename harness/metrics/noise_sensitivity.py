"""Noise sensitivity: the share of the response's claims that are wrong and came from the retrieval.

The judge decomposes the reference into statements G and the response into statements A, checks
every statement against every retrieved context, and every response statement against the
reference. A context is *relevant* when it supports at least one reference statement (R = those
contexts). With ``correct(a)`` = the reference supports a, the documented definition (Ragas docs,
"Noise Sensitivity": incorrect claims / all claims of the response, attributed to relevant or
irrelevant contexts) is, in exact ``Fraction`` arithmetic,

- relevant   NS_rel = |{a in A : not correct(a), some context in R supports a}| / |A|
- irrelevant NS_irr = |{a in A : not correct(a), no context in R supports a, some context outside R
  supports a}| / |A|

(an incorrect claim supported by both kinds of context is attributed to the relevant ones, so the
two add up to at most the incorrect share). Denominator: response statements |A|; undefined (None,
reason ``zero_claims``) when |A| = 0. Lower is better.

Case format: ``verdicts.noise_sensitivity`` is a list of statements ``{"statement", "from":
"reference", "contexts": [0/1 per retrieved context]}`` and ``{"statement", "from": "response",
"contexts": [...], "verdict": 0/1}`` (``contexts[j]``: context j supports the statement; ``verdict``:
the reference supports it). Labels must be 0/1 (booleans allowed); the reference refuses others and
gives Ragas's truthiness-coerced value as alternative ``coercion``.

Ragas 0.4.3 (``NoiseSensitivity``, both APIs, ``mode="relevant"`` by default) computes the same with
numpy boolean matrices and ``np.mean`` (bit-equal to the exact value as a float), except:

- zero reference statements: ``np.max`` over a zero-size matrix raises ``ValueError`` (the reference:
  no context is relevant, the value is defined);
- zero response statements: ``np.mean`` of an empty array, NaN (``undefined_nan``);
- no retrieved context (or an empty input): ``ValueError`` before the judge is asked.

Named variant ``verdicts_returned``: Ragas pairs the NLI verdicts by position and takes ``np.mean`` over
the verdicts returned, not over the response statements. When a per-call script
(``judge_calls.noise_sensitivity.noise_nli``, plain entries answered in Ragas's call order: for each
retrieved context the reference statements then the response statements, then the response statements
against the reference) returns verdicts for another number of response statements than the response
has, the same number in every call about the response statements, the variant is Ragas's mean over
those positions. Replies of another shape name no variant: ``when``/``repeat`` entries, unequal counts
(numpy does not broadcast them), no verdict returned (numpy raises), no reference statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.claim_coverage import reply_verdicts
from ragas_compat.metrics.factual_correctness import VERDICTS_RETURNED
from ragas_compat.metrics.labels import is_binary_label, ragas_int
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import (
    ExplainAdapter,
    ExplainInput,
    FuzzDraw,
    MetricSpec,
    Quantity,
    RagasTargets,
    Verdicts,
)

KEY = "noise_sensitivity"
# metric name -> (mode, the configuration of the classes: constructor options, named in the target)
MODES: dict[str, tuple[str, tuple[tuple[str, object], ...]]] = {
    "noise_sensitivity_relevant": ("relevant", ()),
    "noise_sensitivity_irrelevant": ("irrelevant", (("mode", "irrelevant"),))}


def _statements(items: Sequence[Any], n_contexts: int, field: str) -> tuple[list[dict], list[dict]]:
    if not isinstance(items, (list, tuple)):
        raise HarnessInputError(f"{field}: expected a list of statements", field=field, value=items)
    reference, response = [], []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or item.get("from") not in ("reference", "response"):
            raise HarnessInputError(f"{field}[{i}]: expected a statement with 'from' reference|response",
                                    field=f"{field}[{i}]", value=item)
        contexts = item.get("contexts")
        if not isinstance(contexts, (list, tuple)) or len(contexts) != n_contexts:
            raise HarnessInputError(
                f"{field}[{i}].contexts: expected one label per retrieved context ({n_contexts}), got {contexts!r}",
                field=f"{field}[{i}].contexts", value=contexts)
        if item["from"] == "response" and "verdict" not in item:
            raise HarnessInputError(f"{field}[{i}]: a response statement needs 'verdict'",
                                    field=f"{field}[{i}]", value=item)
        (reference if item["from"] == "reference" else response).append(item)
    return reference, response


def _labels(statements: Sequence[Mapping[str, Any]]) -> list[object]:
    out: list[object] = []
    for s in statements:
        out.extend(s["contexts"])
        if "verdict" in s:
            out.append(s["verdict"])
    return out


def noise_counts(reference: Sequence[Mapping[str, Any]], response: Sequence[Mapping[str, Any]],
                 truth: Any = bool) -> tuple[int, int, int, tuple[int, ...]]:
    """(incorrect claims from relevant contexts, from irrelevant contexts only, |A|, relevant context
    indices); ``truth`` maps a label to its truth value (``bool`` for 0/1 labels)."""
    n = len(reference[0]["contexts"]) if reference else (len(response[0]["contexts"]) if response else 0)
    relevant = tuple(j for j in range(n) if any(truth(g["contexts"][j]) for g in reference))
    from_relevant = from_irrelevant = 0
    for a in response:
        if truth(a["verdict"]):
            continue
        supported = [j for j in range(n) if truth(a["contexts"][j])]
        if any(j in relevant for j in supported):
            from_relevant += 1
        elif supported:
            from_irrelevant += 1
    return from_relevant, from_irrelevant, len(response), relevant


def _ragas_truth(value: object) -> bool:
    parsed = ragas_int(value)
    return bool(parsed)


def noise_outcome(metric: str, mode: str, case: Case, field: str = f"verdicts.{KEY}") -> ReferenceOutcome:
    reference, response = _statements(case.verdicts[KEY], len(case.retrieved_contexts), field)
    denominator = "response statements |A|"
    labels = _labels(reference) + _labels(response)
    details: dict[str, object] = {"mode": mode, "reference_statements": len(reference),
                                  "response_statements": len(response)}
    bad = [v for v in labels if not is_binary_label(v)]
    if bad:
        alternatives: dict[str, float | Fraction | None] = {}
        if all(ragas_int(v) is not None for v in labels) and reference and response:
            rel, irr, total, _ = noise_counts(reference, response, _ragas_truth)
            alternatives["coercion"] = Fraction(rel if mode == "relevant" else irr, total)
        return ReferenceOutcome(metric, None, None,
                                f"non-binary label {bad[0]!r} in {field}: labels must be 0 or 1 (booleans allowed)",
                                alternatives, details, denominator)
    rel, irr, total, relevant = noise_counts(reference, response)
    details.update(incorrect_from_relevant=rel, incorrect_from_irrelevant_only=irr, relevant_contexts=relevant,
                   incorrect=sum(1 for a in response if not a["verdict"]))
    numerator = rel if mode == "relevant" else irr
    details["numerator"] = numerator
    value = Fraction(numerator, total) if total else None
    alternatives = {}
    returned = verdicts_returned_variant(mode, case, reference, response) if reference and response else None
    if returned is not None:
        alternatives["variant:" + VERDICTS_RETURNED] = returned
        details["variants"] = {VERDICTS_RETURNED: VERDICTS_RETURNED_TEXT}
    return ReferenceOutcome(metric, value, None if total else "zero_claims", None, alternatives, details,
                            denominator)


VERDICTS_RETURNED_TEXT = ("the judge's NLI replies returned verdicts for fewer (or more) response statements than "
                          "the response has; Ragas pairs verdicts by position and averages over the verdicts returned")


def verdicts_returned_variant(mode: str, case: Case, reference: Sequence[Mapping[str, Any]],
                              response: Sequence[Mapping[str, Any]]) -> Fraction | None:
    """Ragas's value over the verdicts the scripted NLI replies return (module docstring), or None."""
    calls = case.judge_calls.get(KEY, {}).get("noise_nli", ())
    if not calls or any(isinstance(entry, dict) for entry in calls):
        return None
    n = len(case.retrieved_contexts)
    frozen: list[list[object]] = []
    for j in range(n):
        frozen += [[g["contexts"][j] for g in reference], [a["contexts"][j] for a in response]]
    frozen.append([a["verdict"] for a in response])
    replies = [reply_verdicts(entry) for entry in calls[:len(frozen)]]
    if any(r is None for r in replies):
        return None
    lists = [bool_list(replies[i] if i < len(replies) else frozen[i]) for i in range(len(frozen))]
    gt, ans, to_reference = lists[0:-1:2], lists[1:-1:2], lists[-1]
    k = len(to_reference)
    if k in (0, len(response)) or any(len(a) != k for a in ans) or len({len(g) for g in gt}) != 1 or not gt[0]:
        return None  # no difference, or a shape numpy refuses (k = 0: np.max over a zero-size array raises)
    relevant = [any(g) for g in gt]  # np.max over the reference statements, per context
    relevant_faithful = [any(relevant[j] and ans[j][i] for j in range(n)) for i in range(k)]
    if mode == "relevant":
        hits = [relevant_faithful[i] and not to_reference[i] for i in range(k)]
    else:
        hits = [not relevant_faithful[i] and any(not relevant[j] and ans[j][i] for j in range(n))
                and not to_reference[i] for i in range(k)]
    return Fraction(sum(hits), k)


def bool_list(verdicts: Sequence[object]) -> list[bool]:
    """Ragas's reading of verdicts: ``1 if verdict else 0``, then ``astype(bool)``."""
    return [bool(v) for v in verdicts]


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    texts = draw.retrieved_contexts

    def support() -> list[int]:
        # one label per distinct context text: the judge is asked once per (text, statements)
        by_text: dict[str, int] = {}
        return [by_text.setdefault(text, int(rng.random() < 0.4)) for text in texts]

    items: list[dict[str, Any]] = []
    for j in range(rng.choice((0, 1, 1, 2, 3))):
        items.append({"statement": f"fuzz reference statement {j}", "from": "reference", "contexts": support()})
    for j in range(rng.choice((0, 1, 2, 3, 5))):
        items.append({"statement": f"fuzz response statement {j}", "from": "response", "contexts": support(),
                      "verdict": rng.randint(0, 1)})
    if items and texts and rng.random() < 0.05:
        items[-1]["verdict" if items[-1]["from"] == "response" else "statement"] = (
            2 if items[-1]["from"] == "response" else items[-1]["statement"])
    return {"verdicts": {KEY: items}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    """LABELS: one per response statement, its ``verdict`` (supported by the reference). Context 1
    supports the reference statement and every response statement; context 2 supports nothing."""
    items: list[dict[str, Any]] = [{"statement": "Synthetic reference statement", "from": "reference",
                                    "contexts": [1, 0]}]
    items += [{"statement": f"Synthetic response statement #{i}", "from": "response", "contexts": [1, 0],
               "verdict": v} for i, v in enumerate(given.labels, start=1)]
    return {"retrieved_contexts": ["Synthetic retrieved context #1", "Synthetic retrieved context #2"],
            "verdicts": {KEY: items}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    if reference.refused is not None:
        return [Quantity("value (coerced)", reference.alternatives.get("coercion"))], [str(reference.refused)]
    total = int(d["response_statements"])  # type: ignore[call-overload]
    numerator = int(d["numerator"])  # type: ignore[call-overload]
    formula = (f"NS_{d['mode']} = incorrect response statements supported by "
               f"{'relevant' if d['mode'] == 'relevant' else 'only irrelevant'} contexts / response statements = "
               + (f"{numerator}/{total}" if total else "0/0: undefined (zero_claims)"))
    return ([Quantity("NS (exact)", reference.number), Quantity("numerator", numerator),
             Quantity("response statements", total),
             Quantity("relevant contexts", len(d["relevant_contexts"]))],  # type: ignore[arg-type]
            [formula])


def _spec(name: str, mode: str, options: tuple[tuple[str, object], ...]) -> MetricSpec:
    ragas = RagasTargets(("NoiseSensitivity",), ("NoiseSensitivity",), "ragas.metrics._noise_sensitivity", options,
                         judge="noise_sensitivity")
    return MetricSpec(
        name=name,
        reference_on=f"verdicts.{KEY} (statements with per-context support and the reference's verdict)",
        ragas=ragas,
        fields_read=("user_input", "response", "reference", "retrieved_contexts"),
        denominator="response statements |A|",
        undefined_policy=("None ('zero_claims') when the response yields no statement; Ragas returns NaN "
                          "(np.mean of nothing). Zero reference statements: defined here (no relevant context); "
                          "Ragas raises ValueError (np.max of a zero-size array)."),
        compute=lambda case, _n=name, _m=mode: noise_outcome(_n, _m, case),
        requires=(f"verdicts.{KEY}",),
        verdicts=Verdicts(KEY, "claims", "verdict"),
        as_given=lambda labels: sum(labels) / len(labels) if labels else float("nan"),
        fuzz_inputs=_fuzz,
        explain=ExplainAdapter(
            command=name.replace("_", "-"), takes="labels",
            inputs_help="LABELS (one 0/1 per response statement: supported by the reference)",
            targets=ragas.ids()[:1], case_inputs=_explain_inputs, quantities=_quantities))


SPECS: tuple[MetricSpec, ...] = tuple(_spec(name, mode, options) for name, (mode, options) in MODES.items())
