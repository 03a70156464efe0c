"""The site in a real browser (Debian's Chromium through Playwright), opened from file:// as a CI artifact is.

Skipped with the reason when /usr/bin/chromium or Playwright is missing; with SITEGEN_REQUIRE_BROWSER=1 (CI)
they fail instead. `SITEGEN_SCREENSHOTS=1` also writes the README's screenshots to docs/.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import make_case, make_trace, write_suite
from sitegen.site import BuildOptions, build_site

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "site"
DOCS = ROOT / "docs"
# Reported to the console by every page, so a violation cannot pass unnoticed (init scripts are not subject to CSP).
CSP_LISTENER = """
document.addEventListener('securitypolicyviolation', function (e) {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI);
});
"""


def _unavailable(reason: str) -> None:
    if os.environ.get("SITEGEN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests are required (SITEGEN_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium, never a downloaded browser."""
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class Watched:
    """A page plus everything it reported: console errors, page errors, requests off the file system."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.network: list[str] = []
        page.add_init_script(CSP_LISTENER)
        page.on("console", lambda msg: self.errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("request", lambda req: None if req.url.startswith(("file://", "data:", "about:")) else self.network.append(req.url))

    def open(self, path: Path) -> Any:
        """Load a file:// URL and wait until scripts have run."""
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")
        return self.page

    def assert_clean(self) -> None:
        assert self.errors == [], "\n".join(self.errors)
        assert self.network == [], f"network requests: {self.network}"


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield Watched(context.new_page())
    context.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test suite built with its baseline and four earlier runs."""
    root = tmp_path_factory.mktemp("browser-site")
    history = root / "history.json"
    shutil.copy(DATA / "history.json", history)
    build_site(
        BuildOptions(
            cases=DATA / "cases.json", fixtures=DATA / "fixtures", baseline=DATA / "baseline.json",
            history=history, out=root / "site", run_id="browser", cwd=root,
        )
    )
    return root / "site"


def _case_page(site: Path, slug_prefix: str) -> Path:
    return next((site / "cases").glob(f"{slug_prefix}-*.html"))


def _rows(page: Any) -> list[str]:
    return page.locator("#case-table tbody tr:not(.empty-row) a.case-link").all_inner_texts()


def test_violations_are_detected(watched: Watched, tmp_path: Path) -> None:
    """The checks below can fail: an inline script under the site's CSP is reported."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'self'\">"
        "<script>document.title = 'ran'</script><img src=\"https://example.invalid/x.png\">",
        encoding="utf-8",
    )
    watched.open(page)
    assert watched.page.title() != "ran"
    assert any("CSP violation" in error or "Content Security Policy" in error for error in watched.errors), watched.errors


@pytest.mark.parametrize("name", ["index.html", "diff.html", "history.html"])
def test_chart_pages_render_without_errors(watched: Watched, site: Path, name: str) -> None:
    page = watched.open(site / name)
    charts = page.locator("[data-chart]")
    if name == "diff.html":
        assert charts.count() == 0
    else:
        assert charts.count() == 3
        # Locator waits, not wait_for_function: the pages' CSP (rightly) refuses Playwright's string evaluation.
        page.locator(".js-plotly-plot").nth(2).locator("svg.main-svg").first.wait_for()
        for index in range(charts.count()):
            assert charts.nth(index).locator("svg.main-svg").count() >= 1
    watched.assert_clean()


def test_the_same_site_works_over_http(browser: Any, site: Path) -> None:
    """As on GitHub Pages: served over HTTP (sitegen serve's server), with the same CSP and no errors."""
    import threading

    from sitegen.serve import make_server

    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        watched = Watched(context.new_page())
        page = watched.page
        page.goto(server.url + "index.html")
        page.locator(".js-plotly-plot").nth(2).locator("svg.main-svg").first.wait_for()
        page.fill("#filter-q", "reject")
        assert _rows(page) == ["reject-safety"]
        page.locator("a.case-link").first.click()
        page.locator("[data-history-strip] .strip-cell").first.wait_for()
        assert page.locator("[data-history-strip] .strip-cell").count() == 5
        # only the site's own server was asked for anything
        watched.network = [url for url in watched.network if not url.startswith(server.url)]
        watched.assert_clean()
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_case_page_renders_with_its_history_strip(watched: Watched, site: Path) -> None:
    page = watched.open(_case_page(site, "db-pool"))
    cells = page.locator("[data-history-strip] .strip-cell")
    assert cells.count() == 5
    assert [cells.nth(i).inner_text() for i in range(5)] == ["✓", "✗", "✓", "✓", "✗"]
    assert "run 5 · browser" in (cells.nth(4).get_attribute("title") or "").lower()
    assert page.locator("[data-flaky-badge]").is_visible()
    page.locator("#tools details.payload").first.locator("summary").click()
    assert page.locator("#tools details.payload[open] pre").first.is_visible()
    watched.assert_clean()


def test_ids_that_name_object_properties(watched: Watched, tmp_path: Path) -> None:
    cases = [make_case(id=name, traceFixture=f"t{i}.json") for i, name in enumerate(["__proto__", "constructor", "toString"])]
    cases_path, fixtures = write_suite(tmp_path / "suite", cases, {f"t{i}.json": make_trace() for i in range(3)})
    build_site(BuildOptions(cases=cases_path, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None))
    for page_file in sorted((tmp_path / "site" / "cases").glob("*.html")):
        page = watched.open(page_file)
        assert page.locator("[data-history-strip] .strip-cell").all_inner_texts() == ["✓"]
    page = watched.open(tmp_path / "site" / "index.html")
    page.fill("#filter-q", "proto")
    assert _rows(page) == ["__proto__"]
    watched.assert_clean()


def test_hostile_case_page_runs_nothing(watched: Watched, site: Path) -> None:
    page = watched.open(_case_page(site, "hostile-b-amp-quotes"))
    assert page.evaluate("typeof window.alert") == "function"
    assert page.locator("main").get_attribute("data-case-id") == 'hostile <b>&amp; "quotes" 熔断'
    assert page.locator(".markdown script, .markdown img").count() == 0
    watched.assert_clean()


def test_text_filter_hides_rows_and_survives_reload(watched: Watched, site: Path) -> None:
    page = watched.open(site / "index.html")
    assert len(_rows(page)) == 7
    page.fill("#filter-q", "pool")
    assert _rows(page) == ["db-pool"]
    assert "q=pool" in page.url
    assert "1–1 of 1 matching" in page.inner_text("#case-count")
    page.reload()
    assert page.input_value("#filter-q") == "pool"
    assert _rows(page) == ["db-pool"]
    page.fill("#filter-q", "no such case at all")
    assert _rows(page) == [] and page.locator(".empty-row").is_visible()
    page.click("#filter-reset")
    assert len(_rows(page)) == 7
    watched.assert_clean()


def test_status_verdict_tag_filters_and_sorting(watched: Watched, site: Path) -> None:
    page = watched.open(site / "index.html")
    page.select_option("#filter-status", "failed")
    assert set(_rows(page)) == {"db-pool", "broken-json", 'hostile <b>&amp; "quotes" 熔断', "new-case"}
    page.select_option("#filter-verdict", "PASS")
    assert _rows(page) == ["new-case"]
    page.click("#filter-reset")
    page.select_option("#filter-tag", "known-failure")
    assert _rows(page) == ["Missing Trace", "broken-json"]
    page.click("#filter-reset")
    page.check("#filter-flaky")
    assert _rows(page) == ["db-pool"]
    page.click("#filter-reset")
    page.click("th[data-key='duration'] button")
    assert page.get_attribute("th[data-key='duration']", "aria-sort") == "ascending"
    assert _rows(page)[-1] == "db-pool"  # the slowest
    page.click("th[data-key='duration'] button")
    assert _rows(page)[0] == "db-pool"
    assert "sort=duration" in page.url and "dir=desc" in page.url
    watched.assert_clean()


@pytest.mark.parametrize("width", [1280, 760])
def test_verdict_badges_keep_their_words_whole(browser: Any, site: Path, width: int) -> None:
    # A verdict like LOW_CONFID stays on one line in the case table; only a verdict longer than its cell
    # (the hostile test case's) breaks, and it stays inside the cell.
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto((site / "index.html").as_uri())
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


def test_tag_links_filter_the_index(watched: Watched, site: Path) -> None:
    page = watched.open(_case_page(site, "reject-safety"))
    page.click("a.tag:has-text('domain:order')")
    page.locator("#case-table.is-ready").wait_for()
    assert page.input_value("#filter-tag") == "domain:order"
    assert _rows(page) == ["reject-safety"]
    watched.assert_clean()


def test_diff_matrix_links_to_the_cases(watched: Watched, site: Path) -> None:
    page = watched.open(site / "diff.html")
    link = page.locator("table.matrix td.matrix-moved a").first
    target = (link.get_attribute("href") or "").removeprefix("#")
    link.click()
    assert page.locator(f"[id='{target}'] a").count() >= 1
    page.locator(f"[id='{target}'] a").first.click()
    page.locator("main[data-case-id]").wait_for()
    watched.assert_clean()


def test_long_tables_are_paged(watched: Watched, tmp_path: Path) -> None:
    count = 250
    cases = [make_case(id=f"case-{i:03d}", traceFixture=f"t{i}.json", expectedRootCauseKeywords=["ok"]) for i in range(count)]
    traces = {f"t{i}.json": make_trace("ok" if i % 3 else "nope") for i in range(count)}
    cases_path, fixtures = write_suite(tmp_path / "big", cases, traces)
    build_site(BuildOptions(cases=cases_path, fixtures=fixtures, out=tmp_path / "site", cwd=tmp_path, baseline=None))
    # every case is linked in the HTML itself, the script only pages through them
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert html.count('class="case-link"') == count
    page = watched.open(tmp_path / "site" / "index.html")
    assert len(_rows(page)) == 100
    assert page.inner_text("#page-info") == "Page 1 of 3"
    page.click("#page-next")
    assert _rows(page)[0] == "case-100" and "page=2" in page.url
    page.reload()
    assert _rows(page)[0] == "case-100"
    page.select_option("#filter-status", "failed")
    assert len(_rows(page)) == 84 and page.locator("#case-pager").is_hidden()
    watched.assert_clean()


def _shipped_history(report: dict[str, Any], runs: int = 6) -> list[dict[str, Any]]:
    """Earlier runs for the screenshot: the shipped report with a few cases failing in each."""
    ids = [r["caseId"] for r in report["results"]]
    always = {r["caseId"] for r in report["results"] if not r["passed"]}
    history = []
    for index in range(runs):
        # the suite's known failures, one case that broke once, one that keeps flipping (flaky)
        failing = always | ({ids[2]} if index == 2 else set()) | ({ids[7]} if index in (1, 4) else set())
        cases = {case_id: case_id not in failing for case_id in ids}
        passed = sum(cases.values())
        history.append(
            {
                "runId": f"nightly-{index + 1}", "label": f"nightly {index + 1}", "createdAt": f"2026-10-{index + 1:02d}T02:00:00Z",
                "commit": None, "totalCases": len(ids), "passedCases": passed, "failedCases": len(ids) - passed,
                "notRunCases": 0, "passRate": passed / len(ids),
                "verdictDistribution": report["verdictDistribution"],
                "averageToolCallCount": report["averageToolCallCount"] + (index % 3) * 0.3,
                "averageDurationMs": report["averageDurationMs"] * (1 + (index % 4) * 0.05), "cases": cases,
            }
        )
    return history


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheme: str) -> None:
    """Index and a case page of the shipped suite; written to docs/ with SITEGEN_SCREENSHOTS=1."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1793160000")
    cases = ROOT / "eval" / "cases" / "diagnosis-cases.json"
    if not cases.is_file():
        pytest.skip("the shipped suite is not there")
    baseline = ROOT / "eval" / "baseline" / "report.json"
    history = tmp_path / "history.json"
    history.write_text(json.dumps(_shipped_history(json.loads(baseline.read_text(encoding="utf-8")))), encoding="utf-8")
    build_site(
        BuildOptions(
            cases=cases, fixtures=ROOT / "eval" / "fixtures", baseline=baseline, history=history,
            out=tmp_path / "site", run_id="this-build", run_label="this build", cwd=tmp_path,
        )
    )
    context = browser.new_context(viewport={"width": 1280, "height": 1100}, color_scheme=scheme, device_scale_factor=1)
    watched = Watched(context.new_page())
    targets = {
        "index": tmp_path / "site" / "index.html",
        "case": _case_page(tmp_path / "site", "payment-timeout"),
    }
    out = DOCS if os.environ.get("SITEGEN_SCREENSHOTS") == "1" and scheme == "light" else tmp_path
    for name, path in targets.items():
        page = watched.open(path)
        if name == "index":
            page.locator(".js-plotly-plot").nth(2).locator("svg.main-svg").first.wait_for()
        shot = out / f"screenshot-{name}.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    watched.assert_clean()
    context.close()
