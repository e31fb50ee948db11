"""A guard that blocks and records every network attempt in this process (standard library only).

Patches ``socket.socket.connect``/``connect_ex``, ``socket.create_connection`` and
``socket.getaddrinfo``. Install it before importing Ragas so that import-time and
telemetry attempts are caught too. Each attempt raises :class:`NetworkBlocked` (an
``OSError``, so libraries treat it like an unreachable network) and is appended to the
list given to :func:`install`.

``allow`` (the recording probe only: the judge's endpoint) is a list of ``(host, port)`` pairs that
pass through: a name lookup of exactly that host and port, and a connection to that port at any
address the host resolved to when the guard was installed. Everything else is still blocked and
recorded; the verification probe allows nothing.
"""

from __future__ import annotations

import socket
import traceback
from collections.abc import Iterable


class NetworkBlocked(OSError):
    """A network attempt during a verification run (blocked by the probe's guard)."""


def _caller() -> str:
    frames = traceback.extract_stack(limit=8)[:-3]
    return " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(frames[-4:]))


def _allowed_addresses(allow: Iterable[tuple[str, int]], lookup) -> tuple[set, set]:
    """``(names, addresses)``: the allowed (host, port) lookups and (ip, port) connections."""
    names, addresses = set(), set()
    for host, port in allow:
        names.add((str(host), int(port)))
        addresses.add((str(host), int(port)))
        try:
            for info in lookup(host, port, 0, socket.SOCK_STREAM):
                addresses.add((str(info[4][0]), int(port)))
        except OSError:
            pass  # unresolvable: connections to it fail on their own
    return names, addresses


def install(attempts: list[dict], allow: Iterable[tuple[str, int]] = ()) -> None:
    """Block all socket connections and name lookups but those ``allow`` names, recording each
    blocked one into ``attempts``."""
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex
    original_create_connection, original_getaddrinfo = socket.create_connection, socket.getaddrinfo
    names, addresses = _allowed_addresses(allow, original_getaddrinfo)

    def permitted(address: object) -> bool:
        return (isinstance(address, tuple) and len(address) >= 2 and isinstance(address[1], int)
                and (str(address[0]), address[1]) in addresses)

    def blocked(call: str, address: object) -> NetworkBlocked:
        record = {"call": call, "address": repr(address), "where": _caller()}
        attempts.append(record)
        return NetworkBlocked(f"network access blocked by the probe: {call}({address!r})")

    def connect(self, address):
        if permitted(address):
            return original_connect(self, address)
        raise blocked("socket.connect", address)

    def connect_ex(self, address):
        if permitted(address):
            return original_connect_ex(self, address)
        raise blocked("socket.connect_ex", address)

    def create_connection(address, *args, **kwargs):
        if permitted(address):
            return original_create_connection(address, *args, **kwargs)
        raise blocked("socket.create_connection", address)

    def getaddrinfo(host, port, *args, **kwargs):
        try:
            key = (host.decode() if isinstance(host, bytes) else str(host), int(port))
        except (TypeError, ValueError):
            key = None
        if key in names:
            return original_getaddrinfo(host, port, *args, **kwargs)
        raise blocked("socket.getaddrinfo", (host, port))

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.create_connection = create_connection  # type: ignore[assignment]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
