"""What the harness knows about one metric: a ``MetricSpec`` holds every trait the rest of the
code needs, so adding a metric is one module that builds its specs (see ``ragas_compat.metrics.registry``).

Traits:

- the reference: ``compute(case) -> ReferenceOutcome`` (exact values, alternatives under Ragas's
  known semantics), the denominator and the undefined policy in words;
- the inputs: ``requires`` (case inputs that must be present for the metric to apply, e.g.
  ``"verdicts.faithfulness"``, ``"reference_contexts"``), ``reads`` (optional further inputs),
  ``fields_read`` (the sample fields the Ragas classes read), ``verdicts`` (the verdict key and
  whether it holds one label per retrieved context or a claim list);
- the Ragas side: ``ragas`` (:class:`RagasTargets`: the legacy and collections classes the probe
  scores it with, their module, configuration, judge script and embeddings; THE one declaration of
  a Ragas target, sent to the probe as data: ``probe_targets``), ``ragas_targets`` (their
  ``TargetId``s, derived) and ``as_given`` (the value with verdicts taken as given, no coercion:
  how the legacy-vs-collections pairing recognises a path that does not coerce);
- the tools: ``fuzz_inputs`` (the case inputs for one fuzz draw) and ``explain`` (how
  ``ragas-compat explain`` builds a one-case input and which quantities it shows);
- options as data: ``configure(options)`` says whether this metric is the one that reads a case's
  configuration of its Ragas class (``"targets": {"legacy:SemanticSimilarity": {"threshold": 0.0}}``,
  ``ragas_compat.cases.configurations``) and returns the reference computation under those options
  (None: another metric of the class reads them); ``configured`` is the metric so configured, for one
  API's class, named ``target_name(api, class, options)``.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from ragas_compat.cases.model import Case
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.probe.protocol import FunctionCall, TargetSpec, target_name
from ragas_compat.vocabulary import Api, TargetId

# Case texts every case carries; they are not inputs whose presence or size matters.
TEXT_FIELDS = ("user_input", "reference", "response")


@dataclass(frozen=True)
class Verdicts:
    """The frozen judge output a metric reads: ``verdicts.<key>``.

    ``kind`` is ``"labels"`` (one label per retrieved context, rank order) or ``"claims"`` (a list of
    ``{"statement", <label_key>}`` objects; an empty list means the judge produced zero claims)."""

    key: str
    kind: Literal["labels", "claims"]
    label_key: str | None = None


@dataclass(frozen=True)
class Quantity:
    """A reference quantity shown by ``explain``: exact (Fraction / int), a float, or None (undefined)."""

    name: str
    value: Fraction | int | float | None
    note: str = ""


@dataclass(frozen=True)
class ExplainInput:
    """What ``ragas-compat explain`` parsed from the command line."""

    labels: tuple[object, ...] = ()
    corpus_relevant: int | None = None
    retrieved: tuple[object, ...] = ()   # --retrieved: IDs, or context texts (takes "texts")
    reference: tuple[object, ...] = ()   # --reference: likewise
    human: dict[str, object] | None = None
    judge: dict[str, object] | None = None


@dataclass(frozen=True)
class ExplainAdapter:
    """How ``ragas-compat explain <command>`` explains the metric on one input.

    ``takes``: ``"labels"`` (LABELS, e.g. ``1,0,1``), ``"ids"`` / ``"texts"`` (``--retrieved`` and
    ``--reference`` as JSON lists of IDs / of context texts) or ``"label_maps"`` (``--human`` /
    ``--judge`` JSON objects). ``case_inputs`` turns the input
    into case keys (generated, distinct contexts and claims, so the scripted judge can answer every
    prompt by content); ``quantities`` lists the reference quantities and the formulas with the
    numbers substituted."""

    command: str
    takes: Literal["labels", "ids", "texts", "label_maps"]
    inputs_help: str
    targets: tuple[TargetId, ...]
    case_inputs: Callable[[ExplainInput], dict[str, Any]]
    quantities: Callable[[ReferenceOutcome, ExplainInput], tuple[list[Quantity], list[str]]]
    takes_corpus_relevant: bool = False


@dataclass(frozen=True)
class FuzzDraw:
    """Every input one fuzz case draws (``ragas_compat.tools.fuzz.generator``), whatever is fuzzed.

    A metric's ``fuzz_inputs`` picks the ones it reads. ``rng`` is a generator private to the
    metric and the case, for inputs no other metric shares (drawing from it never changes what
    other metrics get)."""

    retrieved_contexts: list[str]
    ranked_labels: list[Any]          # one label per retrieved context (labels vs the reference)
    ranked_labels_alt: list[Any]      # a second, independent label list (labels vs the response)
    corpus_relevant: int | None       # R, drawn only when ranked_labels are 0/1
    reference_contexts: list[str]
    attributed_claims: list[dict[str, Any]]  # {"statement", "attributed"} claims
    verdict_claims: list[dict[str, Any]]     # {"statement", "verdict"} claims
    retrieved_ids: list[Any]
    reference_ids: list[Any]
    rng: random.Random = field(default_factory=random.Random)


@dataclass(frozen=True)
class RagasTargets:
    """The Ragas classes one metric is compared with, as the probe scores them: every target is
    declared here and nowhere else (the probe receives them as data, ``MetricSpec.probe_targets``).

    Each class of ``legacy`` and ``collections`` is one target, named ``target_name(api, class,
    options)`` (``legacy:FactualCorrectness[mode=precision]``); all of them read the metric's
    ``fields_read`` (a class that reads fewer: ``class_fields``), apply when its ``requires`` are present
    and are asked the same prompts."""

    legacy: tuple[str, ...] = ()         # ragas.metrics classes (scored with single_turn_ascore)
    collections: tuple[str, ...] = ()    # ragas.metrics.collections classes (scored with ascore(**inputs))
    legacy_module: str = ""              # where the legacy classes live when ragas.metrics does not export them
    options: tuple[tuple[str, Any], ...] = ()   # the configuration: constructor keywords, named in the target
    settings: tuple[tuple[str, Any], ...] = ()  # further constructor keywords, not named (options win)
    judge: str | None = None             # the probe's judge script (a key of its judge.script_table.SCRIPTS);
                                         # None: the classes need no LLM
    embeddings: bool = False             # the classes take the frozen, content-keyed embedding model
    # the legacy entries are functions, not classes (``ragas.metrics.quoted_spans.quoted_spans_alignment``):
    # how the probe calls one on a dataset of the case alone: ((parameter, case field), ...), the result's
    # key (protocol.FunctionCall)
    function: tuple[tuple[tuple[str, str], ...], str] | None = None
    # the legacy entries take their LLM per call, not at construction: ``await metric.ascore(llm=..., **inputs)``
    # returning a MetricResult (ragas.metrics.NumericMetric); not an evaluate() metric
    llm_per_call: bool = False
    # what the classes return when it is not a number (probe protocol VALUE_LABEL: a category,
    # DiscreteMetric; VALUE_RANKING: a list, RankingMetric); None: a number
    value_kind: str | None = None

    # classes that exist in some releases only: (API:class, first release with it, first release without
    # it, the class of the same API that replaced it there or ""), e.g. ("legacy:RubricsScoreWithReference",
    # "0.2.0", "0.2.6", "RubricsScore"): the API is named, as a name can return in the other one. Where the running Ragas lacks such a class
    # its target makes no row (the probe leaves it out: no finding in a run of another release); the
    # matrix shows the missing class and, at the rename, compares the cell with the successor's
    releases: tuple[tuple[str, str, str, str], ...] = ()
    # case fields some releases' samples declare under another name: (case field, that name). The probe
    # passes the field under that name where this Ragas's SingleTurnSample lacks the field and declares
    # the name (Ragas 0.2.0-0.2.5: ``rubric`` for ``rubrics``), and records it (``fields_renamed``)
    sample_names: tuple[tuple[str, str], ...] = ()
    # classes that read fewer of the case's fields than the metric's ``fields_read``: (API:class, the fields it
    # reads, the first release where it reads the metric's fields or "" for none), e.g.
    # ("legacy:RubricsScoreWithoutReference", ("user_input", "response", "retrieved_contexts"), ""). Its
    # target's ``fields_read`` (TargetSpec; with a release: ``fields_read_before``, the probe's Ragas below
    # it): the probe neither passes nor records a field the class never reads, so Ragas's column filter
    # dropping it is no input Ragas scored otherwise (no ``coercion``)
    class_fields: tuple[tuple[str, tuple[str, ...], str], ...] = ()

    def fields_of(self, api: str, ragas_class: str, metric_fields: tuple[str, ...]) -> tuple[str, ...]:
        """The fields the class reads in every release: its ``class_fields`` entry without a release, else
        the metric's ``fields_read``."""
        return next((fields for name, fields, until in self.class_fields
                     if name == target_name(api, ragas_class) and not until), metric_fields)

    def fields_before(self, api: str, ragas_class: str) -> tuple[str, tuple[str, ...]] | None:
        """(release, the fields the class reads below it) of a ``class_fields`` entry with a release."""
        return next(((until, fields) for name, fields, until in self.class_fields
                     if name == target_name(api, ragas_class) and until), None)

    def release_bounds(self, api: str, ragas_class: str) -> tuple[str, str, str] | None:
        """(first release, first release without it, successor class or "") of a class of ``releases``."""
        return next(((first, below, successor) for name, first, below, successor in self.releases
                     if name == target_name(api, ragas_class)), None)
    # the legacy entries are constructed with a frozen classifier stub (probe protocol CLASSIFIERS: "hhem" for
    # FaithfulnesswithHHEM, whose constructor loads a Hugging Face model); not an evaluate() metric
    classifier: str | None = None

    def ids(self) -> tuple[TargetId, ...]:
        """The targets' names: the legacy classes, then the collections classes."""
        return self._ids

    @functools.cached_property
    def _ids(self) -> tuple[TargetId, ...]:
        # made once per instance (the fields are frozen; ``dataclasses.replace`` makes a new one): the audit
        # asks for a metric's targets on every row
        return tuple(TargetId(target_name(api.value, ragas_class, self.options))
                     for api, classes in ((Api.LEGACY, self.legacy), (Api.COLLECTIONS, self.collections))
                     for ragas_class in classes)


# Case inputs that are flags: a target requiring one applies when it is true (the others: when present).
FLAG_FIELDS = tuple(f.name for f in dataclasses.fields(Case) if str(f.type).replace(" ", "") == "bool|None")


@dataclass(frozen=True)
class MetricSpec:
    """One metric (see the module docstring for the traits)."""

    name: str
    reference_on: str                        # the case input the reference reads, in words
    ragas: RagasTargets | None               # the Ragas classes it is compared with; None = reference only
    fields_read: tuple[str, ...]             # SingleTurnSample fields the Ragas classes read
    denominator: str                         # what the value is divided by, in words
    undefined_policy: str                    # what happens on an empty denominator, both sides
    compute: Callable[[Case], ReferenceOutcome]
    requires: tuple[str, ...]                # inputs that must be present ("verdicts.<key>" or a case field)
    reads: tuple[str, ...] = ()              # further inputs read when present
    verdicts: Verdicts | None = None
    as_given: Callable[[Sequence[int]], float] | None = None
    fuzz_inputs: Callable[[FuzzDraw], dict[str, Any]] | None = None
    explain: ExplainAdapter | None = None
    # options as data: the reference under a case's configuration of the class, when this metric reads it
    configure: Callable[[Mapping[str, Any]], Callable[[Case], ReferenceOutcome] | None] | None = None
    # set on a copy ``configured`` by a case: the configuration's options (None: the built-in one)
    configuration: tuple[tuple[str, Any], ...] | None = None
    # True: its classes score multi-turn cases (Ragas's MultiTurnSample: user_input a list of messages)
    multi_turn: bool = False

    def configured(self, api: str, ragas_class: str, options: tuple[tuple[str, Any], ...]) -> MetricSpec | None:
        """This metric with ``options`` for ``api``'s ``ragas_class`` (one target: its only class), or None
        when it does not read that configuration (another metric of the class does, or none)."""
        if self.configure is None or self.ragas is None:
            return None
        on_api = self.ragas.legacy if api == Api.LEGACY.value else self.ragas.collections
        if ragas_class not in on_api:
            return None
        compute = self.configure(dict(options))
        if compute is None:
            return None
        legacy, collections = ((ragas_class,), ()) if api == Api.LEGACY.value else ((), (ragas_class,))
        ragas = dataclasses.replace(self.ragas, legacy=legacy, collections=collections, options=tuple(options))
        return dataclasses.replace(self, ragas=ragas, compute=compute, configuration=tuple(options))

    @property
    def reference_key(self) -> str:
        """What tells two of its reference computations apart: the name, and a case's configuration."""
        if self.configuration is None:
            return self.name
        return self.name + "[" + ",".join(f"{key}={value!r}" for key, value in self.configuration) + "]"

    def applies_to(self, case: Case) -> bool:
        """True when the case holds every input the metric requires."""
        return all(_present(case, name) for name in self.requires)

    def outcome(self, case: Case) -> ReferenceOutcome:
        """The reference outcome on ``case``; HarnessInputError when the metric does not apply."""
        if not self.applies_to(case):
            raise HarnessInputError(
                f"case {case.id!r}: metric {self.name!r} does not apply: it needs {self.reference_on}",
                field=self.name, value=case.id)
        return self.compute(case)

    @property
    def case_inputs(self) -> tuple[str, ...]:
        """Every case key the metric reads beyond the texts (``verdicts.<key>`` for a verdict)."""
        keys = [f for f in self.fields_read if f not in TEXT_FIELDS] + list(self.requires) + list(self.reads)
        return tuple(dict.fromkeys(keys))

    @property
    def ragas_targets(self) -> tuple[TargetId, ...]:
        """Its targets' names, legacy then collections; () = reference only."""
        return self.ragas.ids() if self.ragas is not None else ()

    def targets_of(self, api: Api) -> tuple[TargetId, ...]:
        return tuple(t for t in self.ragas_targets if t.api is api)

    def probe_targets(self) -> tuple[TargetSpec, ...]:
        """Each of its targets as a probe request carries it (``protocol.TargetSpec``), in
        ``ragas_targets`` order."""
        if self.ragas is None:
            return ()
        ragas = self.ragas
        requires = {"verdicts": [name.removeprefix("verdicts.") for name in self.requires
                                 if name.startswith("verdicts.")],
                    "fields": [name for name in self.requires
                               if not name.startswith("verdicts.") and name not in FLAG_FIELDS],
                    "flags": [name for name in self.requires if name in FLAG_FIELDS]}
        specs: list[TargetSpec] = []
        for target, ragas_class in zip(self.ragas_targets, (*ragas.legacy, *ragas.collections), strict=True):
            spec: TargetSpec = {"api": target.api.value, "ragas_class": ragas_class,
                                "module": ragas.legacy_module if target.api is Api.LEGACY else "",
                                "options": [list(pair) for pair in ragas.options],
                                "settings": [list(pair) for pair in ragas.settings],
                                "metric": self.name, "judge": ragas.judge,
                                "fields_read": list(ragas.fields_of(target.api.value, ragas_class, self.fields_read)),
                                "verdict_key": self.verdicts.key if self.verdicts is not None else None,
                                "embeddings": ragas.embeddings, "requires": requires}  # type: ignore[typeddict-item]
            if ragas.function is not None and target.api is Api.LEGACY:
                spec["function"] = FunctionCall(arguments=[list(p) for p in ragas.function[0]], value=ragas.function[1])
            if ragas.llm_per_call and target.api is Api.LEGACY:
                spec["llm_per_call"] = True
            bounds = ragas.release_bounds(target.api.value, ragas_class)
            if bounds is not None:
                spec["releases"] = [bounds[0], bounds[1]]
            before = ragas.fields_before(target.api.value, ragas_class)
            if before is not None:
                spec["fields_read_before"] = [before[0], list(before[1])]
            if ragas.sample_names and target.api is Api.LEGACY:
                spec["sample_names"] = [list(pair) for pair in ragas.sample_names]
            if ragas.value_kind is not None:
                spec["value_kind"] = ragas.value_kind
            if ragas.classifier is not None and target.api is Api.LEGACY:
                spec["classifier"] = ragas.classifier
            specs.append(spec)
        return tuple(specs)


def _present(case: Case, name: str) -> bool:
    if name.startswith("verdicts."):
        return name.removeprefix("verdicts.") in case.verdicts
    return getattr(case, name) is not None


def ratio_text(num: int, den: int, undefined: str) -> str:
    """``"2/4 = 1/2"``, ``"2/3"`` (already in lowest terms), or ``"0/0: undefined (...)"``."""
    if den == 0:
        return f"{num}/{den}: undefined ({undefined})"
    reduced = str(Fraction(num, den))
    return f"{num}/{den}" if reduced == f"{num}/{den}" else f"{num}/{den} = {reduced}"
