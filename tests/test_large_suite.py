"""A long case list: static pages of BuildOptions.index_page_rows rows linked from the index (every case page reachable in
plain HTML), compact data for the index's script, which filters, sorts and pages every case in a browser."""

from __future__ import annotations

import json
import re
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from helpers import Watched, assert_inert, check_links, make_case, make_trace, new_context, wait_until_ready, write_suite
from site_audit import case_rows_data
from sitegen.errors import UsageError
from sitegen.site.pipeline import BuildOptions, build_site
from sitegen.site.preview.server import make_server

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


def test_the_rows_asset_holds_hostile_text_as_inert_escaped_json(tmp_path: Path) -> None:
    hostile = "</script><script>alert(1)</script> & \u2028\u2029 <!--"
    cases = [make_case(id=f"h{i}", title=hostile, tags=["</script>"], traceFixture="t.json") for i in range(3)]
    write_suite(tmp_path, cases, {"t.json": make_trace("x")})
    build_site(BuildOptions(cases=tmp_path / "cases.json", fixtures=tmp_path / "fixtures", out=tmp_path / "site",
                            cwd=tmp_path, index_page_rows=1))  # fmt: skip
    data = case_rows_data(tmp_path / "site")  # escaped: no <, >, &, U+2028 or U+2029 left in the script
    assert [row[2] for row in data["rows"]] == [hostile] * 3 and data["rows"][0][3] == ["</script>"]
    assert_inert(tmp_path / "site")


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
    count = page.locator("#case-count")
    expect(count).to_have_text("Showing 1–10 of 25 cases.")  # the page's own rows until a control is used
    expect(page.locator("#case-pages")).to_be_visible()
    page.fill("#filter-q", "case-23")
    expect(page.locator("#case-pages")).to_be_hidden()  # the script pages through everything itself
    rows = page.locator("#case-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.locator("a.case-link")).to_have_text("case-23")
    expect(rows.locator("a.case-link")).to_have_attribute("href", re.compile(r"^cases/case-23-"))
    page.click("#filter-reset")
    page.select_option("#filter-status", "failed")
    expect(count).to_have_text("9 matching cases (25 in all).")
    page.click("#filter-reset")
    expect(count).to_have_text("All 25 cases.")
    expect(page.locator("#case-table tbody tr")).to_have_count(COUNT)
    page.click("th[data-key=case] button")
    expect(page.locator("th[data-key=case]")).to_have_attribute("aria-sort", "ascending")
    page.click("th[data-key=case] button")
    expect(page.locator("#case-table tbody tr a.case-link").first).to_have_text("case-24")
    page.locator("#case-table tbody tr a.tag").first.click()
    expect(page).to_have_url(re.compile(r"tag=team%3A0"))
    # The script re-filters on hashchange, which fires after the click returns: wait for what it shows.
    expect(count).to_have_text("7 matching cases (25 in all).")
    watched.assert_clean()


def _rows_requests(page: Any) -> list[str]:
    """The requests of the rows' asset the page makes from now on (a list that fills as they are made)."""
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/assets/case-rows-" in request.url else None)
    return asked


@pytest.mark.browser
def test_the_index_loads_its_rows_data_only_when_a_control_is_used(watched: Watched, site: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    asked = _rows_requests(watched.page)
    page = watched.open(site / "index.html")
    expect(page.locator("#case-table")).to_have_class(re.compile(r"\bis-ready\b"))
    expect(page.locator("#case-count")).to_have_text("Showing 1–10 of 25 cases.")
    expect(page.locator("#case-table tbody tr")).to_have_count(ROWS)
    expect(page.locator("#case-pages a")).to_have_count(2)
    expect(page.locator("#case-pager")).to_be_hidden()
    watched.assert_clean()  # idle: every timer run, no request pending
    assert asked == [] and page.evaluate("window.SITEGEN_CASE_ROWS") is None
    with page.expect_request("**/assets/case-rows-*.js"):
        page.click("th[data-key=case] button")
    expect(page.locator("#case-count")).to_have_text("All 25 cases.")
    page.click("th[data-key=case] button")
    expect(page.locator("#case-table tbody tr a.case-link").first).to_have_text("case-24")
    page.select_option("#filter-status", "failed")
    expect(page.locator("#case-count")).to_have_text("9 matching cases (25 in all).")
    assert len(asked) == 1  # loaded once
    watched.assert_clean()


@pytest.mark.browser
def test_an_index_with_more_rows_than_a_script_page_shows_the_first_and_its_next_loads_the_rest(
    watched: Watched, tmp_path: Path  # noqa: F811
) -> None:
    from playwright.sync_api import expect

    cases = [make_case(id=f"long-{i:03d}", traceFixture="t.json") for i in range(120)]
    write_suite(tmp_path, cases, {"t.json": make_trace("x")})
    build_site(BuildOptions(cases=tmp_path / "cases.json", fixtures=tmp_path / "fixtures", out=tmp_path / "site",
                            cwd=tmp_path, index_page_rows=110))  # fmt: skip
    asked = _rows_requests(watched.page)
    page = watched.open(tmp_path / "site" / "index.html")
    wait_until_ready(page)
    # As the script's first page: 100 of the page's 110 rows, its pager, the static pages' links hidden.
    expect(page.locator("#case-count")).to_have_text("Showing 1–100 of 120 cases.")
    expect(page.locator("#case-table tbody tr")).to_have_count(100)
    expect(page.locator("#page-info")).to_have_text("Page 1 of 2")
    expect(page.locator("#case-pages")).to_be_hidden()
    expect(page.locator("#page-prev")).to_be_disabled()
    assert asked == []
    page.click("#page-next")
    expect(page.locator("#case-count")).to_have_text("Showing 101–120 of 120 cases.")
    expect(page.locator("#case-table tbody tr a.case-link")).to_have_count(20)
    expect(page.locator("#case-table tbody tr a.case-link").first).to_have_text("long-100")
    expect(page.locator("#page-info")).to_have_text("Page 2 of 2")
    assert len(asked) == 1
    watched.assert_clean()


@pytest.mark.browser
def test_a_filter_chosen_before_the_rows_data_arrives_applies_when_it_does(browser: Any, site: Path) -> None:
    from playwright.sync_api import expect

    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = new_context(browser, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        held: list[Any] = []
        page.route("**/assets/case-rows-*.js", lambda route: held.append(route))  # it waits until continued
        page.goto(server.url + "index.html")
        wait_until_ready(page)
        page.select_option("#filter-status", "failed")
        count = page.locator("#case-count")
        expect(count).to_have_text("Loading all 25 cases…")
        expect(page.locator("#case-pages")).to_be_visible()  # still the static list meanwhile
        page.check("#filter-flaky")
        page.uncheck("#filter-flaky")
        assert len(held) == 1  # asked once however many controls were used
        held[0].continue_()
        expect(count).to_have_text("9 matching cases (25 in all).")
        expect(page.locator("#case-pages")).to_be_hidden()
        expect(page).to_have_url(re.compile(r"#status=failed$"))
    finally:
        context.close()
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_the_search_box_and_a_hash_change_load_the_rows_data(watched: Watched, site: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = watched.open(site / "index.html")
    wait_until_ready(page)
    with page.expect_request("**/assets/case-rows-*.js"):
        page.focus("#filter-q")  # a focus is enough: the data comes while the reader types
    page.keyboard.type("case-2")
    expect(page.locator("#case-count")).to_have_text("5 matching cases (25 in all).")
    fresh = watched.page.context.new_page()  # a tab where the table is still the page's own rows
    fresh.goto((site / "index.html").as_uri())
    wait_until_ready(fresh)
    expect(fresh.locator("#case-count")).to_have_text("Showing 1–10 of 25 cases.")
    fresh.evaluate("location.hash = 'tag=team%3A1'")  # as Back or Forward to a filtered state does
    expect(fresh.locator("#case-count")).to_have_text("6 matching cases (25 in all).")
    expect(fresh.locator("#filter-tag")).to_have_value("team:1")
    fresh.go_back()
    expect(fresh.locator("#case-count")).to_have_text("All 25 cases.")
    fresh.close()
    watched.assert_clean()


@pytest.mark.browser
def test_a_filtered_link_opened_directly_loads_the_rows_and_filters(watched: Watched, site: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = watched.open((site / "index.html").as_uri() + "#status=failed&sort=case&dir=desc")
    expect(page.locator("#case-count")).to_have_text("9 matching cases (25 in all).")
    expect(page.locator("#filter-status")).to_have_value("failed")
    expect(page.locator("#case-table tbody tr a.case-link").first).to_have_text("case-24")
    expect(page.locator("#case-pages")).to_be_hidden()
    watched.assert_clean()


@pytest.mark.browser
def test_without_its_rows_data_the_index_keeps_its_own_rows_and_says_so(watched: Watched, tmp_path: Path, site: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect

    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    src = soup(copy / "index.html").select_one("#case-table")["data-rows-src"]
    (copy / src).unlink()  # a site copied without its rows' asset
    page = watched.open(copy / "index.html")
    wait_until_ready(page)
    expect(page.locator("#case-count")).to_have_text("Showing 1–10 of 25 cases.")
    page.select_option("#filter-status", "failed")
    count = page.locator("#case-count")
    expect(count).to_contain_text(f"The list of every case ({src}) could not be loaded")
    expect(count).to_contain_text("the filters cover this page's 10 cases; the pages below list all 25.")
    expect(page.locator("#case-pages")).to_be_visible()
    expect(page.locator("#case-table tbody tr")).to_have_count(4)  # this page's failing cases
    page.locator("#cases").screenshot(path=str(tmp_path / "rows-missing.png"))
    watched.errors = [e for e in watched.errors if "ERR_FILE_NOT_FOUND" not in e]
    watched.assert_clean()


@pytest.mark.browser
def test_a_case_page_shows_its_position_from_the_shared_data(watched: Watched, site: Path) -> None:  # noqa: F811
    target: Any = next((site / "cases").glob("case-23-*.html"))
    from playwright.sync_api import expect

    page = watched.open(target)
    expect(page.locator("[data-case-position]")).to_have_text("case 24 of 25")
    watched.assert_clean()
