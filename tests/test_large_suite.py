"""A long case list: static pages of BuildOptions.index_page_rows rows linked from the index (every case page reachable in
plain HTML), compact data for the index's script, which filters, sorts and pages every case in a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from helpers import Watched, assert_inert, check_links, make_case, make_trace, write_suite
from site_audit import case_rows_data
from sitegen.errors import UsageError
from sitegen.site.pipeline import BuildOptions, build_site

ROWS = 10  # rows per static page here, so 25 cases make three pages
COUNT = 25


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large")
    cases = [
        make_case(id=f"case-{i:02d}", traceFixture=f"c{i}.json", expectedRootCauseKeywords=["pool"], tags=[f"team:{i % 4}"])
        for i in range(COUNT)
    ]
    traces = {f"c{i}.json": make_trace("the pool is exhausted" if i % 3 else "no idea", tools=["query_logs"]) for i in range(COUNT)}
    write_suite(root, cases, traces)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        build_site(
            BuildOptions(
                cases=root / "cases.json", fixtures=root / "fixtures", out=root / "site", cwd=root, run_id="r1", index_page_rows=ROWS
            )
        )
    return root / "site"


def test_rows_per_page_must_be_positive(tmp_path: Path) -> None:
    write_suite(tmp_path, [make_case(id="c", traceFixture="c.json")], {"c.json": make_trace("answer")})
    options = BuildOptions(cases=tmp_path / "cases.json", fixtures=tmp_path / "fixtures", out=tmp_path / "site", index_page_rows=0)
    with pytest.raises(UsageError, match="index_page_rows must be at least 1, got 0"):
        build_site(options)
    assert not (tmp_path / "site").exists()


def _list_pages(site: Path) -> list[str]:
    nav = soup(site / "index.html").select_one("#case-pages")
    assert nav is not None
    return [a["href"] for a in nav.select("a")]


def test_index_shows_the_first_page_and_links_the_others(site: Path) -> None:
    index = soup(site / "index.html")
    ids = [a.get_text() for a in index.select("#case-table tbody a.case-link")]
    assert ids == [f"case-{i:02d}" for i in range(ROWS)]
    assert _list_pages(site) == ["index-2.html", "index-3.html"]
    assert "Cases 1–10 of 25 (page 1 of 3)" in index.select_one("#case-pages").get_text()


def test_every_case_page_is_reachable_in_plain_html_from_the_index(site: Path) -> None:
    seen_pages, linked = {"index.html"}, []
    pending = ["index.html"]
    while pending:
        page = soup(site / pending.pop(0))
        linked += [a["href"] for a in page.select("table.case-table tbody a.case-link")]
        for nav in page.select("nav.page-links"):
            for a in nav.select("a"):
                if a["href"] not in seen_pages:
                    seen_pages.add(a["href"])
                    pending.append(a["href"])
    assert seen_pages == {"index.html", "index-2.html", "index-3.html"}
    assert linked == sorted(linked) and len(linked) == COUNT
    assert set(linked) == {f"cases/{p.name}" for p in (site / "cases").glob("*.html")}


def test_list_pages_are_plain_and_safe(site: Path) -> None:
    page = soup(site / "index-3.html")
    assert [a.get_text() for a in page.select("tbody a.case-link")] == ["case-20", "case-21", "case-22", "case-23", "case-24"]
    assert page.select_one(".page-links [aria-current=page]").get_text() == "3"
    assert page.select_one("#case-table") is None  # no filters: the index's script filters the whole list
    tag = page.select_one("tbody a.tag")
    assert tag["href"].startswith("index.html#tag=")
    assert check_links(site) == []
    assert_inert(site)


def test_index_names_every_row_compactly_in_an_asset(site: Path) -> None:
    index = soup(site / "index.html")
    assert index.select_one("script#case-rows") is None  # not in the index: its first paint waits for its own HTML
    table = index.select_one("#case-table")
    assert table["data-total"] == str(COUNT)
    data = case_rows_data(site)
    assert [row[0] for row in data["rows"]] == [f"case-{i:02d}" for i in range(COUNT)]
    slugs = {row[1] for row in data["rows"]}
    assert {f"{slug}.html" for slug in slugs} == {p.name for p in (site / "cases").glob("*.html")}
    assert set(data["statuses"]) == {"passed", "failed"} and "PASS" in data["verdicts"]
    assert (site / table["data-rows-src"]).stat().st_size < 200 * COUNT


def test_a_small_suite_keeps_every_row_on_the_index(tmp_path: Path) -> None:
    write_suite(tmp_path, [make_case(id=f"c{i}", traceFixture="t.json") for i in range(3)], {"t.json": make_trace("x")})
    build_site(BuildOptions(cases=tmp_path / "cases.json", fixtures=tmp_path / "fixtures", out=tmp_path / "site", cwd=tmp_path))
    index = soup(tmp_path / "site" / "index.html")
    assert len(index.select("#case-table tbody tr")) == 3
    assert index.select_one("#case-pages") is None and not index.select_one("#case-table").has_attr("data-rows-src")
    assert not list((tmp_path / "site").glob("index-*.html")) and not list((tmp_path / "site").glob("assets/case-rows*"))


@pytest.mark.browser
def test_the_index_script_pages_filters_and_sorts_every_case(watched: Watched, site: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = watched.open(site / "index.html")
    expect(page.locator("#case-table")).to_have_class(re.compile(r"\bis-ready\b"))
    expect(page.locator("#case-pages")).to_be_hidden()  # the script pages through everything itself
    count = page.locator("#case-count")
    expect(count).to_have_text("All 25 cases.")
    page.fill("#filter-q", "case-23")
    rows = page.locator("#case-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.locator("a.case-link")).to_have_text("case-23")
    expect(rows.locator("a.case-link")).to_have_attribute("href", re.compile(r"^cases/case-23-"))
    page.click("#filter-reset")
    page.select_option("#filter-status", "failed")
    expect(count).to_have_text("9 matching cases (25 in all).")
    page.click("#filter-reset")
    expect(count).to_have_text("All 25 cases.")
    page.click("th[data-key=case] button")
    expect(page.locator("th[data-key=case]")).to_have_attribute("aria-sort", "ascending")
    page.click("th[data-key=case] button")
    expect(page.locator("#case-table tbody tr a.case-link").first).to_have_text("case-24")
    page.locator("#case-table tbody tr a.tag").first.click()
    expect(page).to_have_url(re.compile(r"tag=team%3A0"))
    # The script re-filters on hashchange, which fires after the click returns: wait for what it shows.
    expect(count).to_have_text("7 matching cases (25 in all).")
    watched.assert_clean()


@pytest.mark.browser
def test_a_case_page_shows_its_position_from_the_shared_data(watched: Watched, site: Path) -> None:  # noqa: F811
    target: Any = next((site / "cases").glob("case-23-*.html"))
    from playwright.sync_api import expect

    page = watched.open(target)
    expect(page.locator("[data-case-position]")).to_have_text("case 24 of 25")
    watched.assert_clean()
