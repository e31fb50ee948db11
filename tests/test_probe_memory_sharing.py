"""The probe's memory at scale (issue 40): results spooled by the workers, request lists shared as parsed.

``SpooledResults`` writes the output's results in place order from the workers' files and the pairs
scored before the fork, holding one line per file; a place missing or given twice is the probe's own
bug and stops the output. ``case_list_sharer`` makes equal case ids one string and equal target case
lists one list (and one set per list in ``targets_from_request``): a large request names each case
in dozens of target lists.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

from ragas_compat.probe.targets import case_list_sharer, targets_from_request
from ragas_compat.runner import request_targets
from ragas_compat.tools.scale_bench import copied_suite


def _probe_main():
    """The probe's ``__main__`` module, imported here without leaving its RAGAS_DO_NOT_TRACK setting behind."""
    before = os.environ.get("RAGAS_DO_NOT_TRACK")
    try:
        return importlib.import_module("ragas_compat.probe.__main__")
    finally:
        if before is None:
            os.environ.pop("RAGAS_DO_NOT_TRACK", None)
        else:
            os.environ["RAGAS_DO_NOT_TRACK"] = before


def _spool(tmp_path: Path, files: dict[int, list[int]], early: list[int], total: int):
    main = _probe_main()
    spooled = main.SpooledResults(str(tmp_path), {place: main.Encoded(f'{{"n": {place}}}') for place in early}, total)
    for worker, places in files.items():
        Path(spooled.path(worker)).write_text("".join(f'{place}\t{{"n": {place}}}\n' for place in places),
                                              encoding="utf-8")
    return spooled


def test_results_come_in_place_order_from_the_workers_files_and_the_early_pairs(tmp_path: Path):
    spooled = _spool(tmp_path, {0: [1, 2, 6], 1: [3, 4, 5, 8]}, early=[0, 7], total=9)
    assert [json.loads(line)["n"] for line in spooled] == list(range(9))
    spooled.discard()
    assert not tmp_path.exists()


@pytest.mark.parametrize("files,early,total,message", [
    ({0: [0, 2]}, [], 3, "result 1 of 3 is missing"),
    ({0: [0, 1], 1: [1, 2]}, [], 3, "repeated"),
    ({0: [0, 1]}, [], 3, "1 of 3 scored pairs have no result"),
])
def test_a_result_missing_or_repeated_stops_the_output(tmp_path: Path, files, early, total, message):
    with pytest.raises(RuntimeError, match=message):
        list(_spool(tmp_path, files, early, total))


def test_equal_case_lists_and_ids_are_one_object_once_parsed(tmp_path: Path):
    cases = copied_suite(300)["cases"]
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"cases": cases, "targets": request_targets(None, cases)}), encoding="utf-8")
    request = _probe_main().read_request(str(path))
    plain = json.loads(path.read_text(encoding="utf-8"))
    assert request == plain  # the same request, parsed
    listed = [spec["cases"] for spec in request["targets"] if isinstance(spec, dict) and "cases" in spec]
    distinct = {tuple(ids) for ids in listed}
    assert len(listed) > len(distinct) > 0
    assert len({id(ids) for ids in listed}) == len(distinct)  # one list per distinct list
    ids = {id(case["id"]) for case in request["cases"]}
    assert all(id(case_id) in ids for case_ids in listed for case_id in case_ids)  # the cases' own strings
    targets = [t for t in targets_from_request(request["targets"]) if t.case_ids is not None]
    assert len({id(t.case_ids) for t in targets}) == len(distinct)  # one set per list
    assert case_list_sharer()({"id": "a", "cases": [1, "x"]}) == {"id": "a", "cases": [1, "x"]}  # not ids: as is
