"""MultiModalFaithfulness / MultiModalRelevance, both APIs: the reference is the judge's verdict; the scripted
judge knows the legacy ImageTextPrompt by the whole text Ragas renders (an image context as its data URI) and
answers the collections classes' direct chat-client call by its messages; the bundled mm-* cases run through
the real probe."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from ragas_compat.cases import load_default_suite, parse_suite
from ragas_compat.metrics.multimodal import RED_PNG
from ragas_compat.metrics.registry import metric


def _case(verdict, key="multimodal_faithfulness"):
    raw = {"id": "m", "category": "edge", "user_input": "What colour?", "reference": "", "response": "Red.",
           "retrieved_contexts": [RED_PNG, "a photo"], "verdicts": {key: [{"verdict": verdict}]}}
    return parse_suite({"schema_version": 1, "suite": "t", "cases": [raw]}, source="t").cases[0]


@pytest.mark.parametrize(("given", "value"), [(1, 1), (0, 0), (True, 1), (False, 0)])
@pytest.mark.parametrize("key", ["multimodal_faithfulness", "multimodal_relevance"])
def test_the_reference_is_the_verdict(key, given, value):
    outcome = metric(key).outcome(_case(given, key))
    assert outcome.value == Fraction(value) and outcome.details["image_contexts"] == 1


def test_a_verdict_that_is_not_0_or_1_is_refused():
    assert "must be 0 or 1" in metric("multimodal_faithfulness").outcome(_case("yes")).refused


def test_the_script_expects_ragas_s_rendering_with_the_image_uri():
    ragas_metrics = pytest.importorskip("ragas.metrics._multi_modal_faithfulness")
    from ragas_compat.probe.judge.multimodal import image_text_script
    from ragas_compat.probe.judge.prompt_book import PromptBook
    from ragas_compat.probe.judge.scripts import LEGACY_PROMPTS

    book = PromptBook()
    image_text_script("multimodal_faithfulness")(LEGACY_PROMPTS, ragas_metrics.MultiModalFaithfulness(),
                                                 _case(1).raw, book)
    ((text, entry),) = book._texts.items()
    assert RED_PNG in text and text.endswith("a photo") and "Now perform the above instruction" in text
    assert json.loads(entry.replies[0]) == {"faithful": True}


@pytest.mark.slow
def test_bundled_multimodal_cases_through_the_real_probe(tmp_path):
    from typer.testing import CliRunner

    from ragas_compat.cli import app

    suite = {"schema_version": 1, "suite": "mm", "cases": [
        case.raw for case in load_default_suite().cases if case.id.startswith("mm-")]}
    assert len(suite["cases"]) >= 3
    cases = tmp_path / "mm.json"
    cases.write_text(json.dumps(suite))
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--cases", str(cases), "--out", str(out), "--metric",
                                      "multimodal_faithfulness", "--metric", "multimodal_relevance", "--workers", "1",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    rows = {key: dict(zip(report["results"]["columns"], row, strict=True))
            for key, row in report["results"]["data"].items()}
    assert not [key for key, row in rows.items() if row["unexpected"]]
    assert len(rows) == 16 and all(row["classification"] == "identical" for key, row in rows.items()
                                   if not key.startswith("mm-no-context|collections:"))
    for api, name in (("legacy", "MultiModalFaithfulness"), ("collections", "MultiModalFaithfulness"),
                      ("legacy", "MultiModalRelevance"), ("collections", "MultiModalRelevance")):
        assert rows[f"mm-image-contradicts|{api}:{name}"]["ragas_value"] == (0.0 if "Faith" in name else 1.0)
        assert rows[f"mm-image-supports|{api}:{name}"]["prompts"] == 1
    assert rows["mm-no-context|collections:MultiModalFaithfulness"]["classification"] == "error"
    assert rows["mm-no-context|legacy:MultiModalFaithfulness"]["ragas_value"] == 0.0


def test_the_collections_script_keys_the_chat_call_by_the_messages_with_an_image_block():
    ragas_metrics = pytest.importorskip("ragas.metrics.collections")
    from ragas_compat.probe.judge.multimodal import image_text_script, messages_text
    from ragas_compat.probe.judge.prompt_book import PromptBook
    from ragas_compat.probe.judge.scripts import COLLECTIONS_PROMPTS

    book = PromptBook()
    metric = ragas_metrics.MultiModalRelevance.__new__(ragas_metrics.MultiModalRelevance)  # no LLM needed to script
    image_text_script("multimodal_relevance")(COLLECTIONS_PROMPTS, metric, _case(0, "multimodal_relevance").raw, book)
    ((text, entry),) = book._texts.items()
    assert text.startswith(messages_text([])[:15]) and '"type": "image_url"' in text and RED_PNG in text
    assert json.loads(entry.replies[0])["relevant"] is False
