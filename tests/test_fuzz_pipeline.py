"""One classification pipeline: fuzz explains its rows with the same rules and case entries as run
(the pin's expectations through compare.expectations), exits 1 only on what run would call drift, and
shrinks only unexplained findings."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from ragas_compat.cli.fuzz import register
from ragas_compat.runner import ProbeRun
from ragas_compat.tools.fuzz import runner as fuzz_runner

TARGET = "legacy:NonLLMContextRecall"
METRIC = "context_recall_string_match"


def _case(case_id: str, retrieved: list[str], reference: list[str]) -> dict:
    return {"id": case_id, "category": "edge", "user_input": f"q {case_id}", "reference": "r", "response": "a",
            "retrieved_contexts": retrieved, "reference_contexts": reference}


# Ragas's answers: a near-duplicate context counts as a match (its fuzzy similarity is >= 0.5), where
# the reference's exact match does not (pin rule string-similarity-not-identity, a divergence); nothing
# retrieved raises ValueError (pin rule string-recall-empty-retrieval-error); an identical context is 1.0.
EXPLAINED_CASES = [
    _case("near", ["abcdefghij"], ["abcdefghik"]),
    _case("empty", [], ["xyzxyz"]),
    _case("same", ["aaaa"], ["aaaa"]),
]
# Ragas 0.123 for a case whose exact value is 1/2: nothing explains it.
ODD = _case("odd", ["bbbb", "cccc", "eeee"], ["bbbb", "dddd"])


def _value(case: dict) -> object:
    if case["id"].startswith("odd"):
        return 0.123
    if case["id"].startswith("empty"):
        return {"error": {"type": "ValueError", "message": "max() arg is an empty sequence"}}
    return 1.0


def _probe(calls: list[list[str]]):
    def probe(cases, *, python, sys_path_prefix, targets, timeout):
        calls.append([case["id"] for case in cases])
        results = [{"case_id": case["id"], "target": TARGET, "metric": METRIC, "ragas_class": "NonLLMContextRecall",
                    "fields_read": ["retrieved_contexts", "reference_contexts"], "received": None,
                    "value": _value(case), "warnings": []} for case in cases]
        return ProbeRun(True, None, {"probe_format": 1, "python": {}, "ragas": {"version": "0.4.3"},
                                     "network_attempts": [], "results": results}, "", 0.0)
    return probe


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("noop")(lambda: None)
    register(app)
    return app


def _fuzz(tmp_path, monkeypatch, cases: list[dict]) -> tuple[int, dict, list[list[str]], str]:
    calls: list[list[str]] = []
    monkeypatch.setattr(fuzz_runner, "run_probe", _probe(calls))
    monkeypatch.setattr(fuzz_runner, "generate_cases", lambda n, seed, metrics: [dict(c) for c in cases])
    result = CliRunner().invoke(_app(), ["fuzz", "--n", str(len(cases)), "--metric", METRIC, "--out", str(tmp_path)])
    data = json.loads((tmp_path / "fuzz.json").read_text(encoding="utf-8"))
    return result.exit_code, data, calls, result.output


def test_a_fuzz_run_whose_only_differences_are_rule_explained_exits_0(tmp_path, monkeypatch):
    code, data, calls, output = _fuzz(tmp_path, monkeypatch, EXPLAINED_CASES)
    assert code == 0, output
    by = data["by_classification"]
    assert (by["divergence"], by["error"], by["identical"]) == (1, 1, 1)  # the differences are there ...
    assert data["explained_by"] == {"rule string-similarity-not-identity": 1, "rule string-recall-empty-retrieval-error": 1}
    assert data["verdict"]["status"] == "expected" and data["drift"] is False and data["findings"] == []
    assert data["smallest_examples"] == {}
    assert len(calls) == 1  # ... and nothing was sent to shrink
    assert "expected" in output and "pinned/expectations.toml" in data["expectations"]


def test_an_unexplained_difference_exits_1_and_only_it_is_shrunk(tmp_path, monkeypatch):
    code, data, calls, output = _fuzz(tmp_path, monkeypatch, [*EXPLAINED_CASES, ODD])
    assert code == 1, output
    assert data["verdict"]["status"] == "1 unexplained" and data["drift"] is True
    assert [(f["kind"], f["case_id"]) for f in data["findings"]] == [("divergence", "odd")]
    assert list(data["smallest_examples"]) == ["divergence"]
    example = data["smallest_examples"]["divergence"]
    assert example["case_id"] == "odd" and list(example["by_target"]) == [TARGET]
    assert example["shrunk"]["status"] == "1-minimal"
    shrink_rounds = calls[1:]
    assert shrink_rounds, "the unexplained finding was not shrunk"
    assert all(case_id.startswith("odd~shrink") for batch in shrink_rounds for case_id in batch), shrink_rounds


def test_a_shrink_candidate_a_rule_explains_does_not_keep_the_finding():
    """The shrinker keeps a candidate only while the row is still unexplained: a candidate where Ragas
    says the same but a rule now explains it (a near-duplicate context) is not the finding."""
    from ragas_compat.tools.fuzz.delta_debug import Finding, shrink_cases

    calls: list[list[str]] = []
    start = _case("near-odd", ["abcdefghij", "zzzz"], ["abcdefghik"])

    def probe(cases, **kwargs):  # Ragas: a near-duplicate counts as a match; 1.0 whatever the case
        calls.append([c["id"] for c in cases])
        results = [{"case_id": c["id"], "target": TARGET, "metric": METRIC, "ragas_class": "NonLLMContextRecall",
                    "fields_read": ["retrieved_contexts", "reference_contexts"], "received": None,
                    "value": 1.0, "warnings": []} for c in cases]
        return ProbeRun(True, None, {"probe_format": 1, "python": {}, "ragas": {"version": "0.4.3"},
                                     "network_attempts": [], "results": results}, "", 0.0)

    # under the pin's rules the start is explained (near-duplicate): not reproduced as a finding
    [shrunk] = shrink_cases([(start, Finding(TARGET, METRIC, "divergence"))], probe=probe)
    assert shrunk.status == "not reproduced"
    # with no rules it is a finding, and shrinks to the near-duplicate pair
    from ragas_compat.compare.expectations import Expectations

    [bare] = shrink_cases([(start, Finding(TARGET, METRIC, "divergence"))], probe=probe,
                          expectations=Expectations("none", ()))
    assert bare.minimal and bare.row is not None
