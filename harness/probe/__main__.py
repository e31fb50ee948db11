"""The Ragas probe: run Ragas's own metric classes on frozen verdicts; write one JSON document.

Usage: ``ragas_compat_probe [--wait] REQUEST.json [--host-pid PID]`` (``protocol.probe_command(python,
ENTRY_PROBE, ...)``: the package run as ``__main__`` under its own name). With ``--wait``
the probe starts ahead of its request: it writes ``located.json`` (where Ragas is, from
``locate``) beside REQUEST.json, imports Ragas, then waits for REQUEST.json to appear
while the host that started it is alive (``Host``: process PID, the host's own pid; without
``--host-pid``, the probe's parent as it starts).
REQUEST: ``{"cases": [raw case dicts], "targets": [target objects], "output": "result.json"}``
(``protocol.ProbeRequest``); without "output" the result goes to stdout. Each target is a
``protocol.TargetSpec`` the host built from its registry (the probe has no target list of its own);
each case is scored by every target that applies to it, case by case, targets in request order.
Optional ``"evaluate": true | {settings}`` also runs Ragas's ``evaluate()``/``aevaluate()`` on
the whole suite (``evaluate``; the request's legacy targets) and adds an ``"evaluate"`` section to
the output.
Optional ``"workers": N`` forks N-1 more processes after the import (``workers``); the
cases and the evaluation runs are dealt among them and the output is the same as with one.
Optional ``"next_request": PATH`` chains requests: once this request's output is written, the
same process waits for PATH (while the host is alive) and serves it with the Ragas it has imported;
the last request of a chain has no ``next_request``. Whatever Ragas does once per process happens
in the first request of a chain, so a chain's outputs together are those of one request holding
all its cases.

Depends only on the standard library and Ragas, so it runs in any virtualenv or against a
Ragas checkout on PYTHONPATH. Before Ragas is imported it sets RAGAS_DO_NOT_TRACK=true and
installs a guard that blocks and records every network attempt.

Exit status (``protocol``): 0 results written (per-result errors included); 2 bad request
(stderr says why); 3 Ragas could not be imported (output written, ``ragas.import_error`` set).
The request and output documents are ``ProbeRequest`` and ``ProbeOutput`` there.
"""

from __future__ import annotations

import os

# Before anything can import Ragas: Ragas posts telemetry on every metric call unless this is "true".
# A run that observes telemetry (TELEMETRY_ENV "on": `ragas-compat matrix --telemetry`) leaves it on;
# the network guard then blocks and records every attempt (output "network_attempts").
os.environ["RAGAS_DO_NOT_TRACK"] = "false" if os.environ.get("RAGAS_COMPAT_TELEMETRY") == "on" else "true"

import asyncio
import faulthandler
import gc
import json
import platform
import sys
import tempfile
import time
import typing as t
import warnings

from . import network_guard
from .host import Host
from .locate import locate_ragas
from .protocol import (
    API_SELFTEST,
    EXIT_BAD_REQUEST,
    EXIT_OK,
    EXIT_RAGAS_IMPORT,
    HOST_PID_FLAG,
    IMPORTED_FILE,
    LOCATED_FILE,
    PROBE_FORMAT,
    PROGRESS_PREFIX,
    RESULTS_LINE,
    SELFTEST_PREFIX,
    WAIT_FLAG,
    ProbeOutput,
    ProbeRequest,
    ProbeResult,
    budget_problem,
    encode_warnings,
    full_budget,
)
from .targets import BadTargets, Target, case_list_sharer, targets_from_request
from .workers import Claims, WorkerFailed, run_forked


class BadRequest(Exception):
    pass


EXIT_WORKER_CRASHED = 70  # a forked worker failed: reported by the host as a crash with this code


def read_request(path: str) -> ProbeRequest:
    try:
        with open(path, encoding="utf-8") as handle:
            # the targets' case lists, parsed apart, were most of a large request's memory
            request = json.load(handle, object_hook=case_list_sharer())
    except (OSError, json.JSONDecodeError) as exc:
        raise BadRequest(f"cannot read request {path}: {exc}") from None
    if not isinstance(request, dict) or not isinstance(request.get("cases"), list):
        raise BadRequest(f"{path}: request must be an object with a 'cases' list")
    if not all(isinstance(c, dict) for c in request["cases"]):
        raise BadRequest(f"{path}: every item of 'cases' must be an object")
    workers = request.get("workers", 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise BadRequest(f"{path}: 'workers' must be a positive integer")
    problem = budget_problem(request.get("budget"))
    if problem:
        raise BadRequest(f"{path}: {problem}")
    following = request.get("next_request")
    if following is not None and not (isinstance(following, str) and isinstance(request.get("output"), str)):
        raise BadRequest(f"{path}: 'next_request' must be a path, and a chained request needs an 'output' file")
    return request


def progress_prefix(request_path: str) -> str:
    """Where the progress files of the request at ``request_path`` start: ``progress-<request>-`` beside
    it (``<request>``: the request file's name without ``.json``), so each request of a chain has its own."""
    folder, name = os.path.split(os.path.abspath(request_path))
    return os.path.join(folder, f"{PROGRESS_PREFIX}{name.removesuffix('.json')}-")


def write_located(request_path: str) -> None:
    """``located.json`` beside the request: where Ragas is (``locate``), written atomically."""
    path = os.path.join(os.path.dirname(os.path.abspath(request_path)), LOCATED_FILE)
    with open(path + ".partial", "w", encoding="utf-8") as handle:
        json.dump(locate_ragas(), handle)
    os.replace(path + ".partial", path)


def write_imported(request_path: str) -> None:
    """``imported.txt`` beside the request: the import is over (succeeded or not); the host's
    benchmarks watch for it to time what follows the import."""
    path = os.path.join(os.path.dirname(os.path.abspath(request_path)), IMPORTED_FILE)
    with open(path, "w", encoding="utf-8"):
        pass


def wait_for_request(path: str, host: Host) -> bool:
    """Wait until ``path`` exists; False when the host that started the probe has gone."""
    pause = 0.001
    while not os.path.exists(path):
        if host.gone():
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    return True


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
            warm_once_per_process_state()
            # what the import built lives as long as the process: keep the cyclic collector off it (a
            # full collection would traverse it again and again while the cases are scored)
            gc.collect()
            gc.freeze()
    document["ragas"]["import_warnings"] = encode_warnings(caught)
    return document["ragas"]["import_error"] is None


def warm_once_per_process_state() -> None:
    """Do now what Ragas does once per process on its first metric call (read or create its
    anonymous user id file, cached; its ResourceWarning lands in ``import_warnings``), so every
    forked worker starts from the same state and no row's warnings depend on how cases were dealt."""
    try:
        from ragas._analytics import get_userid

        get_userid()
    except Exception:
        pass


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


Pair = tuple[int, str]  # (case index, target name)


def scored_pairs(cases: list[dict], targets: t.Sequence[Target]) -> list[Pair]:
    """Every (case, target) to score, in output order: case by case, targets in request order."""
    return [(i, target.name) for i, case in enumerate(cases) for target in targets if target.applies(case)]


def first_uses(pairs: list[Pair]) -> list[Pair]:
    """Each target's first pair, in output order: where a serial run first builds each class."""
    first: dict[str, Pair] = {}
    for pair in pairs:
        first.setdefault(pair[1], pair)
    return [pair for pair in pairs if first[pair[1]] == pair]


async def run_pairs(cases: list[dict], pairs: list[Pair], by_name: dict[str, Target],
                    case_done: t.Callable[[], None] = lambda: None,
                    deadlines: t.Any = None) -> list[ProbeResult]:
    """The result of each pair, in the given order (``case_done`` after the last pair of each case), each
    within its deadline (``deadlines``: the series of a caller that scores more pairs after these, an
    entered ``budget.Deadlines``; by default one for these pairs)."""
    from .budget import Deadlines
    from .protocol import new_result
    from .scoring import run_target
    from .selftest import run_selftest_target

    def stopped(target: Target, case: dict) -> t.Callable[[t.Any], ProbeResult]:
        def result(exc: t.Any) -> ProbeResult:  # a case stopped before it could make its own result
            record = new_result(case, target.name, target.api, target.metric, target.fields_read)
            record["value"] = exc.value()
            return record
        return result

    if deadlines is None:
        with Deadlines() as own:  # one alarm handler for the pairs, a deadline for each
            return await run_pairs(cases, pairs, by_name, case_done, own)
    results = []
    for number, (i, name) in enumerate(pairs):
        if name.startswith(SELFTEST_PREFIX):
            results.append(run_selftest_target(name, cases[i]))
        else:  # within the request's budget per (case, target) (budget: judge calls, time, memory)
            target = by_name[name]
            results.append(await deadlines.run(run_target(target, cases[i]), stopped(target, cases[i])))
        if number + 1 == len(pairs) or pairs[number + 1][0] != i:
            case_done()
    return results


class Progress:
    """Worker ``index``'s (or the first uses') count of finished units (cases and evaluation runs) in
    ``<prefix><index>.txt`` ("done total", ``prefix`` from ``progress_prefix``), rewritten at most every
    0.2 s and at the end (``step`` reaching ``total``, or ``finish``); the host sums the request's files
    for its progress bar. Workers that take units from a shared queue do not know their own total: the
    first worker's file holds every queued unit as its total (written before the fork, ``write``) and
    the others' hold 0, so the sums are right."""

    def __init__(self, prefix: str, index: str, total: int) -> None:
        self.path = f"{prefix}{index}.txt"
        self.done, self.total, self.written = 0, total, 0.0

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.written >= 0.2 or self.done == self.total:
            self.written = now
            self.write()

    def finish(self) -> None:
        """The count as it ends (unless ``step`` has just written it)."""
        if self.done != self.total:
            self.write()

    def write(self) -> None:
        """The count as a symbolic link whose target is "done total", renamed into place: a link has no
        data blocks, so the rename does not make the file system flush a fresh file's data first
        (ext4 does that when a written file replaces another: about 3 ms a write against 0.01 ms).
        A plain file where links cannot be made; the host reads either (``StartedProbe.progress``)."""
        text, partial = f"{self.done} {self.total}", self.path + ".partial"
        try:
            os.symlink(text, partial)
        except FileExistsError:
            os.unlink(partial)
            os.symlink(text, partial)
        except (OSError, NotImplementedError):
            with open(partial, "w", encoding="utf-8") as handle:
                handle.write(text)
        os.replace(partial, self.path)


class Encoded(str):
    """One result already encoded as the output's line (``encode_result``)."""


# = json.dumps(result, ensure_ascii=False, allow_nan=False), its encoder built once (json.dumps with options
# builds one on every call)
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def encode_result(result: ProbeResult) -> Encoded:
    """A result as ``write_document`` writes it: each worker encodes its own as it scores them, so the
    parent neither decodes a child's results nor encodes them again after the workers."""
    return Encoded(_encode(result))


class SpooledResults:
    """The output's results, in output order, read from the files the workers wrote them to as they
    scored (``<folder>/results-<worker>.txt``: one line per scored pair, its place in the output, a tab,
    its encoded result; JSON escapes every control character, so neither holds a tab or a line break)
    and merged by place with the pairs scored before the fork (``early``). Each worker takes its
    cases in output order, so each file is in place order: the merge holds one line per file, and no
    process holds every result (a 50,000-case run's results are about 400 MB encoded). Iterating checks
    that every place from 0 to ``total - 1`` comes exactly once (a bug of ours otherwise); ``discard``
    removes the files."""

    def __init__(self, folder: str, early: dict[int, Encoded], total: int) -> None:
        self.folder, self.early, self.total = folder, early, total

    def path(self, worker: int) -> str:
        return os.path.join(self.folder, f"results-{worker}.txt")

    def _lines(self, path: str) -> t.Iterator[tuple[int, str]]:
        with open(path, encoding="utf-8", newline="\n") as handle:
            for line in handle:
                place, _, encoded = line.rstrip("\n").partition("\t")
                yield int(place), encoded

    def __iter__(self) -> t.Iterator[Encoded]:
        import heapq

        files = sorted(name for name in os.listdir(self.folder) if name.startswith("results-"))
        streams = [iter(sorted(self.early.items())), *(self._lines(os.path.join(self.folder, f)) for f in files)]
        expected = 0
        for place, encoded in heapq.merge(*streams, key=lambda item: item[0]):
            if place != expected:
                raise RuntimeError(f"probe: result {expected} of {self.total} is missing or repeated (got {place})")
            expected += 1
            yield Encoded(encoded)
        if expected != self.total:
            raise RuntimeError(f"probe: {self.total - expected} of {self.total} scored pairs have no result")

    def discard(self) -> None:
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


def score(document: ProbeOutput, request: ProbeRequest, attempts: list[dict], progress_files: str) -> None:
    """Fill ``document``'s results (and evaluate section) for the request, in ``workers`` processes
    (progress files starting with ``progress_files``, see ``progress_prefix``).

    First, here, each target's first pair and the first evaluation run (``first_uses``): whatever
    Ragas does once per process (lazy imports, caches, warnings shown once) happens before the
    fork, on the rows where a serial run meets it, so the output does not depend on ``workers``
    and the workers do not repeat it. The other cases (each with all its pairs), then the other
    evaluation runs, are one queue the workers take from as each finishes a unit (``workers.Claims``).
    Each worker encodes its results as it makes them (``encode_result``)."""
    from .scoring import targets_here

    cases = request["cases"]
    # a target of a class some releases only have makes no row where this Ragas lacks it (Target.releases)
    # and a class that reads fewer fields in earlier releases reads those here (Target.for_release)
    targets = targets_here(targets_from_request(request["targets"]), document["ragas"].get("version"))
    by_name = {target.name: target for target in targets}
    pairs = scored_pairs(cases, targets)
    settings, runs = None, []
    if request.get("evaluate"):
        from .evaluate import merge_batches, planned_runs, run_planned

        settings, runs = planned_runs(cases, request["evaluate"], targets)
    warm = first_uses(pairs)
    warm_runs = runs[:1]
    progress = Progress(progress_files, "first", len({i for i, _ in warm}) + len(warm_runs))
    place = {pair: number for number, pair in enumerate(pairs)}
    early = {place[pair]: encode_result(result)
             for pair, result in zip(warm, asyncio.run(run_pairs(cases, warm, by_name, progress.step)))}
    by_run: dict[int, dict] = {}
    for j, run in enumerate(warm_runs):
        by_run[j] = run_planned(run, settings)
        progress.step()
    warmed = set(warm)
    rest: dict[int, list[Pair]] = {}  # case -> its pairs still to score, cases in output order
    for pair in pairs:
        if pair not in warmed:
            rest.setdefault(pair[0], []).append(pair)
    units: list[tuple[str, int]] = [("case", i) for i in rest] + [("run", j) for j in range(len(warm_runs), len(runs))]
    workers = max(1, min(request.get("workers", 1), len(units)))
    claims = Claims(len(units), shared=workers > 1)
    first_progress = Progress(progress_files, "0", len(units))
    first_progress.write()  # before the fork: the queue's total is in this file before any worker counts
    seen_attempts = len(attempts)

    spooled = SpooledResults(tempfile.mkdtemp(prefix="ragas-compat-results-"), early, len(pairs))

    def work(index: int) -> dict:
        progress = first_progress if index == 0 else Progress(progress_files, str(index), 0)
        claimed: list[int | None] = []

        async def score_cases(out: t.TextIO) -> None:  # cases until the queue is out of them (a claimed run is left over)
            from .budget import Deadlines

            with Deadlines() as deadlines:  # one alarm handler for all the worker's pairs
                while (unit := claims.next()) is not None and units[unit][0] == "case":
                    chosen = rest[units[unit][1]]
                    results = await run_pairs(cases, chosen, by_name, deadlines=deadlines)
                    out.writelines(f"{place[pair]}\t{encode_result(result)}\n"
                                   for pair, result in zip(chosen, results))
                    progress.step()
            claimed.append(unit)

        with open(spooled.path(index), "w", encoding="utf-8", newline="\n") as out:
            asyncio.run(score_cases(out))
        done = []
        unit = claimed[0]
        while unit is not None:
            j = units[unit][1]
            done.append((j, run_planned(runs[j], settings)))
            progress.step()
            unit = claims.next()
        progress.finish()
        return {"runs": done, "attempts": attempts[seen_attempts:]}

    # the request's cases, the targets' first uses and Ragas's import state live until the request ends:
    # frozen, the collector does not traverse them again on each full collection while the pairs are
    # scored (a full collection after the import: about 0.1 s; run_forked freezes them too before it
    # forks, for its own reason). Thawed after a request a chain's next one follows, so that what of them
    # it no longer holds can be collected; the last request's stay frozen (thawing makes the collector's
    # next full pass come early, over all of them, while the output is written)
    gc.freeze()
    try:
        parts = run_forked([lambda i=i: work(i) for i in range(workers)])
    except BaseException:
        spooled.discard()
        raise
    finally:
        claims.close()
        if request.get("next_request") is not None:
            gc.unfreeze()
    for number, part in enumerate(parts):
        by_run.update((int(j), record) for j, record in part["runs"])
        if number:  # the first part ran here: its attempts are in ``attempts`` already
            attempts.extend(part["attempts"])
    # written as they are read back, in order (write_document); main discards the files once written
    document["results"] = spooled  # type: ignore[typeddict-item]
    if settings is not None:
        document["evaluate"] = {"settings": settings, "runs": merge_batches([by_run[j] for j in range(len(runs))])}


def check_targets(raw: object) -> None:
    """The request's targets are well-formed, name judge scripts the probe has and known selftests."""
    from .selftest import SELFTEST_TARGETS

    try:
        targets = targets_from_request(raw)
    except BadTargets as exc:
        raise BadRequest(str(exc)) from None
    unknown = [t.name for t in targets if t.api == API_SELFTEST and t.name not in SELFTEST_TARGETS]
    if unknown:
        raise BadRequest(f"known selftest targets: {', '.join(SELFTEST_TARGETS)}; unknown targets {unknown}")


def write(document: ProbeOutput, output: str | None) -> None:
    """The output document as JSON to ``output`` (renamed into place when complete) or standard output:
    indented, with ``results`` last and one compact result per line (``RESULTS_LINE`` opens them), so
    the host can read the results one at a time and the document is never one string."""
    if output is None:
        write_document(document, sys.stdout)
        return
    partial = output + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        write_document(document, handle)
    os.replace(partial, output)


def write_document(document: ProbeOutput, handle: t.TextIO) -> None:
    # the head is written as it is encoded, never one string: with evaluate()'s rows for 50,000 cases it was
    # about 340 MB, the probe's peak (json.dumps with an indent encodes piece by piece in Python anyway)
    encoder = json.JSONEncoder(indent=1, ensure_ascii=False, allow_nan=False)
    tail = ""  # the last two characters encoded: the head's closing "\n}" is left out
    for chunk in encoder.iterencode({key: value for key, value in document.items() if key != "results"}):
        text = tail + chunk
        handle.write(text[:-2])
        tail = text[-2:]
    if tail != "\n}":  # the head is a JSON object of several keys: a bug of ours otherwise
        raise RuntimeError(f"probe: the output's head ends in {tail!r}")
    handle.write(",\n" + RESULTS_LINE)
    for index, result in enumerate(document.get("results", [])):
        line = result if isinstance(result, Encoded) else json.dumps(result, ensure_ascii=False, allow_nan=False)
        handle.write(("\n" if index == 0 else ",\n") + line)
    handle.write("\n ]\n}\n")


def new_document(attempts: list[dict], ragas_section: dict | None = None) -> ProbeOutput:
    """An empty output document (``ragas_section``: the import's, for a later request of a chain)."""
    return {
        "probe_format": PROBE_FORMAT,
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "ragas": ragas_section or {"version": None, "file": None, "import_error": None},
        "telemetry": {},
        "network_attempts": attempts,
        "results": [],
    }


def main(argv: list[str]) -> int:
    faulthandler.enable()  # a hard crash still leaves a traceback on stderr
    host_pid = None
    if len(argv) > 2 and argv[-2] == HOST_PID_FLAG and argv[-1].isdigit():
        host_pid, argv = int(argv[-1]), argv[:-2]
    host = Host(host_pid)
    attempts: list[dict] = []
    network_guard.install(attempts)
    waiting = len(argv) == 3 and argv[1] == WAIT_FLAG
    if len(argv) != 2 and not waiting:
        print(f"usage: ragas_compat_probe [{WAIT_FLAG}] REQUEST.json [{HOST_PID_FLAG} PID]", file=sys.stderr)
        return EXIT_BAD_REQUEST
    request_path = argv[-1]
    document = new_document(attempts)
    imported = None
    if waiting:  # import while the host prepares the request
        write_located(request_path)
        imported = import_ragas(document)
        write_imported(request_path)
        if not wait_for_request(request_path, host):
            print("bad request: the host that started the probe has gone", file=sys.stderr)
            return EXIT_BAD_REQUEST
    while True:
        try:
            request = read_request(request_path)
            check_targets(request.get("targets"))
            if request.get("evaluate"):
                from .evaluate import BadEvaluateRequest, settings_from_request

                try:
                    settings_from_request(request["evaluate"])
                except BadEvaluateRequest as exc:
                    raise BadRequest(str(exc)) from None
        except BadRequest as exc:
            print(f"bad request: {exc}", file=sys.stderr)
            return EXIT_BAD_REQUEST
        from .budget import limit_memory, set_budget

        set_budget(full_budget(request.get("budget")))
        if imported is None:
            imported = import_ragas(document)
        if not imported:
            document["telemetry"] = telemetry_state()
            write(document, request.get("output"))
            return EXIT_RAGAS_IMPORT
        try:  # the memory is limited once Ragas is imported (the import itself is not a case)
            limit_memory(full_budget(request.get("budget"))["memory"])
            score(document, request, attempts, progress_prefix(request_path))
        except WorkerFailed as exc:
            print(f"probe worker failed: {exc}", file=sys.stderr)
            return EXIT_WORKER_CRASHED
        flush_telemetry()
        document["telemetry"] = telemetry_state()
        try:
            write(document, request.get("output"))
        finally:
            if isinstance(document["results"], SpooledResults):
                document["results"].discard()
        request_path = request.get("next_request")
        if request_path is None:
            return EXIT_OK
        # the next request of the chain: a new document, the attempts of this one written already
        attempts.clear()
        document = new_document(attempts, document["ragas"])
        if not wait_for_request(request_path, host):
            print("bad request: the host that started the probe has gone", file=sys.stderr)
            return EXIT_BAD_REQUEST


if __name__ == "__main__":
    from .budget import exit_without_teardown

    exit_without_teardown(main(sys.argv))
