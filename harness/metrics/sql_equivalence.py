"""Whether a generated SQL query means what the reference query means: LLMSQLEquivalence (legacy) /
SQLSemanticEquivalence (collections).

Inputs (a single-turn case): ``response`` (the generated SQL), ``reference`` (the reference SQL) and
``reference_contexts`` (the database schema, joined with ``"\\n"``). The judge is asked once (both APIs):
{reference, response, database_schema} -> an explanation of each query and an equivalence verdict. The keys
differ by API: legacy ``{response_query_explaination, reference_query_explaination, equivalence}``,
collections ``{response_explanation, reference_explanation, equivalent}``.

The frozen verdict (``verdicts.sql_equivalence``, one object) holds the judge's two explanations and its
verdict (0/1; the judge's script writes JSON ``true`` / ``false`` for 0, 1, false and true, any other
value as given, for pydantic's bool parsing).

Reference: the verdict, 1 (equivalent) or 0 (exact). Never undefined. A verdict that is not 0, 1, false or
true is refused; pydantic's lenient bool parsing reads "yes", "on", "1", 1.0 ... as true and "no", "off", "0"
... as false (alternative ``coercion``), 2 or "maybe" not at all. What the metric measures is entirely the judge's one answer: the explanations are not
read by either class's score.

Ragas 0.4.3: the legacy class returns ``int(response.equivalence)`` (an int, not a float), the collections
class ``1.0`` / ``0.0``; the collections class raises ValueError on an empty or whitespace-only response or
reference (the legacy class asks the judge about them); with no reference_contexts both send an empty
schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.agent_goal import binary
from ragas_compat.metrics.multimodal import pydantic_bool
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

KEY = "sql_equivalence"
DENOMINATOR = "none: the judge's one 0/1 equivalence verdict"


def sql_outcome(case: Case) -> ReferenceOutcome:
    verdict = case.verdicts[KEY][0]
    details: dict[str, Any] = {"verdict": verdict["equivalent"],
                               "response_explanation": verdict["response_explanation"],
                               "reference_explanation": verdict["reference_explanation"],
                               "database_schema": "\n".join(case.reference_contexts or ())}
    label = binary(verdict["equivalent"])
    if label is None:
        parsed = pydantic_bool(verdict["equivalent"])  # the reply carries it as given: pydantic's reading is Ragas's
        return ReferenceOutcome(KEY, None, None, f"verdicts.{KEY}[0].equivalent must be 0 or 1, got "
                                f"{verdict['equivalent']!r}", {} if parsed is None else {"coercion": float(parsed)},
                                details, DENOMINATOR)
    return ReferenceOutcome(KEY, Fraction(label), None, None, {}, details, DENOMINATOR)


def _as_given(labels: Sequence[int]) -> float:
    """Both APIs return the one verdict as a number (legacy int, collections float)."""
    return float(labels[0]) if labels else float("nan")


# --------------------------------------------------------------------------- fuzz and explain

_TABLES = ("users", "orders", "products", "invoices")
_PAIRS = (("SELECT id, name FROM {t} WHERE active = 1;", "SELECT id, name FROM {t} WHERE active = true;"),
          ("SELECT COUNT(*) FROM {t};", "SELECT COUNT(id) FROM {t};"),
          ("SELECT name FROM {t} ORDER BY name;", "SELECT name FROM {t};"),
          ("SELECT id FROM {t} WHERE total > 10;", "SELECT id FROM {t} WHERE total >= 10;"))


def _verdict(label: Any) -> list[dict[str, Any]]:
    return [{"response_explanation": "The generated query, explained.",
             "reference_explanation": "The reference query, explained.", "equivalent": label}]


def _fuzz(draw: FuzzDraw) -> dict[str, Any]:
    rng = draw.rng
    # a token of the case in the table name: evaluate() scores all cases with one judge answering by content
    token = f"{rng.getrandbits(40):010x}"
    table = f"{rng.choice(_TABLES)}_{token}"
    reference, response = (query.format(t=table) for query in rng.choice(_PAIRS))
    if rng.random() < 0.05:  # the generator produced no SQL (the collections class refuses it)
        response = rng.choice(("", "  "))
    # the schema is the case's reference_contexts as the draw holds them (the string metrics read the same
    # list): its text does not change the verdict, which the queries (with the case's token) key
    return {"reference": reference, "response": response, "reference_contexts": list(draw.reference_contexts),
            "verdicts": {KEY: _verdict(rng.choice(("yes", "No", "on", "0", 1.0)) if rng.random() < 0.1
                                       else rng.choice((0, 1, True, False)))}}


def _explain_inputs(given: ExplainInput) -> dict[str, Any]:
    label = given.labels[0] if given.labels else 0
    reference, response = (q.format(t="users") for q in _PAIRS[0])
    return {"reference": reference, "response": response,
            "reference_contexts": ["Table users: id (INT), name (VARCHAR), active (BOOLEAN)"],
            "verdicts": {KEY: _verdict(label)}}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    d = reference.details
    quantities = [Quantity(f"{KEY} (exact)", reference.number), Quantity("verdict as given", None, repr(d["verdict"]))]
    formulas = ["value = the judge's equivalence verdict" + (f" (refused: {reference.refused})"
                                                             if reference.refused else ""),
                "Ragas: legacy int(equivalence), collections 1.0 if equivalent else 0.0"]
    return quantities, formulas


TARGETS = RagasTargets(("LLMSQLEquivalence",), ("SQLSemanticEquivalence",), "ragas.metrics._sql_semantic_equivalence",
                       judge=KEY)

SPECS: tuple[MetricSpec, ...] = (MetricSpec(
    name=KEY,
    reference_on=f"verdicts.{KEY} (the judge's equivalence verdict of response against reference, given the "
                 "schema in reference_contexts)",
    ragas=TARGETS,
    fields_read=("response", "reference", "reference_contexts"),
    denominator=DENOMINATOR,
    undefined_policy="never undefined: the verdict, 1 or 0; a verdict other than 0/1 is refused",
    compute=sql_outcome,
    requires=(f"verdicts.{KEY}", "reference_contexts"),
    verdicts=Verdicts(KEY, "claims", "equivalent"),
    as_given=_as_given,
    fuzz_inputs=_fuzz,
    explain=ExplainAdapter(
        command="sql-equivalence", takes="labels",
        inputs_help="LABELS (the judge's equivalence verdict: the first label, 1 equivalent / 0 not)",
        targets=TARGETS.ids(), case_inputs=_explain_inputs, quantities=_quantities)),)
