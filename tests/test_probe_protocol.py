"""The probe's protocol (harness/probe/protocol.py): the launch, score encoding, documents, exit codes,
and that both sides of the subprocess boundary use it (no Ragas needed)."""

from __future__ import annotations

import ast
import io
import json
import math
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

from ragas_compat.probe import protocol
from ragas_compat.probe.protocol import (
    ENTRY_LOCATE,
    ENTRY_PROBE,
    EXIT_BAD_REQUEST,
    EXIT_OK,
    EXIT_RAGAS_IMPORT,
    ProbeResult,
    ScoreError,
    decode_score,
    encode_float,
    encode_score,
    error_record,
    probe_command,
)
from ragas_compat.values import RagasError, decode_ragas_value, encode_ragas_value

PROBE_DIR = Path(protocol.__file__).resolve().parent
HARNESS_DIR = PROBE_DIR.parent


def through_json(value: object) -> object:
    """What the host reads back: the probe writes with allow_nan=False."""
    return json.loads(json.dumps(value, allow_nan=False))


def same_float(a: float, b: float) -> bool:
    """Bit-equal, NaN equal to NaN, -0.0 apart from 0.0."""
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("value", [
    0.8333333332916666, 0.1 + 0.2, 1.0, 0.0, -0.0, 5e-324, 1.7976931348623157e308, -2.5,
    math.nan, math.inf, -math.inf,
])
def test_scores_round_trip_exactly_through_json(value):
    decoded = decode_score(through_json(encode_score(value)))
    assert isinstance(decoded, float) and same_float(decoded, value), (value, decoded)


def test_non_finite_scores_are_strings_and_finite_ones_stay_numbers():
    assert [encode_float(v) for v in (math.nan, math.inf, -math.inf)] == ["NaN", "Infinity", "-Infinity"]
    assert encode_score(-0.0) == 0.0 and math.copysign(1, encode_score(-0.0)) == -1
    assert json.dumps(encode_score(-0.0)) == "-0.0"
    assert encode_score(3) == 3.0 and type(encode_score(3)) is float  # an int score is a float


def test_errors_round_trip():
    record = error_record(ValueError("max() arg is an empty sequence"))
    assert record == {"error": {"type": "ValueError", "message": "max() arg is an empty sequence"}}
    assert decode_score(through_json(record)) == ScoreError("ValueError", "max() arg is an empty sequence")
    assert error_record(KeyError("k"), type_name="StubMismatch")["error"]["type"] == "StubMismatch"
    assert protocol.encode_error("T", "m") == {"error": {"type": "T", "message": "m"}}


@pytest.mark.parametrize("value", [True, None, "0.5", [1.0], object()])
def test_a_score_that_is_not_a_real_number_is_an_error_value(value):
    encoded = encode_score(value)
    assert encoded["error"]["type"] == "UnexpectedScoreType"
    assert decode_score(through_json(encoded)).type == "UnexpectedScoreType"


@pytest.mark.parametrize("raw", [True, None, "nan", "inf", [0.5], {"value": 1}])
def test_anything_outside_the_encoding_decodes_to_a_format_error(raw):
    decoded = decode_score(raw)
    assert isinstance(decoded, ScoreError) and decoded.type == "ProbeFormatError"


def test_the_host_encoding_delegates_to_the_protocol():
    for value in (0.5, -0.0, math.nan, math.inf, -math.inf):
        assert encode_ragas_value(value) == encode_float(value)  # "NaN" == "NaN": the string
        assert same_float(decode_ragas_value(through_json(encode_ragas_value(value))), value)
    error = RagasError("ValidationError", "1 validation error")
    assert encode_ragas_value(error) == {"error": {"type": "ValidationError", "message": "1 validation error"}}
    assert decode_ragas_value(through_json(encode_ragas_value(error))) == error
    assert decode_ragas_value("NaN") != decode_ragas_value("NaN")  # a real NaN
    assert decode_ragas_value(None) == RagasError("ProbeFormatError", "unexpected value None in probe output", "harness")


def _string_literals(path: Path) -> list[tuple[str, int]]:
    """Every string literal (not docstring text around it) of a module, with its line."""
    out = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.STRING:
            try:
                out.append((ast.literal_eval(token.string), token.start[0]))
            except (ValueError, SyntaxError):  # f-strings
                continue
    return out


def test_there_is_one_nan_and_infinity_encoder():
    """Only the protocol spells the non-finite encodings (display text such as "NaN" in a
    Markdown cell is not an encoding of infinities)."""
    spelled = {str(path.relative_to(HARNESS_DIR)) for path in HARNESS_DIR.rglob("*.py")
               for text, _ in _string_literals(path) if text in ("Infinity", "-Infinity")}
    assert spelled == {"probe/protocol.py"}  # its encoder, and the decoder's table


def test_new_result_has_exactly_the_required_keys_in_output_order():
    result = protocol.new_result({"id": "c"}, "legacy:X", "legacy", "m", ("a", "b"))
    assert set(result) == ProbeResult.__required_keys__
    assert list(result)[:4] == ["case_id", "target", "api", "metric"]
    assert ProbeResult.__optional_keys__ == {"exported", "required_columns", "fields_accepted", "fields_dropped",
                                             "fields_renamed", "prompt_hashes", "telemetry_events",
                                             "classifier"}
    assert result["fields_read"] == ["a", "b"] and result["value"] is None and result["prompts"] == 0


def test_target_names_and_exit_codes():
    assert (protocol.LEGACY_PREFIX, protocol.COLLECTIONS_PREFIX, protocol.SELFTEST_PREFIX) == (
        "legacy:", "collections:", "selftest:")
    assert protocol.target_name(protocol.API_COLLECTIONS, "ContextRecall") == "collections:ContextRecall"
    assert (EXIT_OK, EXIT_BAD_REQUEST, EXIT_RAGAS_IMPORT) == (0, 2, 3)


def test_the_probe_exits_with_the_protocol_s_bad_request_code(tmp_path: Path):
    request = tmp_path / "request.json"
    request.write_text('{"cases": "not a list"}', encoding="utf-8")
    proc = subprocess.run(probe_command(sys.executable, ENTRY_PROBE, str(request)), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == EXIT_BAD_REQUEST and "must be an object with a 'cases' list" in proc.stderr


SHADOW = "raise SystemExit('shadowed: ' + __name__)\n"


def test_nothing_of_the_environment_or_the_working_folder_shadows_the_probe_or_is_shadowed(tmp_path: Path):
    """The probe runs as ``ragas_compat_probe`` and adds nothing to sys.path: a module in the working
    folder (``json``, which the probe imports; ``protocol``, ``targets``: names of its modules) is not
    imported, nor is a module on PYTHONPATH named like one of the probe's (its imports are relative)."""
    cwd, elsewhere = tmp_path / "cwd", tmp_path / "pythonpath"
    for folder in (cwd, elsewhere):
        folder.mkdir()
        for name in ("json", "protocol", "targets", "workers", "locate", "network_guard"):
            (folder / f"{name}.py").write_text(SHADOW if name != "json" or folder == cwd else "", encoding="utf-8")
    (elsewhere / "json.py").unlink()  # PYTHONPATH legitimately comes before the standard library
    request = cwd / "request.json"
    request.write_text('{"cases": "not a list"}', encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(elsewhere)}
    proc = subprocess.run(probe_command(sys.executable, ENTRY_PROBE, str(request)), capture_output=True,
                          text=True, timeout=60, cwd=cwd, env=env)
    assert proc.returncode == EXIT_BAD_REQUEST and "must be an object with a 'cases' list" in proc.stderr, proc.stderr
    located = subprocess.run(probe_command(sys.executable, ENTRY_LOCATE), capture_output=True, text=True,
                             timeout=60, cwd=cwd, env=env)
    assert located.returncode == 0 and json.loads(located.stdout)["python_version"], located.stderr


PROBE_SIDE_IMPORTS = textwrap.dedent("""
    import importlib, importlib.util, os, sys
    folder = sys.argv[1]  # loaded as the probe's bootstrap loads it: under its own name, nothing on sys.path
    spec = importlib.util.spec_from_file_location("ragas_compat_probe", os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    for name in ("protocol", "targets", "scoring", "evaluate", "selftest", "workers", "locate", "network_guard",
                 "judge.scripts", "judge.criteria", "judge.ratings", "judge.answers", "judge.dialects"):
        importlib.import_module("ragas_compat_probe." + name)
    scoring, protocol = sys.modules["ragas_compat_probe.scoring"], sys.modules["ragas_compat_probe.protocol"]
    assert scoring.encode_score is protocol.encode_score
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("harness", "ragas_compat", "ragas"))
    print(loaded)
""")


def test_the_probe_modules_import_under_the_probe_s_own_name_without_harness_or_ragas():
    proc = subprocess.run([sys.executable, "-I", "-c", PROBE_SIDE_IMPORTS, str(PROBE_DIR)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


THIRD_PARTY_FOR_THE_JUDGES = {"ragas", "langchain_core", "pydantic",  # the stubs' Ragas interfaces
                              "langchain_openai",  # the recorder's legacy judge client
                              "openai", "httpx"}  # its collections judge client (both Ragas dependencies)


PROBE_FILES = sorted(PROBE_DIR.rglob("*.py"))


@pytest.mark.parametrize("path", PROBE_FILES, ids=lambda p: str(p.relative_to(PROBE_DIR)))
def test_probe_modules_import_only_the_standard_library_ragas_and_each_other(path: Path):
    """Absolute imports name the standard library or Ragas (and its dependencies) only; the probe's own
    modules are reached by relative imports that stay inside the package; no dual-import fallback."""
    depth = len(path.relative_to(PROBE_DIR).parts) - 1  # 0: a module of the package itself
    allowed = set(sys.stdlib_module_names) | THIRD_PARTY_FOR_THE_JUDGES
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level <= depth + 1, f"{path.name}:{node.lineno}: import from outside harness/probe"
            names = [node.module or ""] if node.level == 0 else []
        elif isinstance(node, ast.Try):
            caught = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            imports_probe = any(isinstance(n, ast.ImportFrom) and n.level for n in node.body)
            assert not (imports_probe and caught & {"ImportError", "ModuleNotFoundError"}), (
                f"{path.name}:{node.lineno}: a fallback import of the probe's own modules")
            continue
        else:
            continue
        for name in names:
            assert name.split(".")[0] in allowed, f"{path.name}:{node.lineno} imports {name}"
