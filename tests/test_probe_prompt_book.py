"""The scripted judge's answer book: lookup by content, and loud failure on any mismatch."""

from __future__ import annotations

import json

import pytest

from ragas_compat.probe.judge.prompt_book import INPUT_MARKER, OUTPUT_SUFFIX, PromptBook, StubMismatch

CP_INSTRUCTION = "Given question, answer and context verify if the context was useful."
NLI_INSTRUCTION = "Your task is to judge the faithfulness of a series of statements."


def render(instruction: str, data: dict) -> str:
    """The layout of ragas PydanticPrompt.to_string (instruction, schema, examples, input)."""
    return (f"{instruction}\nPlease return the output in a JSON format...\n"
            "--------EXAMPLES-----------\nExample 1\nInput: {}\nOutput: {}\n"
            "-----------------------------\n" + INPUT_MARKER
            + json.dumps(data, indent=4, ensure_ascii=False) + OUTPUT_SUFFIX)


def cp_input(context: str) -> dict:
    return {"question": "q", "context": context, "answer": "a"}


def book_with(*labels_by_context: tuple[str, object]) -> PromptBook:
    book = PromptBook()
    for i, (context, label) in enumerate(labels_by_context):
        book.expect("context_precision", CP_INSTRUCTION, cp_input(context),
                    {"reason": "r", "verdict": label}, label=f"[{i}]")
    return book


def test_answers_by_content_not_by_order():
    book = book_with(("c1", 1), ("c2", 0), ("c3", 2))
    assert json.loads(book.answer(render(CP_INSTRUCTION, cp_input("c3"))))["verdict"] == 2
    assert json.loads(book.answer(render(CP_INSTRUCTION, cp_input("c1"))))["verdict"] == 1
    assert json.loads(book.answer(render(CP_INSTRUCTION, cp_input("c2"))))["verdict"] == 0
    assert book.problems == [] and book.unasked() == [] and len(book.asked) == 3


def test_verdict_values_pass_through_as_given():
    book = book_with(("c1", True))
    assert book.answer(render(CP_INSTRUCTION, cp_input("c1"))) == '{"reason": "r", "verdict": true}'


def test_key_order_of_the_rendered_input_does_not_matter():
    book = book_with(("c1", 1))
    reordered = {"answer": "a", "context": "c1", "question": "q"}
    assert json.loads(book.answer(render(CP_INSTRUCTION, reordered)))["verdict"] == 1


def test_prompt_without_frozen_answer_fails_and_is_recorded():
    book = book_with(("c1", 1))
    with pytest.raises(StubMismatch, match="no frozen answer"):
        book.answer(render(CP_INSTRUCTION, cp_input("not in the case")))
    assert len(book.problems) == 1 and len(book.asked) == 1


def test_prompt_of_unknown_kind_fails():
    book = book_with(("c1", 1))
    with pytest.raises(StubMismatch, match="unknown kind"):
        book.answer(render(NLI_INSTRUCTION, cp_input("c1")))


def test_format_fix_request_is_named():
    book = book_with(("c1", 1))
    with pytest.raises(StubMismatch, match="fix its format"):
        book.answer(render("The output string did not satisfy the constraints given in the prompt.",
                           {"output_string": "x", "prompt_value": "y"}))


def test_prompt_asked_twice_fails():
    book = book_with(("c1", 1))
    book.answer(render(CP_INSTRUCTION, cp_input("c1")))
    with pytest.raises(StubMismatch, match="asked 2 times"):
        book.answer(render(CP_INSTRUCTION, cp_input("c1")))
    assert book.problems


def test_identical_prompt_expected_twice_with_same_reply_is_served_twice():
    book = book_with(("same", 1), ("same", 1))
    for _ in range(2):
        assert json.loads(book.answer(render(CP_INSTRUCTION, cp_input("same"))))["verdict"] == 1
    assert book.problems == [] and book.unasked() == []


def test_identical_prompt_needing_different_replies_is_ambiguous():
    book = book_with(("same", 1), ("same", 0))
    with pytest.raises(StubMismatch, match="ambiguous"):
        book.answer(render(CP_INSTRUCTION, cp_input("same")))


def test_expected_prompt_never_asked_is_reported():
    book = book_with(("c1", 1), ("c2", 0))
    book.answer(render(CP_INSTRUCTION, cp_input("c1")))
    assert book.expected_count == 2
    [missing] = book.unasked()
    assert "[1]" in missing and "asked 0" in missing


def test_text_without_the_input_block_fails():
    book = book_with(("c1", 1))
    with pytest.raises(StubMismatch, match="unrecognised prompt layout"):
        book.answer("free text prompt")
