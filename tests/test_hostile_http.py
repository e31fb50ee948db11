"""The host's outbound HTTP (``ragas_compat.http_client``, used by ``record``'s check of ``GET /models``)
against hostile servers on 127.0.0.1: redirects to another origin, trickles, huge and malformed answers.

Each test fails on a plain ``urllib`` opener (it follows the redirect with the key, waits per read not in
total, reads without a cap, lets ``RecursionError`` / ``http.client`` errors escape: exit 4)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from ragas_compat import http_client
from ragas_compat.errors import HarnessInputError
from ragas_compat.tools.record import session
from ragas_compat.tools.record.session import Judge, preflight

sys.path.insert(0, str(Path(__file__).parent))
from hostile_servers import FaultServer, answer, trickle

KEY_ENV = "RAGAS_COMPAT_TEST_HOSTILE_KEY"
SECRET = "sk-hostile-secret-0123456789"
LISTING = json.dumps({"object": "list", "data": [{"id": "judge-1"}]}).encode()


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


def judge_at(base_url: str) -> Judge:
    return Judge("openai", model="judge-1", base_url=base_url, api_key_env=KEY_ENV)


def test_a_redirect_to_another_host_is_not_followed_and_the_key_stays_home(key):
    with FaultServer(lambda conn, head, s: answer(conn, "200 OK", LISTING)) as elsewhere:
        def redirect(conn, head, server):
            answer(conn, "302 Found", b"", {"Location": f"{elsewhere.base_url}/models"})

        with FaultServer(redirect) as origin:
            note = preflight(judge_at(origin.base_url))
            time.sleep(0.2)  # a request to the other host, if one were made, has arrived
        assert note is not None and "another origin" in note and "not followed" in note
        assert elsewhere.requests == [], "the redirect was followed to another origin"
        assert any(SECRET.encode() in r for r in origin.requests)  # the origin itself did get the key


def test_a_same_origin_redirect_is_followed_with_the_key(key):
    def handler(conn, head, server):
        if b"GET /v1/models " in head:
            answer(conn, "307 Temporary Redirect", b"", {"Location": "/v1/models/list"})
        else:
            answer(conn, "200 OK", LISTING)

    with FaultServer(handler) as origin:
        assert preflight(judge_at(origin.base_url)) is None
    assert len(origin.requests) == 2 and all(SECRET.encode() in r for r in origin.requests)


@pytest.mark.parametrize("where", ["body", "status line"])
def test_a_trickling_server_cannot_stall_past_the_total_deadline(key, monkeypatch, where):
    body = b" " * 40 + LISTING

    def handler(conn, head, server):
        if where == "body":
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode())
            trickle(conn, body, 0.4, server.stopping)
        else:
            trickle(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 0.4, server.stopping)

    monkeypatch.setattr(session, "PREFLIGHT_TIMEOUT", 1.5)
    with FaultServer(handler) as origin:
        started = time.monotonic()
        note = preflight(judge_at(origin.base_url))
        elapsed = time.monotonic() - started
    assert elapsed < 3.0, f"stalled {elapsed:.1f} s past a 1.5 s deadline"
    assert note is not None and "within 1.5 s" in note


def test_a_huge_answer_is_cut_at_the_byte_cap(key):
    def handler(conn, head, server):
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")  # no length: read to the end
        block = b"[" * 65536
        for _ in range(2048):  # 128 MiB at most, if nobody stops reading
            if server.stopping.is_set():
                return
            conn.sendall(block)

    with FaultServer(handler) as origin:
        with pytest.raises(http_client.TooLarge):
            http_client.get_json(f"{origin.base_url}/models", max_bytes=1 << 20, deadline=20)
        note = preflight(judge_at(origin.base_url))
    assert note is not None and "cap" in note


@pytest.mark.parametrize("reply, expected", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + b"[" * 200000, "nested deeper"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n\xff\xfe\xfd\xfc", "not UTF-8"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"data\": [", "IncompleteRead"),
    (b"NOT HTTP AT ALL\r\n\r\n", "BadStatusLine"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"data\": 1e999}", "not valid JSON"),
    (b"", "RemoteDisconnected"),
], ids=["deep-json", "bad-utf8", "cut-body", "bad-status", "infinite-number", "closed"])
def test_every_transport_and_json_failure_is_one_documented_outcome(key, reply, expected):
    with FaultServer(lambda conn, head, s: conn.sendall(reply)) as origin:
        with pytest.raises(http_client.HttpFailure, match=expected):
            http_client.get_json(f"{origin.base_url}/models", deadline=5)
        note = preflight(judge_at(origin.base_url))  # never anything but a note or HarnessInputError
    assert note is not None and note.startswith("model not checked")


def test_a_refused_key_is_bad_input_even_behind_a_same_origin_redirect(key):
    def handler(conn, head, server):
        if b"/v1/models/list" in head:
            answer(conn, "401 Unauthorized", b"{}")
        else:
            answer(conn, "301 Moved Permanently", b"", {"Location": "/v1/models/list"})

    with FaultServer(handler) as origin:
        with pytest.raises(HarnessInputError, match="refused the key"):
            preflight(judge_at(origin.base_url))


def test_record_leaves_no_other_host_side_http_client():
    """Everything the host sends goes through ``http_client``: no urllib opener elsewhere."""
    harness = Path(session.__file__).resolve().parents[2]
    offenders = [str(p.relative_to(harness)) for p in harness.rglob("*.py")
                 if "probe" not in p.relative_to(harness).parts and p.name != "http_client.py"
                 and any(token in p.read_text(encoding="utf-8")
                         for token in ("urlopen", "urllib.request", "http.client", "import requests"))]
    assert offenders == []
