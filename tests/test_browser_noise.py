"""Marker `browser`: a case within noise on the index: its badge, and the Change filter narrowing to it (by the
select and by the URL), for plain and for compact rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import Watched, make_case, make_trace, write_suite
from sitegen.evaluation.engine import evaluate_suite
from sitegen.report.report_json import report_json
from sitegen.site.pipeline import BuildOptions, build_site
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import load_cases

pytestmark = pytest.mark.browser
GOOD = make_trace("the pool has a leak", tools=["query_logs"])
BAD = make_trace("the pool has a leak", verdict="WEIRD", tools=["query_logs"])


@pytest.fixture
def expect(browser: Any) -> Any:
    """Playwright's auto-waiting assertions (imported once the browser fixture has found Playwright)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def _suite(root: Path, noisy_passing: int) -> tuple[Path, Path]:
    cases = [make_case(id=i, traceFixture=i, expectedRootCauseKeywords=["pool"], requiredEvidenceTools=["query_logs"])
             for i in ("noisy", "steady")]
    traces = {f"noisy/trial-{n}.json": GOOD if n <= noisy_passing else BAD for n in range(1, 6)}
    traces |= {f"steady/trial-{n}.json": GOOD for n in range(1, 6)}
    return write_suite(root, cases, traces)


@pytest.fixture(scope="module", params=[500, 1], ids=["plain-rows", "compact-rows"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser-noise")
    cases, fixtures = _suite(root / "before", 5)
    baseline = root / "baseline.json"
    baseline.write_text(report_json(evaluate_suite(load_cases(cases), fixtures, SuiteConfig())), encoding="utf-8")
    cases, fixtures = _suite(root / "now", 4)
    result = build_site(BuildOptions(cases=cases, fixtures=fixtures, out=root / "site", cwd=root, baseline=baseline,
                                     run_id="now", index_page_rows=request.param, fail_on_regression=True))
    assert result.exit_code == 0
    assert json.loads((root / "site" / "diff.json").read_text(encoding="utf-8"))["caseChangeCounts"]["within_noise"] == 1
    return root / "site"


def _links(page: Any) -> Any:
    return page.locator("#case-table tbody tr:not(.empty-row) a.case-link")


def test_the_change_filter_narrows_to_the_case_within_noise(watched: Watched, site: Path, expect: Any) -> None:
    page = watched.open(site / "index.html")
    expect(page.locator("#case-table.is-ready")).to_be_visible()
    # A long list (compact rows) shows the page's own row until a control loads every case's.
    paged = page.locator("#case-table[data-rows-src]").count() == 1
    expect(_links(page)).to_have_count(1 if paged else 2)
    page.select_option("#filter-change", "within_noise")
    expect(_links(page)).to_have_text(["noisy"])
    expect(page).to_have_url(re.compile(r"#change=within_noise$"))
    expect(page.locator("#case-table tbody tr").first.locator(".change")).to_have_text("≈ within noise")
    expect(page.locator("#headline")).to_contain_text("no case regressed · 1 within noise")
    watched.assert_clean()


def test_a_url_with_the_within_noise_filter_restores_it(watched: Watched, site: Path, expect: Any) -> None:
    page = watched.open((site / "index.html").as_uri() + "#change=within_noise")
    expect(page.locator("#filter-change")).to_have_value("within_noise")
    expect(_links(page)).to_have_text(["noisy"])
    watched.assert_clean()
