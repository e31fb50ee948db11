"""The judge speaks every prompt dialect: the same frozen verdicts answer each Ragas prompt generation.

Unit tests feed the adapters (``probe_prompt_layouts``, ``probe_dialects``) hand-written renderings
of each generation's prompt text and hand-written stand-ins of its prompt objects (written from
reading each release's source; no Ragas code is copied and no old Ragas is needed):

- the current PydanticPrompt layout (0.2.6 on), its ``Input:``-labelled variant (0.3.x
  ``context_recall_prompt``) and the early 0.2.0-0.2.5 layout (null fields rendered);
- 0.3.x collections classes that render prompts with module-level functions;
- 0.2.0-0.2.x legacy classes with earlier prompt attribute names, segmented statement prompts,
  nested claim lists and AspectCritic's ``criteria`` input;
- 0.1.x ``Prompt`` objects and their ``key: value`` renderings, replies shaped as their examples.

The end-to-end tests run the probe in each built Ragas environment found in the matrix cache
(``$RAGAS_COMPAT_MATRIX_CACHE``, then ``~/.cache/ragas-compat/envs``) and skip, saying so, when the
environment is not there.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version
from pydantic import BaseModel

from ragas_compat.probe.judge import scripts as scripts
from ragas_compat.probe.judge.criteria import folded_questions, votes_script
from ragas_compat.probe.judge.dialects import (
    AliasedPrompts,
    DialectBook,
    FunctionPrompts,
    dialect_book,
    instruction_of_rendering,
    nested_reply,
    prompts_for,
    reply_like_example,
)
from ragas_compat.probe.judge.prompt_book import FORMAT_FIX_KIND, PromptBook, StubMismatch
from ragas_compat.probe.judge.prompt_layouts import (
    CURRENT,
    CURRENT_CAPITALISED,
    EARLY_0_2,
    EARLY_0_2_0,
    LayoutMismatch,
    split_layout,
)
from ragas_compat.probe.judge.ratings import rating_script
from ragas_compat.probe.protocol import API_COLLECTIONS, API_LEGACY

CP_INSTRUCTION = ('Given question, answer and context verify if the context was useful in arriving at the given '
                  'answer. Give verdict as "1" if useful and "0" if not with json output.')
RECALL_INSTRUCTION = ("Given a context, and an answer, analyze each sentence in the answer and classify if the "
                      "sentence can be attributed to the given context or not.")
STATEMENTS_INSTRUCTION = "Given a question, an answer, and sentences from the answer analyze the complexity of each sentence."
NLI_INSTRUCTION = "Your task is to judge the faithfulness of a series of statements based on a given context."
CRITIC_INSTRUCTION = "Given a input and response. Evaluate the submission only using the given criteria."
DECOMPOSE_INSTRUCTION = "Decompose and break down each of the input sentences into one or more standalone statements."


# -- hand-written renderings of each generation ------------------------------------------------
def render_current(instruction: str, data: dict, *, input_label: str = "input") -> str:
    """0.2.6 onward (and the 0.3.x prompt functions): schema, examples, input dumped without nulls."""
    shown = {k: v for k, v in data.items() if v is not None}
    return (f"{instruction}\nPlease return the output in a JSON format that complies with the following schema as "
            'specified in JSON Schema:\n{"properties": {}}Do not use single quotes in your response but double '
            "quotes,properly escaped with a backslash.\n\n--------EXAMPLES-----------\nExample 1\nInput: {}\n"
            "Output: {}\n-----------------------------\n\nNow perform the same with the following input\n"
            f"{input_label}: {json.dumps(shown, indent=4, ensure_ascii=False)}\nOutput: ")


def render_function_without_schema(instruction: str, data: dict) -> str:
    """0.3.x ``context_recall_prompt``: no schema line, and the input labelled ``Input:``."""
    return (f"{instruction}\n\n--------EXAMPLES-----------\nExample 1\nInput: {{}}\nOutput: {{}}\n"
            "-----------------------------\n\nNow perform the same with the following input\n"
            f"Input: {json.dumps(data, indent=4)}\nOutput: ")


def render_early_0_2(instruction: str, data: dict) -> str:
    """0.2.0-0.2.5: OpenAPI schema line, instruction repeated per example, null fields rendered."""
    return (f"{instruction}\nPlease return the output in a JSON format that complies with the following schema as "
            "specified in JSON Schema and OpenAPI specification:\n{'properties': {}}\nThese are some examples to "
            f"show how to perform the above instruction\n{instruction}\ninput: {{}}\noutput: {{}}\n"
            "Now perform the above instruction with the following input\n"
            f"input: {json.dumps(data, indent=4)}\n"
            "Respond only with a valid JSON object that complies with the specified schema.\noutput: ")


def render_0_2_0(instruction: str, data: dict) -> str:
    """0.2.0 alone: the early-0.2 input block, then ``output: `` with no "Respond only ..." line."""
    return render_early_0_2(instruction, data).replace(
        "Respond only with a valid JSON object that complies with the specified schema.\n", "")


def render_0_1(instruction: str, data: dict, output_key: str) -> str:
    """0.1.x ``Prompt.format``: ``key: value`` lines after "Your actual task:" (no JSON input block); a
    string value JSON-encoded, any other value written with ``str()``."""
    lines = "".join(f"\n{key}: {json.dumps(value) if isinstance(value, str) else value}"
                    for key, value in data.items())
    return (f"{instruction}\n\nThe output should be a well-formatted JSON instance.\n\nExamples:\n\nquestion: \"x\"\n"
            f"\nYour actual task:\n{lines}\n{output_key}: \n")


CP_INPUT = {"question": "q", "context": "c1", "answer": "a"}


def cp_book() -> PromptBook:
    book = PromptBook()
    book.expect(scripts.CONTEXT_PRECISION, CP_INSTRUCTION, CP_INPUT, {"reason": "r", "verdict": 1}, label="[0]")
    return book


@pytest.mark.parametrize("rendering", [
    render_current(CP_INSTRUCTION, CP_INPUT),
    render_current(CP_INSTRUCTION, CP_INPUT, input_label="Input"),
    render_early_0_2(CP_INSTRUCTION, CP_INPUT),
    render_early_0_2(CP_INSTRUCTION, {**CP_INPUT, "reference": None}),  # 0.2.0-0.2.5 render null fields
    render_0_2_0(CP_INSTRUCTION, {**CP_INPUT, "reference": None}),
    render_0_1(CP_INSTRUCTION, CP_INPUT, "verification"),
], ids=["current", "current-Input", "early-0.2", "early-0.2-null-field", "0.2.0", "0.1"])
def test_one_expectation_answers_every_pydantic_prompt_generation(rendering):
    book = cp_book()
    assert json.loads(book.answer(rendering)) == {"reason": "r", "verdict": 1}
    assert book.problems == [] and book.unasked() == []


def test_each_layout_is_recognised_by_its_own_text():
    assert split_layout(render_current(CP_INSTRUCTION, CP_INPUT))[2] is CURRENT
    assert split_layout(render_function_without_schema(RECALL_INSTRUCTION, CP_INPUT))[2] is CURRENT_CAPITALISED
    head, data, layout = split_layout(render_early_0_2(CP_INSTRUCTION, {**CP_INPUT, "reference": None}))
    assert layout is EARLY_0_2 and data == CP_INPUT and head.startswith(CP_INSTRUCTION)
    head, data, layout = split_layout(render_0_2_0(CP_INSTRUCTION, {**CP_INPUT, "reference": None}))
    assert layout is EARLY_0_2_0 and data == CP_INPUT and head.startswith(CP_INSTRUCTION)
    # an input block that is not JSON is the layout's, and fails loudly
    with pytest.raises(LayoutMismatch, match="not JSON"):
        split_layout(render_current(CP_INSTRUCTION, CP_INPUT).replace('"q"', "q"))


def test_a_text_of_no_known_layout_fails_loudly():
    book = cp_book()
    with pytest.raises(StubMismatch, match="unrecognised prompt layout"):
        book.answer(f"{CP_INSTRUCTION}\nquestion: q\ncontext: c1\nanswer: a")
    assert book.problems and book.unasked()


def test_0_1_list_values_are_read_as_the_lists_they_spell():
    statements = ["It's 1.", 'B "quoted".']
    for written in (json.dumps(statements), statements):  # json.dumps(list) (Faithfulness), str(list) (AnswerCorrectness)
        _, data, layout = split_layout(render_0_1(NLI_INSTRUCTION, {"context": "c", "statements": written}, "answer"))
        assert layout.name == "0.1" and data == {"context": "c", "statements": statements}
    _, data, _ = split_layout(render_0_1(CP_INSTRUCTION, {"question": "[not a list", "context": "c", "answer": "a"},
                                         "verification"))
    assert data["question"] == "[not a list"


# -- 0.3.x collections: prompts rendered by functions of the class's module ------------------------
def function_module(name: str, *, granular_decomposition: bool = False) -> types.ModuleType:
    """A stand-in for a 0.3.x collections metric module: the prompt functions it imports."""
    module = types.ModuleType(name)

    def context_precision_with_reference_prompt(question: str, context: str, reference: str) -> str:
        return render_current(CP_INSTRUCTION, {"question": question, "context": context, "answer": reference})

    def context_recall_prompt(question: str, context: str, answer: str) -> str:
        return render_function_without_schema(RECALL_INSTRUCTION,
                                              {"question": question, "context": context, "answer": answer})

    def claim_decomposition_prompt(response: str, atomicity: str = "low", coverage: str = "low") -> str:
        data = {"response": response, **({"atomicity": atomicity, "coverage": coverage} if granular_decomposition
                                         else {})}
        return render_current(DECOMPOSE_INSTRUCTION, data)

    def nli_statement_prompt(context: str, statements: list[str]) -> str:
        return render_current(NLI_INSTRUCTION, {"context": context, "statements": statements})

    def answer_accuracy_judge1_prompt(query: str, user_answer: str, reference_answer: str) -> str:
        return f"Rate the User Answer.\nQuestion: {query}\nUser Answer: {user_answer}\nReference: {reference_answer}"

    def answer_accuracy_judge2_prompt(query: str, user_answer: str, reference_answer: str) -> str:
        return f"I will rate the User Answer.\nQuestion: {query}\nUser: {user_answer}\nReference: {reference_answer}"

    for function in (context_precision_with_reference_prompt, context_recall_prompt, claim_decomposition_prompt,
                     nli_statement_prompt, answer_accuracy_judge1_prompt, answer_accuracy_judge2_prompt):
        function.__module__ = "ragas.prompt.metrics.stand_in"
        setattr(module, function.__name__, function)
    return module


def function_metric(monkeypatch, name: str = "stand_in_collections_metric", **module_options) -> object:
    module = function_module(name, **module_options)
    monkeypatch.setitem(sys.modules, name, module)
    cls = type("StandInMetric", (), {"__module__": name, "mode": "f1"})
    return cls()


def test_a_class_rendering_prompts_with_functions_gets_the_function_dialect(monkeypatch):
    metric = function_metric(monkeypatch)
    adapter = prompts_for(API_COLLECTIONS, metric)
    assert isinstance(adapter, FunctionPrompts)
    assert adapter.instruction(metric, scripts.CONTEXT_PRECISION) == CP_INSTRUCTION
    # no schema line: the instruction ends where the examples begin
    assert adapter.instruction(metric, scripts.CONTEXT_RECALL_CLASSIFICATION) == RECALL_INSTRUCTION
    with pytest.raises(AttributeError, match="no prompt function for entity_extraction"):
        adapter.instruction(metric, scripts.ENTITY_EXTRACTION)


def test_a_class_holding_prompt_objects_keeps_the_current_collections_dialect(monkeypatch):
    name = "stand_in_collections_metric_04"
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    metric = type("StandIn04", (), {"__module__": name})()
    metric.prompt = SimpleNamespace(instruction=CP_INSTRUCTION)
    assert prompts_for(API_COLLECTIONS, metric) is scripts.COLLECTIONS_PROMPTS


class GranularDecompositionInput(BaseModel):  # 0.4.x collections ClaimDecompositionInput
    response: str
    atomicity: str = "low"
    coverage: str = "low"


class ClaimsOutput(BaseModel):
    claims: list[str]


class DecompositionObject:
    """A 0.4.x collections prompt object whose ``to_string`` renders the input it is given, with or
    without its granularity fields (0.4.0 takes them but does not render them)."""

    input_model = GranularDecompositionInput
    output_model = ClaimsOutput
    instruction = DECOMPOSE_INSTRUCTION

    def __init__(self, renders_granularity: bool) -> None:
        self.renders_granularity = renders_granularity

    def to_string(self, data: GranularDecompositionInput) -> str:
        shown = data.model_dump() if self.renders_granularity else {"response": data.response}
        return render_current(DECOMPOSE_INSTRUCTION, shown)


@pytest.mark.parametrize("granular", [False, True], ids=["0.4.0", "granular"])
def test_a_class_holding_one_prompt_object_and_a_prompt_function_is_driven_through_both(monkeypatch, granular):
    """0.4.0 collections FactualCorrectness: its decomposition an object, its NLI a function of its module."""
    metric = function_metric(monkeypatch, f"stand_in_fc_040_{granular}")
    module = sys.modules[type(metric).__module__]
    metric.prompt = DecompositionObject(renders_granularity=granular)
    adapter = prompts_for(API_COLLECTIONS, metric)
    assert isinstance(adapter, FunctionPrompts) and adapter.decomposition_names_granularity is granular
    assert adapter.format_fix_after_raw_reply is scripts.COLLECTIONS_PROMPTS.format_fix_after_raw_reply
    case = {"response": "resp", "reference": "ref", "verdicts": {"factual_correctness": [
        {"from": "response", "statement": "a", "verdict": 1}, {"from": "reference", "statement": "b", "verdict": 0}]}}
    book = PromptBook()
    scripts.factual_correctness_script(adapter, metric, case, book)
    asked = metric.prompt.to_string(GranularDecompositionInput(response="resp"))
    assert json.loads(book.answer(asked))["claims"] == ["a"]
    assert [s["verdict"] for s in json.loads(book.answer(module.nli_statement_prompt("ref", ["a"])))["statements"]] \
        == [1]


def test_function_dialect_drives_context_precision_from_the_frozen_verdicts(monkeypatch):
    metric = function_metric(monkeypatch)
    module = sys.modules[type(metric).__module__]
    case = {"user_input": "q", "reference": "r", "retrieved_contexts": ["c1", "c2"],
            "verdicts": {"context_precision_with_reference": [1, 0]}}
    adapter, book = prompts_for(API_COLLECTIONS, metric), PromptBook()
    scripts.context_precision_script("context_precision_with_reference", "reference")(
        adapter, metric, case, dialect_book(adapter, book))
    render = module.context_precision_with_reference_prompt
    assert json.loads(book.answer(render("q", "c2", "r")))["verdict"] == 0
    assert json.loads(book.answer(render("q", "c1", "r")))["verdict"] == 1
    assert book.problems == [] and book.unasked() == []


def test_function_dialect_drives_context_recall_with_its_input_label(monkeypatch):
    metric = function_metric(monkeypatch)
    module = sys.modules[type(metric).__module__]
    case = {"user_input": "q", "reference": "r", "retrieved_contexts": ["c1", "c2"],
            "verdicts": {"context_recall": [{"statement": "s", "attributed": 1}]}}
    adapter, book = prompts_for(API_COLLECTIONS, metric), PromptBook()
    scripts.context_recall_script(adapter, metric, case, book)
    reply = json.loads(book.answer(module.context_recall_prompt("q", "c1\nc2", "r")))
    assert [c["attributed"] for c in reply["classifications"]] == [1] and book.unasked() == []


@pytest.mark.parametrize("granular", [False, True])
def test_the_decomposition_input_follows_the_functions_own_rendering(monkeypatch, granular):
    metric = function_metric(monkeypatch, f"stand_in_fc_{granular}", granular_decomposition=granular)
    module = sys.modules[type(metric).__module__]
    adapter = prompts_for(API_COLLECTIONS, metric)
    assert adapter.decomposition_names_granularity is granular
    case = {"response": "resp", "reference": "ref", "verdicts": {"factual_correctness": [
        {"from": "response", "statement": "a", "verdict": 1}, {"from": "reference", "statement": "b", "verdict": 0}]}}
    book = PromptBook()
    scripts.factual_correctness_script(adapter, metric, case, book)
    assert json.loads(book.answer(module.claim_decomposition_prompt("resp")))["claims"] == ["a"]
    assert json.loads(book.answer(module.claim_decomposition_prompt("ref")))["claims"] == ["b"]
    assert [s["verdict"] for s in json.loads(book.answer(module.nli_statement_prompt("ref", ["a"])))["statements"]] \
        == [1]
    assert [s["verdict"] for s in json.loads(book.answer(module.nli_statement_prompt("resp", ["b"])))["statements"]] \
        == [0]
    assert book.problems == [] and book.unasked() == []


def test_function_dialect_renders_rating_templates_on_the_case(monkeypatch):
    metric = function_metric(monkeypatch)
    module = sys.modules[type(metric).__module__]
    case = {"user_input": "q", "response": "resp", "reference": "ref",
            "verdicts": {"answer_accuracy": [{"template": 1, "rating": 4}, {"template": 2, "rating": 2}]}}
    adapter, book = prompts_for(API_COLLECTIONS, metric), PromptBook()
    rating_script("answer_accuracy")(adapter, metric, case, book)
    assert json.loads(book.answer_prompt(module.answer_accuracy_judge1_prompt("q", "resp", "ref"))) == {"rating": 4}
    # the second judge gets the texts swapped, as the class passes them
    assert json.loads(book.answer_prompt(module.answer_accuracy_judge2_prompt("q", "ref", "resp"))) == {"rating": 2}
    assert book.problems == []


def test_instruction_of_a_rendering_needs_a_boundary():
    assert instruction_of_rendering(render_current(CP_INSTRUCTION, CP_INPUT)) == CP_INSTRUCTION
    with pytest.raises(AttributeError):
        instruction_of_rendering("a prompt with no schema, examples or input block")


# -- 0.2.0-0.2.x legacy classes: earlier attribute names and shapes ---------------------------------
class SegmentedInput(BaseModel):  # the 0.2.x "long form answer" input: the class's own sentences added
    question: str
    answer: str
    sentences: dict[int, str]


class SentenceComponents(BaseModel):
    sentence_index: int
    simpler_statements: list[str]


class SentencesSimplified(BaseModel):
    sentences: list[SentenceComponents]


class NLIInput(BaseModel):
    context: str
    statements: list[str]


class NLIVerdict(BaseModel):
    statement: str
    reason: str
    verdict: int


class NLIOutput(BaseModel):
    statements: list[NLIVerdict]


class DecompositionInput(BaseModel):
    response: str
    sentences: list[str]


class NestedClaims(BaseModel):
    decomposed_claims: list[list[str]]


class CriticInput(BaseModel):  # 0.2.x AspectCritic: no contexts, its own definition as "criteria"
    user_input: str
    response: str
    criteria: str


class CriticOutput(BaseModel):
    reason: str
    verdict: int


def prompt(instruction: str, input_model: type, output_model: type) -> SimpleNamespace:
    return SimpleNamespace(instruction=instruction, input_model=input_model, output_model=output_model)


def early_faithfulness() -> SimpleNamespace:
    return SimpleNamespace(statement_prompt=prompt(STATEMENTS_INSTRUCTION, SegmentedInput, SentencesSimplified),
                           nli_statements_message=prompt(NLI_INSTRUCTION, NLIInput, NLIOutput))


FAITHFULNESS_CASE = {"user_input": "q", "response": "A is 1. B is 2.", "retrieved_contexts": ["c1", "c2"],
                     "verdicts": {"faithfulness": [{"statement": "A is 1", "verdict": 1},
                                                   {"statement": "B is 2", "verdict": 0}]}}


def test_legacy_dialect_finds_earlier_attribute_names_and_nests_the_statements():
    metric = early_faithfulness()
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    assert isinstance(adapter, AliasedPrompts)
    scripts.faithfulness_script(adapter, metric, FAITHFULNESS_CASE, dialect_book(adapter, book))
    # Ragas 0.2.x renders its own sentence segmentation into the input: not part of the key
    asked = render_early_0_2(STATEMENTS_INSTRUCTION, {"question": "q", "answer": "A is 1. B is 2.",
                                                      "sentences": {"0": "A is 1.", "1": "B is 2."}})
    reply = SentencesSimplified.model_validate_json(book.answer(asked))
    assert [s for c in reply.sentences for s in c.simpler_statements] == ["A is 1", "B is 2"]
    nli = NLIOutput.model_validate_json(book.answer(render_early_0_2(
        NLI_INSTRUCTION, {"context": "c1\nc2", "statements": ["A is 1", "B is 2"]})))
    assert [s.verdict for s in nli.statements] == [1, 0]
    assert book.problems == [] and book.unasked() == []


def test_zero_statements_allow_the_nli_prompt_some_releases_still_ask():
    case = {**FAITHFULNESS_CASE, "verdicts": {"faithfulness": []}}
    metric = early_faithfulness()
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    scripts.faithfulness_script(adapter, metric, case, dialect_book(adapter, book))
    # only the statements are expected: a release that does not ask the NLI prompt is fine
    assert book.expected_count == 1
    assert [line.split(" prompt")[0] for line in book.unasked()] == [scripts.STATEMENT_GENERATOR]
    nli = render_early_0_2(NLI_INSTRUCTION, {"context": "c1\nc2", "statements": []})
    assert json.loads(book.answer(nli)) == {"statements": []}  # a release that asks it is answered
    with pytest.raises(StubMismatch, match="asked 2 times"):
        book.answer(nli)


def test_legacy_dialect_drops_unrendered_fields_and_fills_the_criteria_from_the_instance():
    metric = SimpleNamespace(single_turn_prompt=prompt(CRITIC_INSTRUCTION, CriticInput, CriticOutput),
                             definition="Is it right?")
    case = {"user_input": "q", "response": "r", "retrieved_contexts": ["c"], "reference": "ref",
            "verdicts": {"aspect_critic": [{"verdict": 1}]}}
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    votes_script("aspect_critic", 1)(adapter, metric, case, dialect_book(adapter, book))
    asked = render_early_0_2(CRITIC_INSTRUCTION, {"user_input": "q", "response": "r", "criteria": "Is it right?"})
    assert CriticOutput.model_validate_json(book.answer(asked)).verdict == 1


@pytest.mark.parametrize("form", [0, 1], ids=["0.2.0-0.2.3", "0.2.4-0.2.5"])
def test_aspect_critic_answers_the_asking_with_the_contexts_folded_as_each_0_2_release_folds_them(form):
    metric = SimpleNamespace(single_turn_prompt=prompt(CRITIC_INSTRUCTION, CriticInput, CriticOutput),
                             definition="Is it right?")
    case = {"user_input": "q", "response": "r", "retrieved_contexts": ["c1", "c2"],
            "verdicts": {"aspect_critic": [{"verdict": 1}]}}
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    votes_script("aspect_critic", 1)(adapter, metric, case, dialect_book(adapter, book))
    folded = folded_questions("q", ["c1", "c2"])[form]
    assert "c1\nc2" in folded and folded != "q"
    asked = render_0_2_0(CRITIC_INSTRUCTION, {"user_input": folded, "response": "r", "criteria": "Is it right?"})
    assert CriticOutput.model_validate_json(book.answer(asked)).verdict == 1
    assert book.unasked() == [] and book.expected_count == 1
    with pytest.raises(StubMismatch, match="all used"):  # one asking, whichever form it takes
        book.answer(render_0_2_0(CRITIC_INSTRUCTION, {"user_input": "q", "response": "r", "criteria": "Is it right?"}))


class SimpleCriteriaInput(BaseModel):  # 0.2.x SimpleCriteriaScore: optional sample fields and its criteria
    user_input: str | None = None
    response: str | None = None
    retrieved_contexts: list[str] | None = None
    reference: str | None = None
    criteria: str


class ScoreOutput(BaseModel):
    reason: str
    score: int


def test_simple_criteria_answers_the_same_asking_with_the_contexts_folded_into_the_question():
    metric = SimpleNamespace(single_turn_prompt=prompt(CRITIC_INSTRUCTION, SimpleCriteriaInput, ScoreOutput),
                             definition="Is it right?")
    case = {"user_input": "q", "response": "r", "retrieved_contexts": ["c1", "c2"], "reference": "ref",
            "verdicts": {"simple_criteria": [{"score": 3}]}}
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    votes_script("simple_criteria", 1)(adapter, metric, case, dialect_book(adapter, book))
    folded = render_early_0_2(CRITIC_INSTRUCTION, {"user_input": "Question: q Answer using context: c1\nc2",
                                                   "response": "r", "criteria": "Is it right?"})
    assert ScoreOutput.model_validate_json(book.answer(folded)).score == 3
    assert book.unasked() == [] and book.expected_count == 1
    as_given = render_current(CRITIC_INSTRUCTION, {"user_input": "q", "response": "r", "retrieved_contexts": ["c1", "c2"],
                                                   "reference": "ref", "criteria": "Is it right?"})
    with pytest.raises(StubMismatch, match="all used"):  # one asking, whichever way it is rendered
        book.answer(as_given)


def test_a_rubric_the_class_renders_itself_is_filled_from_the_instance():
    class RubricInput(BaseModel):
        user_input: str
        response: str
        rubrics: dict[str, str]

    from ragas_compat.probe.judge.criteria import rubrics_script

    rubric = {"score1_description": "bad", "score2_description": "good"}
    metric = SimpleNamespace(single_turn_scoring_prompt=prompt(CRITIC_INSTRUCTION, RubricInput, ScoreOutput),
                             rubrics=rubric)
    case = {"user_input": "q", "response": "r", "verdicts": {"rubrics_score": [{"score": 2}]}}
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    rubrics_script("rubrics_score")(adapter, metric, case, dialect_book(adapter, book))
    asked = render_current(CRITIC_INSTRUCTION, {"user_input": "q", "response": "r", "rubrics": rubric})
    assert json.loads(book.answer(asked))["score"] == 2


def test_a_class_of_another_dialect_fails_in_the_script_with_attribute_error():
    adapter = prompts_for(API_LEGACY, SimpleNamespace())
    with pytest.raises(AttributeError, match="nli_statements_prompt"):
        adapter.instruction(SimpleNamespace(), scripts.NLI_STATEMENTS)


def test_the_book_seen_through_the_dialect_is_otherwise_the_book():
    book = PromptBook()
    seen = DialectBook(book, prompts_for(API_LEGACY, SimpleNamespace()))
    seen.expect(scripts.CONTEXT_PRECISION, CP_INSTRUCTION, CP_INPUT, {"verdict": 1}, label="x")
    assert seen.expected_count == 1 and seen.unasked() == book.unasked()
    assert dialect_book(scripts.COLLECTIONS_PROMPTS, book) is book


# -- 0.1.x: Prompt objects (input_keys, output_key, examples) --------------------------------------
def prompt_0_1(instruction: str, input_keys: list[str], output_key: str, example_output: object) -> SimpleNamespace:
    example = {**dict.fromkeys(input_keys, "x"), output_key: example_output}
    return SimpleNamespace(instruction=instruction, input_keys=input_keys, output_key=output_key, examples=[example])


def test_0_1_faithfulness_is_driven_with_replies_shaped_as_its_examples():
    metric = SimpleNamespace(
        statement_prompt=prompt_0_1(STATEMENTS_INSTRUCTION, ["question", "answer", "sentences"], "analysis",
                                    [{"sentence_index": 0, "simpler_statements": ["x"]}]),
        nli_statements_message=prompt_0_1(NLI_INSTRUCTION, ["context", "statements"], "answer",
                                          [{"statement": "x", "reason": "r", "verdict": 1}]))
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    scripts.faithfulness_script(adapter, metric, FAITHFULNESS_CASE, dialect_book(adapter, book))
    # 0.1.x renders its own "index:sentence" lines as the sentences: not part of the key
    asked = render_0_1(STATEMENTS_INSTRUCTION, {"question": "q", "answer": "A is 1. B is 2.",
                                                "sentences": "0:A is 1.\n1:B is 2."}, "analysis")
    assert json.loads(book.answer(asked)) == [{"sentence_index": 0, "simpler_statements": ["A is 1", "B is 2"]}]
    nli = render_0_1(NLI_INSTRUCTION, {"context": "c1\nc2", "statements": json.dumps(["A is 1", "B is 2"])}, "answer")
    assert [v["verdict"] for v in json.loads(book.answer(nli))] == [1, 0]  # a bare list, as 0.1.x parses
    assert book.problems == [] and book.unasked() == []


def test_0_1_answer_relevancy_is_asked_on_the_answer_and_the_joined_contexts():
    from ragas_compat.probe.judge.answers import QUESTION_GENERATION, answer_relevancy_script

    instruction = "Generate a question for the given answer and identify if answer is noncommittal."
    metric = SimpleNamespace(strictness=3, question_generation=prompt_0_1(
        instruction, ["answer", "context"], "output", {"question": "x", "noncommittal": 0}))
    case = {"user_input": "q", "response": "r", "retrieved_contexts": ["c1", "c2"], "verdicts": {"answer_relevancy": [
        {"statement": f"q{i}", "noncommittal": i % 2} for i in range(3)]}}
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    answer_relevancy_script(adapter, metric, case, dialect_book(adapter, book))
    # 0.1.x names the response "answer" and shows the joined contexts, which the frozen questions do not depend on
    asked = render_0_1(instruction, {"answer": "r", "context": "c1\nc2"}, "output")
    assert [json.loads(book.answer(asked))["question"] for _ in range(3)] == ["q0", "q1", "q2"]
    assert book.asked[-1]["kind"] == QUESTION_GENERATION and book.problems == [] and book.unasked() == []


def test_0_1_format_fix_is_answered_with_the_completion_itself():
    fix_instruction = "Below, the Completion did not satisfy the constraints given in the Prompt."
    book = PromptBook()
    book.expect_raw(scripts.CONTEXT_PRECISION, CP_INSTRUCTION, CP_INPUT, "verdict: yes", label="raw")
    book.expect_format_fix(fix_instruction, scripts.CONTEXT_PRECISION, CP_INPUT, "verdict: yes", "verdict: yes",
                           label="fix")
    original = render_0_1(CP_INSTRUCTION, CP_INPUT, "verification")
    assert book.answer(original) == "verdict: yes"
    fix = render_0_1(fix_instruction, {"prompt": original, "completion": "verdict: yes"}, "fixed_completion")
    assert book.answer(fix) == "verdict: yes"
    assert book.asked[-1]["kind"] == FORMAT_FIX_KIND and book.problems == [] and book.unasked() == []


def test_a_format_fix_asked_again_on_the_same_output_gets_the_same_fix():
    """0.2.0-0.2.2 ask the fix prompt again while its answer still does not parse; the judge fixes a given
    output string the same way each time. Any other prompt asked beyond its verdicts stays a mismatch."""
    fix_instruction = "The output string did not satisfy the constraints given in the prompt. Fix the output string."
    book = PromptBook()
    book.expect_raw(scripts.CONTEXT_PRECISION, CP_INSTRUCTION, CP_INPUT, "verdict: yes", label="raw")
    book.expect_format_fix(fix_instruction, scripts.CONTEXT_PRECISION, CP_INPUT, "verdict: yes", "verdict: yes",
                           label="fix")
    original = render_early_0_2(CP_INSTRUCTION, CP_INPUT)
    assert book.answer(original) == "verdict: yes"
    fix = render_0_2_0(fix_instruction, {"output_string": "verdict: yes", "prompt_value": original})
    assert [json.loads(book.answer(fix)) for _ in range(3)] == [{"text": "verdict: yes"}] * 3
    assert book.problems == [] and book.unasked() == []
    with pytest.raises(StubMismatch, match="asked 2 times"):
        book.answer(original)


@pytest.mark.parametrize(("reply", "example", "shaped"), [
    ({"classifications": [{"attributed": 1}]}, [{"statement": "s", "reason": "r", "attributed": 0}],
     [{"attributed": 1}]),
    ({"statements": ["a", "b"]}, [{"sentence_index": 0, "simpler_statements": ["x"]}],
     [{"sentence_index": 0, "simpler_statements": ["a", "b"]}]),
    ({"statements": []}, [{"sentence_index": 0, "simpler_statements": ["x"]}], []),
    ({"entities": ["a"]}, ["x"], ["a"]),
    ({"reason": "r", "verdict": 1}, {"reason": "r", "verdict": 0}, {"reason": "r", "verdict": 1}),
    ({"question": "q?"}, {"question": "x"}, {"question": "q?"}),
])
def test_0_1_replies_take_the_shape_of_the_example_output(reply, example, shaped):
    assert reply_like_example(reply, example) == shaped


# -- reply shapes ---------------------------------------------------------------------------------
statement_lists = st.lists(st.text(max_size=20), max_size=6)


@given(statement_lists)
def test_nested_replies_flatten_back_to_the_frozen_statements(statements):
    sentences = SentencesSimplified.model_validate(nested_reply({"statements": statements}, SentencesSimplified))
    assert [s for c in sentences.sentences for s in c.simpler_statements] == statements
    claims = NestedClaims.model_validate(nested_reply({"claims": statements}, NestedClaims))
    assert [c for group in claims.decomposed_claims for c in group] == statements


@given(statement_lists)
def test_a_reply_the_model_already_names_is_unchanged(statements):
    reply = {"statements": [{"statement": s, "reason": "r", "verdict": 1} for s in statements]}
    assert nested_reply(reply, NLIOutput) is reply
    assert nested_reply({"statements": statements}, None) == {"statements": statements}


def test_legacy_decomposition_of_0_2_is_answered_with_nested_claims():
    metric = SimpleNamespace(claim_decomposition_prompt=prompt(DECOMPOSE_INSTRUCTION, DecompositionInput, NestedClaims),
                             nli_prompt=prompt(NLI_INSTRUCTION, NLIInput, NLIOutput), mode="precision")
    case = {"response": "resp", "reference": "ref", "verdicts": {"factual_correctness": [
        {"from": "response", "statement": "a", "verdict": 1}, {"from": "reference", "statement": "b", "verdict": 0}]}}
    adapter, book = prompts_for(API_LEGACY, metric), PromptBook()
    scripts.factual_correctness_script(adapter, metric, case, dialect_book(adapter, book))
    asked = render_early_0_2(DECOMPOSE_INSTRUCTION, {"response": "resp", "sentences": ["resp"]})
    assert NestedClaims.model_validate_json(book.answer(asked)).decomposed_claims == [["a"]]
    # precision mode: the reference decomposition 0.2.x still asks is answered, never expected
    assert book.unasked() == ["claim_nli prompt (verdicts.factual_correctness (response verdicts)) expected 1 "
                              "time(s), asked 0"]
    reference = render_early_0_2(DECOMPOSE_INSTRUCTION, {"response": "ref", "sentences": ["ref"]})
    assert NestedClaims.model_validate_json(book.answer(reference)).decomposed_claims == [["b"]]
    # ... and so is the NLI of the reference's claims against the response (0.2.0-0.2.2 ask it too)
    verified = NLIOutput.model_validate_json(book.answer(render_early_0_2(
        NLI_INSTRUCTION, {"context": "resp", "statements": ["b"]})))
    assert [s.verdict for s in verified.statements] == [0] and book.expected_count == 2


# -- the book: answers some releases ask for -------------------------------------------------------
def test_samples_are_served_call_by_call_to_a_release_asking_one_at_a_time():
    book = PromptBook()
    book.expect_samples("aspect_critic", CRITIC_INSTRUCTION, {"response": "a"},
                        [{"verdict": 0}, {"verdict": 1}, {"verdict": 1}], label="votes")
    asked = render_current(CRITIC_INSTRUCTION, {"response": "a"})
    assert [json.loads(book.answer(asked))["verdict"] for _ in range(3)] == [0, 1, 1]
    with pytest.raises(StubMismatch, match="asked 4 times"):
        book.answer(asked)


def test_an_allowed_prompt_is_never_missed_nor_counted_as_expected():
    book = PromptBook()
    book.allow(scripts.CONTEXT_PRECISION, CP_INSTRUCTION, CP_INPUT, {"verdict": 0}, label="later context")
    assert book.unasked() == [] and book.expected_count == 0
    assert json.loads(book.answer(render_current(CP_INSTRUCTION, CP_INPUT))) == {"verdict": 0}
    # an allowance never replaces an expectation of the same prompt
    book = cp_book()
    book.allow(scripts.CONTEXT_PRECISION, CP_INSTRUCTION, CP_INPUT, {"verdict": 0}, label="later context")
    assert json.loads(book.answer(render_current(CP_INSTRUCTION, CP_INPUT)))["verdict"] == 1


# -- end to end: the probe in each built Ragas environment ------------------------------------------
def cached_environment(version: str) -> Path | None:
    """The built environment of ``version`` in the matrix cache (``$RAGAS_COMPAT_MATRIX_CACHE`` first)."""
    from ragas_compat.tools.matrix.environments import default_cache_dir, read_marker

    folders = [Path(p) for p in (os.environ.get("RAGAS_COMPAT_MATRIX_CACHE"), str(default_cache_dir())) if p]
    for folder in folders:
        env = folder / version
        if (env / "bin" / "python").exists() and read_marker(env) is not None:
            return env
    return None


# the one case whose judge has nothing to say (no votes): the judge cannot answer there in every release
NOTHING_TO_ANSWER = {"criteria-no-votes"}

# The harness's one listed limit here (docs/metrics.md, FaithfulnesswithHHEM): below 0.2.9 Ragas iterates the
# classifier's score tensor (``scores += batch_scores``, 0-d tensors summed and divided), which the frozen
# classifier does not model (stubs/hhem_classifier.py TensorNotModelled). Exempt there only, and only while
# it is still so: the test fails once those cells score, so the exemption goes.
# (0.1.x spells the class FaithulnesswithHHEM: not there under this name)
TENSOR_NOT_MODELLED = ("legacy:FaithfulnesswithHHEM", "0.2.0", "0.2.9", "harness: own error (TensorNotModelled)")


def _not_modelled_here(version: str) -> bool:
    _, first, below, _ = TENSOR_NOT_MODELLED
    return Version(first) <= Version(version) < Version(below)


def _not_modelled(version: str, target: str, text: str) -> bool:
    return target == TENSOR_NOT_MODELLED[0] and _not_modelled_here(version) and text == TENSOR_NOT_MODELLED[3]


def run_column(version: str):
    from ragas_compat.cases import load_default_suite
    from ragas_compat.tools.matrix.drift import build_matrix
    from ragas_compat.tools.matrix.environments import Environment
    from ragas_compat.tools.matrix.run import run_matrix

    env = cached_environment(version)
    if env is None:
        pytest.skip(f"Ragas {version}'s environment is not built in the matrix cache "
                    f"(build it: ragas-compat matrix --versions {version})")
    environment = Environment(version, "release", version, str(env / "bin" / "python"), status="reused", path=env)
    suite = load_default_suite()
    columns, _ = run_matrix([environment], suite, jobs=1)
    assert columns[0].available, columns[0].error
    return build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": len(suite.cases)})


@pytest.mark.slow
@pytest.mark.matrix_e2e
@pytest.mark.parametrize("version", ["0.1.21", "0.2.0", "0.2.2", "0.2.3", "0.2.4", "0.2.6", "0.2.15", "0.3.9", "0.4.0"])
def test_every_judged_cell_of_a_release_is_driven_by_the_frozen_verdicts(version):
    matrix = run_column(version)
    # the judge's limits; a dependency the environment does not install (a string or table metric's
    # optional library) is the environment's, not the judge's
    limits = [(r.case_id, r.target, r.cells[0].text) for r in matrix.rows
              if r.cells[0].harness_limit not in (None, "dependency_missing") and r.case_id not in NOTHING_TO_ANSWER]
    exempt = [limit for limit in limits if _not_modelled(version, limit[1], limit[2])]
    assert [limit for limit in limits if limit not in exempt] == []
    if _not_modelled_here(version):  # still needed, else remove it
        assert exempt, f"{version}: FaithfulnesswithHHEM scores now; remove TENSOR_NOT_MODELLED"
    values = {(r.case_id, r.target): r.cells[0] for r in matrix.rows}
    assert values[("cp-worked-example", "legacy:ContextPrecision")].value == pytest.approx(5 / 6)
    if version == "0.3.9":  # the collections classes of 0.3.x score the same verdicts
        for target in ("collections:ContextPrecisionWithReference", "collections:ContextRecall",
                       "collections:Faithfulness"):
            assert values[("cp-worked-example", target)].status == "value", target
    if version == "0.2.3":  # a behaviour the early dialect makes visible: 0.2.3 asks its NLI prompt on zero
        # statements (checked on this column rather than on a second probe run of the same release)
        zero = values[("edge-zero-response-claims", "legacy:Faithfulness")]
        assert zero.prompts == 2 and zero.harness_limit is None
