"""One audit run: load cases, run the Ragas probe, classify, render the reports.

The CLI (``ragas_compat.cli.app``) and the pytest plugin call ``run_audit``; ``write_reports``
renders and writes atomically. Ragas runs only inside the probe subprocess.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ragas_compat
from ragas_compat.cases import Suite, load_cases, load_default_suite
from ragas_compat.cases.loader import raw_object
from ragas_compat.compare.audit import Audit, build_audit
from ragas_compat.compare.bless import write_blessed
from ragas_compat.compare.expectations import Expectations, load_expectations
from ragas_compat.compare.reference_book import ReferenceBook
from ragas_compat.errors import HarnessInputError, RagasUnavailable
from ragas_compat.input_limits import MAX_CASES_ENV, STDIN, STDIN_SOURCE, Limits
from ragas_compat.metrics.oracles import oracle_status
from ragas_compat.metrics.registry import all_metrics, configured_specs, metric
from ragas_compat.pin import RagasSource, load_pin
from ragas_compat.report.atomic import write_reports_atomically
from ragas_compat.report.golden import write_golden_files
from ragas_compat.report.html_report import html_chunks
from ragas_compat.report.json_report import json_chunks
from ragas_compat.report.junit_report import junit_chunks
from ragas_compat.report.markdown.document import markdown_chunks
from ragas_compat.resources import CHECKOUT_REPORTS_DIR, DEFAULT_REPORT_DIR, display_path, pinned, pinned_display
from ragas_compat.runner import ProbeRun, StartedProbe

DEFAULT_EXPECTATIONS = pinned("expectations.toml")  # the pin's rules (package data)
DEFAULT_OUT = DEFAULT_REPORT_DIR  # ./ragas-compat-report in the current working directory
COMMITTED_REPORTS = CHECKOUT_REPORTS_DIR  # the repository's golden reports: `ragas-compat run --out reports --golden`
REPORT_FILES = ("report.json", "report.md", "report.html", "junit.xml")


@dataclass(frozen=True)
class RunResult:
    audit: Audit
    probe: ProbeRun


def load_suite(case_files: list[Path]) -> Suite:
    """The bundled suite, or the given case files as one suite (case ids unique across files; ``-``
    is standard input, at most once). Every file is read within ``ragas_compat.input_limits.Limits``, and
    the files together hold at most ``max_cases`` cases."""
    if not case_files:
        return load_default_suite()
    if sum(1 for path in case_files if str(path) == STDIN) > 1:
        raise HarnessInputError(f"{STDIN_SOURCE}: --cases - is given more than once; standard input is read once",
                                field="cases", value=STDIN)
    limits = Limits.current()
    suites = [load_cases(path, limits) for path in case_files]
    if len(suites) == 1:
        return suites[0]
    total = sum(len(suite.cases) for suite in suites)
    if total > limits.max_cases:
        raise HarnessInputError(f"{', '.join(s.source for s in suites)}: {total} cases together; at most "
                                f"{limits.max_cases} are read (raise the limit with {MAX_CASES_ENV}=N)",
                                field="cases", value=total)
    seen: dict[str, str] = {}
    problems = []
    for suite in suites:
        for case in suite.cases:
            if case.id in seen:
                problems.append(f"{suite.source}: case {case.id!r}: $.cases[].id: duplicate of a case in {seen[case.id]}")
            seen.setdefault(case.id, suite.source)
    if problems:
        raise HarnessInputError(problems[0], field="id", problems=problems)
    return Suite("+".join(s.name for s in suites), ", ".join(s.source for s in suites),
                 tuple(case for suite in suites for case in suite.cases))


def host_provenance() -> dict[str, Any]:
    """The provenance that does not depend on the probe (this machine, the pin, the oracle libraries):
    ``run_audit`` computes it while the probe works (``platform.platform()`` and reading the pin take
    tens of milliseconds)."""
    return {"platform": platform.platform(),  # `diff` shows it when two runs differ in OS, libc or machine
            "pin": load_pin().to_provenance(), "oracles": oracle_status()}


def provenance(probe: ProbeRun, source: RagasSource, suite: Suite, expectations: Expectations,
               metrics: Collection[str] | None = None, *, host: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything a reviewer needs to know which Ragas ran, on what, and how (``metrics``: the run
    was limited to these with ``--metric``; recorded live scores of other metrics are unchecked;
    ``host``: ``host_provenance()`` computed before, else now)."""
    output = probe.output
    host = host if host is not None else host_provenance()
    ragas = {**source.to_provenance(), "imported_version": output["ragas"].get("version")}
    python = output.get("python", {})
    return {
        "harness_version": ragas_compat.__version__,
        "python": {"version": python.get("version", platform.python_version()),
                   "implementation": python.get("implementation", platform.python_implementation())},
        "platform": host["platform"],
        "ragas_version": output["ragas"].get("version"),
        "ragas": ragas,
        "pin": host["pin"],
        "suite": {"name": suite.name, "source": suite.source, "cases": len(suite.cases)},
        "expectations": expectations.source,
        **network_provenance(output),
        "oracles": host["oracles"],
        **({"metrics": sorted(metrics)} if metrics else {}),
    }


def network_provenance(output: dict[str, Any]) -> dict[str, Any]:
    """The provenance's ``network`` line and ``network_attempts`` from a probe output."""
    attempts = output.get("network_attempts", [])
    return {"network": (f"telemetry off (RAGAS_DO_NOT_TRACK={output.get('telemetry', {}).get('RAGAS_DO_NOT_TRACK')}); "
                        f"{len(attempts)} connection attempts blocked"),
            "network_attempts": attempts}


def may_score_a_row(suite: Suite, metrics: Collection[str] | None = None) -> bool:
    """Could the probe score any (case, Ragas target) row of ``suite`` (only ``metrics``' targets when
    given)? The probe scores a target only on a case holding every input the target requires, and a
    target requires its metric's ``requires`` (``MetricSpec.probe_targets``): so False, no metric with a
    Ragas target (built in or configured by the case) applies to any case, means the probe would score
    nothing, known before one is started. True promises no row (a class the running Ragas lacks, or a
    built-in target every case replaced, shows only in the probe's output)."""
    for case in suite.cases:
        configured = [spec for config in case.targets for spec in configured_specs(config)]
        for spec in (*all_metrics(), *configured):
            if spec.ragas_targets and (metrics is None or spec.name in metrics) and spec.applies_to(case):
                return True
    return False


def no_row_message(suite: Suite, metrics: Collection[str] | None = None) -> str:
    """Why a suite of which ``may_score_a_row`` is False is refused, before Ragas is run (``run``, the
    pytest plugin)."""
    return (f"no (case, Ragas target) row can be scored for suite {suite.name!r} ({len(suite.cases)} case(s)"
            f"{', metrics ' + ', '.join(metrics) if metrics else ''}): no Ragas class applies to these inputs "
            "(no case holds every input a selected metric with a Ragas target requires), so nothing would be "
            "checked; Ragas was not run")


def targets_of(metrics: Collection[str] | None) -> list[str] | None:
    """The Ragas targets the probe must score for ``metrics`` (None = every target)."""
    if metrics is None:
        return None
    return sorted({str(target) for name in metrics for target in metric(name).ragas_targets})


def run_audit(suite: Suite, expectations: Expectations, source: RagasSource, *, python: str,
              timeout: float = 600.0, metrics: tuple[str, ...] | None = None,
              evaluate: bool = True, workers: int = 1, started: StartedProbe | None = None,
              on_progress: Callable[[int, int], None] | None = None, keep_output: bool = True) -> RunResult:
    """Run the probe on ``suite`` (in ``workers`` processes; ``started``: a probe already importing
    Ragas for this source; ``on_progress(done, total)`` while it scores) and classify every row; with
    ``metrics``, the probe scores only their targets and the audit has only their rows. With
    ``evaluate`` also Ragas's evaluate()/aevaluate() for the dataset-level section. The references
    are computed while the probe runs. Without ``keep_output`` the probe's results are classified as
    they are read, one at a time, and the returned probe output has none. Raises RagasUnavailable
    (exit 3)."""
    references = ReferenceBook()
    with started or StartedProbe(python=python, sys_path_prefix=source.sys_path_prefix, timeout=timeout) as own:
        # the raw objects as one list only while the request is written (a packed suite's: unpacked copies)
        own.submit([raw_object(case) for case in suite.cases], targets=targets_of(metrics),
                   evaluate=True if evaluate else None, workers=workers)
        references.fill(suite, metrics)  # here, while the probe imports Ragas and scores
        host = host_provenance()  # and this (the oracles are imported by now)
        probe = own.result(on_progress, streamed=not keep_output)
        if not probe.ok:
            raise RagasUnavailable(probe.error or "the Ragas probe failed")
        expectations = expectations.at_release_position(source.rules_version)  # a checkout's release position
        audit = build_audit(suite, probe.output, expectations,
                            provenance(probe, source, suite, expectations, metrics, host=host),
                            metrics=metrics, references=references)  # before the probe's folder goes
    if not keep_output:
        probe = dataclasses.replace(probe, output={**probe.output, "results": []})
    return RunResult(audit, probe)


def report_chunks(audit: Audit) -> dict[str, Iterator[str]]:
    """Each report file as the chunks of its text, made as they are written (``write_reports``)."""
    return {"report.json": json_chunks(audit), "report.md": markdown_chunks(audit),
            "report.html": html_chunks(audit), "junit.xml": junit_chunks(audit)}


def render_reports(audit: Audit) -> dict[str, str]:
    """Each report file's text, whole."""
    return {name: "".join(chunks) for name, chunks in report_chunks(audit).items()}


def write_reports(audit: Audit, out: Path, *, golden: bool = False) -> list[Path]:
    """Write the four reports atomically as one set, each streamed to its file (never held whole in
    memory); ``golden``: as plain files under their names instead (the repository's committed reports,
    ``ragas_compat.report.golden``), so that git diffs them line by line."""
    if golden:
        return write_golden_files(out, report_chunks(audit))
    return write_reports_atomically(out, report_chunks(audit), first_apart=True)  # report.json beside the rest


def pin_expectations() -> Expectations:
    """The pin's rules (``pinned/expectations.toml``, shipped as package data)."""
    return load_expectations(DEFAULT_EXPECTATIONS, source=pinned_display("expectations.toml"))


def load_run_expectations(path: Path | None) -> Expectations:
    """The expectations of a run: the pin's rules, or the file at ``path`` applied before them
    (unless the file says ``include_pin_rules = false``)."""
    if path is None:
        return pin_expectations()
    own = load_expectations(path, source=display_path(path))
    return own.layered_over(pin_expectations()) if own.include_pin_rules else own


def bless_suite(suite: Suite, source: RagasSource, out: Path, *, python: str, expectations: Expectations | None = None,
                timeout: float = 600.0) -> RunResult:
    """Run ``suite`` and write its current classifications as an expectations file at ``out``
    (``ragas_compat.compare.bless``): every row and pair named as it is, for the user to review and commit."""
    result = run_audit(suite, expectations or pin_expectations(), source, python=python, timeout=timeout,
                       evaluate=False)
    write_blessed(result.audit, out)
    return result
