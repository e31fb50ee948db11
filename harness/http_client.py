"""Every HTTP request the host process sends goes through ``get_json`` (today: ``record``'s check of
the judge's ``GET /models``; the judge itself is asked from inside the recording probe).

What it guarantees, whatever the server does:

- **no proxy, no cross-origin redirect**: the request goes straight to the URL's host; a redirect
  (301, 302, 303, 307, 308) is followed only to the same scheme, host and port (at most
  ``MAX_REDIRECTS``), so headers such as ``Authorization`` never reach another host. A redirect
  elsewhere is a ``CrossOriginRedirect``, and the request there is never made;
- **a total deadline**: connecting, the status line, the headers and the body together take at most
  ``deadline`` seconds. A watchdog shuts the socket down when the deadline passes, so a server that
  trickles one byte every few seconds cannot hold the caller longer (``DeadlineExceeded``);
- **a byte cap**: at most ``max_bytes`` of body are read (``TooLarge`` past it, known from
  ``Content-Length`` before reading or found while reading); headers are bounded by ``http.client``;
- **bounded JSON**: the body is strict UTF-8 and is parsed by ``input_limits.loads_json`` (depth,
  number length, lone surrogates);
- **one exception type**: every failure is an ``HttpFailure`` (a subclass per kind; ``HttpStatus``
  carries the status of a non-2xx answer) with a one-line message naming the URL; no ``OSError``,
  ``http.client.HTTPException``, ``ssl.SSLError`` or ``ValueError`` escapes. The caller maps it to a
  documented exit code (``record``: a refused key is exit 2, other failures leave the model unchecked).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ragas_compat.errors import HarnessInputError
from ragas_compat.input_limits import Limits, loads_json

DEFAULT_DEADLINE = 10.0
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
MAX_REDIRECTS = 3
REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 * 1024


class HttpFailure(Exception):
    """The request did not give a usable answer; ``str()`` is one line naming the URL."""


class CrossOriginRedirect(HttpFailure):
    """A redirect to another scheme, host or port: not followed (the headers stay with the origin)."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


class DeadlineExceeded(HttpFailure):
    """The whole exchange took longer than the deadline."""


class TooLarge(HttpFailure):
    """The body is larger than the byte cap."""


class HttpStatus(HttpFailure):
    """A status other than 2xx (after same-origin redirects)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class BadBody(HttpFailure):
    """The body is not strict UTF-8 JSON within the input limits."""


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HttpFailure(f"{url}: not an http:// or https:// URL")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise HttpFailure(f"{url}: bad port") from None
        return cls(parts.scheme, parts.hostname.lower(), port)

    def text(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def _target(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class _Watchdog:
    """Shuts the connection's socket down at the deadline, so a blocked read returns at once."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self.fired = False
        self._connection = connection
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        sock = self._connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _connection(origin: Origin, timeout: float) -> http.client.HTTPConnection:
    if origin.scheme == "https":
        return http.client.HTTPSConnection(origin.host, origin.port, timeout=timeout,
                                           context=ssl.create_default_context())
    return http.client.HTTPConnection(origin.host, origin.port, timeout=timeout)


def _exchange(url: str, origin: Origin, headers: dict[str, str], deadline: float, max_bytes: int,
              seconds: float) -> tuple[int, str | None, bytes]:
    """One GET: ``(status, Location header, body)``; the body only for a 2xx answer."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineExceeded(f"{url}: no answer within {seconds:g} s")
    connection = _connection(origin, remaining)
    watchdog = _Watchdog(connection, remaining)
    try:
        with watchdog:
            connection.connect()  # the watchdog can shut the socket only once it exists
            connection.request("GET", _target(url), headers={"Accept": "application/json", **headers})
            response = connection.getresponse()
            status, location = response.status, response.getheader("Location")
            if not 200 <= status < 300:
                return status, location, b""
            length = response.getheader("Content-Length")
            if length is not None and length.strip().isdigit() and int(length) > max_bytes:
                raise TooLarge(f"{url}: the answer has {int(length)} bytes, more than the cap of {max_bytes}")
            body = bytearray()
            while True:
                if time.monotonic() > deadline:
                    raise DeadlineExceeded(f"{url}: the answer did not arrive within {seconds:g} s")
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                body += chunk
                if len(body) > max_bytes:
                    raise TooLarge(f"{url}: the answer is larger than the cap of {max_bytes} bytes")
            if watchdog.fired:
                raise DeadlineExceeded(f"{url}: the answer did not arrive within {seconds:g} s")
            if response.length:  # Content-Length promised more than came before the connection closed
                raise HttpFailure(f"{url}: IncompleteRead: the answer ended {response.length} bytes short")
            return status, location, bytes(body)
    except HttpFailure:
        raise
    except (OSError, http.client.HTTPException, ssl.SSLError, ValueError) as exc:
        if watchdog.fired or time.monotonic() >= deadline:
            raise DeadlineExceeded(f"{url}: no complete answer within {seconds:g} s") from None
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise HttpFailure(f"{url}: {type(exc).__name__}: {reason}") from None
    finally:
        connection.close()


def get_bytes(url: str, *, headers: dict[str, str] | None = None, deadline: float = DEFAULT_DEADLINE,
              max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The body of ``GET url`` (2xx), within the guarantees of the module docstring."""
    headers = dict(headers or {})
    until = time.monotonic() + deadline
    origin = Origin.of(url)
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        status, location, body = _exchange(current, origin, headers, until, max_bytes, deadline)
        if status in REDIRECTS and location:
            following = urllib.parse.urljoin(current, location)
            try:
                target = Origin.of(following)
            except HttpFailure:
                target = None
            if target != origin:
                raise CrossOriginRedirect(f"{current}: redirected to another origin ({following}); not followed",
                                          following)
            current = following
            continue
        if not 200 <= status < 300:
            raise HttpStatus(f"{current}: HTTP {status}", status)
        return body
    raise HttpFailure(f"{url}: more than {MAX_REDIRECTS} redirects")


def get_json(url: str, *, headers: dict[str, str] | None = None, deadline: float = DEFAULT_DEADLINE,
             max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """``get_bytes`` parsed as strict, bounded JSON (``BadBody`` otherwise)."""
    body = get_bytes(url, headers=headers, deadline=deadline, max_bytes=max_bytes)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadBody(f"{url}: the answer is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return loads_json(text, url, limits=Limits())
    except HarnessInputError as exc:
        raise BadBody(str(exc)) from None
