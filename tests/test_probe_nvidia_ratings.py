"""AnswerAccuracy, ContextRelevance, ResponseGroundedness through the real Ragas classes of both APIs
(the probe, the scripted judge in raw-prompt mode): the bundled cases give the values their
descriptions compute by hand, and the raw-prompt mode of the answer book fails loudly on anything
it was not scripted for."""

from __future__ import annotations

import math

import pytest
from bundled_probe import bundled_values

from ragas_compat.probe.judge.prompt_book import PromptBook, StubMismatch
from ragas_compat.probe.judge.ratings import reply_text
from ragas_compat.values import RagasError

pytestmark = pytest.mark.slow  # the module's fixtures run the real probe (Ragas imported in a subprocess)

CLASSES = ("AnswerAccuracy", "ContextRelevance", "ResponseGroundedness")
TARGETS = [f"{api}:{cls}" for api in ("legacy", "collections") for cls in CLASSES]


# --------------------------------------------------------------------------- the answer book's raw-prompt mode

def test_raw_prompt_is_answered_by_its_whole_text_in_asking_order_and_the_last_reply_repeats():
    book = PromptBook()
    book.expect_text("rating_template1", "Rate this: A\nThe rating is:\n", ["n/a", "4"], label="t1")
    assert [book.answer("Rate this: A\nThe rating is:\n") for _ in range(3)] == ["n/a", "4", "4"]
    assert book.problems == [] and book.unasked() == [] and len(book.asked) == 3
    assert book.scripted_text("Rate this: A\nThe rating is:\n") and not book.scripted_text("Rate this: B")


def test_an_unscripted_raw_prompt_fails_loudly_and_is_recorded():
    book = PromptBook()
    book.expect_text("rating_template1", "Rate this: A\nThe rating is:\n", ["4"], label="t1")
    with pytest.raises(StubMismatch, match="unrecognised prompt layout"):
        book.answer("Rate this: A (a changed template)\nThe rating is:\n")
    assert len(book.problems) == 1


def test_the_same_raw_prompt_with_other_replies_is_ambiguous():
    book = PromptBook()
    book.expect_text("rating_template1", "same text", ["2"], label="case 1")
    book.expect_text("rating_template1", "same text", ["2"], label="case 2")   # identical: one judge, fine
    assert book.answer("same text") == "2"
    book.expect_text("rating_template1", "same text", ["0"], label="case 3")
    with pytest.raises(StubMismatch, match="ambiguous"):
        book.answer("same text")


def test_replies_per_api():
    assert reply_text(4, "legacy") == "4"
    assert reply_text(4, "collections") == '{"rating": 4}'
    assert reply_text("Rating: 2", "collections") == "Rating: 2"


# --------------------------------------------------------------------------- the bundled cases through Ragas

@pytest.fixture(scope="module")
def values():
    return bundled_values(lambda case_id: case_id.startswith("nv-"), TARGETS)


def both(values, case_id: str, cls: str) -> tuple[object, object]:
    return values[(case_id, f"legacy:{cls}")], values[(case_id, f"collections:{cls}")]


def test_definition_cases_agree_on_both_apis(values):
    assert both(values, "nv-aa-templates-disagree", "AnswerAccuracy") == (0.75, 0.75)
    assert both(values, "nv-cr-worked-example", "ContextRelevance") == (1.0, 1.0)
    assert both(values, "nv-cr-retry-then-valid", "ContextRelevance") == (0.75, 0.75)
    assert both(values, "nv-rg-worked-example", "ResponseGroundedness") == (1.0, 1.0)
    assert both(values, "nv-rg-templates-disagree", "ResponseGroundedness") == (0.25, 0.25)
    assert both(values, "nv-aa-second-template-unparseable", "AnswerAccuracy") == (1.0, 1.0)
    assert both(values, "nv-rg-second-template-fails", "ResponseGroundedness") == (0.5, 0.5)


def test_legacy_reads_digits_the_definition_does_not_count(values):
    assert both(values, "nv-aa-rating-out-of-scale", "AnswerAccuracy") == (0.875, 1.0)
    assert both(values, "nv-cr-reply-text-with-digit", "ContextRelevance") == (0.5, 0.0)
    legacy, collections = both(values, "nv-aa-no-valid-rating", "AnswerAccuracy")
    assert legacy == 0.75 and math.isnan(collections)


@pytest.mark.parametrize(("case_id", "cls"), [("nv-aa-first-template-unparseable", "AnswerAccuracy"),
                                              ("nv-rg-first-template-fails", "ResponseGroundedness")])
def test_legacy_is_nan_when_only_the_first_template_fails(values, case_id, cls):
    legacy, collections = both(values, case_id, cls)
    assert math.isnan(legacy) and collections == 0.5


def test_no_valid_rating_is_nan_on_both_apis(values):
    assert all(math.isnan(v) for v in both(values, "nv-cr-no-valid-rating", "ContextRelevance"))


def test_fixed_scores_and_empty_inputs(values):
    assert both(values, "nv-cr-question-contains-context", "ContextRelevance") == (0.0, 0.0)
    assert both(values, "nv-rg-response-in-context", "ResponseGroundedness") == (1.0, 0.5)
    for case_id, cls, legacy_value in (("nv-cr-empty-retrieval", "ContextRelevance", 0.0),
                                       ("nv-aa-empty-response", "AnswerAccuracy", 0.0),
                                       ("nv-rg-empty-response", "ResponseGroundedness", 0.0)):
        legacy, collections = both(values, case_id, cls)
        assert legacy == legacy_value
        assert isinstance(collections, RagasError) and collections.type == "ValueError"
        assert "is missing" in collections.message
