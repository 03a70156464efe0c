"""The change badges and the Change filter in a real browser, for an index of plain rows and for one built by
its script from the compact rows of a long case list. Every read after an action is an auto-waiting expect()."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from changes_suite import EXPECTED, ORDER, build_changes_site
from helpers import Watched

pytestmark = pytest.mark.browser



@pytest.fixture
def expect(browser: Any) -> Any:  # noqa: F811
    """Playwright's auto-waiting assertions (imported once the browser fixture has found Playwright)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


@pytest.fixture(scope="module", params=[500, 2], ids=["plain-rows", "compact-rows"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_changes_site(tmp_path_factory.mktemp("browser-changes"), rows=request.param)[0]


def _links(page: Any) -> Any:
    return page.locator("#case-table tbody tr:not(.empty-row) a.case-link")


def _every_row(page: Any, expect: Any) -> None:
    """The table showing every case: a long list shows its own first rows until a control (here Reset) loads them all."""
    expect(page.locator("#case-table.is-ready")).to_be_visible()
    if page.locator("#case-table[data-rows-src]").count():
        page.locator("#filter-reset").click()


def test_every_row_shows_its_change(watched: Watched, site: Path, expect: Any) -> None:  # noqa: F811
    page = watched.open(site / "index.html")
    _every_row(page, expect)
    expect(_links(page)).to_have_text(ORDER)
    rows = page.locator("#case-table tbody tr")
    for index, case_id in enumerate(ORDER):
        expect(rows.nth(index)).to_have_attribute("data-change", EXPECTED[case_id])
    expect(rows.nth(1).locator("td").nth(1).locator(".change")).to_have_text("▼ regressed")
    expect(rows.nth(3).locator("td").nth(1).locator(".change")).to_have_text("≡ known failure")
    watched.assert_clean()


def test_the_change_filter_is_kept_in_the_url_and_works_with_the_others(
    watched: Watched, site: Path, expect: Any  # noqa: F811
) -> None:
    page = watched.open(site / "index.html")
    _every_row(page, expect)
    expect(_links(page)).to_have_count(5)
    page.select_option("#filter-change", "regressed")
    expect(_links(page)).to_have_text(["breaks"])
    expect(page).to_have_url(re.compile(r"#change=regressed$"))
    expect(page.locator("#case-count")).to_have_text("The only matching case (5 in all).")
    # with the status filter: the fixed cases that pass, the known failures that pass (none)
    page.select_option("#filter-change", "fixed")
    page.select_option("#filter-status", "passed")
    expect(_links(page)).to_have_text(["mends"])
    expect(page).to_have_url(re.compile(r"status=passed&change=fixed"))
    page.select_option("#filter-change", "still_failing")
    expect(page.locator(".empty-row")).to_be_visible()
    # with sorting: every passing case, the filter off, sorted by case id descending
    page.select_option("#filter-change", "")
    page.locator("th[data-key='case'] button").click()
    page.locator("th[data-key='case'] button").click()
    expect(_links(page)).to_have_text(["steady", "mends", "fresh"])
    expect(page).not_to_have_url(re.compile("change="))
    page.locator("#filter-reset").click()
    expect(_links(page)).to_have_count(5)
    expect(page.locator("#filter-change")).to_have_value("")
    watched.assert_clean()


def test_a_url_with_a_change_filter_restores_it(watched: Watched, site: Path, expect: Any) -> None:  # noqa: F811
    page = watched.page
    page.goto((site / "index.html").as_uri() + "#change=still_failing")
    expect(page.locator("#filter-change")).to_have_value("still_failing")
    expect(_links(page)).to_have_text(["known"])
    page.goto((site / "index.html").as_uri() + "#change=new&q=fresh")
    expect(page.locator("#filter-change")).to_have_value("new")
    expect(_links(page)).to_have_text(["fresh"])
    page.locator("#filter-change").select_option("still_passing")
    expect(page.locator(".empty-row")).to_be_visible()  # steady is not "fresh"
    watched.assert_clean()


def test_a_regressed_case_page_states_what_broke(watched: Watched, site: Path, expect: Any) -> None:  # noqa: F811
    page = watched.open(site / "index.html")
    page.locator("#case-table a.case-link", has_text="breaks").click()
    expect(page.locator("main")).to_have_attribute("data-change", "regressed")
    expect(page.locator(".case-head .badges .change")).to_have_text("▼ regressed")
    expect(page.locator("#change .case-change-statement")).to_have_text(
        "Regressed since the baseline: forbidden_answer_keyword"
    )
    expect(page.locator("#change")).to_be_in_viewport()
    watched.assert_clean()
