"""report.html at a 1,400 px wide window, in headless Chromium (issue 39): the row table's case, Ragas value,
reference, classification and reason cells are in the viewport without scrolling sideways (the page is no
wider than the window), and the evaluate() mean chart is near the top, with the context-precision gap in it.

Same browser setup as ``tests/test_html_report.py``: the operating system's Chromium driven by Playwright's
Python package; without either the test skips, saying why."""

from __future__ import annotations

import pytest
from test_html_report import CHROMIUM, CHROMIUM_ARGS, _browser

from ragas_compat.report.html_report import render_html

WIDTH, HEIGHT = 1400, 900
KEY_COLUMNS = ("case", "ragas", "reference", "classification", "why")


@pytest.fixture(scope="module")
def page_file(default_audit_run, tmp_path_factory):
    path = tmp_path_factory.mktemp("html-layout") / "report.html"
    path.write_text(render_html(default_audit_run.audit), encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_compared_cells_are_in_view_at_1400_px_and_the_means_chart_is_near_the_top(page_file):
    sync_playwright = _browser()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(page_file.as_uri())
            page.wait_for_selector("#rows tbody tr")
            assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH

            page.locator("#rows").scroll_into_view_if_needed()
            rows = page.locator("#rows tbody tr")
            checked = 0
            for index in (0, 1, 2, 50, 400):  # rows with short and with long reasons
                row = rows.nth(index)
                row.scroll_into_view_if_needed()
                for column in KEY_COLUMNS:
                    box = row.locator(f'[data-column="{column}"]').bounding_box()
                    assert box is not None, (index, column)
                    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (index, column, box)
                    assert box["width"] >= 60, (index, column, box)  # a column, not a sliver
                    checked += 1
                # no cell of the table is cut off at the right either
                last = row.locator("td").last.bounding_box()
                assert last is not None and last["x"] + last["width"] <= WIDTH, (index, last)
            assert checked == 5 * len(KEY_COLUMNS)

            # a long reason folds: its first sentence shows, the rest opens on a click
            folded = page.locator("#rows td.why details").first
            assert folded.count() == 1
            row_height = folded.locator("xpath=ancestor::tr").bounding_box()["height"]
            assert row_height < 120, row_height

            page.evaluate("window.scrollTo(0, 0)")
            chart = page.locator("#means-chart").bounding_box()
            assert chart is not None and chart["y"] < 2.5 * HEIGHT, chart  # within the first screens
            assert chart["x"] + chart["width"] <= WIDTH
            metrics = page.locator('#means-chart text[font-weight="bold"]').all_text_contents()
            assert "context_precision_with_reference" in metrics[:3], metrics[:3]  # ranked as the findings are
        finally:
            browser.close()
