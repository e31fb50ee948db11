"""Test-only targets proving the probe's fault handling (standard library only).

They run only when named explicitly in the request's ``targets``; never by default.

* ``selftest:connect`` tries ``socket.create_connection(("127.0.0.1", 9))`` - a negative
  control showing the network guard catches a real attempt.
* ``selftest:abort`` kills the probe process with ``os.abort()`` - a probe crash.
"""

from __future__ import annotations

import os
import socket

from .protocol import API_SELFTEST, ProbeResult, error_record, new_result, target_name

SELFTEST_TARGETS = (target_name(API_SELFTEST, "connect"), target_name(API_SELFTEST, "abort"))


def run_selftest_target(name: str, case: dict) -> ProbeResult:
    result = new_result(case, name, API_SELFTEST, API_SELFTEST, ())
    if name == target_name(API_SELFTEST, "abort"):
        os.abort()
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1).close()
        result["value"] = 1.0
    except OSError as exc:
        result["value"] = error_record(exc)
    return result
