"""Seeded generator of fuzz cases: valid case-format dicts (category ``edge``), reproducible from the seed.

Case ``i`` of seed ``S`` is drawn from its own ``random.Random("ragas-compat-fuzz:S:i")`` (string
seeds are hashed with SHA-512, stable across runs and platforms), so a case does not depend on
``n``, on the batching, or on which metrics are fuzzed: every value is always drawn, then the
inputs of metrics not asked for are dropped. The ``reference`` and ``response`` texts, which several
metric families draw (string metrics, SemanticSimilarity, AnswerCorrectness, DataCompyScore's CSV
tables, QuotedSpansAlignment's quoting response), belong to one family per case, picked among the
fuzzed ones by a generator private to the case; the others score those texts (DataCompyScore and
QuotedSpansAlignment, which read only texts of their own kind, sit the case out), the embedding table
holds one vector of one dimension for every text, and a judged metric that would send the frozen
judge one text twice (equal reference and response) sits the case out.

Shapes rotate round-robin, one rotation per input family, with pairwise coprime periods
(labels 8, claims 7, IDs 9, strings 5), so any ``n`` >= 9 covers every shape of every family and
every combination of shapes occurs within 2,520 cases:

- label lists (both context-precision variants; their length is K = len(retrieved_contexts)):
  empty, single, all zero, all one, random 0/1, booleans (mixed with 0/1), non-binary (a 2), long;
- claim sets (context recall, faithfulness): empty (zero claims), all zero, all one, random,
  booleans, non-binary (a 2), long;
- ID lists: both empty, retrieved empty, reference empty, strings, duplicates, mixed types
  (``1``, ``"1"``, ``1.0``), disjoint, identical (permuted), long;
- reference_contexts: a subset of the retrieved contexts plus novel ones, all found, none found,
  empty, a superset.

Every context is one letter repeated (``"ßßßßß"``), a different letter for every context of a case.
Two different contexts therefore have Levenshtein similarity exactly 0 and equal ones exactly 1,
so Ragas's fuzzy string match (similarity >= 0.5 / > 0.5) and the reference's exact match agree by
construction: the NonLLM string targets are fuzzed, and a divergence there is a real one.
Contexts are distinct within a case and every ``user_input`` is unique (the Ragas stub answers
prompts by content).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

from ragas_compat.cases.loader import MULTI_TURN_KEYS
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import all_metrics, metric
from ragas_compat.metrics.spec import FuzzDraw
from ragas_compat.vocabulary import Api

LABEL_SHAPES = ("empty", "single", "all_zero", "all_one", "binary", "booleans", "non_binary", "long")
CLAIM_SHAPES = ("empty", "all_zero", "all_one", "binary", "booleans", "non_binary", "long")
ID_SHAPES = ("both_empty", "retrieved_empty", "reference_empty", "strings", "duplicates", "mixed_types",
             "disjoint", "identical", "long")
STRING_SHAPES = ("subset", "all_found", "none_found", "reference_empty", "superset")

LONG_LIST = (20, 60)          # length range of a "long" label list or claim set
LONG_IDS = (30, 100)          # length range of each "long" ID list
MAX_REFERENCE_CONTEXTS = 6    # keeps the string targets' K x |reference| comparisons cheap
NON_BINARY_LABEL = 2
MAX_FUZZ_CASES = 50_000       # --n: the run holds every case and row in memory (~15 kB a case before scoring)


def fuzz_metrics() -> tuple[str, ...]:
    """Registered metrics with a Ragas counterpart and fuzz inputs (the judge audit has no Ragas side)."""
    return tuple(spec.name for spec in all_metrics() if spec.ragas_targets and spec.fuzz_inputs)

# One letter per context: alphabetic code points only, so every context is printable text.
ALPHABET: tuple[str, ...] = tuple(ch for ch in map(chr, range(0x41, 0x800)) if ch.isalpha())


def targets_for(metrics: Sequence[str]) -> list[str]:
    """The legacy probe targets (``legacy:ClassName``) of our metric names, in registry order; a metric
    with no legacy class (QuotedSpansAlignment) is fuzzed through its collections class."""
    return [target for spec in all_metrics() if spec.name in metrics
            for target in (spec.targets_of(Api.LEGACY) or spec.targets_of(Api.COLLECTIONS))]


def check_metrics(metrics: Sequence[str] | None) -> tuple[str, ...]:
    """The metrics to fuzz (all fuzzable ones when None); HarnessInputError on an unknown name."""
    fuzzable = fuzz_metrics()
    if not metrics:
        return fuzzable
    unknown = [m for m in metrics if m not in fuzzable]
    if unknown:
        raise HarnessInputError(
            f"--metric: cannot fuzz {', '.join(map(repr, unknown))}; fuzzable metrics (those with a Ragas "
            f"counterpart): {', '.join(fuzzable)}", field="--metric", value=unknown)
    return tuple(m for m in fuzzable if m in metrics)  # registry order, no duplicates


# --------------------------------------------------------------------------- label values

def _labels(rng: random.Random, shape: str, k: int) -> list[Any]:
    """``k`` labels of the given shape (``k`` is fixed by the retrieved contexts)."""
    if k == 0:
        return []
    if shape == "all_zero":
        return [0] * k
    if shape == "all_one":
        return [1] * k
    if shape == "booleans":
        values = [rng.choice((True, False, 0, 1)) for _ in range(k)]
        if not any(isinstance(v, bool) for v in values):
            values[rng.randrange(k)] = rng.choice((True, False))
        return values
    values = [rng.randint(0, 1) for _ in range(k)]
    if shape == "non_binary":
        values[rng.randrange(k)] = NON_BINARY_LABEL
    return values


def _length(rng: random.Random, shape: str, long_range: tuple[int, int]) -> int:
    if shape == "empty":
        return 0
    if shape == "single":
        return 1
    if shape == "long":
        return rng.randint(*long_range)
    return rng.randint(1, 8)


def _claims(rng: random.Random, shape: str, label_key: str, what: str, case_index: int) -> list[dict]:
    n = _length(rng, shape, LONG_LIST)
    label_shape = "binary" if shape == "long" else shape
    return [{"statement": f"{what} claim {j} of case {case_index}", label_key: label}
            for j, label in enumerate(_labels(rng, label_shape, n))]


# --------------------------------------------------------------------------- IDs

def _id_pool(rng: random.Random, shape: str) -> list[Any]:
    if shape == "mixed_types":
        pool: list[Any] = []
        for k in rng.sample(range(0, 6), 3):
            pool += [k, str(k), float(k)]
        return pool + [f"d{k}" for k in range(3)]
    return [f"d{k}" for k in range(12 if shape != "long" else 150)]


def _ids(rng: random.Random, shape: str) -> tuple[list[Any], list[Any]]:
    pool = _id_pool(rng, shape)
    if shape == "both_empty":
        return [], []
    if shape == "long":
        return rng.sample(pool, rng.randint(*LONG_IDS)), rng.sample(pool, rng.randint(*LONG_IDS))
    if shape == "disjoint":
        half = len(pool) // 2
        return rng.sample(pool[:half], rng.randint(1, 5)), rng.sample(pool[half:], rng.randint(1, 5))
    if shape == "identical":
        retrieved = rng.sample(pool, rng.randint(1, 6))
        return retrieved, rng.sample(retrieved, len(retrieved))
    if shape in ("duplicates", "mixed_types"):
        small = pool[:4] if shape == "duplicates" else pool
        retrieved = [rng.choice(small) for _ in range(rng.randint(2, 7))]
        reference = [rng.choice(small) for _ in range(rng.randint(1, 5))]
        if shape == "duplicates" and len(set(retrieved)) == len(retrieved):
            retrieved.append(retrieved[0])
        if shape == "mixed_types":  # one value as int, string and float across the two lists
            k = pool[0]
            triple = [k, str(k), float(k)]
            rng.shuffle(triple)
            retrieved.insert(rng.randint(0, len(retrieved)), triple[0])
            reference.insert(rng.randint(0, len(reference)), triple[1])
            (retrieved if rng.random() < 0.5 else reference).append(triple[2])
        return retrieved, reference
    retrieved = rng.sample(pool, rng.randint(1, 6))
    reference = rng.sample(pool, rng.randint(1, 6))
    if shape == "retrieved_empty":
        return [], reference
    if shape == "reference_empty":
        return retrieved, []
    return retrieved, reference


# --------------------------------------------------------------------------- contexts

def _contexts(rng: random.Random, k: int, string_shape: str) -> tuple[list[str], list[str]]:
    """(retrieved_contexts, reference_contexts): one distinct letter per context, repeated."""
    letters = rng.sample(ALPHABET, k + 3)
    texts = [letter * rng.randint(4, 16) for letter in letters]
    retrieved, novel = texts[:k], texts[k:]
    limit = MAX_REFERENCE_CONTEXTS
    if string_shape == "reference_empty":
        reference: list[str] = []
    elif string_shape == "none_found":
        reference = novel[:rng.randint(1, 3)]
    elif string_shape == "all_found" and retrieved:
        reference = rng.sample(retrieved, rng.randint(1, min(k, limit)))
    elif string_shape == "superset":
        reference = rng.sample(retrieved, min(k, limit - 1)) + novel[:1]
    else:  # subset (or all_found with nothing retrieved): some retrieved plus some novel
        found = rng.sample(retrieved, rng.randint(0, min(k, limit - 2))) if retrieved else []
        reference = found + novel[:rng.randint(0 if found else 1, 2)]
    rng.shuffle(reference)
    return retrieved, reference


# --------------------------------------------------------------------------- cases

def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"ragas-compat-fuzz:{seed}:{index}")


def generate_case(seed: int, index: int, metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Case ``index`` of ``seed``, with the inputs of ``metrics`` only (default: every fuzzable
    metric); each metric's ``fuzz_inputs`` picks what it reads from the case's draw."""
    metrics = fuzz_metrics() if metrics is None else metrics
    rng = case_rng(seed, index)
    label_shape = LABEL_SHAPES[index % len(LABEL_SHAPES)]
    recall_shape = CLAIM_SHAPES[index % len(CLAIM_SHAPES)]
    faith_shape = CLAIM_SHAPES[(index + 3) % len(CLAIM_SHAPES)]
    id_shape = ID_SHAPES[index % len(ID_SHAPES)]
    string_shape = STRING_SHAPES[index % len(STRING_SHAPES)]

    k = _length(rng, label_shape, LONG_LIST)
    with_reference = _labels(rng, "binary" if label_shape in ("long", "single") else label_shape, k)
    without_shape = rng.choice(("binary", "all_zero", "all_one", "booleans", "non_binary"))
    without_reference = _labels(rng, without_shape, k)
    retrieved, reference_contexts = _contexts(rng, k, string_shape)
    recall_claims = _claims(rng, recall_shape, "attributed", "reference", index)
    faith_claims = _claims(rng, faith_shape, "verdict", "response", index)
    retrieved_ids, reference_ids = _ids(rng, id_shape)
    binary = all(isinstance(v, bool) or v in (0, 1) for v in with_reference)
    corpus_relevant = (sum(map(int, with_reference)) + rng.randint(0, 3)
                       if binary and rng.random() < 0.5 else None)

    case: dict[str, Any] = {
        "id": f"fuzz-{seed}-{index}",
        "category": "edge",
        "description": (f"fuzz seed {seed} case {index}: labels {label_shape}, recall claims {recall_shape}, "
                        f"faithfulness claims {faith_shape}, ids {id_shape}, reference contexts {string_shape}"),
        "user_input": f"fuzz question {seed}:{index}",
        "reference": f"reference answer of case {index}",
        "response": f"response of case {index}",
        "retrieved_contexts": retrieved,
    }
    draw = FuzzDraw(retrieved_contexts=retrieved, ranked_labels=with_reference, ranked_labels_alt=without_reference,
                    corpus_relevant=corpus_relevant, reference_contexts=reference_contexts,
                    attributed_claims=recall_claims, verdict_claims=faith_claims,
                    retrieved_ids=retrieved_ids, reference_ids=reference_ids)
    drawn: list[tuple[Any, dict[str, Any]]] = []  # (the metric's fuzz_inputs, what it drew), in registry order
    # a case is single- or multi-turn: the multi-turn metrics (their user_input is a list of messages) are
    # fuzzed when no single-turn metric is (--metric tool_call_accuracy ...), so single-turn cases never change
    single_turn = any(not metric(name).multi_turn for name in metrics)
    for name in metrics:
        spec = metric(name)
        if spec.fuzz_inputs is None or (spec.multi_turn and single_turn):
            continue
        own = dataclasses.replace(draw, rng=random.Random(f"ragas-compat-fuzz:{seed}:{index}:{name}"))
        drawn.append((spec.fuzz_inputs, spec.fuzz_inputs(own)))
    writers = list(dict.fromkeys(fuzz for fuzz, inputs in drawn if TEXT_FIELDS & inputs.keys()))
    owner = writers[random.Random(f"ragas-compat-fuzz:{seed}:{index}:texts").randrange(len(writers))] \
        if writers else None
    verdicts: dict[str, Any] = {}
    tables: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (a metric's inputs, its embeddings)
    for fuzz, inputs in drawn:
        for key, value in inputs.items():
            if fuzz is not owner and (key in TEXT_FIELDS or key in OWN_TEXTS_ONLY):
                continue  # the texts are the owner's; a metric scoring only its own texts sits this case out
            if key == "verdicts":
                verdicts.update(value)
            elif key == "embeddings":
                tables.append((inputs, value))
            else:
                case[key] = value
    if owner is not None:
        case["description"] += f", texts drawn for {_family_name(owner, metrics)}"
    for name in metrics:  # after the owner's texts: a judged metric that would read one text twice sits out
        spec = metric(name)
        if _judge_reads_one_text_twice(spec.fields_read, case):
            for key in (r.removeprefix("verdicts.") for r in spec.requires if r.startswith("verdicts.")):
                verdicts.pop(key, None)
            for key in spec.requires:  # a case input only for the verdicts' judge (hhem_scores) goes with them
                if key in JUDGED_INPUTS:
                    case.pop(key, None)
    if tables:
        case["embeddings"] = embedding_table(tables, case)
    if verdicts:
        case["verdicts"] = verdicts
    if isinstance(case.get("user_input"), list):  # a multi-turn case has none of the single-turn keys
        case = {key: value for key, value in case.items() if key in MULTI_TURN_KEYS}
    return case


# The text fields several metrics draw (DataCompyScore a CSV table pair, QuotedSpansAlignment a response
# quoting the contexts, the string metrics and SemanticSimilarity their shared texts, AnswerCorrectness
# its own): one family of metrics (one fuzz_inputs) owns them in a case, drawn from a generator private
# to the case, so every family owns some cases whatever else is fuzzed; the other metrics score the
# owner's texts or, below, sit the case out.
TEXT_FIELDS = frozenset({"reference", "response"})
# Requirement flags of the metrics that score only texts of their own kind: DataCompyScore reads a CSV
# table pair (another family's text is not a table: a "ragged" CSV the reference refuses and pandas pads,
# a comparison of nothing the generator meant), QuotedSpansAlignment a response quoting the retrieved
# contexts. Where another family owns the texts they are left out, so those metrics are not scored there.
OWN_TEXTS_ONLY = frozenset({"table_metrics", "quoted_spans"})


# Case inputs that score the judge's verdicts (FaithfulnesswithHHEM's frozen classifier scores the statements of
# verdicts.faithfulness): the loader refuses one without its verdicts, so it sits out with them.
JUDGED_INPUTS = frozenset({"hhem_scores"})


def _judge_reads_one_text_twice(fields_read: Sequence[str], case: dict[str, Any]) -> bool:
    """The frozen judge answers a prompt by its content, so two texts a judged metric sends it (reference and
    response decomposed into claims, the reference and the joined contexts into entities, the two
    AnswerAccuracy templates) must differ: equal texts whose frozen replies differ are a prompt no judge that
    answers by content can answer (the probe's StubMismatch, a harness error). The owner's texts may be equal
    (identical tables, identical strings: shapes the text metrics need), so a metric whose verdicts would be
    asked twice for one text is not fuzzed on that case."""
    texts = [case[f] for f in ("user_input", "reference", "response") if f in fields_read and isinstance(case.get(f), str)]
    if "retrieved_contexts" in fields_read and isinstance(case.get("retrieved_contexts"), list):
        texts.append("\n".join(map(str, case["retrieved_contexts"])))
    return len(set(texts)) < len(texts)


def _family_name(fuzz: Any, metrics: Sequence[str]) -> str:
    """The first fuzzed metric drawing with ``fuzz`` (a family's name in the case description)."""
    return next(name for name in metrics if metric(name).fuzz_inputs is fuzz)


EMBEDDED_FIELDS = ("user_input", "reference", "response")


def embeddings_of_final_texts(inputs: dict[str, Any], table: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """The vectors a metric drew for the text fields it set (its ``inputs``), keyed by the text the case
    ends up with in each field (the texts may be another family's, and the frozen model answers by content,
    so without this Ragas asks for a vector the case lacks). An empty text is keyed both ``""`` and ``" "``:
    Ragas's legacy classes embed ``text or " "``, the collections AnswerCorrectness the text as given."""
    out: dict[str, Any] = {}
    for field in EMBEDDED_FIELDS:
        if field in inputs and isinstance(case.get(field), str):
            vector = table.get(inputs[field] or " ")
            if vector is not None:
                for key in {case[field], case[field] or " "}:
                    out[key] = vector
    return out


def embedding_table(tables: list[tuple[dict[str, Any], dict[str, Any]]], case: dict[str, Any]) -> dict[str, Any]:
    """The case's one frozen embedding model (text -> vector) from the metrics' drawn tables: every drawn
    vector under its own text, then the case's final texts with the vector drawn for that field (where the
    metric that drew the final text has one, that one: its pairs stay its own), one key one vector; and one
    dimension: shorter vectors padded with zeros, which changes no dot product and no norm, so no metric
    sees two vectors of different lengths (a model the harness does not mean to fuzz)."""
    table: dict[str, Any] = {}
    for _, own in tables:
        table.update(own)
    finals: dict[str, Any] = {}
    for inputs, own in sorted(tables, key=lambda t: all(t[0].get(f) == case.get(f) for f in TEXT_FIELDS & t[0].keys())):
        finals.update(embeddings_of_final_texts(inputs, own, case))
    table.update(finals)
    dimension = max((len(v) for v in table.values()), default=0)
    return {text: list(v) + [0.0] * (dimension - len(v)) for text, v in table.items()}


def check_case_count(n: int) -> None:
    """``--n`` is 0 .. MAX_FUZZ_CASES: every case (and its rows) is held in memory until the report is
    written, about 15 kB each before scoring; more cases come from more seeds, not a larger n."""
    if n < 0:
        raise HarnessInputError(f"--n: expected a number of cases >= 0, got {n}", field="--n", value=n)
    if n > MAX_FUZZ_CASES:
        raise HarnessInputError(f"--n: {n} cases; at most {MAX_FUZZ_CASES} per run (case i of a seed does not "
                                f"depend on --n: run more seeds for more cases)", field="--n", value=n)


def generate_cases(n: int, seed: int, metrics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Cases ``0 .. n-1`` of ``seed`` (the same list for the same arguments, every time)."""
    check_case_count(n)
    chosen = check_metrics(metrics)
    return [generate_case(seed, i, chosen) for i in range(n)]


def fuzz_suite_document(cases: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """The cases as a case file (schema_version 1), ready for ``ragas_compat.cases.parse_suite``."""
    return {"schema_version": 1, "suite": f"fuzz-seed-{seed}", "cases": cases}
