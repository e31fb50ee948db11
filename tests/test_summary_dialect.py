"""The 0.3.x collections SummaryScore: its three prompts rendered by functions of its module
(``extract_keyphrases_prompt(text)``, ``generate_questions_prompt(text, keyphrases)``,
``generate_answers_prompt(summary, questions)``, imported from ``ragas.prompt.metrics.summary_score``;
Ragas 0.3.9, the only 0.3.x release with the class) answered from the same frozen verdicts as the
0.4.x prompt objects and the legacy class.

Unit tests drive the summary script through a hand-written stand-in of that module (written from
reading the release's source, no Ragas code copied); the end-to-end test runs the probe on the bundled
``sum-*`` cases in Ragas 0.3.9's matrix environment (built into the matrix cache once, then reused).
"""

from __future__ import annotations

import json
import sys
import types

import pytest

from ragas_compat.probe.judge import summaries
from ragas_compat.probe.judge.dialects import PROMPT_FUNCTIONS, FunctionPrompts, dialect_book, prompts_for
from ragas_compat.probe.judge.prompt_book import PromptBook, StubMismatch
from ragas_compat.probe.protocol import API_COLLECTIONS

KEYPHRASES_INSTRUCTION = "Extract keyphrases of type: Person, Organization, Location."
QUESTIONS_INSTRUCTION = "Based on the given text and keyphrases, generate closed-ended questions."
ANSWERS_INSTRUCTION = "Based on the list of close-ended '1' or '0' questions, generate a JSON with key 'answers'."


def render_039(instruction: str, data: dict) -> str:
    """The 0.3.9 functions' layout: instruction, schema line, one example, then the input dumped with
    ``json.dumps`` (ASCII-escaped, lists indented four more)."""
    return (f"{instruction}\nPlease return the output in a JSON format that complies with the following schema as "
            'specified in JSON Schema:\n{"properties": {}}Do not use single quotes in your response but double '
            "quotes,properly escaped with a backslash.\n\n--------EXAMPLES-----------\nExample 1\nInput: {}\n"
            "Output: {}\n-----------------------------\n\nNow perform the same with the following input\n"
            f"input: {json.dumps(data, indent=4)}\nOutput: ")


def summary_module(name: str) -> types.ModuleType:
    """A stand-in for ``ragas.metrics.collections._summary_score`` at 0.3.9: the prompt functions it imports."""
    module = types.ModuleType(name)

    def extract_keyphrases_prompt(text: str) -> str:
        return render_039(KEYPHRASES_INSTRUCTION, {"text": text})

    def generate_questions_prompt(text: str, keyphrases: list[str]) -> str:
        return render_039(QUESTIONS_INSTRUCTION, {"text": text, "keyphrases": keyphrases})

    def generate_answers_prompt(summary: str, questions: list[str]) -> str:
        return render_039(ANSWERS_INSTRUCTION, {"summary": summary, "questions": questions})

    for function in (extract_keyphrases_prompt, generate_questions_prompt, generate_answers_prompt):
        function.__module__ = "ragas.prompt.metrics.summary_score"
        setattr(module, function.__name__, function)
    return module


@pytest.fixture
def metric_039(monkeypatch):
    name = "stand_in_summary_score_039"
    monkeypatch.setitem(sys.modules, name, summary_module(name))
    return type("SummaryScore", (), {"__module__": name, "length_penalty": True, "coeff": 0.5})()


def summary_case(contexts, response, answers, questions=("Was it 1833?", "Did they meet in London?")):
    return {"reference_contexts": list(contexts), "response": response,
            "verdicts": {"summary_score": [{"keyphrases": ["Lovelace", "1833"], "questions": list(questions),
                                            "answers": list(answers)}]}}


def test_every_summary_kind_names_its_0_3_prompt_function():
    for kind in (summaries.KEYPHRASES, summaries.QUESTIONS, summaries.ANSWERS):
        assert kind in PROMPT_FUNCTIONS, kind
    # the collections attributes of 0.4.x are named as the 0.3.9 functions were
    assert [PROMPT_FUNCTIONS[k] for k in (summaries.KEYPHRASES, summaries.QUESTIONS, summaries.ANSWERS)] == \
        [(summaries.ATTRIBUTES[API_COLLECTIONS][k],) for k in (summaries.KEYPHRASES, summaries.QUESTIONS,
                                                                summaries.ANSWERS)]


def test_the_0_3_summary_class_gets_the_function_dialect_and_its_instructions(metric_039):
    adapter = prompts_for(API_COLLECTIONS, metric_039)
    assert isinstance(adapter, FunctionPrompts)
    assert summaries.instruction(adapter, metric_039, summaries.KEYPHRASES) == KEYPHRASES_INSTRUCTION
    assert summaries.instruction(adapter, metric_039, summaries.QUESTIONS) == QUESTIONS_INSTRUCTION
    assert summaries.instruction(adapter, metric_039, summaries.ANSWERS) == ANSWERS_INSTRUCTION


@pytest.mark.parametrize("contexts", [["Ada Lovelace met Charles Babbage.", "In London, 1833."],
                                      ["Ada Lovelace a rencontré Babbage à Londres, « 1833 »."]],
                         ids=["ascii", "escaped-non-ascii"])
def test_the_three_function_prompts_are_answered_from_the_frozen_verdicts(metric_039, contexts):
    module = sys.modules[type(metric_039).__module__]
    case = summary_case(contexts, "Lovelace met Babbage in 1833.", [1, False])
    adapter, book = prompts_for(API_COLLECTIONS, metric_039), PromptBook()
    summaries.summary_script("summary_score")(adapter, metric_039, case, dialect_book(adapter, book))
    text = "\n".join(contexts)
    assert json.loads(book.answer(module.extract_keyphrases_prompt(text))) == {"keyphrases": ["Lovelace", "1833"]}
    asked = module.generate_questions_prompt(text, ["Lovelace", "1833"])
    assert json.loads(book.answer(asked))["questions"] == ["Was it 1833?", "Did they meet in London?"]
    answers = json.loads(book.answer(module.generate_answers_prompt(
        "Lovelace met Babbage in 1833.", ["Was it 1833?", "Did they meet in London?"])))
    assert answers == {"answers": ["1", "0"]}  # Ragas's own literals, as the class compares them
    assert book.problems == [] and book.unasked() == [] and book.expected_count == 3


def test_a_question_list_the_verdict_does_not_hold_is_not_answered(metric_039):
    module = sys.modules[type(metric_039).__module__]
    case = summary_case(["Ada Lovelace met Charles Babbage in 1833."], "Lovelace met Babbage.", [1, 1])
    adapter, book = prompts_for(API_COLLECTIONS, metric_039), PromptBook()
    summaries.summary_script("summary_score")(adapter, metric_039, case, dialect_book(adapter, book))
    with pytest.raises(StubMismatch):
        book.answer(module.generate_answers_prompt("Lovelace met Babbage.", ["Was it 1834?"]))


def test_the_0_3_class_on_whitespace_contexts_is_asked_nothing(metric_039):
    adapter, book = prompts_for(API_COLLECTIONS, metric_039), PromptBook()
    summaries.summary_script("summary_score")(adapter, metric_039, summary_case(["  "], "A summary.", [1, 1]),
                                              dialect_book(adapter, book))
    assert book.expected_count == 0 and book.unasked() == []


# -- end to end: the bundled sum-* cases in Ragas 0.3.9's environment ----------------------------------
@pytest.mark.slow
@pytest.mark.matrix_e2e
def test_the_0_3_9_collections_summary_score_scores_every_bundled_summary_case():
    import os
    from pathlib import Path

    from ragas_compat.cases import parse_suite
    from ragas_compat.resources import DEFAULT_SUITE, package_text
    from ragas_compat.tools.matrix.drift import build_matrix
    from ragas_compat.tools.matrix.environments import default_cache_dir, ensure_environments, parse_entries
    from ragas_compat.tools.matrix.run import run_matrix

    bundled = json.loads(package_text(DEFAULT_SUITE))
    bundled["cases"] = [c for c in bundled["cases"] if c["id"].startswith("sum-")]
    suite = parse_suite(bundled, source="bundled sum-* cases")
    cache = Path(os.environ.get("RAGAS_COMPAT_MATRIX_CACHE") or default_cache_dir())
    environments = ensure_environments(parse_entries("0.3.9"), cache_dir=cache, jobs=1)  # built once, then reused
    assert all(e.available for e in environments), [e.error for e in environments]
    columns, _ = run_matrix(environments, suite, jobs=1)
    assert columns[0].available, columns[0].error
    matrix = build_matrix(columns, {"name": suite.name, "source": suite.source, "cases": len(suite.cases)})
    cells = {(r.case_id, r.target): r.cells[0] for r in matrix.rows if r.target.startswith("collections:SummaryScore")}
    assert {case_id for case_id, _ in cells} == {c.id for c in suite.cases}  # every bundled summary case
    assert [key for key, cell in cells.items() if cell.harness_limit is not None] == []
    # Ragas's own errors where the class raises: empty text before asking, no answers after asking
    assert {key[0] for key, cell in cells.items() if cell.status == "error"} == {"sum-empty-source",
                                                                                 "sum-no-questions"}
    good = cells[("sum-good", "collections:SummaryScore[length_penalty=False]")]
    assert good.status == "value" and good.value == 0.75 and good.prompts == 3
    assert cells[("sum-fewer-answers", "collections:SummaryScore[length_penalty=False]")].value == 1.0
