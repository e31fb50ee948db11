"""One metric naming scheme for every subcommand, and short labels for narrow terminals.

The name of a metric is its registry name (``context_precision_with_reference``), as in report.json
and ``run --metric``. Every subcommand (``run``, ``explain``, ``fuzz``) also accepts the other spellings
and says which name to use (``resolve``): the same name with hyphens (``context-precision-with-reference``)
and the short command names ``explain`` used to take (``context-precision``, ``id-precision`` ...: the
explain adapters' ``command``).

``short_label`` abbreviates a name for terminal tables (words separated by spaces, so a narrow
column wraps instead of truncating): ``context_precision_with_reference`` -> ``ctx prec w/ ref``.
"""

from __future__ import annotations

import difflib

from ragas_compat.errors import HarnessInputError
from ragas_compat.metrics.registry import all_metrics
from ragas_compat.metrics.spec import MetricSpec

WORDS: dict[str, str] = {
    "context": "ctx", "precision": "prec", "reference": "ref", "with": "w/", "without": "w/o",
    "string": "str", "id": "ID", "correctness": "correct",
}


def short_label(name: str) -> str:
    """``context_precision_with_reference`` -> ``ctx prec w/ ref`` (unknown words kept, ``_`` -> space)."""
    return " ".join(WORDS.get(word, word) for word in name.split("_"))


def aliases() -> dict[str, MetricSpec]:
    """Every accepted spelling other than the registry name -> the metric it names."""
    out: dict[str, MetricSpec] = {}
    for spec in all_metrics():
        out.setdefault(spec.name.replace("_", "-"), spec)
        if spec.explain is not None and spec.explain.command != spec.name:
            out.setdefault(spec.explain.command, spec)
    return out


def resolve(text: str, *, option: str = "metric",
            among: tuple[MetricSpec, ...] | None = None) -> tuple[MetricSpec, str | None]:
    """The metric ``text`` names and a hint when it is not spelled with its registry name.

    ``among`` limits the metrics accepted (e.g. those with an explain adapter). HarnessInputError (exit 2)
    lists the valid names and the closest one when nothing matches."""
    specs = tuple(all_metrics()) if among is None else tuple(among)
    by_name = {spec.name: spec for spec in specs}
    wanted = text.strip()
    if wanted in by_name:
        return by_name[wanted], None
    spec = by_name.get(wanted.lower().replace("-", "_")) or aliases().get(wanted.lower())
    if spec is not None and spec.name in by_name:
        return spec, f"metric {wanted!r} is spelled {spec.name!r} (the name in every report and subcommand)"
    spellings = {**{alias: s.name for alias, s in aliases().items() if s.name in by_name},
                 **{name: name for name in by_name}}
    close = difflib.get_close_matches(wanted.lower(), list(spellings), n=1)
    suggestion = f"; did you mean {spellings[close[0]]!r}?" if close else ""
    raise HarnessInputError(f"unknown metric {text!r}{suggestion} valid metrics: {', '.join(by_name)}",
                            field=option, value=text)
