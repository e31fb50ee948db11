"""``fuzz.json`` and ``fuzz.md``: the verdict (as ``run``'s, under the same rules), counts per
classification, the rules that explained rows, the drift findings and the smallest unexplained examples.

Values use the audit report's encoding (``ragas_compat.values``: NaN as ``"NaN"``, undefined as
``null``, errors as ``{"error": ...}``, exact values as fraction strings). Both files are a
function of the arguments (seed, n, metrics): no timings, no paths, so two runs with the same
seed write the same bytes. They are written together atomically.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ragas_compat.compare.audit import AuditRow
from ragas_compat.compare.classify import CLASSIFICATIONS
from ragas_compat.compare.findings import counts as finding_counts
from ragas_compat.report.atomic import write_reports_atomically
from ragas_compat.report.json_report import reference_value_json
from ragas_compat.report.markdown.table import markdown_table
from ragas_compat.tools.fuzz.runner import FuzzRun, unexplained_rows
from ragas_compat.tools.fuzz.shrink import example_case, example_size, smallest_per_classification, smallest_per_target
from ragas_compat.values import RagasError, encode_detail, encode_fraction, encode_ragas_value

FUZZ_FORMAT = 2  # 2: rows explained by the run's rules and case entries; verdict and findings as run's
FINDING_LINES = 50  # drift findings listed in fuzz.md (fuzz.json lists every one)
FUZZ_FILES = ("fuzz.json", "fuzz.md")
STRING_TARGETS_NOTE = ("every generated context is one letter repeated, a different letter per context of a case, so "
                       "Levenshtein similarity is exactly 1 (equal) or 0 (different): the NonLLM string targets' fuzzy "
                       "match and the reference's exact match agree by construction, and those targets are fuzzed")
SHRINKING = ("selection, then delta debugging: among the rows no rule or case entry explains, the smallest "
             "generated example per classification and Ragas target (total list length of the inputs the metric reads, then canonical JSON) is the start; "
             "ragas_compat.tools.fuzz.delta_debug removes contexts (with their labels), claims, reference contexts, "
             "IDs and R, and cuts context texts to one character, while Ragas still shows the same target, "
             "metric and classification, still unexplained (errors: the same exception and message), re-running every candidate "
             "through the probe, until no single removal or cut keeps it (1-minimal) or the probe rounds run out")


def _counts(rows: list[AuditRow] | tuple[AuditRow, ...]) -> dict[str, int]:
    counter = Counter(row.classification.name for row in rows)
    return {name: counter.get(name, 0) for name in CLASSIFICATIONS}


def _grouped(run: FuzzRun, key) -> dict[str, dict[str, int]]:
    groups: dict[str, list[AuditRow]] = {}
    for row in run.rows:
        groups.setdefault(key(row), []).append(row)
    return {name: _counts(rows) for name, rows in sorted(groups.items())}


def error_kinds(run: FuzzRun) -> list[dict[str, Any]]:
    """Each distinct (target, error type, message, who raised it: "Ragas" or "harness") with its count,
    most frequent first."""
    counter: Counter = Counter()
    for row in run.rows:
        if isinstance(row.ragas_value, RagasError):
            raised_by = "harness" if row.ragas_value.raised_by_harness else "Ragas"
            counter[(row.target, row.ragas_value.type, row.ragas_value.message, raised_by)] += 1
    return [{"target": t, "type": e, "message": m, "raised_by": r, "count": c}
            for (t, e, m, r), c in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]


def _values_json(row: AuditRow) -> dict[str, Any]:
    return {"ragas_value": encode_ragas_value(row.ragas_value),
            "reference_value": reference_value_json(row.reference),
            "reference_exact": encode_fraction(row.reference.value),
            "explanation": row.classification.explanation}


def shrunk_json(shrunk: Any) -> dict[str, Any]:
    """A ``delta_debug.Shrunk``: how the search ended, what it cost, and the shrunk case with its values."""
    return {"status": shrunk.status, "minimal": shrunk.minimal, "rounds": shrunk.rounds,
            "candidates": shrunk.candidates, "start_size": shrunk.start_size, "size": shrunk.size,
            **({"detail": shrunk.detail} if shrunk.detail else {}),
            **(_values_json(shrunk.row) if shrunk.row is not None else {}),
            "case": shrunk.case}


def example_json(row: AuditRow, shrunk: Any = None) -> dict[str, Any]:
    """The selected example of ``row`` (the shrinker's start) and, when given, its ``shrunk`` form."""
    example = example_case(row)
    extra = {"shrunk": shrunk_json(shrunk)} if shrunk is not None else {}
    return {
        "case_id": row.case.id,
        "metric": row.spec.name,
        "ragas_target": row.target,
        "size": example_size(example),
        "ragas_value": encode_ragas_value(row.ragas_value),
        "reference_value": reference_value_json(row.reference),
        "reference_exact": encode_fraction(row.reference.value),
        "reference_undefined_reason": row.reference.undefined_reason,
        "reference_alternatives": encode_detail(dict(row.reference.alternatives)),
        "explanation": row.classification.explanation,
        "case": example,
        **extra,
    }


def explained_by(run: FuzzRun) -> dict[str, int]:
    """Rows a rule or case entry explains (not ``identical``), per rule or entry, most frequent first."""
    counter = Counter(row.expected.by for row in run.rows
                      if row.expected.explained and not row.unexpected and row.classification.name != "identical")
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def findings_json(run: FuzzRun) -> list[dict[str, Any]]:
    return [{"kind": f.kind, "case_id": f.case_id, "target": f.target, "classification": f.classification,
             "expected": f.expected, "message": f.message} for f in run.findings]


def fuzz_to_json(run: FuzzRun) -> dict[str, Any]:
    drift = unexplained_rows(run.rows)
    unexplained = smallest_per_classification(drift, {str(row.classification.name) for row in drift})
    verdict = run.verdict
    return {
        "fuzz_format": FUZZ_FORMAT,
        "encoding": {"NaN": "the string \"NaN\"", "undefined": "null",
                     "error": "an object with key \"error\"", "exact": "a fraction string such as \"5/6\""},
        "settings": {"seed": run.seed, "cases": run.cases, "metrics": list(run.metrics),
                     "targets": list(run.targets), "shrink_rounds": run.shrink_rounds,
                     "generator": "ragas_compat.tools.fuzz.generator (seeded random.Random per case)"},
        "provenance": run.provenance,
        "expectations": run.expectations,
        "verdict": None if verdict is None else {
            "status": verdict.status, "line": verdict.line(), "identical": verdict.identical,
            "explained": verdict.explained, "unexplained": verdict.unexplained, "errors": verdict.errors,
            "harness_errors": verdict.harness_errors},
        "drift": run.drift,
        "divergence": run.divergence,
        "findings_by_kind": finding_counts(run.findings),
        "explained_by": explained_by(run),
        "findings": findings_json(run),
        "pairs": len(run.rows),
        "contexts_scored": run.contexts_scored,
        "by_classification": _counts(run.rows),
        "by_metric": _grouped(run, lambda r: r.spec.name),
        "by_target": _grouped(run, lambda r: r.target),
        "errors": error_kinds(run),
        "shrinking": SHRINKING,
        "string_targets": STRING_TARGETS_NOTE,
        "smallest_examples": {
            name: {**example_json(row, run.shrunk.get((name, row.target))),
                   "by_target": {t: example_json(r, run.shrunk.get((name, t)))
                                 for t, r in smallest_per_target(run.rows, name).items()}}
            for name, row in sorted(unexplained.items(), key=lambda kv: CLASSIFICATIONS.index(kv[0]))
        },
    }


def _md_value(value: Any) -> str:
    if isinstance(value, dict) and "error" in value:
        return f"error {value['error']['type']}: {value['error']['message']}"
    return json.dumps(value, ensure_ascii=False)


def _md_shrunk(shrunk: dict[str, Any] | None) -> str:
    """How the shown example was shrunk (after the selected example's case and size)."""
    if shrunk is None:
        return ""
    how = f"shrunk to size {shrunk['size']} in {shrunk['rounds']} probe rounds, {shrunk['candidates']} candidate cases"
    if shrunk["status"] == "1-minimal":
        return f"; {how}; 1-minimal: no single removal or cut keeps the finding"
    if shrunk["status"] == "round bound":
        return f"; {how}; stopped by the round bound before 1-minimality (raise --shrink-rounds)"
    if "ragas_value" in shrunk:
        return f"; {how}; stopped, {shrunk['status']}: {shrunk.get('detail', '')}"
    return f"; not shrunk, {shrunk['status']}: {shrunk.get('detail', '')}"


def fuzz_to_markdown(data: dict[str, Any]) -> str:
    settings = data["settings"]
    used = [c for c in CLASSIFICATIONS if data["by_classification"][c]]
    lines = [f"# Fuzz: Ragas {data['provenance'].get('ragas_version')} vs reference", "",
             f"Seed {settings['seed']}, {settings['cases']} generated cases, {data['pairs']} (case, Ragas target) "
             f"pairs, {data['contexts_scored']} scored contexts. "
             f"Drift: **{'yes' if data['drift'] else 'no'}**.", "",
             (data["verdict"] or {}).get("line", ""), "",
             f"Rows are explained as `run` explains them, by the rules and case entries of {data['expectations']}: "
             "a difference one of them names is no drift; everything else is a finding.", "",
             f"String-similarity targets: {data['string_targets']}.", "",
             "## Counts", ""]
    lines += markdown_table(["classification", "pairs"], [[c, str(data["by_classification"][c])] for c in CLASSIFICATIONS])
    lines += ["## Counts per Ragas target", ""]
    lines += markdown_table(["target", *used], [[t, *(str(counts[c]) for c in used)]
                                        for t, counts in data["by_target"].items()])
    if data["explained_by"]:
        lines += ["## Explained by rules and case entries", ""]
        lines += markdown_table(["rule or case entry", "rows"], [[by, str(n)] for by, n in data["explained_by"].items()])
    if data["findings"]:
        lines += ["## Drift", "", "What `run` would call drift on these rows (" + ", ".join(
            f"{n} {kind}" for kind, n in data["findings_by_kind"].items() if n) + "):", ""]
        lines += [f"- {f['kind']}: case `{f['case_id']}`, {f['target']}: {f['message']}" if f["case_id"] is not None
                  else f"- {f['kind']}: {f['message']}" for f in data["findings"][:FINDING_LINES]]
        if len(data["findings"]) > FINDING_LINES:
            lines.append(f"- ... and {len(data['findings']) - FINDING_LINES} more (fuzz.json lists every one)")
        lines.append("")
    if data["errors"]:
        lines += ["## Errors", "", "Raised by Ragas, or by the harness while driving it (its scripted judge, "
                  "frozen embedding model or probe: no Ragas value, and nothing said of Ragas).", ""]
        lines += markdown_table(["target", "raised by", "error", "count"],
                        [[e["target"], e.get("raised_by", "Ragas"), f"{e['type']}: {e['message']}", str(e["count"])]
                         for e in data["errors"]])
    lines += ["## Smallest unexplained examples", "", f"Shrinking: {data['shrinking']}.", ""]
    if not data["smallest_examples"]:
        lines.append("None: a rule or case entry explains every difference.")
    for name, example in data["smallest_examples"].items():
        lines += [f"### {name}", ""]
        for target, ex in example["by_target"].items():
            shrunk = ex.get("shrunk")
            shown = shrunk if shrunk is not None and "ragas_value" in shrunk else ex  # shrunk once re-run
            lines += [f"**{target}** (case `{ex['case_id']}`, size {ex['size']}{_md_shrunk(shrunk)}): "
                      f"Ragas {_md_value(shown['ragas_value'])}, reference {_md_value(shown['reference_value'])}. "
                      f"{shown['explanation']}", "",
                      "```json", json.dumps(shown["case"], ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def render_fuzz(run: FuzzRun) -> dict[str, str]:
    data = fuzz_to_json(run)
    return {"fuzz.json": json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
            "fuzz.md": fuzz_to_markdown(data)}


def write_fuzz_reports(run: FuzzRun, out: Path) -> list[Path]:
    return write_reports_atomically(out, render_fuzz(run))
