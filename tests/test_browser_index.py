"""The index's script by what it does in a browser (not by site.js's hash in the golden FILES.txt): every filter,
sorting by each column both ways, paging, and the state kept in the URL fragment, as a reader uses them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from helpers import SITE_DATA, Watched, case_rows, make_case, make_trace, wait_until_ready, write_suite
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

HOSTILE = 'hostile <b>&amp; "quotes" 熔断'
HOSTILE_VERDICT = "</script><script>alert('verdict')</script>"
# tests/data/site/cases.json in file order (the table's order before any sorting).
IN_FILE_ORDER = ["pay-timeout", "db-pool", "reject-safety", "Missing Trace", "broken-json", HOSTILE, "new-case"]


def expect_rows(page: Any, ids: list[str]) -> None:
    """The table shows exactly these cases, in this order (waits until it does)."""
    from playwright.sync_api import expect

    if ids:
        expect(case_rows(page)).to_have_text(ids)
        expect(page.locator("#case-table tbody .empty-row")).to_have_count(0)
    else:
        expect(case_rows(page)).to_have_count(0)
        expect(page.locator("#case-table tbody .empty-row")).to_be_visible()


def hash_state(url: str) -> dict[str, str]:
    """The filter state a URL's fragment holds."""
    return dict(parse_qsl(url.partition("#")[2], keep_blank_values=True))


def expect_hash(page: Any, state: dict[str, str]) -> None:
    """Wait until the URL fragment holds exactly `state` (an empty one: no fragment at all)."""
    page.wait_for_url(lambda url: hash_state(url) == state and url.endswith("index.html") == (not state))


def open_index(watched: Watched, browser_site: Path, fragment: str = "") -> Any:
    """Load the index afresh (not a hash change of the page already open), with `fragment` in its URL."""
    watched.page.goto("about:blank")
    page = watched.open((browser_site / "index.html").as_uri() + fragment)
    wait_until_ready(page)
    return page


# Filters


# One page load per test, each control tried in turn: a page load (plotly included) is most of a test's time.
QUERIES = [
    ("db-pool", ["db-pool"]),  # an id
    ("支付接口超时", ["pay-timeout"]),  # a title
    ("domain:order", ["reject-safety"]),  # a tag
    ("fixture_invalid", ["broken-json"]),  # a failed check's code
    ("ＤＢ-POOL", ["db-pool"]),  # full-width and upper case: NFKC and case folding as the rules do
    ("run fixture_invalid", ["broken-json"]),  # every word must match (Missing Trace did not run either: fixture_missing)
    ("no such case at all", []),
]


def test_the_text_filter(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    expect_rows(page, IN_FILE_ORDER)
    for query, ids in QUERIES:
        page.fill("#filter-q", query)
        expect_rows(page, ids)
        expect_hash(page, {"q": query})
    page.fill("#filter-q", "")
    expect_rows(page, IN_FILE_ORDER)
    expect_hash(page, {})
    expect(page.locator("#case-count")).to_have_text("All 7 cases.")
    watched.assert_clean()


SELECTS = [
    ("#filter-status", "failed", "status", ["db-pool", HOSTILE, "new-case"]),
    ("#filter-status", "not_run", "status", ["Missing Trace", "broken-json"]),  # its trace is missing, or not JSON
    ("#filter-status", "passed", "status", ["pay-timeout", "reject-safety"]),
    ("#filter-verdict", "PASS", "verdict", ["pay-timeout", "new-case"]),
    ("#filter-verdict", "MISSING", "verdict", ["Missing Trace", "broken-json"]),
    ("#filter-verdict", HOSTILE_VERDICT, "verdict", [HOSTILE]),
    ("#filter-tag", "known-failure", "tag", ["Missing Trace", "broken-json"]),
    ("#filter-tag", "domain:order", "tag", ["reject-safety"]),
    ("#filter-code", "verdict_not_allowed", "code", ["db-pool", HOSTILE]),
    ("#filter-code", "fixture_missing", "code", ["Missing Trace"]),
]


def test_a_count_of_the_failures_by_rule_panel_filters_the_table(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    page.locator('#rules tr[data-code="verdict_not_allowed"] a.rule-count').click()
    expect_rows(page, ["db-pool", HOSTILE])
    expect(page.locator("#filter-code")).to_have_value("verdict_not_allowed")
    expect_hash(page, {"code": "verdict_not_allowed"})
    page.locator('#rules tr[data-code="missing_evidence_tool"] a.rule-count').click()
    expect_rows(page, ["new-case"])
    expect_hash(page, {"code": "missing_evidence_tool"})
    watched.assert_clean()


def test_each_select_filters_and_is_kept_in_the_url(watched: Watched, browser_site: Path) -> None:
    page = open_index(watched, browser_site)
    for control, value, key, ids in SELECTS:
        page.select_option(control, value)
        expect_rows(page, ids)
        expect_hash(page, {key: value})
        page.click("#filter-reset")
        expect_rows(page, IN_FILE_ORDER)
        expect_hash(page, {})
    watched.assert_clean()


def test_the_flaky_filter_and_combined_filters(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    page.check("#filter-flaky")
    expect_rows(page, ["db-pool"])
    expect_hash(page, {"flaky": "1"})
    page.uncheck("#filter-flaky")
    expect_rows(page, IN_FILE_ORDER)
    page.select_option("#filter-status", "failed")
    page.select_option("#filter-verdict", "PASS")
    expect_rows(page, ["new-case"])
    expect_hash(page, {"status": "failed", "verdict": "PASS"})
    page.select_option("#filter-verdict", "REJECT")
    expect_rows(page, [])
    expect(page.locator("#case-count")).to_have_text("No case matches (7 in all).")
    page.click("#filter-reset")
    expect_rows(page, IN_FILE_ORDER)
    expect(page.locator("#filter-status")).to_have_value("")
    expect(page.locator("#filter-verdict")).to_have_value("")
    expect_hash(page, {})
    watched.assert_clean()


# Sorting

# Failing since, ascending: the hostile case and new-case first ran now (this run or earlier); db-pool passed the run
# before; last the cases that are not failing — passing, or not evaluated (Missing Trace, broken-json).
SINCE_SORTED = (
    [HOSTILE, "new-case", "db-pool", "pay-timeout", "reject-safety", "Missing Trace", "broken-json"],
    ["pay-timeout", "reject-safety", "Missing Trace", "broken-json", "db-pool", HOSTILE, "new-case"],
)

# Each sortable column, ascending then descending; equal keys keep the file's order in both directions.
SORTED = {
    "case": (
        ["broken-json", "db-pool", HOSTILE, "Missing Trace", "new-case", "pay-timeout", "reject-safety"],
        ["reject-safety", "pay-timeout", "new-case", "Missing Trace", HOSTILE, "db-pool", "broken-json"],
    ),
    "status": (  # failed, not run, passed
        ["db-pool", HOSTILE, "new-case", "Missing Trace", "broken-json", "pay-timeout", "reject-safety"],
        ["pay-timeout", "reject-safety", "Missing Trace", "broken-json", "db-pool", HOSTILE, "new-case"],
    ),
    "verdict": (  # the hostile verdict starts with "<", before the letters
        [HOSTILE, "db-pool", "Missing Trace", "broken-json", "pay-timeout", "new-case", "reject-safety"],
        ["reject-safety", "pay-timeout", "new-case", "Missing Trace", "broken-json", "db-pool", HOSTILE],
    ),
    "checks": (  # no failed check first; "verdict_not_allowed" before "verdict_not_allowed, keyword_coverage, …"
        ["pay-timeout", "reject-safety", "broken-json", "Missing Trace", "new-case", HOSTILE, "db-pool"],
        ["db-pool", HOSTILE, "new-case", "Missing Trace", "broken-json", "pay-timeout", "reject-safety"],
    ),
    "keywords": (  # matched/required: db-pool 1/3, every other case all (or none required)
        ["db-pool", "pay-timeout", "reject-safety", "Missing Trace", "broken-json", HOSTILE, "new-case"],
        ["pay-timeout", "reject-safety", "Missing Trace", "broken-json", HOSTILE, "new-case", "db-pool"],
    ),
    "tools": (  # 0, 0, 1, 1, 2, 2, 3 tool calls
        ["Missing Trace", "broken-json", "reject-safety", "new-case", "db-pool", HOSTILE, "pay-timeout"],
        ["pay-timeout", "db-pool", HOSTILE, "reject-safety", "new-case", "Missing Trace", "broken-json"],
    ),
    "duration": (  # no duration (not run, unreadable trace) sorts as the shortest
        ["Missing Trace", "broken-json", "new-case", HOSTILE, "reject-safety", "pay-timeout", "db-pool"],
        ["db-pool", "pay-timeout", "reject-safety", HOSTILE, "new-case", "Missing Trace", "broken-json"],
    ),
    "since": SINCE_SORTED,
}


def test_sorting_each_column_both_ways(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    headers = page.locator("th[data-key]")
    expect(headers).to_have_count(len(SORTED))
    expect(page.locator("th[aria-sort]")).to_have_count(0)
    for column, (ascending, descending) in SORTED.items():
        header = page.locator(f"th[data-key='{column}']")
        header.locator("button").click()  # a column not sorted by yet: ascending first
        expect(header).to_have_attribute("aria-sort", "ascending")
        expect(page.locator("th[aria-sort]")).to_have_count(1)  # the column sorted by before is no longer marked
        expect_rows(page, ascending)
        expect_hash(page, {"sort": column, "dir": "asc"})
        header.locator("button").click()
        expect(header).to_have_attribute("aria-sort", "descending")
        expect_rows(page, descending)
        expect_hash(page, {"sort": column, "dir": "desc"})
    watched.assert_clean()


def test_sorting_applies_to_the_filtered_rows(watched: Watched, browser_site: Path) -> None:
    page = open_index(watched, browser_site)
    page.select_option("#filter-status", "failed")
    page.locator("th[data-key='duration'] button").click()
    page.locator("th[data-key='duration'] button").click()
    expect_rows(page, ["db-pool", HOSTILE, "new-case"])
    expect_hash(page, {"status": "failed", "sort": "duration", "dir": "desc"})
    watched.assert_clean()


# The URL


def test_a_url_with_filter_state_restores_the_controls_and_the_table(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site, "#status=not_run&verdict=MISSING&q=json&sort=case&dir=desc")
    expect(page.locator("#filter-status")).to_have_value("not_run")
    expect(page.locator("#filter-verdict")).to_have_value("MISSING")
    expect(page.locator("#filter-q")).to_have_value("json")
    expect(page.locator("th[data-key='case']")).to_have_attribute("aria-sort", "descending")
    expect_rows(page, ["broken-json"])
    page = open_index(watched, browser_site, "#tag=known-failure&sort=case&dir=desc")
    expect(page.locator("#filter-tag")).to_have_value("known-failure")
    expect(page.locator("#filter-status")).to_have_value("")
    expect_rows(page, ["Missing Trace", "broken-json"])
    page = open_index(watched, browser_site, "#flaky=1")
    expect(page.locator("#filter-flaky")).to_be_checked()
    expect_rows(page, ["db-pool"])
    watched.assert_clean()


def test_a_plain_anchor_is_not_filter_state(watched: Watched, browser_site: Path) -> None:
    page = open_index(watched, browser_site, "#cases")
    expect_rows(page, IN_FILE_ORDER)
    watched.assert_clean()


def test_a_hash_change_updates_the_controls_and_the_table(watched: Watched, browser_site: Path) -> None:
    """Another fragment on the same page (a link, an edited address): no reload, the script follows it."""
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    page.fill("#filter-q", "db-pool")
    expect_rows(page, ["db-pool"])
    page.goto((browser_site / "index.html").as_uri() + "#status=passed&sort=tools&dir=desc")  # same document: hashchange
    expect(page.locator("#filter-q")).to_have_value("")
    expect(page.locator("#filter-status")).to_have_value("passed")
    expect(page.locator("th[data-key='tools']")).to_have_attribute("aria-sort", "descending")
    expect_rows(page, ["pay-timeout", "reject-safety"])
    page.locator("#case-table tbody a.tag", has_text="matrix:reject-safety").click()  # a tag chip in a row
    expect(page.locator("#filter-tag")).to_have_value("matrix:reject-safety")
    expect(page.locator("#filter-status")).to_have_value("")
    expect(page.locator("th[data-key='tools']")).not_to_have_attribute("aria-sort", re.compile(".*"))
    expect_rows(page, ["reject-safety"])
    watched.assert_clean()


def test_back_after_a_tag_chip_restores_the_filters_before_it(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    page.select_option("#filter-status", "failed")
    expect_hash(page, {"status": "failed"})
    page.locator("#case-table tbody a.tag", has_text="domain:account").click()
    expect_rows(page, ["db-pool"])
    expect_hash(page, {"tag": "domain:account"})
    page.go_back()
    expect_hash(page, {"status": "failed"})
    expect(page.locator("#filter-status")).to_have_value("failed")
    expect(page.locator("#filter-tag")).to_have_value("")
    expect_rows(page, ["db-pool", HOSTILE, "new-case"])
    watched.assert_clean()


def test_back_after_a_tag_chip_restores_the_unfiltered_index(watched: Watched, browser_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, browser_site)
    page.locator("#case-table tbody a.tag", has_text="known-failure").first.click()  # two rows carry it
    expect_rows(page, ["Missing Trace", "broken-json"])
    page.go_back()
    expect_hash(page, {})
    expect(page.locator("#filter-tag")).to_have_value("")
    expect_rows(page, IN_FILE_ORDER)


@pytest.fixture(scope="module")
def paged_history_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The browser site with a case list in static pages of three rows: the index's script reads compact data."""
    root = tmp_path_factory.mktemp("paged-history")
    # The suite's four runs, the hostile case a known failure failing in every one of them.
    runs = json.loads((SITE_DATA / "history.json").read_text(encoding="utf-8"))
    for run in runs:
        run["cases"][HOSTILE] = False
    (root / "history.json").write_text(json.dumps(runs), encoding="utf-8")
    data = {name: SITE_DATA / f"{name}.json" for name in ("cases", "baseline")}
    build_site(BuildOptions(**data, history=root / "history.json", fixtures=SITE_DATA / "fixtures", out=root / "site",
                            run_id="browser", cwd=root, index_page_rows=3))  # fmt: skip
    return root / "site"


# Failing since in that site: the hostile case since its first recorded run, the rest as above.
PAGED_SINCE_SORTED = (
    [HOSTILE, "new-case", "db-pool", "pay-timeout", "reject-safety", "Missing Trace", "broken-json"],
    ["pay-timeout", "reject-safety", "Missing Trace", "broken-json", "db-pool", "new-case", HOSTILE],
)


def test_sorting_by_failing_since_from_the_url_and_the_compact_rows(watched: Watched, paged_history_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, paged_history_site, "#sort=since&dir=asc")
    header = page.locator("th[data-key='since']")
    expect(header).to_have_attribute("aria-sort", "ascending")
    expect_rows(page, PAGED_SINCE_SORTED[0])
    cells = page.locator("#case-table tbody td.since-col")
    expect(cells.first).to_have_text("4 runs ago or earlier nightly 1 · 0000000 · 2023-10-01")
    expect(cells.nth(2)).to_have_text("this run")  # db-pool passed the run before
    expect(cells.nth(3)).to_have_text("")  # passing
    expect(cells.nth(6)).to_have_text("")  # could not be evaluated: not failing since any run
    header.locator("button").click()
    expect(header).to_have_attribute("aria-sort", "descending")
    expect_rows(page, PAGED_SINCE_SORTED[1])
    expect_hash(page, {"sort": "since", "dir": "desc"})
    page.fill("#filter-q", "runs ago or earlier")  # the search looks in the cell's words too
    expect_rows(page, [HOSTILE])
    watched.assert_clean()


# Paging

PAGED = 250  # two and a half pages of 100 rows


@pytest.fixture(scope="module")
def long_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("paged")
    cases = [make_case(id=f"case-{i:03d}", traceFixture=f"t{i}.json", expectedRootCauseKeywords=["ok"]) for i in range(PAGED)]
    traces = {f"t{i}.json": make_trace("ok" if i % 3 else "nope") for i in range(PAGED)}
    cases_path, fixtures = write_suite(root / "big", cases, traces)
    build_site(BuildOptions(cases=cases_path, fixtures=fixtures, out=root / "site", cwd=root, baseline=None))
    return root / "site"


def _ids(numbers: range) -> list[str]:
    return [f"case-{i:03d}" for i in numbers]


def test_long_tables_are_paged(watched: Watched, long_site: Path) -> None:
    from playwright.sync_api import expect

    # every case is linked in the HTML itself, the script only pages through them
    assert (long_site / "index.html").read_text(encoding="utf-8").count('class="case-link"') == PAGED
    page = open_index(watched, long_site)
    info, prev, following = page.locator("#page-info"), page.locator("#page-prev"), page.locator("#page-next")
    expect_rows(page, _ids(range(100)))
    expect(info).to_have_text("Page 1 of 3")
    expect(prev).to_be_disabled()
    following.click()
    expect_rows(page, _ids(range(100, 200)))
    expect(info).to_have_text("Page 2 of 3")
    expect(page.locator("#case-count")).to_have_text("Showing 101–200 of 250 cases.")
    expect_hash(page, {"page": "2"})
    following.click()
    expect_rows(page, _ids(range(200, 250)))
    expect(following).to_be_disabled()
    prev.click()
    expect_rows(page, _ids(range(100, 200)))
    page.reload()
    wait_until_ready(page)
    expect_rows(page, _ids(range(100, 200)))
    page.select_option("#filter-status", "failed")  # a filter starts again at page 1
    expect_rows(page, _ids(range(0, PAGED, 3)))
    expect(page.locator("#case-pager")).to_be_hidden()
    expect_hash(page, {"status": "failed"})
    watched.assert_clean()


def test_the_rule_panel_filters_a_long_list_across_its_pages(watched: Watched, long_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, long_site)
    failing = [f"case-{i:03d}" for i in range(0, PAGED, 3)]  # the traces answering "nope"
    link = page.locator('#rules tr[data-code="keyword_coverage"] a.rule-count')
    expect(link).to_have_text(f"{len(failing)}")
    link.click()
    expect_rows(page, failing[:100])
    expect(page.locator("#page-info")).to_have_text("Page 1 of 1")
    expect_hash(page, {"code": "keyword_coverage"})
    watched.assert_clean()


def test_sorting_starts_again_at_the_first_page(watched: Watched, long_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, long_site, "#page=2")
    expect_rows(page, _ids(range(100, 200)))
    page.locator("th[data-key='case'] button").click()
    page.locator("th[data-key='case'] button").click()
    expect_rows(page, _ids(range(249, 149, -1)))
    expect(page.locator("#page-info")).to_have_text("Page 1 of 3")
    expect_hash(page, {"sort": "case", "dir": "desc"})
    watched.assert_clean()


def test_a_page_past_the_end_shows_the_last_one(watched: Watched, long_site: Path) -> None:
    from playwright.sync_api import expect

    page = open_index(watched, long_site, "#page=9")
    expect_rows(page, _ids(range(200, 250)))
    expect(page.locator("#page-info")).to_have_text("Page 3 of 3")
    watched.assert_clean()
