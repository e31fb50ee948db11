"""Turn what the recording probe saw for one sample into one case of the case-file format.

The verdicts are the outputs Ragas's own output models parsed from the live judge's replies (what
the metric scored), as the probe recorded them:

- context precision (with / without reference): one ``verdict`` per retrieved context, in the order
  Ragas asked. A reply Ragas could not parse (after its "fix output format" retry) goes verbatim into
  ``judge_replies.<key>.<i>`` (the replay then fails exactly as the live run did); the label at that
  index and after it were never judged (Ragas stops at the failure) and are written as 0 and listed
  in ``recording.unjudged``;
- context recall: the ``classifications`` (statement, attributed);
- faithfulness: the NLI ``statements`` (statement, verdict); zero statements when the statement
  generator produced none (NLI is then not asked). When the NLI reply judged other statements than
  the generator produced (it dropped, added or reworded one), Ragas scored the judged ones, and so
  do the verdicts (the replay reproduces the score), but the generator's reply cannot be frozen
  with them: the difference is listed in ``recording.not_frozen`` and ``run`` reports it;
- the ID-based and string-match metrics need no judge: the sample's fields are the inputs.

Recorded with the collections API (targets ``collections:...``) the prompt kinds are the same; an
unparseable context-precision reply is not replayable there (instructor, not Ragas, parsed it and gave
up after its re-asks; the case format holds such a reply in ``judge_replies``, one reply to one asking,
which the reference reads and which cannot be combined with the per-call script instructor's re-asks
would need), and a class that raised before asking
the judge (e.g. an empty response) has no verdict to freeze: both go to ``recording.not_replayable``,
except a context-precision class that raised on a sample with no retrieved context: its verdicts are
the empty label list (nothing to judge), and ``recording.raised`` holds what it raised (type, the input
fact, zero judge calls), which the replay must raise again without asking its judge.

Call for call: a parsed reply that Ragas (legacy: its "fix output format" prompt) or instructor
(collections: its re-ask) got only after refusing the judge's first reply is written, with the verdicts,
as the case's per-call script ``judge_calls.<metric>`` (:func:`call_for_call`): the judge's raw replies
verbatim, in the order it gave them, so the replay hands Ragas the same texts and Ragas's own retry path
runs again (``ragas_compat.probe.stubs``). A context-precision call's entries are bound to its context
(``when``), the other metrics ask each prompt kind once per sample. Each API's replay of the other API's
retry is answered too: the legacy format fix of a collections recording's refused reply gets what
instructor parsed in the end, and a collections re-ask of a legacy recording's refused reply falls back
to the frozen verdict. Where the key also
holds an unparseable context-precision reply (``judge_replies``, which the case format does not combine
with ``judge_calls``), the retry is not scripted and ``run`` reports the replay's judge calls against the
recorded ones.

``recording.live`` holds the live score per Ragas target (the probe's score encoding), so
``ragas-compat run`` can check that the offline replay reproduces it bit for bit; a live outcome the
case format cannot replay (an unparseable reply to a claim-list prompt, or a parsed reply the case
loader refuses, e.g. a label number of more than 100 digits) is listed in
``recording.not_replayable`` with the reason, and its verdict key is left out. A sample whose judge
could not be reached (transport error after Ragas's retries) is not a case: it is reported and
recorded again on the next run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ragas_compat.cases import parse_suite_text
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.record.dataset import Sample

CP_KEYS = ("context_precision_with_reference", "context_precision_without_reference")
LLM_METRICS = CP_KEYS + ("context_recall", "faithfulness")
NON_LLM_METRICS = ("id_context_precision", "id_context_recall", "context_precision_string_match",
                   "context_recall_string_match")
RECORDABLE = LLM_METRICS + NON_LLM_METRICS
DEFAULT_CATEGORY = "single_source"
MAX_REPLY_CHARS = 256 * 1024   # one judge reply kept in a case; a longer one is cut and its verdicts not frozen
REPLY_KEPT_CHARS = 2_000       # what is kept of a reply over the limit, for the reader
OVERSIZED = ("a judge reply of {size:,} characters is over the recording limit of {limit:,}; it is kept cut to "
             "its first {kept:,} characters and its verdicts are not frozen")
CLAIM_REPLAY_LIMIT = ("the judge's reply could not be parsed ({error}); the case format replays raw replies of "
                      "context-precision prompts only, so this outcome is kept here and not replayed")
UNSTORABLE = ("Ragas parsed the judge's reply, but the case file cannot hold what it parsed ({error}); "
              "the reply is kept in recording.replies and this outcome is not replayed")
NLI_DIFFERS = ("Ragas generated {generated} statement(s) but the judge's NLI reply judged {judged} ({detail}); "
               "Ragas scored the judged ones, which the verdicts hold and the replay reproduces, but the "
               "replay's statement prompt answers with them, not with what the judge generated")


CP_ANSWER_FIELD = {"context_precision_with_reference": "reference", "context_precision_without_reference": "response"}
REPEATED_PROMPT = ("case {case!r}, {key}: contexts {indices} are the same text, so Ragas asked the judge the same prompt "
                   "{count} times, and the verdicts differ ({labels}); the replay answers identical prompts in the order "
                   "Ragas asks them (context order), so it reproduces these verdicts, but a judge answering by content "
                   "cannot, and the labels are not a property of the text")
REPEATED_ACROSS_CASES = ("{key}: cases {cases} ask the judge the same prompt (question, context {context!r}, answer) "
                         "and their verdicts differ ({labels}); each case replays on its own, but evaluate() scores "
                         "rows concurrently, so its replay of them is a StubMismatch (ambiguous)")


def _label_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def repeated_prompt_warnings(cases: list[dict[str, Any]]) -> list[str]:
    """Warnings for context-precision verdicts that differ on identical prompts: within a case (a chunk
    retrieved twice, judged 1 then 0: replayed in asking order) and across cases (the same question,
    context and answer with other verdicts: evaluate() cannot tell the rows apart). Contexts never judged
    (``recording.unjudged``, a raw reply in ``judge_replies``) hold placeholders and are left out."""
    warnings: list[str] = []
    across: dict[tuple[str, str], dict[str, list[Any]]] = {}  # (key, prompt) -> case id -> its labels
    for case in cases:
        contexts = case.get("retrieved_contexts") or []
        for key in CP_KEYS:
            labels = (case.get("verdicts") or {}).get(key)
            if not isinstance(labels, list):
                continue
            skipped = set((case.get("recording") or {}).get("unjudged", {}).get(key) or ())
            skipped |= {int(i) for i in ((case.get("judge_replies") or {}).get(key) or {})}
            by_text: dict[str, list[int]] = {}
            for i, (context, _) in enumerate(zip(contexts, labels, strict=False)):
                if i not in skipped and isinstance(context, str):
                    by_text.setdefault(context, []).append(i)
            for context, indices in by_text.items():
                shown = [_label_text(labels[i]) for i in indices]
                if len(set(shown)) > 1:
                    warnings.append(REPEATED_PROMPT.format(case=case.get("id"), key=key,
                                                           indices=", ".join(map(str, indices)), count=len(indices),
                                                           labels=", ".join(shown)))
                prompt = json.dumps([case.get("user_input"), context, case.get(CP_ANSWER_FIELD[key])],
                                    ensure_ascii=False)
                across.setdefault((key, prompt), {}).setdefault(str(case.get("id")), []).extend(shown)
    for (key, prompt), by_case in across.items():
        if len(by_case) > 1 and len({label for labels in by_case.values() for label in labels}) > 1:
            context = json.loads(prompt)[1]
            warnings.append(REPEATED_ACROSS_CASES.format(
                key=key, cases=", ".join(repr(c) for c in by_case),
                context=context if len(context) <= 80 else context[:77] + "...",
                labels="; ".join(f"{c}: {', '.join(labels)}" for c, labels in by_case.items())))
    return warnings


@dataclass(frozen=True)
class Built:
    case: dict[str, Any] | None
    failure: str | None = None     # why the sample is not a case this time (transport error)


def _cut(text: Any) -> Any:
    """A reply or message within ``MAX_REPLY_CHARS`` as it is; a longer one cut, saying so."""
    if isinstance(text, str) and len(text) > MAX_REPLY_CHARS:
        return f"{text[:REPLY_KEPT_CHARS]} ... [cut: {len(text):,} characters]"
    return text


def _oversized(calls: list[dict[str, Any]]) -> int:
    """The length of the longest reply or error message over ``MAX_REPLY_CHARS`` in ``calls`` (0: none)."""
    sizes = [len(text) for call in calls for text in [*(call.get("replies") or []),
                                                      (call.get("error") or {}).get("message")]
             if isinstance(text, str) and len(text) > MAX_REPLY_CHARS]
    return max(sizes, default=0)


def _call_json(call: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": call.get("kind", "?"), "replies": [_cut(r) for r in call.get("replies") or []]}
    if call.get("error"):
        out["error"] = _cut(f"{call['error'].get('type')}: {call['error'].get('message')}")
    if call.get("failed_attempts"):
        out["failed_attempts"] = [_cut(f"{a.get('type')}: {a.get('message')}") for a in call["failed_attempts"]]
    return out


def _error_text(call: dict[str, Any]) -> str:
    error = call.get("error") or {}
    return f"{error.get('type', 'Error')}: {error.get('message', '')}".strip()


NOT_ASKED = ("Ragas raised before asking the judge anything ({error}), so there is no verdict to freeze; "
             "this outcome is kept here and not replayed")
NOT_ASKED_CLAIMS = ("Ragas raised before asking the judge anything ({error}); the replay of this metric needs the "
                    "judge's claims as verdicts and none were asked (writing some would invent a judge's answer for "
                    "the other classes the replay scores), so this outcome is kept here and not replayed")


def _raised_before_asking(metric: str, target: str, contexts: list[Any], value: dict[str, Any],
                          out: dict[str, Any]) -> bool:
    """Freeze "Ragas raised before asking the judge" as a replayable outcome where the verdict key can be
    written without inventing a judge's answer: a context-precision metric on a sample with no retrieved
    context (one label per context: none). ``recording.raised[target]`` holds the exception type, the
    input fact and zero judge calls; the replay runs the same class on the same input and must raise that
    type without asking its judge (``ragas_compat.compare.replay``). False: nothing frozen."""
    if metric not in CP_KEYS or contexts:
        return False
    out["verdicts"][metric] = []
    out["recording"]["raised"][target] = {"type": str(value["error"].get("type")),
                                          "input": {"retrieved_contexts": "empty"}, "judge_calls": 0}
    return True
COLLECTIONS_PARSE_LIMIT = ("the judge's reply could not be parsed ({error}); instructor parsed it for the collections "
                           "class and gave up after re-asking, and the case format holds an unparseable reply to one "
                           "asking (judge_replies), not instructor's re-asks, so this outcome is kept here and not "
                           "replayed")


def _context_precision(key: str, contexts: list[str], calls: list[dict], out: dict[str, Any],
                       raw_replayable: bool = True) -> str | None:
    asked = [c for c in calls if c.get("kind") == "context_precision"]
    labels: list[Any] = []
    unjudged: list[int] = []
    for i in range(len(contexts)):
        call = asked[i] if i < len(asked) else None
        if call is not None and call.get("output"):
            labels.append(call["output"][0].get("verdict"))
            continue
        if call is not None and call.get("error") and not unjudged:
            if not call.get("replies"):
                return f"the judge gave no reply to context {i} ({_error_text(call)})"
            if not raw_replayable:
                return COLLECTIONS_PARSE_LIMIT.format(error=_error_text(call))
            out["judge_replies"].setdefault(key, {})[str(i)] = call["replies"][0]
        elif call is None and not unjudged and not any(c.get("error") for c in asked):
            return f"Ragas asked {len(asked)} context-precision prompts for {len(contexts)} contexts"
        labels.append(0)
        unjudged.append(i)
    out["verdicts"][key] = labels
    if unjudged:
        out["recording"]["unjudged"][key] = unjudged
    return None


def _context_recall(calls: list[dict], out: dict[str, Any]) -> str | None:
    asked = [c for c in calls if c.get("kind") == "context_recall_classification"]
    if len(asked) != 1 or not asked[0].get("output"):
        return CLAIM_REPLAY_LIMIT.format(error=_error_text(asked[-1]) if asked else "no prompt asked")
    out["verdicts"]["context_recall"] = [
        {"statement": c.get("statement"), "attributed": c.get("attributed")}
        for c in asked[0]["output"][0].get("classifications", [])]
    return None


def _nli_difference(generated: list[Any], judged: list[Any]) -> str | None:
    """What the NLI reply did to the generated statements (None: it judged exactly them, in order)."""
    if generated == judged:
        return None
    dropped = [s for s in generated if s not in judged]
    added = [s for s in judged if s not in generated]
    parts = [f"not judged: {dropped!r}"] if dropped else []
    parts += [f"judged but not generated: {added!r}"] if added else []
    return "; ".join(parts) or "the same statements in another order or count"


def _faithfulness(calls: list[dict], out: dict[str, Any]) -> str | None:
    generated = [c for c in calls if c.get("kind") == "statement_generator"]
    judged = [c for c in calls if c.get("kind") == "nli_statements"]
    failed = next((c for c in generated + judged if not c.get("output")), None)
    if failed is not None or len(generated) != 1 or len(judged) > 1:
        return CLAIM_REPLAY_LIMIT.format(error=_error_text(failed) if failed else "unexpected prompts")
    statements = generated[0]["output"][0].get("statements", [])
    if not statements or not judged:
        out["verdicts"]["faithfulness"] = []
        return None
    out["verdicts"]["faithfulness"] = [
        {"statement": c.get("statement"), "verdict": c.get("verdict")}
        for c in judged[0]["output"][0].get("statements", [])]
    judged_statements = [c["statement"] for c in out["verdicts"]["faithfulness"]]
    detail = _nli_difference(list(statements), judged_statements)
    if detail:
        out["recording"]["not_frozen"]["faithfulness"] = NLI_DIFFERS.format(
            generated=len(statements), judged=len(judged_statements), detail=detail)
    return None


def _refused_by_loader(case: dict[str, Any], keys: list[str], out: dict[str, Any]) -> dict[str, str]:
    """Why the case loader refuses ``verdicts[key]`` (with its raw replies) in ``case``, for each of ``keys``
    it refuses (as `run` reads it). The keys are checked together first (one validation per case: all
    accepted is the usual outcome), then one by one only when that fails."""
    def problem(checked: list[str]) -> str | None:
        probe = {**case, "verdicts": {key: out["verdicts"][key] for key in checked}}
        replies = {key: out["judge_replies"][key] for key in checked if key in out["judge_replies"]}
        if replies:
            probe["judge_replies"] = replies
        try:
            parse_suite_text(json.dumps({"schema_version": 1, "suite": "recording-check", "cases": [probe]},
                                        ensure_ascii=False), source="recording")
        except HarnessInputError as exc:
            return "; ".join(exc.problems)[:2000]
        return None

    if not keys or (len(keys) > 1 and problem(keys) is None):
        return {}
    found = {key: problem([key]) for key in keys}
    return {key: why for key, why in found.items() if why is not None}


FIX_KIND = "fix_output_format"


def call_for_call(metric: str, api: str, contexts: list[Any], calls: list[dict[str, Any]]) -> dict[str, list] | None:
    """The per-call script (``judge_calls.<metric>``: prompt kind -> entries) that replays every call of
    ``calls`` Ragas or instructor answered only after refusing a reply (more than one reply, a parsed
    output), its raw replies verbatim in order; None when no call was retried. Legacy (``api``): the
    first reply answers the prompt, the others Ragas's format-fix prompts; collections: every reply
    answers the prompt (instructor re-asks it), and a legacy format fix of the first reply is answered
    with what instructor parsed in the end (``{"text": <its JSON>}``), so the other API's replay of the
    same case gets what the judge meant rather than no answer. A context-precision call is bound to its context (``when``)."""
    script: dict[str, list] = {}
    asked = 0
    for call in calls:
        kind, replies = str(call.get("kind", "?")), [r for r in call.get("replies") or [] if isinstance(r, str)]
        index = asked if kind == "context_precision" else None
        asked += kind == "context_precision"
        if len(replies) < 2 or not call.get("output") or len(replies) != len(call.get("replies") or []):
            continue
        when = {"context": contexts[index]} if index is not None and index < len(contexts) else None
        entries = script.setdefault(kind, [])
        answering = replies[:1] if api == "legacy" else replies
        entries.extend({"reply": text, "when": when} if when is not None else text for text in answering)
        fixes = script.setdefault(FIX_KIND, [])
        if api == "legacy":
            fixes.extend(replies[1:])
        else:  # the legacy replay's format fix of the first reply: what instructor parsed in the end, as JSON
            fixed = json.dumps(call["output"][0], ensure_ascii=False)
            fixes.append({"reply": json.dumps({"text": fixed}, ensure_ascii=False), "when": {"output_string": replies[0]}})
    return script or None


def build_case(sample: Sample, result: dict[str, Any], python: str | None = None) -> Built:
    """The case of ``sample`` from the probe's record of it (``record_probe.py``'s ``samples[i]``); ``python``: the
    recording probe's Python version, kept in the case's recording (``compare.replay`` reads it)."""
    fields = sample.fields
    contexts = list(fields.get("retrieved_contexts") or [])
    case: dict[str, Any] = {
        "id": sample.id,
        "category": sample.category or DEFAULT_CATEGORY,
        "user_input": fields.get("user_input", ""),
        "reference": fields.get("reference", ""),
        "response": fields.get("response", ""),
        "retrieved_contexts": contexts,
    }
    for optional in ("reference_contexts", "retrieved_context_ids", "reference_context_ids"):
        if optional in fields:
            case[optional] = fields[optional]
    out: dict[str, Any] = {"verdicts": {}, "judge_replies": {}, "judge_calls": {},
                           "recording": {"dataset_row": sample.row, "python": python, "live": {}, "replies": {},
                                         "not_replayable": {}, "not_frozen": {}, "unjudged": {},
                                         "raised": {}}}
    judged: list[tuple[str, Any, list[dict[str, Any]], str | None]] = []  # (metric, target, calls, problem)
    for metric, record in (result.get("metrics") or {}).items():
        if record.get("skipped"):
            continue
        if record.get("transport_error"):
            error = record.get("value", {}).get("error", {})
            return Built(None, f"{metric}: the judge could not be reached: {error.get('type')}: {error.get('message')}")
        target = record["target"]
        value = record["value"]
        message = value.get("error", {}).get("message") if isinstance(value, dict) and \
            isinstance(value.get("error"), dict) else None
        if isinstance(message, str) and len(message) > MAX_REPLY_CHARS:  # an error quoting a huge reply
            value = {**value, "error": {**value["error"], "message": _cut(message)}}
        out["recording"]["live"][target] = value
        calls = record.get("calls") or []
        if calls:
            out["recording"]["replies"][metric] = [_call_json(c) for c in calls]
        problem = None
        oversized = max(_oversized(calls), len(message) if isinstance(message, str) and
                        len(message) > MAX_REPLY_CHARS else 0)
        if isinstance(record.get("not_replayable"), str):  # the probe stopped it (budget) or capped the reply
            problem = record["not_replayable"]
        elif oversized:
            problem = OVERSIZED.format(size=oversized, limit=MAX_REPLY_CHARS, kept=REPLY_KEPT_CHARS)
        elif metric in LLM_METRICS and not calls and isinstance(value, dict) and "error" in value:
            if record.get("llm_replies") or record.get("failed_attempts") or \
                    not _raised_before_asking(metric, target, contexts, value, out):
                error = f"{value['error'].get('type')}: {value['error'].get('message')}"
                problem = (NOT_ASKED_CLAIMS if metric in ("context_recall", "faithfulness") else NOT_ASKED).format(error=error)
        elif metric in CP_KEYS:
            problem = _context_precision(metric, contexts, calls, out,
                                         raw_replayable=not str(target).startswith("collections:"))
        elif metric == "context_recall":
            problem = _context_recall(calls, out)
        elif metric == "faithfulness":
            problem = _faithfulness(calls, out)
        judged.append((metric, target, calls, problem))
    refused = _refused_by_loader(case, [metric for metric, _, _, problem in judged
                                        if problem is None and metric in out["verdicts"]], out)
    for metric, target, calls, problem in judged:
        if metric in refused:
            problem = UNSTORABLE.format(error=refused[metric])
            for key in ("verdicts", "judge_replies"):
                out[key].pop(metric, None)
            out["recording"]["unjudged"].pop(metric, None)
        if problem is None and metric in out["verdicts"] and metric not in out["judge_replies"]:
            script = call_for_call(metric, "collections" if str(target).startswith("collections:") else "legacy",
                                   contexts, calls)
            if script is not None:
                out["judge_calls"][metric] = script
        if problem is not None:
            out["recording"]["not_replayable"][target] = problem
            out["recording"]["raised"].pop(target, None)
            out["recording"]["not_frozen"].pop(metric, None)
        elif metric in out["recording"]["not_frozen"]:
            out["recording"]["not_frozen"][target] = out["recording"]["not_frozen"].pop(metric)
    absent = [name for name in ("user_input", "reference", "response") if name not in fields]
    if absent:
        out["recording"]["absent_fields"] = absent
    for key in ("verdicts", "judge_replies", "judge_calls"):
        if out[key]:
            case[key] = out[key]
    case["recording"] = {k: v for k, v in out["recording"].items() if v or k in ("dataset_row", "live")}
    return Built(case)
