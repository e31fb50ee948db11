"""An error the harness raised while driving Ragas (its scripted judge has no frozen answer, it cannot
drive the class, its frozen embedding model lacks a text, the probe's own code failed) is the
harness's in every output: the probe marks it ``"origin": "harness"``, the row says "not scored
(harness error)" and "the harness raised", and nothing says Ragas raised it. An error Ragas raised
keeps Ragas's name."""

from __future__ import annotations

import importlib.util

import pytest

from ragas_compat.compare.classify import classify
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.probe.protocol import HARNESS_ORIGIN, decode_score, encode_error
from ragas_compat.values import RagasError, decode_ragas_value, encode_ragas_value

needs_ragas = pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                                 reason="Ragas is not installed in this interpreter")

NO_VOTES = {"id": "no-votes", "user_input": "Is the response polite?", "reference": "",
            "response": "Sure, here it is.", "retrieved_contexts": [], "verdicts": {"aspect_critic": []}}
NO_EMBEDDING = {"id": "no-embedding", "user_input": "q", "reference": "the reference", "response": "the response",
                "retrieved_contexts": ["c"], "embeddings": {"the reference": [1.0, 0.0]}}
EMPTY_RETRIEVAL = {"id": "empty-retrieval", "user_input": "q", "reference": "r", "response": "a",
                   "retrieved_contexts": [], "verdicts": {"context_precision_with_reference": []}}


def _undefined() -> ReferenceOutcome:
    return ReferenceOutcome(metric="m", value=None, undefined_reason="no_votes", refused=None, alternatives={},
                            details={}, denominator=None)


def test_the_origin_survives_encoding_and_decoding():
    record = encode_error("StubMismatch", "no frozen answer", HARNESS_ORIGIN)
    assert record == {"error": {"type": "StubMismatch", "message": "no frozen answer", "origin": "harness"}}
    assert decode_score(record).origin == HARNESS_ORIGIN
    value = decode_ragas_value(record)
    assert value == RagasError("StubMismatch", "no frozen answer", "harness") and value.raised_by_harness
    assert encode_ragas_value(value) == record
    ragas = decode_ragas_value({"error": {"type": "ValueError", "message": "empty"}})
    assert not ragas.raised_by_harness and "origin" not in encode_ragas_value(ragas)["error"]


def test_an_error_of_a_type_only_the_harness_raises_is_the_harnesss_without_its_mark():
    """Records written before the mark (a stored report) name the harness by the exception's type."""
    for kind in ("StubMismatch", "TargetNotScripted", "ProbeFormatError"):
        assert RagasError(kind, "m").raised_by_harness
        assert encode_ragas_value(RagasError(kind, "m"))["error"]["origin"] == HARNESS_ORIGIN
    assert not RagasError("TargetUnavailable", "this Ragas has no X").raised_by_harness  # a fact about Ragas
    assert decode_score("not a value").origin == HARNESS_ORIGIN  # the probe wrote something it should not


def test_the_row_texts_name_the_harness_not_ragas():
    harness = RagasError("LookupError", "no frozen embedding for the text 'x'", HARNESS_ORIGIN)
    diagnosis = classify(harness, _undefined())
    assert diagnosis.name.name == "ERROR"
    assert diagnosis.explanation.startswith("the harness raised LookupError") and "Ragas raised" not in diagnosis.explanation
    assert harness.label == "not scored (harness error): LookupError"
    ragas = RagasError("ValueError", "retrieved_contexts cannot be empty")
    assert classify(ragas, _undefined()).explanation == "Ragas raised ValueError: retrieved_contexts cannot be empty"
    assert ragas.label == "error: ValueError"
    missing = RagasError("TargetUnavailable", "this Ragas has no ragas.metrics.collections.ContextPrecision")
    assert classify(missing, _undefined()).explanation == (
        "not scored (TargetUnavailable): this Ragas has no ragas.metrics.collections.ContextPrecision")
    assert missing.label == "not scored (not in this Ragas): TargetUnavailable" and not missing.raised_by_harness


@pytest.mark.slow
@needs_ragas
def test_the_probe_marks_the_harnesss_errors_and_leaves_ragass_unmarked():
    """Through the real probe: the scripted judge without a vote to give (StubMismatch) and the frozen
    embedding model without the response's vector (LookupError) are the harness's; Ragas's own
    ValueError on an empty retrieval is not."""
    from ragas_compat.runner import run_probe

    run = run_probe([NO_VOTES, NO_EMBEDDING, EMPTY_RETRIEVAL],
                    targets=["legacy:AspectCritic", "legacy:SemanticSimilarity", "collections:ContextPrecision"])
    assert run.ok, run.error
    errors = {(r["case_id"], r["target"]): r["value"]["error"] for r in run.output["results"]
              if isinstance(r["value"], dict)}
    stub = errors[("no-votes", "legacy:AspectCritic")]
    assert stub["type"] == "StubMismatch" and stub["origin"] == HARNESS_ORIGIN
    lookup = errors[("no-embedding", "legacy:SemanticSimilarity")]
    assert lookup["type"] == "LookupError" and lookup["origin"] == HARNESS_ORIGIN, lookup
    ragas = errors[("empty-retrieval", "collections:ContextPrecision")]
    assert ragas["type"] == "ValueError" and "origin" not in ragas
