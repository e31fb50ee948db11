"""Cases: the frozen case model, the case-file loader and schema, the bundled suites."""

from ragas_compat.cases.loader import (
    CLAIM_VERDICTS,
    LABEL_LIST_VERDICTS,
    json_path,
    load_cases,
    load_default_suite,
    parse_suite,
    parse_suite_text,
    suite_problems,
)
from ragas_compat.cases.model import CATEGORIES, DEFAULT_SUITE_SOURCE, Case, Suite

__all__ = [
    "CATEGORIES", "CLAIM_VERDICTS", "DEFAULT_SUITE_SOURCE", "LABEL_LIST_VERDICTS", "Case", "Suite", "json_path",
    "load_cases", "load_default_suite", "parse_suite", "parse_suite_text", "suite_problems",
]
