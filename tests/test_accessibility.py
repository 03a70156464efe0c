"""WCAG 2.2 AA and axe's best practices on every page type, light and dark: axe-core injected into the built site
(marker `browser`). axe-core is the copy the axe-playwright-python test dependency ships (helpers.AXE_SCRIPT), so
these tests run wherever Chromium is, with nothing else to install."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import AXE_SCRIPT, ROOT, axe_version, axe_violations, new_context, settle, soup
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

# Each page type of tests/data/site's site: the index, a failing and a passing case page, the diff, the history.
PAGES = ["index.html", "cases/db-pool-d8b4ded081.html", "cases/pay-timeout-ada928c7cc.html", "diff.html", "history.html"]
# The same of the shipped suite, whose longer tag lists and case lists are what tests the target sizes.
SHIPPED_PAGES = [
    "index.html", "cases/known-bad-claim-check-invalid-11641e2cba.html", "cases/cert-expiry-open-api-1aff1627ae.html",
    "diff.html", "history.html",
]


@pytest.fixture(scope="module")
def shipped_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped eval/ suite built against its committed baseline."""
    root = tmp_path_factory.mktemp("shipped-site")
    build_site(
        BuildOptions(
            cases=ROOT / "eval/cases/diagnosis-cases.json", fixtures=ROOT / "eval/fixtures", config=ROOT / "eval/sitegen.toml",
            baseline=ROOT / "eval/baseline/report.json", out=root / "site", run_id="axe", cwd=root,
        )
    )
    return root / "site"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_no_axe_violation_on_any_page_type(
    browser: Any, browser_site: Path, shipped_site: Path, scheme: str, width: int
) -> None:
    context = new_context(browser, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    try:
        page = context.new_page()
        found = {}
        for site, name in [(browser_site, n) for n in PAGES] + [(shipped_site, n) for n in SHIPPED_PAGES]:
            page.goto((site / name).as_uri())
            settle(page)
            page.add_script_tag(path=str(AXE_SCRIPT))
            problems = axe_violations(page)
            if problems:
                found[f"{site.parent.name}/{name}"] = problems
        assert not found, "\n".join(f"{name}:\n  " + "\n  ".join(problems) for name, problems in found.items())
    finally:
        context.close()


def test_axe_reports_a_violation(browser: Any, browser_site: Path) -> None:
    """The check can fail: an image without a text alternative added to the index is a violation."""
    context = new_context(browser, viewport={"width": 1280, "height": 900}, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto((browser_site / "index.html").as_uri())
        settle(page)
        page.evaluate("document.querySelector('main').appendChild(document.createElement('img')).src = 'x.png'")
        page.add_script_tag(path=str(AXE_SCRIPT))
        assert any(problem.startswith("image-alt") for problem in axe_violations(page))
    finally:
        context.close()


def test_axe_is_the_test_dependencys_copy() -> None:
    """One axe-core for every accessibility test: the one axe-playwright-python ships, at a version with the WCAG 2.2
    rules (4.5 added the wcag22aa tag)."""
    major, minor, _ = (int(part) for part in axe_version().split("."))
    assert (major, minor) >= (4, 5), axe_version()


def test_every_page_has_a_description(shipped_site: Path) -> None:
    for name in [*SHIPPED_PAGES, "cases/payment-timeout-87a714ce4a.html"]:
        meta = soup(shipped_site / name).select("head meta[name=description]")
        assert len(meta) == 1 and len(meta[0]["content"]) > 40, name
    index = soup(shipped_site / "index.html").select_one("meta[name=description]")["content"]
    assert "14 of 22 cases passed (63.6%)" in index
    failing = soup(shipped_site / SHIPPED_PAGES[1]).select_one("meta[name=description]")["content"]
    assert failing.startswith("Eval case known-bad-claim-check-invalid: failed (claim_check_invalid)")
