"""plotly.js loaded late: every chart is a static picture until the reader moves, then the partial bundle draws it
from file:// and over HTTP; the index works before plotly.js has arrived (and without it), and a page whose charts
are out of sight does not load it."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import Watched, case_rows, new_context, wait_until_ready, wake_charts, whole_plotly_js
from sitegen.site.preview.server import make_server

pytestmark = pytest.mark.browser

PLOTLY = "**/assets/plotly-*.min.js"


@pytest.fixture
def served(site: Path) -> Iterator[str]:  # noqa: F811 - site is a fixture
    """The test site over HTTP on 127.0.0.1 (sitegen serve's server): its base URL."""
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.url
    server.shutdown()
    server.server_close()


def expect_charts_drawn(page: Any, count: int) -> None:
    """Each of the page's `count` charts has its plot's SVG (scrolled to first: charts draw when near the viewport)."""
    from playwright.sync_api import expect

    charts = page.locator("[data-chart]")
    expect(charts).to_have_count(count)
    wake_charts(page)
    for index in range(count):
        charts.nth(index).scroll_into_view_if_needed()
        expect(charts.nth(index).locator("svg.main-svg").first).to_be_attached()


@pytest.mark.parametrize("name", ["index.html", "history.html"])
@pytest.mark.parametrize("scheme", ["file", "http"])
def test_the_partial_bundle_draws_every_chart(browser: Any, site: Path, served: str, name: str, scheme: str) -> None:  # noqa: F811
    context = new_context(browser, viewport={"width": 390, "height": 844})
    try:
        watched = Watched(context.new_page())
        page = watched.open((site / name).as_uri() if scheme == "file" else served + name)
        expect_charts_drawn(page, 3)
        watched.assert_clean(allowed_origin=None if scheme == "file" else served)
    finally:
        context.close()


def settled_screenshot(locator: Any, attempts: int = 8) -> bytes:
    """A screenshot once two in a row are the same: plotly lays a chart out again after drawing it (its responsive
    resize), so the first picture after the chart appears may be caught in between."""
    last = locator.screenshot(animations="disabled")
    for _ in range(attempts):
        shot = locator.screenshot(animations="disabled")
        if shot == last:
            return shot
        last = shot
    return last


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_partial_bundle_draws_what_the_whole_plotly_js_draws(browser: Any, site: Path, tmp_path: Path, scheme: str) -> None:  # noqa: F811
    """The same charts, pixel for pixel: the site as built, and a copy of it given plotly.py's whole plotly.js."""
    whole = tmp_path / "whole"
    shutil.copytree(site, whole)
    bundle = next((whole / "assets").glob("plotly-*.min.js"))
    bundle.write_bytes(whole_plotly_js())
    context = new_context(browser, viewport={"width": 1280, "height": 1400}, color_scheme=scheme)
    try:
        page = context.new_page()
        for name in ("index.html", "history.html"):
            shots = []
            for root in (site, whole):
                page.goto((root / name).as_uri())
                expect_charts_drawn(page, 3)
                page.mouse.move(0, 0)  # no hover label
                # The plots themselves, not their cards: a card under the pointer (at 0, 0 once a screenshot has
                # scrolled the charts to the top) is drawn with its hover border.
                charts = page.locator("[data-chart]")
                shots.append([settled_screenshot(charts.nth(index)) for index in range(charts.count())])
            assert shots[0] == shots[1], f"{name} ({scheme}): the partial bundle draws other charts than the whole plotly.js"
    finally:
        context.close()


def test_the_index_works_before_plotly_has_loaded(browser: Any, served: str) -> None:
    """plotly.js held back: the headline, the figures and the case table with its filters work; then it draws."""
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        held: list[Any] = []
        page.route(PLOTLY, lambda route: held.append(route))  # neither continued nor answered: it waits
        page.goto(served + "index.html")
        wait_until_ready(page)
        with page.expect_request(PLOTLY):
            wake_charts(page)
        expect(page.locator("#headline .headline-text")).to_be_visible()
        expect(page.locator("#summary .stat-value").first).to_be_visible()
        page.fill("#filter-q", "reject")
        expect(case_rows(page)).to_have_text(["reject-safety"])
        page.fill("#filter-q", "")
        page.select_option("#filter-status", "failed")
        expect(page.locator("#case-table tbody tr:not(.empty-row)").first).to_be_visible()
        expect(page.locator("#case-count")).not_to_be_empty()
        expect(page.locator(".js-plotly-plot")).to_have_count(0)  # not one chart drawn meanwhile
        assert len(held) == 1, "plotly.js was asked for more than once"
        held[0].continue_()
        expect_charts_drawn(page, 3)
    finally:
        context.close()


def test_without_plotly_the_charts_say_so_and_keep_their_data(browser: Any, served: str) -> None:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.route(PLOTLY, lambda route: route.abort())
        page.goto(served + "history.html")
        wake_charts(page)
        notes = page.locator(".chart-failed")
        expect(notes).to_have_count(3)
        expect(notes.first).to_contain_text("the picture above stays, and its data is in the table below")
        expect(page.locator("[data-chart] svg.chart-picture").first).to_be_visible()
        page.locator(".chart-data summary").first.click()
        expect(page.locator(".chart-data table").first).to_be_visible()
    finally:
        context.close()


def test_charts_out_of_sight_do_not_load_plotly_until_scrolled_to(browser: Any, site: Path) -> None:  # noqa: F811
    """A window too short to show the index's charts: plotly.js is asked for only when they near the viewport."""
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 120})
    try:
        watched = Watched(context.new_page())
        asked: list[str] = []
        watched.page.on("request", lambda request: asked.append(request.url) if "/plotly-" in request.url else None)
        page = watched.open(site / "index.html")
        wait_until_ready(page)
        wake_charts(page)
        top = page.locator("#charts").bounding_box()
        assert top is not None and top["y"] > 120 + 200  # further down than the observer's margin
        watched.assert_clean()  # idle, its timers run: still nothing asked for
        assert asked == []
        expect(page.locator(".js-plotly-plot")).to_have_count(0)
        expect_charts_drawn(page, 3)
        assert len(asked) == 1
        watched.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize("name", ["index.html", "history.html"])
def test_until_the_reader_moves_the_charts_are_pictures_and_plotly_is_not_loaded(browser: Any, site: Path, name: str) -> None:  # noqa: F811
    """A facade, as Lighthouse advises for a heavy widget: the page shows each chart as its static SVG picture
    (pages/chartsvg.py) at once, with its axes and values; plotly.js comes on the reader's first move."""
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 390, "height": 844})
    try:
        watched = Watched(context.new_page())
        asked: list[str] = []
        watched.page.on("request", lambda request: asked.append(request.url) if "/plotly-" in request.url else None)
        page = watched.open(site / name)
        pictures = page.locator("[data-chart] svg.chart-picture")
        expect(pictures).to_have_count(3)
        expect(pictures.first).to_be_visible()
        box = pictures.first.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 150
        expect(pictures.first.locator("text.tick").first).to_be_visible()
        watched.assert_clean()  # idle, its timers run: still nothing asked for
        assert asked == []
        expect(page.locator(".js-plotly-plot")).to_have_count(0)
        expect_charts_drawn(page, 3)
        expect(page.locator("svg.chart-picture")).to_have_count(0)  # each picture gave way to its chart
        assert len(asked) == 1
        watched.assert_clean()
    finally:
        context.close()
