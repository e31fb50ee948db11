"""A run's cases hold their raw JSON objects packed once the probe's request is written (issue 40).

``ragas_compat.cases.loader.packed`` keeps each case's raw object as ``marshal`` bytes behind a
read-only mapping (``PackedRaw``): the same keys, values, types and key order, unpacked one case at a
time when a field is read. ``run`` hands ``run_audit`` a packed suite; the request still carries the
raw objects exactly as read.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

from ragas_compat.cases import load_cases, load_default_suite, parse_suite
from ragas_compat.cases.loader import PackedRaw, packed, raw_object
from ragas_compat.tools.scale_bench import copied_suite


def _exact(value) -> str:
    return json.dumps(value, ensure_ascii=False) + repr(value)  # key order, and 1 apart from 1.0 and True


def test_a_packed_suite_holds_the_same_cases_and_raw_objects():
    suite = load_default_suite()
    packed_suite = packed(suite)
    assert (packed_suite.name, packed_suite.source) == (suite.name, suite.source)
    assert packed_suite.cases == suite.cases
    for case, packed_case in zip(suite.cases, packed_suite.cases, strict=True):
        assert isinstance(packed_case.raw, PackedRaw)
        assert _exact(raw_object(packed_case)) == _exact(case.raw)
        assert list(packed_case.raw) == list(case.raw) and len(packed_case.raw) == len(case.raw)
        for key, value in case.raw.items():
            assert key in packed_case.raw and _exact(packed_case.raw[key]) == _exact(value)
            assert _exact(packed_case.raw.get(key)) == _exact(value)
        assert "no such key" not in packed_case.raw and packed_case.raw.get("no such key", 7) == 7
        assert {**packed_case.raw} == case.raw
    assert packed(packed_suite).cases == packed_suite.cases


def test_numbers_keep_their_types_and_an_unpacked_object_is_a_copy():
    case = {"id": "types", "category": "edge", "user_input": "q", "reference": "r", "response": "r",
            "retrieved_contexts": ["a", "b"], "retrieved_context_ids": [1, 1.0, True, "1"],
            "reference_context_ids": [-0.0, 2], "verdicts": {"context_precision_with_reference": [1, 0]}}
    suite = parse_suite({"schema_version": 1, "suite": "types", "cases": [case]})
    packed_case = packed(suite).cases[0]
    assert _exact(packed_case.raw["retrieved_context_ids"]) == _exact([1, 1.0, True, "1"])
    assert repr(packed_case.raw["reference_context_ids"][0]) == "-0.0"
    copy = raw_object(packed_case)
    copy["retrieved_contexts"].append("changed")
    assert packed_case.raw["retrieved_contexts"] == ["a", "b"] == raw_object(packed_case)["retrieved_contexts"]


def test_a_key_the_object_lacks_unpacks_nothing():
    packed_case = packed(load_default_suite()).cases[0]
    assert "recording" not in packed_case.raw
    PackedRaw._last = None
    assert packed_case.raw.get("recording") is None and "recording" not in packed_case.raw
    assert PackedRaw._last is None  # nothing was unpacked
    assert packed_case.raw["id"] == packed_case.id and PackedRaw._last is not None


def test_a_packed_suite_holds_at_most_85_percent_of_the_loaded_one(tmp_path: Path):
    """Measured (tracemalloc) on the bundled suite copied to 600 cases as JSONL: the loaded suite holds
    5.1 KB a case, packed 3.9 KB (77%; its raw objects parsed take about 2.0 KB a case, packed 0.75 KB).
    With the raw objects kept whole: 100%."""
    document = copied_suite(600)
    path = tmp_path / "copied.jsonl"  # a large suite's form: one case per line
    path.write_text("".join(json.dumps(case) + "\n" for case in document["cases"]), encoding="utf-8")
    del document
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        suite = load_cases(path)
        gc.collect()
        parsed = tracemalloc.get_traced_memory()[0] - start
        suite = packed(suite)  # the parsed suite goes: the packed one shares every field but the raw objects
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(suite.cases) == 600 and parsed > 600 * 1000
    assert held < parsed * 85 // 100, (parsed, held, held / parsed)
