"""The site in a real browser (Debian's Chromium through Playwright), opened from file:// as a CI artifact is.

Skipped with the reason when /usr/bin/chromium or Playwright is missing; with SITEGEN_REQUIRE_BROWSER=1 (CI)
they fail instead. `SITEGEN_SCREENSHOTS=1` also writes the README's screenshots to docs/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import make_case, make_trace, write_suite
from sitegen.site.build import BuildOptions, build_site

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
# How much of the page's (fake) clock settle() runs through: every timer the page sets for up to this long fires.
SETTLE_MS = 5_000
# A timer set when the page has loaded, due just before settle() stops: when it has run, the page's own
# timers due by then have run too (the fake clock fires timers in the order they are due).
TIMERS_RAN = f"""
window.addEventListener('load', function () {{
  setTimeout(function () {{ window.__sitegenTimersRan = true; }}, {SETTLE_MS - 1});
}});
"""
# Upper bounds for waits, never thresholds: a busy machine only makes a test slower, not red.
ACTION_TIMEOUT_MS = 60_000
EXPECT_TIMEOUT_MS = 30_000


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
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[test]')")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def new_context(browser: Any, **options: Any) -> Any:
    """A browser context whose pages run on a clock settle() can run forward, with generous wait limits."""
    context = browser.new_context(**options)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    context.clock.install()
    context.add_init_script(TIMERS_RAN)
    return context


def settle(page: Any) -> list[str]:
    """Wait until the page is idle: loaded, no request for 500 ms, every timer due within SETTLE_MS run.

    Returns what a timer threw (the fake clock hands that to its caller instead of the page's error event).
    """
    from playwright.sync_api import Error

    page.wait_for_load_state("load")
    page.wait_for_load_state("networkidle")
    try:
        page.clock.run_for(SETTLE_MS)
    except Error as exc:
        return [f"error thrown by a timer: {exc.message}"]
    assert page.evaluate("window.__sitegenTimersRan === true"), f"the timers of {page.url} did not run"
    return []


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

    def open(self, path: Path | str) -> Any:
        """Load a file:// URL (a path, or a URL string with a fragment) and wait until its scripts have run."""
        self.page.goto(path.as_uri() if isinstance(path, Path) else path)
        self.page.wait_for_load_state("load")
        return self.page

    def assert_clean(self, allowed_origin: str | None = None) -> None:
        """Once the page is idle (settle), nothing was reported and nothing but `allowed_origin` was asked for."""
        self.errors += settle(self.page)
        assert self.errors == [], "\n".join(self.errors)
        network = [url for url in self.network if allowed_origin is None or not url.startswith(allowed_origin)]
        assert network == [], f"network requests: {network}"


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = new_context(browser, viewport={"width": 1280, "height": 900})
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


def case_rows(page: Any) -> Any:
    """The case links of the rows the index's table shows (a locator: expect() waits on it)."""
    return page.locator("#case-table tbody tr:not(.empty-row) a.case-link")


def wait_until_ready(page: Any) -> None:
    """The index's script has set up its table (it marks the table when done)."""
    from playwright.sync_api import expect

    expect(page.locator("#case-table")).to_have_class(re.compile(r"\bis-ready\b"))


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
def test_chart_pages_render_without_errors(watched: Watched, site: Path, name: str) -> None:
    from playwright.sync_api import expect

    page = watched.open(site / name)
    charts = page.locator("[data-chart]")
    expect(charts).to_have_count(0 if name == "diff.html" else 3)
    for index in range(charts.count()):
        # Locator waits, not wait_for_function: the pages' CSP (rightly) refuses Playwright's string evaluation.
        expect(charts.nth(index).locator("svg.main-svg").first).to_be_attached()
    watched.assert_clean()


def test_the_same_site_works_over_http(browser: Any, site: Path) -> None:
    """As on GitHub Pages: served over HTTP (sitegen serve's server), with the same CSP and no errors."""
    import threading

    from playwright.sync_api import expect

    from sitegen.site.serve import make_server

    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = new_context(browser)
    try:
        watched = Watched(context.new_page())
        page = watched.open(server.url + "index.html")
        wait_until_ready(page)
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


def test_case_page_renders_with_its_history_strip(watched: Watched, site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(_case_page(site, "db-pool"))
    cells = page.locator("[data-history-strip] .strip-cell")
    expect(cells).to_have_text(["✓", "✗", "✓", "✓", "✗"])
    expect(cells.nth(4)).to_have_attribute("title", re.compile(r"run 5 · browser", re.IGNORECASE))
    expect(page.locator("[data-flaky-badge]")).to_be_visible()
    payload = page.locator("#tools details.payload").first
    expect(payload.locator("pre")).to_be_hidden()
    payload.locator("summary").click()
    expect(payload.locator("pre")).to_be_visible()
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


def test_hostile_case_page_runs_nothing(watched: Watched, site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(_case_page(site, "hostile-b-amp-quotes"))
    expect(page.locator("main")).to_have_attribute("data-case-id", 'hostile <b>&amp; "quotes" 熔断')
    expect(page.locator(".markdown script, .markdown img")).to_have_count(0)
    watched.assert_clean()
    assert page.evaluate("typeof window.alert") == "function"


@pytest.mark.parametrize("width", [1280, 760])
def test_verdict_badges_keep_their_words_whole(browser: Any, site: Path, width: int) -> None:
    # A verdict like LOW_CONFID stays on one line in the case table; only a verdict longer than its cell
    # (the hostile test case's) breaks, and it stays inside the cell.
    context = new_context(browser, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto((site / "index.html").as_uri())
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


def test_tag_links_filter_the_index(watched: Watched, site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(_case_page(site, "reject-safety"))
    page.click("a.tag:has-text('domain:order')")
    wait_until_ready(page)
    expect(page).to_have_url(re.compile(r"/index\.html#tag=domain%3Aorder$"))
    expect(page.locator("#filter-tag")).to_have_value("domain:order")
    expect(case_rows(page)).to_have_text(["reject-safety"])
    watched.assert_clean()


def test_diff_matrix_links_to_the_cases(watched: Watched, site: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(site / "diff.html")
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
    from playwright.sync_api import expect

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1793160000")
    baseline = ROOT / "eval" / "baseline" / "report.json"
    history = tmp_path / "history.json"
    history.write_text(json.dumps(_shipped_history(json.loads(baseline.read_text(encoding="utf-8")))), encoding="utf-8")
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
        "case": (_case_page(tmp_path / "site", "payment-timeout"), "[data-history-strip] .strip-cell >> nth=0"),
    }
    out = DOCS if os.environ.get("SITEGEN_SCREENSHOTS") == "1" and scheme == "light" else tmp_path
    for name, (path, drawn) in targets.items():
        page = watched.open(path)
        expect(page.locator(drawn)).to_be_attached()
        watched.assert_clean()  # idle, its timers run: the picture shows the page as it stays
        shot = out / f"screenshot-{name}.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    context.close()
