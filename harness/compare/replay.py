"""Recorded live scores vs their offline replay (case files written by ``ragas-compat record``).

A recorded case carries ``recording.live``: per Ragas target, the score Ragas gave with the live
judge. Replaying the case (the scripted judge answering with the verdicts Ragas parsed) must
reproduce it bit for bit: the same float (compared by its bits, so ``-0.0`` is not ``0.0``), both
NaN, or the same error type and message. ``replay_problems(audit)`` lists, as
``(case_id, target, classification, message)``:

- a replayed row whose value differs from the recorded live value;
- a recorded live value the case cannot replay (``recording.not_replayable``, e.g. an unparseable
  reply to a claim-list prompt), whose target therefore has no row;
- a replayed row whose live run the verdicts do not hold completely (``recording.not_frozen``, e.g.
  faithfulness statements the NLI reply did not judge): the replay may reproduce the score, but not
  the live prompts, so it is reported too (with the value comparison).

A live target with no row and no such reason is not a problem (the run was limited with
``--metric``). ``ragas_compat.compare.verdict`` turns each into a ``replay_mismatch`` finding.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from ragas_compat.values import RagasError, decode_ragas_value


def same_value(live: Any, replayed: Any) -> bool:
    """Bit-for-bit equality of two decoded Ragas values."""
    if isinstance(live, RagasError) or isinstance(replayed, RagasError):
        return (isinstance(live, RagasError) and isinstance(replayed, RagasError)
                and (live.type, live.message) == (replayed.type, replayed.message))
    if isinstance(live, float) and isinstance(replayed, float):
        if math.isnan(live) or math.isnan(replayed):
            return math.isnan(live) and math.isnan(replayed)
        return struct.pack("<d", live) == struct.pack("<d", replayed)
    return False


def _shown(value: Any) -> str:
    if isinstance(value, RagasError):
        return f"error {value.type}: {(value.message.strip().splitlines() or [''])[0][:160]}"
    return repr(value)


def replay_problems(audit: Any) -> list[tuple[str, str, str | None, str]]:
    """``(case_id, target, classification of the replayed row or None, message)`` for every recorded
    live score the replay does not reproduce."""
    recorded = {case.id for case in audit.suite.cases if isinstance((case.raw or {}).get("recording"), dict)}
    rows = {(row.case.id, str(row.target)): row for row in audit.rows if row.case.id in recorded}
    out = []
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
                    out.append((case.id, target, None, f"the recorded live value ({_shown(live)}) is not "
                                                       f"replayed: {not_replayable[target]}"))
                continue
            if not same_value(live, row.ragas_value):
                out.append((case.id, target, str(row.classification.name),
                            f"the offline replay gave {_shown(row.ragas_value)}, the live recording {_shown(live)}"))
            elif target in not_frozen:
                out.append((case.id, target, str(row.classification.name),
                            f"the offline replay reproduces the live value ({_shown(live)}) from the verdicts Ragas "
                            f"scored, but part of the live run is not in them: {not_frozen[target]}"))
    return out
