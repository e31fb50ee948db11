"""Shards: one audit split over several processes or machines, merged into the unsharded report set.

**The split** (``shard_of``): case ``id`` goes to shard ``1 + h % N``, where ``h`` is the first 8
bytes of the SHA-256 of the id's UTF-8 text read as a big-endian integer. It depends on the id alone:
not on the case's position, the file or the machine, and a case keeps its shard when others are
added or removed. Shards are balanced in expectation only (a 10-case suite may leave one empty).

**A shard** (``run --shard K/N --out DIR``) runs the probe (per-row scores and Ragas's ``evaluate()``)
on its cases only and writes ``DIR/shard.json``: the probe's output as the probe wrote it, and the
run's provenance computed for the *whole* suite (so it is the unsharded run's), with what the merge
needs to check that the shards belong together (the suite's content digest, the case and expectations
files, the expectations digest, the ``--metric`` selection, the release position of the rules).
A shard classifies nothing and writes no report; its exit code is 0 once its file is written.

**The merge** (``merge_shards``) refuses (exit 2, naming the field) shards of different runs: another shard
count, a shard missing or given twice, another provenance (Ragas, the pin, the suite, Python, the
expectations...), shards classified under another Python than each other or than the merge's own
(``host.python``, major.minor: the merge recomputes the reference, whose float arithmetic differs), another
suite digest or ``--metric`` selection, and shards that do not hold exactly the rows of the run
(``check_complete``: counted against the suite read again). It then rebuilds the probe output
of the unsharded run: every shard's per-row results, and per (API, target) the ``evaluate()`` rows
in suite order. The dataset-level mean is the one place where a shard's work is not the whole run's:
Ragas's ``evaluate()`` reports ``safe_nanmean`` over its per-row values, and a shard's ``evaluate()``
saw only its rows. A target whose rows all come from one shard keeps that shard's mean as Ragas
reported it; otherwise the mean is numpy's ``nanmean`` (``compare.dataset_level.numpy_nanmean``, the
algorithm ``safe_nanmean`` calls, reproduced bit for bit) over Ragas's own per-row values in suite
order, which is what ``evaluate()`` over the whole suite computes from the same rows. Each shard's
reported mean is checked against its own rows first: a shard where they differ is named as a
dataset-level problem of that target, so a merge never hides what an unsharded run would show.
Connection attempts the probes blocked are merged without repeats (each probe imports Ragas once).
Classification and reports are then those of ``run``: the same ``build_audit`` on the same suite,
expectations and provenance, so the report files are byte-identical to the unsharded run's.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragas_compat.cases import Suite
from ragas_compat.cases.loader import packed, raw_object
from ragas_compat.compare.audit import Audit, build_audit
from ragas_compat.compare.dataset_level import numpy_nanmean
from ragas_compat.compare.expectations import Expectations
from ragas_compat.compare.reference_book import ReferenceBook
from ragas_compat.compare.replay import python_minor
from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.input_limits import READ_BACK_FACTOR, STDIN, read_text
from ragas_compat.pin import RagasSource
from ragas_compat.pipeline import load_run_expectations, load_suite, network_provenance, provenance, targets_of
from ragas_compat.probe.protocol import encode_float
from ragas_compat.report.atomic import write_reports_atomically
from ragas_compat.runner import StartedProbe
from ragas_compat.values import RagasError, decode_ragas_value

SHARD_FILE = "shard.json"
SHARD_FORMAT = "ragas-compat-shard/1"
NETWORK_FIELDS = ("network", "network_attempts")  # per probe process; merged, not compared


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> ShardSpec:
    """``K/N`` with 1 <= K <= N; HarnessInputError (exit 2) naming --shard otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise HarnessInputError(f"--shard {text!r}: expected K/N with 1 <= K <= N (e.g. 1/3)", field="--shard",
                                value=text)
    return ShardSpec(int(match[1]), int(match[2]))


def shard_of(case_id: str, count: int) -> int:
    """The shard (1-based) of ``count`` that case ``case_id`` belongs to (the module docstring)."""
    digest = hashlib.sha256(str(case_id).encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def shard_suite(suite: Suite, spec: ShardSpec) -> Suite:
    """``suite`` with only the cases of shard ``spec``, in their order."""
    return Suite(suite.name, suite.source, tuple(c for c in suite.cases if shard_of(c.id, spec.count) == spec.index))


def suite_digest(suite: Suite) -> str:
    """SHA-256 over the cases' raw JSON (keys sorted) in suite order: equal suites, equal digests."""
    digest = hashlib.sha256()
    for case in suite.cases:
        digest.update(json.dumps(raw_object(case), sort_keys=True, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def file_digest(path: Path | None) -> str | None:
    return None if path is None else "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _absolute(path: Path) -> str:
    return str(path) if str(path) == STDIN else str(Path(path).resolve())


# --------------------------------------------------------------------------- one shard

def run_shard(suite: Suite, spec: ShardSpec, expectations: Expectations, source: RagasSource, *, python: str,
              case_files: Sequence[Path] = (), expectations_file: Path | None = None, timeout: float = 600.0,
              metrics: tuple[str, ...] | None = None, workers: int = 1, started: StartedProbe | None = None,
              on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run the probe on shard ``spec`` of ``suite`` as ``run`` would on the whole suite, and return the
    shard document (``write_shard``). Raises RagasUnavailable (exit 3). ``suite`` is best given packed
    (``cases.loader.packed``, as ``run --shard`` gives it): the whole suite is held while the probe scores
    the shard, and its raw objects are read whole only for the request and the suite's digest."""
    part = shard_suite(suite, spec)
    with started or StartedProbe(python=python, sys_path_prefix=source.sys_path_prefix, timeout=timeout) as own:
        # the raw objects as one list only while the request is written (a packed suite's: unpacked copies)
        own.submit([raw_object(case) for case in part.cases], targets=targets_of(metrics), evaluate=True, workers=workers)
        probe = own.result(on_progress)
    if not probe.ok:
        raise RagasUnavailable(probe.error or "the Ragas probe failed")
    expectations = expectations.at_release_position(source.rules_version)
    return {
        "format": SHARD_FORMAT,
        "shard": {"index": spec.index, "count": spec.count, "cases": len(part.cases)},
        "suite": {"name": suite.name, "cases": len(suite.cases), "digest": suite_digest(suite)},
        "inputs": {"cases": [_absolute(p) for p in case_files],
                   "expectations": _absolute(expectations_file) if expectations_file else None,
                   "expectations_digest": file_digest(expectations_file)},
        "metrics": list(metrics) if metrics else None,
        "rules_version": source.rules_version,
        # the Python that classifies: the merge recomputes the reference in its own process, so a merge under
        # another Python is not byte for byte the unsharded run (3.12 made sum() of floats exact)
        "host": {"python": platform.python_version()},
        "provenance": provenance(probe, source, suite, expectations, metrics),
        "probe": probe.output,
    }


def write_shard(document: dict[str, Any], out: Path) -> Path:
    """Write ``out/shard.json`` atomically (as a one-file report set); return its path."""
    [path] = write_reports_atomically(out, {SHARD_FILE: json.dumps(document, ensure_ascii=False)})
    return path


# --------------------------------------------------------------------------- the merge

def read_shard(folder: Path) -> dict[str, Any]:
    """The shard document in ``folder`` (or the file itself); HarnessInputError (exit 2) otherwise. Read as
    every file from outside is (``input_limits``): a regular file (never a FIFO or device), of at most
    ``READ_BACK_FACTOR`` times the input limit, UTF-8, JSON (nested too deep: refused, not a crash)."""
    path = Path(folder)
    path = path / SHARD_FILE if path.is_dir() else path
    hint = f"write one with `run --shard K/N --out {folder}`"
    if not path.exists() and not path.is_symlink():
        raise HarnessInputError(f"{path}: no shard file; {hint}", field="shard", value=str(path))
    text = read_text(path, "shard file", source=str(path), allow_stdin=False, factor=READ_BACK_FACTOR)
    try:
        document = json.loads(text)
    except RecursionError:
        raise HarnessInputError(f"{path}: not a readable shard file (JSON nested deeper than this Python parses); "
                                f"{hint}", field="shard", value=str(path)) from None
    except ValueError as exc:
        raise HarnessInputError(f"{path}: not a readable shard file ({exc}); {hint}", field="shard",
                                value=str(path)) from None
    if not isinstance(document, dict) or document.get("format") != SHARD_FORMAT:
        raise HarnessInputError(f"{path}: not a shard file of this ragas-compat (format "
                                f"{document.get('format') if isinstance(document, dict) else None!r}, expected "
                                f"{SHARD_FORMAT!r})", field="format", value=str(path))
    document["path"] = str(path)
    return document


def _first_difference(a: Any, b: Any, where: str) -> str | None:
    """The dotted path of the first place ``a`` and ``b`` differ (None when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else key)
            if found:
                return found
        return None
    return None if a == b else where


def _compared(document: dict[str, Any]) -> dict[str, Any]:
    """What must be equal across the shards of one run, by field name: the provenance's fields (but the
    network's), the suite's with its digest, the expectations digest, the --metric selection, the rules'
    release position."""
    provenance = {k: v for k, v in (document.get("provenance") or {}).items() if k not in NETWORK_FIELDS}
    return {**provenance, "suite": {**(provenance.get("suite") or {}), **(document.get("suite") or {})},
            "expectations_digest": (document.get("inputs") or {}).get("expectations_digest"),
            "metrics": document.get("metrics"), "rules_version": document.get("rules_version"),
            "host": {"python": _host_python(document)}}


def _host_python(document: dict[str, Any]) -> str | None:
    """The major.minor of the Python that ran the shard (``host.python``); None when it does not say (a shard
    written before it recorded it, or a value that is no Python version)."""
    host = document.get("host")
    return python_minor(host.get("python")) if isinstance(host, dict) else None


def check_same_python(shards: Sequence[dict[str, Any]]) -> None:
    """Refuse (exit 2) a merge under another Python (major.minor) than the one that ran the shards: the merge
    recomputes the reference and classifies in this process, and the two Pythons' float arithmetic differs
    (a merged report would not be byte for byte the unsharded run's)."""
    theirs = _host_python(shards[0]) if shards else None
    mine = python_minor(platform.python_version())
    if theirs is not None and theirs != mine:
        raise HarnessInputError(f"merge: the shards were classified under Python {theirs} ({shards[0]['path']}: "
                                f"host.python), this merge runs under {mine}: merge under Python {theirs} (the "
                                "reference's float arithmetic differs between Pythons, so the merged reports would "
                                "not be those of the unsharded run)", field="host.python", value=[theirs, mine])


def _at(value: Any, path: str) -> Any:
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def check_together(shards: Sequence[dict[str, Any]]) -> None:
    """Refuse (exit 2, naming the field) shards that are not the N shards of one run."""
    if not shards:
        raise HarnessInputError("merge: no shard folder given", field="shard")
    first = shards[0]
    mine = _compared(first)
    for other in shards[1:]:
        theirs = _compared(other)
        field = _first_difference(mine, theirs, "")
        if field:
            raise HarnessInputError(
                f"merge: the shards are not of one run: {field} differs ({first['path']}: {_at(mine, field)!r}; "
                f"{other['path']}: {_at(theirs, field)!r}); merge the shards of one run (same Ragas, pin, suite, "
                "expectations and --metric)", field=field, value=[first["path"], other["path"]])
        if other["shard"]["count"] != first["shard"]["count"]:
            raise HarnessInputError(f"merge: shard.count differs ({first['path']}: {first['shard']['count']}; "
                                    f"{other['path']}: {other['shard']['count']})", field="shard.count")
    count = first["shard"]["count"]
    given: dict[int, str] = {}
    for doc in shards:
        index = doc["shard"]["index"]
        if index in given:
            raise HarnessInputError(f"merge: shard {index}/{count} is given twice ({given[index]}, {doc['path']})",
                                    field="shard.index", value=index)
        given[index] = doc["path"]
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in given]
    if missing:
        raise HarnessInputError(f"merge: shard(s) {', '.join(missing)} missing (given: "
                                f"{', '.join(f'{i}/{count}' for i in sorted(given))})", field="shard.index",
                                value=missing)


def check_complete(shards: Sequence[dict[str, Any]], suite: Suite, metrics: tuple[str, ...] | None) -> None:
    """Refuse (exit 2, naming the target and a case) shards that do not hold exactly the rows their run makes:
    each shard the number of the suite's cases the split gives it, results only of those cases, and over all
    shards one result per (case, target) the run scores, as the host requests them (``runner.request_targets``)
    and the probe applies them (``protocol.spec_applies``). A target of a class some releases only have
    (``releases``) may be absent as a whole: the probe leaves it out where this Ragas lacks the class. The
    suite is the one read again (its digest checked), so what is missing is named from it, not from the
    shards: a shard with a case's results taken out must not merge into a report that checked fewer rows."""
    from collections import Counter

    from ragas_compat.probe.protocol import spec_applies, spec_name
    from ragas_compat.runner import request_targets

    got: dict[str, Counter[str]] = {}
    for doc in shards:
        index, count = doc["shard"]["index"], doc["shard"]["count"]
        mine = sum(1 for case in suite.cases if shard_of(case.id, count) == index)
        if doc["shard"]["cases"] != mine:
            raise HarnessInputError(f"merge: {doc['path']}: shard.cases is {doc['shard']['cases']!r}, but {mine} of the "
                                    f"suite's cases are shard {index}/{count}'s", field="shard.cases", value=doc["path"])
        for result in doc["probe"].get("results", []):
            case_id = str(result.get("case_id"))
            if shard_of(case_id, count) != index:
                raise HarnessInputError(f"merge: {doc['path']}: a result of case {case_id!r}, which is not shard "
                                        f"{index}/{count}'s", field="probe.results", value=doc["path"])
            got.setdefault(str(result.get("target")), Counter())[case_id] += 1
    raws = [raw_object(case) for case in suite.cases]
    problems = []
    for spec in request_targets(targets_of(metrics), raws):
        name = spec_name(spec)
        ids = frozenset(spec["cases"]) if "cases" in spec else None
        expected = Counter(str(raw["id"]) for raw in raws if spec_applies(spec, raw, ids))
        have = got.pop(name, Counter())
        if have == expected or (not have and "releases" in spec):
            continue
        missing, extra = sorted(expected - have), sorted(have - expected)
        problems.append(f"{name}: " + "; ".join(
            part for part in (f"no result for {len(missing)} of its cases (first {missing[0]!r})" if missing else "",
                              f"{len(extra)} result(s) of no case it scores or given twice (first {extra[0]!r})"
                              if extra else "") if part))
    problems += [f"{name}: results of a target this run does not score" for name in sorted(got)]
    if problems:
        more = f"; and {len(problems) - 1} more target(s)" if len(problems) > 1 else ""
        raise HarnessInputError(f"merge: the shards do not hold the rows of one run of this suite: {problems[0]}{more}; "
                                "merge the shard files of one run as written", field="probe.results")


def _decoded(raw: object) -> float:
    value = decode_ragas_value(raw)
    return float("nan") if isinstance(value, RagasError) else float(value)


def merge_evaluate(shards: Sequence[dict[str, Any]], suite: Suite) -> dict[str, Any] | None:
    """The ``evaluate`` section of the unsharded run from the shards' (the module docstring): one run
    per (API, target) with its rows in suite order; failed runs as they were (without repeats)."""
    sections = [(doc, doc["probe"].get("evaluate")) for doc in shards]
    if not any(section for _, section in sections):
        return None
    order = {case.id: i for i, case in enumerate(suite.cases)}
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    failed: list[dict[str, Any]] = []
    for doc, section in sections:
        spec = f"{doc['shard']['index']}/{doc['shard']['count']}"
        for run in (section or {}).get("runs", []):
            if run.get("run_error"):
                if run not in failed:
                    failed.append(run)
                continue
            for target in run.get("targets", []):
                entry = merged.setdefault((run["api"], target), {
                    "api": run["api"], "metric_set": run.get("metric_set"), "targets": [target],
                    "rows": [], "errors": [], "run_error": None, "stub_problems": [], "judge_problems": [],
                    "means": []})
                rows = [{"case_id": row["case_id"], "values": {target: row["values"].get(target)}}
                        for row in run.get("rows", [])]
                entry["rows"] += rows
                entry["errors"] += [e for e in run.get("errors", []) if e.get("target") == target]
                entry["stub_problems"] += [p for p in run.get("stub_problems", []) if p.startswith(target + ":")]
                entry["judge_problems"] += [p for p in run.get("judge_problems", []) if p.startswith(target + ":")]
                reported = run.get("scores", {}).get(target)
                own = numpy_nanmean([_decoded(row["values"][target]) for row in rows])
                if encode_float(own) != reported:
                    entry["stub_problems"].append(
                        f"{target}: shard {spec}: {run['api']}() reported the mean {reported!r}, numpy's nanmean of "
                        f"its own {len(rows)} rows is {encode_float(own)!r}; the merged mean is recomputed from "
                        "the rows")
                entry["means"].append(reported)
    runs = []
    for entry in merged.values():
        entry["rows"].sort(key=lambda row: order.get(row["case_id"], len(order)))
        means = entry.pop("means")
        target = entry["targets"][0]
        entry["scores"] = {target: means[0] if len(means) == 1 else
                           encode_float(numpy_nanmean([_decoded(r["values"][target]) for r in entry["rows"]]))}
        runs.append(entry)
    first = next(section for _, section in sections if section)
    return {"settings": first.get("settings", {}), "runs": runs + failed}


def merged_output(shards: Sequence[dict[str, Any]], suite: Suite) -> dict[str, Any]:
    """The probe output of the unsharded run, rebuilt from the shards' (in shard order)."""
    shards = sorted(shards, key=lambda doc: doc["shard"]["index"])
    output = {key: value for key, value in shards[0]["probe"].items() if key not in ("results", "evaluate")}
    output["results"] = [result for doc in shards for result in doc["probe"].get("results", [])]
    attempts: list[Any] = []
    for doc in shards:
        attempts += [a for a in doc["probe"].get("network_attempts", []) if a not in attempts]
    output["network_attempts"] = attempts
    evaluate = merge_evaluate(shards, suite)
    if evaluate is not None:
        output["evaluate"] = evaluate
    return output


def merge_shards(folders: Sequence[Path], *, case_files: Sequence[Path] | None = None,
                 expectations_file: Path | None = None) -> Audit:
    """The audit of the unsharded run, from the shard folders of one run (``run --shard K/N``). The
    suite and expectations are read again: from ``case_files`` and ``expectations_file``, or else from
    the files the shards ran (recorded in them); either must be what the shards ran (digests)."""
    shards = [read_shard(folder) for folder in folders]
    check_together(shards)
    check_same_python(shards)
    first = shards[0]
    inputs = first["inputs"]
    if case_files is None:
        if STDIN in inputs["cases"]:
            raise HarnessInputError("merge: the shards read their cases from standard input; give the same cases "
                                    "with --cases", field="--cases")
        case_files = [Path(p) for p in inputs["cases"]]
    suite = packed(load_suite(list(case_files)))  # held through the classification: read field by field after the digest
    if suite_digest(suite) != first["suite"]["digest"] or suite.name != first["suite"]["name"]:
        raise HarnessInputError(f"merge: suite: the cases read ({suite.source}, {len(suite.cases)} cases) are not "
                                f"those the shards ran ({first['provenance']['suite']['source']}, "
                                f"{first['suite']['cases']} cases); give the same --cases", field="suite")
    if expectations_file is None and inputs["expectations"]:
        expectations_file = Path(inputs["expectations"])
    if file_digest(expectations_file) != inputs["expectations_digest"]:
        raise HarnessInputError(f"merge: expectations: {expectations_file or 'the pin rules only'} is not the "
                                "expectations file the shards ran; give the same --expectations",
                                field="expectations")
    expectations = load_run_expectations(expectations_file).at_release_position(first["rules_version"])
    metrics = tuple(first["metrics"]) if first["metrics"] else None
    check_complete(shards, suite, metrics)
    output = merged_output(shards, suite)
    references = ReferenceBook()
    references.fill(suite, metrics)
    prov = {**first["provenance"], **network_provenance(output)}
    return build_audit(suite, output, expectations, prov, metrics=metrics, references=references)
