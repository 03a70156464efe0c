"""In a browser: a local build's point is drawn hollow, off the line, by plotly.js as by the static picture before
it (eval/README.md, "History"); the case that build could not evaluate is found with the index's Change filter and
its page says why (eval/README.md, "Cases that could not be evaluated")."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT, Watched, new_context, wait_until_ready, wake_charts
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = [pytest.mark.browser, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # fmt: skip
CASE = "oom-restart"


@pytest.fixture(scope="module")
def local_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped suite in a git repository, built at its commit, then with oom-restart's trace broken and not
    committed: a site whose last run is a local point and which has a case that could not be evaluated."""
    repo = tmp_path_factory.mktemp("agent")
    shutil.copytree(ROOT / "eval", repo / "eval")
    for args in (["init", "-q"], ["add", "eval"], ["commit", "-q", "-m", "the suite"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=_GIT_ENV)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("GITHUB_RUN_ID", raising=False)
        options = BuildOptions(cases=repo / "eval" / "cases" / "diagnosis-cases.json", fixtures=repo / "eval" / "fixtures",
                               baseline=repo / "eval" / "baseline" / "report.json", out=repo / "site", cwd=repo)  # fmt: skip
        patch.setenv("SOURCE_DATE_EPOCH", "1700000000")
        build_site(options)
        trace = repo / "eval" / "fixtures" / f"{CASE}.json"
        trace.write_text(trace.read_text(encoding="utf-8").replace('"success": false,', '"success": flase,', 1), encoding="utf-8")
        patch.setenv("SOURCE_DATE_EPOCH", "1700003600")
        assert build_site(options).run.local
    return repo / "site"


def _points(page: Any, chart: str) -> list[list[str]]:
    """Each trace's points in a drawn plotly chart, as the style plotly gave each."""
    script = "traces => traces.map(t => [...t.querySelectorAll('.point')].map(p => p.getAttribute('style')))"
    return page.eval_on_selector_all(f"#{chart} .scatterlayer .trace", script)


def test_a_local_point_is_hollow_in_the_picture_and_in_plotly(browser: Any, local_site: Path) -> None:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 900})
    try:
        watched = Watched(context.new_page())
        page = watched.open(local_site / "history.html")
        picture = page.locator("#chart-history-pass-rate svg.chart-picture")
        expect(picture.locator("circle")).to_have_count(3)  # the committed run's point, the local one, its legend key
        assert [picture.locator("circle").nth(i).get_attribute("fill") for i in range(3)] == ["#3b82c4", "none", "none"]
        wake_charts(page)
        chart = page.locator("#chart-history-pass-rate")
        chart.scroll_into_view_if_needed()
        expect(chart.locator("svg.main-svg").first).to_be_attached()
        expect(chart.locator(".scatterlayer .trace")).to_have_count(2)
        line, local = _points(page, "chart-history-pass-rate")
        assert len(line) == 1 and "fill: rgb(59, 130, 196)" in line[0]
        assert len(local) == 1 and "fill: none" in local[0] and "stroke: rgb(59, 130, 196)" in local[0]
        expect(chart.locator(".legendtext")).to_have_text("local build (uncommitted)")
        expect(page.locator(".runs-table tbody tr").first.locator(".mark-local")).to_have_text("local")
        watched.assert_clean()
    finally:
        context.close()


def test_the_case_that_could_not_be_evaluated_is_found_and_says_why(browser: Any, local_site: Path) -> None:
    from playwright.sync_api import expect

    context = new_context(browser, viewport={"width": 1280, "height": 900})
    try:
        watched = Watched(context.new_page())
        page = watched.open(local_site / "index.html")
        wait_until_ready(page)
        expect(page.locator("#headline .headline-text")).to_contain_text(
            f"1 case could not be evaluated: {CASE} — trace is not JSON at"
        )
        page.select_option("#filter-change", "not_evaluated")
        rows = page.locator("#case-table tbody tr:visible")
        expect(rows).to_have_count(1)
        expect(rows.first.locator(".case-link")).to_have_text(CASE)
        rows.first.locator(".case-link").click()
        expect(page.locator("main")).to_have_attribute("data-change", "not_evaluated")
        expect(page.locator(".case-change-statement")).to_contain_text(f"fixtures/{CASE}.json:71:18: Expecting value")
        watched.assert_clean()
    finally:
        context.close()
