"""The provenance covers what it claims: pinned/pin.toml audits the Ragas files behind every
registered target (legacy and collections), with blob ids at v0.4.3, the 0.4.3 wheel and
main@2b38724; a target whose files are not audited is named in the pin status and report.md."""

from __future__ import annotations

import dataclasses
import importlib.metadata

import pytest

from ragas_compat.errors import HarnessInputError
from ragas_compat.pin.manifest import dump_manifest, load_manifest, parse_manifest
from ragas_compat.pin.modules import (
    class_key,
    coverage,
    measure_target_modules,
    registered_targets,
    unaudited_targets,
)
from ragas_compat.pin.sources import resolve_installed


def test_every_registered_target_has_its_ragas_files_audited():
    manifest = load_manifest()
    targets = registered_targets()
    assert len(targets) >= 100  # legacy and collections
    assert unaudited_targets(manifest, targets) == {}
    apis = {target["api"] for target in targets.values()}
    assert apis == {"legacy", "collections"}
    # the classes the issue named as hashed by nobody
    for key, module in (("legacy:BleuScore", "src/ragas/metrics/_bleu_score.py"),
                        ("legacy:AnswerAccuracy", "src/ragas/metrics/_nv_metrics.py"),
                        ("legacy:DataCompyScore", "src/ragas/metrics/_datacompy_score.py"),
                        ("collections:DataCompyScore", "src/ragas/metrics/collections/datacompy_score/metric.py"),
                        ("collections:Faithfulness", "src/ragas/metrics/collections/faithfulness/util.py")):
        assert module in manifest.target_modules[key]
        assert module in manifest.audited_files


def test_every_audited_file_is_behind_some_target_and_hashed_at_every_reference_point():
    manifest = load_manifest()
    behind = {file for modules in manifest.target_modules.values() for file in modules}
    assert behind == set(manifest.audited_files)
    for name in ("v0.4.3", "wheel ragas-0.4.3", "main@2b38724"):
        point = manifest.reference_point(name)
        assert point is not None and set(point.blobs) == set(manifest.audited_files), name
    tag, wheel, main = (manifest.reference_point(n) for n in ("v0.4.3", "wheel ragas-0.4.3", "main@2b38724"))
    assert tag.blobs == wheel.blobs
    # between v0.4.3 and main@2b38724 only the average-precision rewrite (db8eb679) changed an audited file
    assert sorted(f for f in tag.blobs if tag.blobs[f] != main.blobs[f]) == [
        "src/ragas/metrics/_context_precision.py", "src/ragas/metrics/collections/context_precision/metric.py"]


def test_a_target_whose_class_is_not_audited_is_named():
    manifest = load_manifest()
    targets = dict(registered_targets())
    toy = dict(next(iter(targets.values())), api="legacy", ragas_class="ToyUnauditedMetric")
    targets["legacy:ToyUnauditedMetric"] = toy
    missing = unaudited_targets(manifest, targets)
    assert list(missing) == ["legacy:ToyUnauditedMetric"]
    assert "legacy:ToyUnauditedMetric" in missing["legacy:ToyUnauditedMetric"]
    shown = coverage(manifest, targets)
    assert shown["targets_covered"] == shown["targets"] - 1
    # an entry naming a file that is no longer audited does not count either
    bleu = "src/ragas/metrics/_bleu_score.py"
    fewer = dataclasses.replace(manifest, audited_files=tuple(f for f in manifest.audited_files if f != bleu))
    assert set(unaudited_targets(fewer)) == {"legacy:BleuScore"}


def test_the_pin_status_names_unaudited_targets_instead_of_a_blanket_claim():
    manifest = load_manifest()
    bleu = dict(manifest.target_modules)
    del bleu["legacy:BleuScore"]
    partial = dataclasses.replace(manifest, target_modules=bleu)
    source = resolve_installed(partial)
    assert "the files behind 1 registered target are not audited (no claim about them): legacy:BleuScore" \
        in source.pin_status
    assert source.to_provenance()["audited_coverage"]["unaudited_targets"] == {
        "legacy:BleuScore": "no [audited.targets] entry for legacy:BleuScore"}
    full = resolve_installed(manifest).to_provenance()
    assert full["audited_coverage"]["unaudited_targets"] == {}
    assert full["audited_coverage"]["files_hashed"] == len(manifest.audited_files)


def test_report_md_lists_the_hashed_modules():
    from ragas_compat.report.markdown.document import _hashed_modules

    manifest = load_manifest()
    files = list(manifest.audited_files)
    text = _hashed_modules(coverage(manifest), files)
    assert text.startswith(f"{len(files)} files under src/ragas/metrics/, behind all ")
    assert "`_bleu_score.py`" in text and "`collections/datacompy_score/metric.py`" in text
    targets = dict(registered_targets())
    targets["legacy:ToyUnauditedMetric"] = dict(next(iter(targets.values())), ragas_class="ToyUnauditedMetric",
                                                api="legacy")
    assert "no claim about: `legacy:ToyUnauditedMetric`" in _hashed_modules(coverage(manifest, targets), files)


def test_the_manifest_refuses_a_target_file_that_is_not_audited():
    text = dump_manifest(load_manifest())
    broken = text.replace('"legacy:BleuScore" = ["src/ragas/metrics/_bleu_score.py"',
                          '"legacy:BleuScore" = ["src/ragas/metrics/_bleu_scores.py"')
    assert broken != text
    with pytest.raises(HarnessInputError) as info:
        parse_manifest(broken, origin="pin.toml")
    assert any("not in audited.files: src/ragas/metrics/_bleu_scores.py" in p for p in info.value.problems)
    assert parse_manifest(text).target_modules == load_manifest().target_modules


@pytest.mark.slow
def test_the_recorded_modules_are_what_the_installed_ragas_043_defines():
    """Re-derive [audited.targets] from the installed Ragas (in a subprocess): it must equal the manifest."""
    if importlib.metadata.version("ragas") != "0.4.3":
        pytest.skip("the mapping was measured on Ragas 0.4.3")
    manifest = load_manifest()
    keys = {class_key(target) for target in registered_targets().values()}
    assert measure_target_modules(keys) == {key: manifest.target_modules[key] for key in keys}
