"""The scripted judge's answer book: lookup by content, and loud failure on any mismatch."""

from __future__ import annotations

import asyncio
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


# -- identical rows scored concurrently (evaluate()): served per asking asyncio task ---------------------

TA_INSTRUCTION = "Given a topic, classify if the AI refused to answer the question about the topic."
RETRY_TEXT = "Rate the answer 0, 2 or 4.\nAnswer: Paris\nRating:"


def topic_input() -> dict:
    return {"user_input": "conversation", "topic": "billing"}


def book_of_rows(*sequences: list[int]) -> PromptBook:
    """One content-keyed prompt, each row (its own token) expecting ``sequence`` in turn."""
    book = PromptBook()
    for sequence in sequences:
        row = object()
        for i, refused in enumerate(sequence):
            book.expect("topic_refused", TA_INSTRUCTION, topic_input(), {"refused_to_answer": refused},
                        label=f"[{i}].refused", row=row)
    return book


async def ask_in_turn(answer, prompt: str, times: int) -> list[str]:
    """One row's askings of ``prompt``, one after another in this task, yielding between them."""
    replies = []
    for _ in range(times):
        replies.append(answer(prompt))
        await asyncio.sleep(0)  # the other row's task asks in between
    return replies


def refused(replies: list[str]) -> list[int]:
    return [json.loads(r)["refused_to_answer"] for r in replies]


def test_identical_rows_asked_interleaved_from_two_tasks_get_their_own_sequences():
    book = book_of_rows([0, 1], [0, 1])
    prompt = render(TA_INSTRUCTION, topic_input())

    async def both():
        return await asyncio.gather(ask_in_turn(book.answer, prompt, 2), ask_in_turn(book.answer, prompt, 2))

    first, second = asyncio.run(both())
    assert refused(first) == refused(second) == [0, 1]
    assert book.problems == [] and book.unasked() == []


def test_identical_rows_with_different_sequences_stay_ambiguous():
    book = book_of_rows([0, 1], [1, 0])
    prompt = render(TA_INSTRUCTION, topic_input())

    async def one():
        return book.answer(prompt)

    with pytest.raises(StubMismatch, match="ambiguous"):
        asyncio.run(one())


def test_identical_rows_outside_an_event_loop_stay_ambiguous():
    book = book_of_rows([0, 1], [0, 1])
    with pytest.raises(StubMismatch, match="ambiguous"):
        book.answer(render(TA_INSTRUCTION, topic_input()))


def test_askings_from_a_child_task_per_call_are_flagged():
    # a metric that gathered each call in a task of its own: every task would get reply[0], silently
    book = book_of_rows([0, 1], [0, 1])
    prompt = render(TA_INSTRUCTION, topic_input())

    async def one_call():
        return book.answer(prompt)

    async def row():
        return [await asyncio.create_task(one_call()) for _ in range(2)]

    async def both():
        return await asyncio.gather(row(), row(), return_exceptions=True)

    asyncio.run(both())
    assert any("asked from 3 asyncio tasks; 2 rows expect it" in p for p in book.problems)


def test_a_task_not_asking_one_rows_whole_sequence_is_flagged_at_the_end():
    book = book_of_rows([0, 1], [0, 1])
    prompt = render(TA_INSTRUCTION, topic_input())

    async def both():
        return await asyncio.gather(ask_in_turn(book.answer, prompt, 2), ask_in_turn(book.answer, prompt, 1))

    asyncio.run(both())
    assert book.problems == []
    unasked = book.unasked()
    assert "expected 4 time(s), asked 3" in unasked[0]
    assert "asked across 2 asyncio tasks, 1 of them not 2 times" in unasked[1]


def test_a_task_asking_beyond_one_rows_sequence_fails():
    book = book_of_rows([0, 1], [0, 1])
    prompt = render(TA_INSTRUCTION, topic_input())
    with pytest.raises(StubMismatch, match="asked 3 times within one asyncio task"):
        asyncio.run(ask_in_turn(book.answer, prompt, 3))


def test_one_row_replays_in_order_with_or_without_a_task():
    prompt = render(TA_INSTRUCTION, topic_input())
    book = book_of_rows([0, 1])
    assert refused([book.answer(prompt), book.answer(prompt)]) == [0, 1]
    assert book.problems == [] and book.unasked() == []

    book = book_of_rows([0, 1])
    assert refused(asyncio.run(ask_in_turn(book.answer, prompt, 2))) == [0, 1]
    assert book.problems == [] and book.unasked() == []
    assert not next(iter(book._entries.values())).per_task  # one row: never served per task


def test_identical_text_rows_asked_interleaved_get_their_own_retries():
    book = PromptBook()
    for _ in range(2):  # two identical rows: the first reply unusable, the retry good
        book.expect_text("rating", RETRY_TEXT, ["no rating", "4"], label="verdicts.rating")

    async def both():
        return await asyncio.gather(ask_in_turn(book.answer, RETRY_TEXT, 2), ask_in_turn(book.answer, RETRY_TEXT, 2))

    assert asyncio.run(both()) == [["no rating", "4"], ["no rating", "4"]]
    assert book.problems == [] and book.unasked() == []


def test_identical_text_rows_a_task_may_stop_early_and_asks_on_get_the_last_reply():
    book = PromptBook()
    for _ in range(2):
        book.expect_text("rating", RETRY_TEXT, ["no rating", "4"], label="verdicts.rating")

    async def both():
        return await asyncio.gather(ask_in_turn(book.answer, RETRY_TEXT, 1), ask_in_turn(book.answer, RETRY_TEXT, 3))

    assert asyncio.run(both()) == [["no rating"], ["no rating", "4", "4"]]
    assert book.problems == []


def test_text_rows_with_different_replies_stay_ambiguous_and_more_tasks_than_rows_are_flagged():
    book = PromptBook()
    book.expect_text("rating", RETRY_TEXT, ["no rating", "4"], label="verdicts.rating")
    book.expect_text("rating", RETRY_TEXT, ["no rating", "2"], label="verdicts.rating")

    async def one():
        return book.answer(RETRY_TEXT)

    with pytest.raises(StubMismatch, match="ambiguous"):
        asyncio.run(one())

    book = PromptBook()
    for _ in range(2):
        book.expect_text("rating", RETRY_TEXT, ["no rating", "4"], label="verdicts.rating")
    for _ in range(2):
        assert asyncio.run(one()) == "no rating"  # each asyncio.run: a task of its own
    with pytest.raises(StubMismatch, match="asked from 3 asyncio tasks; 2 rows expect it"):
        asyncio.run(one())
    with pytest.raises(StubMismatch, match="ambiguous"):  # outside an event loop: as before
        book.answer(RETRY_TEXT)


def test_one_text_row_replays_its_retries_in_order_without_a_loop():
    book = PromptBook()
    book.expect_text("rating", RETRY_TEXT, ["no rating", "4"], label="verdicts.rating")
    assert [book.answer(RETRY_TEXT) for _ in range(3)] == ["no rating", "4", "4"]
    assert book.problems == [] and not book._texts[RETRY_TEXT].per_task


AC_INSTRUCTION = "Evaluate the Input based on the criterial defined."


def sampled_rows(rows: int, votes: list[int]) -> PromptBook:
    book = PromptBook()
    for _ in range(rows):  # identical rows: the same input, the same sampled votes
        book.expect_samples("aspect_critic", AC_INSTRUCTION, {"response": "r"}, [{"verdict": v} for v in votes],
                            label="verdicts.aspect_critic")
    return book


def test_identical_sampled_rows_each_read_their_own_first_sample():
    # Ragas 0.4.3's AspectCritic asks one generation and reads it: served in turn across rows, the second row
    # got the first row's second sample
    book = sampled_rows(2, [0, 1, 1])
    prompt = render(AC_INSTRUCTION, {"response": "r"})

    async def both():
        return await asyncio.gather(ask_in_turn(book.answer, prompt, 1), ask_in_turn(book.answer, prompt, 1))

    first, second = asyncio.run(both())
    assert [json.loads(r)["verdict"] for r in first + second] == [0, 0]
    assert book.problems == [] and book.unasked() == []


def test_identical_sampled_rows_asked_from_more_tasks_than_rows_are_flagged():
    book = sampled_rows(2, [0, 1, 1])
    prompt = render(AC_INSTRUCTION, {"response": "r"})

    async def one():
        return book.prompt_generations(prompt, 3)

    assert asyncio.run(one()) == asyncio.run(one())  # each row all three of its own samples
    with pytest.raises(StubMismatch, match="asked from 3 asyncio tasks; 2 rows expect it"):
        asyncio.run(one())
