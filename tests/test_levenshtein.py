"""The reference's edit distance (``text_reference.levenshtein_distance``, bit-parallel) against the
textbook dynamic programme written out here, cell by cell: equal on every pair of texts."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from ragas_compat.compare.rules import levenshtein
from ragas_compat.metrics.text_reference import levenshtein_distance, levenshtein_similarity


def textbook(a: str, b: str) -> int:
    """Wagner-Fischer: the full table, one ``min`` per cell."""
    table = [[i + j if i == 0 or j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1,
                              table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return table[len(a)][len(b)]


SMALL_ALPHABET = st.text(alphabet="ab c", max_size=40)
ANY_TEXT = st.text(max_size=90)


@given(SMALL_ALPHABET, SMALL_ALPHABET)
@settings(max_examples=400, deadline=None)
def test_equal_to_the_textbook_programme_on_a_small_alphabet(a: str, b: str) -> None:
    assert levenshtein_distance(a, b) == textbook(a, b) == levenshtein_distance(b, a)


@given(ANY_TEXT, ANY_TEXT)
@settings(max_examples=300, deadline=None)
def test_equal_to_the_textbook_programme_on_any_text(a: str, b: str) -> None:
    assert levenshtein_distance(a, b) == textbook(a, b)
    assert levenshtein(a, b) == textbook(a, b)  # the rules' edit distance is the same function


def test_known_distances_and_word_boundaries() -> None:
    assert levenshtein_distance("kitten", "sitting") == 3
    assert levenshtein_distance("", "") == 0
    assert levenshtein_distance("", "abc") == levenshtein_distance("abc", "") == 3
    assert levenshtein_distance("flaw", "lawn") == 2
    # patterns longer than a machine word (64 and 65 code points): the carry crosses the old boundary
    for n in (63, 64, 65, 130):
        a, b = "a" * n, "a" * (n - 1) + "b"
        assert levenshtein_distance(a, b) == 1
        assert levenshtein_distance(a + "x" * 10, "y" + b) == textbook(a + "x" * 10, "y" + b)
    assert levenshtein_similarity("a" * 20, "b" * 19 + "a") == Fraction(1, 20)
