"""Every CLI table reads at 80 columns in a pipe: no "…" (wrapping, not truncating), no empty or
zero-width column, no line wider than 80; ``--format md|json`` and ``--quiet``; one metric naming scheme
(other spellings accepted with a hint); explain covers every target of the metric."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from ragas_compat.cli.app import app
from ragas_compat.cli.bench import bench_table, scaling_table
from ragas_compat.cli.output import pruned
from ragas_compat.metrics.names import resolve, short_label
from ragas_compat.metrics.registry import metric
from ragas_compat.tools.bench import BenchRow
from ragas_compat.tools.explain import explain_metrics

CLI = [sys.executable, "-m", "ragas_compat"]
NARROW = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
NARROW.pop("FORCE_COLOR", None)


def piped(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The CLI with stdout a pipe (no terminal: rich uses 80 columns), as a user's `| less` sees it."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=NARROW, timeout=timeout)


def assert_narrow(text: str) -> None:
    assert "…" not in text, text
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, too_wide


def check_table(table: Table) -> None:
    """Rendered at 80 columns: no "…", every column has a header and a cell with text, none is 0 wide."""
    console = Console(width=80, file=open(os.devnull, "w"), force_terminal=False, color_system=None)
    widths = table._calculate_column_widths(console, console.options)
    assert all(w > 0 for w in widths), widths
    for column in table.columns:
        assert str(column.header).strip() or not table.show_header
        assert any(str(cell).strip() for cell in column._cells), f"empty column {column.header!r}"
    with console.capture() as capture:
        console.print(table)
    assert_narrow(capture.get())


@pytest.fixture()
def tables(monkeypatch):
    """Every rich Table a command prints."""
    seen: list[Table] = []
    original = Console.print

    def record(self, *objects, **kwargs):
        seen.extend(o for o in objects if isinstance(o, Table))
        return original(self, *objects, **kwargs)

    monkeypatch.setattr(Console, "print", record)
    return seen


def test_short_labels_are_words_that_wrap():
    assert short_label("context_precision_with_reference") == "ctx prec w/ ref"
    assert short_label("id_context_recall") == "ID ctx recall"
    assert all(len(word) <= 14 for name in ("context_precision_string_match", "faithfulness")
               for word in short_label(name).split())


def test_one_naming_scheme_with_hints_for_other_spellings():
    assert resolve("context_precision_with_reference") == (metric("context_precision_with_reference"), None)
    spec, hint = resolve("context-precision")  # explain's old command name
    assert spec.name == "context_precision_with_reference" and "context_precision_with_reference" in hint
    spec, hint = resolve("id-context-recall")
    assert spec.name == "id_context_recall" and hint
    with pytest.raises(Exception, match="did you mean 'context_precision_with_reference'"):
        resolve("context-precisoin")


EXPLAINED_EVERY_TARGET = ("context_precision_with_reference", "context_precision_without_reference",
                          "context_precision_string_match", "context_recall", "context_recall_string_match",
                          "id_context_precision", "id_context_recall", "faithfulness", "judge_audit")


def test_explain_covers_every_target_of_the_metric():
    by_name = {m.registry_name: m for m in explain_metrics()}
    for name in EXPLAINED_EVERY_TARGET:
        assert set(by_name[name].targets) == set(metric(name).ragas_targets), name
    assert any(t.startswith("collections:") for t in by_name["faithfulness"].targets)


@pytest.fixture
def bundled_audit_of_the_session(monkeypatch, default_audit_run):
    """``run``'s audit of the bundled suite with the pin's expectations is the session's
    (``default_audit_run``, tests/conftest.py: the same suite, expectations and Ragas, so the same rows):
    what ``run`` prints and writes from it is this test's subject, not the probe run. Any other audit runs
    as usual. Returns the calls made: (suite name, reused)."""
    from ragas_compat.cli import run as cli_run

    original, calls = cli_run.run_audit, []
    shared = default_audit_run.result

    def run_audit(suite, expectations, source, **kwargs):
        bound = shared.audit.expectations
        reuse = (suite == shared.audit.suite and kwargs.get("metrics") is None and source.kind == "installed"
                 and kwargs.get("python") == sys.executable
                 and dataclasses.replace(expectations, ragas_version=bound.ragas_version,
                                         release_position=bound.release_position) == bound)
        calls.append((suite.name, reuse))
        return shared if reuse else original(suite, expectations, source, **kwargs)

    monkeypatch.setattr(cli_run, "run_audit", run_audit)
    return calls


@pytest.mark.slow
def test_run_at_80_columns_in_a_pipe(tmp_path: Path, tables, bundled_audit_of_the_session):
    result = CliRunner().invoke(app, ["run", "--out", str(tmp_path / "r")], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Verdict: expected:")
    assert "expected means every difference is a known" in " ".join(result.output.split())  # the note, not --quiet
    assert "evaluate()'s context_precision_with_reference mean" in " ".join(result.output.split())
    assert "more findings (report.md lists every one" in " ".join(result.output.split())
    assert_narrow(result.output)
    assert tables
    for table in list(tables):
        check_table(table)
    assert (tmp_path / "r" / "report.html").exists()
    assert bundled_audit_of_the_session == [("default", True)]


@pytest.fixture
def one_audit_per_input(monkeypatch):
    """Within the test, ``run``'s audit is made once per input (suite, expectations, Ragas, metrics) and
    reused by command lines that differ only in what they print (``--format``): the printing is this
    test's subject, not the probe run. Returns the audits made, one (suite name, metrics) per probe run."""
    from ragas_compat.cli import run as cli_run

    original, made, audits = cli_run.run_audit, [], []

    def run_audit(suite, expectations, source, **kwargs):
        key = (suite, expectations, source, kwargs.get("metrics"), kwargs.get("python"))
        for seen, result in audits:
            if seen == key:
                return result
        made.append((suite.name, kwargs.get("metrics")))
        audits.append((key, original(suite, expectations, source, **kwargs)))
        return audits[-1][1]

    monkeypatch.setattr(cli_run, "run_audit", run_audit)
    return made


@pytest.mark.slow
def test_run_piped_quiet_and_formats(tmp_path: Path, one_audit_per_input):
    # --quiet is the one-line result: the verdict line (wrapped at 80 columns at most once), without the notes
    # under it (what the verdict means, a recorded suite's replay accounting), which the other formats and
    # every report show
    # (another spelling of the metric: its hint goes to stderr, --quiet or not, and leaves stdout one line)
    quiet = piped("run", "--quiet", "--out", str(tmp_path / "q"), "--metric", "id-context-precision")
    assert quiet.returncode == 0, quiet.stderr
    assert "hint:" in quiet.stderr
    assert quiet.stdout.count("\n") == 1 or len(quiet.stdout.splitlines()) <= 2, quiet.stdout
    assert quiet.stdout.startswith("Verdict: expected:")
    assert " ".join(quiet.stdout.split()).endswith("unexplained errors."), quiet.stdout
    # the two formats in process (not a terminal either), from one audit of the same input
    runner = CliRunner()
    json_run = runner.invoke(app, ["run", "--format", "json", "--out", str(tmp_path / "j"),
                                   "--metric", "id-context-precision"], env={"COLUMNS": "80"})
    assert json_run.exit_code == 0, json_run.output
    doc = json.loads(json_run.stdout)
    assert doc["verdict"]["status"] == "expected" and doc["findings"]
    assert set(doc["by_metric"]) == {"id_context_precision"}
    md = runner.invoke(app, ["run", "--format", "md", "--out", str(tmp_path / "m"), "--metric", "id_context_precision"],
                       env={"COLUMNS": "80"})
    assert md.exit_code == 0, md.output
    assert md.stdout.startswith("**Verdict: expected:") and "| metric | rows | classifications |" in md.stdout
    assert "expected means every difference is a known, named Ragas behaviour" in md.stdout
    assert [metrics for _, metrics in one_audit_per_input] == [("id_context_precision",)]  # one probe run for both
    assert (tmp_path / "q" / "report.md").read_text(encoding="utf-8").count("expected means every difference") == 1


@pytest.fixture
def one_probe_per_input(monkeypatch):
    """Within the test, explain's probe run (``runner.run_probe``) is made once per input (cases, targets) and
    reused by command lines that differ only in what they print (``--format``, ``--quiet``). Returns the
    inputs probed."""
    import ragas_compat.runner as probe_runner

    original, made, runs = probe_runner.run_probe, [], {}

    def run_probe(cases, **kwargs):
        key = json.dumps([cases, sorted(kwargs.items())], sort_keys=True, default=repr)
        if key not in runs:
            made.append((cases[0]["id"], tuple(kwargs.get("targets") or ())))
            runs[key] = original(cases, **kwargs)
        return runs[key]

    monkeypatch.setattr(probe_runner, "run_probe", run_probe)
    return made


@pytest.mark.slow
def test_explain_at_80_columns_in_a_pipe(tables, one_probe_per_input):
    runner = CliRunner()
    for args in (["context_precision_with_reference", "1,0,1", "--corpus-relevant", "4"],
                 ["id_context_recall", "--retrieved", '[1, "1", 1.0]', "--reference", '["1"]'],
                 ["context_precision_string_match", "--retrieved", '["a", "b"]', "--reference", '["b"]']):
        result = runner.invoke(app, ["explain", *args], env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        assert_narrow(result.output)
    assert len(tables) >= 6
    for table in list(tables):
        check_table(table)
    # --format md and --quiet in process too (not a terminal either), from one probe run of the same input
    md = runner.invoke(app, ["explain", "faithfulness", "1,0", "--format", "md"], env={"COLUMNS": "80"})
    assert md.exit_code == 0, md.output
    assert "| collections:Faithfulness |" in md.stdout and "| legacy:Faithfulness |" in md.stdout
    quiet = runner.invoke(app, ["explain", "faithfulness", "1,0", "--quiet"], env={"COLUMNS": "80"})
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout.splitlines() == ["legacy:Faithfulness 0.5 identical", "collections:Faithfulness 0.5 identical"]
    assert len(one_probe_per_input) == 4  # the three metrics above and faithfulness once for both formats


@pytest.mark.slow
def test_fuzz_at_80_columns_in_a_pipe(tmp_path: Path, tables):
    result = CliRunner().invoke(app, ["fuzz", "--n", "6", "--seed", "1", "--workers", "1", "--out", str(tmp_path),
                                      "--metric", "context_precision_with_reference",
                                      "--metric", "id-context-precision"], env={"COLUMNS": "80"})
    assert result.exit_code in (0, 1), result.output
    assert_narrow(result.output.replace(str(tmp_path), "OUT"))
    assert tables
    for table in list(tables):
        check_table(table)
    as_json = CliRunner().invoke(app, ["fuzz", "--n", "4", "--workers", "1", "--out", str(tmp_path / "j"), "--format",
                                       "json", "--metric", "faithfulness"], env={"COLUMNS": "80"})
    assert as_json.exit_code in (0, 1), as_json.output
    doc = json.loads(as_json.stdout)
    assert doc["result"].startswith("fuzz: seed 0, 4 cases")


def test_bench_tables_at_80_columns():
    rows = [
        BenchRow("run", "ragas-compat run vs import ragas.metrics", samples=[9.5, 9.9, 10.4],
                 baseline=[8.0, 8.1, 8.3], ratios=[1.18, 1.22, 1.25], target=1.3),
        BenchRow("probe", "probe per scored context vs stub loop", unit="ms", samples=[0.8, 0.9],
                 baseline=[0.8, 0.85], ratios=[1.0, 1.06], target=1.1),
        BenchRow("scaling-ragas", "scaling: Ragas legacy context AP", samples=[0.01],
                 points=[{"k": 10, "median": 1e-5}, {"k": 100, "median": 1e-3}, {"k": 1000, "median": 0.1},
                         {"k": 10000, "median": 10.0}], exponent=2.0, tail_exponent=2.0,
                 extra={"largest_k": 10000}),
        BenchRow("matrix", "warm matrix vs single-version runs", reason="no matrix environments are built"),
    ]
    check_table(pruned(bench_table(rows, quick=True)))
    scaling = scaling_table(rows)
    assert scaling is not None
    check_table(pruned(scaling))


def test_pin_show_at_80_columns(tables):
    result = CliRunner().invoke(app, ["pin", "show"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert_narrow(result.output)
    for table in list(tables):
        check_table(table)


def test_version_is_the_one_in_the_report():
    import ragas_compat

    out = piped("--version").stdout.strip()
    assert out == f"ragas-compat {ragas_compat.__version__}"
    from importlib.metadata import version

    assert version("ragas-compat") == ragas_compat.__version__
