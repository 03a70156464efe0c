"""The diff page when a change breaks hundreds of cases: the first DIFF_CASES_IN_FULL of a kind in full, the rest one
compact row each, so its elements stay bounded while every regressed case is linked in plain HTML (no script); its
first screen says what it says for one regression; axe-core finds nothing on it, light and dark, phone and desktop
(marker `browser`); the compact rows read on a phone without sideways scrolling."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from helpers import AXE_SCRIPT, EPOCH, axe_violations, make_case, make_trace, new_context, settle, soup, write_suite
from sitegen.defaults import DIFF_CASES_IN_FULL
from sitegen.site.pipeline import BuildOptions, build_site

CASES = 330
REGRESSED = 260  # cases 0–259 pass in the baseline and fail now
KNOWN = 40  # cases 260–299 fail on both sides; 300–329 pass on both
# Elements the page may have: its frame and the sections' first cases in full, then a few per further case.
BASE_ELEMENTS = 1_800
PER_COMPACT_ROW = 7  # <tr>, three <td>, the link, the rules' <code>, one to spare (a phrase's <code>)


def _answer(case: int, now: bool) -> str:
    fails = (case < REGRESSED and now) or REGRESSED <= case < REGRESSED + KNOWN
    return "no idea, sorry" if fails else "the connection pool is exhausted"


@pytest.fixture(scope="module")
def big_change(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite of CASES cases built once as the baseline, then again with REGRESSED of them broken."""
    root = tmp_path_factory.mktemp("big-change")
    cases = [make_case(id=f"case-{i:03d}", traceFixture=f"c{i}.json", expectedRootCauseKeywords=["pool"], requiredEvidenceTools=["query_logs"])
             for i in range(CASES)]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        for run, now in (("baseline", False), ("now", True)):
            traces = {f"c{i}.json": make_trace(_answer(i, now), tools=["query_logs"]) for i in range(CASES)}
            suite = root / run
            write_suite(suite, cases, traces)
            baseline = root / "baseline" / "site" / "report.json" if now else None
            build_site(BuildOptions(cases=suite / "cases.json", fixtures=suite / "fixtures", baseline=baseline, out=suite / "site",
                                    cwd=suite, run_id=run))  # fmt: skip
    return root / "now" / "site"


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.count += 1


def _element_count(page: Path) -> int:
    parser = _Elements()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.count


def test_every_regressed_case_is_linked_in_html_once(big_change: Path) -> None:
    changes = json.loads((big_change / "diff.json").read_text(encoding="utf-8"))["caseChanges"]
    regressed = {c["caseId"] for c in changes if c["change"] == "regressed"}
    assert len(regressed) == REGRESSED
    section = soup(big_change / "diff.html").select_one("#regressed-cases")
    links = {a.get_text(): a["href"] for a in section.select("a[href^='cases/']")}
    assert set(links) == regressed and len(section.select("a[href^='cases/']")) == REGRESSED  # each once
    assert all((big_change / href).is_file() for href in links.values())
    full = section.select("table.change-table:not(.compact-table) > tbody")
    rows = section.select("table.compact-table tbody tr")
    assert len(full) == DIFF_CASES_IN_FULL and len(rows) == REGRESSED - DIFF_CASES_IN_FULL
    assert all(row["data-change"] == "regressed" for row in rows)
    # A compact row says the case's rules by code and what changed, as its row in full would.
    cells = [" ".join(td.get_text(" ", strip=True).split()) for td in rows[0].select("td")]
    in_full = [" ".join(td.get_text(" ", strip=True).split()) for td in full[0].select("tr:first-child > td")]
    assert cells[0] == f"case-{DIFF_CASES_IN_FULL:03d}" and cells[1] == "keyword_coverage" and cells[2] == in_full[2]
    assert in_full[1].startswith("keyword_coverage ")  # in full, the code and its message
    lead = section.select_one(f"#{section['id']}-rows").get_text()
    assert f"The other {REGRESSED - DIFF_CASES_IN_FULL} cases, one row each" in lead
    # The known failures are folded, their first cases in full and the rest compact, each linked too.
    known = soup(big_change / "diff.html").select_one("#known-failures")
    assert known.select_one("details.change-fold summary").get_text() == f"Show the {KNOWN} cases"
    assert len(known.select("a[href^='cases/']")) == KNOWN


def test_the_page_stays_small_and_its_first_screen_says_the_same(big_change: Path) -> None:
    compact = (REGRESSED - DIFF_CASES_IN_FULL) + (KNOWN - DIFF_CASES_IN_FULL)
    elements = _element_count(big_change / "diff.html")
    assert elements <= BASE_ELEMENTS + PER_COMPACT_ROW * compact, elements
    doc = soup(big_change / "diff.html")
    headline = " ".join(doc.select_one("#headline .headline").get_text().split())
    assert headline.startswith(f"▼ {REGRESSED} cases regressed · {KNOWN} known failures;"), headline
    assert [a["href"] for a in doc.select("#headline a")] == ["#regressed-cases", "#known-failures"]
    # The first case under the heading is in full: its rule with its message, and its figures folded under it.
    first = doc.select_one("#regressed-cases table.change-table > tbody")
    assert first.select_one("a").get_text() == "case-000" and first.select_one(".rule-message") and first.select_one(".figures-fold")


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_no_axe_violation_and_no_sideways_scroll(browser: Any, big_change: Path, scheme: str, width: int, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto((big_change / "diff.html").as_uri())
        settle(page)
        last = page.locator("#regressed-cases .compact-table tbody tr").last
        last.scroll_into_view_if_needed()
        expect(last.locator("a")).to_have_text(f"case-{REGRESSED - 1:03d}")
        expect(last.locator("a")).to_be_visible()
        page.screenshot(path=str(tmp_path / f"compact-{width}-{scheme}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.add_script_tag(path=str(AXE_SCRIPT))
        assert axe_violations(page) == []
    finally:
        context.close()
