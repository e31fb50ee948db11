"""The one target table: which Ragas classes score which of our metrics, in both Ragas APIs.

Each :class:`TargetRow` is one of our metrics: its name (as in ``ragas_compat.metrics.registry``), the
verdict key its judge replies come from (None: the classes need no LLM), the fields the classes
read (``SingleTurnSample`` fields on the legacy path, the keyword arguments of ``ascore`` on the
collections path), when it applies to a case (its inputs are present), the legacy class name(s)
and the private module they live in, the collections class name(s), and the judge script (in
``judge``, written once for both APIs).

Every :class:`Target` (``legacy:ClassName``, ``collections:ClassName``) is derived from a row, so
both APIs of one metric read the same fields, apply to the same cases and ask the same prompts.
The runners (``scoring``) score a target: legacy through ``single_turn_ascore`` on a
``SingleTurnSample``, collections through ``ascore(**inputs)``.

Verified at Ragas 0.4.3: the collections API has the four context-precision classes,
``ContextRecall`` and ``Faithfulness``, and no ID-based or string-match (non-LLM) context
precision/recall classes, so those metrics are legacy-only.

Standard library only: importing this module does not import Ragas (the host imports it to check
the table against the metric registry; the probe checks requested target names before Ragas).
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from .judge.answers import answer_correctness_script, answer_relevancy_script
from .judge.criteria import rubrics_script, votes_script
from .judge.dialects import dialect_book, prompts_for
from .judge.prompt_book import PromptBook
from .judge.ratings import rating_script
from .judge.scripts import (
    PROMPTS_BY_API,
    PromptAdapter,
    Script,
    context_entity_recall_script,
    context_precision_script,
    context_recall_script,
    factual_correctness_script,
    faithfulness_script,
    noise_sensitivity_script,
)
from .protocol import API_COLLECTIONS, API_LEGACY, target_name

COLLECTIONS_MODULE = "ragas.metrics.collections"


class TargetUnavailable(Exception):
    """The running Ragas has no such class (or, for a collections target, no collections API)."""


class TargetNotScripted(TargetUnavailable):
    """The class exists but asks its judge through an interface the scripted judge cannot answer
    (an earlier collections API): it is not scored, and that is the harness's limit, not Ragas's."""


# -- applicability -------------------------------------------------------------------------
def has_verdict(key: str) -> t.Callable[[dict], bool]:
    return lambda case: key in (case.get("verdicts") or {})


def has_fields(*names: str) -> t.Callable[[dict], bool]:
    return lambda case: all(case.get(n) is not None for n in names)


def has_verdict_and_embeddings(key: str) -> t.Callable[[dict], bool]:
    """The verdict and the frozen embeddings (case key ``embeddings``) are present."""
    return lambda case: key in (case.get("verdicts") or {}) and case.get("embeddings") is not None


# -- the table -----------------------------------------------------------------------------
@dataclass(frozen=True)
class TargetRow:
    """One of our metrics and the Ragas classes (both APIs) compared with its reference."""

    metric: str
    verdict_key: str | None             # verdicts.<key> holds the judge's frozen replies; None: no LLM
    fields_read: tuple[str, ...]
    applies: t.Callable[[dict], bool]
    legacy_classes: tuple[str, ...]
    legacy_module: str                  # where the legacy classes live when ragas.metrics does not export them
    collections_classes: tuple[str, ...] = ()
    script: Script | None = None        # the judge script (both APIs); None: the classes need no LLM
    # a non-default configuration of the classes: constructor keyword arguments, and the suffix that
    # names it in the target (``legacy:FactualCorrectness[mode=precision]``)
    options: tuple[tuple[str, t.Any], ...] = ()
    variant: str = ""
    embeddings: bool = False            # the classes take a (frozen, content-keyed) embedding model

    @property
    def needs_judge(self) -> bool:
        return self.script is not None

    def targets(self) -> tuple[Target, ...]:
        """The row's legacy targets, then its collections targets."""
        return (tuple(Target(API_LEGACY, c, self.legacy_module, self) for c in self.legacy_classes)
                + tuple(Target(API_COLLECTIONS, c, COLLECTIONS_MODULE, self) for c in self.collections_classes))


@dataclass(frozen=True)
class Target:
    """One Ragas class of one API, run for the metric of its row."""

    api: str            # "legacy" | "collections"
    class_name: str
    module: str         # legacy: the private fallback module; collections: the module a user imports from
    row: TargetRow

    @property
    def name(self) -> str:
        return target_name(self.api, self.class_name + self.row.variant)

    @property
    def options(self) -> dict[str, t.Any]:
        """Constructor keyword arguments of the configuration the row runs (beyond ``llm``)."""
        return dict(self.row.options)

    @property
    def metric(self) -> str:
        return self.row.metric

    @property
    def fields_read(self) -> tuple[str, ...]:
        return self.row.fields_read

    def applies(self, case: dict) -> bool:
        return self.row.applies(case)

    @property
    def needs_judge(self) -> bool:
        return self.row.needs_judge

    @property
    def prompts(self) -> PromptAdapter:
        return PROMPTS_BY_API[self.api]

    def expect_prompts(self, metric: t.Any, case: dict, book: PromptBook) -> None:
        """Script the judge of ``metric`` (an instance of this class) for ``case``, through the prompt
        dialect the instance offers (``judge.dialects.prompts_for``)."""
        if self.row.script is not None:
            adapter = prompts_for(self.api, metric)
            self.row.script(adapter, metric, case, dialect_book(adapter, book))


_CP = "ragas.metrics._context_precision"
_CR = "ragas.metrics._context_recall"
_WITH_REF = ("user_input", "retrieved_contexts", "reference")
_WITHOUT_REF = ("user_input", "retrieved_contexts", "response")
_STRINGS = ("retrieved_contexts", "reference_contexts")
_IDS = ("retrieved_context_ids", "reference_context_ids")
_CPR = "context_precision_with_reference"
_CPN = "context_precision_without_reference"

_TEXTS = ("reference", "response")
_JUDGED = ("user_input", "response", "retrieved_contexts", "reference")
# the criterion the AspectCritic / SimpleCriteriaScore instances judge (their prompt's instruction names it;
# the frozen votes stand for the judge's answers, so the reference does not read it)
CRITERIA_DEFINITION = "Is the response supported by the retrieved contexts and free of errors?"
_STR = "ragas.metrics._string"


def wants_string_metrics(case: dict) -> bool:
    """The case asks for the string metrics (``"string_metrics": true``)."""
    return case.get("string_metrics") is True


def _variant_name(options: tuple[tuple[str, t.Any], ...]) -> str:
    """``[rouge_type=rougeL,mode=fmeasure]`` for a non-default configuration, ``""`` otherwise."""
    return "[" + ",".join(f"{k}={v}" for k, v in options) + "]" if options else ""


TARGET_ROWS: tuple[TargetRow, ...] = (
    TargetRow(_CPR, _CPR, _WITH_REF, has_verdict(_CPR),
              ("LLMContextPrecisionWithReference", "ContextPrecision"), _CP,
              ("ContextPrecisionWithReference", "ContextPrecision"),
              context_precision_script(_CPR, "reference")),
    TargetRow(_CPN, _CPN, _WITHOUT_REF, has_verdict(_CPN),
              ("LLMContextPrecisionWithoutReference", "ContextUtilization"), _CP,
              ("ContextPrecisionWithoutReference", "ContextUtilization"),
              context_precision_script(_CPN, "response")),
    TargetRow("context_precision_string_match", None, _STRINGS, has_fields("reference_contexts"),
              ("NonLLMContextPrecisionWithReference",), _CP),
    TargetRow("context_recall", "context_recall", _WITH_REF, has_verdict("context_recall"),
              ("LLMContextRecall", "ContextRecall"), _CR,
              ("ContextRecall",), context_recall_script),
    TargetRow("context_recall_string_match", None, _STRINGS, has_fields("reference_contexts"),
              ("NonLLMContextRecall",), _CR),
    TargetRow("id_context_precision", None, _IDS, has_fields(*_IDS), ("IDBasedContextPrecision",), _CP),
    TargetRow("id_context_recall", None, _IDS, has_fields(*_IDS), ("IDBasedContextRecall",), _CR),
    TargetRow("faithfulness", "faithfulness", ("user_input", "response", "retrieved_contexts"),
              has_verdict("faithfulness"), ("Faithfulness",), "ragas.metrics._faithfulness",
              ("Faithfulness",), faithfulness_script),
    # issue 18: judged metrics beyond precision, recall and faithfulness
    *(TargetRow(_metric, "factual_correctness", ("response", "reference"), has_verdict("factual_correctness"),
                ("FactualCorrectness",), "ragas.metrics._factual_correctness", ("FactualCorrectness",),
                factual_correctness_script, _options, _variant)
      for _metric, _options, _variant in (
          ("factual_correctness_f1", (), ""),
          ("factual_correctness_precision", (("mode", "precision"),), "[mode=precision]"),
          ("factual_correctness_recall", (("mode", "recall"),), "[mode=recall]"),
          ("factual_correctness_fbeta", (("beta", 0.5),), "[beta=0.5]"))),
    TargetRow("context_entity_recall", "context_entity_recall", ("reference", "retrieved_contexts"),
              has_verdict("context_entity_recall"), ("ContextEntityRecall",),
              "ragas.metrics._context_entities_recall", ("ContextEntityRecall",), context_entity_recall_script),
    *(TargetRow(_metric, "noise_sensitivity", ("user_input", "response", "reference", "retrieved_contexts"),
                has_verdict("noise_sensitivity"), ("NoiseSensitivity",), "ragas.metrics._noise_sensitivity",
                ("NoiseSensitivity",), noise_sensitivity_script, _options, _variant)
      for _metric, _options, _variant in (
          ("noise_sensitivity_relevant", (), ""),
          ("noise_sensitivity_irrelevant", (("mode", "irrelevant"),), "[mode=irrelevant]"))),
    # issue 18: the NVIDIA-style rating metrics (two string templates, retried; raw-prompt judge scripts)
    *(TargetRow(_key, _key, _fields, has_verdict(_key), (_cls,), "ragas.metrics._nv_metrics", (_cls,),
                rating_script(_key))
      for _key, _cls, _fields in (
          ("answer_accuracy", "AnswerAccuracy", ("user_input", "response", "reference")),
          ("context_relevance", "ContextRelevance", ("user_input", "retrieved_contexts")),
          ("response_groundedness", "ResponseGroundedness", ("response", "retrieved_contexts")))),
    # issue 18: criteria votes (legacy only: no collections class at 0.4.3) and rubric scores
    *(TargetRow(_key if _s == 1 else f"{_key}_strictness_{_s}", _key, _JUDGED, has_verdict(_key), (_cls,),
                _module, (), votes_script(_key, _s),
                (("name", _key), ("definition", CRITERIA_DEFINITION), ("strictness", _s)),
                "" if _s == 1 else f"[strictness={_s}]")
      for _key, _cls, _module in (("aspect_critic", "AspectCritic", "ragas.metrics._aspect_critic"),
                                  ("simple_criteria", "SimpleCriteriaScore", "ragas.metrics._simple_criteria"))
      for _s in (1, 2, 3)),
    TargetRow("rubrics_score", "rubrics_score", _JUDGED, has_verdict("rubrics_score"), ("RubricsScore",),
              "ragas.metrics._domain_specific_rubrics", ("DomainSpecificRubrics",), rubrics_script("rubrics_score")),
    TargetRow("instance_rubrics", "instance_rubrics", (*_JUDGED, "rubrics"),
              lambda case: "instance_rubrics" in (case.get("verdicts") or {}) and case.get("rubrics") is not None,
              ("InstanceRubrics",), "ragas.metrics._instance_specific_rubrics", ("InstanceSpecificRubrics",),
              rubrics_script("instance_rubrics")),
    # issue 18: AnswerCorrectness and ResponseRelevancy: judged and embedded (frozen embeddings, case key
    # "embeddings"); a configuration of the class is its own metric and row
    *(TargetRow(_metric, "answer_correctness", ("user_input", "response", "reference"), _applies,
                ("AnswerCorrectness",), "ragas.metrics._answer_correctness",
                ("AnswerCorrectness",), answer_correctness_script, _options, _variant, embeddings=True)
      for _metric, _applies, _options, _variant in (
          ("answer_correctness", has_verdict_and_embeddings("answer_correctness"), (), ""),
          ("answer_correctness_factuality", has_verdict("answer_correctness"), (("weights", (1.0, 0.0)),),
           "[weights=1.0,0.0]"))),
    *(TargetRow(_metric, "answer_relevancy", ("user_input", "response"),
                has_verdict_and_embeddings("answer_relevancy"),
                ("ResponseRelevancy", "AnswerRelevancy"), "ragas.metrics._answer_relevance", ("AnswerRelevancy",),
                answer_relevancy_script, _options, _variant, embeddings=True)
      for _metric, _options, _variant in (
          ("answer_relevancy", (), ""),
          ("answer_relevancy_strictness_1", (("strictness", 1),), "[strictness=1]"))),
    # issue 19: string, n-gram and edit-similarity metrics (no LLM); they read response and reference
    # and run on cases with "string_metrics": true. A parameter of the class is its own metric and row.
    *(TargetRow(_metric, None, _TEXTS, wants_string_metrics, _legacy, _module, _collections, None, _options,
                _variant_name(_options))
      for _metric, _legacy, _module, _collections, _options in (
          ("exact_match", ("ExactMatch",), _STR, ("ExactMatch",), ()),
          ("string_presence", ("StringPresence",), _STR, ("StringPresence",), ()),
          *((f"string_similarity_{_m}", ("NonLLMStringSimilarity",), _STR, ("NonLLMStringSimilarity",),
             (("distance_measure", _m),)) for _m in ("levenshtein", "hamming", "jaro", "jaro_winkler")),
          ("bleu", ("BleuScore",), "ragas.metrics._bleu_score", ("BleuScore",), ()),
          ("chrf", ("ChrfScore",), "ragas.metrics._chrf_score", ("CHRFScore",), ()),
          *((f"rouge_{_t[5:].lower()}_{_mode}", ("RougeScore",), "ragas.metrics._rouge_score", ("RougeScore",),
             (("rouge_type", _t), ("mode", _mode)))
            for _t in ("rouge1", "rougeL") for _mode in ("precision", "recall", "fmeasure")))),
    # issue 19: SemanticSimilarity on frozen embeddings (case key "embeddings": text -> vector)
    TargetRow("semantic_similarity", None, _TEXTS, has_fields("embeddings"), ("SemanticSimilarity",),
              "ragas.metrics._answer_similarity", ("SemanticSimilarity",), embeddings=True),
    TargetRow("semantic_similarity_threshold", None, _TEXTS, has_fields("embeddings"), ("SemanticSimilarity",),
              "ragas.metrics._answer_similarity", ("SemanticSimilarity",), None, (("threshold", 0.5),),
              "[threshold=0.5]", embeddings=True),
    # issue 19: DataCompyScore (response and reference as CSV tables; needs datacompy and pandas), one
    # row per mode and metric, on cases with "table_metrics": true
    *(TargetRow(f"datacompy_{_mode}_{_score}", None, _TEXTS, lambda case: case.get("table_metrics") is True,
                ("DataCompyScore",), "ragas.metrics._datacompy_score", ("DataCompyScore",), None,
                (("mode", _mode), ("metric", _score)), f"[mode={_mode},metric={_score}]")
      for _mode in ("rows", "columns") for _score in ("precision", "recall", "f1")),
    # issue 19: QuotedSpansAlignment, collections API only (no legacy class at 0.4.3), on cases with
    # "quoted_spans": true
    TargetRow("quoted_spans_alignment", None, ("response", "retrieved_contexts"),
              lambda case: case.get("quoted_spans") is True, (), "", ("QuotedSpansAlignment",)),
)

_ALL = tuple(target for row in TARGET_ROWS for target in row.targets())
LEGACY_TARGETS: tuple[Target, ...] = tuple(target for target in _ALL if target.api == API_LEGACY)
COLLECTIONS_TARGETS: tuple[Target, ...] = tuple(target for target in _ALL if target.api == API_COLLECTIONS)
TARGETS: tuple[Target, ...] = LEGACY_TARGETS + COLLECTIONS_TARGETS  # the default run: legacy, then collections
TARGETS_BY_NAME: dict[str, Target] = {target.name: target for target in TARGETS}


def targets_by_metric() -> dict[str, tuple[str, ...]]:
    """Every target name per metric (legacy first, then collections), in table order."""
    out: dict[str, tuple[str, ...]] = {}
    for row in TARGET_ROWS:
        out[row.metric] = out.get(row.metric, ()) + tuple(target.name for target in row.targets())
    return out
