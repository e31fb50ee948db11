"""A guard that blocks and records every network attempt in this process (standard library only).

Patches ``socket.socket.connect``/``connect_ex``, ``socket.create_connection`` and
``socket.getaddrinfo``. Install it before importing Ragas so that import-time and
telemetry attempts are caught too. Each attempt raises :class:`NetworkBlocked` (an
``OSError``, so libraries treat it like an unreachable network) and is appended to the
list given to :func:`install`.
"""

from __future__ import annotations

import socket
import traceback


class NetworkBlocked(OSError):
    """A network attempt during a verification run (blocked by the probe's guard)."""


def _caller() -> str:
    frames = traceback.extract_stack(limit=8)[:-3]
    return " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(frames[-4:]))


def install(attempts: list[dict]) -> None:
    """Block all socket connections and name lookups, recording each into ``attempts``."""

    def blocked(call: str, address: object) -> NetworkBlocked:
        record = {"call": call, "address": repr(address), "where": _caller()}
        attempts.append(record)
        return NetworkBlocked(f"network access blocked by the probe: {call}({address!r})")

    def connect(self, address):
        raise blocked("socket.connect", address)

    def connect_ex(self, address):
        raise blocked("socket.connect_ex", address)

    def create_connection(address, *args, **kwargs):
        raise blocked("socket.create_connection", address)

    def getaddrinfo(host, port, *args, **kwargs):
        raise blocked("socket.getaddrinfo", (host, port))

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.create_connection = create_connection  # type: ignore[assignment]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
