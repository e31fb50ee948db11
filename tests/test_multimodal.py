"""The legacy MultiModalFaithfulness / MultiModalRelevance: the reference is the judge's verdict; the scripted
judge knows the ImageTextPrompt by the whole text Ragas renders (an image context as its data URI); the bundled
mm-* cases run through the real probe."""

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
    assert len(rows) == 6 and all(row["classification"] == "identical" for row in rows.values())
    assert rows["mm-image-contradicts|legacy:MultiModalFaithfulness"]["ragas_value"] == 0.0
    assert rows["mm-image-contradicts|legacy:MultiModalRelevance"]["ragas_value"] == 1.0
    assert all(row["prompts"] == 1 for row in rows.values())
