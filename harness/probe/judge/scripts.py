"""The judge scripts, written once for both Ragas APIs (standard library only; Ragas on use).

A script tells a PromptBook which prompts a Ragas class will ask its judge for one case, and the
frozen reply to each, derived from the case's verdicts. Verdict values go into the replies AS
GIVEN (2 stays 2, true stays true): Ragas's own parsing decides what they mean.

The legacy classes (``ragas.metrics``) and the collections classes (``ragas.metrics.collections``)
ask the same prompts: same kinds, same inputs, same reply layout. They differ only in

- which attribute of the metric instance holds each prompt (``context_precision_prompt`` vs
  ``prompt``, ``nli_statements_prompt`` vs ``nli_statement_prompt``, ...), and
- what follows a raw reply the response model cannot parse: the legacy API asks its "fix output
  format" prompt once (and gets the same text back, so parsing fails and the metric raises); on
  the collections path retries belong to the instructor client, which the stub replaces;
- for FactualCorrectness, the decomposition input (collections adds ``atomicity``/``coverage``) and
  whether the NLI prompt is asked for zero claims (legacy: yes, with an empty list).
  (A collections prompt rendered by a function, e.g. NoiseSensitivity's, has no ``instruction``
  attribute: its instruction is the rendered text before the output-format line.)

A :class:`PromptAdapter` holds exactly that difference; :data:`LEGACY_PROMPTS` and
:data:`COLLECTIONS_PROMPTS` are the two. A script is called as
``script(prompts, metric, case, book)``. It reads a prompt attribute only when it needs that
prompt (a case with no retrieved context reads none), so a class whose prompts live elsewhere
fails there with ``AttributeError`` (both runners report that as ``TargetNotScripted``).
The adapter a script gets is chosen per instance by ``dialects.prompts_for`` (earlier Ragas
generations: prompt functions, earlier attribute names, other input and reply shapes).
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping
from dataclasses import dataclass

from ..protocol import API_COLLECTIONS, API_LEGACY, FROZEN_REASON
from .prompt_book import FORMAT_FIX_KIND, PromptBook

# The kinds of prompt the scripts expect (PromptBook kinds).
CONTEXT_PRECISION = "context_precision"
CONTEXT_RECALL_CLASSIFICATION = "context_recall_classification"
STATEMENT_GENERATOR = "statement_generator"
NLI_STATEMENTS = "nli_statements"
CLAIM_DECOMPOSITION = "claim_decomposition"
CLAIM_NLI = "claim_nli"                      # FactualCorrectness's NLI prompt (same text, another attribute)
ENTITY_EXTRACTION = "entity_extraction"
NOISE_STATEMENTS = "noise_statements"        # NoiseSensitivity's statement generator
NOISE_NLI = "noise_nli"                      # NoiseSensitivity's NLI prompt
PROMPT_KINDS = (CONTEXT_PRECISION, CONTEXT_RECALL_CLASSIFICATION, STATEMENT_GENERATOR, NLI_STATEMENTS,
                CLAIM_DECOMPOSITION, CLAIM_NLI, ENTITY_EXTRACTION, NOISE_STATEMENTS, NOISE_NLI)


@dataclass(frozen=True, eq=False)
class PromptAdapter:
    """Where one Ragas API keeps its prompts, and whether a raw reply is followed by a format fix."""

    api: str
    attributes: Mapping[str, str]  # prompt kind -> attribute of the metric instance holding that prompt
    format_fix_after_raw_reply: bool
    # FactualCorrectness: the collections class puts atomicity/coverage into the decomposition input;
    # the legacy class asks its NLI prompt even for zero claims (the collections class skips it)
    decomposition_names_granularity: bool = False
    nli_with_zero_claims: bool = False

    def instruction(self, metric: t.Any, kind: str) -> str:
        """The instruction of the ``kind`` prompt of ``metric`` (AttributeError when it has none)."""
        return self.attribute_instruction(metric, self.attributes[kind], kind)

    def attribute_instruction(self, metric: t.Any, attribute: str, kind: str) -> str:
        """The instruction of the ``kind`` prompt that this API keeps in ``metric.<attribute>``
        (AttributeError when it has none; a dialect adapter, ``dialects``, looks elsewhere)."""
        prompt = getattr(metric, attribute)
        instruction = getattr(prompt, "instruction", None)
        if instruction is None and hasattr(prompt, "to_string") and hasattr(prompt, "input_model"):
            return rendered_instruction(prompt)
        if instruction is None:
            raise AttributeError(f"{type(prompt).__name__} has no instruction")
        return instruction


OUTPUT_FORMAT_LINE = "\nPlease return the output in a JSON format"


def empty_input(input_model: t.Any) -> t.Any:
    """An instance of a prompt's pydantic input model with every field empty: ``[]`` for a list, ``""``
    otherwise."""
    return input_model(**{name: ([] if t.get_origin(f.annotation) is list else "")
                          for name, f in input_model.model_fields.items()})


def rendered_instruction(prompt: t.Any) -> str:
    """The instruction of a prompt rendered by a function (no ``instruction`` attribute): render it on
    an empty input of its input model and keep the text before the output-format line."""
    head, sep, _ = prompt.to_string(empty_input(prompt.input_model)).partition(OUTPUT_FORMAT_LINE)
    if not sep:
        raise AttributeError(f"{type(prompt).__name__}: no instruction before the output-format line")
    return head


LEGACY_PROMPTS = PromptAdapter(API_LEGACY, {
    CONTEXT_PRECISION: "context_precision_prompt",
    CONTEXT_RECALL_CLASSIFICATION: "context_recall_prompt",
    STATEMENT_GENERATOR: "statement_generator_prompt",
    NLI_STATEMENTS: "nli_statements_prompt",
    CLAIM_DECOMPOSITION: "claim_decomposition_prompt",
    CLAIM_NLI: "nli_prompt",
    ENTITY_EXTRACTION: "context_entity_recall_prompt",
    NOISE_STATEMENTS: "statement_generator_prompt",
    NOISE_NLI: "nli_statements_prompt",
}, format_fix_after_raw_reply=True, nli_with_zero_claims=True)

COLLECTIONS_PROMPTS = PromptAdapter(API_COLLECTIONS, {
    CONTEXT_PRECISION: "prompt",
    CONTEXT_RECALL_CLASSIFICATION: "prompt",
    STATEMENT_GENERATOR: "statement_generator_prompt",
    NLI_STATEMENTS: "nli_statement_prompt",
    CLAIM_DECOMPOSITION: "prompt",
    CLAIM_NLI: "nli_prompt",
    ENTITY_EXTRACTION: "prompt",
    NOISE_STATEMENTS: "statement_prompt",
    NOISE_NLI: "faithfulness_prompt",
}, format_fix_after_raw_reply=False, decomposition_names_granularity=True)

PROMPTS_BY_API: dict[str, PromptAdapter] = {p.api: p for p in (LEGACY_PROMPTS, COLLECTIONS_PROMPTS)}

Script = t.Callable[[PromptAdapter, t.Any, dict, PromptBook], None]


def fix_output_format_instruction() -> str:
    """The instruction of Ragas's "fix output format" retry prompt (legacy API; imports Ragas; 0.1.x keeps
    it as ``ragas.llms.output_parser.FIX_OUTPUT_FORMAT``)."""
    try:
        from ragas.prompt.pydantic_prompt import fix_output_format_prompt
    except ImportError:
        from ragas.llms.output_parser import FIX_OUTPUT_FORMAT

        return FIX_OUTPUT_FORMAT.instruction
    return fix_output_format_prompt.instruction


def use_judge_calls(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook, verdict_key: str,
                    instruction_of: t.Callable[[str], str] | None = None) -> None:
    """Install the case's per-call script for this verdict key (case key ``judge_calls.<verdict_key>``:
    prompt kind -> its calls in order, ``PromptBook.script_calls``); a ``fix_output_format`` list
    answers Ragas's "fix the output format" retries. The replies are raw texts, verbatim in every
    prompt generation (no dialect reshapes them). ``instruction_of(kind)``: where a script's prompts
    are not among the adapter's kinds (the answer, criteria and rubric scripts' own)."""
    for kind, calls in ((case.get("judge_calls") or {}).get(verdict_key) or {}).items():
        instruction = (fix_output_format_instruction() if kind == FORMAT_FIX_KIND
                       else instruction_of(kind) if instruction_of is not None
                       else prompts.instruction(metric, kind))
        book.script_calls(kind, instruction, calls, label=f"judge_calls.{verdict_key}.{kind}")


def context_precision_script(verdict_key: str, answer_field: str) -> Script:
    """One prompt per retrieved context: (question, context, answer) -> {reason, verdict}.

    A raw reply in ``judge_replies.<verdict_key>.<i>`` replaces context i's reply verbatim; where
    the API follows it with a format-fix prompt, that prompt gets the same text back (as
    ``{"text": ...}``), so parsing fails and the metric raises. Ragas asks context by context, so
    no prompt is expected after the first raw reply.

    Ragas asks a row's contexts one after another in index order (both APIs), so a chunk retrieved
    twice with two different verdicts is answered in that order (``PromptBook`` replay by order):
    the expectations carry one row token per case.
    """

    def script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
        use_judge_calls(prompts, metric, case, book, verdict_key)
        row = object()  # this case's askings: one after another
        contexts = case.get("retrieved_contexts") or []
        raw_replies = (case.get("judge_replies") or {}).get(verdict_key) or {}
        labels = case["verdicts"][verdict_key]
        instruction = prompts.instruction(metric, CONTEXT_PRECISION) if labels else None
        for i, label in enumerate(labels):
            context = contexts[i] if i < len(contexts) else f"<no retrieved_contexts[{i}]>"
            prompt_input = {"question": case.get("user_input"), "context": context,
                            "answer": case.get(answer_field)}
            if str(i) in raw_replies:
                raw = raw_replies[str(i)]
                book.expect_raw(CONTEXT_PRECISION, instruction, prompt_input, raw,
                                label=f"judge_replies.{verdict_key}.{i}", row=row)
                if prompts.format_fix_after_raw_reply:
                    book.expect_format_fix(fix_output_format_instruction(), CONTEXT_PRECISION,
                                           prompt_input, raw, raw,
                                           label=f"format fix of judge_replies.{verdict_key}.{i}")
                # the metric raises there (0.2.6 on); an earlier release goes on to the later contexts,
                # which are answered from their verdicts but not expected
                for j in range(i + 1, len(labels)):
                    later = {"question": case.get("user_input"),
                             "context": contexts[j] if j < len(contexts) else f"<no retrieved_contexts[{j}]>",
                             "answer": case.get(answer_field)}
                    book.allow(CONTEXT_PRECISION, instruction, later, {"reason": FROZEN_REASON, "verdict": labels[j]},
                               label=f"verdicts.{verdict_key}[{j}] (after an unparseable reply)")
                return
            book.expect(CONTEXT_PRECISION, instruction, prompt_input,
                        {"reason": FROZEN_REASON, "verdict": label}, label=f"verdicts.{verdict_key}[{i}]", row=row)

    return script


def context_recall_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """One prompt: (question, joined contexts, reference) -> {classifications: [...]}."""
    use_judge_calls(prompts, metric, case, book, "context_recall")
    instruction = prompts.instruction(metric, CONTEXT_RECALL_CLASSIFICATION)
    book.expect(
        CONTEXT_RECALL_CLASSIFICATION, instruction,
        {"question": case.get("user_input"),
         "context": "\n".join(case.get("retrieved_contexts") or []),
         "answer": case.get("reference")},
        {"classifications": [
            {"statement": c["statement"], "reason": FROZEN_REASON, "attributed": c["attributed"]}
            for c in case["verdicts"]["context_recall"]]},
        label="verdicts.context_recall",
    )


def faithfulness_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """Statement generation (question, response) -> {statements}; then, only when there is at
    least one statement, NLI (joined contexts, statements) -> {statements: [verdicts]}."""
    use_judge_calls(prompts, metric, case, book, "faithfulness")
    claims = case["verdicts"]["faithfulness"]
    statements = [c["statement"] for c in claims]
    book.expect(
        STATEMENT_GENERATOR, prompts.instruction(metric, STATEMENT_GENERATOR),
        {"question": case.get("user_input"), "answer": case.get("response")},
        {"statements": statements},
        label="verdicts.faithfulness (statements)",
    )
    nli_input = {"context": "\n".join(case.get("retrieved_contexts") or []), "statements": statements}
    if statements:
        book.expect(
            NLI_STATEMENTS, prompts.instruction(metric, NLI_STATEMENTS), nli_input,
            {"statements": [
                {"statement": c["statement"], "reason": FROZEN_REASON, "verdict": c["verdict"]}
                for c in claims]},
            label="verdicts.faithfulness (verdicts)",
        )
    else:  # some releases (0.2.x) still ask the NLI prompt on zero statements: answered, never expected
        book.allow(NLI_STATEMENTS, prompts.instruction(metric, NLI_STATEMENTS), nli_input, {"statements": []},
                   label="verdicts.faithfulness (no statements: verdicts if asked)")


def factual_correctness_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """FactualCorrectness: decompose the response -> NLI of its claims against the reference; unless
    ``metric.mode == "precision"``, also decompose the reference -> NLI of its claims against the
    response. Claims come from ``verdicts.factual_correctness`` by their ``from``. The collections
    class adds ``atomicity``/``coverage`` to the decomposition input and skips the NLI prompt for zero
    claims; the legacy class asks it with an empty statement list."""
    use_judge_calls(prompts, metric, case, book, "factual_correctness")
    claims = case["verdicts"]["factual_correctness"]
    mode = getattr(metric, "mode", "f1")  # Ragas's defaults for an instance that does not say
    sides = [("response", "reference")] + ([] if mode == "precision" else [("reference", "response")])
    if mode == "precision":  # 0.2.0-0.2.x decompose and verify the reference in every mode: answered, not expected
        reference_claims = [c for c in claims if c.get("from") == "reference"]
        own = [c["statement"] for c in reference_claims]
        unexpected_input: dict = {"response": case.get("reference")}
        if prompts.decomposition_names_granularity:
            unexpected_input.update(atomicity=getattr(metric, "atomicity", "low"),
                                    coverage=getattr(metric, "coverage", "low"))
        book.allow(CLAIM_DECOMPOSITION, prompts.instruction(metric, CLAIM_DECOMPOSITION), unexpected_input,
                   {"claims": own}, label="verdicts.factual_correctness (reference claims, if asked)")
        if own or prompts.nli_with_zero_claims:
            book.allow(CLAIM_NLI, prompts.instruction(metric, CLAIM_NLI),
                       {"context": case.get("response"), "statements": own},
                       {"statements": [{"statement": c["statement"], "reason": FROZEN_REASON,
                                        "verdict": c["verdict"]} for c in reference_claims]},
                       label="verdicts.factual_correctness (reference verdicts, if asked)")
    for source, premise in sides:
        own = [c for c in claims if c.get("from") == source]
        statements = [c["statement"] for c in own]
        decomposition_input: dict = {"response": case.get(source)}
        if prompts.decomposition_names_granularity:
            decomposition_input.update(atomicity=getattr(metric, "atomicity", "low"),
                                       coverage=getattr(metric, "coverage", "low"))
        book.expect(CLAIM_DECOMPOSITION, prompts.instruction(metric, CLAIM_DECOMPOSITION), decomposition_input,
                    {"claims": statements}, label=f"verdicts.factual_correctness ({source} claims)")
        if statements or prompts.nli_with_zero_claims:
            book.expect(CLAIM_NLI, prompts.instruction(metric, CLAIM_NLI),
                        {"context": case.get(premise), "statements": statements},
                        {"statements": [{"statement": c["statement"], "reason": FROZEN_REASON,
                                         "verdict": c["verdict"]} for c in own]},
                        label=f"verdicts.factual_correctness ({source} verdicts)")


def context_entity_recall_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """ContextEntityRecall: entity extraction from the reference, then from the joined contexts
    (``verdicts.context_entity_recall`` by ``from``)."""
    use_judge_calls(prompts, metric, case, book, "context_entity_recall")
    items = case["verdicts"]["context_entity_recall"]
    instruction = prompts.instruction(metric, ENTITY_EXTRACTION)
    for source, text in (("reference", case.get("reference")),
                         ("contexts", "\n".join(case.get("retrieved_contexts") or []))):
        book.expect(ENTITY_EXTRACTION, instruction, {"text": text},
                    {"entities": [i["statement"] for i in items if i.get("from") == source]},
                    label=f"verdicts.context_entity_recall ({source} entities)")


def noise_sensitivity_script(prompts: PromptAdapter, metric: t.Any, case: dict, book: PromptBook) -> None:
    """NoiseSensitivity: statements of the reference and of the response (question, text); for each
    retrieved context, NLI of the reference statements and of the response statements against it;
    then NLI of the response statements against the reference (``verdicts.noise_sensitivity``).
    Nothing is asked when an input is empty (both APIs raise ValueError first)."""
    use_judge_calls(prompts, metric, case, book, "noise_sensitivity")
    if not all(case.get(f) for f in ("user_input", "response", "reference", "retrieved_contexts")):
        return
    items = case["verdicts"]["noise_sensitivity"]
    reference = [i for i in items if i.get("from") == "reference"]
    response = [i for i in items if i.get("from") == "response"]
    generator = prompts.instruction(metric, NOISE_STATEMENTS)
    nli = prompts.instruction(metric, NOISE_NLI)
    for source, own in (("reference", reference), ("response", response)):
        book.expect(NOISE_STATEMENTS, generator,
                    {"question": case.get("user_input"), "answer": case.get(source)},
                    {"statements": [i["statement"] for i in own]},
                    label=f"verdicts.noise_sensitivity ({source} statements)")

    def verdicts(own: list, label_of: t.Callable[[dict], t.Any]) -> dict:
        return {"statements": [{"statement": i["statement"], "reason": FROZEN_REASON, "verdict": label_of(i)}
                               for i in own]}

    for j, context in enumerate(case["retrieved_contexts"]):
        for source, own in (("reference", reference), ("response", response)):
            book.expect(NOISE_NLI, nli, {"context": context, "statements": [i["statement"] for i in own]},
                        verdicts(own, lambda i, _j=j: i["contexts"][_j]),
                        label=f"verdicts.noise_sensitivity ({source} statements vs retrieved_contexts[{j}])")
    book.expect(NOISE_NLI, nli, {"context": case.get("reference"), "statements": [i["statement"] for i in response]},
                verdicts(response, lambda i: i["verdict"]),
                label="verdicts.noise_sensitivity (response statements vs the reference)")
