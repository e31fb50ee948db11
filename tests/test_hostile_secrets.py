"""Secrets never reach the recording on disk, and a bad ``--judge-setting`` is exit 2 before any probe.

A gateway's ``api-key`` header can only be passed as ``--judge-setting default_headers={...}``; the
recording (a file the README says to commit) used to hold it verbatim, and a setting the client
refused surfaced as the recording probe's traceback with exit 3. Real components: the JSON judge
server on 127.0.0.1 (``record_judge_server``), ChatOpenAI, Ragas."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.tools.record.secrets import REDACTED, looks_secret, redacted
from ragas_compat.tools.record.session import Judge, fingerprint

sys.path.insert(0, str(Path(__file__).parent))
from record_judge_server import JudgeServer

KEY_ENV = "RAGAS_COMPAT_TEST_SECRETS_KEY"
GATEWAY_KEY = "gw-4c1f0e-very-secret"
SAMPLE = {"user_input": "When was Alderworks founded?", "response": "Alderworks was founded in 1900.",
          "reference": "Alderworks was founded in 1900.",
          "retrieved_contexts": ["Alderworks was founded in 1900 by Alderson."]}


def record(dataset: Path, out: Path, server: JudgeServer, *settings: str):
    """``ragas-compat record`` in process (CliRunner: its ``stdout`` and ``stderr`` apart); the judge's
    client is still checked in its own interpreter and Ragas still records in its probe."""
    extra = [a for s in settings for a in ("--judge-setting", s)]
    return CliRunner().invoke(app, [
        "record", str(dataset), "--out", str(out), "--openai-base-url", server.base_url, "--model", server.model,
        "--api-key-env", KEY_ENV, "--max-retries", "0", "--metric", "context_precision_with_reference",
        "--request-timeout", "30", *extra], env={KEY_ENV: "sk-loopback-test", "SOURCE_DATE_EPOCH": "1767225600"})


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
    return path


def test_credential_names_are_recognised_and_counts_are_not():
    for name in ("api-key", "x-api-key", "Authorization", "api_key", "openai_api_key", "apiKey", "accessToken",
                 "client_secret", "password", "Cookie", "X-Auth-Token"):
        assert looks_secret(name), name
    for name in ("max_tokens", "max_completion_tokens", "temperature", "default_headers", "X-Team", "top_p", "seed"):
        assert not looks_secret(name), name


def test_provenance_and_fingerprint_hold_no_credential():
    judge = Judge("openai", model="m", base_url="https://user:pw-secret@gw.example/v1?api-key=q-secret&v=2",
                  settings={"default_headers": {"api-key": GATEWAY_KEY, "X-Team": "rag"},
                            "api_key": "sk-inline-secret", "max_tokens": 64,
                            "model_kwargs": {"extra_headers": {"X-Forward": "Bearer fwd-secret"}}})
    text = json.dumps(judge.provenance())
    for secret in (GATEWAY_KEY, "pw-secret", "q-secret", "sk-inline-secret", "fwd-secret"):
        assert secret not in text
    provenance = judge.provenance()
    assert provenance["settings"]["default_headers"] == {"api-key": REDACTED, "X-Team": "rag"}
    assert provenance["settings"]["max_tokens"] == 64
    assert judge.request()["settings"]["default_headers"]["api-key"] == GATEWAY_KEY  # the probe still gets it
    assert redacted({"k": None}) == {"k": None}
    rotated = Judge("openai", model="m", base_url=judge.base_url,
                    settings={**judge.settings, "default_headers": {"api-key": "another", "X-Team": "rag"}})
    from ragas_compat.tools.record.dataset import Dataset
    data = Dataset("d.jsonl", "0" * 64, (), (), ())
    assert fingerprint(data, ("faithfulness",), judge) == fingerprint(data, ("faithfulness",), rotated)


@pytest.mark.slow
def test_a_gateway_key_header_is_used_but_never_written(dataset, tmp_path):
    seen: list[str] = []
    with JudgeServer() as server:
        original = server.httpd.RequestHandlerClass.do_POST

        def do_post(handler):
            seen.append(handler.headers.get("api-key") or "")
            original(handler)

        server.httpd.RequestHandlerClass.do_POST = do_post
        out = tmp_path / "recorded.json"
        proc = record(dataset, out, server, f'default_headers={{"api-key": "{GATEWAY_KEY}", "X-Team": "rag"}}')
    assert proc.exit_code == 0, proc.output
    assert seen and set(seen) == {GATEWAY_KEY}  # the judge got the header
    text = out.read_text(encoding="utf-8")
    assert GATEWAY_KEY not in text
    assert json.loads(text)["recording"]["judge"]["settings"]["default_headers"] == {"api-key": REDACTED,
                                                                                     "X-Team": "rag"}
    assert GATEWAY_KEY not in proc.stdout + proc.stderr


@pytest.mark.parametrize("settings, expected", [
    # an option ChatOpenAI does not know is accepted (with a warning on the check's stderr, not shown), so
    # the refusal and its one line are the number's
    (("no_such_option_of_chatopenai=1", "temperature=hot"), "temperature"),
    (('default_headers=["api-key"]',), "default_headers"),
    (("foo-bar=1",), "keyword argument"),
    (('default_headers={"a": [[[[',), "not valid JSON"),
    (("model=other",), "model"),
], ids=["unknown-but-accepted-and-not-a-number", "headers-not-a-map", "bad-name", "bad-json", "model-given-twice"])
@pytest.mark.slow
def test_a_bad_judge_setting_is_exit_2_in_one_line_before_any_probe(dataset, tmp_path, settings, expected):
    out = tmp_path / "recorded.json"
    with JudgeServer() as server:
        proc = record(dataset, out, server, *settings)
        asked = server.requests
    assert proc.exit_code == 2, proc.output
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "--judge-setting" in lines[0] and expected in lines[0]
    assert asked == 0 and not out.exists()


def test_a_refused_secret_setting_is_not_echoed(dataset, tmp_path):
    with JudgeServer() as server:
        proc = record(dataset, tmp_path / "o.json", server, f"api_key={GATEWAY_KEY}", "temperature=hot")
    assert proc.exit_code == 2 and GATEWAY_KEY not in proc.stderr + proc.stdout
