"""The report section "legacy vs collections at this Ragas" (pairs from ``ragas_compat.compare.api_paths``)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

from ragas_compat.compare.api_paths import path_differences, unpaired_metrics
from ragas_compat.compare.audit import Audit
from ragas_compat.report.escape import md_code, md_text
from ragas_compat.report.markdown.table import markdown_cell
from ragas_compat.vocabulary import Classification, TargetId


def api_paths_markdown(audit: Audit) -> Iterator[str]:
    """The report's section "Legacy vs collections at this Ragas" (no lines when no pair exists)."""
    pairs = audit.pairs
    unpaired = unpaired_metrics(audit.rows)
    if not pairs and not unpaired["collections_only"]:
        return
    lines = ["## Legacy vs collections at this Ragas", "",
             "Ragas ships two paths for the same metric names: the legacy classes (`ragas.metrics`) and "
             "`ragas.metrics.collections`. Each legacy row is paired with each collections row of the same "
             "case and metric and classified with the legacy value in the place of the reference.", ""]
    counts = {name: sum(1 for p in pairs if p.classification.name == name) for name in Classification}
    unexpected = [p for p in pairs if p.unexpected]
    lines.append(f"{len(pairs)} pairs: " + ", ".join(f"{n} {name}" for name, n in counts.items() if n)
                 + (f"; **{len(unexpected)} differ from the expected classification**" if unexpected else
                    "; all match their expected classification") + ".")
    if unpaired["legacy_only"]:
        lines.append(f"Legacy only (no collections class run): {', '.join(unpaired['legacy_only'])}.")
    if unpaired["collections_only"]:
        lines.append(f"Collections only (no legacy class run): {', '.join(unpaired['collections_only'])}.")
    lines.append("")
    differences = path_differences(pairs)
    first = next(differences, None)
    if first is None:
        yield from lines + ["No behavioural difference between the two paths on this suite.", ""]
        return
    yield from lines + ["Behavioural differences, with the case that shows each:", "",
                        "| case | metric | classification | legacy | collections | meaning | explained by |",
                        "|---|---|---|---|---|---|---|"]
    for d in chain([first], differences):
        legacy = "; ".join(f"{md_code(TargetId(t).ragas_class)} {md_text(v)}" for t, v in d.legacy)
        collections = "; ".join(f"{md_code(TargetId(t).ragas_class)} {md_text(v)}" for t, v in d.collections)
        yield "| " + " | ".join(markdown_cell(c) for c in (md_text(d.case.id), md_text(d.metric),
                                                          md_text(d.classification), legacy, collections,
                                                          md_text(d.meaning), md_text(", ".join(d.explained_by)))) + " |"
    yield ""
    if unexpected:
        yield from ["Unexpected pairs:", ""]
        yield from (f"- {md_text(p.case.id)}: {md_text(p.legacy.target)} vs {md_text(p.collections.target)}: "
                    f"{p.classification.name} (expected {md_text(p.expected.classification)})" for p in unexpected)
        yield ""
