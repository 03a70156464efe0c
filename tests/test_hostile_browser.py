"""Every page of the hostile site in a real browser (Debian Chromium, file://): nothing runs, nothing loads.

alert/confirm/prompt/print/open are replaced before any page script by recorders, dialogs are recorded and
dismissed, every request that is not file:// is recorded and aborted, and every `securitypolicyviolation`
is recorded. Then each page must have run nothing, asked the network for nothing, navigated nowhere, and
caused no CSP violation (a violation would mean the site or its data tried something the CSP forbids).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from helpers import new_context, settle, wake_charts
from hostile_corpus import PAYLOADS, write_hostile_site_inputs
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

# Runs before the page's own scripts and is not subject to its CSP: every way data could show it ran is recorded.
TRAPS = """
(() => {
  const record = (kind) => function () {
    window.__sitegenRan.push(kind + ': ' + Array.prototype.map.call(arguments, String).join(', '));
    return kind === 'confirm' ? false : null;
  };
  Object.defineProperty(window, '__sitegenRan', {value: [], writable: false});
  Object.defineProperty(window, '__sitegenViolations', {value: [], writable: false});
  for (const name of ['alert', 'confirm', 'prompt', 'print', 'open']) {
    Object.defineProperty(window, name, {value: record(name), writable: false, configurable: false});
  }
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__sitegenViolations.push(
      e.violatedDirective + ' blocked ' + (e.blockedURI || '(inline)') + ' in ' + e.sourceFile + ':' + e.lineNumber +
      (e.sample ? ' sample ' + JSON.stringify(e.sample) : ''));
  });
})();
"""


class Trapped:
    """A browser page with every trap set, and what each trap caught."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.page = context.new_page()
        self.remote: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.popups: list[str] = []
        self.page.add_init_script(TRAPS)
        self.page.route("**/*", self._route)
        self.page.on("request", lambda req: None if req.url.startswith("file://") else self.remote.append(req.url))
        self.page.on("dialog", self._dialog)
        self.page.on("console", lambda msg: self.errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        context.on("page", lambda page: self.popups.append(page.url))

    def _route(self, route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.remote.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def visit(self, url: str) -> list[str]:
        """Open `url`, wait until it is idle and its timers ran (settle), return everything it should not have done."""
        self.page.goto(url)
        return self.problems(url)

    def problems(self, url: str | None = None) -> list[str]:
        """What the page did that it should not have (navigating away from `url`, by default where it is now),
        once it is idle and its timers ran; then forget it. Reloading would lose what the old page recorded."""
        url = url or self.page.url
        timer_errors = settle(self.page)
        ran = self.page.evaluate("window.__sitegenRan.slice()")
        violations = self.page.evaluate("window.__sitegenViolations.slice()")
        problems = [f"ran {call}" for call in ran] + [f"dialog {d}" for d in self.dialogs]
        problems += [f"CSP violation: {v}" for v in violations] + self.errors + timer_errors
        problems += [f"requested {u}" for u in self.remote] + [f"opened a window at {u}" for u in self.popups]
        if self.page.url.split("#")[0] != url.split("#")[0]:
            problems.append(f"navigated to {self.page.url}")
        if len(self.page.frames) != 1:
            problems.append(f"{len(self.page.frames) - 1} frame(s) on the page")
        self.dialogs.clear(), self.errors.clear(), self.remote.clear(), self.popups.clear()
        return problems


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile suite with its hostile baseline and history, built into a site."""
    root = tmp_path_factory.mktemp("hostile-browser")
    cases, fixtures, baseline, history = write_hostile_site_inputs(root / "in")
    build_site(
        BuildOptions(
            cases=cases, fixtures=fixtures, baseline=baseline, history=history, out=root / "site", run_id="hostile", cwd=root
        )
    )
    return root / "site"


@pytest.fixture
def trapped(browser: Any) -> Iterator[Trapped]:  # noqa: F811 - the imported fixture
    context = new_context(browser, viewport={"width": 1280, "height": 900}, java_script_enabled=True)
    yield Trapped(context)
    context.close()


def test_the_traps_catch_what_they_look_for(trapped: Trapped, tmp_path: Path) -> None:
    """Without a CSP, script from a page is caught by each trap (so a clean run below means something)."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!doctype html><title>x</title><script>alert('a'); confirm('c'); open('https://example.invalid/w');"
        " setTimeout(function () { alert('late') }, 3000)</script>"
        "<img src=\"https://example.invalid/p.png\">",
        encoding="utf-8",
    )
    problems = trapped.visit(bad.as_uri())
    assert any(p.startswith("ran alert: a") for p in problems), problems
    assert any(p.startswith("ran confirm: c") for p in problems), problems
    assert any(p.startswith("ran open: https://example.invalid/w") for p in problems), problems
    assert any(p == "requested https://example.invalid/p.png" for p in problems), problems
    assert "ran alert: late" in problems, problems  # visit() waited for the page's timers, however slow the machine
    strict = tmp_path / "strict.html"
    strict.write_text(
        "<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'self'\">"
        "<script>alert('blocked')</script><p style=\"color:red\">x</p>",
        encoding="utf-8",
    )
    problems = trapped.visit(strict.as_uri())
    assert not any(p.startswith("ran ") for p in problems), problems
    assert any(p.startswith("CSP violation: script-src") for p in problems), problems
    assert any(p.startswith("CSP violation: style-src") for p in problems), problems


def test_every_page_of_the_hostile_site_runs_and_loads_nothing(trapped: Trapped, hostile_site: Path) -> None:
    pages = sorted(hostile_site.rglob("*.html"))
    assert len(pages) > len(PAYLOADS)
    problems: dict[str, list[str]] = {}
    for page in pages:
        found = trapped.visit(page.as_uri())
        if found:
            problems[page.relative_to(hostile_site).as_posix()] = found
    assert problems == {}, json.dumps(problems, indent=1, ensure_ascii=False)[:6000]


def test_charts_render_under_the_csp(trapped: Trapped, hostile_site: Path) -> None:
    from playwright.sync_api import expect

    for name in ("index.html", "history.html"):
        assert trapped.visit((hostile_site / name).as_uri()) == []
        charts = trapped.page.locator("[data-chart]")
        expect(charts).not_to_have_count(0)
        wake_charts(trapped.page)
        for index in range(charts.count()):
            charts.nth(index).scroll_into_view_if_needed()  # plotly.js comes when a chart nears the viewport
            expect(charts.nth(index).locator("svg.main-svg").first).to_be_attached()
        # The hostile verdicts are chart labels: shown as text, never as links or markup.
        expect(trapped.page.locator(".js-plotly-plot a")).to_have_count(0)
        assert trapped.problems() == []


def test_opening_every_payload_section_runs_nothing(trapped: Trapped, hostile_site: Path) -> None:
    """Collapsed blocks (tool payloads, raw trace, executor draft) opened one by one, and hovering links."""
    from playwright.sync_api import expect

    for page in sorted((hostile_site / "cases").glob("*.html"))[:12]:
        assert trapped.visit(page.as_uri()) == []
        summaries = trapped.page.locator("details > summary")
        for index in range(min(summaries.count(), 20)):
            details = summaries.nth(index).locator("xpath=..")
            was_open = details.get_attribute("open") is not None
            summaries.nth(index).click()
            (expect(details).not_to_have_attribute if was_open else expect(details).to_have_attribute)("open", "")
        links = trapped.page.locator("#answer a")
        for index in range(min(links.count(), 5)):
            links.nth(index).hover()
        assert trapped.problems() == [], page.name  # this page, as the clicks left it: not a reloaded one


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if "<" in p][:8])
def test_hostile_filter_state_in_the_url_runs_nothing(trapped: Trapped, hostile_site: Path, payload: str) -> None:
    """The index reads its filters from the URL fragment, which anyone can craft: it stays text."""
    from playwright.sync_api import expect

    url = (hostile_site / "index.html").as_uri() + "#q=" + quote(payload, safe="") + "&tag=" + quote(payload, safe="")
    assert trapped.visit(url) == []
    expect(trapped.page.locator("#filter-q")).to_have_value(payload)
    expect(trapped.page.locator("#filter-tag")).to_have_value(payload)


def test_raw_trace_files_open_as_text_and_run_nothing(trapped: Trapped, hostile_site: Path) -> None:
    """Each raw trace beside a case page (the fixture's bytes, urls.raw_trace) is opened by the browser as JSON
    text from file://, whatever the agent wrote in it: never parsed as HTML, nothing runs."""
    raw_files = sorted((hostile_site / "cases").glob("*.trace.json"))
    assert raw_files
    for raw in raw_files:
        url = raw.as_uri()
        assert trapped.visit(url) == [], raw.name
        assert trapped.page.evaluate("document.contentType") == "application/json", raw.name
        assert trapped.page.evaluate("document.querySelectorAll('script, img, iframe, a').length") == 0, raw.name
        shown = trapped.page.evaluate("document.body.innerText")
        assert json.loads(shown) == json.loads(raw.read_text(encoding="utf-8")), raw.name
