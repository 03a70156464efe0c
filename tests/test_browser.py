"""The site in a real browser (Debian's Chromium through Playwright), opened from file:// as a CI artifact is.

Skipped with the reason when /usr/bin/chromium or Playwright is missing; with SITEGEN_REQUIRE_BROWSER=1 (CI)
they fail instead. `SITEGEN_SCREENSHOTS=1` also writes the README's screenshots to docs/.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import (
    ROOT,
    Watched,
    case_page_file,
    case_rows,
    make_case,
    make_trace,
    new_context,
    settle,
    shipped_history,
    wait_until_ready,
    wake_charts,
    write_suite,
)
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

DOCS = ROOT / "docs"


def test_violations_are_detected(watched: Watched, tmp_path: Path) -> None:
    """The checks below can fail: an inline script under the site's CSP is reported."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'self'\">"
        "<script>document.title = 'ran'</script><img src=\"https://example.invalid/x.png\">",
        encoding="utf-8",
    )
    watched.open(page)
    with pytest.raises(AssertionError, match="CSP violation"):
        watched.assert_clean()
    assert watched.page.title() != "ran"


def test_errors_after_the_last_action_are_caught(watched: Watched, tmp_path: Path) -> None:
    """assert_clean() waits for the page's timers: an error thrown by a timer long after load is reported."""
    (tmp_path / "late.js").write_text("setTimeout(function () { throw new Error('late'); }, 3000);", encoding="utf-8")
    page = tmp_path / "late.html"
    page.write_text("<!doctype html><title>late</title><script src=\"late.js\"></script>", encoding="utf-8")
    watched.open(page)
    assert watched.errors == []  # nothing yet: the error comes three (page) seconds later
    with pytest.raises(AssertionError, match="late"):
        watched.assert_clean()


@pytest.mark.parametrize("name", ["index.html", "diff.html", "history.html"])
def test_chart_pages_render_without_errors(watched: Watched, browser_site: Path, name: str) -> None:
    from playwright.sync_api import expect

    page = watched.open(browser_site / name)
    charts = page.locator("[data-chart]")
    expect(charts).to_have_count(0 if name == "diff.html" else 3)
    wake_charts(page)
    for index in range(charts.count()):
        charts.nth(index).scroll_into_view_if_needed()
        # Locator waits, not wait_for_function: the pages' CSP (rightly) refuses Playwright's string evaluation.
        expect(charts.nth(index).locator("svg.main-svg").first).to_be_attached()
    watched.assert_clean()


def test_the_same_site_works_over_http(browser: Any, browser_site: Path) -> None:
    """As on GitHub Pages: served over HTTP (sitegen serve's server), with the same CSP and no errors."""
    import threading

    from playwright.sync_api import expect

    from sitegen.site.preview.server import make_server

    server = make_server(browser_site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = new_context(browser)
    try:
        watched = Watched(context.new_page())
        page = watched.open(server.url + "index.html")
        wait_until_ready(page)
        wake_charts(page)
        page.locator("[data-chart]").nth(2).scroll_into_view_if_needed()  # plotly.js comes when a chart nears the viewport
        expect(page.locator(".js-plotly-plot").nth(2).locator("svg.main-svg").first).to_be_attached()
        page.fill("#filter-q", "reject")
        expect(case_rows(page)).to_have_text(["reject-safety"])
        case_rows(page).first.click()
        expect(page.locator("main[data-case-id]")).to_have_attribute("data-case-id", "reject-safety")
        expect(page.locator("[data-history-strip] .strip-cell")).to_have_count(5)
        watched.assert_clean(allowed_origin=server.url)  # only the site's own server was asked for anything
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_case_page_renders_with_its_history_strip(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(case_page_file(browser_site, "db-pool"))
    cells = page.locator("[data-history-strip] .strip-cell")
    expect(cells).to_have_text(["✓", "✗", "✓", "✓", "✗"])
    expect(cells.nth(4)).to_have_attribute("title", re.compile(r"run 5 · browser", re.IGNORECASE))
    flaky = page.locator(".case-head .badges [data-flaky-badge]")  # made by the script from the run's history
    expect(flaky).to_be_visible()
    expect(flaky).to_have_attribute("title", "pass/fail flipped at least twice in the last 10 runs")
    expect(flaky).to_have_text("↯ flaky")
    expect(page.locator(".case-head .badges > :is(.verdict, [data-flaky-badge], .tag)").nth(1)).to_have_attribute("data-flaky-badge", "")
    payload = page.locator("#tools .timeline > li:not(.call-failed) details").first  # folded until asked for
    expect(payload.locator("pre")).to_be_hidden()
    payload.locator("summary").click()
    expect(payload.locator("pre")).to_be_visible()
    watched.assert_clean()


def test_a_failing_case_page_says_since_when_it_fails(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    # The hostile case fails now and in no earlier run it was in: it has none
    page = watched.open(case_page_file(browser_site, "hostile-b-amp-quotes"))
    since = page.locator("#result #failing-since")
    expect(since).to_have_text("Failing since this run or earlier: its first recorded run.")
    expect(since).to_be_visible()
    page = watched.open(case_page_file(browser_site, "missing-trace"))  # could not be evaluated: not failing
    expect(page.locator(".case-change-statement")).to_have_text(re.compile("^Could not be evaluated: "))
    expect(page.locator("#failing-since")).to_be_hidden()
    page = watched.open(case_page_file(browser_site, "db-pool"))  # regressed: it passed the run before
    expect(page.locator("#failing-since")).to_have_text("Failing since this run.")
    page = watched.open(case_page_file(browser_site, "pay-timeout"))  # passing: nothing
    expect(page.locator("[data-case-position]")).to_have_text(re.compile("case 1 of 7"))
    expect(page.locator("#failing-since")).to_be_hidden()
    watched.assert_clean()


def test_ids_that_name_object_properties(watched: Watched, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    cases = [make_case(id=name, traceFixture=f"t{i}.json") for i, name in enumerate(["__proto__", "constructor", "toString"])]
    cases_path, fixtures = write_suite(tmp_path / "suite", cases, {f"t{i}.json": make_trace() for i in range(3)})
    build_site(BuildOptions(cases=cases_path, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None))
    for page_file in sorted((tmp_path / "site" / "cases").glob("*.html")):
        page = watched.open(page_file)
        expect(page.locator("[data-history-strip] .strip-cell")).to_have_text(["✓"])
        watched.assert_clean()
    page = watched.open(tmp_path / "site" / "index.html")
    wait_until_ready(page)
    page.fill("#filter-q", "proto")
    expect(case_rows(page)).to_have_text(["__proto__"])
    watched.assert_clean()


def test_hostile_case_page_runs_nothing(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(case_page_file(browser_site, "hostile-b-amp-quotes"))
    expect(page.locator("main")).to_have_attribute("data-case-id", 'hostile <b>&amp; "quotes" 熔断')
    expect(page.locator(".markdown script, .markdown img")).to_have_count(0)
    watched.assert_clean()
    assert page.evaluate("typeof window.alert") == "function"


@pytest.mark.parametrize("width", [1280, 760])
def test_verdict_badges_keep_their_words_whole(browser: Any, browser_site: Path, width: int) -> None:
    # A verdict like LOW_CONFID stays on one line in the case table; only a verdict longer than its cell
    # (the hostile test case's) breaks, and it stays inside the cell.
    context = new_context(browser, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto((browser_site / "index.html").as_uri())
    wait_until_ready(page)
    assert settle(page) == []
    badges = page.evaluate(
        """() => [...document.querySelectorAll('#case-table tbody td .verdict')].map(b => {
            const cell = b.closest('td').getBoundingClientRect(), box = b.getBoundingClientRect();
            return {text: b.textContent.trim(), lines: Math.round(box.height / parseFloat(getComputedStyle(b).lineHeight)),
                    inside: box.left >= cell.left - 0.5 && box.right <= cell.right + 0.5};
        })"""
    )
    context.close()
    assert any("LOW_CONFID" in badge["text"] for badge in badges)
    for badge in badges:
        assert badge["inside"], badge
        if len(badge["text"]) <= 20:
            assert badge["lines"] == 1, badge


def test_tag_links_filter_the_index(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(case_page_file(browser_site, "reject-safety"))
    page.click("a.tag:has-text('domain:order')")
    wait_until_ready(page)
    expect(page).to_have_url(re.compile(r"/index\.html#tag=domain%3Aorder$"))
    expect(page.locator("#filter-tag")).to_have_value("domain:order")
    expect(case_rows(page)).to_have_text(["reject-safety"])
    watched.assert_clean()


def test_diff_matrix_links_to_the_cases(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(browser_site / "diff.html")
    link = page.locator("table.matrix td.matrix-moved a").first
    target = (link.get_attribute("href") or "").removeprefix("#")
    assert target
    link.click()
    expect(page).to_have_url(re.compile("#" + re.escape(target) + "$"))
    section_links = page.locator(f"[id='{target}'] a")
    expect(section_links.first).to_be_visible()
    section_links.first.click()
    expect(page.locator("main[data-case-id]")).to_be_attached()
    watched.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheme: str) -> None:
    """Index and a case page of the shipped suite; written to docs/ with SITEGEN_SCREENSHOTS=1."""
    from playwright.sync_api import expect

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1793160000")
    baseline = ROOT / "eval" / "baseline" / "report.json"
    history = tmp_path / "history.json"
    history.write_text(json.dumps(shipped_history(json.loads(baseline.read_text(encoding="utf-8")))), encoding="utf-8")
    build_site(
        BuildOptions(
            cases=ROOT / "eval" / "cases" / "diagnosis-cases.json", fixtures=ROOT / "eval" / "fixtures", baseline=baseline,
            history=history, out=tmp_path / "site", run_id="this-build", run_label="this build", cwd=tmp_path,
        )
    )
    context = new_context(browser, viewport={"width": 1280, "height": 1100}, color_scheme=scheme, device_scale_factor=1)
    watched = Watched(context.new_page())
    targets = {
        "index": (tmp_path / "site" / "index.html", ".js-plotly-plot >> nth=2 >> svg.main-svg >> nth=0"),
        "case": (case_page_file(tmp_path / "site", "payment-timeout"), "[data-history-strip] .strip-cell >> nth=0"),
    }
    out = DOCS if os.environ.get("SITEGEN_SCREENSHOTS") == "1" and scheme == "light" else tmp_path
    for name, (path, drawn) in targets.items():
        page = watched.open(path)
        charts = page.locator("[data-chart]")
        wake_charts(page)
        for index in range(charts.count()):  # plotly.js comes when a chart nears the viewport (site.js)
            charts.nth(index).scroll_into_view_if_needed()
        expect(page.locator(drawn)).to_be_attached()
        page.evaluate("window.scrollTo(0, 0)")
        watched.assert_clean()  # idle, its timers run: the picture shows the page as it stays
        shot = out / f"screenshot-{name}.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    context.close()
