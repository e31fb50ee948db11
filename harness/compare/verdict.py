"""The verdict of an audit: the one line that opens every report and the terminal ("expected",
"N unexplained", "K errors", "N rows not scored"), and which drift findings fail a run (``--fail-on``).

The findings themselves are ``ragas_compat.compare.findings``; ``build_audit`` computes the verdict
once, from them, as ``Audit.verdict``. ``--fail-on`` names the kinds that make the exit code 1
(``FAIL_ON_DEFAULT``: all of them); ``none`` fails on nothing (exploration).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ragas_compat.compare.findings import DRIFT_KINDS, Finding
from ragas_compat.compare.replay import replay_account
from ragas_compat.errors import ExitCode, HarnessInputError

Audit = Any  # ragas_compat.compare.audit.Audit (which imports this module): rows, findings, verdict

FAIL_ON_DEFAULT: frozenset[str] = frozenset(DRIFT_KINDS)


@dataclass(frozen=True)
class Verdict:
    """The audit in one line: ``status`` is "expected", or "N unexplained" and/or "K errors"."""

    status: str
    rows: int
    identical: int
    explained: int
    unexplained: int   # drift findings other than unexplained errors and harness errors
    errors: int        # drift findings of kind "error" (Ragas raised, no rule explains it)
    harness_errors: int = 0  # rows not scored: the harness raised its own error (kind "harness_error")
    replay: str | None = None  # a recorded suite: ragas_compat.compare.replay.ReplayAccount.line()
    checks_not_made: int = 0  # dataset-level checks the harness could not make (also counted in harness_errors)
    # of ``unexplained`` and of ``errors``: (in legacy-vs-collections pairs, of no row: an expectations problem,
    # a dataset-level result, a recorded score the replay does not reproduce): the line's rows do not show them
    unexplained_elsewhere: tuple[int, int] = (0, 0)
    errors_elsewhere: tuple[int, int] = (0, 0)

    @property
    def ok(self) -> bool:
        return self.unexplained == 0 and self.errors == 0 and self.harness_errors == 0

    def not_checked(self) -> list[str]:
        """The harness errors as the verdict names them: rows not scored, dataset-level checks not made."""
        rows, checks = self.harness_errors - self.checks_not_made, self.checks_not_made
        return ([f"{rows} row{'' if rows == 1 else 's'} not scored (harness errors)"] if rows else []) + (
            [f"{checks} dataset-level check{'' if checks == 1 else 's'} not made (harness errors)"] if checks else [])

    def line(self) -> str:
        not_scored = "".join(f", {part}" for part in self.not_checked())
        return (f"Verdict: {self.status}: {self.rows} rows, {self.identical} identical, {self.explained} "
                f"explained by rules or entries, {self.unexplained} unexplained"
                f"{_elsewhere(self.unexplained_elsewhere)}, {self.errors} unexplained errors"
                f"{_elsewhere(self.errors_elsewhere)}{not_scored}.")

    def meaning(self) -> str:
        """What the verdict means and what to do next, in one line (shown under the verdict line)."""
        if self.ok:
            return ("expected means every difference is a known, named Ragas behaviour; it does not mean Ragas's "
                    "numbers are right. Next: read the findings before quoting a score.")
        return ("Next: each drift line names its row; fix the case or the harness's limit (not scored), or, after "
                "review, accept the behaviour with a case entry (ragas-compat expect bless).")

    def notes(self) -> list[str]:
        """The lines shown under the verdict line: the replay accounting (recorded suites), the meaning."""
        return ([self.replay] if self.replay else []) + [self.meaning()]


def _elsewhere(counts: tuple[int, int]) -> str:
    """`` (4 in legacy-vs-collections pairs, 1 of no row)``: what of a count the line's rows do not show."""
    pairs, no_row = counts
    parts = ([f"{pairs} in legacy-vs-collections pairs"] if pairs else []) + ([f"{no_row} of no row"] if no_row else [])
    return f" ({', '.join(parts)})" if parts else ""


def _not_of_rows(found: list[Finding], of_pairs: set[int]) -> tuple[int, int]:
    """(findings of legacy-vs-collections pairs, findings of no row) among ``found``: a pair's is one of
    ``Audit.pair_findings`` (``of_pairs``: their ids); an expectations problem or a dataset-level finding
    names no case; a replay mismatch names a row whose classification it is not."""
    pairs = sum(1 for f in found if id(f) in of_pairs)
    return pairs, sum(1 for f in found if f.case_id is None or f.kind == "replay_mismatch")


def verdict(audit: Audit) -> Verdict:
    found = audit.findings
    errors = sum(1 for f in found if f.kind == "error")
    harness_errors = sum(1 for f in found if f.kind == "harness_error")
    checks_not_made = sum(1 for f in found if f.kind == "harness_error" and f.case_id is None)
    unexplained = len(found) - errors - harness_errors
    identical = sum(1 for r in audit.rows if r.classification.name == "identical" and not r.unexpected)
    explained = sum(1 for r in audit.rows if r.classification.name != "identical" and not r.unexpected
                    and r.expected.explained)
    parts = [f"{unexplained} unexplained"] if unexplained else []
    parts += [f"{errors} error{'' if errors == 1 else 's'}"] if errors else []
    account = replay_account(audit)
    of_pairs = {id(finding) for _, pair_found in audit.pairs_with_findings() for finding in pair_found}
    counted = Verdict("", len(audit.rows), identical, explained, unexplained, errors, harness_errors,
                      account.line() if account is not None else None, checks_not_made,
                      _not_of_rows([f for f in found if f.kind not in ("error", "harness_error")], of_pairs),
                      _not_of_rows([f for f in found if f.kind == "error"], of_pairs))
    return dataclasses.replace(counted, status=", ".join(parts + counted.not_checked()) or "expected")


def verdict_json(audit: Audit) -> dict[str, Any]:
    v = audit.verdict
    return {"status": v.status, "line": v.line(), "rows": v.rows, "identical": v.identical,
            "explained": v.explained, "unexplained": v.unexplained, "errors": v.errors,
            "harness_errors": v.harness_errors, "meaning": v.meaning(),
            **({"replay": v.replay} if v.replay else {})}


def parse_fail_on(values: str | Iterable[str] | None) -> frozenset[str]:
    """``--fail-on`` values (comma-separated and/or repeated) to kinds: ``all`` (the default when
    nothing is given), ``none``, or any of ``DRIFT_KINDS``. HarnessInputError names a bad value."""
    if values is None:
        return FAIL_ON_DEFAULT
    items = [values] if isinstance(values, str) else list(values)
    names = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    if not names:
        return FAIL_ON_DEFAULT
    kinds: set[str] = set()
    for name in names:
        if name == "all":
            kinds |= FAIL_ON_DEFAULT
        elif name == "none":
            continue
        elif name in DRIFT_KINDS:
            kinds.add(name)
        else:
            raise HarnessInputError(f"--fail-on: unknown value {name!r}; valid: all, none, {', '.join(DRIFT_KINDS)}",
                                    field="--fail-on", value=name)
    if "none" in names and kinds:
        raise HarnessInputError("--fail-on: 'none' cannot be combined with other kinds", field="--fail-on",
                                value=",".join(names))
    return frozenset(kinds)


def failing(found: Iterable[Finding], fail_on: frozenset[str] = FAIL_ON_DEFAULT) -> list[Finding]:
    return [finding for finding in found if finding.kind in fail_on]


def exit_code(audit: Audit, fail_on: frozenset[str] = FAIL_ON_DEFAULT) -> ExitCode:
    """``ExitCode.DRIFT`` when a finding of a ``fail_on`` kind exists, else ``ExitCode.OK``."""
    return ExitCode.DRIFT if failing(audit.findings, fail_on) else ExitCode.OK
