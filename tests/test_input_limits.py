"""Hostile input (issue 16): every file the command line reads from users is read within limits and
refused the same way: exit 2, one line naming the file (and the case and field where known), no
traceback, and the output folder untouched (``ragas_compat.input_limits``, the case loader).

Nothing here runs Ragas: every refusal happens before the probe would start.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragas_compat.cases import load_cases, parse_suite, parse_suite_text
from ragas_compat.cli.app import app
from ragas_compat.compare.expectations import load_expectations
from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import (
    DEFAULT_MAX_CASES,
    DEFAULT_MAX_INPUT_BYTES,
    MAX_CASES_ENV,
    MAX_DEPTH,
    MAX_INPUT_BYTES_ENV,
    MAX_LIST_ITEMS,
    MAX_NUMBER_CHARS,
    Limits,
    loads_json,
    loads_toml,
    read_bytes,
)
from ragas_compat.pin.manifest import load_manifest
from ragas_compat.tools.explain import explain
from ragas_compat.tools.fuzz.generator import MAX_FUZZ_CASES
from ragas_compat.tools.matrix.environments import load_version_rules

runner = CliRunner()
ESC = "\x1b"


def good_case(**changes):
    case = {"id": "c1", "category": "edge", "user_input": "q", "reference": "r", "response": "s",
            "retrieved_contexts": ["a", "b", "c"],
            "verdicts": {"context_precision_with_reference": [1, 0, 1]}}
    case.update(changes)
    return case


def suite_text(*cases, suite="hostile") -> str:
    return json.dumps({"schema_version": 1, "suite": suite, "cases": list(cases or [good_case()])})


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def refused(args: list[str], out: Path, *, input: bytes | str | None = None, env: dict | None = None) -> str:
    """Run the CLI; assert exit 2, no traceback, no raw control character, ``out`` untouched; return
    the output (stdout and stderr)."""
    before = sorted(out.rglob("*")) if out.exists() else None
    result = runner.invoke(app, args, input=input, env=env)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # handled, not a traceback
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert ESC not in result.output and "\x07" not in result.output
    assert (sorted(out.rglob("*")) if out.exists() else None) == before, "the output folder was touched"
    return result.output


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


# --------------------------------------------------------------------------- the bounded reader

def test_the_documented_defaults():
    limits = Limits.current()
    assert limits.max_input_bytes == DEFAULT_MAX_INPUT_BYTES == 64 * 1024 * 1024
    assert limits.max_cases == DEFAULT_MAX_CASES == 100_000
    assert (MAX_DEPTH, MAX_NUMBER_CHARS, MAX_LIST_ITEMS, MAX_FUZZ_CASES) == (64, 100, 5_000, 50_000)


def test_env_overrides_and_bad_values(monkeypatch):
    monkeypatch.setenv(MAX_INPUT_BYTES_ENV, "1_000")
    monkeypatch.setenv(MAX_CASES_ENV, "3")
    assert (Limits.current().max_input_bytes, Limits.current().max_cases) == (1000, 3)
    for bad in ("x", "-1", "0", "1e9", "１０"):
        monkeypatch.setenv(MAX_INPUT_BYTES_ENV, bad)
        with pytest.raises(HarnessInputError, match=MAX_INPUT_BYTES_ENV):
            Limits.current()


def test_a_fifo_without_writer_is_refused_at_once(tmp_path):
    fifo = tmp_path / "cases.json"
    os.mkfifo(fifo)
    started = time.perf_counter()
    with pytest.raises(HarnessInputError, match=r"cases\.json: the case file is a FIFO \(named pipe\)"):
        read_bytes(fifo, "case file")
    assert time.perf_counter() - started < 2


def test_dev_zero_and_a_directory_are_refused_without_reading(tmp_path):
    with pytest.raises(HarnessInputError, match="zero: the case file is a character device"):
        read_bytes("/dev/zero", "case file")
    with pytest.raises(HarnessInputError, match="the case file is a directory"):
        read_bytes(tmp_path, "case file")


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path):
    path = write(tmp_path, "big.json", b" " * 2000)
    with pytest.raises(HarnessInputError, match=r"big\.json: the case file is larger than the input limit of "
                                                r"1000 bytes \(2000 bytes; raise it with RAGAS_COMPAT_MAX"):
        read_bytes(path, "case file", limits=Limits(max_input_bytes=1000))
    assert read_bytes(path, "case file", limits=Limits(max_input_bytes=2000)) == b" " * 2000


def test_stdin_is_read_with_the_same_limit(monkeypatch):
    import io
    import sys

    class Stdin(io.TextIOWrapper):
        pass

    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO(b"x" * 5000)))
    with pytest.raises(HarnessInputError, match=r"<stdin>: the case file is larger than the input limit"):
        read_bytes("-", "case file", limits=Limits(max_input_bytes=4096))
    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO(b"{}")))
    assert read_bytes("-", "case file") == b"{}"
    with pytest.raises(HarnessInputError, match="standard input was already read for the case file"):
        read_bytes("-", "expectations file")
    with pytest.raises(HarnessInputError, match="cannot be read from standard input"):
        read_bytes("-", "pin manifest", allow_stdin=False)


# --------------------------------------------------------------------------- JSON and TOML

@pytest.mark.parametrize(("text", "message"), [
    ("[" * 100_000 + "]" * 100_000, rf"x\.json: JSON nested deeper than {MAX_DEPTH} arrays/objects \(at line 1 "
                                    rf"column {MAX_DEPTH + 1}\)"),
    ('{"a":' * 70 + "1" + "}" * 70, rf"x\.json: \$(\.a){{{MAX_DEPTH}}}: nested deeper than {MAX_DEPTH}"),
    ('{"n": ' + "9" * 5000 + "}", r"x\.json: \$\.n: a number of 5000 characters \(999999999999\.\.\.\); numbers "
                                  r"are limited to 100 characters"),
    ('{"n": 1' + "0" * 400 + ".5}", r"x\.json: \$\.n: a number of 403 characters"),
    ('{"n": 1e999}', r"x\.json: not valid JSON: number 1e999 does not fit in a double"),
    ('{"n": NaN}', r"x\.json: not valid JSON: NaN is not valid JSON"),
    ('{"s": ["ok", "\\ud800"]}', r"x\.json: \$\.s\[1\]: a string with a lone surrogate"),
    ('{"\\udfff": 1}', r'x\.json: \$\["\\udfff"\]: a key with a lone surrogate'),
    ('{"a": 1,}', r"x\.json: not valid JSON: .* line 1 column [89]"),  # 3.13's json: column 8
])
def test_pathological_json_is_refused_with_its_place(text, message):
    with pytest.raises(HarnessInputError, match=message):
        loads_json(text, "x.json")


def test_valid_json_passes_untouched():
    assert loads_json('{"s": "\\ud83d\\ude00", "n": [1, 2.5, -0.0], "deep": ' + "[" * 60 + "]" * 60 + "}", "x") \
        == {"s": "\U0001F600", "n": [1, 2.5, -0.0], "deep": json.loads("[" * 60 + "]" * 60)}


@pytest.mark.parametrize(("text", "message"), [
    ("a = " + "[" * 3000 + "]" * 3000, r"v\.toml: TOML nested deeper than 64"),
    ("a = " + "[" * 70 + "]" * 70, r"v\.toml: a(\[0\]){63}: nested deeper than 64"),
    ("a = " + "9" * 5000, r"v\.toml: an integer of more than 100 digits"),
    ("a = " + "9" * 200, r"v\.toml: a: an integer of more than 100 digits"),
    ("a = 1" + "0" * 300 + ".5", r"v\.toml: a number of 303 characters"),
    ('a = "\\ud800"', r"v\.toml: not valid TOML: Escaped character is not a Unicode scalar value"),
])
def test_pathological_toml_is_refused(text, message):
    with pytest.raises(HarnessInputError, match=message):
        loads_toml(text, "v.toml")


# a hypothesis strategy for pathological JSON: documents that are nearly valid case files, with deep
# nesting, long numbers, lone surrogates, control characters, markup and raw bytes spliced in
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=20))
_json_values = st.recursive(_scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)), max_leaves=20)
_poison = st.one_of(
    st.integers(min_value=65, max_value=3000).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=101, max_value=6000).map(lambda n: "9" * n),
    st.integers(min_value=101, max_value=600).map(lambda n: "1." + "5" * n),
    st.sampled_from(['"\\ud800"', '"\\udc00x"', '"[red]\\u001b[31m\\u0007"', "NaN", "-Infinity", "1e400",
                     '{"\\ud9ff": 0}', "[" * 5000, '"' + "\\" * 3]),
)


@st.composite
def pathological_case_files(draw) -> str:
    case = good_case(id=draw(st.text(min_size=1, max_size=10)))
    slot = draw(st.sampled_from(["suite", "id", "corpus_relevant_count", "extra", "verdict", "contexts"]))
    base = {"schema_version": 1, "suite": draw(st.text(max_size=10)), "cases": [case]}
    marker = "__POISON__"
    if slot == "suite":
        base["suite"] = marker
    elif slot == "id":
        case["id"] = marker
    elif slot == "corpus_relevant_count":
        case["corpus_relevant_count"] = marker
    elif slot == "extra":
        case["description"] = draw(_json_values)
        case["x"] = marker
    elif slot == "verdict":
        case["verdicts"]["context_precision_with_reference"] = [1, marker, 0]
    else:
        case["retrieved_contexts"] = [marker, "b", "c"]
    text = json.dumps(base, ensure_ascii=draw(st.booleans()))
    return text.replace(f'"{marker}"', draw(_poison), 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pathological_case_files())
def test_pathological_case_files_are_refused_cleanly(text):
    try:
        parse_suite_text(text, "fuzzed.json")
    except HarnessInputError as exc:
        assert exc.problems and all(line.startswith("fuzzed.json: ") for line in exc.problems)
    # anything else (RecursionError, ValueError from int(), UnicodeEncodeError ...) fails the test


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_are_refused_cleanly(data):
    for name, load in (("cases.json", load_cases), ("mine.toml", load_expectations)):
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"ragas-compat-hypothesis-{os.getpid()}-{name}"
        path.write_bytes(data)
        try:
            load(path)
        except HarnessInputError:
            pass
        finally:
            path.unlink()


# --------------------------------------------------------------------------- the CLI: exit 2, nothing written

@pytest.mark.parametrize(("content", "expected"), [
    ('{"schema_version": 1, "suite": "s", "cases": ' + "[" * 10_000 + "]" * 10_000 + "}",
     "bad.json: JSON nested deeper than 64 arrays/objects (at line 1 column"),
    (suite_text(good_case(corpus_relevant_count=0)).replace('"corpus_relevant_count": 0', '"corpus_relevant_count": '
                                                             + "4" * 500),
     "bad.json: case 'c1': $.cases[0].corpus_relevant_count: a number of 500 characters"),
    (suite_text(good_case(id="c\ud800")), "bad.json: case 'c\\ud800': $.cases[0].id: a string with a lone surrogate"),
    (b'{"schema_version": 1, "suite": "\xff"}', "bad.json: the case file is not UTF-8 text: byte 0xff at line 1 "
                                               "column 33 (invalid start byte)"),
    (b"\x00\x01\x02binary", "bad.json: not valid JSON: Expecting value at line 1 column 1"),
])
def test_run_refuses_pathological_case_files(tmp_path, content, expected):
    path = write(tmp_path, "bad.json", content)
    out = tmp_path / "out"
    output = refused(["run", "--cases", str(path), "--out", str(out)], out)
    (line,) = error_lines(output)
    assert line.startswith(f"error: {expected}"), output


def test_run_refuses_a_fifo_dev_zero_and_a_directory_at_once(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    for path, kind in ((fifo, "a FIFO (named pipe)"), (Path("/dev/zero"), "a character device"),
                       (tmp_path, "a directory")):
        started = time.perf_counter()
        output = refused(["run", "--cases", str(path), "--out", str(out)], out)
        assert f"the case file is {kind}, not a regular file" in output
        assert time.perf_counter() - started < 10


def test_run_reads_cases_from_stdin_with_the_same_limits(tmp_path):
    out = tmp_path / "out"
    output = refused(["run", "--cases", "-", "--out", str(out)], out, input=b"\0" * 5000,
                     env={MAX_INPUT_BYTES_ENV: "4096"})
    assert "error: <stdin>: the case file is larger than the input limit of 4096 bytes" in output
    output = refused(["run", "--cases", "-", "--out", str(out)], out,
                     input=suite_text(good_case(corpus_relevant_count=1)))
    assert "<stdin>: case 'c1': $.cases[0].corpus_relevant_count: R = 1 is smaller than the 2 distinct items" in output
    output = refused(["run", "--cases", "-", "--cases", "-", "--out", str(out)], out, input="{}")
    assert "--cases - is given more than once" in output


def test_expectations_from_stdin_are_bounded_and_stdin_is_read_once(tmp_path):
    cases = write(tmp_path, "ok.json", suite_text())
    out = tmp_path / "out"
    output = refused(["run", "--cases", str(cases), "--expectations", "-", "--out", str(out)], out, input=b"\xff\xfe")
    assert "error: <stdin>: the expectations file is not UTF-8 text: byte 0xff at line 1 column 1" in output
    output = refused(["run", "--cases", "-", "--expectations", "-", "--out", str(out)], out, input=suite_text())
    assert "error: <stdin>: standard input was already read for the case file; give the expectations file as a " \
           "file" in output


def test_the_case_count_and_list_lengths_are_bounded(tmp_path):
    out = tmp_path / "out"
    many = write(tmp_path, "many.json", suite_text(*(good_case(id=f"c{i}") for i in range(4))))
    output = refused(["run", "--cases", str(many), "--out", str(out)], out, env={MAX_CASES_ENV: "3"})
    assert "error: many.json: $.cases: 4 cases; at most 3 are read (raise the limit with RAGAS_COMPAT_MAX_CASES=N)" \
        in output
    two = write(tmp_path, "two.json", suite_text(*(good_case(id=f"d{i}") for i in range(2))))
    output = refused(["run", "--cases", str(many), "--cases", str(two), "--out", str(out)], out,
                     env={MAX_CASES_ENV: "5"})
    assert "many.json, two.json: 6 cases together; at most 5" in output
    long = write(tmp_path, "long.json", suite_text(good_case(retrieved_contexts=["x"] * (MAX_LIST_ITEMS + 1))))
    output = refused(["run", "--cases", str(long), "--out", str(out)], out)
    assert (f"long.json: case 'c1': $.cases[0].retrieved_contexts: {MAX_LIST_ITEMS + 1} items; a case's lists "
            f"hold at most {MAX_LIST_ITEMS} items") in output


def test_binary_or_non_utf8_toml_inputs_are_refused(tmp_path):
    cases = write(tmp_path, "ok.json", suite_text())
    binary = write(tmp_path, "bin.toml", bytes(range(256)))
    latin1 = write(tmp_path, "latin1.toml", 'reason = "caf\xe9"'.encode("latin-1"))
    out = tmp_path / "out"
    output = refused(["run", "--cases", str(cases), "--expectations", str(binary), "--out", str(out)], out)
    assert "error: bin.toml: not valid TOML: Illegal character" in output or \
        "error: bin.toml: the expectations file is not UTF-8 text" in output
    output = refused(["run", "--cases", str(cases), "--expectations", str(latin1), "--out", str(out)], out)
    assert "error: latin1.toml: the expectations file is not UTF-8 text: byte 0xe9 at line 1 column 14" in output
    output = refused(["pin", "show", "--manifest", str(latin1)], out)
    assert "latin1.toml: cannot read pin manifest (the pin manifest is not UTF-8 text: byte 0xe9" in output
    with pytest.raises(HarnessInputError, match="cannot read pin manifest"):
        load_manifest(Path("/dev/zero"))
    output = refused(["matrix", "--versions", "0.4.3", "--versions-file", str(latin1), "--out", str(out)], out)
    assert "latin1.toml: the versions file is not UTF-8 text" in output
    deep = write(tmp_path, "deep.toml", "rule = " + "[" * 5000 + "]" * 5000)
    with pytest.raises(HarnessInputError, match=r"deep\.toml: TOML nested deeper than 64"):
        load_version_rules(deep)
    with pytest.raises(HarnessInputError, match=r"odd\.toml: rule\[0\]: expected a table"):
        load_version_rules(write(tmp_path, "odd.toml", "rule = [1]"))


# --------------------------------------------------------------------------- explain and fuzz

def test_explain_refuses_ten_thousand_labels_at_once():
    started = time.perf_counter()
    result = runner.invoke(app, ["explain", "context_precision_with_reference", ",".join(["1", "0"] * 5000)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert f"LABELS: 10000 labels; at most {MAX_LIST_ITEMS} are explained" in result.output
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize(("args", "message"), [
    (["context_precision_with_reference", "1," + "9" * 5000], "LABELS: item 2 is a number of 5000 characters"),
    (["id_context_precision", "--retrieved", "[" * 5000 + "]" * 5000, "--reference", "[]"],
     "nested deeper than 64 arrays/objects"),  # 3.13's json parses it: the message then names the place
    (["id_context_precision", "--retrieved", '["\\ud800"]', "--reference", "[]"],
     "--retrieved: $[0]: a string with a lone surrogate"),
    (["id_context_precision", "--retrieved", "[" + "1" * 400 + "]", "--reference", "[]"],
     "--retrieved: a number of 400 characters"),
    (["judge_audit", "--human", '{"c1": ' + "1" * 400 + "}", "--judge", "{}"], "--human: a number of 400"),
])
def test_explain_refuses_pathological_option_values(args, message):
    result = runner.invoke(app, ["explain", *args])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and message in result.output


def test_fuzz_refuses_a_huge_n_or_workers_before_touching_anything(tmp_path):
    out = tmp_path / "fuzz"
    started = time.perf_counter()
    output = refused(["fuzz", "--n", str(10 ** 20), "--out", str(out)], out)
    assert f"--n: {10 ** 20} cases; at most {MAX_FUZZ_CASES} per run" in output
    output = refused(["fuzz", "--n", "10", "--workers", "100000", "--out", str(out)], out)
    assert "--workers: 100000; expected 1 to 64" in output
    assert time.perf_counter() - started < 20
    assert not out.exists()


# --------------------------------------------------------------------------- inconsistent input, refused alike

def test_r_below_the_relevant_labels_is_refused_by_the_loader_and_by_explain(tmp_path):
    case = good_case(corpus_relevant_count=1)
    with pytest.raises(HarnessInputError) as caught:
        parse_suite(json.loads(suite_text(case)), source="cases.json")
    assert caught.value.problems == [
        "cases.json: case 'c1': $.cases[0].corpus_relevant_count: R = 1 is smaller than the 2 distinct items "
        "labelled relevant in verdicts.context_precision_with_reference (by exact context text): R counts every "
        "relevant item in the corpus"]
    path = write(tmp_path, "r.json", suite_text(case))
    out = tmp_path / "out"
    assert "$.cases[0].corpus_relevant_count: R = 1 is smaller" in refused(
        ["run", "--cases", str(path), "--out", str(out)], out)
    assert "$.cases[0].corpus_relevant_count: R = 1 is smaller" in refused(
        ["expect", "bless", "--cases", str(path), "--out", str(out / "e.toml")], out)
    from ragas_compat.pytest_plugin import RagasCompat

    with pytest.raises(HarnessInputError, match=r"r\.json: case 'c1': \$\.cases\[0\]\.corpus_relevant_count: R = 1"):
        RagasCompat("/no/python/needed", tmp_path).audit("r.json")  # refused before any probe
    with pytest.raises(HarnessInputError, match=r"--corpus-relevant 1: .* cannot be smaller than the 2 relevant"):
        explain("context_precision_with_reference", labels="1,0,1", corpus_relevant=1)
    # the same rule on both sides: non-0/1 labels (refused by the reference on their own) are not counted
    parse_suite(json.loads(suite_text(good_case(corpus_relevant_count=1,
                                                verdicts={"context_precision_with_reference": [1, 2, "1"]}))))
    parse_suite(json.loads(suite_text(good_case(corpus_relevant_count=2))))


@pytest.mark.parametrize("index", ["01", "1\n", "+1", " 1", "1" * 5000, "²"])
def test_judge_reply_indices_must_be_canonical(index):
    case = good_case(judge_replies={"context_precision_with_reference": {index: "{not json"}})
    with pytest.raises(HarnessInputError) as caught:
        parse_suite(json.loads(suite_text(case)), source="cases.json")
    assert any("$.cases[0].judge_replies.context_precision_with_reference" in line for line in caught.value.problems)


def test_judge_reply_index_in_range_is_accepted():
    case = good_case(judge_replies={"context_precision_with_reference": {"2": "{not json"}})
    assert parse_suite(json.loads(suite_text(case))).cases[0].judge_replies["context_precision_with_reference"] == {
        2: "{not json"}


# --------------------------------------------------------------------------- markup and control characters

def test_markup_and_control_characters_in_ids_and_suite_names_reach_the_terminal_escaped(tmp_path):
    nasty = "[red]boom[/]\x1b[31m\x07\x85"
    path = write(tmp_path, "nasty.json", suite_text(good_case(id=nasty), good_case(id=nasty), suite=nasty))
    out = tmp_path / "out"
    output = refused(["run", "--cases", str(path), "--out", str(out)], out)
    assert "duplicate case id" in output and "[red]boom[/]" in output and "\\x1b[31m\\x07" in output
    assert "\x85" not in output


def test_a_fifo_with_a_waiting_writer_is_refused_too(tmp_path):
    # a writer that never writes: the reader must not block on open() or read()
    fifo = tmp_path / "slow.json"
    os.mkfifo(fifo)
    holder = threading.Thread(target=lambda: open(fifo, "wb").close(), daemon=True)
    holder.start()
    with pytest.raises(HarnessInputError, match="FIFO"):
        read_bytes(fifo, "case file")
    try:  # release the writer thread if it is still waiting for a reader
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass
    holder.join(timeout=2)
