"""Multi-turn cases as Ragas takes them: a case whose ``user_input`` is a list of messages is scored as a
``ragas.dataset_schema.MultiTurnSample`` (legacy: ``multi_turn_ascore``; evaluate(): a dataset of them),
and through the collections API with ``ragas.messages`` objects as ``ascore``'s arguments (``user_input``
a list of HumanMessage / AIMessage / ToolMessage, ``reference_tool_calls`` a list of ToolCall), as a user
builds them from the same data.

Importing this module does not import Ragas; building a sample does.
"""

from __future__ import annotations

import typing as t

from .protocol import jsonable

MESSAGE_CLASSES = {"human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage"}


def is_multi_turn(case: dict) -> bool:
    """A multi-turn case: its user_input is a list of messages."""
    return isinstance(case.get("user_input"), list)


def _tool_calls(calls: t.Sequence[dict]) -> list[t.Any]:
    from ragas.messages import ToolCall

    return [ToolCall(name=call["name"], args=dict(call["args"])) for call in calls]


def ragas_messages(messages: t.Sequence[dict]) -> list[t.Any]:
    """The case's messages as ``ragas.messages`` objects (tool calls on ai messages only: the loader
    refuses them elsewhere)."""
    import ragas.messages

    out = []
    for message in messages:
        cls = getattr(ragas.messages, MESSAGE_CLASSES[message["type"]])
        fields: dict[str, t.Any] = {"content": message["content"]}
        if "metadata" in message:
            fields["metadata"] = message["metadata"]
        if message["type"] == "ai" and "tool_calls" in message:
            fields["tool_calls"] = _tool_calls(message["tool_calls"])
        out.append(cls(**fields))
    return out


def ragas_arguments(inputs: dict) -> dict:
    """The fields of a multi-turn case as Ragas objects: ``user_input`` messages, ``reference_tool_calls``
    ToolCalls; the texts (reference, reference_topics) as they are."""
    out = dict(inputs)
    if "user_input" in out:
        out["user_input"] = ragas_messages(out["user_input"])
    if "reference_tool_calls" in out:
        out["reference_tool_calls"] = _tool_calls(out["reference_tool_calls"])
    return out


def multi_turn_sample(inputs: dict) -> tuple[t.Any, list[str], list[str]]:
    """``(MultiTurnSample, accepted, dropped)``: the sample of the fields it declares."""
    from ragas.dataset_schema import MultiTurnSample

    declared = MultiTurnSample.model_fields
    accepted = [f for f in inputs if f in declared]
    sample = MultiTurnSample(**ragas_arguments({f: inputs[f] for f in accepted}))
    return sample, accepted, [f for f in inputs if f not in declared]


def _plain(value: t.Any) -> t.Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return {k: _plain(v) for k, v in dump().items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _like(value: t.Any, given: t.Any) -> t.Any:
    """``value`` (a received field as JSON) with its objects' keys in the order the case gave them, so an
    input Ragas did not change reads exactly as given."""
    if isinstance(value, dict) and isinstance(given, dict):
        order = [k for k in given if k in value] + [k for k in value if k not in given]
        return {k: _like(value[k], given.get(k)) for k in order}
    if isinstance(value, list) and isinstance(given, list) and len(value) == len(given):
        return [_like(v, g) for v, g in zip(value, given)]
    return value


def record_received(metric: t.Any, fields: tuple[str, ...], received: dict, case: dict) -> None:
    """Wrap the instance's ``_multi_turn_ascore`` to record the sample Ragas hands it (messages as JSON, the
    fields Ragas left unset dropped, in the case's key order)."""
    inner = metric._multi_turn_ascore

    async def recording(*args: t.Any, **kwargs: t.Any) -> t.Any:
        sample = kwargs.get("sample", args[0] if args else None)
        received.update({f: _like(jsonable(_plain(getattr(sample, f, None))), case.get(f)) for f in fields})
        return await inner(*args, **kwargs)

    metric._multi_turn_ascore = recording
