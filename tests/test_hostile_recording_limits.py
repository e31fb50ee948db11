"""Recording limits: a judge reply of 20 MB does not become a 105 MB case file that `run` refuses, and a
case file over the input limit is never written (the old file is kept)."""

from __future__ import annotations

import json

import pytest

from ragas_compat.cases import parse_suite_text
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.record import session
from ragas_compat.tools.record.cases import MAX_REPLY_CHARS, build_case
from ragas_compat.tools.record.dataset import Dataset, Sample

FIELDS = {"user_input": "When?", "response": "In 1900.", "reference": "In 1900.",
          "retrieved_contexts": ["Founded in 1900."]}
HUGE = "x" * (20 * 1024 * 1024)


def probe_record(reply: str) -> dict:
    return {"metrics": {"context_precision_with_reference": {
        "target": "legacy:LLMContextPrecisionWithReference",
        "value": {"error": {"type": "OutputParserException", "message": f"Failed to parse: {reply}"}},
        "calls": [{"kind": "context_precision", "replies": [reply, reply]}]}}}


def test_a_20_mb_judge_reply_is_cut_and_its_verdicts_not_frozen():
    built = build_case(Sample(1, "row-1", None, FIELDS), probe_record(HUGE))
    assert built.case is not None
    text = json.dumps({"schema_version": 1, "suite": "s", "cases": [built.case]}, ensure_ascii=False)
    assert len(text) < 3 * MAX_REPLY_CHARS  # was 3 x 20 MB
    recording = built.case["recording"]
    assert "over the recording limit" in recording["not_replayable"]["legacy:LLMContextPrecisionWithReference"]
    assert recording["replies"]["context_precision_with_reference"][0]["replies"][0].endswith(
        f"[cut: {len(HUGE):,} characters]")
    assert "verdicts" not in built.case
    parse_suite_text(text, source="recorded.json")  # `run` reads it


def test_a_case_file_over_the_input_limit_is_not_written(tmp_path, monkeypatch):
    out = tmp_path / "recorded.json"
    out.write_text("old", encoding="utf-8")
    monkeypatch.setenv("RAGAS_COMPAT_MAX_INPUT_BYTES", "20000")
    case = {"id": "row-1", "category": "single_source", **FIELDS, "response": "y" * 30000}
    dataset = Dataset("d.jsonl", "0" * 64, (), (), ())
    with pytest.raises(HarnessInputError, match="over the input limit of 20000 bytes"):
        session._write(out, {"row-1": case}, {"row-1": 1}, {"fingerprint": "f"}, dataset, None, complete=True)
    assert out.read_text(encoding="utf-8") == "old"
