"""What the judge was shown, as a digest per prompt kind: the prompt text a Ragas release sends without the
case's own input (standard library only).

A rendered prompt is ``head`` (instruction, output schema, few-shot examples) plus an input block laid out
by its generation (``judge.prompt_layouts``). The template digest of one asking is SHA-256 over the head
and the layout's name (so the early-0.2 and the current input blocks differ), cut to 16 hex digits; a
prompt known by its whole text (a plain string template) or of no known layout is digested whole. A
result's ``prompt_hashes`` maps each prompt kind it asked to one digest over the distinct template digests
of its askings (sorted), so two releases that send the same instruction, examples and schema for a row
give the same map, whatever the order or number of askings. Verdicts replayed under a different map were
frozen for another prompt: the judge's answer there is assumed, not shown.
"""

from __future__ import annotations

import hashlib
import typing as t

DIGEST_CHARS = 16
WHOLE_TEXT = "whole text"  # the layout name of a prompt digested whole


def template_digest(head: str, layout: str) -> str:
    """The digest of one asking's template: its head and the name of its input block's layout."""
    return hashlib.sha256(f"{layout}\0{head}".encode()).hexdigest()[:DIGEST_CHARS]


def per_kind(asked: t.Iterable[t.Mapping[str, object]]) -> dict[str, str]:
    """``{kind: digest}`` over the askings that carry a ``template`` digest (a kind None is ``"unknown"``),
    kinds sorted; each digest covers the kind's distinct template digests, sorted."""
    found: dict[str, set[str]] = {}
    for record in asked:
        digest = record.get("template")
        if isinstance(digest, str):
            found.setdefault(str(record.get("kind") or "unknown"), set()).add(digest)
    return {kind: (next(iter(digests)) if len(digests) == 1 else
                   hashlib.sha256("\0".join(sorted(digests)).encode()).hexdigest()[:DIGEST_CHARS])
            for kind, digests in sorted(found.items())}
