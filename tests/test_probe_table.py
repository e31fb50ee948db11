"""The one target table is the metric registry: the probe's targets (harness/probe/targets.py) are the
registry's, sent as data in the request; both APIs of a metric share fields, applicability and one
judge script (by name). No Ragas needed (fake metric instances stand in for the classes)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import resources
from types import SimpleNamespace

import pytest
from bundled_probe import registry_targets, targets_by_metric

from ragas_compat.cases import load_default_suite
from ragas_compat.metrics.registry import all_metrics
from ragas_compat.probe.judge import scripts as scripts
from ragas_compat.probe.judge.agents import ATTRIBUTES as AGENT_ATTRIBUTES
from ragas_compat.probe.judge.answers import ATTRIBUTES as ANSWER_ATTRIBUTES
from ragas_compat.probe.judge.criteria import PROMPTS as CRITERIA_PROMPTS
from ragas_compat.probe.judge.ratings import RATING_PROMPTS
from ragas_compat.probe.judge.script_table import SCRIPTS
from ragas_compat.probe.judge.scripts import COLLECTIONS_PROMPTS, LEGACY_PROMPTS, PROMPT_KINDS
from ragas_compat.probe.judge.summaries import ATTRIBUTES as SUMMARY_ATTRIBUTES
from ragas_compat.probe.judge.summaries import LEGACY_ATTRIBUTES as SUMMARY_LEGACY_ATTRIBUTES

TARGETS = registry_targets()
TARGETS_BY_NAME = {t.name: t for t in TARGETS}


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    return [case.raw for case in load_default_suite().cases]


# -- one declaration per metric -----------------------------------------------------------
def test_every_target_the_probe_runs_is_one_the_registry_declares_with_its_metric_s_traits():
    specs = {spec.name: spec for spec in all_metrics()}
    assert [t.name for t in TARGETS] == [t for t in TARGETS_BY_NAME]  # names are unique
    assert {t.name for t in TARGETS} == {str(t) for spec in specs.values() for t in spec.ragas_targets}
    apis = [t.api for t in TARGETS]
    assert apis == sorted(apis, key=lambda api: api != "legacy")  # legacy first, then collections
    for target in TARGETS:
        spec = specs[target.metric]
        assert target.name in spec.ragas_targets, target.name
        # the metric's fields, or fewer where the registry declares what the class reads (RagasTargets.class_fields)
        assert target.fields_read == spec.ragas.fields_of(target.api, target.class_name, spec.fields_read)
        assert set(target.fields_read) <= set(spec.fields_read), target.name
        assert target.needs_judge == (spec.ragas.judge is not None)
        assert target.verdict_key == (spec.verdicts.key if spec.verdicts else None)
        assert target.judge is None or target.judge in SCRIPTS, target.name


def test_legacy_and_collections_targets_of_a_metric_share_fields_applicability_and_script(cases):
    specs = {spec.name: spec for spec in all_metrics()}
    for metric, targets in targets_by_metric().items():
        first = targets[0]
        declared = {name for name, _, _ in specs[metric].ragas.class_fields}  # classes that read fewer fields
        for target in targets:
            assert [target.applies(c) for c in cases] == [first.applies(c) for c in cases], target.name
            assert (target.judge, target.verdict_key) == (first.judge, first.verdict_key), target.name
            if target.name not in declared:
                assert target.fields_read == specs[metric].fields_read, target.name
        if any(t.api == "collections" for t in targets) and not first.needs_judge:
            # the collections API (0.4.3) has no NonLLM context or ID classes; its non-LLM classes are the
            # string, n-gram, edit-similarity and embedding ones (issue 19)
            assert not metric.startswith(("context_", "id_")), metric


@pytest.mark.slow
def test_llm_targets_name_their_verdict_key_and_apply_exactly_when_it_is_present(cases):
    specs = {spec.name: spec for spec in all_metrics()}
    for target in TARGETS:
        assert (target.verdict_key is None) == (target.judge is None), target.name
        if target.verdict_key is not None:
            assert [target.applies(c) for c in cases] == [specs[target.metric].applies_to(c) for c in
                                                          load_default_suite().cases]
    # every verdict key the case schema defines (single- and multi-turn) drives a target, and no other
    schema = json.loads(resources.files("ragas_compat.cases").joinpath("cases.schema.json").read_text())
    keys = {key for kind in ("case", "multiTurnCase") for key in schema["$defs"][kind]["properties"]["verdicts"]["properties"]}
    assert {t.verdict_key for t in TARGETS} - {None} == keys


def test_the_probe_applies_a_target_exactly_where_the_registry_applies_its_metric(cases):
    specs = {spec.name: spec for spec in all_metrics()}
    suite = load_default_suite().cases
    for target in TARGETS:
        assert [target.applies(c) for c in cases] == [specs[target.metric].applies_to(c) for c in suite], target.name


# -- one script for both APIs --------------------------------------------------------------
def test_each_prompt_adapter_knows_every_prompt_kind():
    for adapter in (LEGACY_PROMPTS, COLLECTIONS_PROMPTS):
        assert set(adapter.attributes) == set(PROMPT_KINDS), adapter.api
    assert LEGACY_PROMPTS.format_fix_after_raw_reply and not COLLECTIONS_PROMPTS.format_fix_after_raw_reply
    assert LEGACY_PROMPTS.attributes["nli_statements"] == "nli_statements_prompt"
    assert COLLECTIONS_PROMPTS.attributes["nli_statements"] == "nli_statement_prompt"


class RecordingBook:
    """Records what a script expects (the PromptBook methods a script calls)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.instructions: set[str] = set()

    def expect(self, kind, instruction, prompt_input, reply, label, row=None):
        self.instructions.add(instruction)
        self.calls.append(("expect", kind, prompt_input, reply, label))

    def expect_raw(self, kind, instruction, prompt_input, text, label, row=None):
        self.instructions.add(instruction)
        self.calls.append(("expect_raw", kind, prompt_input, text, label))

    def expect_format_fix(self, fix_instruction, kind, prompt_input, output_string, fixed_text, label):
        self.calls.append(("expect_format_fix", fix_instruction, kind, prompt_input, output_string, label))

    def expect_samples(self, kind, instruction, prompt_input, replies, label):
        self.instructions.add(instruction)
        self.calls.append(("samples", kind, prompt_input, replies, label))

    # the same samples, asked as n calls (collections AnswerRelevancy) instead of one generate(n=...) call
    expect_in_order = expect_samples

    def allow(self, kind, instruction, prompt_input, reply, label):  # answered if asked, never expected
        self.instructions.add(instruction)
        self.calls.append(("allow", kind, prompt_input, reply, label))

    def alias(self, kind, prompt_input, other_input):  # the same asking, rendered as another release does
        self.calls.append(("alias", kind, prompt_input, other_input))


def fake_metric(adapter) -> SimpleNamespace:
    """A metric instance holding its prompts where ``adapter``'s API keeps them."""
    attributes = [*adapter.attributes.values(), *ANSWER_ATTRIBUTES[adapter.api].values(), *AGENT_ATTRIBUTES.values(),
                  *(where[adapter.api] for where, _ in CRITERIA_PROMPTS.values() if adapter.api in where),
                  *SUMMARY_ATTRIBUTES.get(adapter.api, SUMMARY_LEGACY_ATTRIBUTES).values()]
    return SimpleNamespace(**{attribute: SimpleNamespace(instruction=f"{adapter.api} {attribute}")
                              for attribute in attributes})


def expectations(target, case) -> RecordingBook:
    book = RecordingBook()
    metric = fake_metric(target.prompts)
    target.expect_prompts(metric, case, book)
    assert book.instructions <= {prompt.instruction for prompt in vars(metric).values()}
    return book


def same_prompts(calls: list[tuple]) -> list[tuple]:
    """The calls without the documented per-API differences (PromptAdapter): FactualCorrectness's
    decomposition input names atomicity/coverage on one API, and its NLI prompt for zero claims is
    asked on the other."""
    out = []
    for call in calls:
        if call[0] == "expect" and call[1] == scripts.CLAIM_NLI and call[2].get("statements") == []:
            continue
        if call[0] == "expect" and call[1] == "correctness_classifier" and not (
                call[2]["answer"] and call[2]["ground_truth"]):
            continue  # AnswerCorrectness: collections asks its classifier only with statements on both sides
        if call[0] == "expect" and call[1] == "topic_classification" and call[2]["topics"] == []:
            continue  # TopicAdherence: legacy classifies no topic, collections returns NaN before asking
        if call[0] in ("expect", "allow") and call[1] == scripts.CLAIM_DECOMPOSITION:
            call = (*call[:2], {k: v for k, v in call[2].items() if k not in ("atomicity", "coverage")}, *call[3:])
        out.append(call)
    return out


SUMMARY_METRICS = {"summary_score", "summary_score_qa"}
PER_API_REPLIES = {"sql_equivalence", "multimodal_faithfulness", "multimodal_relevance"}


def test_both_apis_of_a_metric_expect_the_same_prompts_and_replies(cases, monkeypatch):
    monkeypatch.setattr(scripts, "fix_output_format_instruction", lambda: "fix the output format")
    raw_reply_cases = 0
    for metric, targets in targets_by_metric().items():
        apis = {t.api for t in targets}
        if apis != {"legacy", "collections"} or metric in RATING_PROMPTS:
            continue  # one API only (QuotedSpansAlignment); the rating metrics' APIs render different string templates (tests/test_probe_nvidia_ratings.py)
        if metric == "instance_rubrics":
            continue  # legacy folds the contexts into the question (tests/test_probe_criteria_rubrics.py)
        if metric in PER_API_REPLIES:
            continue  # one prompt whose reply keys (SQL) or rendering (multimodal chat messages) differ by API
        [legacy, *_], [collections, *_] = ([t for t in targets if t.api == api] for api in ("legacy", "collections"))
        for case in filter(legacy.applies, cases):
            legacy_calls = expectations(legacy, case).calls
            collections_calls = expectations(collections, case).calls
            if metric in SUMMARY_METRICS and not collections_calls:
                # SummaryScore raises ValueError before asking on empty contexts or an empty response
                assert not any(str(c).strip() for c in case.get("reference_contexts") or []) or not (
                    case.get("response") or "").strip(), case["id"]
                continue
            assert (same_prompts([c for c in legacy_calls if c[0] != "expect_format_fix"])
                    == same_prompts(collections_calls)), (metric, case["id"])
            raw = bool((case.get("judge_replies") or {}).get(legacy.verdict_key))
            raw_reply_cases += raw
            # the legacy API follows a raw reply with its format-fix prompt; the collections path does not
            assert [c[0] for c in legacy_calls].count("expect_format_fix") == int(raw), (metric, case["id"])
    assert raw_reply_cases >= 1  # the suite has a raw judge reply (edge-judge-reply-unparseable)


@pytest.mark.parametrize("adapter", [LEGACY_PROMPTS, COLLECTIONS_PROMPTS], ids=lambda a: a.api)
def test_a_script_reads_a_prompt_only_when_it_expects_one(adapter):
    """A class whose prompts live elsewhere (the 0.3.x collections API) fails only when a prompt
    is expected: with nothing retrieved, context precision asks nothing, so it is scored."""
    script = TARGETS_BY_NAME["legacy:ContextPrecision"].script
    key = "context_precision_with_reference"
    book = RecordingBook()
    script(adapter, object(), {"verdicts": {key: []}}, book)
    assert book.calls == []
    with pytest.raises(AttributeError):
        script(adapter, object(), {"verdicts": {key: [1]}, "retrieved_contexts": ["c"]}, book)


# -- the probe holds no table -----------------------------------------------------------
def test_the_probe_knows_no_target_name_of_its_own():
    """Every Ragas class name the registry declares appears in no probe module: the probe has code only."""
    from ragas_compat.probe.protocol import PROBE_DIR

    classes = {t.class_name for t in TARGETS} - {"Faithfulness", "ContextRecall", "ContextPrecision"}
    import pathlib

    for path in pathlib.Path(PROBE_DIR).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        quoted = {c for c in classes if f'"{c}"' in text or f"'{c}'" in text}
        assert not quoted - {"LLMContextPrecisionWithReference"} or path.parent.name == "bench", (path, quoted)


NO_RAGAS = textwrap.dedent("""
    import sys

    class BlockRagas:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("ragas", "langchain_core", "pydantic"):
                raise ImportError(name + " is blocked for this test")
            return None

    sys.meta_path.insert(0, BlockRagas())
    from ragas_compat.probe.targets import targets_from_request
    from ragas_compat.runner import request_targets
    import ragas_compat.runner, ragas_compat.values, ragas_compat.probe.evaluate, ragas_compat.probe.scoring

    targets = targets_from_request(request_targets())
    names = [t.name for t in targets if t.metric == "faithfulness"]
    assert names == ["legacy:Faithfulness", "collections:Faithfulness"], names
    assert not any(m.split(".")[0] in ("ragas", "langchain_core", "pydantic") for m in sys.modules)
    print("ok", len(targets))
""")


def test_the_table_is_importable_on_the_host_without_ragas():
    result = subprocess.run([sys.executable, "-c", NO_RAGAS], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", str(len(TARGETS))]
