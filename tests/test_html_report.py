"""report.html: self-contained, and it works in a real browser.

The browser test drives the operating system's Chromium (Debian's ``chromium`` package, which
``.ci/run`` installs when missing) with Playwright's Python package, never a browser Playwright
downloads. It renders the default audit's report.html, filters the row table to one classification and
checks that exactly those rows show, and that the page logged no console error and made no request.
Without a browser or Playwright it skips, saying why. Screenshots (``RAGAS_COMPAT_SCREENSHOTS=DIR``) go
to a folder outside the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from ragas_compat.report.html_report import render_html

CHROMIUM = os.environ.get("RAGAS_COMPAT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def default_audit(default_audit_run):
    return default_audit_run.audit  # tests/conftest.py: the default audit, run once per session


@pytest.fixture(scope="module")
def page_file(default_audit, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(default_audit), encoding="utf-8")
    return path


def test_html_is_self_contained(page_file):
    text = page_file.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    # no external resource of any kind: every src/href is inline data or a fragment
    for attribute in re.findall(r'\b(?:src|href)="([^"]*)"', text):
        assert attribute.startswith(("data:", "#")), attribute
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<svg" in text and 'id="means-chart"' in text


def test_html_opens_with_verdict_and_findings(default_audit, page_file):
    text = page_file.read_text(encoding="utf-8")
    assert text.index('id="verdict"') < text.index('id="findings"') < text.index('id="rows"')
    assert text.count("<tr data-metric=") == len(default_audit.rows)


def _browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright; it is in the test extra)")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no system Chromium at {CHROMIUM} (Debian: apt-get install chromium; .ci/run does this)")
    return sync_playwright


def test_html_filters_in_headless_chromium(default_audit, page_file):
    sync_playwright = _browser()
    started = time.perf_counter()
    messages: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: messages.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                    else None)
            page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
            page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.goto(page_file.as_uri())
            page.wait_for_selector("#rows tbody tr")
            total = len(default_audit.rows)
            assert page.locator("#rows tbody tr:visible").count() == total
            assert "Verdict:" in page.locator("#verdict").inner_text()
            assert page.locator("ol.findings li").count() >= 6
            assert page.locator("#means-chart rect").count() >= 2

            by_class = Counter(r.classification.name for r in default_audit.rows)
            for name in ("empty_as_zero", "dedup"):
                page.select_option("#filter-classification", name)
                visible = page.locator("#rows tbody tr:visible")
                assert visible.count() == by_class[name]
                shown = {visible.nth(i).get_attribute("data-classification") for i in range(visible.count())}
                assert shown == {name}
                assert page.locator("#shown").inner_text().startswith(f"{by_class[name]} of {total}")

            # combined filters, then back to all
            page.select_option("#filter-classification", "epsilon")
            page.select_option("#filter-metric", "context_precision_with_reference")
            expected = sum(1 for r in default_audit.rows if r.classification.name == "epsilon"
                           and r.spec.name == "context_precision_with_reference")
            assert page.locator("#rows tbody tr:visible").count() == expected
            page.select_option("#filter-classification", "")
            page.select_option("#filter-metric", "")
            assert page.locator("#rows tbody tr:visible").count() == total

            # sorting by Ragas value: ascending numeric order of the rows that have a number
            page.locator("#rows thead th", has_text="Ragas value").click()
            keys = page.eval_on_selector_all(
                "#rows tbody tr",
                "rows => rows.map(r => r.querySelector('[data-column=ragas]').dataset.sort).filter(k => k !== '')")
            numbers = [float(k) for k in keys]
            assert numbers == sorted(numbers) and len(numbers) > 100

            folder = os.environ.get("RAGAS_COMPAT_SCREENSHOTS")
            if folder:
                page.screenshot(path=str(Path(folder) / "report.png"), full_page=False)
        finally:
            browser.close()
    print(f"\nheadless Chromium: rendered, filtered and sorted report.html in {time.perf_counter() - started:.2f} s")
    assert messages == [], messages
    assert requests == [], requests
