"""QuotedSpansAlignment: the fraction of the response's quoted spans found verbatim in a retrieved context.

Collections API only (``ragas.metrics.collections.QuotedSpansAlignment``; Ragas 0.4.3 has no legacy
class). It runs on cases with ``"quoted_spans": true`` and reads ``response`` and ``retrieved_contexts``;
the class's defaults (``casefold=True``, ``min_span_words=3``) are the audited configuration.

Reference (the class's documented definition):

- a quoted span is the text between an opening quotation mark and its closing mark: ``"..."``,
  ``“...”``, ``„...“`` or ``„...”``, ``‘...’`` and ``'...'``; a ``'`` or ``’`` between two letters or digits
  is an apostrophe (``don't``), not a quotation mark; a span may run over a line break; nested marks
  belong to the outer span;
- a span counts when it has at least 3 words (whitespace-separated, after stripping);
- normalisation: whitespace runs collapsed to one space, ends stripped, lower-cased (``str.lower``);
- a span is aligned when its normalised text occurs in the normalised text of one retrieved context;
- value = aligned spans / spans; undefined (``no_quoted_spans``) when the response has no span.

Ragas's own reading, recomputed as named variants: it searches every span in the contexts joined with
a space (``contexts_joined``: a span may run from one context into the next); and it finds spans with one
regular expression in which any of ten marks (``" “ ” „ ‟ ' ‘ ’ ` ´``) opens a span and any closes it, on
one line (``ragas_quote_marks``: an apostrophe opens or closes a span, a backtick quotes). With no span
it returns 1.0 (``no_span_scores_one``; the reference: undefined).

The legacy function ``ragas.metrics.quoted_spans.quoted_spans_alignment(answers, sources)`` (Ragas 0.4.3
exports no legacy class; the probe calls the function on a dataset of the case alone, target
``legacy:quoted_spans_alignment``) searches the contexts joined with a space too, but its pattern holds only
the straight marks ``" ' ` ´`` (its source's "curly" quotes are straight ones), so a span in curly quotes
is not found (``straight_quote_marks_only``), and with no span it returns 0.0 (``no_span_scores_zero``),
where the class returns 1.0.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ragas_compat.cases.model import Case
from ragas_compat.metrics.outcome import ReferenceOutcome
from ragas_compat.metrics.spec import ExplainAdapter, ExplainInput, FuzzDraw, MetricSpec, Quantity, RagasTargets

FIELDS = ("response", "retrieved_contexts")
REQUIRES = ("quoted_spans",)
MIN_SPAN_WORDS = 3
NO_SPANS = "no_quoted_spans"
DENOMINATOR = "quoted spans of at least 3 words in the response"
TEXTS_HELP = ("--retrieved JSON-LIST --reference JSON-LIST: the response (a one-item list) and the retrieved "
              "contexts (e.g. --retrieved '[\"He said \\\"the results are significant\\\".\"]' "
              "--reference '[\"The results are significant.\"]')")

# opening mark -> the marks that close it
PAIRS: dict[str, str] = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c\u201d", "\u2018": "\u2019", "'": "'"}
APOSTROPHES = "'\u2019"

# Ragas's extraction: any of these marks opens a span and any closes it; "." does not cross a line break
RAGAS_MARKS = "\"\u201c\u201d\u201e\u201f'\u2018\u2019`\u00b4"
_RAGAS_QUOTE = re.compile(f"[{re.escape(RAGAS_MARKS)}](.*?)[{re.escape(RAGAS_MARKS)}]")
# the legacy function's extraction: the same, with the straight marks only
FUNCTION_MARKS = "\"'`\u00b4"
_FUNCTION_QUOTE = re.compile(f"[{re.escape(FUNCTION_MARKS)}](.*?)[{re.escape(FUNCTION_MARKS)}]")

CONTEXTS_JOINED = ("QuotedSpansAlignment searches every span in the retrieved contexts joined with a space, so a "
                   "span that runs from the end of one context into the next counts as found")
NO_SPAN_SCORES_ONE = ("QuotedSpansAlignment returns 1.0 when the response quotes no span of 3 words or more (0/0 for "
                      "the reference): a response without a quotation scores as if every quotation were found")
RAGAS_QUOTE_MARKS = ("QuotedSpansAlignment finds spans with one regular expression: any of ten marks (\" “ ” „ ‟ ' ‘ "
                     "’ ` ´) opens a span and any closes it, on one line, so an apostrophe (don't) opens or closes "
                     "a span and a span never crosses a line break (contexts joined with a space, as always)")

STRAIGHT_QUOTE_MARKS_ONLY = ("the legacy function quoted_spans_alignment finds spans with a pattern of the straight marks "
                             "only (\" ' ` ´; its source's curly quotes are straight ones), any opening and any closing "
                             "on one line: a span in curly quotes (“…”, ‘…’, „…“) is not found, and without a span it "
                             "returns 0.0 (contexts joined with a space)")
NO_SPAN_SCORES_ZERO = ("the legacy function quoted_spans_alignment returns 0.0 when the response quotes no span of 3 "
                       "words or more (0/0 for the reference; the QuotedSpansAlignment class returns 1.0): a "
                       "response without a quotation scores as if every quotation were made up")


def _is_apostrophe(text: str, i: int) -> bool:
    return text[i] in APOSTROPHES and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def quoted_spans(text: str) -> list[str]:
    """Every quoted span of ``text`` (stripped), outermost pairs, in order, whatever its length."""
    spans: list[str] = []
    i = 0
    while i < len(text):
        mark = text[i]
        if mark in PAIRS and not _is_apostrophe(text, i):
            j = i + 1
            while j < len(text) and not (text[j] in PAIRS[mark] and not _is_apostrophe(text, j)):
                j += 1
            if j < len(text):
                spans.append(text[i + 1:j].strip())
                i = j + 1
                continue
        i += 1
    return spans


def ragas_quoted_spans(text: str) -> list[str]:
    """The spans Ragas's regular expression finds (stripped)."""
    return [m.group(1).strip() for m in _RAGAS_QUOTE.finditer(text)]


def function_quoted_spans(text: str) -> list[str]:
    """The spans the legacy function's regular expression finds (stripped)."""
    return [m.group(1).strip() for m in _FUNCTION_QUOTE.finditer(text)]


def long_enough(spans: Sequence[str], min_words: int = MIN_SPAN_WORDS) -> list[str]:
    return [s for s in spans if len(s.split()) >= min_words]


def normalise(text: str, casefold: bool = True) -> str:
    """Whitespace runs to one space, ends stripped, lower-cased (``casefold`` False: case kept)."""
    collapsed = " ".join(text.split())
    return collapsed.lower() if casefold else collapsed


def aligned(span: str, contexts: Sequence[str], joined: bool = False, casefold: bool = True) -> bool:
    """The normalised span occurs in one normalised context (``joined``: in the contexts joined with a space)."""
    needle = normalise(span, casefold)
    haystacks = [" ".join(contexts)] if joined else list(contexts)
    return bool(needle) and any(needle in normalise(h, casefold) for h in haystacks)


def _fraction(spans: Sequence[str], contexts: Sequence[str], joined: bool, casefold: bool = True) -> Fraction | None:
    return Fraction(sum(aligned(s, contexts, joined, casefold) for s in spans), len(spans)) if spans else None


CASEFOLD_OFF_AS_WRITTEN = ("QuotedSpansAlignment(casefold=False) skips its whole normalisation, not only the "
                           "lower-casing: spans are searched as written (whitespace runs kept) in the contexts "
                           "joined with a space, so a quotation whose line break or double space differs from the "
                           "context is not found")


def _ragas_as_written(spans: Sequence[str], contexts: Sequence[str]) -> Fraction:
    """Ragas's count with casefold=False: each span as written in the contexts joined with a space; 1 with no span."""
    joined = " ".join(contexts)
    return Fraction(sum(1 for s in spans if s and s in joined), len(spans)) if spans else Fraction(1)


def _compute(case: Case) -> ReferenceOutcome:
    return quoted_spans_outcome(case, True, MIN_SPAN_WORDS)


def quoted_spans_outcome(case: Case, casefold: bool, min_words: int) -> ReferenceOutcome:
    """The reference on ``case`` with QuotedSpansAlignment's options (module docstring): spans of at least
    ``min_words`` words, matched lower-cased (``casefold``) or with their case kept."""
    contexts = case.retrieved_contexts
    all_spans = quoted_spans(case.response)
    spans = long_enough(all_spans, min_words)
    value = _fraction(spans, contexts, False, casefold)
    details: dict[str, Any] = {"spans": spans, "too_short": [s for s in all_spans if s not in spans],
                               "aligned": [s for s in spans if aligned(s, contexts, False, casefold)],
                               "casefold": casefold, "min_span_words": min_words}
    alternatives: dict[str, Any] = {}
    variants: dict[str, str] = {}
    joined = _fraction(spans, contexts, True, casefold)
    if joined is not None and joined != value:
        alternatives["variant:contexts_joined"] = joined
        variants["contexts_joined"] = CONTEXTS_JOINED
    ragas_spans = long_enough(ragas_quoted_spans(case.response), min_words)
    if ragas_spans != spans:
        ragas_value = _fraction(ragas_spans, contexts, True, casefold)
        # with no span Ragas returns 1.0
        alternatives["variant:ragas_quote_marks"] = Fraction(1) if ragas_value is None else ragas_value
        variants["ragas_quote_marks"] = RAGAS_QUOTE_MARKS
        details["ragas_spans"] = ragas_spans
    if not spans and not ragas_spans:
        alternatives["variant:no_span_scores_one"] = Fraction(1)
        variants["no_span_scores_one"] = NO_SPAN_SCORES_ONE
    function_spans = long_enough(function_quoted_spans(case.response), min_words)
    if function_spans != spans and (function_spans != ragas_spans or not function_spans):  # else ragas_quote_marks
        function_value = _fraction(function_spans, contexts, True, casefold)
        alternatives["variant:straight_quote_marks_only"] = Fraction(0) if function_value is None else function_value
        variants["straight_quote_marks_only"] = STRAIGHT_QUOTE_MARKS_ONLY
        details["function_spans"] = function_spans
    if not spans and not function_spans:
        alternatives["variant:no_span_scores_zero"] = Fraction(0)
        variants["no_span_scores_zero"] = NO_SPAN_SCORES_ZERO
    if not casefold:
        as_written = _ragas_as_written(ragas_spans, contexts)
        ragas_normalised = _fraction(ragas_spans, contexts, True, False)
        if as_written != (Fraction(1) if ragas_normalised is None else ragas_normalised):
            alternatives["variant:casefold_off_as_written"] = as_written
            variants["casefold_off_as_written"] = CASEFOLD_OFF_AS_WRITTEN
    if variants:
        details["variants"] = variants
    return ReferenceOutcome("quoted_spans_alignment", value, None if value is not None else NO_SPANS, None,
                            alternatives, details, DENOMINATOR)


# --------------------------------------------------------------------------- fuzz and explain

_OPEN_CLOSE = (('"', '"'), ("\u201c", "\u201d"), ("\u201e", "\u201c"), ("\u2018", "\u2019"), ("'", "'"),
               ("`", "`"), ('"', "\u201d"), ("\u00b4", "\u00b4"))
_FILLER = ("He said", "the report notes", "don't", "it's", "and", "rock 'n' roll", ".", ",", "\n", "naïve", "東京")


def _span_words(rng: random.Random, contexts: Sequence[str]) -> str:
    """Words for a quoted span: consecutive retrieved contexts (found only when joined), their case
    variants, a shuffled order, or unrelated words; one to four words with varied whitespace."""
    if contexts and rng.random() < 0.7:
        start, n = rng.randrange(len(contexts)), rng.randint(2, 5)
        words = list(contexts[start:start + n])
        if len(words) < n and rng.random() < 0.7:   # a short list of contexts: repeat some of them
            words += [rng.choice(contexts) for _ in range(n - len(words))]
        if rng.random() < 0.2:
            words = [w.upper() if rng.random() < 0.5 else w.lower() for w in words]
        if rng.random() < 0.15:
            rng.shuffle(words)
        if rng.random() < 0.15 and words:
            words[0] = words[0][1:]  # a span starting inside a context
    else:
        words = [rng.choice(("the", "results", "are", "significant", "Results")) for _ in range(rng.randint(2, 5))]
    return "".join(w + rng.choice((" ", " ", "  ", "\n", "\t")) for w in words).strip()


def fuzz_quotes(draw: FuzzDraw) -> dict[str, Any]:
    """A response quoting the draw's retrieved contexts (one letter repeated each, so a span of three words
    is never inside one context: it is found only across contexts) with every kind of quotation mark,
    apostrophes, short spans and line breaks. The contexts are the draw's, so the other metrics' inputs
    stay as they are."""
    rng = draw.rng
    parts = []
    for _ in range(rng.randint(0, 4)):
        parts.append(rng.choice(_FILLER))
        if rng.random() < 0.8:
            opening, closing = rng.choice(_OPEN_CLOSE)
            parts.append(opening + _span_words(rng, draw.retrieved_contexts) + closing)
    return {"quoted_spans": True, "response": " ".join(parts)}


def explain_quotes(given: ExplainInput) -> dict[str, Any]:
    return {"quoted_spans": True, "response": str(given.retrieved[0]) if given.retrieved else "",
            "retrieved_contexts": [str(c) for c in given.reference]}


def _quantities(reference: ReferenceOutcome, given: ExplainInput) -> tuple[list[Quantity], list[str]]:
    spans = reference.details.get("spans", [])
    found = reference.details.get("aligned", [])
    quantities = [Quantity(reference.metric, reference.number)]
    quantities += [Quantity(k, v) for k, v in reference.alternatives.items()]  # type: ignore[arg-type]
    formula = (f"{len(found)}/{len(spans)} spans found in one retrieved context: {found!r} of {spans!r}" if spans
               else f"no quoted span of at least {MIN_SPAN_WORDS} words: undefined ({NO_SPANS}); Ragas returns 1.0")
    return quantities, [formula]


# no legacy class at 0.4.3: the legacy target is the function, called on a dataset of the case alone
_TARGETS = RagasTargets(("quoted_spans_alignment",), ("QuotedSpansAlignment",), "ragas.metrics.quoted_spans",
                        function=((("answers", "response"), ("sources", "retrieved_contexts")),
                                  "citation_alignment_quoted_spans"))


def _configure(options: Any) -> Any:
    """Options as data: ``casefold`` (default true) and ``min_span_words`` (default 3) of a case's configuration."""
    casefold, min_words = bool(options.get("casefold", True)), int(options.get("min_span_words", MIN_SPAN_WORDS))
    return lambda case: quoted_spans_outcome(case, casefold, min_words)


SPECS: tuple[MetricSpec, ...] = (MetricSpec(
    name="quoted_spans_alignment",
    reference_on=("quoted spans of >= 3 words in the response (paired quotation marks, apostrophes excluded) found "
                  "in one retrieved context after collapsing whitespace and lower-casing"),
    ragas=_TARGETS, fields_read=FIELDS, denominator=DENOMINATOR,
    undefined_policy=f"None ('{NO_SPANS}') when the response quotes no span of 3 words or more; Ragas returns 1.0.",
    compute=_compute, requires=REQUIRES, fuzz_inputs=fuzz_quotes,
    explain=ExplainAdapter(command="quoted-spans-alignment", takes="texts", inputs_help=TEXTS_HELP,
                           targets=_TARGETS.ids(), case_inputs=explain_quotes, quantities=_quantities),
    configure=_configure),)
