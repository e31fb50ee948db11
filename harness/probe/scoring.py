"""Score one case with one target, as a user runs that class; every failure becomes the result's value.

- legacy (``ragas.metrics``): ``await metric.single_turn_ascore(SingleTurnSample(...))`` (0.1.x:
  ``await metric.ascore(row)``) with a ``FrozenJudgeLLM``; ``received`` is the sample Ragas hands
  the class (after pydantic coerced it), recorded under our field names.
- collections (``ragas.metrics.collections``): ``await metric.ascore(**inputs)`` with a
  ``FrozenInstructorJudge``; the value is ``MetricResult.value`` exactly; ``received`` is the
  keyword arguments ``ascore`` got (nothing is coerced before the metric on this path). When the
  running Ragas lacks the collections module, a class, its ``ascore`` or the instructor LLM
  interface, the value is a ``TargetUnavailable`` error; when the class's prompts are not where
  the scripted judge looks, a ``TargetNotScripted`` error.

The result records are ``ProbeResult`` (``protocol``). Importing this module does not import
Ragas; running a target does, so set RAGAS_DO_NOT_TRACK before that.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib
import inspect
import os
import types
import typing as t
import warnings

from . import multi_turn, prompt_hash, telemetry_events
from .budget import OverBudget, cap_judge_calls, memory_value
from .judge.prompt_book import PromptBook, StubMismatch
from .protocol import (
    API_COLLECTIONS,
    API_LEGACY,
    API_SELFTEST,
    CLASSIFIERS,
    HARNESS_ORIGIN,
    VALUE_LABEL,
    EncodedScore,
    ProbeResult,
    encode_score,
    encode_warnings,
    error_record,
    jsonable,
    new_result,
)
from .targets import Target, TargetNotScripted, TargetUnavailable


def _probe_module(name: str) -> types.ModuleType:
    """A probe module (e.g. a judge stub, which imports Ragas; ``name`` relative to the package), imported
    on first use (then taken from memory: it is looked up for every scored pair; an import that failed is
    tried again)."""
    module = _PROBE_MODULES.get(name)
    if module is None:
        module = _PROBE_MODULES[name] = importlib.import_module(f"{__package__}.{name}")
    return module


_PROBE_MODULES: dict[str, types.ModuleType] = {}


def _new_result(case: dict, target: Target) -> ProbeResult:
    return new_result(case, target.name, target.api, target.metric, target.fields_read)


_PROBE_FOLDER = os.path.dirname(os.path.abspath(__file__))


def _failure_value(book: PromptBook, exc: Exception) -> EncodedScore:
    """The value of a run that raised: the judge's mismatches if there were any, else the exception,
    with ``"origin": "harness"`` when the harness raised it (the judge's mismatches; an exception whose
    innermost frame is in the probe's code: its scripted judge, its frozen embedding model)."""
    if isinstance(exc, MemoryError):  # the probe's memory budget (budget.limit_memory) ran out
        return memory_value(exc, len(book.asked), raised_by_probe(exc))
    if book.problems:
        return _mismatch(book.problems)
    return error_record(exc, origin=HARNESS_ORIGIN if raised_by_probe(exc) else None)


def _mismatch(problems: list[str]) -> EncodedScore:
    """The scripted judge's StubMismatch: the harness's error, not Ragas's."""
    return error_record(StubMismatch("; ".join(problems)), origin=HARNESS_ORIGIN)


def _unavailable(exc: TargetUnavailable) -> EncodedScore:
    """A class this Ragas does not have (a fact about Ragas), or one the harness cannot drive
    (``TargetNotScripted``: the harness's limit, origin "harness")."""
    return error_record(exc, origin=HARNESS_ORIGIN if isinstance(exc, TargetNotScripted) else None)


# set on an exception Ragas's class raised although no frame of Ragas is on its traceback (``instantiate``)
_RAISED_BY_RAGAS = "_ragas_compat_raised_by_ragas"


def instantiate(cls: type, **options: t.Any) -> t.Any:
    """``cls(**options)``, as a user constructs the class. A class Ragas left abstract (0.2.0's
    AgentGoalAccuracyWithReference / WithoutReference lack ``_ascore``) raises TypeError from Python's
    object construction, with no frame of Ragas to point at: every user's construction raises it, so it
    is Ragas's error (marked so), not the harness's."""
    try:
        return cls(**options)
    except TypeError as exc:
        if getattr(cls, "__abstractmethods__", None):
            setattr(exc, _RAISED_BY_RAGAS, True)
        raise


def raised_by_probe(exc: BaseException) -> bool:
    """Was ``exc`` raised in a file of the probe's package (the harness's code, not Ragas's)?"""
    if getattr(exc, _RAISED_BY_RAGAS, False):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    folder = os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename))
    return folder == _PROBE_FOLDER or folder.startswith(_PROBE_FOLDER + os.sep)


def _checked_value(value: EncodedScore, problems: list[str]) -> EncodedScore:
    """The value of a run that returned, unless the judge was asked amiss (or left prompts unasked)."""
    return _mismatch(problems) if problems else value


# -- legacy ----------------------------------------------------------------------------------
def resolve_legacy_class(target: Target) -> type:
    """The class as a user imports it (``ragas.metrics.X``), else from its private module."""
    return locate_legacy_class(target)[0]


def locate_legacy_class(target: Target) -> tuple[type, bool]:
    """``(class, exported)``: ``ragas.metrics.X`` when it is there (exported), else the private
    module's class (not exported). One lookup, so a row carries the deprecation warning of one import."""
    import ragas.metrics

    try:
        return getattr(ragas.metrics, target.class_name), True
    except AttributeError:
        pass
    try:
        return getattr(importlib.import_module(target.module), target.class_name), False
    except (ImportError, AttributeError) as exc:
        raise TargetUnavailable(
            f"this Ragas has no {target.class_name} (neither ragas.metrics.{target.class_name} "
            f"nor {target.module}.{target.class_name}: {exc})"
        ) from None


def legacy_judge_class() -> type:
    """``FrozenJudgeLLM`` (imports Ragas)."""
    return _probe_module("stubs.legacy_llm").FrozenJudgeLLM


def _single_turn_sample() -> type | None:
    """``SingleTurnSample``; None in Ragas 0.1.x, which scores row dicts."""
    try:
        from ragas.dataset_schema import SingleTurnSample
    except ImportError:
        return None
    return SingleTurnSample


# Ragas 0.1.x scores a row dict under these names instead of a SingleTurnSample.
ROW_NAMES_0_1 = {"user_input": "question", "retrieved_contexts": "contexts", "response": "answer",
                 "reference": "ground_truth"}


# Ragas 0.1.x: the columns an ``evaluation_mode`` names (q question, a answer, c contexts, g ground_truth)
MODE_LETTERS_0_1 = {"q": "user_input", "a": "response", "c": "retrieved_contexts", "g": "reference"}


def row_fields(sample_cls: type | None, metric: t.Any, fields_read: t.Sequence[str]) -> tuple[str, ...]:
    """The case fields a sample is built from: the fields the target reads; for a 0.1.x row dict also
    the columns its ``evaluation_mode`` names (0.1.x AnswerRelevancy is ``qac``: it reads the contexts
    that later releases do not), as a dataset of its time would hold them."""
    mode = getattr(getattr(metric, "evaluation_mode", None), "name", None)
    if sample_cls is not None or not isinstance(mode, str):
        return tuple(fields_read)
    return tuple(dict.fromkeys((*fields_read, *(MODE_LETTERS_0_1[c] for c in mode if c in MODE_LETTERS_0_1))))


def adapt_inputs(sample_cls: type | None, inputs: dict) -> tuple[t.Any, list[str], list[str]]:
    """``(sample, accepted, dropped)`` for this Ragas: a SingleTurnSample of the fields it declares
    (it would silently drop the others, so they are reported as dropped), or - without
    SingleTurnSample (0.1.x) - a row dict under that version's names."""
    if sample_cls is not None:
        declared = _declared_fields(sample_cls)
        accepted = [f for f in inputs if f in declared]
        return (sample_cls(**{f: inputs[f] for f in accepted}), accepted,
                [f for f in inputs if f not in declared])
    accepted = [f for f in inputs if f in ROW_NAMES_0_1]
    return ({ROW_NAMES_0_1[f]: inputs[f] for f in accepted}, [ROW_NAMES_0_1[f] for f in accepted],
            [f for f in inputs if f not in ROW_NAMES_0_1])


def _declared_fields(sample_cls: type) -> t.Any:
    """The fields ``sample_cls`` (SingleTurnSample) declares: pydantic's ``model_fields`` (v1: ``__fields__``),
    looked up once per class (a pydantic class property, read for every scored pair)."""
    declared = _DECLARED.get(sample_cls)
    if declared is None:
        declared = _DECLARED[sample_cls] = getattr(sample_cls, "model_fields", None) or getattr(sample_cls, "__fields__", {})
    return declared


_DECLARED: dict[type, t.Any] = {}


def sample_renames(sample_cls: type | None, names: t.Sequence[tuple[str, str]], inputs: dict) -> dict[str, str]:
    """``{case field: name}`` for each input this Ragas's SingleTurnSample declares under another name
    (``Target.sample_names``: Ragas 0.2.0-0.2.5 declare ``rubric`` where later releases declare ``rubrics``):
    the field is absent from the sample's fields and the name is one of them."""
    if sample_cls is None:
        return {}
    declared = _declared_fields(sample_cls)
    return {field: name for field, name in names if field in inputs and field not in declared and name in declared}


def present_here(target: Target, version: str | None) -> bool:
    """Does ``target`` make rows in this Ragas? A target of a class some releases only have
    (``Target.releases``) does where this Ragas has the class, or where its version lies within those
    releases (a class missing there is shown); elsewhere it is left out, no row at all."""
    if target.releases is None or target.within_releases(version):
        return True
    with warnings.catch_warnings():  # a lookup, not a row: what it warns belongs to no row
        warnings.simplefilter("ignore")
        try:
            (resolve_collections_class if target.api == API_COLLECTIONS else locate_legacy_class)(target)
        except TargetUnavailable:
            return False
    return True


def targets_here(targets: t.Iterable[Target], version: str | None) -> list[Target]:
    """The targets that make rows in this Ragas (``present_here``; selftest targets always), each reading
    the fields its class reads in this release (``Target.for_release``): the scoring probe and floor.py
    select alike."""
    return [target.for_release(version) for target in targets
            if target.api == API_SELFTEST or present_here(target, version)]


def declared_columns(metric: t.Any) -> list[str]:
    """The sample columns the class declares it needs (``_required_columns``; 0.1.x: its
    ``evaluation_mode``)."""
    required = getattr(metric, "_required_columns", None)
    if isinstance(required, dict):
        return sorted({c for columns in required.values() for c in columns})
    mode = getattr(metric, "evaluation_mode", None)
    return [f"evaluation_mode={getattr(mode, 'name', mode)}"] if mode is not None else []


def frozen_embeddings(case: dict) -> t.Any:
    """The case's frozen embedding model (``embeddings``: text -> vector), content-keyed (imports Ragas):
    a modern ``BaseRagasEmbedding``, or - in a Ragas without that interface (0.1.x, 0.2.x) - a legacy
    ``BaseRagasEmbeddings`` (``stubs.legacy_embeddings``)."""
    vectors = case.get("embeddings") or {}
    try:
        return _probe_module("stubs.embeddings").FrozenEmbeddings(vectors)
    except ImportError:
        return _probe_module("stubs.legacy_embeddings").LegacyFrozenEmbeddings(vectors)


def frozen_classifier(target: Target, cls: type, case: dict, record: dict) -> t.ContextManager[t.Any]:
    """For the class's construction: the frozen classifier stub its constructor loads (``Target.classifier``,
    ``protocol.CLASSIFIERS``: FaithfulnesswithHHEM's HHEM model, ``stubs.hhem_classifier``), built on the case's
    frozen scores; ``record`` collects what the class asked it. Nothing for any other target."""
    if target.classifier is None:
        return contextlib.nullcontext()
    return _probe_module(CLASSIFIERS[target.classifier]).provided(case, cls.__module__, record)


def constructor_options(cls: type, options: dict) -> dict:
    """The row's options as the class takes them: a string given for a parameter whose default is
    an Enum member becomes that Enum's member (``distance_measure="jaro"`` ->
    ``DistanceMeasure.JARO`` of the class's own module). An option the class does not take raises
    ``TargetUnavailable``."""
    parameters = _constructor_parameters(cls)
    if parameters is None:
        return dict(options)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    unknown = [key for key in options if key not in parameters and not takes_any]
    if unknown:  # this release's class has no such configuration: an API fact, not the harness's error
        raise TargetUnavailable(f"this Ragas's {cls.__qualname__} takes no {', '.join(map(repr, unknown))} "
                                "option (the configuration does not exist in this release)")
    out = dict(options)
    for key, value in options.items():
        default = parameters[key].default if key in parameters else None
        if isinstance(value, str) and isinstance(default, enum.Enum):
            out[key] = type(default)(value)
    return out


@functools.cache
def _constructor_parameters(cls: type) -> t.Mapping[str, inspect.Parameter] | None:
    """``cls``'s constructor parameters (None when it has no readable signature), computed once per class."""
    try:
        return inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return None


def _record_received(metric: t.Any, fields: tuple[str, ...], received: dict,
                     renamed: t.Mapping[str, str] | None = None) -> None:
    """Wrap the instance's ``_single_turn_ascore`` (0.1.x: ``_ascore``) to record the sample
    Ragas hands it, under our field names (a field the sample declares under another name, ``renamed``,
    read under that name)."""
    renamed = renamed or {}
    name = "_single_turn_ascore" if hasattr(metric, "_single_turn_ascore") else "_ascore"
    inner = getattr(metric, name)

    async def recording(*args: t.Any, **kwargs: t.Any) -> t.Any:
        sample = kwargs.get("sample", kwargs.get("row", args[0] if args else None))
        if isinstance(sample, dict):
            received.update({f: jsonable(sample.get(ROW_NAMES_0_1.get(f, f))) for f in fields})
        else:
            received.update({f: jsonable(getattr(sample, renamed.get(f, f), None)) for f in fields})
        return await inner(*args, **kwargs)

    setattr(metric, name, recording)


def expect_prompts(target: Target, cls: type, metric: t.Any, case: dict, book: PromptBook) -> None:
    """Script the judge's answers for ``metric``; a class whose prompts no dialect reaches (``judge.dialects``:
    e.g. 0.3.x's collections layout) is the harness's limit, TargetNotScripted, never an error of Ragas."""
    try:
        target.expect_prompts(metric, case, book)
    except AttributeError as exc:
        raise TargetNotScripted(f"{cls.__qualname__} has no prompt interface the scripted judge "
                                f"knows ({exc})") from None


def record_value(result: ProbeResult, value: EncodedScore, book: PromptBook) -> None:
    """The row's value, the prompts Ragas asked and their templates' digests (prompt_hash)."""
    result["value"] = value
    result["prompts"] = len(book.asked)
    result["prompt_hashes"] = prompt_hash.per_kind(book.asked)


async def run_legacy_target(target: Target, case: dict) -> ProbeResult:
    """Score one case with one legacy target; every failure becomes the result's error value."""
    result = _new_result(case, target)
    book = cap_judge_calls(PromptBook())  # the budget's judge calls per (case, target)
    received: dict = {}
    events = telemetry_events.mark()  # what this row queues for Ragas's analytics (telemetry_events)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cls, exported = locate_legacy_class(target)
            result["ragas_class"] = f"{cls.__module__}.{cls.__qualname__}"
            sample_cls, judge_cls = _single_turn_sample(), legacy_judge_class()
            options = constructor_options(cls, target.options)
            if target.embeddings:
                options["embeddings"] = frozen_embeddings(case)
            classifier: dict = {}
            with frozen_classifier(target, cls, case, classifier):
                metric = instantiate(cls, llm=judge_cls(book), **options) if target.needs_judge else instantiate(
                    cls, **options)
            if target.classifier is not None:
                result["classifier"] = classifier  # filled further while the class predicts
            if target.embeddings and target.needs_judge:
                # as evaluate() does: AnswerCorrectness builds its AnswerSimilarity only in init(); scored
                # without it, it raises "AnswerSimilarity must be set" (ragas#1336)
                metric.init(_probe_module("stubs.legacy_llm").NO_RETRY)
            result["exported"] = exported
            result["required_columns"] = declared_columns(metric)
            expect_prompts(target, cls, metric, case, book)
            result["expected_prompts"] = book.expected_count
            if multi_turn.is_multi_turn(case):  # a MultiTurnSample, scored with multi_turn_ascore
                multi_turn.record_received(metric, target.fields_read, received, case)
                sample, result["fields_accepted"], result["fields_dropped"] = multi_turn.multi_turn_sample(
                    {f: case[f] for f in target.fields_read if f in case})
                scored = metric.multi_turn_ascore(sample)
            else:
                inputs = {f: case[f] for f in row_fields(sample_cls, metric, target.fields_read) if f in case}
                renamed = sample_renames(sample_cls, target.sample_names, inputs)
                if renamed:  # the name this release's sample declares the field under
                    result["fields_renamed"] = renamed
                    inputs = {renamed.get(f, f): value for f, value in inputs.items()}
                _record_received(metric, target.fields_read, received, renamed)
                sample, result["fields_accepted"], result["fields_dropped"] = adapt_inputs(sample_cls, inputs)
                scored = (metric.ascore(sample) if isinstance(sample, dict)
                          else metric.single_turn_ascore(sample))
            value = encode_score(await scored)
        except TargetUnavailable as exc:  # no such class or configuration here, or not scripted
            value = _unavailable(exc)
        except OverBudget as exc:  # Ragas did not finish within the case's budget (budget)
            value = exc.value(len(book.asked))
        except Exception as exc:
            value = _failure_value(book, exc)
        else:
            value = _checked_value(value, book.problems + book.unasked())
    result["received"] = received or None
    record_value(result, value, book)
    result["telemetry_events"] = telemetry_events.since(events)
    result["warnings"] = encode_warnings(caught)
    return result


# -- legacy functions ------------------------------------------------------------------------
def resolve_legacy_function(target: Target) -> t.Callable[..., t.Any]:
    """A function target as a user imports it, from its module (``ragas.metrics.quoted_spans``)."""
    try:
        function = getattr(importlib.import_module(target.module), target.class_name)
    except (ImportError, AttributeError) as exc:
        raise TargetUnavailable(f"this Ragas has no {target.module}.{target.class_name} ({exc})") from None
    if isinstance(function, type) or not callable(function):
        raise TargetUnavailable(f"{target.module}.{target.class_name} is not a function")
    return function


async def run_legacy_function(target: Target, case: dict) -> ProbeResult:
    """Score one case with a function of a dataset (``Target.function``): called on a dataset of this
    case alone, each argument a one-item list of the case field; the value is the returned mapping's entry."""
    assert target.function is not None
    result = _new_result(case, target)
    arguments, key = target.function
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            function = resolve_legacy_function(target)
            result["ragas_class"] = f"{function.__module__}.{function.__qualname__}"
            result["exported"] = False
            inputs = {f: case[f] for _, f in arguments if f in case}
            result["received"] = {f: jsonable(v) for f, v in inputs.items()}
            returned = function(**{p: [case.get(f)] for p, f in arguments})
            value = encode_score(returned[key]) if isinstance(returned, dict) and key in returned else error_record(
                TypeError(f"{target.class_name} returned no {key!r}: {returned!r}"), type_name="UnexpectedScoreType")
        except TargetUnavailable as exc:
            value = _unavailable(exc)
        except Exception as exc:
            value = error_record(exc, origin=HARNESS_ORIGIN if raised_by_probe(exc) else None)
    result["value"] = value
    result["prompts"] = 0
    result["warnings"] = encode_warnings(caught)
    return result


# -- collections -----------------------------------------------------------------------------
def resolve_collections_class(target: Target) -> type:
    """The class as a user imports it (``ragas.metrics.collections.X``), with an async ``ascore``."""
    try:
        module = importlib.import_module(target.module)
    except ImportError as exc:
        raise TargetUnavailable(
            f"this Ragas has no collections API ({target.module} cannot be imported: "
            f"{type(exc).__name__}: {exc})") from None
    cls = getattr(module, target.class_name, None)
    if not isinstance(cls, type):
        raise TargetUnavailable(f"this Ragas has no {target.module}.{target.class_name}")
    if not inspect.iscoroutinefunction(getattr(cls, "ascore", None)):
        raise TargetUnavailable(f"{target.module}.{target.class_name} has no async ascore() method")
    return cls


def collections_judge_class() -> type:
    """``FrozenInstructorJudge`` (it needs Ragas's instructor LLM interface)."""
    try:
        return _probe_module("stubs.collections_llm").FrozenInstructorJudge
    except ImportError as exc:
        raise TargetUnavailable(
            f"this Ragas has no instructor LLM interface (ragas.llms.base.InstructorBaseRagasLLM): {exc}"
        ) from None


def _metric_value(result: t.Any, kind: str | None = None) -> EncodedScore:
    """``MetricResult.value`` exactly (a bare number is taken as is); a category or a list where the
    target declares one (``Target.value_kind``: DiscreteMetric, RankingMetric)."""
    return encode_score(result.value if hasattr(result, "value") else result, kind)


async def run_collections_target(target: Target, case: dict) -> ProbeResult:
    """Score one case with one collections target; every failure becomes the result's error value."""
    result = _new_result(case, target)
    book = cap_judge_calls(PromptBook())  # the budget's judge calls per (case, target)
    judge = None
    inputs = {f: case[f] for f in target.fields_read if f in case}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cls = resolve_collections_class(target)
            result["ragas_class"] = f"{cls.__module__}.{cls.__qualname__}"
            judge = collections_judge_class()(book)
            options = constructor_options(cls, target.options)
            if target.embeddings:
                options["embeddings"] = frozen_embeddings(case)
            metric = instantiate(cls, llm=judge, **options) if target.needs_judge else instantiate(cls, **options)
            expect_prompts(target, cls, metric, case, book)
            result["expected_prompts"] = book.expected_count
            result["received"] = {f: jsonable(v) for f, v in inputs.items()}
            # a multi-turn case's messages and tool calls as ragas.messages objects, as a user passes them
            arguments = multi_turn.ragas_arguments(inputs) if multi_turn.is_multi_turn(case) else inputs
            value = _metric_value(await metric.ascore(**arguments))
        except TargetUnavailable as exc:
            value = _unavailable(exc)
        except OverBudget as exc:
            value = exc.value(len(book.asked))
        except Exception as exc:
            value = _failure_value(book, exc)
        else:
            value = _checked_value(value, book.problems + book.unasked() + (judge.rejected if judge else []))
    record_value(result, value, book)
    result["warnings"] = encode_warnings(caught)
    return result


# -- legacy classes given their LLM per call ------------------------------------------------
async def run_llm_per_call_target(target: Target, case: dict) -> ProbeResult:
    """Score one case with a ragas.metrics class that takes its LLM per call (``Target.llm_per_call``:
    NumericMetric, DiscreteMetric, RankingMetric): constructed from its configuration alone, scored with
    ``await metric.ascore(llm=<the scripted instructor judge>, **inputs)``; the value is the returned
    MetricResult's (a category or a list where ``Target.value_kind`` says so)."""
    result = _new_result(case, target)
    book = cap_judge_calls(PromptBook())
    judge = None
    inputs = {f: case[f] for f in target.fields_read if f in case}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cls, exported = locate_legacy_class(target)
            result["ragas_class"] = f"{cls.__module__}.{cls.__qualname__}"
            result["exported"] = exported
            judge = collections_judge_class()(book)
            options = constructor_options(cls, target.options)
            if target.value_kind == VALUE_LABEL and isinstance(options.get("allowed_values"), tuple):
                options["allowed_values"] = list(options["allowed_values"])  # DiscreteMetric's List[str], as users pass it
            metric = instantiate(cls, **options)
            expect_prompts(target, cls, metric, case, book)
            result["expected_prompts"] = book.expected_count
            result["received"] = {f: jsonable(v) for f, v in inputs.items()}
            value = _metric_value(await metric.ascore(llm=judge, **inputs), target.value_kind)
        except TargetUnavailable as exc:
            value = _unavailable(exc)
        except OverBudget as exc:
            value = exc.value(len(book.asked))
        except Exception as exc:
            value = _failure_value(book, exc)
        else:
            value = _checked_value(value, book.problems + book.unasked() + (judge.rejected if judge else []))
    record_value(result, value, book)
    result["warnings"] = encode_warnings(caught)
    return result


_RUNNERS = {API_LEGACY: run_legacy_target, API_COLLECTIONS: run_collections_target}


async def run_target(target: Target, case: dict) -> ProbeResult:
    """Score one case with one target of either API."""
    if target.function is not None:
        return await run_legacy_function(target, case)
    if target.llm_per_call:
        return await run_llm_per_call_target(target, case)
    return await _RUNNERS[target.api](target, case)
