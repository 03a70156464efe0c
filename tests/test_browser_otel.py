"""An OpenTelemetry trace's case page in a real browser: the example suite of OTLP files (eval/otel-example) built and
opened from file://, its tool timeline, tokens and raw trace link working without errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT, Watched, case_page_file, new_context
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

EXAMPLE = ROOT / "eval" / "otel-example"


@pytest.fixture(scope="module")
def otel_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("otel-browser")
    build_site(
        BuildOptions(
            cases=EXAMPLE / "cases.json", fixtures=EXAMPLE / "fixtures", config=EXAMPLE / "sitegen.toml",
            out=root / "site", run_id="browser", cwd=root,
        )
    )  # fmt: skip
    return root / "site"


def test_an_otlp_case_page_shows_its_spans(watched: Watched, otel_site: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page = watched.open(case_page_file(otel_site, "db-connection-pool-exhaustion"))
    expect(page.locator("#tools ol.timeline > li")).to_have_count(4)
    first = page.locator("#tools ol.timeline > li").first
    expect(first.locator(".call-head code")).to_have_text("query_logs")
    first.locator("details summary").first.click()
    expect(first.locator("details pre").first).to_contain_text("user-center")
    expect(page.locator("#result")).to_contain_text("1,234 in · 567 out")
    expect(page.locator("#result")).to_contain_text("OpenTelemetry, 6 spans")
    expect(page.locator("#verifier")).to_contain_text("PASS")
    page.screenshot(path=str(tmp_path / "otel-case.png"), full_page=True)
    raw = page.locator("#raw a[type='application/json']")
    expect(raw).to_have_attribute("href", "db-connection-pool-exhaustion-2bf3e09ec9.trace.json")
    watched.assert_clean()
    opened = watched.open(otel_site / "cases" / "db-connection-pool-exhaustion-2bf3e09ec9.trace.json")
    expect(opened.locator("body")).to_contain_text('"name":"execute_tool query_logs"')


def test_an_otlp_case_on_a_phone_labels_each_evidence_cell(browser: Any, otel_site: Path, tmp_path: Path) -> None:
    """No verifier-summary column for an OpenTelemetry case; on a phone each cell still says its own column."""
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 390, "height": 844})
    try:
        page = Watched(context.new_page()).open(case_page_file(otel_site, "db-connection-pool-exhaustion"))
        row = page.locator("#evidence tbody tr").first
        expect(row.locator("td")).to_have_count(3)
        labels = row.locator("td").evaluate_all("tds => tds.map(td => getComputedStyle(td, '::before').content)")
        page.screenshot(path=str(tmp_path / "otel-evidence-phone.png"), full_page=True)
    finally:
        context.close()
    assert labels == ['"In tool invocations"', '"Succeeded"', '"Counts as evidence"']
