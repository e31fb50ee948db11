"""The documentation stays whole: README.md is short, the reference lives in docs/, every registered
metric and every command of the CLI is documented, and every relative link in README.md and docs/*.md
points to a file that exists (and, with a #fragment, to a heading of that file)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
import typer.main

from ragas_compat.cli.app import app
from ragas_compat.metrics.registry import metric_names

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DOC_FILES = sorted(DOCS.glob("*.md"))
README_LIMIT = 12 * 1024

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target), not inside inline code; the target ends at whitespace or ')'
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, inline code removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(INLINE_CODE.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, lower case, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFC", text).lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(path: Path) -> list[str]:
    links = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto: ...
                continue
            links.append(target)
    return links


def cli_commands() -> list[str]:
    """Every command path of the typer app: 'run', 'expect bless', 'pin show' ..."""
    names: list[str] = []

    def walk(command, prefix: tuple[str, ...]) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if getattr(sub, "hidden", False):
                continue
            path = (*prefix, name)
            if not getattr(sub, "commands", None):
                names.append(" ".join(path))
            walk(sub, path)

    walk(typer.main.get_command(app), ())
    return names


def all_doc_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in [README, *DOC_FILES])


def test_readme_is_short_and_docs_exist():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; the limit is {README_LIMIT}: move reference text to docs/"
    assert DOC_FILES, "docs/ holds no .md file"
    readme = README.read_text(encoding="utf-8")
    for doc in DOC_FILES:
        assert f"docs/{doc.name}" in readme, f"README.md does not link docs/{doc.name}"


def test_readme_first_screen():
    readme = README.read_text(encoding="utf-8")
    headings = [m.group(2) for line in readme.splitlines() if (m := HEADING.match(line)) and len(m.group(1)) == 2]
    assert len(headings) >= 2 and "command" in headings[0].lower(), headings
    assert headings[1] == "Reading the verdict", headings
    verdict = readme[readme.index("## Reading the verdict"):]
    verdict = verdict[: verdict.index("\n## ", 1)]
    for needle in ("`expected`", "not", "Exit codes", "What to do next"):
        assert needle in verdict, f"'Reading the verdict' does not say {needle!r}"
    if "not slow" in readme:
        assert '-m "not slow"' in readme


def test_every_registered_metric_is_documented():
    text = all_doc_text()
    missing = [name for name in metric_names() if not re.search(rf"`{re.escape(name)}`", text)]
    assert not missing, f"metrics not named (in backticks) in README.md or docs/: {missing}"


def test_every_cli_command_is_documented():
    commands = cli_commands()
    assert {"run", "explain", "record", "import", "audit-run", "expect bless", "pin show"} <= set(commands)
    text = all_doc_text()
    missing = [c for c in commands if f"ragas-compat {c}" not in text]
    assert not missing, f"commands not documented as 'ragas-compat <command>' in README.md or docs/: {missing}"


@pytest.mark.parametrize("path", [README, *DOC_FILES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path: Path):
    broken = []
    for target in relative_links(path):
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
            continue
        if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{fragment} in {dest.relative_to(ROOT)}")
    assert not broken, f"{path.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_slug_matches_github():
    assert slug("Audit someone else's run: `ragas-compat audit-run`") == "audit-someone-elses-run-ragas-compat-audit-run"
    assert slug("Two commands (fresh machine, Python 3.11+)") == "two-commands-fresh-machine-python-311"
    assert slug("Record, import, audit-run") == "record-import-audit-run"


def test_ci_runs_the_readmes_test_command():
    """`.ci/run` calls exactly the README's "set up and run the tests" command (the first code line that
    runs pytest), so the command the README promises is the one CI proves."""
    readme = README.read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines()
                   if line.startswith("python3 -m venv") and "pytest" in line)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command in ci.splitlines(), f".ci/run does not run the README's test command: {command}"
