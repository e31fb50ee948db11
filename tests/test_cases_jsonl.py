"""JSONL case files: one case per line, read as a stream, the JSON case file's schema and limits per case.

Each problem names the file, the line and the field; a refused file exits 2 with nothing written; the
JSON path is unchanged (a compact one-line JSON case file is still JSON).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cases import load_cases, load_default_suite
from ragas_compat.cases.loader import MAX_LISTED_PROBLEMS, jsonl_first_line, read_jsonl_cases
from ragas_compat.cli.app import app
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import DEFAULT_MAX_CASES, Limits
from ragas_compat.resources import package_json

runner = CliRunner()


def default_document() -> dict:
    return package_json("cases/suites/default.json")


def jsonl(cases: list[dict], header: dict | None = None) -> str:
    lines = ([json.dumps(header)] if header is not None else []) + [json.dumps(case) for case in cases]
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path, limits: Limits | None = None) -> list[str]:
    with pytest.raises(HarnessInputError) as err:
        load_cases(path, limits)
    return err.value.problems


def test_the_bundled_suite_as_jsonl_loads_to_the_same_cases(tmp_path):
    document = default_document()
    header = {key: value for key, value in document.items() if key != "cases"}
    path = write(tmp_path, "suite.jsonl", jsonl(document["cases"], header))
    suite, bundled = load_cases(path), load_default_suite()
    assert (suite.name, suite.source) == (document["suite"], "suite.jsonl")
    assert [case.id for case in suite.cases] == [case.id for case in bundled.cases]
    assert suite.cases == bundled.cases


def test_without_a_header_the_suite_is_named_after_the_file_and_suite_targets_merge(tmp_path):
    case = default_document()["cases"][0]
    path = write(tmp_path, "mine.jsonl", "\n" + jsonl([case]) + "\n\n")  # blank lines are skipped
    suite = load_cases(path)
    assert (suite.name, [c.id for c in suite.cases]) == ("mine", [case["id"]])
    configured = next(c for c in default_document()["cases"] if "targets" in c)
    header = {"schema_version": 1, "suite": "s", "targets": configured["targets"]}
    plain = {k: v for k, v in configured.items() if k != "targets"}
    merged = load_cases(write(tmp_path, "t.jsonl", jsonl([plain], header))).cases[0]
    assert merged.targets == load_default_suite().case(configured["id"]).targets


def test_a_compact_one_line_json_case_file_is_still_json(tmp_path):
    document = default_document()
    path = write(tmp_path, "one-line.json", json.dumps(document))
    assert jsonl_first_line(path.read_bytes()) is None
    assert load_cases(path).cases == load_default_suite().cases


def test_problems_name_the_file_the_line_the_case_and_the_field(tmp_path):
    cases = [dict(case) for case in default_document()["cases"][:4]]
    cases[1]["corpus_relevent_count"] = 3
    cases[2] = {**cases[2], "id": cases[0]["id"]}
    header = {"schema_version": 1, "suite": "s"}
    text = jsonl(cases, header) + '{"id": "broken", "category": \n'
    lines = problems_of(write(tmp_path, "bad.jsonl", text))
    first_id = cases[0]["id"]
    assert lines == [
        f"bad.jsonl: line 3: case {cases[1]['id']!r}: $.corpus_relevent_count: unknown key "
        "'corpus_relevent_count'; did you mean 'corpus_relevant_count'?",
        f"bad.jsonl: line 4: case {first_id!r}: $.id: duplicate case id (first used on line 2)",
        "bad.jsonl: line 6: not valid JSON: Expecting value at column 30",
    ]


def test_header_problems_bad_utf8_and_the_dataset_form(tmp_path):
    case = default_document()["cases"][0]
    lines = problems_of(write(tmp_path, "h.jsonl", jsonl([case], {"schema_version": 2, "suite": "s", "sute": 1})))
    assert lines == ["h.jsonl: line 1: (header) $.sute: unknown key 'sute'; did you mean 'suite'?",
                     "h.jsonl: line 1: (header) $.schema_version: expected 1, got integer 2"]
    raw = (jsonl([case]) + json.dumps({**case, "id": "x"})).encode("utf-8").replace(b'"x"', b'"\xff"')
    assert problems_of(write(tmp_path, "u.jsonl", raw)) == [
        "u.jsonl: line 2: not UTF-8 text: byte 0xff at column 9 (invalid start byte)"]
    samples = "\n".join(json.dumps({"user_input": "q", "response": "a", "retrieved_contexts": ["c"]}) for _ in range(3))
    (line,) = problems_of(write(tmp_path, "data.jsonl", samples))
    assert "is a Ragas EvaluationDataset (JSONL" in line and "ragas-compat record" in line
    (empty,) = problems_of(write(tmp_path, "e.jsonl", json.dumps({"schema_version": 1, "suite": "s"}) + "\n"))
    assert empty.startswith("e.jsonl: no cases")


def test_limits_per_line_and_the_case_limit_stop_the_stream_early(tmp_path):
    case = default_document()["cases"][0]
    many = [{**case, "id": f"c{i}"} for i in range(50)]
    stream = io.BytesIO(jsonl(many).encode("utf-8"))
    with pytest.raises(HarnessInputError) as err:
        read_jsonl_cases(stream, "many.jsonl", Limits(max_cases=3))
    assert err.value.problems == ["many.jsonl: line 4: more than 3 cases; at most 3 are read "
                                  "(raise the limit with RAGAS_COMPAT_MAX_CASES=N)"]
    assert stream.tell() < len(stream.getvalue()) // 10  # refused on the fourth line, the rest unread
    long_line = json.dumps({**case, "description": "x" * 5000})
    path = write(tmp_path, "long.jsonl", jsonl([case]) + long_line + "\n")
    assert problems_of(path, Limits(max_input_bytes=4096)) == [
        "long.jsonl: line 2: longer than the input limit of 4096 bytes per line "
        "(raise it with RAGAS_COMPAT_MAX_INPUT_BYTES=BYTES)"]
    contexts = {**case, "id": "wide", "retrieved_contexts": ["c"] * 6, "verdicts": {}}
    (wide,) = problems_of(write(tmp_path, "wide.jsonl", jsonl([contexts])), Limits(max_list_items=5))
    assert wide == "wide.jsonl: line 1: case 'wide': $.retrieved_contexts: 6 items; a case's lists hold at most 5 items"
    assert DEFAULT_MAX_CASES == 100_000


def test_problems_past_the_listed_number_are_counted(tmp_path):
    case = default_document()["cases"][0]
    bad = [{**case, "id": f"c{i}", "category": 7} for i in range(MAX_LISTED_PROBLEMS + 5)]
    with pytest.raises(HarnessInputError) as err:
        load_cases(write(tmp_path, "bad.jsonl", jsonl(bad)))
    assert len(err.value.problems) == MAX_LISTED_PROBLEMS + 1
    assert err.value.problems[-1] == "bad.jsonl: ... and 5 more problems"


def test_run_refuses_a_bad_jsonl_file_with_exit_2_and_writes_nothing(tmp_path):
    case = default_document()["cases"][0]
    path = write(tmp_path, "bad.jsonl", jsonl([case, {**case, "verdicts": {"context_precison": [1]}}]))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", "--cases", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "bad.jsonl: line 2: case" in result.output and "$.verdicts.context_precison" in result.output
    assert not out.exists()


def test_standard_input_takes_jsonl_too(tmp_path, monkeypatch):
    case = default_document()["cases"][0]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(jsonl([case]).encode("utf-8"))))
    suite = load_cases("-")
    assert (suite.source, suite.name, [c.id for c in suite.cases]) == ("<stdin>", "stdin", [case["id"]])


@pytest.mark.slow
def test_run_scores_a_jsonl_case_file_as_its_json_twin(tmp_path):
    document = default_document()
    cases = [c for c in document["cases"] if c.get("category") == document["cases"][0]["category"]][:3]
    json_file = write(tmp_path, "twin.json", json.dumps({"schema_version": 1, "suite": "twin", "cases": cases}))
    jsonl_file = write(tmp_path, "twin.jsonl", jsonl(cases, {"schema_version": 1, "suite": "twin"}))
    reports = []
    for path in (json_file, jsonl_file):
        out = tmp_path / path.suffix.lstrip(".")
        result = runner.invoke(app, ["run", "--cases", str(path), "--out", str(out), "--golden", "--quiet"])
        assert result.exit_code in (0, 1), result.output
        rows = json.loads((out / "report.json").read_text(encoding="utf-8"))
        reports.append({key: value for key, value in rows.items() if key != "provenance"})
    assert reports[0] == reports[1]


def test_a_jsonl_file_missing_required_keys_is_named_line_by_line_not_as_bad_json(tmp_path):
    # a user's first JSONL file: a header without schema_version, cases without category
    path = tmp_path / "mine.jsonl"
    path.write_text('{"suite": "mine"}\n'
                    '{"id": "q1", "user_input": "Port?", "response": "8080", "reference": "8080",'
                    ' "retrieved_contexts": ["port 8080"], "verdicts": {"context_precision_with_reference": [1]}}\n',
                    encoding="utf-8")
    assert jsonl_first_line(path.read_bytes()) == "header"
    with pytest.raises(HarnessInputError) as caught:
        load_cases(path)
    problems = caught.value.problems
    assert any("line 1: (header) $: missing required key 'schema_version'" in p for p in problems), problems
    assert any("line 2: case 'q1': $: missing required key 'category'" in p for p in problems), problems
    assert not any("not valid JSON" in p or "EvaluationDataset" in p for p in problems), problems
