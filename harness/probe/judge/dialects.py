"""Prompt dialects: where each Ragas prompt generation keeps a class's prompts, so the same frozen
verdicts drive every release's classes (standard library only; Ragas on use).

The judge scripts (``scripts`` and friends) ask a :class:`PromptAdapter` for the
instruction of each prompt kind; the adapter is chosen here from what the metric INSTANCE offers,
never from a version number:

- collections classes that hold prompt objects (``metric.prompt``, ``metric.nli_statement_prompt``,
  ...; Ragas 0.4.x): ``COLLECTIONS_PROMPTS`` unchanged.
- collections classes that render their prompts with module-level functions (Ragas 0.3.x:
  ``context_precision_with_reference_prompt(question, context, reference)`` and so on, imported into
  the class's module): :class:`FunctionPrompts`. The instruction of a kind is the function's rendering
  on placeholder arguments, cut before the output-format line; a rating template
  (``answer_accuracy_judge1_prompt``) is rendered on the case's texts. Whether the claim
  decomposition input names ``atomicity``/``coverage`` is read from the function's own rendering.
- Ragas 0.1.x ``Prompt`` objects (``input_keys``, ``output_key``, ``examples``; read by
  ``prompt_layouts``' 0.1 layout): the reply takes the shape of the prompt's example output
  (:func:`reply_like_example`).
- legacy classes whose prompts carry earlier attribute names (Ragas 0.2.0 to 0.2.12:
  ``nli_statements_message``, ``statement_prompt``, ``long_form_answer_prompt``): :class:`AliasedPrompts`
  tries the current attribute, then the earlier ones.

The rendered TEXT of either PydanticPrompt generation is read by ``prompt_layouts`` (the book
does that, whatever the adapter). A class none of these reach fails with ``AttributeError`` in the
script, which the runners report as the harness's limit (``TargetNotScripted``), never as Ragas's.
"""

from __future__ import annotations

import inspect
import sys
import typing as t
from dataclasses import dataclass, field

from ..protocol import API_COLLECTIONS
from .prompt_layouts import LayoutMismatch, split_layout
from .scripts import (
    CLAIM_DECOMPOSITION,
    CLAIM_NLI,
    COLLECTIONS_PROMPTS,
    CONTEXT_PRECISION,
    CONTEXT_RECALL_CLASSIFICATION,
    ENTITY_EXTRACTION,
    LEGACY_PROMPTS,
    NLI_STATEMENTS,
    NOISE_NLI,
    NOISE_STATEMENTS,
    OUTPUT_FORMAT_LINE,
    STATEMENT_GENERATOR,
    PromptAdapter,
    empty_input,
)

# the answer scripts' kinds (``answers``), named here to avoid importing that module
CORRECTNESS_CLASSIFIER = "correctness_classifier"
QUESTION_GENERATION = "question_generation"
# the summary script's kinds (``summaries``), likewise
SUMMARY_KEYPHRASES, SUMMARY_QUESTIONS, SUMMARY_ANSWERS = "summary_keyphrases", "summary_questions", "summary_answers"

# prompt kind -> the module-level prompt functions a 0.3.x collections class may render it with
# (first found in the class's module wins)
PROMPT_FUNCTIONS: dict[str, tuple[str, ...]] = {
    CONTEXT_PRECISION: ("context_precision_with_reference_prompt", "context_precision_without_reference_prompt",
                        "context_precision_prompt"),
    CONTEXT_RECALL_CLASSIFICATION: ("context_recall_prompt",),
    STATEMENT_GENERATOR: ("statement_generator_prompt",),
    NLI_STATEMENTS: ("nli_statement_prompt",),
    CLAIM_DECOMPOSITION: ("claim_decomposition_prompt",),
    CLAIM_NLI: ("nli_statement_prompt",),
    ENTITY_EXTRACTION: ("extract_entities_prompt",),
    NOISE_STATEMENTS: ("statement_generator_prompt",),
    NOISE_NLI: ("nli_statement_prompt",),
    CORRECTNESS_CLASSIFIER: ("correctness_classifier_prompt",),
    QUESTION_GENERATION: ("answer_relevancy_prompt",),
    # 0.3.9 SummaryScore (``ragas.prompt.metrics.summary_score``)
    SUMMARY_KEYPHRASES: ("extract_keyphrases_prompt",),
    SUMMARY_QUESTIONS: ("generate_questions_prompt",),
    SUMMARY_ANSWERS: ("generate_answers_prompt",),
}

# legacy prompt attribute -> the names earlier releases gave the same prompt (same kind, same reply)
LEGACY_ALIASES: dict[str, tuple[str, ...]] = {
    "nli_statements_prompt": ("nli_statements_message",),
    # 0.2.0-0.2.x: the segmented "long form answer" statement prompt (input adds the class's own sentences,
    # reply nests the statements per sentence; see AliasedPrompts.adapt)
    "statement_generator_prompt": ("statement_prompt", "long_form_answer_prompt"),
}


def _module_of(metric: t.Any) -> t.Any:
    return sys.modules.get(type(metric).__module__)


def _placeholder(parameter: inspect.Parameter) -> t.Any:
    """An empty value of the parameter's type: ``[]`` for a list, ``""`` otherwise."""
    annotation = parameter.annotation
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return [] if "list" in text.lower() else ""


def render_on_placeholders(function: t.Callable[..., str]) -> str:
    """The function's prompt rendered on empty arguments (its defaults kept)."""
    arguments = [_placeholder(p) for p in inspect.signature(function).parameters.values()
                 if p.default is inspect.Parameter.empty]
    return function(*arguments)


# what follows a rendered prompt's instruction: its output schema, else its examples, else its input block
INSTRUCTION_ENDS = (OUTPUT_FORMAT_LINE, "\n\n--------EXAMPLES-----------", "\n--------EXAMPLES-----------",
                    "\n-----------------------------\n", "\nNow perform the same with the following input")


def instruction_of_rendering(text: str) -> str:
    """The instruction of a rendered prompt: the text before the first of :data:`INSTRUCTION_ENDS`
    (a prompt without an output schema, e.g. 0.3.x ``context_recall_prompt``, goes on to its examples)."""
    cuts = [text.find(end) for end in INSTRUCTION_ENDS if text.find(end) > 0]
    if not cuts:
        raise AttributeError("rendered prompt has no output-format line, examples or input block to cut "
                             "its instruction at")
    return text[:min(cuts)]


@dataclass(frozen=True, eq=False)
class FunctionPrompts(PromptAdapter):
    """A collections class that renders its prompts with functions of its module (Ragas 0.3.x)."""

    module: t.Any = field(default=None)

    def prompt_function(self, kind: str) -> t.Callable[..., str]:
        for name in PROMPT_FUNCTIONS.get(kind, ()):
            function = getattr(self.module, name, None)
            if callable(function):
                return function
        raise AttributeError(f"{getattr(self.module, '__name__', self.module)} has no prompt function for "
                             f"{kind} (looked for {', '.join(PROMPT_FUNCTIONS.get(kind, ())) or 'none'})")

    def attribute_instruction(self, metric: t.Any, attribute: str, kind: str) -> str:
        if hasattr(metric, attribute):
            return super().attribute_instruction(metric, attribute, kind)
        return instruction_of_rendering(render_on_placeholders(self.prompt_function(kind)))

    def render_template(self, metric: t.Any, name: str, fields: dict) -> str:
        """A plain-template prompt (a rating judge) rendered on the case's texts, in the order the
        class passes them."""
        function = getattr(self.module, name, None)
        if not callable(function):
            raise AttributeError(f"{type(metric).__qualname__} has no {name} prompt function")
        return function(*fields.values())


# input fields an earlier generation renders that no verdict states: filled from the instance
# (``criteria``: 0.2.x AspectCritic / SimpleCriteriaScore render their own definition into the input;
# ``rubrics``: 0.2.x RubricsScore its own rubric, unless the script names the case's) or left out of the
# prompt's key (``sentences``: 0.2.0-0.2.x's own sentence segmentation of the text it asks about;
# ``context``: 0.1.x AnswerRelevancy's question generation shows the joined contexts, which the frozen
# question does not depend on; a prompt whose expectation names ``context`` keeps it in its key)
FILLED_FROM_INSTANCE = {"criteria": "definition", "rubrics": "rubrics"}
# an input field under the name an earlier generation's prompt gives it (0.1.x question generation: "answer")
EARLIER_INPUT_NAMES = {"response": "answer"}
DERIVED_BY_RAGAS = ("sentences", "context")


@dataclass(frozen=True, eq=False)
class AliasedPrompts(PromptAdapter):
    """A legacy class: the current attribute of each prompt, else the name an earlier release gave it
    (``LEGACY_ALIASES``). It remembers which prompt object answered each kind, so :meth:`adapt` can
    shape the expected input and reply to that prompt's own models (:class:`DialectBook`)."""

    metric: t.Any = None
    resolved: dict = field(default_factory=dict)  # kind -> the prompt object found for it

    def attribute_instruction(self, metric: t.Any, attribute: str, kind: str) -> str:
        for name in (attribute, *LEGACY_ALIASES.get(attribute, ())):
            if hasattr(metric, name):
                self.resolved[kind] = getattr(metric, name)
                return super().attribute_instruction(metric, name, kind)
        return super().attribute_instruction(metric, attribute, kind)  # raises, naming the current attribute

    def adapt(self, book: t.Any, kind: str, prompt_input: dict, replies: list) -> tuple[dict, list]:
        """The expected input and replies of a ``kind`` prompt, shaped to the prompt this instance
        holds: derived input fields filled or ignored, and flat statement/claim lists nested as its
        output model nests them (:func:`nested_reply`)."""
        prompt = self.resolved.get(kind)
        input_fields = model_fields(getattr(prompt, "input_model", None))
        if input_fields is None and isinstance(getattr(prompt, "input_keys", None), list):  # a 0.1.x Prompt
            input_fields = dict.fromkeys(prompt.input_keys)
        if input_fields is None or not isinstance(prompt_input, dict):
            return prompt_input, replies
        if prompt_input.keys() == input_fields.keys():  # the model's fields exactly (most prompts): as given
            shaped = dict(prompt_input)
        else:
            shaped = self._shaped(book, kind, prompt_input, input_fields)
        output_model = getattr(prompt, "output_model", None)
        if output_model is None and getattr(prompt, "output_key", None):  # a 0.1.x Prompt: shaped as its example
            example = next((e.get(prompt.output_key) for e in getattr(prompt, "examples", None) or []
                            if isinstance(e, dict)), None)
            return shaped, [reply_like_example(reply, example) for reply in replies]
        return shaped, [nested_reply(reply, output_model) for reply in replies]

    def _shaped(self, book: t.Any, kind: str, prompt_input: dict, input_fields: t.Any) -> dict:
        """The expected input of a ``kind`` prompt whose input model has the fields ``input_fields``."""
        # a field this generation's input model does not have is not rendered (0.2.x AspectCritic shows
        # its judge no contexts): it is not part of the key
        shaped = {name: value for name, value in prompt_input.items() if name in input_fields}
        for name, earlier in EARLIER_INPUT_NAMES.items():  # the same input under an earlier generation's name
            if name in prompt_input and name not in input_fields and earlier in input_fields and earlier not in shaped:
                shaped[earlier] = prompt_input[name]
        for name in input_fields:
            if name in shaped:
                continue
            if name in FILLED_FROM_INSTANCE and hasattr(self.metric, FILLED_FROM_INSTANCE[name]):
                shaped[name] = getattr(self.metric, FILLED_FROM_INSTANCE[name])
            elif name in DERIVED_BY_RAGAS:
                book.ignore_fields(kind, [name])
        return shaped


def _list_item(annotation: t.Any) -> t.Any:
    """``X`` for ``list[X]`` / ``List[X]``, else None."""
    return t.get_args(annotation)[0] if t.get_origin(annotation) is list and t.get_args(annotation) else None


def model_fields(model: t.Any) -> t.Any:
    """``model.model_fields`` (None without), looked up once per model class (a pydantic class property,
    read for every prompt a script expects)."""
    if not isinstance(model, type):
        return getattr(model, "model_fields", None)
    try:
        return _MODEL_FIELDS[model]
    except KeyError:
        fields = _MODEL_FIELDS[model] = getattr(model, "model_fields", None)
        return fields
    except TypeError:  # a class that cannot be a key
        return getattr(model, "model_fields", None)


_MODEL_FIELDS: dict[type, t.Any] = {}


def nested_reply(reply: t.Any, output_model: t.Any) -> t.Any:
    """A reply ``{"statements": [...]}`` (or ``{"claims": [...]}``) reshaped for an output model that
    nests the list (Ragas 0.2.0-0.2.x flatten it back to the same list, in order):

    - one field ``list[list[str]]`` (0.2.x ``decomposed_claims``): ``[[...]]``;
    - one field ``list[Model]`` whose model has an ``int`` field and a ``list[str]`` field (0.2.x
      ``sentences: [{sentence_index, simpler_statements}]``): one item, index 0, holding them all.

    A reply the model already accepts by name, or any other shape, is returned unchanged."""
    fields = model_fields(output_model)
    if not isinstance(reply, dict) or not fields or set(reply) <= set(fields) or len(reply) != 1 or len(fields) != 1:
        return reply
    (items,) = reply.values()
    if not isinstance(items, list):
        return reply
    name, declared = next(iter(fields.items()))
    item = _list_item(declared.annotation)
    if item is not None and _list_item(item) is not None:
        return {name: [items] if items else []}
    inner = getattr(item, "model_fields", None)
    if inner:
        index = next((n for n, f in inner.items() if f.annotation is int), None)
        listed = next((n for n, f in inner.items() if _list_item(f.annotation) is str), None)
        if index and listed:
            return {name: [{index: 0, listed: items}] if items else []}
    return reply


def reply_like_example(reply: t.Any, example: t.Any) -> t.Any:
    """A reply ``{"<name>": [...]}`` shaped as a Ragas 0.1.x prompt's example output (0.1.x parses a bare
    JSON list for most prompts):

    - the example is a list of objects and the reply's list holds objects: the bare list;
    - the example is a list of objects with an ``int`` field and a list field (0.1.x
      ``[{sentence_index, simpler_statements}]``) and the reply's list holds strings: one such object,
      index 0, holding them all (none when there are none);
    - the example is a list of strings: the bare list.

    Any other reply (an object the example also shows as an object) is returned unchanged."""
    if not isinstance(reply, dict) or len(reply) != 1 or not isinstance(example, list):
        return reply
    (items,) = reply.values()
    if not isinstance(items, list):
        return reply
    sample = example[0] if example else None
    if isinstance(sample, dict) and items and all(isinstance(i, str) for i in items):
        index = next((k for k, v in sample.items() if isinstance(v, int) and not isinstance(v, bool)), None)
        listed = next((k for k, v in sample.items() if isinstance(v, list)), None)
        if index and listed:
            return [{index: 0, listed: items}]
        return reply
    return items


class DialectBook:
    """A PromptBook seen through an adapter with :meth:`AliasedPrompts.adapt`: every expectation is
    shaped to the prompt the instance holds; everything else is the book's."""

    def __init__(self, book: t.Any, adapter: AliasedPrompts) -> None:
        self._book, self._adapter = book, adapter

    def __getattr__(self, name: str) -> t.Any:
        return getattr(self._book, name)

    def expect(self, kind: str, instruction: str, prompt_input: dict, reply: dict, label: str,
               row: object | None = None) -> None:
        shaped, (reply,) = self._adapter.adapt(self._book, kind, prompt_input, [reply])
        self._book.expect(kind, instruction, shaped, reply, label, row=row)

    def allow(self, kind: str, instruction: str, prompt_input: dict, reply: dict, label: str) -> None:
        shaped, (reply,) = self._adapter.adapt(self._book, kind, prompt_input, [reply])
        self._book.allow(kind, instruction, shaped, reply, label)

    def alias(self, kind: str, prompt_input: dict, other_input: dict) -> None:
        shaped, _ = self._adapter.adapt(self._book, kind, prompt_input, [])
        other, _ = self._adapter.adapt(self._book, kind, other_input, [])
        if other != shaped:
            self._book.alias(kind, shaped, other)

    def expect_samples(self, kind: str, instruction: str, prompt_input: dict, replies: list, label: str) -> None:
        shaped, replies = self._adapter.adapt(self._book, kind, prompt_input, replies)
        self._book.expect_samples(kind, instruction, shaped, replies, label)

    def expect_in_order(self, kind: str, instruction: str, prompt_input: dict, replies: list, label: str) -> None:
        shaped, replies = self._adapter.adapt(self._book, kind, prompt_input, replies)
        self._book.expect_in_order(kind, instruction, shaped, replies, label)

    def expect_raw(self, kind: str, instruction: str, prompt_input: dict, text: str, label: str,
                   row: object | None = None) -> None:
        shaped, _ = self._adapter.adapt(self._book, kind, prompt_input, [])
        self._book.expect_raw(kind, instruction, shaped, text, label, row=row)

    def expect_format_fix(self, fix_instruction: str, kind: str, prompt_input: dict, output_string: str,
                          fixed_text: str, label: str) -> None:
        shaped, _ = self._adapter.adapt(self._book, kind, prompt_input, [])
        self._book.expect_format_fix(fix_instruction, kind, shaped, output_string, fixed_text, label)


def dialect_book(adapter: PromptAdapter, book: t.Any) -> t.Any:
    """The book a script writes to: seen through the adapter when it shapes expectations."""
    return DialectBook(book, adapter) if isinstance(adapter, AliasedPrompts) else book


def renders_input_field(function: t.Callable[..., str], name: str) -> bool:
    """Does the function's rendered input block name ``name`` (e.g. ``atomicity``)?"""
    try:
        _, data, _ = split_layout(render_on_placeholders(function))
    except (LayoutMismatch, TypeError, ValueError):
        return False
    return isinstance(data, dict) and name in data


def object_renders_input_field(prompt: t.Any, name: str) -> bool | None:
    """Does a prompt object whose input model has field ``name`` render it into its input block (0.4.0's
    claim decomposition takes ``atomicity`` but does not show it)? None when it has no such field or
    cannot be rendered on an empty input."""
    fields = getattr(getattr(prompt, "input_model", None), "model_fields", None)
    if not isinstance(fields, dict) or name not in fields:
        return None
    try:
        _, data, _ = split_layout(prompt.to_string(empty_input(prompt.input_model)))
    except Exception:  # any failure to render on an empty input: cannot tell
        return None
    return isinstance(data, dict) and name in data


PROMPT_FUNCTION_PACKAGE = "ragas.prompt.metrics"


def has_prompt_functions(module: t.Any) -> bool:
    """Does the module hold prompt-rendering functions (``*_prompt`` from ``ragas.prompt.metrics``:
    the 0.3.x collections interface)?"""
    return any(name.endswith("_prompt") and callable(value)
               and str(getattr(value, "__module__", "")).startswith(PROMPT_FUNCTION_PACKAGE)
               for name, value in vars(module).items()) if module is not None else False


def holds_prompt_objects(metric: t.Any, adapter: PromptAdapter) -> bool:
    """Does the instance hold any of the adapter's prompt attributes (the 0.4.x collections interface)?"""
    return any(hasattr(metric, attribute) for attribute in set(adapter.attributes.values()))


def prompts_for(api: str, metric: t.Any) -> PromptAdapter:
    """The adapter that reaches this instance's prompts: chosen by what the instance offers."""
    if api != API_COLLECTIONS:
        return AliasedPrompts(LEGACY_PROMPTS.api, LEGACY_PROMPTS.attributes, LEGACY_PROMPTS.format_fix_after_raw_reply,
                              LEGACY_PROMPTS.decomposition_names_granularity, LEGACY_PROMPTS.nli_with_zero_claims,
                              metric=metric)
    module = _module_of(metric)
    if not has_prompt_functions(module):
        return COLLECTIONS_PROMPTS
    if holds_prompt_objects(metric, COLLECTIONS_PROMPTS):
        # both (0.4.0 FactualCorrectness: its decomposition prompt an object, its NLI prompt a function of
        # its module): each kind where the instance keeps it, else its module's function; flags as 0.4.x
        granular = object_renders_input_field(
            getattr(metric, COLLECTIONS_PROMPTS.attributes[CLAIM_DECOMPOSITION], None), "atomicity")
        return FunctionPrompts(API_COLLECTIONS, COLLECTIONS_PROMPTS.attributes,
                               COLLECTIONS_PROMPTS.format_fix_after_raw_reply,
                               COLLECTIONS_PROMPTS.decomposition_names_granularity if granular is None else granular,
                               COLLECTIONS_PROMPTS.nli_with_zero_claims, module=module)
    decomposition = getattr(module, "claim_decomposition_prompt", None)
    granular = callable(decomposition) and renders_input_field(decomposition, "atomicity")
    return FunctionPrompts(API_COLLECTIONS, COLLECTIONS_PROMPTS.attributes,
                           format_fix_after_raw_reply=False, decomposition_names_granularity=granular,
                           nli_with_zero_claims=False, module=module)
