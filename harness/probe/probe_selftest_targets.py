"""Test-only targets proving the probe's fault handling (standard library only).

They run only when named explicitly in the request's ``targets``; never by default.

* ``selftest:connect`` tries ``socket.create_connection(("127.0.0.1", 9))`` - a negative
  control showing the network guard catches a real attempt.
* ``selftest:abort`` kills the probe process with ``os.abort()`` - a probe crash.
"""

from __future__ import annotations

import os
import socket

try:
    from .probe_encoding import error_record
except ImportError:
    from probe_encoding import error_record  # type: ignore[no-redef]

SELFTEST_TARGETS = ("selftest:connect", "selftest:abort")


def run_selftest_target(name: str, case: dict) -> dict:
    result = {"case_id": case.get("id"), "target": name, "api": "selftest", "metric": "selftest",
              "ragas_class": None, "fields_read": [], "received": None, "value": None,
              "prompts": 0, "expected_prompts": 0, "warnings": []}
    if name == "selftest:abort":
        os.abort()
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1).close()
        result["value"] = 1.0
    except OSError as exc:
        result["value"] = error_record(exc)
    return result
