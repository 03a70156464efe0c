"""WCAG 2.2 AA and axe's best practices on every page type, light and dark: axe-core injected into the built site
(marker `browser`). axe-core is an npm package, never committed: `.ci/run` installs it into
~/.cache/sitegen-tools (or set SITEGEN_AXE to an axe.min.js), see tests/README.md."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT, browser_unavailable, new_context, settle, soup
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

AXE_VERSION = "4.14.1"  # the version .ci/run installs
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
CACHED_AXE = Path.home() / ".cache/sitegen-tools/node_modules/axe-core/axe.min.js"
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


@pytest.fixture(scope="module")
def axe_source() -> Path:
    """axe.min.js from SITEGEN_AXE or the cache .ci/run fills; a skip (a failure in CI) without it."""
    path = Path(os.environ.get("SITEGEN_AXE") or CACHED_AXE)
    if not path.is_file():
        browser_unavailable(f"axe-core is not at {path} (npm install -E axe-core@{AXE_VERSION} --prefix ~/.cache/sitegen-tools)")
    return path


def _violations(page: Any) -> list[str]:
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", AXE_TAGS
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {node['target']}: {node['failureSummary']}"
        for v in result["violations"]
        for node in v["nodes"][:5]
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_no_axe_violation_on_any_page_type(
    browser: Any, browser_site: Path, shipped_site: Path, axe_source: Path, scheme: str, width: int
) -> None:
    context = new_context(browser, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    try:
        page = context.new_page()
        found = {}
        for site, name in [(browser_site, n) for n in PAGES] + [(shipped_site, n) for n in SHIPPED_PAGES]:
            page.goto((site / name).as_uri())
            settle(page)
            page.add_script_tag(path=str(axe_source))
            problems = _violations(page)
            if problems:
                found[f"{site.parent.name}/{name}"] = problems
        assert not found, "\n".join(f"{name}:\n  " + "\n  ".join(problems) for name, problems in found.items())
    finally:
        context.close()


def test_axe_reports_a_violation(browser: Any, browser_site: Path, axe_source: Path) -> None:
    """The check can fail: an image without a text alternative added to the index is a violation."""
    context = new_context(browser, viewport={"width": 1280, "height": 900}, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto((browser_site / "index.html").as_uri())
        settle(page)
        page.evaluate("document.querySelector('main').appendChild(document.createElement('img')).src = 'x.png'")
        page.add_script_tag(path=str(axe_source))
        assert any(problem.startswith("image-alt") for problem in _violations(page))
    finally:
        context.close()


def test_every_page_has_a_description(shipped_site: Path) -> None:
    for name in [*SHIPPED_PAGES, "cases/payment-timeout-87a714ce4a.html"]:
        meta = soup(shipped_site / name).select("head meta[name=description]")
        assert len(meta) == 1 and len(meta[0]["content"]) > 40, name
    index = soup(shipped_site / "index.html").select_one("meta[name=description]")["content"]
    assert "14 of 22 cases passed (63.6%)" in index
    failing = soup(shipped_site / SHIPPED_PAGES[1]).select_one("meta[name=description]")["content"]
    assert failing.startswith("Eval case known-bad-claim-check-invalid: failed (claim_check_invalid)")
