"""Drift matrix and its three renderings, on fake probe outputs (no Ragas, no pip)."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from ragas_compat.cases import Suite, load_default_suite
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.matrix.drift import (
    HARNESS_CAUSES,
    Cell,
    ColumnInfo,
    build_matrix,
    causes_between,
    telemetry_drifts,
)
from ragas_compat.tools.matrix.environments import Environment
from ragas_compat.tools.matrix.report import REPORT_FILES, cases_text, render_reports, write_matrix_reports
from ragas_compat.tools.matrix.run import run_matrix

CASE = "cp-worked-example"
EPSILON = 0.8333333332916666  # Ragas's (hits + 1e-10) value on this case


def result(target, metric, value, **extra):
    return {"case_id": CASE, "target": target, "api": "legacy", "metric": metric, "value": value,
            "ragas_class": extra.pop("ragas_class", f"ragas.metrics._x.{target.split(':')[1]}"),
            "fields_read": [], "received": {}, "prompts": extra.pop("prompts", 0), "expected_prompts": 0,
            "warnings": extra.pop("warnings", []), "exported": True,
            "fields_accepted": extra.pop("fields_accepted", ["retrieved_contexts", "reference_contexts"]),
            "fields_dropped": extra.pop("fields_dropped", []), "required_columns": [], **extra}


def missing(target, metric):
    return result(target, metric, {"error": {"type": "TargetUnavailable", "message": f"this Ragas has no {target}"}},
                  ragas_class=None, fields_accepted=[])


OLD = [missing("legacy:IDBasedContextPrecision", "id_context_precision"),
       result("legacy:LLMContextPrecisionWithReference", "context_precision_with_reference", 0.5, prompts=3,
              warnings=[{"category": "DeprecationWarning", "message": "old API"}]),
       result("legacy:NonLLMContextRecall", "context_recall_string_match",
              {"error": {"type": "ValueError", "message": "max() arg is an empty sequence\nmore"}}),
       result("legacy:Faithfulness", "faithfulness", 1.0, fields_dropped=["response"])]
NEW = [result("legacy:IDBasedContextPrecision", "id_context_precision", 2 / 3),
       result("legacy:LLMContextPrecisionWithReference", "context_precision_with_reference", EPSILON, prompts=3),
       result("legacy:NonLLMContextRecall", "context_recall_string_match", 0.5),
       result("legacy:Faithfulness", "faithfulness", 1.0, ragas_class="ragas.metrics._faith.Faithfulness")]


def probe_output(version, results):
    return {"probe_format": 1, "ragas": {"version": version, "import_error": None, "import_warnings": []},
            "network_attempts": [], "results": results}


def fake_probe(outputs):
    def probe(cases, *, python, sys_path_prefix, timeout):
        if python == "broken":
            return ProbeRun(False, "Ragas could not be imported: ModuleNotFoundError: No module named 'PIL'\nTraceback",
                            probe_output(None, []), "", 1.0)
        return ProbeRun(True, None, outputs[python], "", 1.0)
    return probe


@pytest.fixture(scope="module")
def suite() -> Suite:
    full = load_default_suite()
    return Suite(full.name, full.source, (full.case(CASE),))


@pytest.fixture(scope="module")
def matrix(suite):
    envs = [Environment("0.2.15", "release", "0.2.15", "old", status="reused"),
            Environment("0.3.0", "release", "0.3.0", "broken", status="built"),
            Environment("0.3.9", "release", "0.3.9", "new", status="built"),
            Environment("9.9.9", "release", "9.9.9", None, status="unavailable",
                        error="ERROR: No matching distribution found for ragas==9.9.9")]
    columns, _ = run_matrix(envs, suite, probe=fake_probe({"old": probe_output("0.2.15", OLD),
                                                            "new": probe_output("0.3.9", NEW)}))
    return build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": 1})


def row(matrix, target):
    return next(r for r in matrix.rows if r.target == target)


def test_unavailable_columns_keep_the_first_error_line(matrix):
    assert [c.available for c in matrix.columns] == [True, False, True, False]
    assert matrix.columns[1].error == "Ragas could not be imported: ModuleNotFoundError: No module named 'PIL'"
    assert matrix.columns[3].error == "ERROR: No matching distribution found for ragas==9.9.9"
    cell = row(matrix, "legacy:Faithfulness").cells[3]
    assert cell.status == "unavailable" and cell.text == "unavailable"
    assert [c.kind for c in row(matrix, "legacy:Faithfulness").changes[0]] == ["unavailable"]


def test_cells_hold_value_and_classification(matrix):
    cp = row(matrix, "legacy:LLMContextPrecisionWithReference")
    assert (cp.cells[0].value, cp.cells[0].classification) == (0.5, "divergence")
    assert (cp.cells[2].value, cp.cells[2].classification) == (EPSILON, "epsilon")
    assert cp.reference == "5/6"


def compare(matrix, target):
    """Causes between the two available columns (0.2.15 and 0.3.9), skipping the broken one."""
    r = row(matrix, target)
    return {c.kind: c.text for c in causes_between(r.cells[0], r.cells[2], "0.2.15", "0.3.9")}


def test_causes_are_named(matrix):
    assert compare(matrix, "legacy:IDBasedContextPrecision") == {"class_added": "the class first exists in 0.3.9"}
    cp = compare(matrix, "legacy:LLMContextPrecisionWithReference")
    assert set(cp) == {"value_changed", "classification_changed", "warnings_changed"}
    assert cp["classification_changed"] == "divergence -> epsilon" and repr(EPSILON) in cp["value_changed"]
    assert cp["warnings_changed"] == "- DeprecationWarning: old API"  # 0.2.15 warned while scoring, 0.3.9 not
    recall = compare(matrix, "legacy:NonLLMContextRecall")
    assert recall["exception_fixed"] == "0.2.15 raised ValueError: max() arg is an empty sequence"
    faith = compare(matrix, "legacy:Faithfulness")
    assert set(faith) == {"field_dropped", "class_moved"} and "'response'" in faith["field_dropped"]
    reverse = causes_between(row(matrix, "legacy:IDBasedContextPrecision").cells[2],
                             row(matrix, "legacy:IDBasedContextPrecision").cells[0], "0.3.9", "0.2.15")
    assert [c.kind for c in reverse] == ["class_missing"]


def test_identical_cells_do_not_change():
    a = Cell("value", 0.5, classification="identical", prompts=2)
    assert causes_between(a, Cell("value", 0.5, classification="identical", prompts=2), "x", "y") == ()
    assert causes_between(Cell("value", 0.0), Cell("value", -0.0), "x", "y")[0].kind == "value_changed"
    nan = float("nan")
    assert causes_between(Cell("value", nan), Cell("value", nan), "x", "y") == ()


def test_judge_calls_and_warnings_are_causes_whatever_the_outcome():
    # the same exception after fewer judge calls (a malformed reply retried less) is still a change
    before = Cell("error", error_type="OutputParserException", error_message="bad", prompts=3)
    after = Cell("error", error_type="OutputParserException", error_message="bad", prompts=1)
    assert [(c.kind, c.text) for c in causes_between(before, after, "x", "y")] == [
        ("prompts_changed", "judge prompts 3 -> 1")]
    warned = Cell("value", 0.5, warnings=("UserWarning: n=1 only",))
    kinds = {c.kind: c.text for c in causes_between(Cell("value", 0.5), warned, "x", "y")}
    assert kinds == {"warnings_changed": "+ UserWarning: n=1 only"}


def test_a_change_in_blocked_network_attempts_is_a_run_level_drift():
    def column(label, attempts, available=True):
        return ColumnInfo(label, label, "release", "reused", available, None, (), attempts, ())

    drifts = telemetry_drifts((column("a", 0), column("b", 8), column("c", 8), column("d", 0, available=False)))
    assert [(d.before, d.after, d.kind, d.text, d.rows, d.by) for d in drifts] == [
        ("a", "b", "telemetry", "network attempts blocked: 0 -> 8", (), "ragas")]
    assert cases_text([], 20) == "the whole run"


def test_drift_summary_names_the_cases(matrix):
    kinds = {(d.before, d.after, d.kind) for d in matrix.drifts}
    assert ("0.2.15", "0.3.0", "unavailable") in kinds and ("0.3.0", "0.3.9", "unavailable") in kinds
    assert all(d.rows == ((CASE, d.rows[0][1]),) or all(c == CASE for c, _ in d.rows) for d in matrix.drifts)


def test_api_table_per_version(matrix):
    old, broken, new, _ = matrix.api["legacy:IDBasedContextPrecision"]
    assert old.missing == "this Ragas has no legacy:IDBasedContextPrecision" and broken is None
    assert new.ragas_class.endswith("IDBasedContextPrecision") and new.missing is None
    cp_old = matrix.api["legacy:LLMContextPrecisionWithReference"][0]
    assert cp_old.warnings == ("DeprecationWarning: old API",)
    assert matrix.api["legacy:Faithfulness"][0].fields_dropped == ("response",)


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_reports_are_deterministic_self_contained_and_portable(matrix, tmp_path):
    first, second = render_reports(matrix), render_reports(matrix)
    assert first == second and set(first) == set(REPORT_FILES)
    data = json.loads(first["matrix.json"])
    cell = next(r for r in data["rows"] if r["target"] == "legacy:LLMContextPrecisionWithReference")["cells"]["0.3.9"]
    assert cell["value"] == EPSILON and cell["classification"] == "epsilon" and cell["changed"]
    assert data["columns"][3]["error"].startswith("ERROR: No matching distribution")
    html = first["matrix.html"]
    parser = _Collector()
    parser.feed(html)
    tags = {tag for tag, _ in parser.tags}
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert "http://" not in html and "https://" not in html and "<style>" in html
    assert sum(1 for tag, attrs in parser.tags if tag == "td" and "changed" in attrs.get("class", "")) >= 4
    md = first["matrix.md"]
    assert "### 0.2.15 → 0.3.0" in md and f"| {CASE} |" in md and "**0.8333333332916666 epsilon** Δ" in md
    for text in first.values():
        assert str(tmp_path) not in text and "/root" not in text and "/home" not in text
    written = write_matrix_reports(matrix, tmp_path / "out")
    assert [p.read_text() for p in written] == [first[p.name] for p in written]


def test_cli_writes_a_matrix_of_unavailable_columns_without_crashing(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import ragas_compat.cli.matrix as cli_matrix
    from ragas_compat.cli.app import app

    def fake_environments(entries, **kwargs):
        return [Environment(e.text, "release", e.exact_version, None, status="unavailable",
                            error=f"ERROR: No matching distribution found for ragas=={e.exact_version}") for e in entries]

    monkeypatch.setattr(cli_matrix, "ensure_environments", fake_environments)
    result = CliRunner().invoke(app, ["matrix", "--versions", "9.9.8,9.9.9", "--out", str(tmp_path / "m"),
                                      "--cache-dir", str(tmp_path / "envs")])
    assert result.exit_code == 3, result.output  # no column scored: Ragas could not be run (the reports say why)
    assert "no column was scored" in " ".join(result.stderr.split())
    data = json.loads((tmp_path / "m" / "matrix.json").read_text())
    assert [c["error"] for c in data["columns"]] == [f"ERROR: No matching distribution found for ragas=={v}"
                                                      for v in ("9.9.8", "9.9.9")]
    assert sorted(p.name for p in (tmp_path / "m").iterdir() if not p.name.startswith(".")) == sorted(REPORT_FILES)
    bad = CliRunner().invoke(app, ["matrix", "--versions", "latest", "--out", str(tmp_path / "m2")])
    assert bad.exit_code == 2 and "neither a Ragas release" in bad.output


def test_a_class_the_judge_cannot_drive_is_not_scripted_not_missing():
    from ragas_compat.tools.matrix.drift import NOT_SCRIPTED_ERROR, Cell, causes_between

    not_scripted = Cell(status="error", error_type=NOT_SCRIPTED_ERROR,
                        error_message="ContextPrecision has no prompt interface the scripted judge knows")
    assert not_scripted.text == "harness: not scripted" and not_scripted.harness_limit == "not_scripted"
    causes = causes_between(not_scripted, Cell(status="value", value=0.5, classification="identical"),
                            "0.3.9", "0.4.3")
    assert [c.kind for c in causes] == ["not_scripted"] and "0.3.9" in causes[0].text


def test_an_uninstalled_optional_dependency_is_the_harness_s_limit():
    # the matrix environments install Ragas and the version rules, not Ragas's extras
    message = "sacrebleu is required for bleu score. Please install it using `pip install sacrebleu`"
    missing = Cell(status="error", error_type="ImportError", error_message=message)
    assert missing.text == "harness: dependency not installed" and missing.harness_limit == "dependency_missing"
    causes = causes_between(Cell(status="value", value=0.4, classification="identical"), missing, "0.2.5", "0.2.6")
    assert [c.kind for c in causes] == ["dependency_missing"]
    assert "0.2.6's matrix environment" in causes[0].text and "not a Ragas change" in causes[0].text
    assert causes[0].kind in HARNESS_CAUSES
    # a Ragas exception of another type stays Ragas's
    raised = Cell(status="error", error_type="ValueError", error_message="bad")
    assert raised.harness_limit is None


def test_a_dependency_s_data_the_environment_does_not_hold_is_the_harness_s_limit():
    # nltk's tokenizer models come from its own downloader (no network here), not from the package index
    message = ("\n**********\n  Resource 'punkt_tab' not found.\n  Please use the NLTK Downloader to obtain the "
               "resource:\n")
    lookup = Cell(status="error", error_type="LookupError", error_message=message)
    assert lookup.harness_limit == "dependency_missing" and lookup.text == "harness: dependency not installed"
    from ragas_compat.tools.matrix.drift import message_line

    assert message_line(message) == "Resource 'punkt_tab' not found."
    assert message_line("\n\n") == "" and message_line("KeyError: 'x'\nmore") == "KeyError: 'x'"
    # any other LookupError (a KeyError included) is Ragas's
    assert Cell(status="error", error_type="LookupError", error_message="no such key").harness_limit is None
    assert Cell(status="error", error_type="KeyError", error_message="'reference'").harness_limit is None


def test_machine_paths_in_what_ragas_said_are_replaced(suite, tmp_path):
    env_dir = tmp_path / "envs" / "0.2.3"
    site = f"{env_dir}/lib/python3.11/site-packages/ragas/embeddings/base.py"
    said = [result("legacy:Faithfulness", "faithfulness",
                   {"error": {"type": "ImportError", "message": f"cannot import name 'X' from 'ragas' ({site})"}})]

    def probe(cases, *, python, sys_path_prefix, timeout):
        if python == "broken":
            return ProbeRun(False, f"Ragas could not be imported: ImportError: {site}", probe_output(None, []), "", 1.0)
        return ProbeRun(True, None, probe_output("0.2.3", said), "", 1.0)

    envs = [Environment("0.2.3", "release", "0.2.3", "ok", status="built", path=env_dir),
            Environment("0.2.4", "release", "0.2.4", "broken", status="built", path=env_dir)]
    columns, _ = run_matrix(envs, suite, probe=probe)
    reports = render_reports(build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": 1}))
    for text in reports.values():
        assert str(tmp_path) not in text
    assert "<env 0.2.3>/lib/python3.11/site-packages/ragas/embeddings/base.py" in reports["matrix.json"]
    assert columns[1].error == "Ragas could not be imported: ImportError: <env 0.2.4>/lib/python3.11/" \
                               "site-packages/ragas/embeddings/base.py"


def test_the_home_folder_in_what_a_library_said_is_replaced(suite, tmp_path, monkeypatch):
    """nltk's LookupError lists its data search path, the home folder's nltk_data first."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    env_dir = tmp_path / "home" / ".cache" / "envs" / "0.2.0"
    said = [result("legacy:Faithfulness", "faithfulness", {"error": {"type": "LookupError", "message": (
        f"Resource 'punkt_tab' not found.\n  Searched in:\n    - '{tmp_path}/home/nltk_data'\n"
        f"    - '{env_dir}/nltk_data'")}})]

    def probe(cases, *, python, sys_path_prefix, timeout):
        return ProbeRun(True, None, probe_output("0.2.0", said), "", 1.0)

    columns, _ = run_matrix([Environment("0.2.0", "release", "0.2.0", "ok", status="built", path=env_dir)], suite,
                            probe=probe)
    reports = render_reports(build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": 1}))
    assert str(tmp_path) not in reports["matrix.json"]
    assert "'~/nltk_data'" in reports["matrix.json"] and "'<env 0.2.0>/nltk_data'" in reports["matrix.json"]
