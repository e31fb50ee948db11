"""Recorded live scores vs their offline replay (case files written by ``ragas-compat record``).

A recorded case carries ``recording.live``: per Ragas target, the score Ragas gave with the live
judge. Replaying the case (the scripted judge answering with the verdicts Ragas parsed) must
reproduce it bit for bit: the same float (compared by its bits, so ``-0.0`` is not ``0.0``), both
NaN, or the same error type and message. ``replay_problems(audit)`` lists, as
``(case_id, target, classification, message)``:

- a replayed row whose value differs from the recorded live value;
- a recorded live value the case cannot replay (``recording.not_replayable``, e.g. an unparseable
  reply to a claim-list prompt), whose target therefore has no row, unless an expectations file's
  ``[[not_replayable]]`` entry (what ``expect bless`` writes) names it with the reason the recording
  still lists: the accounting still counts it "not replayable (why)" and says the file accepted it. A
  changed reason, a target no entry names, or a live value the harness raised stays a problem, and so
  does an entry naming a case of the run whose recording does not list that target as not replayable
  (a stale entry);
- a replayed row whose live run the verdicts do not hold completely (``recording.not_frozen``, e.g.
  faithfulness statements the NLI reply did not judge): the replay may reproduce the score, but not
  the live prompts, so it is reported too (with the value comparison).

- a live outcome frozen as "Ragas raised before asking the judge" (``recording.raised``: exception type,
  the input fact, zero judge calls) whose replayed row does not raise the same type (Ragas's own error,
  not the harness's) on the same input without asking its judge; one that does is reproduced (the type
  is compared, not the message, which Python and Ragas may word differently);

- a replayed row whose live run retried a reply (a recorded call with more than one reply: Ragas's "fix
  output format" prompt, instructor's re-ask) that reproduces the value but asks its judge another number
  of prompts than the live run made judge calls: the retry was not given to Ragas call for call (a case
  recorded before ``record`` wrote ``judge_calls``, or one whose key also holds ``judge_replies``), so
  the value came from the parsed verdicts, not from Ragas's retry path. One that asks as many is counted
  "call for call";

- a recorded live value with no replayed row and no such reason (a verdict key deleted from the
  recording, a target this replay does not produce): nothing compared it, so it is not passed over.

Only a live target whose metrics the run left out with ``--metric`` (``provenance["metrics"]``) is
*unchecked*, and it is counted as such. ``ragas_compat.compare.verdict`` turns each problem into a
``replay_mismatch`` finding; ``replay_account(audit)`` counts every live score once
(``ReplayAccount.line``: "replay: N live scores, N reproduced bit for bit, R raised the recorded
exception type again before asking the judge, K not replayable (why), 0 unchecked"), for the terminal and the reports.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragas_compat.values import NON_NUMERIC, RagasError, decode_ragas_value


def same_value(live: Any, replayed: Any) -> bool:
    """Bit-for-bit equality of two decoded Ragas values."""
    if isinstance(live, RagasError) or isinstance(replayed, RagasError):
        return (isinstance(live, RagasError) and isinstance(replayed, RagasError)
                and (live.type, live.message) == (replayed.type, replayed.message))
    if isinstance(live, NON_NUMERIC) or isinstance(replayed, NON_NUMERIC):  # a label, a ranking: equal or not
        return live == replayed
    if isinstance(live, float) and isinstance(replayed, float):
        if math.isnan(live) or math.isnan(replayed):
            return math.isnan(live) and math.isnan(replayed)
        return struct.pack("<d", live) == struct.pack("<d", replayed)
    return False


# a replayed float this close to the live one (in units in the last place) differs only as two Pythons compute
# it, when the recording's Python is not the replay's: CPython 3.12 made sum() of floats exact, which moves
# Ragas's averages by an ulp or two (tests/data/python_sum_order_cases.json: 405 of 2,046 0/1 lists)
PYTHON_ULPS = 16


# an error message CPython words otherwise from one version to the next (3.11 -> 3.12), each way
PYTHON_REWORDINGS = frozenset({
    frozenset({"max() arg is an empty sequence", "max() iterable argument is empty"}),
    frozenset({"min() arg is an empty sequence", "min() iterable argument is empty"}),
})


def python_minor(version: Any) -> str | None:
    """``3.11`` of CPython's ``3.11.7`` (None for anything else: no Python 3 version)."""
    parts = str(version or "").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and parts[0] == "3" and parts[1].isdigit() else None


def python_difference(live: Any, replayed: Any) -> bool:
    """Two values that are not the same (``same_value``) but differ only as two Python versions compute
    them: finite floats within PYTHON_ULPS of each other, or the same exception type from Ragas whose
    message one Python words as the other does (``PYTHON_REWORDINGS``: ``max() arg is an empty sequence``
    became ``max() iterable argument is empty`` in 3.12). Asked only when the recording's Python is not the
    replay's."""
    if isinstance(live, RagasError) or isinstance(replayed, RagasError):
        return (isinstance(live, RagasError) and isinstance(replayed, RagasError) and live.type == replayed.type
                and not live.raised_by_harness and not replayed.raised_by_harness
                and frozenset({live.message.strip(), replayed.message.strip()}) in PYTHON_REWORDINGS)
    if type(live) is float and type(replayed) is float and math.isfinite(live) and math.isfinite(replayed):
        return abs(live - replayed) <= PYTHON_ULPS * math.ulp(max(abs(live), abs(replayed)))
    return False


def _shown(value: Any) -> str:
    if isinstance(value, RagasError):
        return f"error {value.type}: {(value.message.strip().splitlines() or [''])[0][:160]}"
    return repr(value)


def _selected(audit: Any) -> frozenset[str] | None:
    """The metrics the run was limited to (``--metric``), or None for all."""
    chosen = (getattr(audit, "provenance", None) or {}).get("metrics")
    return frozenset(chosen) if chosen else None


def _left_out(target: str, selected: frozenset[str] | None) -> bool:
    """True when ``--metric`` left out every metric the registry compares ``target`` with."""
    if selected is None:
        return False
    from ragas_compat.metrics.registry import metrics_for_target

    return not any(spec.name in selected for spec in metrics_for_target(target))


@dataclass(frozen=True)
class _Outcome:
    case_id: str
    target: str
    status: str            # reproduced, raised, not_frozen, differs, calls_differ, not_replayable, accepted, no_row,
    #                        unchecked, python (differs only as the recording's Python and the replay's compute it)
    classification: str | None
    message: str | None
    why: str | None = None       # the recording's not-replayable reason (not_replayable, accepted)
    accepted_by: str | None = None  # the expectations file whose entry accepted it (accepted)
    harness: bool = False        # the live value is the harness's own error: no entry accepts it
    call_for_call: bool = False  # reproduced through the recorded retry: as many judge calls as the live run


def _not_replayable(audit: Any, case_id: str, target: str, live: Any, why: str) -> _Outcome:
    """A live value the recording lists as not replayable: accepted when an expectations entry names it
    with the same reason (and Ragas, not the harness, gave the live value), else a problem."""
    message = f"the recorded live value ({_shown(live)}) is not replayed: {why}"
    expectations = getattr(audit, "expectations", None)
    entry = expectations.accepting_not_replayable(case_id, target) if expectations is not None else None
    harness = isinstance(live, RagasError) and live.raised_by_harness
    if entry is None:
        return _Outcome(case_id, target, "not_replayable", None, message, why, harness=harness)
    if harness:
        return _Outcome(case_id, target, "not_replayable", None, message + f"; {entry.origin} {entry.where} cannot "
                        "accept it: the live value is the harness's own error, which no entry explains", why,
                        harness=True)
    if not entry.accepts(why):
        return _Outcome(case_id, target, "not_replayable", None, message + f"; {entry.origin} {entry.where} accepts "
                        f"it only for another reason: {entry.reason}", why)
    return _Outcome(case_id, target, "accepted", None, None, why, entry.origin)


def _outcomes(audit: Any) -> Iterator[_Outcome]:
    recorded = {case.id for case in audit.suite.cases if isinstance((case.raw or {}).get("recording"), dict)}
    rows = {(row.case.id, str(row.target)): row for row in audit.rows if row.case.id in recorded}
    selected = _selected(audit)
    replayed_under = python_minor(((getattr(audit, "provenance", None) or {}).get("python") or {}).get("version"))
    for case in audit.suite.cases:
        recording = (case.raw or {}).get("recording")
        if not isinstance(recording, dict):
            continue
        not_replayable = recording.get("not_replayable") or {}
        not_frozen = recording.get("not_frozen") or {}
        for target, encoded in (recording.get("live") or {}).items():
            live = decode_ragas_value(encoded)
            row = rows.get((case.id, target))
            if row is None:
                if target in not_replayable:
                    yield _not_replayable(audit, case.id, target, live, str(not_replayable[target]))
                elif _left_out(target, selected):
                    yield _Outcome(case.id, target, "unchecked", None, None)
                else:
                    yield _Outcome(case.id, target, "no_row", None,
                                   f"the recorded live value ({_shown(live)}) has no replayed row: the replay "
                                   "produced no row for this target (its verdict key is missing from the case, or "
                                   "this replay does not score the target), so nothing compared it")
                continue
            classification = str(row.classification.name)
            raised = (recording.get("raised") or {}).get(target)
            if isinstance(raised, dict):
                problem = _raised_problem(raised, live, row)
                yield _Outcome(case.id, target, "differs" if problem else "raised", classification, problem)
                continue
            retried = _retried_calls(case, recording, target)
            across = None  # "recorded under Python 3.11, replayed under 3.13" when only that tells them apart
            if not same_value(live, row.ragas_value):
                recorded_under = python_minor(recording.get("python"))
                if None not in (recorded_under, replayed_under) and recorded_under != replayed_under \
                        and python_difference(live, row.ragas_value):
                    across = f"recorded under Python {recorded_under}, replayed under {replayed_under}"
            if not same_value(live, row.ragas_value) and across is None:
                yield _Outcome(case.id, target, "differs", classification,
                               f"the offline replay gave {_shown(row.ragas_value)}, the live recording {_shown(live)}")
            elif retried is not None and row.prompts is not None and row.prompts != retried[1]:
                metric, calls, scripted = retried
                yield _Outcome(case.id, target, "calls_differ", classification,
                               f"the offline replay reproduces the live value ({_shown(live)}) but asked its judge "
                               f"{row.prompts} prompt(s) where the live run made {calls} judge call(s), a refused reply "
                               "and its retry among them: the recorded replies were not given to Ragas call for call"
                               + ("" if scripted else f" (the case has no judge_calls.{metric}: recorded before "
                                  "record wrote them, or the key also holds judge_replies; record it again)"))
            elif target in not_frozen:
                yield _Outcome(case.id, target, "not_frozen", classification,
                               f"the offline replay reproduces the live value ({_shown(live)}) from the verdicts Ragas "
                               f"scored, but part of the live run is not in them: {not_frozen[target]}")
            elif across is not None:  # the value as the two Pythons compute it, the live run wholly replayed
                yield _Outcome(case.id, target, "python", classification, None, why=across)
            else:
                yield _Outcome(case.id, target, "reproduced", classification, None, call_for_call=retried is not None)


def _retried_calls(case: Any, recording: dict, target: str) -> tuple[str, int, bool] | None:
    """``(metric, judge calls the live run made, whether the case scripts them)`` when the recorded calls
    of ``target``'s metric hold a retry (a call with more than one reply), else None."""
    from ragas_compat.metrics.registry import metrics_for_target

    replies = recording.get("replies") or {}
    for spec in metrics_for_target(target):
        calls = replies.get(spec.name)
        if not isinstance(calls, list):
            continue
        counts = [len(c.get("replies") or []) for c in calls if isinstance(c, dict)]
        if any(n > 1 for n in counts):
            scripted = bool(((case.raw or {}).get("judge_calls") or {}).get(spec.name))
            return spec.name, sum(counts), scripted
    return None


def _input_fact_holds(case: Any, field_name: str, fact: Any) -> bool:
    value = getattr(case, field_name, None)
    return fact == "empty" and value is not None and len(value) == 0


def _raised_problem(raised: dict, live: Any, row: Any) -> str | None:
    """Why the replayed row does not reproduce a frozen "Ragas raised before asking the judge" (None: it
    does): the same exception type, raised by Ragas, with no prompt asked, on the same input fact."""
    wanted = str(raised.get("type"))
    facts = raised.get("input") or {}
    broken = [f"{name} is no longer {fact}" for name, fact in facts.items()
              if not _input_fact_holds(row.case, name, fact)]
    if broken or not facts:
        return (f"the recording froze Ragas raising {wanted} before asking the judge on an input fact the case "
                f"no longer has ({'; '.join(broken) or 'no input fact recorded'})")
    if not isinstance(live, RagasError) or live.type != wanted:
        return f"the recording froze Ragas raising {wanted} before asking the judge, but its live value is {_shown(live)}"
    replayed = row.ragas_value
    facts_text = ", ".join(f"{name} {fact}" for name, fact in facts.items())
    if not isinstance(replayed, RagasError) or replayed.raised_by_harness or replayed.type != wanted:
        return (f"live, Ragas raised {wanted} before asking the judge ({facts_text}); the offline replay gave "
                f"{_shown(replayed)}" + (" (the harness's error)" if isinstance(replayed, RagasError)
                                         and replayed.raised_by_harness else ""))
    if row.prompts:
        return (f"live, Ragas raised {wanted} before asking the judge ({facts_text}); the offline replay raised it "
                f"after asking its judge {row.prompts} prompt(s)")
    return None


@dataclass(frozen=True)
class ReplayAccount:
    """Every recorded live score of a run, counted once by what its replay did."""

    live: int = 0
    reproduced: int = 0          # bit for bit, the live run wholly in the verdicts
    call_for_call: int = 0       # of the reproduced: through the recorded retry of a refused reply, call for call
    calls_differ: int = 0        # the value reproduced, but not the live run's judge calls (its retry not replayed)
    not_frozen: int = 0          # bit for bit, but part of the live run is not in the verdicts
    differs: int = 0
    no_row: int = 0              # no replayed row and no recorded reason
    unchecked: int = 0           # left out with --metric
    not_replayable: dict[str, int] = field(default_factory=dict)  # reason -> live scores
    raised: int = 0              # Ragas raised the recorded type again before asking the judge (recording.raised)
    accepted: int = 0            # of the not replayable: accepted by an expectations file's entry
    accepted_by: tuple[str, ...] = ()  # those files
    python: int = 0              # differ only as the recording's Python and the replay's compute them
    pythons: tuple[str, ...] = ()  # "recorded under Python 3.11, replayed under 3.13", each once

    def line(self) -> str:
        """``replay: 12 live scores, 11 reproduced bit for bit, 1 not replayable (why), 0 unchecked``."""
        parts = [f"replay: {self.live} live score{'' if self.live == 1 else 's'}",
                 f"{self.reproduced + self.not_frozen} reproduced bit for bit"
                 + (f" ({self.not_frozen} from verdicts that do not hold the whole live run)" if self.not_frozen else "")
                 + (f" ({self.call_for_call} call for call through the recorded retry of a refused judge reply)"
                    if self.call_for_call else "")]
        if self.calls_differ:
            parts.append(f"{self.calls_differ} with the live value but not the live run's judge calls")
        if self.raised:
            parts.append(f"{self.raised} raised the recorded exception type again before asking the judge")
        if self.python:
            parts.append(f"{self.python} differ only as two Pythons compute them (within {PYTHON_ULPS} ulps, or the "
                         f"same exception type worded otherwise: {'; '.join(self.pythons)})")
        if self.differs:
            parts.append(f"{self.differs} differ")
        if self.no_row:
            parts.append(f"{self.no_row} with no replayed row")
        count = sum(self.not_replayable.values())
        why = "; ".join(f"{n}: {reason}" if count > 1 else reason for reason, n in sorted(self.not_replayable.items()))
        if self.accepted:
            files = ", ".join(self.accepted_by)
            why += (f"; {'accepted' if self.accepted == count else f'{self.accepted} accepted'} by the "
                    f"expectations file{'s' if len(self.accepted_by) > 1 else ''} {files}")
        parts.append(f"{count} not replayable" + (f" ({why})" if why else ""))
        parts.append(f"{self.unchecked} unchecked" + (" (left out with --metric)" if self.unchecked else ""))
        return ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {"live": self.live, "reproduced": self.reproduced, "call_for_call": self.call_for_call,
                "calls_differ": self.calls_differ, "not_frozen": self.not_frozen,
                "differs": self.differs, "no_row": self.no_row, "unchecked": self.unchecked,
                "not_replayable": dict(sorted(self.not_replayable.items())), "raised": self.raised,
                "accepted": self.accepted, "accepted_by": list(self.accepted_by), "python": self.python,
                "line": self.line()}


def replay_account(audit: Any) -> ReplayAccount | None:
    """The replay accounting of a run, or None when its suite holds no recorded case."""
    outcomes = list(_outcomes(audit))
    if not outcomes and not any(isinstance((c.raw or {}).get("recording"), dict) for c in audit.suite.cases):
        return None
    status = Counter(o.status for o in outcomes)
    reasons = Counter(_reason(o.why or "") for o in outcomes if o.status in ("not_replayable", "accepted"))
    accepted_by = tuple(dict.fromkeys(o.accepted_by or "" for o in outcomes if o.status == "accepted"))
    return ReplayAccount(live=len(outcomes), reproduced=status["reproduced"],
                         call_for_call=sum(1 for o in outcomes if o.status == "reproduced" and o.call_for_call),
                         calls_differ=status["calls_differ"], not_frozen=status["not_frozen"],
                         differs=status["differs"], no_row=status["no_row"], unchecked=status["unchecked"],
                         not_replayable=dict(reasons), raised=status["raised"], accepted=status["accepted"],
                         accepted_by=accepted_by, python=status["python"],
                         pythons=tuple(dict.fromkeys(o.why or "" for o in outcomes if o.status == "python")))


def _reason(why: str) -> str:
    return (why.strip().splitlines() or [""])[0][:160]


def _stale_entries(audit: Any, outcomes: list[_Outcome]) -> Iterator[tuple[str, str, str | None, str]]:
    """``[[not_replayable]]`` entries naming a case of the run whose recording does not list the target as
    not replayable (or whose target ``--metric`` left out: nothing to say then)."""
    expectations = getattr(audit, "expectations", None)
    if expectations is None or not expectations.not_replayable:
        return
    listed = {(o.case_id, o.target) for o in outcomes if o.status in ("not_replayable", "accepted")}
    cases = {case.id for case in audit.suite.cases}
    selected = _selected(audit)
    seen: set[tuple[str, str]] = set()
    for entry in expectations.not_replayable:
        key = (entry.case, entry.target)
        if entry.case not in cases or key in listed or key in seen or _left_out(entry.target, selected):
            continue
        seen.add(key)
        yield (entry.case, entry.target, None,
               f"{entry.origin}: {entry.where} accepts ({entry.case}, {entry.target}) as not replayable "
               f"({entry.reason}), but the case's recording does not list that target as not replayable")


def not_replayable_outcomes(audit: Any) -> list[tuple[str, str, str]]:
    """``(case_id, target, the recording's reason)`` for every live score the recording lists as not
    replayable that an expectations entry could accept (not a live value the harness raised), accepted
    or not: what ``expect bless`` writes."""
    found = []
    for outcome in _outcomes(audit):
        if outcome.status in ("not_replayable", "accepted") and outcome.why is not None and not outcome.harness:
            found.append((outcome.case_id, outcome.target, outcome.why.strip()))
    return found


def replay_problems(audit: Any) -> list[tuple[str, str, str | None, str]]:
    """``(case_id, target, classification of the replayed row or None, message)`` for every recorded
    live score the replay does not reproduce, or whose reproduction nothing checked."""
    outcomes = list(_outcomes(audit))
    return [(o.case_id, o.target, o.classification, o.message or "") for o in outcomes
            if o.status not in ("reproduced", "raised", "unchecked", "accepted", "python")] + list(
                _stale_entries(audit, outcomes))
