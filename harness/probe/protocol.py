"""The probe's protocol with the host (standard library only): how it is started, what goes in, what comes out.

Shared by both sides of the subprocess boundary: the probe (the package ``ragas_compat_probe``, which
imports this as ``ragas_compat_probe.protocol``) and the host (``ragas_compat.runner``,
``ragas_compat.values``, which import ``ragas_compat.probe.protocol``: the one module of the probe the
host may import). Nothing here imports Ragas or anything of the harness outside the probe.

- the launch (:func:`probe_command`): the probe's folder is loaded as the package :data:`PACKAGE`
  (a name no Ragas environment has) by a bootstrap that adds nothing to ``sys.path``, and an entry
  module of it runs as ``__main__``;
- the request (:class:`ProbeRequest`), one result record (:class:`ProbeResult`) and the whole
  output document (:class:`ProbeOutput`), at :data:`PROBE_FORMAT`, laid out with one result per
  line after :data:`RESULTS_LINE`;
- the probe's exit codes;
- the target-name prefixes (``legacy:``, ``collections:``, ``selftest:``);
- the score encoding. JSON has no NaN, so a score is written as

  * a float, exactly (``json`` writes ``repr``, so the double round-trips, ``-0.0`` included);
  * ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` for the non-finite values;
  * ``{"error": {"type": ..., "message": ...}}`` when Ragas (or the probe around it) raised;
  * ``{"label": "pass"}`` for a category a class returns (a DiscreteMetric's value, :class:`Label`) and
    ``{"ranking": ["b", "a"]}`` for a list it returns (a RankingMetric's, :class:`Ranking`): values that
    are not numbers, only from a target that declares them (``TargetSpec["value_kind"]``).

  :func:`encode_float` is the one NaN/Infinity encoder of the code base; :func:`decode_score`
  is its inverse (errors decode to :class:`ScoreError`).
"""

from __future__ import annotations

import math
import numbers
import os
import typing as t
from dataclasses import dataclass

# -- the launch -----------------------------------------------------------------------------
PACKAGE = "ragas_compat_probe"  # the probe's import name in the Ragas environment: nothing there can shadow it
PROBE_DIR = os.path.dirname(os.path.abspath(__file__))  # the package's folder (harness/probe/)
# entry modules (relative to PACKAGE; "" is the package itself, i.e. its __main__)
ENTRY_PROBE = ""                    # score a request (``__main__``)
ENTRY_RECORD = "record"             # record a live judge (``record/__main__``)
ENTRY_LOCATE = "locate"             # where Ragas would be imported from, without importing it
ENTRY_BENCHMARK = "bench.benchmark"  # the probe's cost per context vs a minimal stub loop
ENTRY_STUB_LOOP = "bench.stub_loop"  # the minimal stub loop alone (fuzz throughput floor)

# ``python -c BOOTSTRAP FOLDER ENTRY ARGS...``: drop the working folder ``-c`` puts first on sys.path
# (unless safe_path already did), load FOLDER as the package PACKAGE, run PACKAGE[.ENTRY] as __main__
# with ``sys.argv = [its file, *ARGS]``. Nothing is added to sys.path, so every other import (Ragas
# and its dependencies) resolves exactly as in the environment; PYTHONPATH (a Ragas checkout's src/)
# and the user's site-packages still apply. Python 3.9+.
BOOTSTRAP = f"""import sys
if not getattr(sys.flags, "safe_path", False):
    del sys.path[0]
import importlib.util, os, runpy
folder, entry = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location({PACKAGE!r}, os.path.join(folder, "__init__.py"),
                                              submodule_search_locations=[folder])
package = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = package
spec.loader.exec_module(package)
sys.argv = [sys.argv[0]] + sys.argv[3:]
runpy.run_module(spec.name + ("." + entry if entry else ""), run_name="__main__", alter_sys=True)
"""


def probe_command(python: str, entry: str, *args: str, python_flags: t.Sequence[str] = ()) -> list[str]:
    """The command line that runs the probe's ``entry`` module (an ``ENTRY_*``) under ``python``."""
    return [python, *python_flags, "-c", BOOTSTRAP, PROBE_DIR, entry, *args]


# 1: one indented JSON document; 2: the same document laid out with ``results`` last, opened by
# RESULTS_LINE and followed by one compact result per line, so the host can read them one at a time.
PROBE_FORMAT = 2
RESULTS_LINE = ' "results": ['

# -- exit codes of the probe ---------------------------------------------------------------
EXIT_OK = 0              # output written (per-result errors included)
EXIT_BAD_REQUEST = 2     # the request was refused (stderr says why); no output
EXIT_RAGAS_IMPORT = 3    # Ragas could not be imported; output written with ragas.import_error

# -- the scripted judge's replies ----------------------------------------------------------
# the reason every frozen verdict is given with (the probe's scripts; the stub loops of ``bench`` reply with
# it too, so Ragas parses the same replies on both sides of a ratio)
FROZEN_REASON = "frozen verdict (ragas-compat scripted judge)"

# -- starting ahead of the request ---------------------------------------------------------
# ``probe --wait REQUEST.json --host-pid PID``: write LOCATED_FILE (``locate``'s answer) beside REQUEST.json,
# import Ragas, then wait for REQUEST.json to appear (the host writes it atomically), while the host,
# process PID (the host's ``os.getpid()``), is alive: the probe stops waiting once it has gone, even if it
# died before the probe started (without HOST_PID_FLAG the host is the probe's parent when it starts).
# ``probe REQUEST.json``: the request is there already.
WAIT_FLAG = "--wait"
HOST_PID_FLAG = "--host-pid"
LOCATED_FILE = "located.json"
TELEMETRY_ENV = "RAGAS_COMPAT_TELEMETRY"  # "on": the probe leaves Ragas's telemetry on (the probe reads it first)
IMPORTED_FILE = "imported.txt"  # written beside REQUEST.json once the import is over (watched by benchmarks)
PROGRESS_PREFIX = "progress-"  # "<folder>/progress-<request>-<worker>.txt" holds "done total" (cases and
                               # evaluate runs); <request>: the request file's name without ".json"

# -- target names: "<api>:<ClassName>" -----------------------------------------------------
API_LEGACY = "legacy"
API_COLLECTIONS = "collections"
API_SELFTEST = "selftest"
LEGACY_PREFIX = API_LEGACY + ":"
COLLECTIONS_PREFIX = API_COLLECTIONS + ":"
SELFTEST_PREFIX = API_SELFTEST + ":"


Options = t.Sequence[t.Sequence[t.Any]]  # a configuration: (keyword, value) pairs, in naming order


def option_text(value: object) -> str:
    """An option value as a target name spells it: a sequence joined by commas (``1.0,0.0``), a mapping
    (BleuScore's and ChrfScore's sacrebleu ``kwargs``) as ``{key=value,...}`` in its own order, else ``str``."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}={option_text(v)}" for key, v in value.items()) + "}"
    return ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


def target_name(api: str, class_name: str, options: Options = ()) -> str:
    """THE target name: ``legacy:Faithfulness``, ``collections:ContextRecall``; a non-default
    configuration follows the class, ``legacy:FactualCorrectness[mode=precision]``,
    ``legacy:RougeScore[rouge_type=rougeL,mode=fmeasure]``. Both sides name targets with this only."""
    suffix = "[" + ",".join(f"{key}={option_text(value)}" for key, value in options) + "]" if options else ""
    return f"{api}:{class_name}{suffix}"


# -- the targets of a request ---------------------------------------------------------------
class TargetRequirements(t.TypedDict):
    """When a target applies to a case: every listed input is present."""

    verdicts: list[str]   # keys of the case's "verdicts" object
    fields: list[str]     # case keys whose value is not null
    flags: list[str]      # case keys whose value is true ("string_metrics", ...)


class _TargetSpecRequired(t.TypedDict):

    api: str                      # "legacy" | "collections" | "selftest"
    ragas_class: str              # the class name
    module: str                   # legacy: the private module it lives in when ragas.metrics does not
                                  # export it; collections: "" (ragas.metrics.collections)
    options: list[list[t.Any]]    # [keyword, value] pairs: the configuration, named in the target
    settings: list[list[t.Any]]   # further constructor [keyword, value] pairs, not named (options win)
    metric: str                   # the host's metric name, copied into each result
    fields_read: list[str]        # sample fields / ascore keyword arguments the class reads
    judge: str | None             # the judge script driving its LLM, by name (judge.script_table); null: no LLM
    verdict_key: str | None       # verdicts.<key> holds the judge's frozen replies
    embeddings: bool              # it takes the frozen, content-keyed embedding model
    requires: TargetRequirements


class FunctionCall(t.TypedDict):
    """How the probe calls a legacy target that is a function of a dataset, not a class
    (``ragas.metrics.quoted_spans.quoted_spans_alignment(answers, sources)``): each ``[parameter, case
    field]`` of ``arguments`` is passed as a one-item list (a dataset of the case alone), and the score is
    the returned mapping's ``value`` entry."""

    arguments: list[list[str]]
    value: str


class TargetSpec(_TargetSpecRequired, total=False):
    """One Ragas class of one API, configured, for one of the host's metrics: all the probe knows of it.

    The probe names it ``target_name(api, ragas_class, options)``; selftest targets need only ``api``
    (``"selftest"``) and ``ragas_class`` (the selftest's name). ``cases``: the ids of the only cases it
    scores (a configuration some cases name, ``"targets"`` in the case file; a built-in one that some
    cases replace); absent: every case that has its inputs."""

    cases: list[str]
    function: FunctionCall   # a legacy function target (``ragas_class`` is the function's name)
    llm_per_call: bool       # a legacy class given its LLM per call: ``ascore(llm=..., **inputs)`` (NumericMetric)
    value_kind: str          # VALUE_LABEL / VALUE_RANKING: the class returns a category / a list, not a number
    releases: list[str]      # [first release with the class, first release without it]: where this Ragas
                             # lacks the class, the target makes no row (a class of some releases only)
    sample_names: list[list[str]]  # [case field, name]: passed under that name where this Ragas's
                                   # SingleTurnSample lacks the field and declares the name (``rubric``)
    classifier: str          # a legacy class constructed with a frozen classifier stub, by name (CLASSIFIERS)
    fields_read_before: list  # [release, [fields]]: below that release the class reads only those fields


TARGET_SPEC_KEYS = frozenset(_TargetSpecRequired.__annotations__)
# The frozen classifiers a legacy class may be constructed with (TargetSpec "classifier"): name -> the probe
# stub module providing it while the class is constructed (FaithfulnesswithHHEM's HHEM model)
CLASSIFIERS = {"hhem": "stubs.hhem_classifier"}


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _pairs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                           for p in value)


def target_problem(raw: object) -> str | None:
    """What is wrong with one item of a request's ``targets`` (None: it is a ``TargetSpec``)."""
    if not isinstance(raw, dict):
        return f"a target must be an object, not {type(raw).__name__}"
    if raw.get("api") == API_SELFTEST:
        return None if isinstance(raw.get("ragas_class"), str) else "a selftest target needs its 'ragas_class'"
    missing = sorted(TARGET_SPEC_KEYS - set(raw))
    if missing:
        return f"target {raw.get('ragas_class')!r} lacks {missing}"
    requires = raw["requires"]
    checks = {
        "api": raw["api"] in (API_LEGACY, API_COLLECTIONS),
        "ragas_class": isinstance(raw["ragas_class"], str) and bool(raw["ragas_class"]),
        "module": isinstance(raw["module"], str),
        "options": _pairs(raw["options"]), "settings": _pairs(raw["settings"]),
        "metric": isinstance(raw["metric"], str), "fields_read": _strings(raw["fields_read"]),
        "judge": raw["judge"] is None or isinstance(raw["judge"], str),
        "verdict_key": raw["verdict_key"] is None or isinstance(raw["verdict_key"], str),
        "embeddings": isinstance(raw["embeddings"], bool),
        "requires": isinstance(requires, dict) and set(requires) == set(TargetRequirements.__annotations__)
        and all(_strings(v) for v in requires.values()),
        "cases": "cases" not in raw or _strings(raw["cases"]),
        "function": "function" not in raw or (
            raw["api"] == API_LEGACY and isinstance(raw["function"], dict)
            and set(raw["function"]) == {"arguments", "value"} and isinstance(raw["function"]["value"], str)
            and isinstance(raw["function"]["arguments"], list)
            and all(_strings(p) and len(p) == 2 for p in raw["function"]["arguments"])),
        "llm_per_call": "llm_per_call" not in raw or (raw["api"] == API_LEGACY and raw["llm_per_call"] is True),
        "value_kind": "value_kind" not in raw or raw["value_kind"] in VALUE_KINDS,
        "releases": "releases" not in raw or (_strings(raw["releases"]) and len(raw["releases"]) == 2),
        "sample_names": "sample_names" not in raw or (raw["api"] == API_LEGACY and isinstance(raw["sample_names"], list)
                                                      and all(_strings(p) and len(p) == 2 for p in raw["sample_names"])),
        "classifier": "classifier" not in raw or (raw["api"] == API_LEGACY and raw["classifier"] in CLASSIFIERS),
        "fields_read_before": "fields_read_before" not in raw or (
            isinstance(raw["fields_read_before"], list) and len(raw["fields_read_before"]) == 2
            and isinstance(raw["fields_read_before"][0], str) and _strings(raw["fields_read_before"][1])),
    }
    bad = [key for key, ok in checks.items() if not ok]
    return f"target {raw.get('ragas_class')!r}: malformed {bad}" if bad else None


def spec_name(spec: TargetSpec) -> str:
    """The name of a requested target."""
    return target_name(spec["api"], spec["ragas_class"], spec.get("options") or ())


def has_inputs(case: dict, verdicts: t.Iterable[str], fields: t.Iterable[str], flags: t.Iterable[str]) -> bool:
    """THE rule of whether a case holds a target's inputs: every verdict key, every field (not null) and every
    flag (true) it requires. The probe's ``Target.applies`` and the host's check that the shards of one run
    hold every row (``tools.shards``) read it."""
    given = case.get("verdicts") or {}
    return (all(key in given for key in verdicts) and all(case.get(name) is not None for name in fields)
            and all(case.get(name) is True for name in flags))


def spec_applies(spec: TargetSpec, case: dict, case_ids: t.Container[str] | None = None) -> bool:
    """Does the requested target ``spec`` score ``case`` (``Target.applies`` on the spec): the case is one of
    its ``cases`` when it names them (``case_ids``: those as a set, for a caller asking of many cases), and
    holds its inputs (``has_inputs``)."""
    if "cases" in spec and case.get("id") not in (spec["cases"] if case_ids is None else case_ids):
        return False
    requires = spec["requires"]
    return has_inputs(case, requires["verdicts"], requires["fields"], requires["flags"])


# -- the documents -------------------------------------------------------------------------
class _ErrorDetailRequired(t.TypedDict):
    type: str
    message: str


class ErrorDetail(_ErrorDetailRequired, total=False):
    origin: str  # HARNESS_ORIGIN when the harness raised it (its probe, scripted judge or frozen model)


# An error's "origin" when the harness's own code raised it, not Ragas: the probe's code, its scripted
# judge that has no frozen answer (StubMismatch) or cannot drive a class (TargetNotScripted), its frozen
# embedding model. Absent: Ragas raised it.
HARNESS_ORIGIN = "harness"
# Exceptions only the harness raises: an error of these types is the harness's whatever its record says.
HARNESS_ERROR_TYPES = frozenset({"StubMismatch", "TargetNotScripted", "ProbeFormatError"})
# The probe's error for a class or configuration this Ragas does not have: a fact about Ragas, not raised by it.
UNAVAILABLE_TYPE = "TargetUnavailable"


class ErrorValue(t.TypedDict):
    """An exception in place of a value: ``{"error": {"type", "message"[, "origin"]}}``."""

    error: ErrorDetail


class LabelValue(t.TypedDict):
    """A category in place of a number: ``{"label": "pass"}`` (a DiscreteMetric's value)."""

    label: str


class RankingValue(t.TypedDict):
    """A list in place of a number: ``{"ranking": ["b", "a"]}`` (a RankingMetric's value), in its order."""

    ranking: list[str]


# float | "NaN" | "Infinity" | "-Infinity" | error | label | ranking
EncodedScore = t.Union[float, str, ErrorValue, LabelValue, RankingValue]


# -- the per-case budget ---------------------------------------------------------------------
class Budget(t.TypedDict):
    """What one (case, target) may take before the probe stops it (``ProbeRequest["budget"]``; the
    recording probe: per (sample, metric)). A case over it is ONE result whose value is a
    :data:`BUDGET_ERROR_TYPE` error ("Ragas did not finish (...)"); the other cases and the run go on."""

    judge_calls: int            # calls to the judge per (case, target) beyond the prompts its script holds
    judge_chars: int            # characters of the prompts the judge receives per (case, target) (a
                                # release nesting each format-fix prompt in the next grows them 2x a call)
    case_seconds: float         # wall seconds per (case, target)
    memory: int | None          # bytes one (case, target) may allocate beyond what the probe holds when it
                                # starts (RLIMIT_DATA, see budget.limit_memory); null: no limit


# sane for every bundled case (the longest asks 13 calls and scores in well under a second); the memory
# is far above what a case allocates (a 10,000-case run grows the probe by 0.5 GB in all) and keeps an
# allocation bomb under 1 GiB resident (the probe holds about 0.25 GB once Ragas is imported)
DEFAULT_BUDGET: Budget = {"judge_calls": 50, "judge_chars": 16 * 2**20, "case_seconds": 60.0,
                          "memory": 2**29}
BUDGET_ERROR_TYPE = "BudgetExceeded"  # a case stopped by the budget (origin: whose code looped or grew)
BUDGET_PREFIX = "Ragas did not finish"


def budget_problem(raw: object) -> str | None:
    """What is wrong with a request's ``budget`` (None: absent or well-formed; missing keys take defaults)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return "'budget' must be an object"
    unknown = sorted(set(raw) - set(DEFAULT_BUDGET))
    if unknown:
        return f"'budget' has unknown keys {unknown}"
    calls, chars, seconds, space = (raw.get(k, DEFAULT_BUDGET[k])  # type: ignore[literal-required]
                                    for k in ("judge_calls", "judge_chars", "case_seconds", "memory"))
    for key, count in (("judge_calls", calls), ("judge_chars", chars)):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            return f"'budget.{key}' must be a positive integer"
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
            or seconds <= 0:
        return "'budget.case_seconds' must be a positive, finite number"
    if space is not None and (isinstance(space, bool) or not isinstance(space, int) or space < 2**20):
        return "'budget.memory' must be null or a number of bytes (at least 1 MiB)"
    return None


def full_budget(raw: object) -> Budget:
    """The request's budget with the defaults for what it leaves out (``raw`` checked by ``budget_problem``)."""
    given = raw if isinstance(raw, dict) else {}
    return t.cast(Budget, {key: given.get(key, default) for key, default in DEFAULT_BUDGET.items()})


def budget_message(what: str, budget: Budget, calls: int, chars: int = 0) -> str:
    """``Ragas did not finish (51 judge calls)``, ``(memory)``, ``(time)``: the message of a case the budget
    stopped, with the limit it ran into and the judge calls it made."""
    if what == "judge calls":
        return (f"{BUDGET_PREFIX} ({calls} judge calls): the probe stops a case and target "
                f"{budget['judge_calls']} judge calls past the prompts its script answers")
    if what == "prompt size":
        return (f"{BUDGET_PREFIX} (memory): its prompts to the judge reached {chars:,} characters in {calls} "
                f"judge calls; the probe stops a case and target at {budget['judge_chars']:,}")
    if what == "memory":
        space = budget["memory"]
        limit = f"the {space / 2**30:g} GiB of memory the probe lets a case allocate" if space \
            else "the machine's memory"
        return f"{BUDGET_PREFIX} (memory): it ran out of {limit} after {calls} judge calls"
    return (f"{BUDGET_PREFIX} (time): still running after {budget['case_seconds']:g} s per case and target, "
            f"{calls} judge calls")


class _ProbeRequestRequired(t.TypedDict):
    cases: list[dict[str, t.Any]]  # raw case dicts (the case-file format)
    targets: list[TargetSpec]      # what to score (each case by each target that applies to it), in output order


class ProbeRequest(_ProbeRequestRequired, total=False):
    """The JSON file named on the probe's command line."""

    output: str                # where to write the ProbeOutput; absent: stdout
    evaluate: bool | dict[str, t.Any]  # also run Ragas's evaluate()/aevaluate() (the probe's evaluate module)
    workers: int               # processes forked after the import to score the cases (default 1)
    next_request: str          # a chained request: after writing "output", wait for this file and serve it
    budget: Budget             # per (case, target) limits (DEFAULT_BUDGET for what it leaves out)


class WarningRecord(t.TypedDict):
    category: str
    message: str


class _ProbeResultRequired(t.TypedDict):
    case_id: str | None
    target: str                 # "legacy:ClassName" | "collections:ClassName" | "selftest:name"
    api: str                    # "legacy" | "collections" | "selftest"
    metric: str                 # our metric name (ragas_compat.metrics.registry)
    ragas_class: str | None     # "module.QualName" of the class that ran; None when unresolved
    fields_read: list[str]
    received: dict[str, t.Any] | None  # the inputs as the metric received them (our field names)
    value: EncodedScore | None  # None only while the record is being filled
    prompts: int                # prompts the scripted judge was asked
    expected_prompts: int       # prompts the frozen verdicts provide
    warnings: list[WarningRecord]


class ProbeResult(_ProbeResultRequired, total=False):
    """One (case, target) record of ``ProbeOutput["results"]``; the optional keys are legacy-only but
    ``prompt_hashes`` (both APIs); ``telemetry_events`` is legacy-only (the collections classes queue none)."""

    exported: bool                # the class is importable as ragas.metrics.<name>
    required_columns: list[str]   # the sample columns the class declares
    fields_accepted: list[str]    # inputs the sample (or 0.1.x row) took
    fields_dropped: list[str]     # inputs this Ragas's sample does not declare
    fields_renamed: dict[str, str]  # case field -> the name this Ragas's sample declares it under (sample_names)
    prompt_hashes: dict[str, str]  # prompt kind -> digest of the templates the judge was shown (prompt_hash)
    telemetry_events: list[dict[str, t.Any]]  # events the row queued for Ragas's analytics (telemetry_events)
    classifier: dict[str, t.Any]  # what the class asked its frozen classifier stub (model, kwargs, devices, batches)


class _ProbeOutputRequired(t.TypedDict):
    probe_format: int
    python: dict[str, t.Any]          # version, implementation, executable
    ragas: dict[str, t.Any]           # version, file, import_error, import_warnings
    telemetry: dict[str, t.Any]       # RAGAS_DO_NOT_TRACK, do_not_track
    network_attempts: list[dict[str, t.Any]]
    results: list[ProbeResult]


class ProbeOutput(_ProbeOutputRequired, total=False):
    """The document the probe writes."""

    evaluate: dict[str, t.Any]        # {"settings", "runs"} when the request asked for it


# -- score encoding ------------------------------------------------------------------------
NON_FINITE: dict[str, float] = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def encode_float(value: float) -> float | str:
    """A float as JSON: itself, or "NaN" / "Infinity" / "-Infinity"."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def encode_error(type_name: str, message: str, origin: str | None = None) -> ErrorValue:
    """``{"error": {"type": type_name, "message": message}}``, with ``"origin": origin`` when given."""
    detail: ErrorDetail = {"type": type_name, "message": message}
    if origin is not None:
        detail["origin"] = origin
    return {"error": detail}


def error_record(exc: BaseException, type_name: str | None = None, origin: str | None = None) -> ErrorValue:
    """The error value of an exception (its class name unless ``type_name`` is given)."""
    return encode_error(type_name or type(exc).__name__, str(exc), origin)


# What a target's class returns when it is not a number (``TargetSpec["value_kind"]``; absent: a number).
VALUE_LABEL = "label"      # a str (DiscreteMetric): {"label": ...}
VALUE_RANKING = "ranking"  # a list of str (RankingMetric): {"ranking": [...]}
VALUE_KINDS = (VALUE_LABEL, VALUE_RANKING)


def encode_score(value: object, kind: str | None = None) -> EncodedScore:
    """A Ragas score as JSON; anything but a real number is an ``UnexpectedScoreType`` error. A target
    whose ``kind`` is VALUE_LABEL returns a str, VALUE_RANKING a list of str (anything else is that error)."""
    if kind == VALUE_LABEL:
        if isinstance(value, str):
            return {"label": value}
        return error_record(TypeError(f"score is not a label (str): {value!r} ({type(value).__name__})"),
                            type_name="UnexpectedScoreType")
    if kind == VALUE_RANKING:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return {"ranking": list(value)}
        return error_record(TypeError(f"score is not a ranking (list of str): {value!r} ({type(value).__name__})"),
                            type_name="UnexpectedScoreType")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return error_record(TypeError(f"score is not a real number: {value!r} ({type(value).__name__})"),
                            type_name="UnexpectedScoreType")
    return encode_float(float(value))


@dataclass(frozen=True)
class ScoreError:
    """A decoded error value (``origin``: HARNESS_ORIGIN when the harness raised it, else None)."""

    type: str
    message: str
    origin: str | None = None


@dataclass(frozen=True)
class Label:
    """A decoded category (``{"label": text}``). Its repr is the str's: ``'pass'``."""

    text: str

    def __repr__(self) -> str:
        return repr(self.text)

    __str__ = __repr__


@dataclass(frozen=True)
class Ranking:
    """A decoded ranked list (``{"ranking": [...]}``), in its order. Its repr is the list's: ``['b', 'a']``."""

    items: tuple[str, ...]

    def __repr__(self) -> str:
        return repr(list(self.items))

    __str__ = __repr__


def decode_score(raw: object) -> float | ScoreError | Label | Ranking:
    """Inverse of :func:`encode_score`; a value outside the encoding is a ``ProbeFormatError``."""
    if isinstance(raw, dict) and set(raw) == {"label"} and isinstance(raw["label"], str):
        return Label(raw["label"])
    if isinstance(raw, dict) and set(raw) == {"ranking"} and isinstance(raw["ranking"], list) \
            and all(isinstance(item, str) for item in raw["ranking"]):
        return Ranking(tuple(raw["ranking"]))
    if isinstance(raw, dict) and "error" in raw:
        error = raw["error"]
        origin = error.get("origin")
        return ScoreError(str(error.get("type", "Error")), str(error.get("message", "")),
                          None if origin is None else str(origin))
    if isinstance(raw, str) and raw in NON_FINITE:
        return NON_FINITE[raw]
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return ScoreError("ProbeFormatError", f"unexpected value {raw!r} in probe output", HARNESS_ORIGIN)
    return float(raw)


# -- the other fields of a result ----------------------------------------------------------
def encode_warnings(caught: list) -> list[WarningRecord]:
    """Captured ``warnings.WarningMessage`` objects as ``{"category", "message"}``."""
    return [{"category": w.category.__name__, "message": str(w.message)} for w in caught]


def jsonable(value: object) -> object:
    """A received input (e.g. a pydantic-validated sample field) as plain JSON."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return encode_score(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return repr(value)


def new_result(case: dict, target: str, api: str, metric: str, fields_read: t.Iterable[str]) -> ProbeResult:
    """The record of one (case, target) before scoring; the runner fills in the rest."""
    return {
        "case_id": case.get("id"), "target": target, "api": api,
        "metric": metric, "ragas_class": None, "fields_read": list(fields_read),
        "received": None, "value": None, "prompts": 0, "expected_prompts": 0, "warnings": [],
    }
