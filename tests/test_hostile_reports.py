"""Hostile user text in the reports: case ids, categories, the suite name, Ragas's error messages, warnings,
rule reasons and expectation problems holding HTML, Markdown, line breaks and control characters.

- report.md, rendered by a CommonMark renderer with raw HTML on (as mkdocs, pandoc and many previews
  render it), has exactly the elements and attributes of the same report made from plain text: no
  attacker element, and every table row keeps its columns (``ragas_compat.report.escape.md_text``);
- the terminal summary has no raw control character and no extra line, and rich markup in user text
  prints literally (``ragas_compat.report.escape.terminal_text``);
- report.html's Content-Security-Policy allows its own inline script and style by their SHA-256 only
  (no ``'unsafe-inline'``), and in Chromium the page's script still sorts while an injected inline
  script is refused; matrix.html carries a policy of the same kind.

The audit is built from constructed probe output (no Ragas run): one ID-recall case per payload.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import os
import re
import shutil
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from user_cases import USER_SUITE

from ragas_compat.cases import parse_suite
from ragas_compat.cli.output import OutputFormat
from ragas_compat.cli.run import print_summary
from ragas_compat.compare.audit import build_audit, judged
from ragas_compat.compare.expectations import CaseEntry, Expectations
from ragas_compat.metrics.registry import metric
from ragas_compat.report.escape import md_code, md_text, terminal_text
from ragas_compat.report.html_report import render_html
from ragas_compat.report.markdown.document import render_markdown
from ragas_compat.report.markdown.table import markdown_cell
from ragas_compat.values import RagasError, encode_ragas_value

PAYLOADS = {
    "script": "<script>alert(1)</script>",
    "img": '<img src=x onerror="alert(2)">',
    "comment": "<!-- the rest is hidden",
    "autolink": "<https://evil.example/>",
    "link": "[click](https://evil.example/)",
    "image": "![i](https://evil.example/i.png)",
    "attributes": "{: onclick=alert(3) }",
    "emphasis": "*em* __strong__ ~~gone~~ _x_",
    "backticks": "`tick` ``two`` `",
    "entity": "&lt;b&gt;bold&lt;/b&gt; &amp;",
    "pipe": "cell \\| escaped | raw \\\\| both",
    "lf": "first\nforged line",
    "cr": "before\rafter",
    "crlf": "a\r\nb",
    "unicode-breaks": "ls\u2028ps\u2029nel\x85",
    "vt-ff-fs": "v\x0bf\x0cfs\x1cgs\x1drs\x1e",
    "ansi": "\x1b[31mred\x1b[0m\x1b]0;title\x07",
    "controls": "nul\x00del\x7fcsi\x9b",
    "bidi": "abc\u202edcba",
    "markup": "[red]x[/red] [bold]",
}
# The payloads shown verbatim once escaped (no line break or control character to replace).
VERBATIM = ("script", "img", "comment", "autolink", "link", "image", "attributes", "emphasis", "backticks",
            "entity", "pipe", "markup")
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _audit(texts: dict[str, str]):
    """An audit of one ID-recall case per text (no LLM involved): the case id, its category, Ragas's error
    message (odd cases) or a diverging value (even cases), a warning, the reason of a case entry (every
    third case), the suite name and the expectation problems all carry the text."""
    spec = metric("id_context_recall")
    base = copy.deepcopy(USER_SUITE["cases"][0])
    base["id"] = "placeholder"
    suite = parse_suite({"schema_version": 1, "suite": "placeholder", "cases": [base]}, source="hostile.json")
    built = suite.cases[0]
    cases, results, entries = [], [], []
    for index, (name, text) in enumerate(texts.items()):
        case_id = f"{name} {text}"
        cases.append(dataclasses.replace(built, id=case_id, category=f"cat {text}", raw={**built.raw, "id": case_id}))
        value = encode_ragas_value(RagasError("ValueError", f"{name}: {text}") if index % 2 else 0.123)
        results += [{"case_id": case_id, "target": target, "metric": spec.name, "ragas_class": target,
                     "fields_read": list(spec.fields_read), "received": None, "value": value,
                     "warnings": [f"warning {text}"]} for target in spec.ragas_targets]
        if index % 3 == 0:
            entries.append(CaseEntry(index, (case_id,), "error" if index % 2 else "divergence",
                                     f"reason {text}", f"upstream {text}", f"origin {text}"))
    joined = " ".join(texts.values())
    suite = dataclasses.replace(suite, name=f"suite {joined}", cases=tuple(cases))
    provenance = {"ragas_version": joined, "ragas": {"pin_status": joined, "warning": joined}}
    audit = build_audit(suite, {"probe_format": 1, "python": {"version": "3.11"}, "ragas": {"version": "fake"},
                                "network_attempts": [], "results": results},
                        Expectations("hostile", cases=tuple(entries)), provenance, metrics=[spec.name])
    return judged(dataclasses.replace(audit, expectation_problems=tuple(f"problem {t}" for t in texts.values())))


PLAIN = {name: f"plain text {index}" for index, name in enumerate(PAYLOADS)}


@pytest.fixture(scope="module")
def hostile():
    return _audit(PAYLOADS)


@pytest.fixture(scope="module")
def plain():
    return _audit(PLAIN)


# ---------------------------------------------------------------- report.md

class _Elements(HTMLParser):
    """Every start tag of an HTML text with its attribute names, and the text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter = Counter()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags[(tag, tuple(sorted(name for name, _ in attrs)))] += 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data):
        self.tags[("<!--", ())] += 1

    def handle_data(self, data):
        self.text.append(data)


def _rendered(markdown: str) -> _Elements:
    parser = _Elements()
    parser.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))
    parser.close()
    return parser


def _cells(line: str) -> tuple[int, bool]:
    """The cells of a GitHub table row as cmark-gfm splits it (a backslash escapes the next character), and
    whether the row ends with an unescaped ``|`` (every row the template writes does)."""
    pipes, index, last = 0, 0, False
    while index < len(line):
        last = line[index] == "|"
        if line[index] == "\\":
            index += 2
            continue
        pipes += last
        index += 1
    return pipes - 1, last


def _broken_rows(markdown: str) -> int:
    """Table rows with another cell count than their table's header, or cut before their last ``|``
    (lines split where CommonMark ends a line: LF, CR, CRLF)."""
    broken, header = 0, None
    for line in re.split(r"\r\n|\r|\n", markdown):
        if not line.startswith("|"):
            header = None
            continue
        cells, closed = _cells(line.rstrip(" "))
        if header is None:
            header = cells
        broken += cells != header or not closed
    return broken


def test_report_md_shows_no_attacker_element_and_keeps_every_row(hostile, plain):
    text, reference = render_markdown(hostile), render_markdown(plain)
    got, expected = _rendered(text), _rendered(reference)
    attacker, missing = got.tags - expected.tags, expected.tags - got.tags
    assert sum(attacker.values()) == 0, sorted(attacker.items())
    assert set(missing) <= {("code", ())}, missing  # a hostile id is escaped text, not a code span
    assert got.tags[("tr", ())] == expected.tags[("tr", ())] and got.tags[("td", ())] == expected.tags[("td", ())]
    assert not any(tag in ("script", "img", "a", "del", "iframe") or any(a.startswith("on") for a in attrs)
                   for tag, attrs in got.tags), sorted(got.tags)
    assert _broken_rows(text) == 0
    assert text.count("\n") == reference.count("\n")  # no line break of user text reaches the file
    assert not _RAW_CONTROL.search(text)
    shown = "".join(got.text)
    for name in VERBATIM:  # escaped, not mangled: the reader sees the text as it was written
        assert f"{name} {PAYLOADS[name]}" in shown, name


def test_md_text_escapes_what_markdown_and_html_would_read():
    assert md_text("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert md_text("a | b \\| c") == "a &#124; b \\\\&#124; c"
    assert md_text("`x` *y* [z](u) ![i](s) {: a} ~~s~~") == \
        "\\`x\\` \\*y\\* [z]\\(u) ![i]\\(s) \\{: a} &#126;&#126;s&#126;&#126;"
    assert md_text("(a) [0, 1] f(x)") == "\\(a) [0, 1] f(x)"  # brackets alone link nothing
    assert md_text("snake_case _lead trail_ __init__") == "snake_case \\_lead trail\\_ \\_\\_init\\_\\_"
    assert md_text("a\r\nb\rc\nd\u2028e\u2029f\x85g\x0bh\x0ci\x1cj\tk") == "a b c d e f g h i j k"
    assert md_text("\x1b[31m\x00\x7f\u202e") == "\\\\x1b[31m\\\\x00\\\\x7f\\\\u202e"
    assert md_code("faithfulness-01") == "`faithfulness-01`"
    assert md_code("a`b") == "a\\`b" and md_code("a|b") == "a&#124;b" and md_code("") == ""
    assert markdown_cell("a \\| b\rc\u2028d") == "a \\\\\\| b c d"  # structure of a cell made by the template


# ---------------------------------------------------------------- the terminal

def _terminal(audit, capsys, monkeypatch, output: OutputFormat = OutputFormat.TABLE) -> str:
    monkeypatch.setenv("COLUMNS", "100000")  # no wrapping: one printed line is one line
    capsys.readouterr()
    print_summary(audit, Path("out"), output=output, verbose=True)
    return capsys.readouterr().out


@pytest.mark.parametrize("output", [OutputFormat.TABLE, OutputFormat.MD])
def test_terminal_summary_has_no_control_character_and_no_extra_line(hostile, plain, capsys, monkeypatch, output):
    out, reference = _terminal(hostile, capsys, monkeypatch, output), _terminal(plain, capsys, monkeypatch, output)
    assert not _RAW_CONTROL.search(out), [c for c in out if _RAW_CONTROL.match(c)]
    assert len(re.split(r"\r\n|[\n\r\x85\u2028\u2029]", out)) == reference.count("\n") + 1, out
    if output is OutputFormat.TABLE:
        assert "[red]x[/red]" in out  # rich markup in a case id printed literally
    assert terminal_text("a\nb\r\u2028\x1b[31m\x85\u202e") == "a\\x0ab\\x0d\\u2028\\x1b[31m\\x85\\u202e"


# ---------------------------------------------------------------- report.html and matrix.html

def _policy(html: str) -> dict[str, list[str]]:
    [content] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    return {d.split()[0]: d.split()[1:] for d in (part.strip() for part in content.split(";")) if d}


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _strict(policy: dict[str, list[str]], inline: dict[str, list[str]]) -> None:
    """Nothing fetched; each inline script and <style> allowed by its own hash and nothing else."""
    assert policy["default-src"] == ["'none'"]
    for directive in ("connect-src", "base-uri", "form-action", "object-src", "frame-src", "script-src-attr"):
        assert policy.get(directive) == ["'none'"], directive
    for directive in ("script-src", "style-src", "style-src-elem"):
        blocks = inline.get(directive.removesuffix("-elem"), [])
        assert sorted(policy[directive]) == sorted({_sha256(block) for block in blocks} or {"'none'"}), directive
    assert not any("'unsafe-eval'" in sources for sources in policy.values())


def test_report_html_policy_allows_its_inline_script_and_style_by_hash_only(hostile):
    html = render_html(hostile)
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, flags=re.S)
    assert len(scripts) == 1 and len(styles) == 1
    policy = _policy(html)
    _strict(policy, {"script-src": scripts, "style-src": styles})
    # style attributes (badge colours, column widths) only: CSS runs no script and can fetch nothing here
    assert policy["style-src-attr"] == ["'unsafe-inline'"] and policy["img-src"] == ["data:"]
    assert "<script>alert" not in html and "<img src=x" not in html


def test_matrix_html_carries_a_policy():
    from test_matrix_harness_limits import LIMITS

    from ragas_compat.tools.matrix.report import render_html as render_matrix_html

    html = render_matrix_html(LIMITS)
    styles = re.findall(r"<style>(.*?)</style>", html, flags=re.S)
    assert "<script" not in html and len(styles) == 1
    policy = _policy(html)
    _strict(policy, {"style-src": styles})
    assert policy["style-src-attr"] == ["'none'"] and policy["img-src"] == ["'none'"]
    assert " style=" not in html  # the legend's colours are classes: no style attribute to allow


CHROMIUM = os.environ.get("RAGAS_COMPAT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
INJECTED = "<script>document.title='injected';</script>"


def test_report_html_script_runs_under_the_policy_and_an_injected_one_does_not(hostile, tmp_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright; it is in the test extra)")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no system Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    html = render_html(hostile)
    assert "'unsafe-inline'" not in " ".join(_policy(html)["script-src"])
    page_file = tmp_path / "report.html"
    # as if user text had reached the page unescaped: the policy must refuse this script
    page_file.write_text(html.replace('<h2 id="findings">', INJECTED + '<h2 id="findings">', 1), encoding="utf-8")
    messages: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
            page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.goto(page_file.as_uri())
            page.wait_for_selector("#rows tbody tr")
            assert page.title() != "injected"
            total = len(hostile.rows)
            assert page.locator("#shown").inner_text().startswith(f"{total} of {total}")  # the page's script ran
            page.locator("#rows thead th", has_text="case").first.click()  # sorts by case id, ascending
            ids = page.eval_on_selector_all("#rows tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
            assert ids == sorted(ids) and len(ids) == total
            page.locator("#rows thead th", has_text="case").first.click()
            ids = page.eval_on_selector_all("#rows tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
            assert ids == sorted(ids, reverse=True)
        finally:
            browser.close()
    violations = [m for m in messages if "Content Security Policy" in m or "Content-Security-Policy" in m]
    assert len(violations) == 1 and "inline script" in violations[0].lower(), messages  # the injected one only
    assert [m for m in messages if m not in violations] == [] and requests == []
