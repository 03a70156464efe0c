"""The pages at 390 (phone), 768 and 1280 px, light and dark, checked by measurement in a real browser: nothing
wider than the screen outside a scroll container, no clipped badge, no chart label (legend, axis) cut, hidden or
outside its chart, drawn by plotly.js or as the static picture, no word broken inside (identifiers only after `_`
or `-`), a scrolling table keeps its first column in view; the phone index shows case, status, verdict and duration for every row; the evidence table says why a
tool is missing; the history table fits at 1280 px. Also the index's search over questions and answers, loaded
only when the search box is first used, and the tool-call timeline's failed calls and time axis."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import MEASURE, ROOT, Watched, case_page_file, new_context, open_settled, shipped_history, wait_until_ready
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

WIDTHS = [390, 768, 1280]
# Long names as CI gives them: a run id with the job's number and attempt, a full commit hash.
RUN_ID = "github-actions-run-12345678901-attempt-3"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def shipped_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped suite with seven earlier runs named as CI names them, each with its commit; the odd ones recorded
    trials (so the pass-rate chart has its band and legend) under a long label, the even ones named by a short one."""
    root = tmp_path_factory.mktemp("layout")
    baseline = ROOT / "eval" / "baseline" / "report.json"
    runs = shipped_history(json.loads(baseline.read_text(encoding="utf-8")), runs=7)
    for number, run in enumerate(runs, 1):
        run |= {"runId": f"{RUN_ID}-{number}", "label": f"nightly build {number} of the main branch", "commit": COMMIT}
        if number % 2:
            run |= {"trialPassRate": 0.6, "trialPassRateInterval": [0.45, 0.73], "totalTrials": 66}
        else:
            run["label"] = f"PR #{number}"
    history = root / "history.json"
    history.write_text(json.dumps(runs), encoding="utf-8")
    build_site(
        BuildOptions(
            cases=ROOT / "eval" / "cases" / "diagnosis-cases.json", fixtures=ROOT / "eval" / "fixtures", baseline=baseline,
            history=history, out=root / "site", run_id=RUN_ID, run_label=RUN_ID, cwd=root,
        )
    )
    return root / "site"


def _pages(site: Path) -> dict[str, Path]:
    return {
        "index": site / "index.html",
        "case": case_page_file(site, "kafka-consumer-lag"),  # a failed tool call, so a tool missing from the evidence
        "missing": case_page_file(site, "known-bad-composer-mode-missing"),  # long words in the badges
        "history": site / "history.html",
        "diff": site / "diff.html",
    }


def _open(browser: Any, path: Path, width: int, scheme: str = "light") -> tuple[Any, Any]:
    return open_settled(browser, path, width, scheme, draw_charts=True)


# Every label of a chart (plotly's or the static picture's: tick labels, axis titles, legend entries) drawn whole
# inside its chart's box: not hidden (plotly hides a tick label past its edge), not ending in "…".
CHART_LABELS = """() => [...document.querySelectorAll('[data-chart] svg text')].flatMap(text => {
  const words = text.textContent.trim();
  if (!words) return [];
  const box = text.getBoundingClientRect(), chart = text.closest('[data-chart]').getBoundingClientRect();
  const hidden = !box.width || getComputedStyle(text).display === 'none' || text.getAttribute('display') === 'none';
  const outside = box.left < chart.left - 1 || box.right > chart.right + 1 || box.top < chart.top - 1 || box.bottom > chart.bottom + 1;
  return hidden || outside || words.endsWith('…') ? [`"${words}" ${hidden ? 'hidden' : outside ? 'outside its chart' : 'cut'}`] : [];
})"""
# A line that ends between two letters or digits of one text: a word (or an identifier's part) broken inside. Code
# blocks (tool payloads, JSON) are left out: their long lines wrap anywhere on purpose.
BROKEN_WORDS = """() => {
  const broken = [], range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent, parent = node.parentElement;
    if (!/[A-Za-z0-9]{2}/.test(text) || !parent || parent.closest('svg, script, pre, [hidden]')) continue;
    if (!parent.checkVisibility()) continue;
    let before = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(node, i); range.setEnd(node, i + 1);
      const rects = range.getClientRects();
      const top = rects.length ? rects[0].top : null;
      if (top !== null && before !== null && top > before + 2 && /[A-Za-z0-9]{2}/.test(text[i - 1] + text[i])) {
        broken.push(text.slice(Math.max(0, i - 20), i) + '|' + text.slice(i, i + 20));
        break;
      }
      before = top;
    }
  }
  return broken;
}"""


@pytest.mark.parametrize(("width", "scheme"), [(390, "light"), (768, "light"), (1280, "light"), (390, "dark"), (1280, "dark")])
@pytest.mark.parametrize("name", ["index", "case", "missing", "history", "diff"])
def test_nothing_sticks_out_is_clipped_cut_or_broken_mid_word(browser: Any, shipped_site: Path, name: str, width: int, scheme: str) -> None:
    context, page = _open(browser, _pages(shipped_site)[name], width, scheme)
    found = page.evaluate(MEASURE)  # opens every <details>, so what they hold is measured too
    labels, broken = page.evaluate(CHART_LABELS), page.evaluate(BROKEN_WORDS)
    context.close()
    assert found["pageWidth"] <= found["width"], found["wide"][:10]
    assert found["wide"] == []
    assert found["clipped"] == []
    assert labels == []
    assert broken == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["index", "history"])
def test_the_charts_static_pictures_keep_every_label_whole_and_inside(browser: Any, shipped_site: Path, name: str, width: int) -> None:
    """Before plotly.js draws a chart (and without script) its picture shows: the same labels, whole, inside it."""
    context, page = open_settled(browser, _pages(shipped_site)[name], width)
    assert page.locator(".chart-picture").count() == page.locator("[data-chart]").count() > 0
    legend = page.locator(".chart-picture text", has_text="Trial pass rate, 95% interval")
    labels = page.evaluate(CHART_LABELS)
    has_legend = legend.count()
    context.close()
    assert labels == []
    assert has_legend == 1


# A table that scrolls keeps its first column in view: scrolled to its far end, every row's first cell is
# still inside the scrolling box, and the box says it scrolls (site.js marks it, the CSS draws the shadow).
FIRST_COLUMN = """() => [...document.querySelectorAll('.table-wrap')].filter(w => w.scrollWidth > w.clientWidth + 1).map(wrap => {
  wrap.scrollLeft = wrap.scrollWidth;
  const box = wrap.getBoundingClientRect();
  const firsts = [...wrap.querySelectorAll('tr')].map(tr => tr.cells[0].getBoundingClientRect());
  return {
    marked: wrap.classList.contains('is-scrollable') && wrap.getAttribute('tabindex') === '0',
    scrolled: wrap.scrollLeft > 0,
    inView: firsts.every(c => c.width > 0 && c.left >= box.left - 0.5 && c.right <= box.right + 0.5),
  };
})"""


@pytest.mark.parametrize(("width", "scheme"), [(390, "light"), (768, "light"), (390, "dark")])
def test_a_scrolling_table_keeps_its_first_column_in_view(browser: Any, shipped_site: Path, width: int, scheme: str) -> None:
    checked = 0
    for name in ("history", "case", "diff"):
        context, page = _open(browser, _pages(shipped_site)[name], width, scheme)
        tables = page.evaluate(FIRST_COLUMN)
        context.close()
        for table in tables:
            assert table == {"marked": True, "scrolled": True, "inView": True}, (name, table)
        checked += len(tables)
    if width == 390:
        assert checked, "no table scrolls at 390 px: the test measured nothing"


def test_phone_index_shows_case_status_verdict_and_duration_for_every_row(browser: Any, shipped_site: Path) -> None:
    context, page = _open(browser, shipped_site / "index.html", 390)
    rows = page.evaluate(
        """() => [...document.querySelectorAll('#case-table tbody tr')].map(tr => {
            const width = document.documentElement.clientWidth;
            const seen = (node) => { const b = node.getBoundingClientRect();
              return b.width > 0 && b.left >= -0.5 && b.right <= width + 0.5 && node.scrollWidth <= node.clientWidth + 1; };
            return [tr.querySelector('.case-link'), tr.cells[1].querySelector('.status'), tr.cells[2].querySelector('.verdict'), tr.cells[6]]
              .map(node => node !== null && seen(node));
        })"""
    )
    context.close()
    assert len(rows) == 22
    assert all(row == [True, True, True, True] for row in rows), rows


def test_phone_evidence_table_shows_why_a_tool_is_missing(browser: Any, shipped_site: Path) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, _pages(shipped_site)["case"], 390)
    missing = page.locator("#evidence td", has_text="missing")
    expect(missing).to_be_visible()
    box, cell_label = missing.bounding_box(), missing.evaluate("td => getComputedStyle(td, '::before').content")
    context.close()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert cell_label == '"Counts as evidence"'  # the column's name goes with the finding


def test_history_runs_table_fits_at_1280(browser: Any, shipped_site: Path) -> None:
    context, page = _open(browser, shipped_site / "history.html", 1280)
    fit = page.evaluate("() => { const w = document.querySelector('#runs .table-wrap'); return [w.scrollWidth, w.clientWidth]; }")
    headers = page.locator("#runs th").evaluate_all("ths => ths.map(th => th.scrollWidth <= th.clientWidth + 1)")
    context.close()
    assert fit[0] <= fit[1], fit
    assert all(headers)


def test_the_case_table_fits_at_1280(browser: Any, shipped_site: Path) -> None:
    # Seven columns and the change badges: the headers may wrap, the table does not scroll on a desktop screen.
    context, page = _open(browser, shipped_site / "index.html", 1280)
    fit = page.evaluate("() => { const w = document.querySelector('#case-table').closest('.table-wrap'); return [w.scrollWidth, w.clientWidth]; }")
    context.close()
    assert fit[0] <= fit[1], fit


@pytest.mark.parametrize("width", WIDTHS)
def test_headline_figures_line_up(browser: Any, shipped_site: Path, width: int) -> None:
    # A label that wraps ("AVG TOOL CALLS") must not push its figure below the others in the same row: the
    # figures stand on one line (their bottoms; the pass rate's figure is larger).
    context, page = _open(browser, shipped_site / "index.html", width)
    tops = page.locator(".stat").evaluate_all(
        "stats => stats.map(s => [Math.round(s.getBoundingClientRect().top), s.querySelector('.stat-value').getBoundingClientRect().bottom])"
    )
    context.close()
    rows: dict[int, list[float]] = {}
    for card_top, value_bottom in tops:
        rows.setdefault(card_top, []).append(value_bottom)
    assert any(len(values) > 1 for values in rows.values())
    for values in rows.values():
        assert max(values) - min(values) <= 1, tops


# The index's search over questions and answers


def test_search_text_loads_only_when_the_box_is_used_and_finds_answers(browser: Any, shipped_site: Path) -> None:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 900})
    watched = Watched(context.new_page())
    requested: list[str] = []
    watched.page.on("request", lambda request: requested.append(request.url))
    page = watched.open(shipped_site / "index.html")
    wait_until_ready(page)
    watched.assert_clean()  # idle: every script ran, every timer fired
    assert not [url for url in requested if "search-text" in url]
    # "积压" is in kafka-consumer-lag's question and answer, in no row of the table
    assert "积压" not in page.locator("#case-table").inner_text()
    page.fill("#filter-q", "积压")
    expect(page.locator("#case-table tbody a.case-link")).to_have_text(["kafka-consumer-lag"])
    expect(page.locator("#case-count")).to_have_text("The only matching case (22 in all).")
    page.fill("#filter-q", "")
    page.fill("#filter-q", "积压")
    expect(page.locator("#case-table tbody a.case-link")).to_have_text(["kafka-consumer-lag"])
    assert len([url for url in requested if url.endswith("/assets/search-text.js")]) == 1
    watched.assert_clean()
    context.close()


def test_a_search_in_the_url_loads_the_search_text(browser: Any, shipped_site: Path) -> None:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 900})
    watched = Watched(context.new_page())
    page = watched.open((shipped_site / "index.html").as_uri() + "#q=" + "%E7%A7%AF%E5%8E%8B")
    expect(page.locator("#filter-q")).to_have_value("积压")
    expect(page.locator("#case-table tbody a.case-link")).to_have_text(["kafka-consumer-lag"])
    watched.assert_clean()
    context.close()


# The tool-call timeline


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_failed_call_is_marked_by_colour_and_words(browser: Any, shipped_site: Path, scheme: str) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, _pages(shipped_site)["case"], 1280, scheme)
    failed = page.locator("#tools li.call-failed")
    expect(failed).to_have_count(1)
    expect(failed.locator(".call-head .mark")).to_have_text(re.compile(r"✗\s*failed"))
    expect(failed.locator("details").last.locator("pre")).to_be_visible()  # what a failed call returned, unfolded
    fills = page.evaluate(
        """() => ['.timeline > li:not(.call-failed) rect', '.call-failed rect'].map(s =>
             getComputedStyle(document.querySelector('#tools ' + s)).fill)"""
    )
    expect(page.locator("#tools .call-axis-labels span")).to_have_text(["0 ms", "4.5 s", "9.0 s", "13.5 s", "18.0 s"])
    axis, bars = page.evaluate(
        """() => [document.querySelector('#tools .call-axis-labels'), document.querySelector('#tools .timeline svg')]
             .map(n => { const b = n.getBoundingClientRect(); return [Math.round(b.left), Math.round(b.right)]; })"""
    )
    failed_bar = failed.locator("svg").bounding_box()
    context.close()
    assert fills[0] != fills[1], fills
    assert axis == bars  # the axis spans the bars exactly, so its labels read against them
    assert failed_bar is not None and [round(failed_bar["x"]), round(failed_bar["x"] + failed_bar["width"])] == bars
