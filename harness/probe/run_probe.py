"""The Ragas probe: run Ragas's own metric classes on frozen verdicts; write one JSON document.

Usage: ``python run_probe.py REQUEST.json`` (run by file path, not ``-m``).
REQUEST: ``{"cases": [raw case dicts], "targets": null | ["legacy:ClassName",
"collections:ClassName", ...], "output": "result.json"}``; without "output" the result goes to
stdout. ``targets`` null runs every legacy and every collections target whose inputs a case has.
Optional ``"evaluate": true | {settings}`` also runs Ragas's ``evaluate()``/``aevaluate()`` on
the whole suite (``probe_evaluate.py``) and adds an ``"evaluate"`` section to the output.

Depends only on the standard library and Ragas, so it runs in any virtualenv or against a
Ragas checkout on PYTHONPATH. Before Ragas is imported it sets RAGAS_DO_NOT_TRACK=true and
installs a guard that blocks and records every network attempt.

Exit status (``probe_protocol``): 0 results written (per-result errors included); 2 bad request
(stderr says why); 3 Ragas could not be imported (output written, ``ragas.import_error`` set).
The request and output documents are ``ProbeRequest`` and ``ProbeOutput`` there; the targets
are the one table of ``probe_targets``.
"""

from __future__ import annotations

import os

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # before anything can import Ragas

import asyncio
import faulthandler
import json
import platform
import sys
import warnings

import probe_network_guard
from probe_protocol import (
    EXIT_BAD_REQUEST,
    EXIT_OK,
    EXIT_RAGAS_IMPORT,
    PROBE_FORMAT,
    SELFTEST_PREFIX,
    ProbeOutput,
    ProbeRequest,
    ProbeResult,
    encode_warnings,
)


class BadRequest(Exception):
    pass


def read_request(path: str) -> ProbeRequest:
    try:
        with open(path, encoding="utf-8") as handle:
            request = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise BadRequest(f"cannot read request {path}: {exc}") from None
    if not isinstance(request, dict) or not isinstance(request.get("cases"), list):
        raise BadRequest(f"{path}: request must be an object with a 'cases' list")
    if not all(isinstance(c, dict) for c in request["cases"]):
        raise BadRequest(f"{path}: every item of 'cases' must be an object")
    targets = request.get("targets")
    if targets is not None and not (isinstance(targets, list)
                                    and all(isinstance(x, str) for x in targets)):
        raise BadRequest(f"{path}: 'targets' must be null or a list of strings")
    return request


def import_ragas(document: ProbeOutput) -> bool:
    """Import Ragas (warnings recorded); fill ``document["ragas"]``; False when it fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import ragas
            import ragas.metrics
        except Exception as exc:
            document["ragas"]["import_error"] = f"{type(exc).__name__}: {exc}"
        else:
            document["ragas"]["version"] = getattr(ragas, "__version__", None)
            document["ragas"]["file"] = os.path.abspath(ragas.__file__)
    document["ragas"]["import_warnings"] = encode_warnings(caught)
    return document["ragas"]["import_error"] is None


def telemetry_state() -> dict:
    """The env value and what Ragas's own check (``ragas._analytics.do_not_track``) says."""
    state = {"RAGAS_DO_NOT_TRACK": os.environ.get("RAGAS_DO_NOT_TRACK"), "do_not_track": None}
    try:
        from ragas._analytics import do_not_track

        state["do_not_track"] = bool(do_not_track())
    except Exception:
        pass
    return state


def flush_telemetry() -> None:
    """Flush Ragas's batched analytics now, so a leak would hit the guard while we record."""
    try:
        from ragas._analytics import _analytics_batcher

        _analytics_batcher.flush()
    except Exception:
        pass


async def run_cases(cases: list[dict], targets: list[str] | None) -> list[ProbeResult]:
    from probe_scoring import run_target
    from probe_selftest_targets import run_selftest_target
    from probe_targets import TARGETS, TARGETS_BY_NAME

    chosen = [t.name for t in TARGETS] if targets is None else targets
    results = []
    for case in cases:
        for name in chosen:
            if name.startswith(SELFTEST_PREFIX):
                results.append(run_selftest_target(name, case))
                continue
            target = TARGETS_BY_NAME[name]
            if target.applies(case):
                results.append(await run_target(target, case))
    return results


def check_targets(targets: list[str] | None) -> None:
    if targets is None:
        return
    from probe_selftest_targets import SELFTEST_TARGETS
    from probe_targets import TARGETS_BY_NAME

    known = TARGETS_BY_NAME
    unknown = [t for t in targets if t not in known and t not in SELFTEST_TARGETS]
    if unknown:
        # the unknown names last: the host keeps the tail of a long message (the table has many targets)
        raise BadRequest(f"known targets: {', '.join(sorted(known))}; unknown targets {unknown}")


def write(document: ProbeOutput, output: str | None) -> None:
    text = json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False)
    if output is None:
        sys.stdout.write(text + "\n")
        return
    partial = output + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, output)


def main(argv: list[str]) -> int:
    faulthandler.enable()  # a hard crash still leaves a traceback on stderr
    attempts: list[dict] = []
    probe_network_guard.install(attempts)
    if len(argv) != 2:
        print("usage: run_probe.py REQUEST.json", file=sys.stderr)
        return EXIT_BAD_REQUEST
    try:
        request = read_request(argv[1])
    except BadRequest as exc:
        print(f"bad request: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    document: ProbeOutput = {
        "probe_format": PROBE_FORMAT,
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "ragas": {"version": None, "file": None, "import_error": None},
        "telemetry": {},
        "network_attempts": attempts,
        "results": [],
    }
    try:
        check_targets(request.get("targets"))
        if request.get("evaluate"):
            from probe_evaluate import BadEvaluateRequest, settings_from_request

            try:
                settings_from_request(request["evaluate"])
            except BadEvaluateRequest as exc:
                raise BadRequest(str(exc)) from None
    except BadRequest as exc:
        print(f"bad request: {exc}", file=sys.stderr)
        return EXIT_BAD_REQUEST
    if not import_ragas(document):
        document["telemetry"] = telemetry_state()
        write(document, request.get("output"))
        return EXIT_RAGAS_IMPORT
    document["results"] = asyncio.run(run_cases(request["cases"], request.get("targets")))
    if request.get("evaluate"):  # Ragas's evaluate()/aevaluate() over the suite (probe_evaluate.py)
        from probe_evaluate import run_evaluations

        document["evaluate"] = run_evaluations(request["cases"], request["evaluate"])
    flush_telemetry()
    document["telemetry"] = telemetry_state()
    write(document, request.get("output"))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
