"""FaithfulnesswithHHEM (issue 36): Ragas's own class, its HHEM classifier replaced by the case's frozen scores.

The stub (probe ``stubs/hhem_classifier.py``) stands for the float32 tensor HHEM's ``predict`` returns, rounded
half to even as ``torch.round``; the reference (``metrics/faithfulness_hhem.py``) computes the same rounding in
exact arithmetic; the loader refuses scores that do not match the statements.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import types
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.faithfulness_hhem import KEY, float32_fraction, supported
from ragas_compat.metrics.registry import metric
from ragas_compat.probe.stubs import hhem_classifier as stub

PREMISE_CONTEXTS = ["Context one.", "Context two."]
PREMISE = "\n".join(PREMISE_CONTEXTS)


def _raw(scores: dict, statements: list[str] | None = None, **extra) -> dict:
    statements = list(scores) if statements is None else statements
    return {"id": "h", "category": "edge", "user_input": "Question?", "reference": "Ref.", "response": "Answer.",
            "retrieved_contexts": PREMISE_CONTEXTS,
            "verdicts": {"faithfulness": [{"statement": s, "verdict": 1} for s in statements]},
            "hhem_scores": scores, **extra}


def _case(scores: dict, statements: list[str] | None = None):
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [_raw(scores, statements)]}, source="t").cases[0]


# --------------------------------------------------------------------------- the stub

def _classifier(scores: dict, record: dict | None = None) -> stub.FrozenHHEMClassifier:
    return stub.FrozenHHEMClassifier(scores, PREMISE, {} if record is None else record)


def _predicted(scores: dict) -> list[float]:
    pairs = [(PREMISE, s) for s in scores]
    return _classifier(scores).predict(pairs).cpu().detach().round().tolist()


def test_the_stub_rounds_half_to_even_like_torch_round_not_half_up():
    # half-up would give 1.0, 3.0 and 1.0 here
    scores = {"a": 0.5, "b": 2.5, "c": 0.5000000298023224, "d": 1.5, "e": 0.50000003, "f": 0.49999997}
    assert _predicted(scores) == [0.0, 2.0, 0.0, 2.0, 1.0, 0.0]
    assert all(type(v) is float for v in _predicted(scores))


def test_the_stub_rounds_to_float32_before_rounding():
    # 0.50000001 is above 0.5 as a double, but its float32 is 0.5: torch.round gives 0
    assert _predicted({"a": 0.50000001}) == [0.0]
    unrounded = _classifier({"a": 0.1}).predict([(PREMISE, "a")]).cpu().detach().tolist()
    assert unrounded == [0.10000000149011612]  # float32(0.1), as a float32 tensor's tolist() gives it


def test_an_unknown_statement_or_premise_is_the_harness_s_error():
    classifier = _classifier({"known": 0.9})
    with pytest.raises(stub.HHEMScoreMissing, match="no hhem_scores entry for statement 'unknown'"):
        classifier.predict([(PREMISE, "known"), (PREMISE, "unknown")])
    with pytest.raises(stub.HHEMScoreMissing, match="premise"):
        classifier.predict([("another premise", "known")])
    with pytest.raises(stub.TensorNotModelled):
        list(classifier.predict([(PREMISE, "known")]))


def test_the_stub_records_what_it_was_asked_and_leaves_no_module_behind():
    assert "transformers" not in sys.modules
    record: dict = {}
    with stub.provided({"hhem_scores": {"s": 0.7}, "retrieved_contexts": PREMISE_CONTEXTS}, "some.module", record):
        from transformers import AutoModelForSequenceClassification

        model = AutoModelForSequenceClassification.from_pretrained("vectara/x", trust_remote_code=True)
        model.to("cpu")
    assert "transformers" not in sys.modules
    assert model.predict([(PREMISE, "s")]).round().tolist() == [1.0]
    assert record == {"transformers": record["transformers"], "model": "vectara/x", "args": [],
                      "kwargs": {"trust_remote_code": "True"}, "devices": ["cpu"], "batches": [1]}
    assert record["transformers"].startswith("not installed")


def test_an_installed_transformers_is_never_shadowed(monkeypatch):
    real = types.ModuleType("transformers")
    real.AutoModelForSequenceClassification = "the real one"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "transformers", real)
    importer = types.ModuleType("ragas_like_module")
    bystander = types.ModuleType("other_module")
    code = "def load():\n    from transformers import AutoModelForSequenceClassification\n    return AutoModelForSequenceClassification\n"
    exec(code, importer.__dict__)
    exec(code, bystander.__dict__)
    record: dict = {}
    with stub.provided({"hhem_scores": {}, "retrieved_contexts": []}, "ragas_like_module", record):
        assert sys.modules["transformers"] is real
        assert bystander.load() == "the real one"   # any other importer gets the installed module
        assert isinstance(importer.load(), stub._AutoModel)  # the class's module gets the stub
    assert importer.load() == "the real one" and sys.modules["transformers"] is real
    assert record["transformers"].startswith("installed: not shadowed")


# --------------------------------------------------------------------------- Ragas's class through the stub

def _score_in_process(raw: dict) -> dict:
    from ragas_compat.metrics.registry import metric as spec_of
    from ragas_compat.probe.scoring import run_target
    from ragas_compat.probe.targets import Target

    pytest.importorskip("ragas.metrics._faithfulness")
    target = Target.from_spec(spec_of(KEY).probe_targets()[0])
    return asyncio.run(run_target(target, raw))


def test_ragas_s_own_class_runs_through_the_stub():
    scores = {f"statement {i}": s for i, s in enumerate([0.5, 0.9, 0.2, 0.50000003] * 3)}  # 12: batches 10 + 2
    result = _score_in_process(_raw(scores))
    assert result["ragas_class"] == "ragas.metrics._faithfulness.FaithfulnesswithHHEM"
    assert result["value"] == 6 / 12
    assert result["prompts"] == 1  # the statement generation; no NLI prompt
    assert result["classifier"]["model"] == "vectara/hallucination_evaluation_model"
    assert result["classifier"]["kwargs"] == {"trust_remote_code": "True"}
    assert result["classifier"]["devices"] == ["cpu"] and result["classifier"]["batches"] == [10, 2]
    assert "transformers" not in sys.modules


def test_zero_statements_is_nan_without_calling_the_classifier():
    result = _score_in_process(_raw({}))
    assert result["value"] == "NaN" and "batches" not in result["classifier"]


def test_a_statement_without_a_frozen_score_is_the_harness_s_error_not_ragas_s():
    raw = _raw({"known": 0.9}, ["known", "not scored"])  # bypasses the loader, which refuses it
    value = _score_in_process(raw)["value"]
    assert value["error"]["type"] == "HHEMScoreMissing" and value["error"]["origin"] == "harness"


def test_without_the_stub_the_class_cannot_be_built_here():
    ragas_faithfulness = pytest.importorskip("ragas.metrics._faithfulness")
    if stub.transformers_installed():
        pytest.skip("a transformers is installed here")
    with pytest.raises(ImportError, match="transformers must be installed"):
        ragas_faithfulness.FaithfulnesswithHHEM()


def test_it_is_not_an_evaluate_metric():
    from bundled_probe import registry_targets

    from ragas_compat.probe.evaluate import metric_sets

    names = {t.name for _, targets in metric_sets(registry_targets()) for t in targets}
    assert "legacy:Faithfulness" in names and "legacy:FaithfulnesswithHHEM" not in names


@pytest.mark.slow
def test_bundled_cases_through_the_real_probe():
    from bundled_probe import bundled_values

    from ragas_compat.runner import run_probe

    values = bundled_values(lambda case_id: case_id.startswith("hhem-"), ["legacy:FaithfulnesswithHHEM"])
    target = "legacy:FaithfulnesswithHHEM"
    assert values[("hhem-threshold-half", target)] == 1 / 3
    assert values[("hhem-float32-threshold", target)] == 1 / 4
    assert values[("hhem-three-batches", target)] == 14 / 23
    assert math.isnan(values[("hhem-no-statements", target)])
    run = run_probe([c.raw for c in load_default_suite().cases if c.id == "hhem-three-batches"], targets=[target])
    (result,) = run.output["results"]
    assert result["classifier"]["batches"] == [10, 10, 3]
    assert result["classifier"]["transformers"].startswith("not installed")


# --------------------------------------------------------------------------- the reference

@pytest.mark.parametrize(("score", "label"), [
    (0.5, 0), (0.50000001, 0), (0.500000029, 0), (0.5000000298023224, 0), (0.50000003, 1), (0.5000001, 1),
    (0.49999997, 0), (0.0, 0), (1.0, 1), (0, 0), (1, 1), (0.75, 1), (0.25, 0)])
def test_a_score_counts_when_its_float32_rounds_half_to_even_to_1(score, label):
    assert supported(score) == label
    stubbed = _predicted({"s": score})
    assert stubbed == [float(label)]  # the stub and the reference agree, computed apart


def test_float32_is_exact():
    assert float32_fraction(0.1) == Fraction(13421773, 134217728)
    assert float32_fraction(0.5000000298023224) == Fraction(1, 2)


def test_the_reference_is_the_exact_share_of_supported_statements():
    outcome = metric(KEY).outcome(_case({"a": 0.9, "b": 0.5, "c": 0.1}))
    assert outcome.value == Fraction(1, 3) and outcome.details["scores_at_threshold"] == 1
    assert outcome.details["labels"] == (1, 0, 0) and outcome.details["batches"] == 1


def test_the_verdict_labels_are_not_read():
    raw = _raw({"a": 0.9})
    raw["verdicts"]["faithfulness"][0]["verdict"] = 2  # plain faithfulness refuses it; HHEM does not read it
    case = parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t").cases[0]
    assert metric(KEY).outcome(case).value == 1


def test_zero_statements_is_undefined_like_faithfulness():
    outcome = metric(KEY).outcome(_case({}))
    assert outcome.value is None and outcome.undefined_reason == "zero_claims"
    assert metric("faithfulness").outcome(_case({})).undefined_reason == "zero_claims"


def test_the_bundled_cases_cover_the_threshold_the_float32_tie_batches_and_no_statements():
    cases = {c.id: c for c in load_default_suite().cases if metric(KEY).applies_to(c)}
    values = {case_id: metric(KEY).outcome(case).value for case_id, case in cases.items()}
    assert values == {"hhem-threshold-half": Fraction(1, 3), "hhem-float32-threshold": Fraction(1, 4),
                      "hhem-three-batches": Fraction(14, 23), "hhem-no-statements": None}
    scores = [s for c in cases.values() for s in (c.hhem_scores or {}).values()]
    assert 0.5 in scores and any(s > 0.5 and float32_fraction(s) == Fraction(1, 2) for s in scores)
    assert max(len(c.verdicts["faithfulness"]) for c in cases.values()) > 10


# --------------------------------------------------------------------------- the loader

def _problems(raw: dict) -> str:
    with pytest.raises(HarnessInputError) as err:
        parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="f.json")
    return str(err.value)


def test_a_statement_without_a_score_is_refused():
    text = _problems(_raw({"a": 0.9}, ["a", "b"]))
    assert "f.json: case 'h': $.cases[0].hhem_scores: no score for statement 1 of verdicts.faithfulness" in text


def test_a_score_for_no_statement_is_refused():
    text = _problems(_raw({"a": 0.9, "z": 0.1}, ["a"]))
    assert "$.cases[0].hhem_scores.z: a score for a statement verdicts.faithfulness does not have" in text


def test_scores_without_statements_are_refused():
    raw = _raw({"a": 0.9})
    del raw["verdicts"]
    assert "HHEM scores without the statements they score" in _problems(raw)


@pytest.mark.parametrize("bad", [1.5, -0.1, "0.5", None, True])
def test_a_score_must_be_a_probability(bad):
    assert "$.cases[0].hhem_scores.a" in _problems(_raw({"a": bad}))


def test_a_misspelt_key_is_named():
    raw = _raw({"a": 0.9})
    raw["hhem_score"] = raw.pop("hhem_scores")
    assert "unknown key 'hhem_score'; did you mean 'hhem_scores'?" in _problems(raw)


def test_explain_shows_the_threshold():
    from ragas_compat.metrics.spec import ExplainInput
    from ragas_compat.tools.explain import explain_metric, synthetic_case

    adapter = metric(KEY).explain
    given = ExplainInput(labels=(1, 0, 1))
    case = synthetic_case(explain_metric(adapter.command), given)
    outcome = metric(KEY).outcome(case)
    quantities, formulas = adapter.quantities(outcome, given)
    assert outcome.value == Fraction(2, 3) and quantities[-1].value == 1
    assert any("0.5" in f and "even" in f for f in formulas)
    assert json.dumps(case.raw["hhem_scores"])


def test_it_is_driven_and_no_longer_listed_as_not_driven():
    from test_metric_completeness import _not_driven_table

    assert "legacy:FaithfulnesswithHHEM" in metric(KEY).ragas_targets
    assert "FaithfulnesswithHHEM" not in _not_driven_table()
