"""A small OpenAI-compatible chat-completions server for the recording tests (standard library only).

``JudgeServer()`` listens on 127.0.0.1 (a free port) in a daemon thread and answers Ragas's prompts
the way a model would, deterministically from the prompt's content: it reads the instruction to know
which prompt it is and the JSON input Ragas renders after "Now perform the same with the following
input", and judges by word overlap (a context is useful / a statement is supported when it shares a
content word with the answer / the context). Some replies are wrapped in a ```json fence, as models do.

Scripted faults, triggered by markers in the text:
- ``MALFORMED`` in a context: the context-precision reply is not valid JSON (``"verdict": yes``); asked
  to fix its output, the judge sends the same text back (so Ragas's parse fails);
- ``SLOW`` in a context: the reply comes after ``slow_seconds``;
- ``FLAKY`` in a context: every other asking of that prompt (the 1st, 3rd, ...) fails with HTTP 429
  (rate limited: the error Ragas's own retry covers for ChatOpenAI), so a client that retries once gets
  the reply.
- ``BROKEN`` in a prompt while ``broken`` is true: HTTP 400 (a request error nobody retries);
- ``GARBLED`` in the reference (context recall) or the response's statements (faithfulness's NLI):
  the reply is JSON whose label is ``"maybe"``, which Ragas's output model refuses (the format fix
  echoes it, so the parse fails);
- ``HUGE`` in the reference: context recall's ``attributed`` is 10**120, which Ragas parses (and
  counts as attributed) but a case file cannot hold (a number of more than 100 digits);
- ``DROPCLAIM`` in the response: the NLI reply judges every statement but the last one (a reply
  Ragas parses and scores over fewer statements than it generated).

``/v1/models`` lists ``model``. Every request is counted in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INPUT_MARKER = "\nNow perform the same with the following input\ninput: "
OUTPUT_SUFFIX = "\nOutput: "
STOP = {"the", "a", "an", "is", "are", "was", "of", "in", "on", "and", "to", "it", "its", "for", "by", "with",
        "what", "which", "who", "how", "does", "did", "do", "at", "as", "be", "that", "this", "from"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", str(text).lower()) if w not in STOP and len(w) > 2}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", str(text).strip()) if s.strip()]


def parse_prompt(prompt: str) -> tuple[str, object]:
    head, _, tail = prompt.rpartition(INPUT_MARKER)
    data = json.loads(tail[: -len(OUTPUT_SUFFIX)] if tail.endswith(OUTPUT_SUFFIX) else tail)
    return head, data


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # Ragas runs 16 jobs at once; the default backlog of 5 refuses some under load


class JudgeServer:
    def __init__(self, model: str = "judge-1", slow_seconds: float = 1.0) -> None:
        self.model = model
        self.slow_seconds = slow_seconds
        self.requests = 0
        self.flaky: dict[str, int] = {}
        self.broken = False
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests += 1
                if body.get("model") != server.model:
                    self._send(404, {"error": {"message": f"model {body.get('model')!r} not found",
                                               "type": "invalid_request_error", "code": "model_not_found"}})
                    return
                # the last message holding a prompt: instructor's re-ask after a reply it could not parse
                # ("Correct your JSON ...") is answered as the prompt it repeats, the same way as before
                prompt = next((m["content"] for m in reversed(body["messages"])
                               if isinstance(m.get("content"), str) and INPUT_MARKER in m["content"]),
                              body["messages"][-1]["content"])
                if server.broken and "BROKEN" in prompt:
                    self._send(400, {"error": {"message": "this request cannot be served", "type": "invalid_request_error"}})
                    return
                if "FLAKY" in prompt:
                    with server.lock:
                        server.flaky[prompt] = server.flaky.get(prompt, 0) + 1
                        fail = server.flaky[prompt] % 2 == 1
                    if fail:
                        self._send(429, {"error": {"message": "rate limited, retry", "type": "rate_limit_error"}})
                        return
                content = server.reply(prompt)
                self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": server.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    # -- the "model" ---------------------------------------------------------------------
    def reply(self, prompt: str) -> str:
        head, data = parse_prompt(prompt)
        if head.startswith("The output string did not satisfy"):
            return json.dumps({"text": data["output_string"]})  # echoes its broken output
        if head.startswith("Given question, answer and context verify"):
            context = data["context"]
            if "SLOW" in context:
                time.sleep(self.slow_seconds)
            if "MALFORMED" in context:
                return '{"reason": "the context mentions it", "verdict": yes}'
            useful = int(bool(words(context) & words(data["answer"])))
            reply = json.dumps({"reason": "overlap" if useful else "unrelated", "verdict": useful})
            return f"```json\n{reply}\n```" if len(context) % 2 else reply
        if head.startswith(("Given a context, and an answer, analyze each sentence",  # legacy
                            "Given a context and an answer, analyze each statement")):  # collections
            context = words(data["context"])
            garbled = "GARBLED" in data["answer"]
            return json.dumps({"classifications": [
                {"statement": s, "reason": "checked",
                 "attributed": "maybe" if garbled else 10 ** 120 if "HUGE" in data["answer"]
                 else int(len(words(s) & context) >= 2)}
                for s in sentences(data["answer"])]})
        if head.startswith("Given a question and an answer, analyze"):
            return json.dumps({"statements": sentences(data["answer"])})
        if head.startswith("Your task is to judge the faithfulness"):
            context = words(data["context"])
            statements = data["statements"]
            if any("DROPCLAIM" in s for s in statements):
                statements = statements[:-1]
            return json.dumps({"statements": [
                {"statement": s, "reason": "checked",
                 "verdict": "maybe" if "GARBLED" in s else int(len(words(s) & context) >= 2)}
                for s in statements]})
        return "I do not understand the question."
