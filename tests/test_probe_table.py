"""The one target table (harness/probe/probe_targets.py): each metric is one row from which its legacy
and collections targets derive, both APIs run the row's one judge script, and the table agrees with
the metric registry. No Ragas needed (fake metric instances stand in for the classes)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from ragas_compat.cases import load_default_suite
from ragas_compat.probe.judge import scripts as scripts
from ragas_compat.probe.judge.answers import ATTRIBUTES as ANSWER_ATTRIBUTES
from ragas_compat.probe.judge.criteria import PROMPTS as CRITERIA_PROMPTS
from ragas_compat.probe.judge.ratings import RATING_PROMPTS
from ragas_compat.probe.judge.scripts import COLLECTIONS_PROMPTS, LEGACY_PROMPTS, PROMPT_KINDS
from ragas_compat.probe.targets import (
    COLLECTIONS_TARGETS,
    LEGACY_TARGETS,
    TARGET_ROWS,
    TARGETS,
    TARGETS_BY_NAME,
    targets_by_metric,
)


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    return [case.raw for case in load_default_suite().cases]


# -- one row per metric --------------------------------------------------------------------
def test_every_target_derives_from_the_one_row_of_its_metric():
    assert len({row.metric for row in TARGET_ROWS}) == len(TARGET_ROWS)
    rows = {row.metric: row for row in TARGET_ROWS}
    for target in TARGETS:
        assert target.row is rows[target.metric], target.name
        assert target.fields_read == target.row.fields_read and target.needs_judge == target.row.needs_judge
    assert TARGETS == LEGACY_TARGETS + COLLECTIONS_TARGETS
    assert {t.api for t in LEGACY_TARGETS} == {"legacy"} and {t.api for t in COLLECTIONS_TARGETS} == {"collections"}
    assert list(TARGETS_BY_NAME) == [t.name for t in TARGETS]  # names are unique


def test_legacy_and_collections_targets_of_a_metric_share_fields_applicability_and_script(cases):
    for row in TARGET_ROWS:
        legacy = [t for t in row.targets() if t.api == "legacy"]
        collections = [t for t in row.targets() if t.api == "collections"]
        assert [t.class_name for t in legacy] == list(row.legacy_classes)
        assert [t.class_name for t in collections] == list(row.collections_classes)
        assert {t.module for t in legacy} == ({row.legacy_module} if legacy else set())  # QuotedSpansAlignment: no legacy class
        for target in legacy + collections:
            assert [target.applies(c) for c in cases] == [row.applies(c) for c in cases], target.name
        if collections and not row.needs_judge:
            # the collections API (0.4.3) has no NonLLM context or ID classes; its non-LLM classes are the
            # string, n-gram, edit-similarity and embedding ones (issue 19)
            assert not row.metric.startswith(("context_", "id_")), row.metric


def test_llm_rows_name_their_verdict_key_and_apply_exactly_when_it_is_present(cases):
    for row in TARGET_ROWS:
        assert (row.verdict_key is None) == (row.script is None), row.metric
        if row.verdict_key is not None:
            assert [row.applies(c) for c in cases] == [row.verdict_key in c.get("verdicts", {}) for c in cases]
    assert {row.verdict_key for row in TARGET_ROWS} - {None} == {
        "context_precision_with_reference", "context_precision_without_reference", "context_recall", "faithfulness",
        "factual_correctness", "context_entity_recall", "noise_sensitivity",
        "answer_accuracy", "context_relevance", "response_groundedness", "answer_correctness", "answer_relevancy",
        "aspect_critic", "simple_criteria", "rubrics_score", "instance_rubrics"}


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

    def expect(self, kind, instruction, prompt_input, reply, label):
        self.instructions.add(instruction)
        self.calls.append(("expect", kind, prompt_input, reply, label))

    def expect_raw(self, kind, instruction, prompt_input, text, label):
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
    attributes = [*adapter.attributes.values(), *ANSWER_ATTRIBUTES[adapter.api].values(),
                  *(where[adapter.api] for where, _ in CRITERIA_PROMPTS.values() if adapter.api in where)]
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
        if call[0] in ("expect", "allow") and call[1] == scripts.CLAIM_DECOMPOSITION:
            call = (*call[:2], {k: v for k, v in call[2].items() if k not in ("atomicity", "coverage")}, *call[3:])
        out.append(call)
    return out


def test_both_apis_of_a_metric_expect_the_same_prompts_and_replies(cases, monkeypatch):
    monkeypatch.setattr(scripts, "fix_output_format_instruction", lambda: "fix the output format")
    raw_reply_cases = 0
    for row in TARGET_ROWS:
        if not row.collections_classes or not row.legacy_classes or row.metric in RATING_PROMPTS:
            continue  # one API only (QuotedSpansAlignment); the rating metrics' APIs render different string templates (tests/test_probe_nvidia_ratings.py)
        if row.metric == "instance_rubrics":
            continue  # legacy folds the contexts into the question (tests/test_probe_criteria_rubrics.py)
        [legacy, *_], [collections, *_] = ([t for t in row.targets() if t.api == api]
                                           for api in ("legacy", "collections"))
        for case in filter(row.applies, cases):
            legacy_calls = expectations(legacy, case).calls
            collections_calls = expectations(collections, case).calls
            assert (same_prompts([c for c in legacy_calls if c[0] != "expect_format_fix"])
                    == same_prompts(collections_calls)), (row.metric, case["id"])
            raw = bool((case.get("judge_replies") or {}).get(row.verdict_key))
            raw_reply_cases += raw
            # the legacy API follows a raw reply with its format-fix prompt; the collections path does not
            assert [c[0] for c in legacy_calls].count("expect_format_fix") == int(raw), (row.metric, case["id"])
    assert raw_reply_cases >= 1  # the suite has a raw judge reply (edge-judge-reply-unparseable)


@pytest.mark.parametrize("adapter", [LEGACY_PROMPTS, COLLECTIONS_PROMPTS], ids=lambda a: a.api)
def test_a_script_reads_a_prompt_only_when_it_expects_one(adapter):
    """A class whose prompts live elsewhere (the 0.3.x collections API) fails only when a prompt
    is expected: with nothing retrieved, context precision asks nothing, so it is scored."""
    script = TARGETS_BY_NAME["legacy:ContextPrecision"].row.script
    key = "context_precision_with_reference"
    book = RecordingBook()
    script(adapter, object(), {"verdicts": {key: []}}, book)
    assert book.calls == []
    with pytest.raises(AttributeError):
        script(adapter, object(), {"verdicts": {key: [1]}, "retrieved_contexts": ["c"]}, book)


# -- the table against the registry --------------------------------------------------------
def _registry() -> dict[str, tuple[set[str], tuple[str, ...]]]:
    """metric -> (target names, fields read) from the metric registry. Older registries list the
    legacy class names only (bare), newer ones ``"<api>:<Class>"`` names of both APIs."""
    import ragas_compat.metrics.registry as registry

    specs = registry.all_metrics() if hasattr(registry, "all_metrics") else registry.METRICS
    return {spec.name: ({str(t) if ":" in str(t) else f"legacy:{t}" for t in spec.ragas_targets},
                        tuple(spec.fields_read)) for spec in specs}


def test_targets_by_metric_agrees_with_the_registry():
    registry = _registry()
    table = targets_by_metric()
    assert set(table) == {name for name, (targets, _) in registry.items() if targets}
    with_collections = any(n.startswith("collections:") for targets, _ in registry.values() for n in targets)
    for metric, names in table.items():
        ours = {n for n in names if with_collections or n.startswith("legacy:")}
        assert ours == registry[metric][0], metric
    for row in TARGET_ROWS:
        assert set(row.fields_read) == set(registry[row.metric][1]), row.metric


def test_targets_by_metric_lists_every_target_once():
    names = [name for names in targets_by_metric().values() for name in names]
    assert sorted(names) == sorted(TARGETS_BY_NAME)


NO_RAGAS = textwrap.dedent("""
    import sys

    class BlockRagas:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("ragas", "langchain_core", "pydantic"):
                raise ImportError(name + " is blocked for this test")
            return None

    sys.meta_path.insert(0, BlockRagas())
    from ragas_compat.probe.targets import targets_by_metric
    import ragas_compat.runner, ragas_compat.values, ragas_compat.probe.evaluate, ragas_compat.probe.scoring

    table = targets_by_metric()
    assert table["faithfulness"] == ("legacy:Faithfulness", "collections:Faithfulness"), table
    assert not any(m.split(".")[0] in ("ragas", "langchain_core", "pydantic") for m in sys.modules)
    print("ok", sum(len(names) for names in table.values()))
""")


def test_the_table_is_importable_on_the_host_without_ragas():
    result = subprocess.run([sys.executable, "-c", NO_RAGAS], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", str(len(TARGETS))]
