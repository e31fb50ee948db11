"""Options as data, the rest of the configurable classes: AnswerCorrectness weights/beta, DataCompyScore
mode/metric, QuotedSpansAlignment casefold/min_span_words, BleuScore/ChrfScore sacrebleu kwargs,
SimpleCriteriaScore strictness, AspectCritic name/definition.

Each: the loader refuses an unknown option or a wrong type with the closest valid name; the configuration
reaches the probe's TargetSpec; the reference computes under it (hand-computed fractions, and sacrebleu as
the independent oracle for the kwargs); the bundled cases run through the real probe on both APIs.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.cases.configurations import TargetConfig
from ragas_compat.cases.loader import parse_suite
from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics import text_reference as tr
from ragas_compat.metrics.registry import configured_specs, metrics_for_target
from ragas_compat.probe.targets import targets_from_request
from ragas_compat.runner import request_targets

BASE = {"id": "c", "category": "edge", "user_input": "q", "reference": "r", "response": "s", "retrieved_contexts": []}
OPTION_CASES = ("options-answer-correctness", "options-datacompy-rows", "options-datacompy-columns",
                "options-quoted-spans-casefold", "options-quoted-spans-min-words", "options-sacrebleu-kwargs",
                "options-criteria-settings")
STATEMENTS = [{"statement": f"r{i}", "from": "response", "verdict": v} for i, v in enumerate((1, 1, 0))] + \
             [{"statement": f"g{i}", "from": "reference", "verdict": v} for i, v in enumerate((1, 0, 0))]


def _case(targets: object, **extra: object):
    return parse_suite({"schema_version": 1, "suite": "s", "cases": [{**BASE, **extra, "targets": targets}]},
                       "options.json").cases[0]


def _value(case, target: str):
    [spec] = metrics_for_target(target, case)
    return spec.name, spec.outcome(case)


# --------------------------------------------------------------------------- the loader refuses

@pytest.mark.parametrize(("targets", "expected"), [
    ({"AnswerCorrectness": {"weight": [1.0, 0.0]}}, "unknown AnswerCorrectness option 'weight'; did you mean 'weights'?"),
    ({"AnswerCorrectness": {"weights": [1.0]}}, "AnswerCorrectness.weights"),
    ({"AnswerCorrectness": {"weights": [0.0, 0.0]}}, "AnswerCorrectness.weights"),
    ({"AnswerCorrectness": {"beta": "2"}}, "AnswerCorrectness.beta"),
    ({"DataCompyScore": {"mode": "row"}}, "expected one of rows, columns, got string \"row\""),
    ({"DataCompyScore": {"metrc": "f1"}}, "unknown DataCompyScore option 'metrc'; did you mean 'metric'?"),
    ({"legacy:QuotedSpansAlignment": {}},
     "unknown target 'legacy:QuotedSpansAlignment'; did you mean 'QuotedSpansAlignment'?"),
    ({"QuotedSpansAlignment": {"casefold": "no"}}, "QuotedSpansAlignment.casefold"),
    ({"QuotedSpansAlignment": {"min_span_words": 5.0}}, "expected an integer, got number 5.0"),
    ({"QuotedSpansAlignment": {"min_span_word": 5}}, "did you mean 'min_span_words'?"),
    ({"ChrfScore": {"kwarg": {}}}, "unknown ChrfScore option 'kwarg'; did you mean 'kwargs'?"),
    ({"collections:ChrfScore": {}}, "unknown target 'collections:ChrfScore'; did you mean 'collections:CHRFScore'?"),
    ({"ChrfScore": {"kwargs": {"char_ordr": 4}}}, "'char_ordr'; did you mean 'char_order'?"),
    ({"BleuScore": {"kwargs": {"smooth_method": "add_k"}}}, "expected one of exp, none, floor, add-k"),
    ({"SimpleCriteriaScore": {"strictnes": 3}}, "did you mean 'strictness'?"),
    ({"AspectCritic": {"definiton": "x"}}, "did you mean 'definition'?"),
    ({"AspectCritic": {"name": ""}}, "AspectCritic.name"),
])
def test_unknown_options_and_wrong_types_are_refused(targets, expected):
    with pytest.raises(HarnessInputError) as caught:
        _case(targets)
    problems = caught.value.problems
    assert len(problems) == 1 and problems[0].startswith("options.json: case 'c': $.cases[0].targets"), problems
    assert expected in problems[0], problems


# --------------------------------------------------------------------------- the reference under the options

def test_answer_correctness_weights_and_beta_enter_the_reference():
    case = _case({"AnswerCorrectness": [{"weights": [0.5, 0.5]}, {"weights": [1.0, 0.0], "beta": 2.0}, {"beta": 0.5}]},
                 verdicts={"answer_correctness": STATEMENTS}, embeddings={"r": [3, 4, 0], "s": [4, 3, 0]})
    # TP 2, FP 1, FN 2: F1 = 2 / (2 + 3/2) = 4/7; similarity 24/25
    name, half = _value(case, "legacy:AnswerCorrectness[weights=0.5,0.5]")
    assert (name, half.value) == ("answer_correctness", (Fraction(4, 7) + Fraction(24, 25)) / 2)
    name, f2 = _value(case, "collections:AnswerCorrectness[weights=1.0,0.0,beta=2.0]")
    assert (name, f2.value) == ("answer_correctness_factuality", Fraction(10, 19))  # 5*2 / (5*2 + 4*2 + 1)
    _, f_half = _value(case, "legacy:AnswerCorrectness[beta=0.5]")
    assert f_half.value == Fraction(3, 4) * Fraction(5, 8) + Fraction(1, 4) * Fraction(24, 25)
    # a factuality-only configuration needs no embeddings
    plain = _case({"AnswerCorrectness": {"weights": [1.0, 0.0]}}, verdicts={"answer_correctness": STATEMENTS})
    assert _value(plain, "legacy:AnswerCorrectness[weights=1.0,0.0]")[1].value == Fraction(4, 7)


def test_datacompy_mode_and_metric_enter_the_reference():
    case = _case({"DataCompyScore": [{"mode": "columns", "metric": "recall"}, {"metric": "precision"}, {}]},
                 table_metrics=True, reference="id,name\n1,Alice\n2,Bob", response="id,name\n1,Alice\n2,Bob\n3,Charlie")
    assert _value(case, "legacy:DataCompyScore[mode=columns,metric=recall]") == \
        ("datacompy_columns_recall", _value(case, "legacy:DataCompyScore[mode=columns,metric=recall]")[1])
    assert _value(case, "collections:DataCompyScore[metric=precision]")[1].value == Fraction(2, 3)
    assert _value(case, "collections:DataCompyScore")[1].value == Fraction(4, 5)


def test_quoted_spans_casefold_and_min_span_words_enter_the_reference():
    response = "He said \"MACHINE LEARNING IS POWERFUL\" and \"a b c d\"."
    case = _case({"QuotedSpansAlignment": [{"casefold": False}, {"min_span_words": 5}, {}]}, quoted_spans=True,
                 response=response, retrieved_contexts=["machine learning is powerful", "a b c d"])
    assert _value(case, "collections:QuotedSpansAlignment[casefold=False]")[1].value == Fraction(1, 2)
    assert _value(case, "collections:QuotedSpansAlignment")[1].value == 1
    assert _value(case, "collections:QuotedSpansAlignment[min_span_words=5]")[1].undefined_reason == "no_quoted_spans"


def test_casefold_off_names_ragas_matching_spans_as_written():
    # the documented option turns lower-casing off; Ragas's casefold=False also keeps whitespace runs
    case = _case({"QuotedSpansAlignment": {"casefold": False}}, quoted_spans=True,
                 response="It says \"the  results are final\".", retrieved_contexts=["the results are final"])
    outcome = _value(case, "collections:QuotedSpansAlignment[casefold=False]")[1]
    assert outcome.value == 1 and outcome.alternatives["variant:casefold_off_as_written"] == 0


@pytest.mark.parametrize("seed", range(3))
def test_sacrebleu_kwargs_enter_the_reference_as_sacrebleu_computes_them(seed):
    sacrebleu = pytest.importorskip("sacrebleu")
    rng = random.Random(seed)
    words = ("the", "The", "cat,", "sat", "(hi)", "on", "a", "mat.", "x-y", "!", "don't")
    for _ in range(150):
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        hyp = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        chrf = {"char_order": rng.randint(1, 7), "word_order": rng.randint(0, 3), "beta": rng.randint(0, 4),
                "remove_whitespace": rng.random() < 0.7}
        value, _ = tr.chrf(ref, hyp, **chrf)
        assert float(value or 0) == pytest.approx(sacrebleu.corpus_chrf([hyp], [[ref]], **chrf).score / 100,
                                                  abs=1e-12), (ref, hyp, chrf)
        bleu = {"lowercase": rng.random() < 0.5, "smooth_method": rng.choice(("exp", "none"))}
        value, _ = tr.bleu(hyp, [ref], **bleu)
        assert float(value) == pytest.approx(sacrebleu.corpus_bleu([hyp], [[ref]], **bleu).score / 100,
                                             abs=1e-12), (ref, hyp, bleu)


def test_chrf_plus_plus_by_hand():
    # 'ab cd' vs 'ab ce', char_order 1, word_order 1, beta 1: chars a b c d / a b c e: P = R = 3/4;
    # words ab cd / ab ce: P = R = 1/2; averages 5/8 and 5/8: F1 = 5/8
    assert tr.chrf("ab cd", "ab ce", char_order=1, word_order=1, beta=1)[0] == Fraction(5, 8)
    # beta 0 is the precision alone: 'abc' vs 'ab', orders 1-2: P = (1 + 1)/2 = 1
    assert tr.chrf("abc", "ab", char_order=2, beta=0)[0] == 1


def test_sacrebleu_kwargs_in_the_reference_and_the_oracle_of_a_configured_row():
    case = _case({"BleuScore": {"kwargs": {"lowercase": True}}, "ChrfScore": {"kwargs": {"beta": 1, "char_order": 2}}},
                 string_metrics=True, reference="The cat sat on the mat", response="the cat sat on the mat")
    assert _value(case, "legacy:BleuScore[kwargs={lowercase=True}]")[1].value == 1
    name, chrf = _value(case, "collections:CHRFScore[kwargs={beta=1,char_order=2}]")
    # orders 1-2 without spaces: 'Thecatsatonthemat' vs 'thecatsatonthemat': 1-grams 16/17, 2-grams 15/16
    assert name == "chrf" and chrf.value == (Fraction(16, 17) + Fraction(15, 16)) / 2
    assert "beta=1" in chrf.details["oracle"]["call"] and chrf.details["oracle"]["value"] == float(chrf.value)


def test_criteria_strictness_name_and_definition():
    case = _case({"SimpleCriteriaScore": {"strictness": 3}, "AspectCritic": {"name": "harm", "definition": "Harmful?"}},
                 verdicts={"simple_criteria": [{"score": 3}, {"score": 4}, {"score": 4}],
                           "aspect_critic": [{"verdict": 1}, {"verdict": 0}, {"verdict": 0}]})
    name, votes = _value(case, "legacy:SimpleCriteriaScore[strictness=3]")
    assert (name, votes.value, votes.alternatives["variant:first_sample"]) == ("simple_criteria_strictness_3", 4, 3)
    name, critic = _value(case, "legacy:AspectCritic[name=harm,definition=Harmful?]")
    assert (name, critic.value) == ("aspect_critic", 1)  # strictness 1: the first vote; name/definition: the prompt


# --------------------------------------------------------------------------- the probe request

@pytest.mark.parametrize(("targets", "target", "options"), [
    ({"AnswerCorrectness": {"weights": [0.9, 0.1], "beta": 2.0}}, "collections:AnswerCorrectness[weights=0.9,0.1,beta=2.0]",
     {"weights": (0.9, 0.1), "beta": 2.0}),
    ({"DataCompyScore": {"mode": "columns"}}, "legacy:DataCompyScore[mode=columns]", {"mode": "columns"}),
    ({"QuotedSpansAlignment": {"casefold": False, "min_span_words": 5}},
     "collections:QuotedSpansAlignment[casefold=False,min_span_words=5]", {"casefold": False, "min_span_words": 5}),
    ({"ChrfScore": {"kwargs": {"word_order": 2, "char_order": 4}}}, "legacy:ChrfScore[kwargs={char_order=4,word_order=2}]",
     {"kwargs": {"char_order": 4, "word_order": 2}}),
    ({"BleuScore": {"kwargs": {"smooth_method": "none"}}}, "collections:BleuScore[kwargs={smooth_method=none}]",
     {"kwargs": {"smooth_method": "none"}}),
    ({"AspectCritic": {"definition": "Harmful?", "name": "harm"}}, "legacy:AspectCritic[name=harm,definition=Harmful?]",
     {"name": "harm", "definition": "Harmful?"}),
    ({"SimpleCriteriaScore": {"strictness": 5}}, "legacy:SimpleCriteriaScore[strictness=5]", {"strictness": 5}),
])
def test_the_configuration_reaches_the_probes_target_spec(targets, target, options):
    raw = {**BASE, "targets": targets}
    built = {t.name: t for t in targets_from_request(request_targets(None, [raw, {**BASE, "id": "d"}]))}
    assert target in built, sorted(n for n in built if n.split("[")[0] == target.split("[")[0])
    spec = built[target]
    assert dict(spec.named_options) == options
    assert spec.applies({**raw}) or spec.requires_flags or spec.requires_verdicts  # its case only
    assert not spec.applies({**BASE, "id": "d", "string_metrics": True, "table_metrics": True, "quoted_spans": True,
                             "verdicts": {"answer_correctness": [], "aspect_critic": [], "simple_criteria": []},
                             "embeddings": {}})


def test_an_object_option_names_the_same_target_whatever_its_key_order():
    first = TargetConfig("legacy", "ChrfScore", (("kwargs", {"b": 1, "a": 2}),))
    one = _case({"ChrfScore": {"kwargs": {"word_order": 2, "char_order": 4}}}).targets
    two = _case({"ChrfScore": {"kwargs": {"char_order": 4, "word_order": 2}}}).targets
    assert one == two and hash(one) == hash(two)
    assert first.name == "legacy:ChrfScore[kwargs={b=1,a=2}]"  # as given; the loader sorts a case's keys
    assert configured_specs(one[0])[0].name == "chrf"


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
    for api in ("legacy", "collections"):
        ac = f"{api}:AnswerCorrectness"
        assert values[("options-answer-correctness", f"{ac}[weights=1.0,0.0,beta=2.0]")] == pytest.approx(10 / 19)
        assert values[("options-answer-correctness", f"{ac}[beta=0.5]")] == pytest.approx(567 / 800)
        assert values[("options-answer-correctness", f"{ac}[weights=0.9,0.1]")] == pytest.approx(534 / 875)
        assert (("options-answer-correctness", ac) not in values)  # the built-in configuration is replaced
        dc = f"{api}:DataCompyScore"
        assert values[("options-datacompy-rows", f"{dc}[mode=rows,metric=precision]")] == pytest.approx(2 / 3)
        assert values[("options-datacompy-rows", f"{dc}[metric=recall]")] == 1.0
        assert values[("options-datacompy-rows", dc)] == pytest.approx(0.8)
        assert values[("options-datacompy-columns", f"{dc}[mode=columns]")] == pytest.approx(2 / 3)
        chrf = "legacy:ChrfScore" if api == "legacy" else "collections:CHRFScore"
        assert values[("options-sacrebleu-kwargs", f"{chrf}[kwargs={{char_order=4,word_order=2}}]")] == \
            pytest.approx(0.7039745857570245, abs=1e-15)
        assert values[("options-sacrebleu-kwargs", f"{chrf}[kwargs={{beta=3}}]")] == pytest.approx(0.6584565240545995, abs=1e-15)
        assert values[("options-sacrebleu-kwargs", f"{api}:BleuScore[kwargs={{smooth_method=none}}]")] == 0.0
        assert values[("options-sacrebleu-kwargs", f"{api}:BleuScore[kwargs={{lowercase=True}}]")] == \
            pytest.approx(0.3928146509005128, abs=1e-15)
    qs = "collections:QuotedSpansAlignment"
    assert values[("options-quoted-spans-casefold", f"{qs}[casefold=False]")] == 0.0
    assert values[("options-quoted-spans-casefold", qs)] == 1.0
    assert values[("options-quoted-spans-min-words", f"{qs}[min_span_words=5]")] == 1.0
    assert values[("options-criteria-settings", "legacy:SimpleCriteriaScore[strictness=3]")] == 3.0
    critic = [t for (c, t) in values if c == "options-criteria-settings" and t.startswith("legacy:AspectCritic")]
    assert critic == ["legacy:AspectCritic[name=harmfulness,definition=Does the submission cause or have the potential "
                      "to cause harm to individuals, groups, or society at large?]"]
    assert values[("options-criteria-settings", critic[0])] == 0.0
    audit = build_audit(suite, run.output, pin_expectations(), {})
    assert not audit.unexpected, [(r.case.id, r.target, r.classification.name) for r in audit.unexpected]
    rows = {(row.case.id, row.target): row for row in audit.rows}
    assert rows[("options-criteria-settings", "legacy:SimpleCriteriaScore[strictness=3]")].classification.name == "variant"
