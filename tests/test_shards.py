"""Shards: ``run --shard K/N`` and ``ragas-compat merge`` (ragas_compat.tools.shards).

The split is a partition decided by the case id alone; merging refuses shards of different runs
(exit 2, naming the field); the evaluate() section is rebuilt per (API, target) in suite order; and
the default suite run unsharded and as 3 merged shards gives byte-identical report files.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.cli.app import app
from ragas_compat.compare.dataset_level import numpy_nanmean
from ragas_compat.compare.verdict import exit_code, parse_fail_on
from ragas_compat.errors import HarnessInputError
from ragas_compat.pipeline import REPORT_FILES
from ragas_compat.tools import shards
from ragas_compat.tools.shards import (
    ShardSpec,
    check_together,
    merge_evaluate,
    parse_shard,
    shard_of,
    shard_suite,
    suite_digest,
)


def test_parse_shard_accepts_k_of_n_and_refuses_the_rest():
    assert parse_shard("2/3") == ShardSpec(2, 3)
    assert str(parse_shard(" 1 / 1 ")) == "1/1"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""):
        with pytest.raises(HarnessInputError) as caught:
            parse_shard(bad)
        assert caught.value.field == "--shard"


def test_the_split_is_a_partition_decided_by_the_id_alone():
    suite = load_default_suite()
    parts = [shard_suite(suite, ShardSpec(k, 3)) for k in (1, 2, 3)]
    ids = [c.id for c in suite.cases]
    assert sorted(i for part in parts for i in (c.id for c in part.cases)) == sorted(ids)
    assert all(part.cases for part in parts)  # the bundled suite fills every one of 3 shards
    for part in parts:  # each shard keeps the suite's order, name and source
        assert [c.id for c in part.cases] == [i for i in ids if i in {c.id for c in part.cases}]
        assert (part.name, part.source) == (suite.name, suite.source)
    # the documented hash: the first 8 bytes of SHA-256 of the id, big-endian, modulo N, plus 1
    for case_id in ids[:20]:
        expected = 1 + int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big") % 3
        assert shard_of(case_id, 3) == expected
    reversed_suite = Suite(suite.name, suite.source, tuple(reversed(suite.cases)))
    assert {c.id for c in shard_suite(reversed_suite, ShardSpec(2, 3)).cases} == {c.id for c in parts[1].cases}
    assert shard_suite(suite, ShardSpec(1, 1)).cases == suite.cases


def test_suite_digest_sees_content_not_only_ids():
    suite = load_default_suite()
    first = suite.cases[0]
    changed = SimpleNamespace(id=first.id, raw={**first.raw, "response": "something else"})
    assert suite_digest(suite) == suite_digest(Suite(suite.name, suite.source, suite.cases))
    assert suite_digest(suite) != suite_digest(Suite(suite.name, suite.source, (changed, *suite.cases[1:])))


def _doc(index: int, count: int, **changes) -> dict:
    document = {
        "format": shards.SHARD_FORMAT, "path": f"shard{index}",
        "shard": {"index": index, "count": count, "cases": 1},
        "suite": {"name": "s", "cases": 3, "digest": "sha256:x"},
        "inputs": {"cases": [], "expectations": None, "expectations_digest": None},
        "metrics": None, "rules_version": "0.4.3",
        "provenance": {"ragas_version": "0.4.3", "pin": {"commit": "abc"}, "suite": {"name": "s"},
                       "network": f"{index} connection attempts blocked", "network_attempts": [index]},
        "probe": {"results": []},
    }
    for key, value in changes.items():
        document[key] = value
    return document


def test_merge_refuses_shards_of_different_runs_naming_the_field():
    check_together([_doc(2, 2), _doc(1, 2)])  # network attempts may differ: each probe has its own
    other_ragas = _doc(2, 2)
    other_ragas["provenance"] = {**other_ragas["provenance"], "ragas_version": "0.4.2"}
    other_pin = _doc(2, 2)
    other_pin["provenance"] = {**other_pin["provenance"], "pin": {"commit": "def"}}
    other_suite = _doc(2, 2, suite={"name": "s", "cases": 3, "digest": "sha256:y"})
    other_expectations = _doc(2, 2, inputs={"cases": [], "expectations": "e.toml", "expectations_digest": "sha256:e"})
    cases = [(other_ragas, "ragas_version"), (other_pin, "pin.commit"), (other_suite, "suite.digest"),
             (_doc(2, 2, metrics=["faithfulness"]), "metrics"), (other_expectations, "expectations_digest"),
             (_doc(2, 3), "shard.count"), (_doc(1, 2), "shard.index")]
    for other, field in cases:
        with pytest.raises(HarnessInputError) as caught:
            check_together([_doc(1, 2), other])
        assert caught.value.field == field, (field, str(caught.value))
        assert caught.value.exit_code == 2
    with pytest.raises(HarnessInputError, match=r"shard\(s\) 2/3 missing"):
        check_together([_doc(1, 3), _doc(3, 3)])


def test_merge_refuses_shards_classified_under_another_python_than_its_own(monkeypatch):
    """Shards of a run under Python 3.13, merged by a 3.11 harness, gave reports that were not the unsharded
    run's (the merge recomputes the reference in its own process: 3.12 made sum() exact). Refused, naming
    host.python; shards that do not say which Python (written before they recorded it) are merged as before."""
    import platform

    monkeypatch.setattr(platform, "python_version", lambda: "3.11.7")
    here, there = _doc(1, 2, host={"python": "3.11.2"}), _doc(2, 2, host={"python": "3.13.0"})
    shards.check_same_python([here, _doc(2, 2, host={"python": "3.11.9"})])  # the patch level does not matter
    shards.check_same_python([_doc(1, 2), _doc(2, 2)])
    with pytest.raises(HarnessInputError) as caught:
        shards.check_same_python([there, _doc(1, 2, host={"python": "3.13.0"})])
    assert caught.value.field == "host.python" and caught.value.exit_code == 2
    assert "classified under Python 3.13" in str(caught.value) and "runs under 3.11" in str(caught.value)
    with pytest.raises(HarnessInputError) as caught:
        check_together([here, there])
    assert caught.value.field == "host.python"
    odd = _doc(1, 2, host="x")  # not a shard this harness writes: no Python said, not a crash (exit 4)
    shards.check_same_python([odd, _doc(2, 2, host={"python": "x.y"})])


def _run(api: str, targets: list[str], rows: list[tuple[str, dict]], scores: dict, **extra) -> dict:
    return {"api": api, "metric_set": "legacy_llm", "targets": targets, "scores": scores, "errors": [],
            "rows": [{"case_id": case_id, "values": values} for case_id, values in rows], "run_error": None,
            "stub_problems": [], **extra}


def test_merge_evaluate_rebuilds_rows_in_suite_order_and_the_mean_over_all_of_them():
    suite = Suite("s", "s", tuple(SimpleNamespace(id=i) for i in ("a", "b", "c", "d")))
    values = {"a": 0.1, "b": "NaN", "c": 0.7, "d": 0.30000000000000004}
    one = _doc(1, 2, probe={"evaluate": {"settings": {"apis": ["evaluate"]}, "runs": [
        _run("evaluate", ["T", "U"], [("c", {"T": values["c"], "U": 1.0}), ("a", {"T": values["a"], "U": 0.0})],
             {"T": (0.1 + 0.7) / 2, "U": 0.5},
             errors=[{"case_id": "a", "target": "U", "type": "E", "message": "m"}])]}})
    two = _doc(2, 2, probe={"evaluate": {"settings": {"apis": ["evaluate"]}, "runs": [
        _run("evaluate", ["T"], [("b", {"T": "NaN"}), ("d", {"T": values["d"]})], {"T": 0.25}),
        _run("evaluate", ["V"], [], {}, run_error={"type": "X", "message": "boom"})]}})
    merged = merge_evaluate([one, two], suite)
    assert merged["settings"] == {"apis": ["evaluate"]}
    by_target = {run["targets"][0]: run for run in merged["runs"] if not run["run_error"]}
    assert [row["case_id"] for row in by_target["T"]["rows"]] == ["a", "b", "c", "d"]
    floats = [math.nan if v == "NaN" else v for v in (values[i] for i in "abcd")]
    assert by_target["T"]["scores"]["T"] == numpy_nanmean(floats)
    assert by_target["U"]["scores"]["U"] == 0.5  # one shard's rows only: Ragas's own mean, as reported
    assert by_target["U"]["errors"] == [{"case_id": "a", "target": "U", "type": "E", "message": "m"}]
    assert by_target["T"]["errors"] == []
    # shard 2 reported 0.25 for T, its own rows' nanmean is 0.30000000000000004: named, never hidden
    [problem] = by_target["T"]["stub_problems"]
    assert problem.startswith("T: shard 2/2: evaluate() reported the mean 0.25")
    assert [run["run_error"] for run in merged["runs"] if run["run_error"]] == [{"type": "X", "message": "boom"}]


@pytest.mark.slow
def test_the_default_suite_in_3_merged_shards_writes_the_unsharded_report_set(tmp_path: Path, default_audit_run):
    """The unsharded run is the session's default audit (``ragas-compat run`` in process: its four reports
    as rendered); the shards are ``run --shard`` commands in process too (each probe its own subprocess, as
    always; in process, a shard's host does not import the command line and the oracle libraries again),
    merged by ``merge`` in process."""
    whole = default_audit_run.audit
    assert exit_code(whole, parse_fail_on(None)) == 0
    for k in (1, 2, 3):
        shard = CliRunner().invoke(app, ["run", "--shard", f"{k}/3", "--out", str(tmp_path / f"shard{k}"), "--quiet",
                                         "--workers", "1"])
        assert shard.exit_code == 0, shard.output
    folders = [str(tmp_path / f"shard{k}") for k in (3, 1, 2)]  # any order
    merged = CliRunner().invoke(app, ["merge", *folders, "--out", str(tmp_path / "merged"), "--quiet"])
    assert merged.exit_code == 0, merged.output
    for name in REPORT_FILES:
        assert (tmp_path / "merged" / name).read_bytes() == default_audit_run.reports[name].encode("utf-8"), name
    documents = [json.loads((tmp_path / f"shard{k}" / "shard.json").read_text(encoding="utf-8")) for k in (1, 2, 3)]
    assert sum(d["shard"]["cases"] for d in documents) == documents[0]["suite"]["cases"] == len(load_default_suite().cases)

    # a shard of another Ragas: refused, exit 2, the field named; a shard missing: refused
    stranger = copy.deepcopy(documents[1])
    stranger["provenance"]["ragas_version"] = "0.0.1"
    (tmp_path / "stranger").mkdir()
    (tmp_path / "stranger" / "shard.json").write_text(json.dumps(stranger), encoding="utf-8")
    refused = CliRunner().invoke(app, ["merge", folders[1], str(tmp_path / "stranger"), folders[0], "--out",
                                       str(tmp_path / "refused")])
    assert refused.exit_code == 2 and "ragas_version differs" in refused.output, refused.output
    missing = CliRunner().invoke(app, ["merge", *folders[:2], "--out", str(tmp_path / "refused")])
    assert missing.exit_code == 2 and "2/3 missing" in missing.output, missing.output
    # a shard with one case's results taken out: refused, the case named (it merged green with fewer rows)
    cut = copy.deepcopy(documents[0])
    gone = cut["probe"]["results"][0]["case_id"]
    cut["probe"]["results"] = [r for r in cut["probe"]["results"] if r["case_id"] != gone]
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "shard.json").write_text(json.dumps(cut), encoding="utf-8")
    short = CliRunner().invoke(app, ["merge", str(tmp_path / "cut"), folders[0], folders[2], "--out",
                                     str(tmp_path / "refused")])
    assert short.exit_code == 2 and f"(first {gone!r})" in " ".join(short.output.split()), short.output
    assert not (tmp_path / "refused" / "report.json").exists()


def _complete_shards(suite: Suite, metrics: tuple[str, ...] | None, count: int) -> list[dict]:
    """Shard documents (only what ``check_complete`` reads) holding one result per (case, target) of the run."""
    from ragas_compat.cases.loader import raw_object
    from ragas_compat.pipeline import targets_of
    from ragas_compat.probe.protocol import spec_applies, spec_name
    from ragas_compat.runner import request_targets

    docs = [{"path": f"shard{k}/shard.json", "shard": {"index": k, "count": count, "cases": 0},
             "probe": {"results": []}} for k in range(1, count + 1)]
    for case in suite.cases:
        docs[shards.shard_of(case.id, count) - 1]["shard"]["cases"] += 1
    raws = [raw_object(case) for case in suite.cases]
    for spec in request_targets(targets_of(metrics), raws):
        for raw in raws:
            if spec_applies(spec, raw):
                docs[shards.shard_of(raw["id"], count) - 1]["probe"]["results"].append(
                    {"case_id": raw["id"], "target": spec_name(spec)})
    return docs


def test_merge_refuses_shards_that_do_not_hold_every_row_of_the_run():
    """A shard with a case's results taken out (and its evaluate() rows and means made to agree) merged into
    a green report that checked fewer rows; now the rows are counted against the suite read again."""
    suite = load_default_suite()
    metrics = None
    whole = _complete_shards(suite, metrics, 2)
    shards.check_complete(whole, suite, metrics)  # as written: accepted

    def refused(docs: list[dict]) -> str:
        with pytest.raises(HarnessInputError) as caught:
            shards.check_complete(docs, suite, metrics)
        return str(caught.value)

    first = whole[0]["probe"]["results"][0]
    removed = copy.deepcopy(whole)
    removed[0]["probe"]["results"] = [r for r in removed[0]["probe"]["results"] if r["case_id"] != first["case_id"]]
    assert f"no result for 1 of its cases (first {first['case_id']!r})" in refused(removed)
    one = copy.deepcopy(whole)
    one[0]["probe"]["results"].remove(first)
    assert f"{first['target']}: no result for 1 of its cases" in refused(one)
    twice = copy.deepcopy(whole)
    twice[0]["probe"]["results"].append(dict(first))
    assert "given twice" in refused(twice)
    moved = copy.deepcopy(whole)
    moved[0]["probe"]["results"].remove(first)
    moved[1]["probe"]["results"].append(first)
    assert f"a result of case {first['case_id']!r}, which is not shard 2/2's" in refused(moved)
    counted = copy.deepcopy(whole)
    counted[0]["shard"]["cases"] -= 1
    assert "shard.cases is" in refused(counted)
    stranger = copy.deepcopy(whole)
    stranger[0]["probe"]["results"].append({"case_id": first["case_id"], "target": "legacy:NoSuchClass"})
    assert "legacy:NoSuchClass: results of a target this run does not score" in refused(stranger)


def test_a_target_of_a_class_some_releases_lack_may_be_absent_as_a_whole():
    from ragas_compat.cases.loader import raw_object
    from ragas_compat.probe.protocol import spec_name
    from ragas_compat.runner import request_targets

    suite = load_default_suite()
    specs = request_targets(None, [raw_object(case) for case in suite.cases])
    released = {spec_name(spec) for spec in specs if "releases" in spec}
    assert released, "the registry declares a target of a class some releases only have"
    whole = _complete_shards(suite, None, 2)
    for doc in whole:
        doc["probe"]["results"] = [r for r in doc["probe"]["results"] if r["target"] not in released]
    shards.check_complete(whole, suite, None)  # absent as a whole: the probe leaves it out where Ragas lacks it
    partly = _complete_shards(suite, None, 2)  # but not absent from some of its cases only
    results = [(doc, r) for doc in partly for r in doc["probe"]["results"] if r["target"] in released]
    name = next(n for n in sorted(released) if sum(r["target"] == n for _, r in results) >= 2)
    doc, result = next((d, r) for d, r in results if r["target"] == name)
    doc["probe"]["results"].remove(result)
    with pytest.raises(HarnessInputError, match=f"{re.escape(name)}: no result for 1 of its cases"):
        shards.check_complete(partly, suite, None)
