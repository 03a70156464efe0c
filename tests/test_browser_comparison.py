"""The case page's comparison with the baseline in a real browser, at 390 and 1280 px, light and dark: nothing
sticks out, the answers sit side by side on a wide screen and one above the other on a phone, removed and
added text is visible and struck through / underlined (readable without colour) and named by generated text
for screen readers, a folded stretch opens, and axe-core (WCAG 2.2 A/AA rules) finds nothing in the section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from comparison_suite import build_comparison_site
from helpers import AXE_SCRIPT, MEASURE, case_page_file, new_context, settle

pytestmark = pytest.mark.browser

WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
VIEWS = [(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_comparison_site(tmp_path_factory.mktemp("comparison"))[0]


def _open(browser: Any, path: Path, width: int, scheme: str) -> tuple[Any, Any]:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    expect(page.locator("#comparison")).to_be_visible()
    assert settle(page) == [] and errors == [], errors
    return context, page


def _axe(page: Any, selector: str) -> list[dict[str, Any]]:
    """axe-core's violations of the WCAG 2.2 A/AA rules inside `selector` (helpers.AXE_SCRIPT, injected past the
    page's CSP)."""
    page.add_script_tag(path=str(AXE_SCRIPT))
    result = page.evaluate(
        "([selector, tags]) => axe.run(selector, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        [selector, WCAG],
    )
    return [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]][:5]} for v in result["violations"]]


# Every view of the regressed and the hostile case; one view each of the others (the machine is shared and slow).
CHECKED = [(case_id, *view) for case_id in ("pool-regressed", "hostile") for view in VIEWS] + [
    ("huge", 390, "light"), ("huge", 1280, "dark"), ("cjk", 390, "dark"), ("trials", 1280, "light"),
    ("trajectory", 390, "dark"), ("trajectory", 1280, "light"),
]


@pytest.mark.parametrize(("case_id", "width", "scheme"), CHECKED)
def test_the_comparison_fits_and_axe_finds_nothing(browser: Any, site: Path, case_id: str, width: int, scheme: str) -> None:
    context, page = _open(browser, case_page_file(site, case_id), width, scheme)
    found = page.evaluate(MEASURE)  # opens every <details>: a folded stretch must fit too
    assert found["pageWidth"] <= found["width"], found["wide"][:10]
    assert found["wide"] == [] and found["clipped"] == []
    assert _axe(page, "#comparison") == []
    context.close()


SIDES = """() => [...document.querySelectorAll('#comparison .compare-side')].map(s => {
  const b = s.getBoundingClientRect(); return {left: Math.round(b.left), top: Math.round(b.top), width: b.width};
})"""

RUN_STYLE = """(selector) => {
  const node = document.querySelector(selector);
  const style = getComputedStyle(node);
  const before = getComputedStyle(node, '::before');
  const box = node.getBoundingClientRect();
  return {line: style.textDecorationLine, width: box.width, height: box.height, before: before.content,
          beforeWidth: before.width, background: style.backgroundColor, color: style.color};
}"""


@pytest.mark.parametrize(("width", "scheme"), VIEWS)
def test_answers_side_by_side_on_wide_screens_stacked_on_phones(browser: Any, site: Path, width: int, scheme: str) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(site, "pool-regressed"), width, scheme)
    expect(page.locator("#comparison del").first).to_be_visible()
    expect(page.locator("#comparison .compare-side")).to_have_count(2)
    before, after = page.evaluate(SIDES)
    if width >= 1000:
        assert before["top"] == after["top"] and after["left"] > before["left"] + before["width"] - 1
    else:
        assert before["left"] == after["left"] and after["top"] > before["top"]
    removed = page.evaluate(RUN_STYLE, "#comparison del")
    assert removed["line"] == "line-through" and removed["width"] > 50 and removed["height"] > 5
    assert removed["before"] == '" [removed: "' and removed["beforeWidth"] in ("1px", "auto")
    assert removed["background"] != "rgba(0, 0, 0, 0)"
    context.close()


def test_added_text_is_underlined_and_a_folded_stretch_opens(browser: Any, site: Path) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(site, "huge"), 1280, "light")
    added = page.locator("#comparison ins")
    expect(added).to_have_count(1)
    expect(added).to_be_visible()
    expect(added).to_contain_text("A whole new sentence appears here.")
    assert page.evaluate(RUN_STYLE, "#comparison ins")["line"] == "underline"
    assert page.evaluate(RUN_STYLE, "#comparison ins")["before"] == '" [added: "'
    fold = page.locator("#comparison .compare-side").nth(1).locator("details.diff-fold").first
    expect(fold.locator("mark.hl-keyword").first).to_be_hidden()
    fold.locator("summary").click()
    expect(fold.locator("mark.hl-keyword").first).to_be_visible()
    context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_screenshots_of_the_comparison(browser: Any, site: Path, tmp_path: Path, width: int) -> None:
    """Pictures of the section render (tools/screenshots.py makes the README's)."""
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(site, "pool-regressed"), width, "light")
    section = page.locator("#comparison")
    expect(section.locator("del").first).to_be_visible()
    out = tmp_path
    shot = out / ("screenshot-comparison.png" if width == 1280 else f"screenshot-comparison-{width}.png")
    section.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    context.close()
