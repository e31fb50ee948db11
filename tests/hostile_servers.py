"""Fault servers for the hostile tests: raw TCP on 127.0.0.1 (a free port), one thread, bounded.

``FaultServer(handler)`` accepts connections and runs ``handler(conn, request_bytes, server)`` for each;
the handler writes whatever bytes it likes (a broken status line, a trickle, a redirect, a huge body).
Every request's raw head is kept in ``requests`` (a connection closed without one is not). Every loop a handler runs must be bounded; the
server stops accepting at ``__exit__`` and closes its socket.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable


class FaultServer:
    def __init__(self, handler: Callable[[socket.socket, bytes, FaultServer], None]) -> None:
        self.handler = handler
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
            if head:  # a bare connect (a reachability check) is not a request
                self.requests.append(head)
            self.handler(conn, head, self)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.listener.close()


def answer(conn: socket.socket, status: str, body: bytes, headers: dict[str, str] | None = None) -> None:
    head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    conn.sendall(head.encode() + b"\r\n" + body)


def trickle(conn: socket.socket, data: bytes, every: float, stop: threading.Event | None = None) -> None:
    """Send ``data`` one byte at a time, ``every`` seconds apart (bounded by ``len(data)``)."""
    for i in range(len(data)):
        if stop is not None and stop.is_set():
            return
        conn.sendall(data[i:i + 1])
        time.sleep(every)
