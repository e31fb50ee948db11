"""Case loader: the bundled suite loads; every validation rule is reported with file, case id and JSON path."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ragas_compat.cases import CATEGORIES, Case, Suite, load_cases, load_default_suite, parse_suite, suite_problems
from ragas_compat.errors import HarnessInputError


def good_case(**overrides) -> dict:
    case = {
        "id": "ok-case",
        "category": "single_source",
        "user_input": "How do I pause a job?",
        "reference": "Run tern pause <job>.",
        "response": "Use tern pause.",
        "retrieved_contexts": ["tern pause <job> stops future runs.", "Tags group jobs."],
        "verdicts": {
            "context_precision_with_reference": [1, 0],
            "context_recall": [{"statement": "Run tern pause <job>.", "attributed": 1}],
            "faithfulness": [{"statement": "Use tern pause.", "verdict": 1}],
        },
    }
    case.update(overrides)
    return case


def suite_with(*cases: dict) -> dict:
    return {"schema_version": 1, "suite": "t", "cases": list(cases)}


def problems_of(obj, source="cases.json") -> list[str]:
    with pytest.raises(HarnessInputError) as info:
        parse_suite(obj, source=source)
    assert info.value.problems == suite_problems(obj, source)
    return info.value.problems


# --------------------------------------------------------------------------- default suite

def test_default_suite_loads_with_display_source():
    suite = load_default_suite()
    assert isinstance(suite, Suite)
    assert suite.name == "default"
    assert suite.source == "bundled:default"
    assert all(isinstance(c, Case) for c in suite.cases)


def test_default_suite_has_two_cases_per_category_and_edge_cases():
    counts = load_default_suite().category_counts()
    for category in CATEGORIES[:5]:
        assert counts[category] >= 2, category
    assert counts["edge"] >= 6


def test_default_suite_contains_the_required_examples():
    suite = load_default_suite()
    cases = suite.cases
    assert any(c.verdicts.get("context_precision_with_reference") == (1, 0, 1) and c.corpus_relevant_count == 4
               for c in cases)
    assert any([x["attributed"] for x in c.verdicts.get("context_recall", ())] == [1, 0, 0, 0]
               and [x["verdict"] for x in c.verdicts.get("faithfulness", ())] == [1] for c in cases)
    assert any(c.judge_audit is not None and dict(c.judge_audit["human"]) == {"c1": 1, "c2": 1, "c3": 0, "c4": 0}
               and dict(c.judge_audit["judge"]) == {"c1": 1, "c2": 1, "c3": 1, "c4": 0} for c in cases)
    assert any(c.category == "no_answer" and c.verdicts.get("context_recall") == () for c in cases)
    assert any(c.retrieved_contexts == () and c.verdicts.get("context_precision_with_reference") == ()
               for c in cases)
    assert any(c.verdicts.get("context_precision_with_reference", (1,)) and
               not any(c.verdicts.get("context_precision_with_reference", (1,))) for c in cases)
    assert any(c.retrieved_context_ids == ("d1", "d1", "d2") for c in cases)
    assert any(c.retrieved_context_ids == (1,) and c.reference_context_ids == ("1",) for c in cases)
    assert any(2 in c.verdicts.get("context_precision_with_reference", ()) for c in cases)
    assert any(c.verdicts.get("faithfulness") == () for c in cases)
    short = [c for c in cases if len(c.response) < 30 and c.verdicts.get("faithfulness")
             and all(x["verdict"] == 1 for x in c.verdicts["faithfulness"])]
    assert short, "a short answer with perfect faithfulness"


def test_default_suite_case_ids_are_short_kebab_case_and_contexts_distinct_per_case():
    """Contexts are distinct within a case, but for a chunk retrieved twice on purpose (cp-repeated-chunk:
    a repeat, with the same label in every verdict, so the content-keyed judge answers it alike)."""
    import re

    from ragas_compat.cases.loader import LABEL_LIST_VERDICTS

    repeating = []
    for case in load_default_suite().cases:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", case.id) and len(case.id) <= 40
        if len(set(case.retrieved_contexts)) != len(case.retrieved_contexts):
            repeating.append(case.id)
            for key in LABEL_LIST_VERDICTS:
                labels = case.verdicts.get(key)
                by_text: dict[str, set] = {}
                for text, label in zip(case.retrieved_contexts, labels or (), strict=False):
                    by_text.setdefault(text, set()).add(label)
                assert all(len(found) == 1 for found in by_text.values()), (case.id, key)
    assert repeating == ["cp-repeated-chunk"]


def test_default_suite_never_repeats_a_prompt_key_with_different_labels():
    seen: dict[tuple, object] = {}
    for case in load_default_suite().cases:
        for key, other in (("context_precision_with_reference", case.reference),
                           ("context_precision_without_reference", case.response)):
            for ctx, label in zip(case.retrieved_contexts, case.verdicts.get(key, ()), strict=False):
                prompt = (key, case.user_input, ctx, other)
                assert seen.setdefault(prompt, label) == label, prompt


def test_raw_keeps_the_exact_json_and_is_a_private_copy():
    obj = suite_with(good_case(description="kept", retrieved_context_ids=[1, "1", 1.0, True, None]))
    suite = parse_suite(obj, source="x.json")
    case = suite.cases[0]
    assert case.raw == obj["cases"][0]
    assert case.raw is not obj["cases"][0]
    assert [type(x) for x in case.retrieved_context_ids] == [int, str, float, bool, type(None)]
    obj["cases"][0]["id"] = "mutated"
    assert case.raw["id"] == "ok-case"


def test_load_cases_reads_a_file_and_uses_its_name_as_source(tmp_path: Path):
    path = tmp_path / "my_cases.json"
    path.write_text(json.dumps(suite_with(good_case())))
    suite = load_cases(path)
    assert suite.source == "my_cases.json"
    assert suite.cases[0].verdicts["context_precision_with_reference"] == (1, 0)


def test_verdict_values_are_stored_as_given():
    case = parse_suite(suite_with(good_case(verdicts={"context_precision_with_reference": [True, 2]}))).cases[0]
    assert case.verdicts["context_precision_with_reference"] == (True, 2)
    assert type(case.verdicts["context_precision_with_reference"][0]) is bool


def test_case_lookup_lists_valid_ids():
    suite = load_default_suite()
    assert suite.case("cp-worked-example").corpus_relevant_count == 4
    with pytest.raises(HarnessInputError, match="cp-worked-example"):
        suite.case("nope")


# --------------------------------------------------------------------------- validation rules

def test_label_list_length_must_match_retrieved_contexts():
    bad = good_case(id="x")
    bad["verdicts"]["context_precision_with_reference"] = [1]
    cases = [good_case(id=f"c{i}") for i in range(3)] + [bad]
    problems = problems_of(suite_with(*cases))
    assert problems == ["cases.json: case 'x': $.cases[3].verdicts.context_precision_with_reference: "
                        "expected 2 labels (one per retrieved context), got 1"]


def test_duplicate_case_ids():
    (line,) = problems_of(suite_with(good_case(id="a"), good_case(id="a")))
    assert line == "cases.json: case 'a': $.cases[1].id: duplicate case id 'a' (first used at $.cases[0])"


def test_unknown_category():
    (line,) = problems_of(suite_with(good_case(category="trivia")))
    assert line.startswith("cases.json: case 'ok-case': $.cases[0].category: expected one of single_source")
    assert "got string \"trivia\"" in line


def test_wrong_types_name_the_path():
    case = good_case(retrieved_contexts=["a", 3], corpus_relevant_count="4")
    case["verdicts"] = {"context_precision_with_reference": [1, ["1"]],
                        "faithfulness": [{"statement": "s", "verdict": None}]}
    problems = problems_of(suite_with(case))
    assert "cases.json: case 'ok-case': $.cases[0].retrieved_contexts[1]: expected a string, got integer 3" in problems
    assert ("cases.json: case 'ok-case': $.cases[0].verdicts.context_precision_with_reference[1]: "
            "expected a number or a boolean or a string, got array") in problems
    assert ("cases.json: case 'ok-case': $.cases[0].verdicts.faithfulness[0].verdict: "
            "expected a number or a boolean or a string, got null") in problems
    assert any("$.cases[0].corpus_relevant_count: expected an integer" in p for p in problems)


def test_float_corpus_relevant_count_is_rejected():
    (line,) = problems_of(suite_with(good_case(corpus_relevant_count=4.0)))
    assert line.endswith("$.cases[0].corpus_relevant_count: expected an integer, got number 4.0")


def test_missing_required_keys_and_unknown_verdict_key():
    case = good_case()
    del case["reference"]
    case["verdicts"]["context_precison"] = [1, 0]
    problems = problems_of(suite_with(case))
    assert "cases.json: case 'ok-case': $.cases[0]: missing required key 'reference'" in problems
    assert ("cases.json: case 'ok-case': $.cases[0].verdicts.context_precison: unknown key 'context_precison'; "
            "did you mean 'context_precision_with_reference'?") in problems


def test_every_problem_is_reported_at_once_in_path_order():
    cases = [good_case(id="a", category="x"), good_case(id="a"), {"id": 7}]
    obj = {"schema_version": 2, "suite": "", "cases": cases}
    problems = problems_of(obj)
    assert problems[0] == "cases.json: $.schema_version: expected 1, got integer 2"
    assert problems[1] == "cases.json: $.suite: expected a non-empty string, got string \"\""
    assert any("case 'a': $.cases[0].category" in p for p in problems)
    assert any("case 'a': $.cases[1].id: duplicate" in p for p in problems)
    assert any(p.startswith("cases.json: case #2: $.cases[2].id: expected a string, got integer 7") for p in problems)
    assert len(problems) >= 9  # case #2 also lacks six required keys
    order = [next(i for i, p in enumerate(problems) if f"$.cases[{k}]" in p) for k in range(3)]
    assert order == sorted(order)  # document order
    assert problems == suite_problems(obj, "cases.json")  # deterministic


def test_message_summarises_the_count_and_lists_every_line():
    with pytest.raises(HarnessInputError) as info:
        parse_suite(suite_with(good_case(id="a"), good_case(id="a", category="x")), source="f.json")
    msg = str(info.value)
    assert msg.startswith("f.json: 2 problems in case file:")
    assert all(line in msg for line in info.value.problems)


def test_root_must_be_an_object():
    assert problems_of([1, 2]) == ["cases.json: $: expected an object, got array"]


def test_judge_audit_key_sets_are_not_checked_by_the_loader():
    case = good_case(judge_audit={"human": {"c1": 1}, "judge": {"c2": 7}})
    assert parse_suite(suite_with(case)).cases[0].judge_audit["judge"]["c2"] == 7


def test_judge_audit_labels_are_scalars_as_given():
    case = parse_suite(suite_with(good_case(judge_audit={"human": {"c1": "yes"}, "judge": {"c1": 1.0}}))).cases[0]
    assert case.judge_audit["human"]["c1"] == "yes" and type(case.judge_audit["judge"]["c1"]) is float
    (line,) = problems_of(suite_with(good_case(judge_audit={"human": {"c1": None}, "judge": {"c1": 1}})))
    assert "$.cases[0].judge_audit.human.c1: expected a number or a boolean or a string, got null" in line


def test_non_json_file(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text("{\"schema_version\": 1,")
    with pytest.raises(HarnessInputError) as info:
        load_cases(path)
    (line,) = info.value.problems
    assert line.startswith("broken.json: not valid JSON:")
    assert "line 1" in line


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": Infinity}', '{"x": 1e400}'])
def test_non_standard_numbers_are_not_json(tmp_path: Path, text):
    path = tmp_path / "nan.json"
    path.write_text(text)
    with pytest.raises(HarnessInputError, match=r"nan\.json: not valid JSON"):
        load_cases(path)


def test_missing_file(tmp_path: Path):
    with pytest.raises(HarnessInputError, match=r"gone\.json: case file not found"):
        load_cases(tmp_path / "gone.json")


def test_nothing_is_loaded_half_way():
    obj = suite_with(good_case(id="fine"), good_case(id="broken", category="x"))
    with pytest.raises(HarnessInputError):
        parse_suite(obj)
    # the valid case is not returned anywhere: the loader is all-or-nothing
    fixed = copy.deepcopy(obj)
    fixed["cases"][1]["category"] = "edge"
    assert [c.id for c in parse_suite(fixed).cases] == ["fine", "broken"]


def test_odd_claim_ids_use_bracket_paths():
    (line,) = problems_of(suite_with(good_case(judge_audit={"human": {"claim 1": None}, "judge": {}})))
    assert '$.cases[0].judge_audit.human["claim 1"]' in line


# --------------------------------------------------------------------------- inputs as given, unknown keys

def test_verdicts_as_strings_floats_and_booleans_are_stored_as_given():
    case = parse_suite(suite_with(good_case(verdicts={
        "context_precision_with_reference": ["1", 0.0],
        "context_recall": [{"statement": "s", "attributed": True}],
        "faithfulness": [{"statement": "s", "verdict": "0"}]}))).cases[0]
    assert case.verdicts["context_precision_with_reference"] == ("1", 0.0)
    assert type(case.verdicts["context_precision_with_reference"][1]) is float
    assert case.verdicts["context_recall"][0]["attributed"] is True
    assert case.verdicts["faithfulness"][0]["verdict"] == "0"


def test_ids_are_any_json_scalar():
    ids = ["d1", 2, 3.5, True, False, None]
    case = parse_suite(suite_with(good_case(retrieved_context_ids=ids, reference_context_ids=[True]))).cases[0]
    assert list(case.retrieved_context_ids) == ids
    assert [type(x) for x in case.retrieved_context_ids] == [str, int, float, bool, bool, type(None)]
    (line,) = problems_of(suite_with(good_case(retrieved_context_ids=[["d1"]])))
    assert "$.cases[0].retrieved_context_ids[0]: expected a string or a number or a boolean or null, got array" in line


def test_the_reference_refuses_string_and_float_labels_without_crashing():
    from ragas_compat.metrics.registry import metric

    case = parse_suite(suite_with(good_case(verdicts={
        "context_precision_with_reference": ["1", 1.0],
        "context_recall": [{"statement": "s", "attributed": "yes"}],
        "faithfulness": [{"statement": "s", "verdict": "0"}]},
        retrieved_context_ids=[True, "d2"], reference_context_ids=["d2"]))).cases[0]
    for name, bad in (("context_precision_with_reference", "'1'"), ("context_recall", "'yes'"),
                      ("faithfulness", "'0'"), ("id_context_precision", "True"), ("id_context_recall", "True")):
        outcome = metric(name).outcome(case)
        assert outcome.value is None and outcome.refused and bad in outcome.refused, name


@pytest.mark.parametrize("where,mutate,expected", [
    ("top level", lambda obj: obj.update(cases_=[]),
     "cases.json: $.cases_: unknown key 'cases_'; did you mean 'cases'?"),
    ("case", lambda obj: obj["cases"][0].update(corpus_relevent_count=4),
     "cases.json: case 'ok-case': $.cases[0].corpus_relevent_count: unknown key 'corpus_relevent_count'; "
     "did you mean 'corpus_relevant_count'?"),
    ("verdicts", lambda obj: obj["cases"][0]["verdicts"].update(faithfullness=[]),
     "cases.json: case 'ok-case': $.cases[0].verdicts.faithfullness: unknown key 'faithfullness'; "
     "did you mean 'faithfulness'?"),
    ("claim", lambda obj: obj["cases"][0]["verdicts"]["faithfulness"][0].update(verdicts=1),
     "cases.json: case 'ok-case': $.cases[0].verdicts.faithfulness[0].verdicts: unknown key 'verdicts'; "
     "did you mean 'verdict'?"),
    ("judge audit", lambda obj: obj["cases"][0].update(judge_audit={"human": {}, "judge": {}, "judges": {}}),
     "cases.json: case 'ok-case': $.cases[0].judge_audit.judges: unknown key 'judges'; did you mean 'judge'?"),
    ("judge replies", lambda obj: obj["cases"][0].update(judge_replies={"context_precision_with_referenc": {}}),
     "cases.json: case 'ok-case': $.cases[0].judge_replies.context_precision_with_referenc: unknown key "
     "'context_precision_with_referenc'; did you mean 'context_precision_with_reference'?"),
    ("no close match", lambda obj: obj["cases"][0].update(zzz=1),
     "cases.json: case 'ok-case': $.cases[0].zzz: unknown key 'zzz'; valid keys: candidate_contexts, category,"),
])
def test_unknown_keys_anywhere_name_the_closest_valid_key(where, mutate, expected):
    obj = suite_with(good_case())
    mutate(obj)
    problems = problems_of(obj)
    assert any(p.startswith(expected) for p in problems), problems


def test_judge_replies_are_for_label_lists_only():
    (line,) = problems_of(suite_with(good_case(judge_replies={"context_recall": {"0": "x"}})))
    assert "$.cases[0].judge_replies.context_recall: raw judge replies replace label-list verdicts only" in line


def test_an_empty_cases_list_is_an_error():
    assert problems_of(suite_with()) == ["cases.json: $.cases: expected at least one case, got an empty list"]


def test_verdict_kinds_are_read_from_the_schema():
    from ragas_compat.cases.loader import CLAIM_VERDICTS, LABEL_LIST_VERDICTS, _schema, verdict_keys_by_kind

    assert LABEL_LIST_VERDICTS == ("context_precision_with_reference", "context_precision_without_reference")
    assert CLAIM_VERDICTS[:5] == ("context_recall", "faithfulness", "factual_correctness", "context_entity_recall",
                                  "noise_sensitivity")  # in schema order; later metrics add theirs after
    assert {"answer_accuracy", "context_relevance", "response_groundedness"} <= set(CLAIM_VERDICTS)
    schema = _schema()
    schema["$defs"]["case"]["properties"]["verdicts"]["properties"]["my_metric"] = {"$ref": "#/$defs/labelList"}
    assert verdict_keys_by_kind(schema)["label_list"][-1] == "my_metric"  # one schema line
    schema["$defs"]["case"]["properties"]["verdicts"]["properties"]["broken"] = {"type": "array"}
    with pytest.raises(RuntimeError, match=r"verdicts\.broken must \$ref"):
        verdict_keys_by_kind(schema)
