"""The probe's output layout: one JSON document, ``results`` last with one compact result per line,
so the host reads the results one at a time (``ragas_compat.runner._read_output_streamed``)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from ragas_compat.errors import RagasUnavailable
from ragas_compat.probe.protocol import RESULTS_LINE
from ragas_compat.runner import PackedRuns, _read_output, _read_output_streamed

DOCUMENT = {
    "probe_format": 2,
    "python": {"version": "3.11.7"},
    "ragas": {"version": "0.4.3", "file": None, "import_error": None},
    "results": [
        {"case_id": "a", "target": "legacy:X", "value": 0.5, "received": {"response": "line 1\nline 2 \u2028 é"}},
        {"case_id": "b,]", "target": "collections:Y", "value": "NaN", "warnings": ["]", ","]},
        {"case_id": "c", "target": "legacy:X", "value": {"error": {"type": "ValueError", "message": "x\r\n]"}}},
    ],
    "evaluate": {"runs": [{"rows": [{"case_id": "a"}]}]},
}


def probe_wrote(document: dict, path: Path) -> None:
    """``document`` written by the probe's own writer (its ``__main__.write``, in a subprocess as the probe)."""
    script = textwrap.dedent(f"""
        import json, sys
        from ragas_compat.probe.__main__ import write
        write(json.loads(sys.stdin.read()), {str(path)!r})
    """)
    subprocess.run([sys.executable, "-c", script], input=json.dumps(document), text=True, check=True, timeout=60)


@pytest.mark.parametrize("results", [DOCUMENT["results"], []], ids=["three-results", "no-results"])
def test_the_layout_is_one_json_document_read_whole_or_one_result_at_a_time(tmp_path: Path, results):
    document = {**DOCUMENT, "results": results}
    path = tmp_path / "output.json"
    probe_wrote(document, path)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[lines.index(RESULTS_LINE) + 1: lines.index(RESULTS_LINE) + 1 + len(results)] == \
        [json.dumps(r, ensure_ascii=False) + ("," if i < len(results) - 1 else "") for i, r in enumerate(results)]
    assert json.loads(path.read_text(encoding="utf-8")) == document == _read_output(path)
    streamed = _read_output_streamed(path)
    assert not isinstance(streamed["results"], list)
    assert {**streamed, "results": list(streamed["results"])} == document


def test_a_result_line_that_does_not_parse_is_a_probe_error_when_reached(tmp_path: Path):
    path = tmp_path / "output.json"
    probe_wrote(DOCUMENT, path)
    text = path.read_text(encoding="utf-8").replace('"case_id": "c"', '"case_id": c"')
    path.write_text(text, encoding="utf-8")
    results = _read_output_streamed(path)["results"]
    assert [r["case_id"] for r in (next(results), next(results))] == ["a", "b,]"]
    with pytest.raises(RagasUnavailable, match="probe wrote unreadable output"):
        next(results)


@pytest.mark.parametrize("indent", [None, 1, 2])
def test_an_output_in_another_layout_is_read_whole(tmp_path: Path, indent):
    path = tmp_path / "output.json"
    document = {**DOCUMENT, "probe_format": 1}  # indent=1 writes RESULTS_LINE too, then one item per line
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    assert _read_output_streamed(path) == document
    path.write_text('{"probe_format": 2, ', encoding="utf-8")
    assert _read_output_streamed(path).startswith("probe wrote unreadable output")


def test_streamed_evaluate_runs_are_packed_and_read_a_run_at_a_time(tmp_path: Path):
    """Read one result at a time, the output's evaluate() runs are held packed (``PackedRuns``): equal to
    the runs as parsed, each unpacked (a new copy) when read, so a reader that takes a run at a time
    (``dataset_level.from_probe``) never holds every run parsed (issue 40)."""
    runs = [{"api": "evaluate", "targets": ["legacy:X"], "rows": [{"case_id": f"c{i}", "values": {"legacy:X": i / 7}}
                                                                   for i in range(50)], "scores": {"legacy:X": 0.5}},
            {"api": "aevaluate", "targets": ["legacy:X"], "rows": [], "run_error": None, "n": [1, 1.0, True, None]}]
    document = {**DOCUMENT, "evaluate": {"settings": {"batch": 2}, "runs": runs}}
    path = tmp_path / "output.json"
    probe_wrote(document, path)
    streamed = _read_output_streamed(path)
    packed = streamed["evaluate"]["runs"]
    assert isinstance(packed, PackedRuns) and len(packed) == 2
    assert packed == runs and list(packed) == runs and packed[1:] == runs[1:]
    assert repr(packed[1]["n"]) == "[1, 1.0, True, None]"
    packed[0]["rows"].clear()
    assert packed[0] == runs[0]  # each read is a copy
    assert {**streamed, "results": list(streamed["results"])} == document
    many = {**DOCUMENT, "evaluate": {"runs": [{**runs[0], "api": f"api{i}"} for i in range(40)]}}
    probe_wrote(many, path)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        parsed = _read_output(path)["evaluate"]
        gc.collect()
        parsed_bytes = tracemalloc.get_traced_memory()[0] - start
        del parsed
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        held = _read_output_streamed(path)["evaluate"]
        gc.collect()
        held_bytes = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(held["runs"]) == 40 and held_bytes < parsed_bytes // 2, (parsed_bytes, held_bytes)
