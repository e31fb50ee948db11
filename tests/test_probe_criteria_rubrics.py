"""AspectCritic, SimpleCriteriaScore, RubricsScore and InstanceRubrics through the real Ragas classes (the
probe, the scripted judge): the bundled cases give the values the rules in pinned/expectations.toml
describe, and the judge's strictness samples are served as the generations of one call."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before Ragas is imported below

import pytest

from ragas_compat.cases import load_cases, load_default_suite
from ragas_compat.probe.judge.criteria import votes_script
from ragas_compat.probe.judge.prompt_book import INPUT_MARKER, OUTPUT_SUFFIX, PromptBook, StubMismatch
from ragas_compat.probe.judge.scripts import LEGACY_PROMPTS
from ragas_compat.runner import run_probe
from ragas_compat.values import RagasError, decode_ragas_value

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

IDS = ("criteria-unanimous", "criteria-split-votes", "criteria-even-strictness", "criteria-tied-votes",
       "criteria-no-votes", "criteria-empty-inputs", "rubric-out-of-scale")
VOTES = [f"legacy:{cls}{suffix}" for cls in ("AspectCritic", "SimpleCriteriaScore")
         for suffix in ("", "[strictness=2]", "[strictness=3]")]
RUBRICS = ["legacy:RubricsScore", "legacy:InstanceRubrics", "collections:DomainSpecificRubrics",
           "collections:InstanceSpecificRubrics"]


@pytest.fixture(scope="module")
def values():
    # criteria-no-votes is a harness limit, not in the bundled suite (a row nobody scored is drift)
    limits = load_cases(Path(__file__).parent / "data" / "harness_limit_cases.json")
    cases = [c.raw for c in load_default_suite().cases + limits.cases if c.id in IDS]
    run = run_probe(cases, targets=VOTES + RUBRICS)
    assert run.ok, run.error
    assert run.output["network_attempts"] == []
    return {(r["case_id"], r["target"]): decode_ragas_value(r["value"]) for r in run.output["results"]}


def test_unanimous_samples_give_the_vote_at_every_strictness(values):
    for target in VOTES:
        assert values[("criteria-unanimous", target)] == (1.0 if "Aspect" in target else 4.0)
    for target in RUBRICS:
        assert values[("criteria-unanimous", target)] == 4.0


@pytest.mark.parametrize(("case", "aspect", "simple"), [
    ("criteria-split-votes", 0.0, 2.0),      # majorities 1 / 4 over three samples
    ("criteria-even-strictness", 1.0, 3.0),  # strictness 2 made odd: majorities 0 / 5
    ("criteria-tied-votes", 1.0, 1.0),       # no majority
])
def test_ragas_returns_the_first_sample_whatever_the_strictness(values, case, aspect, simple):
    for suffix in ("", "[strictness=2]", "[strictness=3]"):
        assert values[(case, f"legacy:AspectCritic{suffix}")] == aspect
        assert values[(case, f"legacy:SimpleCriteriaScore{suffix}")] == simple


def test_a_case_without_samples_fails_loudly(values):
    for suffix in ("", "[strictness=2]", "[strictness=3]"):
        value = values[("criteria-no-votes", f"legacy:AspectCritic{suffix}")]
        assert isinstance(value, RagasError) and value.type == "StubMismatch"


def test_scores_off_the_scale_come_back_as_given(values):
    assert values[("rubric-out-of-scale", "legacy:AspectCritic[strictness=3]")] == 2.0
    assert values[("rubric-out-of-scale", "legacy:RubricsScore")] == 7.0
    assert values[("rubric-out-of-scale", "collections:DomainSpecificRubrics")] == 7.0
    assert values[("rubric-out-of-scale", "legacy:InstanceRubrics")] == 0.0
    assert values[("rubric-out-of-scale", "collections:InstanceSpecificRubrics")] == 0.0


def test_the_deprecation_warning_names_collections_classes_that_do_not_exist():
    # Ragas 0.4.3: "Importing AspectCritic from 'ragas.metrics' is deprecated ... from
    # ragas.metrics.collections import AspectCritic", but the collections API has no such class
    import warnings

    import ragas.metrics
    import ragas.metrics.collections as collections

    for name in ("AspectCritic", "SimpleCriteriaScore", "RubricsScore", "InstanceRubrics"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(ragas.metrics, name)
        assert f"from ragas.metrics.collections import {name}" in str(caught[0].message)
        assert not hasattr(collections, name)


def test_empty_inputs_and_an_empty_rubric(values):
    assert values[("criteria-empty-inputs", "legacy:AspectCritic")] == 0.0
    assert values[("criteria-empty-inputs", "legacy:RubricsScore")] == 1.0
    assert values[("criteria-empty-inputs", "legacy:InstanceRubrics")] == 1.0
    error = values[("criteria-empty-inputs", "collections:InstanceSpecificRubrics")]
    assert isinstance(error, RagasError) and error.type == "ValueError" and "rubrics must be provided" in error.message


# --------------------------------------------------------------------------- samples as generations

INSTRUCTION = "Evaluate the Input based on the criterial defined."


def render(data: dict) -> str:
    return f"{INSTRUCTION}\nschema ...{INPUT_MARKER}{json.dumps(data, indent=4)}{OUTPUT_SUFFIX}"


def samples_book(*votes: int) -> PromptBook:
    book = PromptBook()
    book.expect_samples("aspect_critic", INSTRUCTION, {"response": "a"}, [{"verdict": v} for v in votes], label="votes")
    return book


def test_a_call_for_n_generations_gets_the_first_n_samples():
    assert [json.loads(r)["verdict"] for r in samples_book(0, 1, 1).answer_generations(render({"response": "a"}), 3)] \
        == [0, 1, 1]
    assert json.loads(samples_book(0, 1, 1).answer(render({"response": "a"})))["verdict"] == 0
    assert samples_book(0, 1, 1).expected_count == 1


def test_samples_answer_one_call_and_no_more_than_given():
    book = samples_book(0, 1)
    with pytest.raises(StubMismatch, match="asked for 3 generations"):
        book.answer_generations(render({"response": "a"}), 3)
    book = samples_book(1)
    book.answer(render({"response": "a"}))
    with pytest.raises(StubMismatch, match="asked 2 times"):
        book.answer(render({"response": "a"}))
    assert book.problems


def test_unasked_samples_are_listed():
    assert samples_book(1, 1, 0).unasked() == ["aspect_critic prompt (votes) expected 3 time(s), asked 0"]


def test_rows_with_identical_input_and_votes_expect_one_asking_each():
    """One evaluate() over a dataset whose rows share an input (e.g. all-empty texts): each row's asking gets its
    own votes; the book was once refused at build time ("already expected") and the whole pass failed."""
    book = samples_book(0, 1, 1)
    book.expect_samples("aspect_critic", INSTRUCTION, {"response": "a"}, [{"verdict": v} for v in (0, 1, 1)],
                        label="votes")
    assert book.expected_count == 2
    assert book.unasked() == ["aspect_critic prompt (votes) expected 6 time(s), asked 0"]
    for _ in range(2):
        assert [json.loads(r)["verdict"] for r in book.answer_generations(render({"response": "a"}), 3)] == [0, 1, 1]
    assert not book.problems and not book.unasked()
    with pytest.raises(StubMismatch, match="all used"):
        book.answer_generations(render({"response": "a"}), 3)


def test_rows_with_identical_input_and_other_votes_are_ambiguous_when_asked():
    book = samples_book(0, 1, 1)
    book.expect_samples("aspect_critic", INSTRUCTION, {"response": "a"}, [{"verdict": v} for v in (1, 1, 1)],
                        label="votes")
    with pytest.raises(StubMismatch, match="ambiguous"):
        book.answer_generations(render({"response": "a"}), 3)
    assert book.problems


def test_a_plain_reply_serves_n_identical_generations_as_before():
    book = PromptBook()
    book.expect("aspect_critic", INSTRUCTION, {"response": "a"}, {"verdict": 1}, label="one")
    assert book.answer_generations(render({"response": "a"}), 2) == ['{"verdict": 1}'] * 2


def test_a_ragas_that_asked_for_strictness_generations_would_get_the_majority():
    from ragas.metrics._aspect_critic import AspectCritic, AspectCriticInput

    from ragas_compat.probe.stubs.legacy_llm import FrozenJudgeLLM

    book = PromptBook()
    critic = AspectCritic(name="c", definition="Is it right?", strictness=3, llm=FrozenJudgeLLM(book))
    case = {"user_input": "q", "response": "a", "retrieved_contexts": [], "reference": "r",
            "verdicts": {"aspect_critic": [{"verdict": 0}, {"verdict": 1}, {"verdict": 1}, {"verdict": 0}]}}
    votes_script("aspect_critic", 3)(LEGACY_PROMPTS, critic, case, book)
    prompt_input = AspectCriticInput(user_input="q", response="a", retrieved_contexts=[], reference="r")
    replies = asyncio.run(critic.single_turn_prompt.generate_multiple(data=prompt_input, llm=critic.llm, n=3))
    assert [r.verdict for r in replies] == [0, 1, 1]
    assert critic._compute_score(replies) == 1
    assert not book.problems and not book.unasked()


class Recorder:
    def __init__(self) -> None:
        self.inputs: list[dict] = []

    def expect(self, kind, instruction, prompt_input, reply, label):
        self.inputs.append(prompt_input)


def test_legacy_instance_rubrics_folds_the_contexts_into_the_question():
    from types import SimpleNamespace

    from ragas_compat.probe.judge.criteria import rubrics_script
    from ragas_compat.probe.judge.scripts import COLLECTIONS_PROMPTS

    prompt = SimpleNamespace(instruction="i")
    metric = SimpleNamespace(single_turn_prompt=prompt, scoring_prompt=prompt)
    rubric = {"score1_description": "bad", "score2_description": "good"}
    case = {"user_input": "q", "response": "a", "reference": "r", "retrieved_contexts": ["c1", "c2"],
            "rubrics": rubric, "verdicts": {"instance_rubrics": [{"score": 2}]}}
    legacy, collections = Recorder(), Recorder()
    rubrics_script("instance_rubrics")(LEGACY_PROMPTS, metric, case, legacy)
    rubrics_script("instance_rubrics")(COLLECTIONS_PROMPTS, metric, case, collections)
    assert legacy.inputs == [{"user_input": "q answer using context: c1\nc2", "response": "a", "reference": "r",
                              "rubrics": rubric}]
    assert collections.inputs == [{"user_input": "q", "response": "a", "reference": "r",
                                   "retrieved_contexts": ["c1", "c2"], "rubrics": rubric}]
    empty = Recorder()  # the collections class raises on an empty rubric before asking
    rubrics_script("instance_rubrics")(COLLECTIONS_PROMPTS, metric, {**case, "rubrics": {}}, empty)
    assert empty.inputs == []
