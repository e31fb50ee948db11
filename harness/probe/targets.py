"""The targets of a request: the Ragas classes the host asks the probe to score, as the probe runs them.

The host declares every target (its registry, ``ragas_compat.metrics``) and sends each one as data
(``protocol.TargetSpec``): the class and API, the module a legacy class lives in, the configuration
(constructor keywords; ``options`` are named in the target, ``settings`` are not), the fields the class
reads, when it applies to a case, the judge script driving its LLM (by name: ``judge.script_table``), its
verdict key and whether it takes the frozen embedding model. :class:`Target` is one such spec; the
runners (``scoring``) score it: legacy through ``single_turn_ascore`` on a ``SingleTurnSample``,
collections through ``ascore(**inputs)``. The probe holds no list of targets of its own.

Standard library only: importing this module does not import Ragas (the probe checks a request's
targets before Ragas is imported).
"""

from __future__ import annotations

import dataclasses
import re
import typing as t
from dataclasses import dataclass

from .judge.dialects import dialect_book, prompts_for
from .judge.prompt_book import PromptBook
from .judge.script_table import SCRIPTS
from .judge.scripts import PROMPTS_BY_API, PromptAdapter, Script
from .protocol import API_COLLECTIONS, API_SELFTEST, TargetSpec, has_inputs, spec_name, target_name, target_problem

COLLECTIONS_MODULE = "ragas.metrics.collections"


class BadTargets(ValueError):
    """A request's targets are malformed or name a judge script the probe does not have."""


class TargetUnavailable(Exception):
    """The running Ragas has no such class (or, for a collections target, no collections API)."""


class TargetNotScripted(TargetUnavailable):
    """The class exists but asks its judge through an interface the scripted judge cannot answer
    (an earlier collections API): it is not scored, and that is the harness's limit, not Ragas's."""


def _value(value: t.Any) -> t.Any:
    """An option value as the constructor gets it: JSON has no tuples, so a list is passed as a tuple."""
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class Target:
    """One Ragas class of one API, configured, run for one of the host's metrics (a ``TargetSpec``)."""

    api: str                # "legacy" | "collections" | "selftest"
    class_name: str
    module: str             # legacy: the private fallback module; collections: the module a user imports from
    metric: str = ""
    fields_read: tuple[str, ...] = ()
    named_options: tuple[tuple[str, t.Any], ...] = ()   # the configuration named in the target
    settings: tuple[tuple[str, t.Any], ...] = ()        # further constructor keywords
    judge: str | None = None
    verdict_key: str | None = None
    embeddings: bool = False
    requires_verdicts: tuple[str, ...] = ()
    requires_fields: tuple[str, ...] = ()
    requires_flags: tuple[str, ...] = ()
    case_ids: frozenset[str] | None = None   # the only cases it scores (None: every case with its inputs)
    function: tuple[tuple[tuple[str, str], ...], str] | None = None  # a function target: (arguments, value key)
    llm_per_call: bool = False  # scored with ascore(llm=..., **inputs), constructed without an LLM (NumericMetric)
    value_kind: str | None = None  # protocol.VALUE_LABEL / VALUE_RANKING: it returns a category / a list
    releases: tuple[str, str] | None = None  # (first release with the class, first without): no row where absent
    sample_names: tuple[tuple[str, str], ...] = ()  # (case field, the name an earlier sample declares it under)
    classifier: str | None = None  # constructed with this frozen classifier stub (protocol.CLASSIFIERS)
    # (release, fields): below that release the class reads only those fields (``for_release``)
    fields_read_before: tuple[str, tuple[str, ...]] | None = None

    @classmethod
    def from_spec(cls, spec: TargetSpec, case_sets: dict[int, frozenset[str]] | None = None) -> Target:
        """The target ``spec`` describes; ``case_sets`` (by the ``id`` of a spec's ``cases`` list) lets
        targets given one list share one set (``targets_from_request``)."""
        if spec["api"] == API_SELFTEST:
            return cls(API_SELFTEST, spec["ragas_class"], "")
        module = spec["module"] or (COLLECTIONS_MODULE if spec["api"] == API_COLLECTIONS else "")
        requires = spec["requires"]
        target = cls(spec["api"], spec["ragas_class"], module, spec["metric"], tuple(spec["fields_read"]),
                   tuple((k, _value(v)) for k, v in spec["options"]),
                   tuple((k, _value(v)) for k, v in spec["settings"]),
                   spec["judge"], spec["verdict_key"], spec["embeddings"], tuple(requires["verdicts"]),
                   tuple(requires["fields"]), tuple(requires["flags"]),
                   _case_set(spec["cases"], case_sets) if "cases" in spec else None,
                   (tuple((p, f) for p, f in spec["function"]["arguments"]), spec["function"]["value"])
                   if "function" in spec else None, bool(spec.get("llm_per_call")), spec.get("value_kind"),
                   classifier=spec.get("classifier"))
        if "fields_read_before" in spec:
            release, fields = spec["fields_read_before"]
            target = dataclasses.replace(target, fields_read_before=(release, tuple(fields)))
        if "releases" not in spec and "sample_names" not in spec:
            return target
        first, below = spec["releases"] if "releases" in spec else (None, None)
        return dataclasses.replace(target, releases=(first, below) if first is not None else None,
                                   sample_names=tuple((f, n) for f, n in spec.get("sample_names", ())))

    @property
    def name(self) -> str:
        return target_name(self.api, self.class_name, self.named_options)

    @property
    def variant(self) -> str:
        """The configuration's suffix of the name (``[mode=precision]``), ``""`` for the default one."""
        return self.name[len(target_name(self.api, self.class_name)):]

    @property
    def options(self) -> dict[str, t.Any]:
        """Constructor keyword arguments of the configuration (beyond ``llm`` and ``embeddings``)."""
        return {**dict(self.settings), **dict(self.named_options)}

    def applies(self, case: dict) -> bool:
        """The case holds every input the target requires and is one of its cases (a selftest target
        applies to every case)."""
        if self.case_ids is not None and case.get("id") not in self.case_ids:
            return False
        return has_inputs(case, self.requires_verdicts, self.requires_fields, self.requires_flags)

    def within_releases(self, version: str | None) -> bool:
        """Does ``version`` (this Ragas's ``__version__``) lie within the target's ``releases`` (True when it
        declares none, or the version has no release number)?"""
        if self.releases is None:
            return True
        found, first, below = (release_number(v) for v in (version, *self.releases))
        return found is None or first is None or below is None or first <= found < below

    def for_release(self, version: str | None) -> Target:
        """The target as this Ragas (``__version__``) runs it: below its ``fields_read_before`` release it
        reads only those fields (the probe neither passes nor records the others); unchanged otherwise, and
        where the version has no release number."""
        if self.fields_read_before is None:
            return self
        found, below = release_number(version), release_number(self.fields_read_before[0])
        if found is None or below is None or found >= below:
            return self
        return dataclasses.replace(self, fields_read=self.fields_read_before[1])

    @property
    def needs_judge(self) -> bool:
        return self.judge is not None

    @property
    def script(self) -> Script | None:
        return None if self.judge is None else SCRIPTS[self.judge](self)

    @property
    def prompts(self) -> PromptAdapter:
        return PROMPTS_BY_API[self.api]

    def expect_prompts(self, metric: t.Any, case: dict, book: PromptBook) -> None:
        """Script the judge of ``metric`` (an instance of this class) for ``case``, through the prompt
        dialect the instance offers (``judge.dialects.prompts_for``)."""
        script = self.script
        if script is not None:
            adapter = prompts_for(self.api, metric)
            script(adapter, metric, case, dialect_book(adapter, book))


def release_number(version: str | None) -> tuple[int, ...] | None:
    """The release a version string starts with (``"0.2.6.dev3+g1a2b3c"`` -> ``(0, 2, 6)``); None without one."""
    match = re.match(r"\d+(?:\.\d+)*", version or "")
    return tuple(int(part) for part in match.group(0).split(".")) if match else None


def _case_set(cases: list[str], sets: dict[int, frozenset[str]] | None) -> frozenset[str]:
    """``frozenset(cases)``, made once per list object when ``sets`` is given (``from_spec``)."""
    if sets is None:
        return frozenset(cases)
    found = sets.get(id(cases))
    if found is None:
        found = sets[id(cases)] = frozenset(cases)
    return found


def case_list_sharer() -> t.Callable[[dict], dict]:
    """A ``json.load`` ``object_hook`` for a probe request that makes equal case-id strings one object
    (each object's ``id``, each target's ``cases``) and equal ``cases`` lists of ids one list, as each
    object is parsed. The host lists, for each target some case configures, every case that keeps it:
    a 50,000-case request of the bundled suite copied names about 60 ids per case in 115 lists, of
    which 32 differ; parsed apart, they (and a set of each) held a few hundred MB in the probe and,
    forked, in each worker. Shared as they are parsed, one list is apart at a time."""
    ids: dict[str, str] = {}
    lists: dict[tuple[str, ...], list[str]] = {}

    def share(obj: dict) -> dict:
        if isinstance(obj.get("id"), str):
            obj["id"] = ids.setdefault(obj["id"], obj["id"])
        cases = obj.get("cases")
        if isinstance(cases, list) and cases and all(isinstance(case_id, str) for case_id in cases):
            key = tuple(cases)
            if key not in lists:
                lists[key] = [ids.setdefault(case_id, case_id) for case_id in key]
            obj["cases"] = lists[key]
        return obj

    return share


def targets_from_request(raw: object) -> tuple[Target, ...]:
    """The request's ``targets`` list as :class:`Target`s, in order; ``BadTargets`` says what is wrong."""
    if not isinstance(raw, list):
        raise BadTargets("'targets' must be a list of target objects")
    unknown = [name for name in raw if isinstance(name, str)]  # a name the host's registry does not declare
    if unknown:
        raise BadTargets(f"unknown targets {unknown}: no registered metric declares them")
    problems = [problem for problem in map(target_problem, raw) if problem]
    if problems:
        raise BadTargets("; ".join(problems))
    unknown = sorted({spec["judge"] for spec in raw if spec.get("judge") is not None} - set(SCRIPTS))
    if unknown:
        raise BadTargets(f"known judge scripts: {', '.join(SCRIPTS)}; unknown judge scripts {unknown}")
    case_sets: dict[int, frozenset[str]] = {}  # a request's targets often list the same cases (share_case_lists)
    targets = tuple(Target.from_spec(spec, case_sets) for spec in raw)
    names = [spec_name(spec) for spec in raw]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise BadTargets(f"a target may be requested once: {repeated}")
    return targets
