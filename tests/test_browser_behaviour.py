"""Marker `browser`: passing cases that behave differently in a real browser (tests/behaviour_suite.py), at 390 and
1280 px, light and dark: the banner names them on the first screen of the index, the Change filter narrows to them,
a case page's header says what changed, its aligned trajectory fits (a block per step on a phone, the two calls
side by side on a wide screen) with the first divergence marked, and axe-core (WCAG 2.2 A/AA) finds nothing.
`SITEGEN_SCREENSHOTS=DIR` saves the pages it looks at."""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from behaviour_suite import CHANGED, build_behaviour_site
from helpers import MEASURE, case_page_file, case_rows, new_context, settle

pytestmark = pytest.mark.browser

WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
VIEWS = [(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = build_behaviour_site(tmp_path_factory.mktemp("behaviour"))
    assert scenario.exit_code == 0
    return scenario.site


def _open(browser: Any, url: str, width: int, scheme: str) -> tuple[Any, Any]:
    context = new_context(browser, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(url)
    page.wait_for_load_state("load")
    assert settle(page) == [] and errors == [], errors
    return context, page


def _axe(page: Any, selector: str) -> list[dict[str, Any]]:
    script = resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")
    page.add_script_tag(content=script)
    result = page.evaluate(
        "([selector, tags]) => axe.run(selector, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        [selector, WCAG],
    )
    return [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]][:5]} for v in result["violations"]]


def _shoot(page: Any, name: str) -> None:
    folder = os.environ.get("SITEGEN_SCREENSHOTS")
    if folder and folder != "1":
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


@pytest.mark.parametrize(("width", "scheme"), VIEWS)
def test_the_banner_names_them_on_the_first_screen_and_the_filter_narrows_to_them(
    browser: Any, site: Path, width: int, scheme: str
) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, (site / "index.html").as_uri(), width, scheme)
    banner = page.locator("#headline")
    expect(banner).to_contain_text("6 passing cases behave differently: payment-timeout (answer ")
    box = banner.locator(".headline-text").bounding_box()
    assert box is not None and box["y"] < 900 and box["y"] + min(box["height"], 120) <= 900  # seen without scrolling
    assert _axe(page, "#headline") == []
    expect(page.locator("#case-table.is-ready")).to_be_visible()
    page.select_option("#filter-change", "changed")
    expect(case_rows(page)).to_have_text(_index_order(site))
    expect(page).to_have_url(re.compile(r"#change=changed$"))
    expect(page.locator("#case-table tbody tr").first.locator(".change")).to_have_text("Δ behaves differently")
    found = page.evaluate(MEASURE)
    assert found["pageWidth"] <= found["width"], found["wide"][:10]
    _shoot(page, f"index-{width}-{scheme}")
    context.close()


def _index_order(site: Path) -> list[str]:
    """The changed cases in the index's order (the case file's)."""
    import json

    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    return [result["caseId"] for result in report["results"] if result["caseId"] in CHANGED]


# Every view of the moved call and of the hostile inputs; one each of the rewrite and the input past its clip.
CHECKED = [(case_id, *view) for case_id in ("oom-restart", "matrix-composer-fallback") for view in VIEWS] + [
    ("payment-timeout", 390, "dark"), ("payment-timeout", 1280, "light"), ("db-connection-pool-exhaustion", 390, "light"),
]


@pytest.mark.parametrize(("case_id", "width", "scheme"), CHECKED)
def test_a_changed_case_page_fits_says_what_changed_and_axe_finds_nothing(
    browser: Any, site: Path, case_id: str, width: int, scheme: str
) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(site, case_id).as_uri(), width, scheme)
    statement = page.locator("#change .case-change-statement")
    expect(statement).to_contain_text("Still passing, but it behaves differently: ")
    box = statement.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900  # the header says it on the first screen
    expect(page.locator("#comparison #trajectory")).to_be_visible()
    found = page.evaluate(MEASURE)
    # Scoped to the header and the comparison: an answer's own Markdown table may be wider than a phone (it is
    # the Answer section's, shown as the trace has it).
    wide = page.evaluate(WIDE_IN, "#result, #comparison")
    assert wide == [] and found["clipped"] == [], wide[:10]
    assert _axe(page, "#result") == [] and _axe(page, "#comparison") == []
    _shoot(page, f"{case_id}-{width}-{scheme}")
    context.close()


WIDE_IN = """(selector) => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const node of [root, ...root.querySelectorAll('*')]) {
      const box = node.getBoundingClientRect();
      if (box.width && node.checkVisibility() && (box.right > width + 0.5 || box.left < -0.5)) {
        wide.push(node.tagName.toLowerCase() + '.' + String(node.className) + ' ' + Math.round(box.left) + '..' + Math.round(box.right));
      }
    }
  }
  return wide;
}"""


CELLS = """() => [...document.querySelectorAll('#comparison table.trajectory tr.step-first > *')].map(c => {
  const b = c.getBoundingClientRect(); return {left: Math.round(b.left), top: Math.round(b.top), width: b.width};
})"""


@pytest.mark.parametrize(("width", "scheme"), VIEWS)
def test_the_trajectory_is_a_block_per_step_on_a_phone_and_side_by_side_on_a_wide_screen(
    browser: Any, site: Path, width: int, scheme: str
) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(site, "oom-restart").as_uri(), width, scheme)
    first = page.locator("#comparison tr.step-first")
    expect(first).to_have_count(1)
    expect(first.locator(".first-mark")).to_be_visible()
    expect(first.locator(".first-mark")).to_have_text("first divergence")
    expect(first.locator("th")).to_contain_text("added now")
    step, before, after = page.evaluate(CELLS)
    if width >= 1000:
        assert step["top"] == before["top"] == after["top"] and before["left"] < after["left"]
    else:
        assert step["left"] == before["left"] == after["left"] and step["top"] < before["top"] < after["top"]
        label = page.evaluate(
            "() => getComputedStyle(document.querySelector('#comparison tr.step-first td'), '::before').content"
        )
        assert label == '"Baseline"'  # each cell says which side it is once the header row is gone
    context.close()


def test_an_input_diff_is_struck_through_and_underlined(browser: Any, site: Path) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(site, "matrix-composer-fallback").as_uri(), 1280, "light")
    row = page.locator("#comparison tr[data-step='input']").nth(1)
    expect(row.locator("del")).to_have_text(["then"])
    expect(row.locator("ins")).to_have_text(["now"])
    line = page.evaluate("() => getComputedStyle(document.querySelector(\"#comparison tr[data-step='input'] del\")).textDecorationLine")
    assert line == "line-through"
    context.close()
