"""Options as data: a case (or the suite default) names Ragas targets with constructor options.

The case schema declares the configurable classes and their options; the loader refuses unknown ones
and wrong types (closest name, file, case, field); the registry gives each configuration its reference
(the metric's compute under the same options); the probe request carries the configured targets for
the cases that name them; the bundled option cases run through the real probe on both APIs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.cases.configurations import CLASSES, TargetConfig, resolve
from ragas_compat.cases.loader import load_cases, parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import case_targets, configured_specs, metrics_for_target, suite_probe_targets
from ragas_compat.metrics.semantic_similarity import cosine_in_doubles
from ragas_compat.probe.targets import targets_from_request
from ragas_compat.runner import request_targets

BASE = {"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "s", "retrieved_contexts": []}
OPTION_CASES = ("options-semantic-threshold", "options-factual-mode", "options-string-measures",
                "options-aspect-strictness")


def _suite(targets: object, suite_targets: object = None, **extra: object):
    document = {"schema_version": 1, "suite": "s", "cases": [{**BASE, **extra, "targets": targets}]}
    if suite_targets is not None:
        document["targets"] = suite_targets
    return parse_suite(document, "options.json")


def _problems(targets: object) -> list[str]:
    with pytest.raises(HarnessInputError) as caught:
        _suite(targets)
    return caught.value.problems


# --------------------------------------------------------------------------- the schema and the loader

def test_a_configuration_names_its_target_with_its_options_in_declaration_order():
    suite = _suite({"legacy:SemanticSimilarity": {"threshold": 0.0},
                    "RougeScore": [{"mode": "recall", "rouge_type": "rouge1"}, {}]})
    assert [t.name for t in suite.cases[0].targets] == [
        "legacy:SemanticSimilarity[threshold=0.0]", "legacy:RougeScore[rouge_type=rouge1,mode=recall]",
        "legacy:RougeScore", "collections:RougeScore[rouge_type=rouge1,mode=recall]", "collections:RougeScore"]


@pytest.mark.parametrize(("targets", "expected"), [
    ({"SemanticSimilarity": {"treshold": 0.0}},
     "$.cases[0].targets.SemanticSimilarity.treshold: unknown SemanticSimilarity option 'treshold'; "
     "did you mean 'threshold'?"),
    ({"legacy:SemanticSimilarty": {}},
     "unknown target 'legacy:SemanticSimilarty'; did you mean 'legacy:SemanticSimilarity'?"),
    ({"collections:AspectCritic": {"strictness": 3}},
     "unknown target 'collections:AspectCritic'; did you mean 'legacy:AspectCritic'?"),
    ({"SemanticSimilarity": {"threshold": "0.5"}},
     "$.cases[0].targets.SemanticSimilarity.threshold: expected a number or null, got string \"0.5\""),
    ({"AspectCritic": {"strictness": 3.0}},
     "$.cases[0].targets.AspectCritic.strictness: expected an integer, got number 3.0"),
    ({"FactualCorrectness": [{"mode": "f2"}]},
     "$.cases[0].targets.FactualCorrectness[0].mode: expected one of f1, precision, recall, got string \"f2\""),
    ({"NonLLMStringSimilarity": "jaro"}, "expected an object of NonLLMStringSimilarity options, got string \"jaro\""),
    ({"SemanticSimilarity": {}, "legacy:SemanticSimilarity": {"threshold": 0.5}},
     "legacy:SemanticSimilarity is named twice (also by 'SemanticSimilarity')"),
    ({"RougeScore": [{"mode": "recall"}, {"mode": "recall"}]}, "the same configuration as configuration 0"),
])
def test_unknown_options_and_wrong_types_are_refused_with_file_case_and_field(targets, expected):
    problems = _problems(targets)
    assert len(problems) == 1, problems
    assert problems[0].startswith("options.json: case 'c': $.cases[0].targets"), problems
    assert expected in problems[0], problems


def test_the_suite_default_applies_where_the_case_names_nothing_for_that_target(tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"schema_version": 1, "suite": "s", "targets": {"RougeScore": {"mode": "recall"}},
                                "cases": [{**BASE, "targets": {"legacy:RougeScore": {}}}, {**BASE, "id": "d"}]}))
    first, second = load_cases(path).cases
    assert [t.name for t in first.targets] == ["legacy:RougeScore", "collections:RougeScore[mode=recall]"]
    assert [t.name for t in second.targets] == ["legacy:RougeScore[mode=recall]", "collections:RougeScore[mode=recall]"]
    assert second.raw["targets"] == {"legacy:RougeScore": [{"mode": "recall"}],
                                     "collections:RougeScore": [{"mode": "recall"}]}
    assert resolve(second.raw["targets"]) == second.targets  # what the runner reads from the raw case


def test_a_suite_default_with_an_unknown_option_is_refused_at_its_own_path():
    with pytest.raises(HarnessInputError) as caught:
        _suite(None, suite_targets={"RougeScore": {"rouge": "rouge1"}})
    assert any(p.startswith("options.json: $.targets.RougeScore.rouge: unknown RougeScore option 'rouge'")
               for p in caught.value.problems), caught.value.problems


@pytest.mark.slow
def test_run_refuses_a_bad_option_with_exit_2_naming_file_case_and_field(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"schema_version": 1, "suite": "s",
                                "cases": [{**BASE, "targets": {"SemanticSimilarity": {"treshold": 0.0}}}]}))
    done = subprocess.run([sys.executable, "-m", "ragas_compat", "run", "--cases", str(path), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "bad.json: case 'c': $.cases[0].targets.SemanticSimilarity.treshold" in done.stderr + done.stdout
    assert "did you mean 'threshold'?" in done.stderr + done.stdout


# --------------------------------------------------------------------------- the registry: one reference per configuration

@pytest.mark.parametrize("declared", list(CLASSES.values()), ids=lambda c: c.name)
def test_every_declared_option_value_is_read_by_one_metric_per_api(declared):
    samples = {"threshold": [None, 0.0, 0.5, 0.8], "beta": [1.0, 0.5, 2.0], "strictness": [1, 2, 3, 5]}
    for api, class_name in declared.apis.items():
        for option, schema in declared.options.items():
            for value in schema.get("enum", samples.get(option, [])):
                config = TargetConfig(api, class_name, ((option, value),))
                specs = configured_specs(config)
                assert len(specs) == 1, (config.name, [s.name for s in specs])
                assert specs[0].ragas_targets == (config.name,)


def _case(**extra: object):
    return _suite(extra.pop("targets"), **extra).cases[0]


def _reference(case, target: str):
    [spec] = metrics_for_target(target, case)
    return spec, spec.outcome(case)


def test_semantic_similarity_threshold_zero_is_binary_in_the_reference_and_the_cosine_in_ragas():
    case = _case(targets={"SemanticSimilarity": [{"threshold": 0.0}, {"threshold": 0.97}, {"threshold": None}]},
                 reference="a", response="b", embeddings={"a": [3, 4, 0], "b": [4, 3, 0]})
    spec, zero = _reference(case, "legacy:SemanticSimilarity[threshold=0.0]")
    assert spec.name == "semantic_similarity_threshold" and zero.value == 1
    assert zero.alternatives["variant:threshold_zero_is_unset"] == cosine_in_doubles([3, 4, 0], [4, 3, 0])
    _, high = _reference(case, "collections:SemanticSimilarity[threshold=0.97]")
    assert high.value == 0 and "variant:threshold_zero_is_unset" not in high.alternatives
    spec, raw = _reference(case, "legacy:SemanticSimilarity[threshold=None]")
    assert spec.name == "semantic_similarity" and raw.value == Fraction(24, 25)


def test_factual_correctness_mode_and_beta_enter_the_reference():
    claims = [{"statement": f"r{i}", "from": "response", "verdict": v} for i, v in enumerate((1, 1, 0))]
    claims += [{"statement": f"g{i}", "from": "reference", "verdict": v} for i, v in enumerate((1, 0, 0))]
    case = _case(targets={"FactualCorrectness": [{"mode": "recall", "atomicity": "high"}, {"beta": 2.0}]},
                 verdicts={"factual_correctness": claims})
    spec, recall = _reference(case, "legacy:FactualCorrectness[mode=recall,atomicity=high]")
    assert (spec.name, recall.value) == ("factual_correctness_recall", Fraction(1, 2))
    spec, f2 = _reference(case, "collections:FactualCorrectness[beta=2.0]")
    # F2 = 5 TP / (5 TP + 4 FN + FP) = 10 / (10 + 8 + 1)
    assert (spec.name, f2.value, f2.details["beta"]) == ("factual_correctness_fbeta", Fraction(10, 19), 2.0)


def test_string_options_and_aspect_critic_strictness_enter_the_reference():
    case = _case(targets={"NonLLMStringSimilarity": {"distance_measure": "hamming"},
                          "RougeScore": {"rouge_type": "rouge1", "mode": "recall"}},
                 reference="the cat sat", response="the cat", string_metrics=True)
    assert _reference(case, "legacy:NonLLMStringSimilarity[distance_measure=hamming]")[1].value == Fraction(7, 11)
    assert _reference(case, "collections:RougeScore[rouge_type=rouge1,mode=recall]")[1].value == Fraction(2, 3)
    votes = _case(targets={"AspectCritic": {"strictness": 5}},
                  verdicts={"aspect_critic": [{"verdict": v} for v in (0, 1, 1, 0, 1)]})
    _, outcome = _reference(votes, "legacy:AspectCritic[strictness=5]")
    assert (outcome.value, outcome.details["samples_used"], outcome.alternatives["variant:first_sample"]) == (1, 5, 0)


def test_a_case_replaces_the_built_in_configurations_of_the_classes_it_names_only():
    case = _case(targets={"legacy:SemanticSimilarity": {"threshold": 0.0}})
    names = set(case_targets(case))
    assert "legacy:SemanticSimilarity[threshold=0.0]" in names
    assert not {"legacy:SemanticSimilarity", "legacy:SemanticSimilarity[threshold=0.5]"} & names
    assert {"collections:SemanticSimilarity", "collections:SemanticSimilarity[threshold=0.5]"} <= names
    assert "legacy:Faithfulness" in names


def test_the_probe_request_carries_configured_targets_for_the_cases_that_name_them():
    configured = {**BASE, "targets": {"SemanticSimilarity": {"threshold": 0.0}}}
    plain = {**BASE, "id": "d"}
    specs = {f"{s['api']}:{s['ragas_class']}{s['options']}": s for s in request_targets(None, [configured, plain])}
    assert specs["legacy:SemanticSimilarity[['threshold', 0.0]]"]["cases"] == ["c"]
    assert specs["legacy:SemanticSimilarity[['threshold', 0.5]]"]["cases"] == ["d"]
    assert "cases" not in specs["legacy:Faithfulness[]"]
    assert suite_probe_targets([("d", ())]) == suite_probe_targets([])  # no configuration: the request as before
    targets = {t.name: t for t in targets_from_request(list(specs.values()))}
    zero = targets["legacy:SemanticSimilarity[threshold=0.0]"]
    assert zero.applies({"id": "c", "embeddings": {}}) and not zero.applies({"id": "d", "embeddings": {}})
    assert dict(zero.options) == {"threshold": 0.0}


def test_a_metric_filter_keeps_the_configured_targets_of_its_metric():
    configured = {**BASE, "targets": {"SemanticSimilarity": {"threshold": 0.0}}}
    names = [t["ragas_class"] + str(t["options"]) for t in request_targets(
        ["legacy:SemanticSimilarity[threshold=0.5]"], [configured, {**BASE, "id": "d"}])]
    assert names == ["SemanticSimilarity[['threshold', 0.5]]", "SemanticSimilarity[['threshold', 0.0]]",
                     "SemanticSimilarity[['threshold', 0.0]]"]


# --------------------------------------------------------------------------- through the real probe

@pytest.mark.slow
def test_the_bundled_option_cases_run_through_the_real_probe_on_both_apis():
    from ragas_compat.cases.model import Suite
    from ragas_compat.compare.audit import build_audit
    from ragas_compat.pipeline import pin_expectations
    from ragas_compat.runner import run_probe

    bundled = load_default_suite()
    suite = Suite("options", "bundled:default", tuple(c for c in bundled.cases if c.id in OPTION_CASES))
    assert len(suite.cases) == len(OPTION_CASES)
    run = run_probe([c.raw for c in suite.cases])
    assert run.ok, run.error
    values = {(r["case_id"], r["target"]): r["value"] for r in run.output["results"]}
    cosine = cosine_in_doubles([3, 4, 0], [4, 3, 0])
    for api in ("legacy", "collections"):
        assert values[("options-semantic-threshold", f"{api}:SemanticSimilarity[threshold=0.0]")] == cosine
        assert values[("options-semantic-threshold", f"{api}:SemanticSimilarity[threshold=0.8]")] == 1.0
        assert values[("options-semantic-threshold", f"{api}:SemanticSimilarity[threshold=0.97]")] == 0.0
        assert values[("options-factual-mode",
                       f"{api}:FactualCorrectness[mode=recall,atomicity=high,coverage=high]")] == 0.5
        assert values[("options-factual-mode", f"{api}:FactualCorrectness[mode=f1,beta=2.0]")] == 0.53
        assert values[("options-string-measures", f"{api}:RougeScore[rouge_type=rouge1,mode=recall]")] == 0.5
        assert ("options-string-measures", f"{api}:NonLLMStringSimilarity[distance_measure=jaro_winkler]") in values
        # the class's built-in configurations are replaced for these cases
        assert ("options-semantic-threshold", f"{api}:SemanticSimilarity[threshold=0.5]") not in values
        assert ("options-string-measures", f"{api}:NonLLMStringSimilarity[distance_measure=levenshtein]") not in values
    assert values[("options-aspect-strictness", "legacy:AspectCritic[strictness=5]")] == 0.0
    audit = build_audit(suite, run.output, pin_expectations(), {})
    rows = {(row.case.id, row.target): row for row in audit.rows}
    zero = rows[("options-semantic-threshold", "legacy:SemanticSimilarity[threshold=0.0]")]
    assert (zero.classification.name, zero.expected.by) == ("variant", "rule semantic-similarity-threshold-zero-unset")
    assert rows[("options-factual-mode", "collections:FactualCorrectness[mode=f1,beta=2.0]")].reference.value == \
        Fraction(10, 19)
    assert not audit.unexpected, [(r.case.id, r.target, r.classification.name) for r in audit.unexpected]
    assert not audit.findings, audit.findings
