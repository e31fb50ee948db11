"""Delta debugging: shrink one fuzz finding to a 1-minimal case, re-running Ragas on every candidate.

The fuzz run selects the smallest generated example of each classification among its unexplained
rows (what ``run`` would call drift: no rule or case entry of the run's expectations explains it,
``fuzz.runner.unexplained``; ``ragas_compat.tools.fuzz.shrink``); this module *shrinks* it. An
explained difference is never a starting point, and never a candidate that keeps a finding. A case is seen as a list of
**elements** (``elements``), each one removal or one cut ("removing" an element applies it):

- ``("retrieved_contexts", i)``: retrieved context i together with everything aligned with it:
  label i of every label-list verdict, entry i of every claim's ``contexts`` list (NoiseSensitivity)
  and the raw judge reply for context i (later indices renumbered);
- ``(key, i)``: item i of any other top-level list (``reference_contexts``, ``candidate_contexts``,
  ``retrieved_context_ids``, ``reference_context_ids``);
- ``("verdicts", key, j)``: claim j of a claim-list verdict (context recall, faithfulness, ...);
- ``("corpus_relevant_count",)``: the optional R;
- ``("shorten", text)``: a context text (retrieved, reference or candidate) cut to its first
  character everywhere it occurs, offered only when no other context text of the case starts with
  that character (so texts stay distinct and equal ones stay equal).

Removing elements (``without``) keeps a case self-consistent: one label per retrieved context, claim
lists aligned, R never below the relevant labels (removal only lowers their count), and context
texts distinct within the case, so the scripted judge, which answers by content, never sees two
prompts where it saw one. The texts ``user_input``, ``reference`` and ``response`` (keys of
``embeddings``), ``embeddings`` and flags are not reduced. Every candidate still goes through the
case-file loader and the reference of its metric; one either refuses (``HarnessInputError``, e.g. a
verdict table the metric needs complete) counts as "does not keep".

**What must be kept** (``Finding``): the same (Ragas target, metric, classification), still
unexplained under the same expectations (a candidate a rule explains is not the finding); for
``error`` also the same exception type and message, so the shrinker cannot slip from one Ragas
error to another (e.g. from an empty-array ``ValueError`` to a missing-input ``ValueError``).

**Search** (``DeltaDebugger``): Zeller and Hildebrandt's ddmin, batched. At granularity n the
current elements are split into n chunks; the candidates are each chunk alone and each complement
(the current set minus one chunk). A round costs one probe run (a probe imports Ragas, seconds;
the next round's probe starts importing when a round is handed over) whatever its size, so a round also holds every single removal while at most
``SINGLE_REMOVALS`` elements are left, and the current set without everything whose removal kept
the finding in the previous round, together with its own single removals (so the round that tries
it can also prove it 1-minimal). The smallest candidate that keeps the finding becomes current;
when none does, n doubles, and when none does in a round that held every single removal, the
case is **1-minimal**: no single removal (or cut) the loader accepts keeps the finding (for one
element, the empty set was tried). All candidates of one round, of every finding being shrunk, go to Ragas
in **one probe request**; ``max_rounds`` bounds the rounds, and a result the bound stopped says
so (``status`` "round bound": not proven minimal).
"""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragas_compat import runner as probe_runner
from ragas_compat.cases.loader import LABEL_LIST_VERDICTS, parse_suite
from ragas_compat.compare.audit import AuditRow
from ragas_compat.compare.expectations import Expectations
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.fuzz import runner as fuzz_runner
from ragas_compat.tools.fuzz.generator import fuzz_suite_document
from ragas_compat.tools.fuzz.shrink import example_case, example_size, smallest_per_target
from ragas_compat.values import RagasError

DEFAULT_SHRINK_ROUNDS = 12   # probe runs per fuzz run (all findings shrink in the same rounds)
MAX_SHRINK_ROUNDS = 200
CONTEXTS = "retrieved_contexts"
OPTIONAL_SCALARS = ("corpus_relevant_count",)
CONTEXT_TEXTS = ("retrieved_contexts", "reference_contexts", "candidate_contexts")
SHORTEN = "shorten"          # element (SHORTEN, text): that context text cut to its first character
SINGLE_REMOVALS = 64         # every single removal is a candidate once at most this many elements are left

# Status of a shrink (``Shrunk.status``).
MINIMAL = "1-minimal"                 # no single removal or cut keeps the finding
ROUND_BOUND = "round bound"           # max_rounds ran out first
NOT_REPRODUCED = "not reproduced"     # the starting example did not show the finding again
PROBE_FAILED = "probe failed"         # a probe run returned no results

Element = tuple[Any, ...]
Subset = tuple[int, ...]


# --------------------------------------------------------------------------- ddmin, one round at a time

def _chunks(items: Sequence[int], n: int) -> list[Subset]:
    """``items`` split into ``n`` contiguous chunks of near-equal length (the longer ones first)."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for k in range(n):
        stop = start + size + (1 if k < extra else 0)
        out.append(tuple(items[start:stop]))
        start = stop
    return out


def _clamp(n: int, size: int) -> int:
    return min(max(n, 2), size) if size else 0


def _without_one(kept: Subset) -> list[Subset]:
    return [tuple(j for j in kept if j != i) for i in kept]


@dataclass
class DeltaDebugger:
    """ddmin over the indices ``0 .. size-1``, stepped by the caller: ``candidates()`` lists the index
    subsets to test (at least one per round until ``done``), ``advance(keeps)`` takes one bool per
    candidate. ``kept`` is the current subset and always keeps the property (the caller checked the
    start). It is ``done`` when every subset of ``kept`` with one index fewer was tested in the last
    round and none kept the property: ``kept`` is 1-minimal.

    A round costs one probe run whatever its size, so besides ddmin's candidates (each chunk alone
    when there are more than 2, each complement) a round also holds, while ``kept`` has at most
    ``single_limit`` indices, every single removal (so any round can prove 1-minimality), and
    ``combined``: ``kept`` without every chunk or index whose removal kept the property in the last
    round, with each of its own single removals (so the round that finds it can also prove it
    1-minimal). The smallest passing candidate becomes ``kept`` (the first of the smallest, in the
    order listed). Nothing passing: done when the single removals were in the round, else the
    granularity doubles. ``single_limit=0`` is plain ddmin (no singles and no ``combined`` before
    one index per chunk)."""

    size: int
    single_limit: int = 0
    kept: Subset = ()
    granularity: int = 0
    done: bool = False
    combined: Subset | None = None

    def __post_init__(self) -> None:
        self.kept = tuple(range(self.size))
        self.granularity = _clamp(2, self.size) if self.size > 1 else self.size
        self.done = self.size == 0

    def _groups(self) -> list[tuple[str, Subset]]:
        """(kind, candidate) in order, each candidate once."""
        chunks = _chunks(self.kept, max(self.granularity, 1))
        groups: list[tuple[str, Subset]] = []
        if self.combined is not None:
            groups.append(("combined", self.combined))
            if len(self.combined) <= max(self.single_limit, 1):
                groups += [("combined", c) for c in _without_one(self.combined)]
        groups += [("chunk", chunk) for chunk in chunks] if self.granularity > 2 else []
        groups += [("complement", tuple(i for i in self.kept if i not in set(chunk))) for chunk in chunks]
        if self.granularity == len(self.kept) or len(self.kept) <= self.single_limit:
            groups += [("single", c) for c in _without_one(self.kept)]
        seen: set[Subset] = set()
        unique = []
        for kind, candidate in groups:
            if candidate not in seen:
                seen.add(candidate)
                unique.append((kind, candidate))
        return unique

    def candidates(self) -> list[Subset]:
        return [] if self.done else [candidate for _, candidate in self._groups()]

    def advance(self, keeps: Sequence[bool]) -> None:
        groups = [] if self.done else self._groups()
        if len(keeps) != len(groups):
            raise ValueError(f"{len(keeps)} answers for {len(groups)} candidates")
        if not groups:
            return
        answers = {candidate: keep for (_, candidate), keep in zip(groups, keeps, strict=True)}
        passing = [group for group in groups if answers[group[1]]]
        previous, self.combined = self.combined, None
        if passing:
            kind, best = min(passing, key=lambda group: len(group[1]))
            # indices whose removal alone kept the property: from kept, or from the previous combined
            removable = {i for k, c in passing if k in ("complement", "single") for i in self.kept if i not in c}
            removable |= {i for k, c in passing if k == "combined" and previous is not None and len(c) < len(previous)
                          for i in previous if i not in c}
            n = self.granularity
            self.kept = best
            self.granularity = _clamp(2 if kind == "chunk" else n - (kind == "complement"), len(self.kept))
            rest = tuple(i for i in self.kept if i not in removable)
            if kind != "chunk" and rest != self.kept and self.single_limit:
                self.combined = rest
        elif self.granularity < len(self.kept) and not all(c in answers for c in _without_one(self.kept)):
            self.granularity = _clamp(2 * self.granularity, len(self.kept))
        if len(self.kept) == 1:
            self.granularity = 1
        # 1-minimal: every single removal of kept was in this round and none kept the property
        self.done = all(answers.get(c) is False for c in _without_one(self.kept))


@dataclass(frozen=True)
class DdminResult:
    kept: Subset
    rounds: int
    candidates: int
    minimal: bool


def ddmin(size: int, keeps: Callable[[list[Subset]], Sequence[bool]], max_rounds: int | None = None,
          single_limit: int = 0) -> DdminResult:
    """Run ``DeltaDebugger`` over indices ``0 .. size-1`` (which must keep the property) with a batch
    predicate ``keeps(subsets) -> one bool per subset``, one call per round, at most ``max_rounds`` calls."""
    debugger = DeltaDebugger(size, single_limit)
    rounds = tested = 0
    while not debugger.done and (max_rounds is None or rounds < max_rounds):
        batch = debugger.candidates()
        answers = list(keeps(batch))
        rounds, tested = rounds + 1, tested + len(batch)
        debugger.advance(answers)
    return DdminResult(debugger.kept, rounds, tested, debugger.done)


# --------------------------------------------------------------------------- a case as elements to remove

def elements(case: Mapping[str, Any]) -> list[Element]:
    """The elements of a raw case (removals, then shortenings), in a fixed order (module docstring)."""
    found: list[Element] = []
    for key, value in case.items():
        if isinstance(value, list):
            found += [(key, i) for i in range(len(value))]
    for key, value in (case.get("verdicts") or {}).items():
        if key not in LABEL_LIST_VERDICTS and isinstance(value, list):
            found += [("verdicts", key, j) for j in range(len(value))]
    found += [(key,) for key in OPTIONAL_SCALARS if key in case]
    texts = [t for key in CONTEXT_TEXTS if isinstance(case.get(key), list) for t in case[key] if isinstance(t, str)]
    firsts = Counter(text[:1] for text in set(texts))
    found += [(SHORTEN, text) for text in dict.fromkeys(texts) if len(text) > 1 and firsts[text[:1]] == 1]
    return found


def _kept_indices(count: int, key: tuple[Any, ...], removed: set[Element]) -> list[int]:
    return [i for i in range(count) if (*key, i) not in removed]


def without(case: Mapping[str, Any], removed: Collection[Element]) -> dict[str, Any]:
    """A copy of ``case`` without the ``removed`` elements (and what is aligned with them), the
    ``("shorten", text)`` ones applied."""
    gone = set(removed)
    out: dict[str, Any] = json.loads(json.dumps(case))  # a deep copy of JSON data
    contexts = out.get(CONTEXTS)
    keep_contexts = _kept_indices(len(contexts), (CONTEXTS,), gone) if isinstance(contexts, list) else None

    def aligned(values: list[Any]) -> list[Any]:
        return [values[i] for i in keep_contexts if i < len(values)] if keep_contexts is not None else values

    for key, value in list(out.items()):
        if isinstance(value, list):
            out[key] = [value[i] for i in _kept_indices(len(value), (key,), gone)]
    verdicts = out.get("verdicts")
    for key, value in (verdicts or {}).items():
        if not isinstance(value, list):
            continue
        if key in LABEL_LIST_VERDICTS:
            verdicts[key] = aligned(value)
            continue
        claims = [value[j] for j in _kept_indices(len(value), ("verdicts", key), gone)]
        for claim in claims:
            if isinstance(claim, dict) and isinstance(claim.get("contexts"), list):
                claim["contexts"] = aligned(claim["contexts"])
        verdicts[key] = claims
    if isinstance(out.get("judge_replies"), dict) and keep_contexts is not None:
        renumber = {str(old): str(new) for new, old in enumerate(keep_contexts)}
        replies = {key: {renumber[i]: text for i, text in by_index.items() if i in renumber}
                   for key, by_index in out["judge_replies"].items() if isinstance(by_index, dict)}
        replies = {key: by_index for key, by_index in replies.items() if by_index}
        if replies:
            out["judge_replies"] = replies
        else:
            del out["judge_replies"]
    for key in OPTIONAL_SCALARS:
        if (key,) in gone:
            out.pop(key, None)
    short = {element[1]: element[1][:1] for element in gone if element[0] == SHORTEN}
    for key in CONTEXT_TEXTS:
        if short and isinstance(out.get(key), list):
            out[key] = [short.get(text, text) if isinstance(text, str) else text for text in out[key]]
    return out


def single_removals(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every case with exactly one element of ``case`` removed or shortened (what 1-minimality is about)."""
    return [without(case, [element]) for element in elements(case)]


def loader_accepts(case: Mapping[str, Any]) -> bool:
    """Does the case-file loader accept this case on its own? (Cached by content: a search meets
    the same candidate again, and schema validation costs milliseconds per case.)"""
    return _accepted(json.dumps(case, sort_keys=True, ensure_ascii=False))


@functools.lru_cache(maxsize=4096)
def _accepted(text: str) -> bool:
    try:
        parse_suite(fuzz_suite_document([json.loads(text)], 0), source="shrink candidate")
    except HarnessInputError:
        return False
    return True


# --------------------------------------------------------------------------- findings and probing

@dataclass(frozen=True)
class Finding:
    """What a candidate must still show to be kept."""

    target: str
    metric: str
    classification: str
    error: tuple[str, str] | None = None   # (exception type, message) for "error"

    @classmethod
    def of(cls, row: AuditRow) -> Finding:
        value = row.ragas_value
        error = (value.type, value.message) if isinstance(value, RagasError) else None
        return cls(row.target, row.spec.name, str(row.classification.name),
                   error if row.classification.name == "error" else None)

    def shown_by(self, row: AuditRow) -> bool:
        """The row shows this finding: same target, metric, classification (and error), and nothing explains it."""
        return ((row.target, row.spec.name) == (self.target, self.metric) and Finding.of(row) == self
                and fuzz_runner.unexplained(row))


@dataclass(frozen=True)
class Shrunk:
    """One finding shrunk: the starting example, the shrunk case and the row Ragas gave for it."""

    finding: Finding
    start: dict[str, Any]
    case: dict[str, Any]
    row: AuditRow | None          # the shrunk case's row (None when the start was not reproduced)
    rounds: int                   # probe rounds this finding took part in
    candidates: int               # candidate cases of this finding sent to Ragas
    status: str                   # MINIMAL, ROUND_BOUND, NOT_REPRODUCED or PROBE_FAILED
    detail: str = ""

    @property
    def minimal(self) -> bool:
        return self.status == MINIMAL

    @property
    def start_size(self) -> int:
        return example_size(self.start)

    @property
    def size(self) -> int:
        return example_size(self.case)


@dataclass
class _Search:
    finding: Finding
    start: dict[str, Any]
    parts: list[Element]
    debugger: DeltaDebugger
    row: AuditRow | None = None
    verified: bool = False
    rounds: int = 0
    candidates: int = 0
    status: str | None = None
    detail: str = ""
    # this round: each candidate's id in the probe batch (None: the loader refused it); the start's until verified
    pending_start: str | None = None
    pending: list[str | None] = field(default_factory=list)

    def case_of(self, kept: Subset) -> dict[str, Any]:
        chosen = set(kept)
        return without(self.start, [e for i, e in enumerate(self.parts) if i not in chosen])

    def result(self) -> Shrunk:
        case = self.case_of(self.debugger.kept) if self.verified else self.start
        status = self.status or (MINIMAL if self.verified and self.debugger.done else ROUND_BOUND)
        return Shrunk(self.finding, self.start, case, self.row, self.rounds, self.candidates, status, self.detail)


RoundCallback = Callable[[int, int, int], None]   # (round, searches in it, candidate cases sent)


def shrink_cases(starts: Sequence[tuple[dict[str, Any], Finding]], *, max_rounds: int = DEFAULT_SHRINK_ROUNDS,
                 python: str = sys.executable, sys_path_prefix: Sequence[str] = (), timeout: float | None = None,
                 probe: fuzz_runner.ProbeFunction | None = None, on_round: RoundCallback | None = None,
                 expectations: Expectations | None = None) -> list[Shrunk]:
    """Shrink each (raw case, finding) in lockstep, at most ``max_rounds`` probe runs in all: every
    round sends the candidates of every unfinished search to Ragas in one probe request (round 1
    also re-runs each starting case, which must show its finding). ``probe`` defaults to the fuzz
    runner's ``run_probe`` (looked up at call time; the real one runs as ``ProbeAhead``: each round's
    probe was started, and has been importing Ragas, since the round before); ``on_round`` is called
    after each round. ``expectations``: what explains a row (default: the pin's rules, as ``run``); a
    candidate they explain does not keep its finding."""
    expectations = expectations if expectations is not None else fuzz_runner.pin_expectations()
    searches = [_Search(finding, dict(case), elements(case), DeltaDebugger(len(elements(case)), SINGLE_REMOVALS))
                for case, finding in starts]
    probe = probe or fuzz_runner.run_probe
    ahead = fuzz_runner.ProbeAhead() if probe is probe_runner.run_probe else None
    try:
        for number in range(1, max_rounds + 1):
            active = [s for s in searches if s.status is None and not (s.verified and s.debugger.done)]
            if not active:
                break
            batch = _round_batch(active)
            rows = _probe_batch(batch, active, python, sys_path_prefix, timeout, ahead or probe, expectations)
            if on_round is not None:
                on_round(number, len(active), len(batch))
            if rows is None:
                break
            for search in active:
                _advance(search, rows)
    finally:
        if ahead is not None:
            ahead.close()
    return [s.result() for s in searches]


def _round_batch(active: Sequence[_Search]) -> dict[str, tuple[dict[str, Any], Finding]]:
    """The round's cases by their (unique) ids, each with the finding it is tested for; fills each
    search's ``pending`` ids."""
    batch: dict[str, tuple[dict[str, Any], Finding]] = {}

    def add(case: dict[str, Any], case_id: str, finding: Finding) -> str | None:
        if not loader_accepts(case):
            return None
        batch[case_id] = ({**case, "id": case_id}, finding)
        return case_id

    for number, search in enumerate(active):
        prefix = f"{search.start.get('id', 'case')}~shrink{number}"
        search.rounds += 1
        search.pending_start = None if search.verified else add(search.start, f"{prefix}.start", search.finding)
        search.pending = [add(search.case_of(subset), f"{prefix}.{k}", search.finding)
                          for k, subset in enumerate(search.debugger.candidates())]
        search.candidates += sum(1 for case_id in [search.pending_start, *search.pending] if case_id is not None)
    return batch


def _probe_batch(batch: Mapping[str, tuple[dict[str, Any], Finding]], active: Sequence[_Search], python: str,
                 sys_path_prefix: Sequence[str], timeout: float | None,
                 probe: fuzz_runner.ProbeFunction, expectations: Expectations) -> dict[str, list[AuditRow]] | None:
    """Run the batch through Ragas in one request and classify each case's result for its own
    finding's target and metric: case id -> rows (None when the probe failed). A case whose
    reference refuses it (``HarnessInputError``, e.g. a verdict table left incomplete) has no rows."""
    targets = list(dict.fromkeys(s.finding.target for s in active))
    cases = [case for case, _ in batch.values()]
    limit = timeout or max(fuzz_runner.BATCH_TIMEOUT_FLOOR, 2.0 * len(cases))
    run = probe(cases, python=python, sys_path_prefix=sys_path_prefix, targets=targets, timeout=limit)
    if not run.ok:
        for search in active:
            search.status, search.detail = PROBE_FAILED, str(run.error)
        return None
    results: dict[str, list[dict[str, Any]]] = {}
    for result in run.output.get("results", []):
        owner = batch.get(result.get("case_id"))
        if owner is not None and result.get("target") == owner[1].target:
            results.setdefault(result["case_id"], []).append(result)
    rows: dict[str, list[AuditRow]] = {}
    for case_id, own in results.items():
        case, finding = batch[case_id]
        try:
            rows[case_id] = list(fuzz_runner.classify_results(fuzz_runner.fuzz_suite([case], 0, validate=False),
                                                              {**run.output, "results": own}, (finding.metric,),
                                                              expectations))
        except HarnessInputError:
            rows[case_id] = []
    return rows


def _showing(search: _Search, rows: Mapping[str, list[AuditRow]], case_id: str | None) -> AuditRow | None:
    """The row of candidate ``case_id`` that shows the search's finding, if any."""
    return next((r for r in rows.get(case_id, []) if search.finding.shown_by(r)), None) if case_id else None


def _advance(search: _Search, rows: Mapping[str, list[AuditRow]]) -> None:
    if not search.verified:
        start_row = _showing(search, rows, search.pending_start)
        if start_row is None:
            search.status = NOT_REPRODUCED
            search.detail = "the starting example did not show the finding when run again on its own"
            return
        search.verified, search.row = True, start_row
    found = [_showing(search, rows, case_id) for case_id in search.pending]
    candidates = search.debugger.candidates()
    search.debugger.advance([row is not None for row in found])
    if search.debugger.kept in candidates and found[candidates.index(search.debugger.kept)] is not None:
        search.row = found[candidates.index(search.debugger.kept)]


# --------------------------------------------------------------------------- the fuzz run's findings

def shrink_fuzz_run(run: fuzz_runner.FuzzRun, *, max_rounds: int = DEFAULT_SHRINK_ROUNDS,
                    python: str = sys.executable, sys_path_prefix: Sequence[str] = (),
                    timeout: float | None = None, probe: fuzz_runner.ProbeFunction | None = None,
                    on_round: RoundCallback | None = None,
                    expectations: Expectations | None = None) -> fuzz_runner.FuzzRun:
    """The run with ``shrunk`` filled: for each classification among the unexplained rows
    (``fuzz_runner.unexplained_rows``: what ``run`` would call drift) and each Ragas target that
    produced it, the smallest selected example (``shrink.smallest_per_target``) shrunk to a 1-minimal
    case (or as far as ``max_rounds`` probe rounds got), under the run's ``expectations`` (default: the
    pin's rules). A rule-explained row is never shrunk. ``max_rounds`` 0: no shrinking."""
    check_shrink_rounds(max_rounds)
    keys, starts = [], []
    drift = fuzz_runner.unexplained_rows(run.rows)
    for name in dict.fromkeys(str(row.classification.name) for row in drift):
        for target, row in smallest_per_target(drift, name).items():
            keys.append((name, target))
            starts.append((example_case(row), Finding.of(row)))
    if not starts or max_rounds == 0:
        return replace(run, shrink_rounds=max_rounds)
    results = shrink_cases(starts, max_rounds=max_rounds, python=python, sys_path_prefix=sys_path_prefix,
                           timeout=timeout, probe=probe, on_round=on_round, expectations=expectations)
    return replace(run, shrink_rounds=max_rounds, shrunk=dict(zip(keys, results, strict=True)))


def check_shrink_rounds(rounds: int) -> None:
    """``--shrink-rounds`` within 0 .. MAX_SHRINK_ROUNDS (HarnessInputError, exit 2)."""
    if not 0 <= rounds <= MAX_SHRINK_ROUNDS:
        raise HarnessInputError(f"--shrink-rounds: {rounds}; expected 0 to {MAX_SHRINK_ROUNDS} probe rounds",
                                field="--shrink-rounds", value=rounds)
