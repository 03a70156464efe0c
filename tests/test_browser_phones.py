"""The pages read on a phone (390 px) and on a desktop (1280 px), measured in a real browser: the index's rows show
the rules a case failed and keep the verdict clear of the duration; the diff page's rows show the reason (the new
failed checks) without sideways scrolling; case and run ids break at hyphens into at most two lines and a commit
stays on one; the filter box's placeholder is not cut."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT, case_page_file, make_case, make_trace, open_settled, shipped_history, write_suite
from site_audit import case_rows_data
from sitegen.site.pipeline import BuildOptions, build_site

pytestmark = pytest.mark.browser

COMMIT = "0123456789abcdef0123456789abcdef01234567"
RUN_ID = "github-actions-run-12345678901-attempt-3"
# Passing in the baseline, failing now: long ids with a reason and a "what changed" phrase on the diff page.
REGRESSED = ("known-bad-composer-mode-missing", "known-bad-claim-check-invalid", "known-bad-raw-executor-leak")
FIXED = "matrix-no-evidence-negative-observation"  # failing in the baseline, passing now


def _baseline(report: dict[str, Any]) -> dict[str, Any]:
    for result in report["results"]:
        if result["caseId"] in REGRESSED:
            result |= {"status": "passed", "passed": True, "failedChecks": []}
        elif result["caseId"] == FIXED:
            result |= {"status": "failed", "passed": False, "failedChecks": ["keyword_coverage: answer matches 0 of 2 expected keywords"]}
    passed = sum(r["passed"] for r in report["results"])
    return report | {"passedCases": passed, "failedCases": len(report["results"]) - passed, "passRate": passed / len(report["results"])}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped suite against a baseline it partly differs from, after seven runs named as CI names them."""
    root = tmp_path_factory.mktemp("phones")
    shipped = json.loads((ROOT / "eval" / "baseline" / "report.json").read_text(encoding="utf-8"))
    baseline = root / "baseline.json"
    baseline.write_text(json.dumps(_baseline(json.loads(json.dumps(shipped)))), encoding="utf-8")
    runs = shipped_history(shipped, runs=7)
    for number, run in enumerate(runs, 1):
        run |= {"runId": f"{RUN_ID}-{number}", "label": f"nightly build {number}", "commit": COMMIT}
    history = root / "history.json"
    history.write_text(json.dumps(runs), encoding="utf-8")
    build_site(
        BuildOptions(
            cases=ROOT / "eval" / "cases" / "diagnosis-cases.json", fixtures=ROOT / "eval" / "fixtures", baseline=baseline,
            history=history, out=root / "site", run_id=RUN_ID, run_label="PR #12", cwd=root,
        )
    )
    return root / "site"


def _open(browser: Any, path: Path, width: int, scheme: str = "light") -> tuple[Any, Any]:
    return open_settled(browser, path, width, scheme)


def _shot(page: Any, name: str) -> None:
    """A full-page screenshot under SITEGEN_SCREENSHOTS (a folder), to look at; nothing otherwise."""
    folder = os.environ.get("SITEGEN_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


# The index on a phone


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_phone_index_rows_show_the_failed_rules_and_keep_the_verdict_clear_of_the_duration(
    browser: Any, site: Path, scheme: str
) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, site / "index.html", 390, scheme)
    _shot(page, f"index-390-{scheme}")
    failed = page.locator("#case-table tbody tr[data-status=failed]")
    expect(failed.first.locator("td.codes code").first).to_be_visible()
    rows = page.evaluate(
        """() => [...document.querySelectorAll('#case-table tbody tr')].map(tr => {
            const width = document.documentElement.clientWidth;
            const box = (node) => node.getBoundingClientRect();
            const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
            const badges = [tr.cells[1], tr.cells[2].querySelector('.verdict')].map(box);
            const duration = box(tr.cells[6]);
            const codes = [...tr.cells[3].querySelectorAll('code')];
            return {
              id: tr.cells[0].getAttribute('data-sort'),
              failed: tr.getAttribute('data-status') === 'failed',
              overlaps: badges.some(b => overlap(b, duration)) || overlap(badges[0], badges[1]),
              codes: codes.length,
              codesSeen: codes.every(c => { const b = box(c); return b.width > 0 && b.left >= -0.5 && b.right <= width + 0.5
                && c.scrollWidth <= c.clientWidth + 1 && parseFloat(getComputedStyle(c).fontSize) >= 12; }),
            };
        })"""
    )
    context.close()
    assert len(rows) == 22
    assert [row["id"] for row in rows if row["overlaps"]] == []
    failing = [row for row in rows if row["failed"]]
    assert len(failing) >= 8 and all(row["codes"] and row["codesSeen"] for row in failing), failing


# The diff page on a phone


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_phone_diff_page_shows_the_reason_without_sideways_scrolling(browser: Any, site: Path, scheme: str) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, site / "diff.html", 390, scheme)
    _shot(page, f"diff-390-{scheme}")
    reasons = page.locator("#regressed-cases td[data-label='Broken rules']")
    expect(reasons).to_have_count(len(REGRESSED))
    expect(reasons.first.locator(".rule-message").first).to_be_visible()  # the rule's message, the reason in full
    found = page.evaluate(
        """() => {
          const width = document.documentElement.clientWidth;
          const inView = (node) => { const b = node.getBoundingClientRect(); return b.width > 0 && b.left >= -0.5 && b.right <= width + 0.5; };
          for (const details of document.querySelectorAll('details')) details.open = true;  // the figures folded under a case
          const tables = [...document.querySelectorAll('.change-table, .figure-table')];
          return {
            tables: tables.length,
            scrolling: tables.map(t => t.closest('.table-wrap')).filter(w => w.scrollWidth > w.clientWidth + 1).length,
            hidden: [...document.querySelectorAll('.change-table td, .figure-table td')].filter(td => td.textContent.trim() && !inView(td))
              .map(td => td.getAttribute('data-label') + ': ' + td.textContent.trim().slice(0, 40)),
            labels: [...document.querySelectorAll("#regressed-cases td[data-label='Broken rules']")]
              .map(td => getComputedStyle(td, '::before').content),
          };
        }"""
    )
    context.close()
    assert found["tables"] >= 3 and found["scrolling"] == 0 and found["hidden"] == [], found
    assert set(found["labels"]) == {'"Broken rules"'}  # each reason goes with its column's name


# Ids at 1280 px

LINES = """(nodes) => nodes.map(node => [node.textContent, new Set([...node.getClientRects()].map(r => Math.round(r.top))).size])"""


def test_case_and_run_ids_take_at_most_two_lines_at_1280(browser: Any, site: Path) -> None:
    context, page = _open(browser, site / "diff.html", 1280)
    _shot(page, "diff-1280")
    cases = page.locator(".change-table > tbody > tr:first-child > td:first-child a").evaluate_all(LINES)
    context.close()
    context, page = _open(browser, site / "history.html", 1280)
    _shot(page, "history-1280")
    runs = page.locator(".runs-table td.run-id code").evaluate_all(LINES)
    commits = page.locator(".runs-table td.commit code").evaluate_all(LINES)
    fit = page.evaluate("() => { const w = document.querySelector('#runs .table-wrap'); return w.scrollWidth <= w.clientWidth; }")
    context.close()
    assert {text for text, _ in cases} >= {*REGRESSED, FIXED}
    assert [case for case in cases if case[1] > 2] == []
    assert len(runs) == 8 and [run for run in runs if run[1] > 2] == []
    assert len(commits) == 8 and [commit for commit in commits if commit[1] != 1] == []
    assert fit


@pytest.mark.parametrize("width", [390, 768, 1280])
def test_the_filter_placeholder_is_not_cut(browser: Any, site: Path, width: int) -> None:
    context, page = _open(browser, site / "index.html", width)
    text, needed, room = page.evaluate(
        """() => { const box = document.querySelector('#filter-q'), style = getComputedStyle(box);
          const measure = document.createElement('canvas').getContext('2d');
          measure.font = style.font;
          return [box.placeholder, measure.measureText(box.placeholder).width,
                  box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)]; }"""
    )
    context.close()
    assert text and needed <= room, (text, needed, room)


# "Flaky only" and a run without a commit or label


@pytest.fixture(scope="module")
def trials_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three cases, no history, no commit, no label: one trace file; trials that agree; trials that disagree."""
    root = tmp_path_factory.mktemp("flaky-trials")
    keywords = {"expectedRootCauseKeywords": ["pool"], "minKeywordMatches": 1}
    cases, fixtures = write_suite(
        root,
        [make_case(id="single", traceFixture="single.json", **keywords), make_case(id="agreeing", traceFixture="agreeing", **keywords),
         make_case(id="disagreeing", traceFixture="disagreeing", **keywords)],
        {
            "single.json": make_trace("the pool is exhausted"),
            "agreeing/trial-001.json": make_trace("the pool is exhausted"),
            "agreeing/trial-002.json": make_trace("the pool again"),
            "disagreeing/trial-001.json": make_trace("the pool is exhausted"),
            "disagreeing/trial-002.json": make_trace("no idea"),
        },
    )
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=root / "site", cwd=root, baseline=None))
    # the same as a long list: its rows come as data the index's script builds (views.case_table_data)
    build_site(BuildOptions(cases=cases, fixtures=fixtures, out=root / "paged", cwd=root, baseline=None, index_page_rows=2))
    return root


@pytest.mark.parametrize(("width", "built"), [(390, "site"), (1280, "site"), (1280, "paged")])
def test_flaky_only_is_explained_and_keeps_the_cases_whose_trials_disagree(
    browser: Any, trials_site: Path, width: int, built: str
) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, trials_site / built / "index.html", width)
    hint = page.locator("#flaky-hint")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("trials disagree")
    expect(page.locator("#filter-flaky")).to_have_attribute("aria-describedby", "flaky-hint")
    expect(page.locator("#cases .section-head")).to_contain_text("3 cases · 1 flaky")
    page.check("#filter-flaky")
    expect(page.locator("#case-table tbody a.case-link")).to_have_text(["disagreeing"])
    expect(page.locator("#case-table tbody .flaky")).to_have_attribute("title", "its trials disagree: 1 of 2 passed")
    _shot(page, f"flaky-{width}-{built}")
    box = hint.bounding_box()
    context.close()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


def test_the_index_data_says_why_a_row_is_flaky(trials_site: Path) -> None:
    # The rows the index's script builds take their flaky badge's title from the table's data, as the page's badge does.
    data = case_rows_data(trials_site / "paged")
    assert [row[12] for row in data["rows"]] == [0, 0, "its trials disagree: 1 of 2 passed"]


def test_a_case_page_says_why_its_case_is_flaky(browser: Any, trials_site: Path) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, case_page_file(trials_site / "site", "disagreeing"), 390)
    expect(page.locator("[data-history-strip] .strip-cell")).to_have_count(1)  # the script has run
    expect(page.locator("[data-flaky-badge]")).to_have_attribute("title", "its trials disagree: 1 of 2 passed")
    page.goto(case_page_file(trials_site / "site", "agreeing").as_uri())
    expect(page.locator("[data-history-strip] .strip-cell")).to_have_count(1)
    expect(page.locator("[data-flaky-badge]")).to_have_count(0)
    context.close()


def test_a_run_without_a_commit_or_label_is_named_once(browser: Any, trials_site: Path) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, trials_site / "site" / "index.html", 390)
    expect(page.locator(".page-head .subtitle")).to_have_text(re.compile(r"^3 cases · run-[0-9a-f]{12} · "))
    context.close()


# The diff page in plain words


def test_the_diff_page_says_figures_in_words_never_items_or_keys(browser: Any, site: Path) -> None:
    from playwright.sync_api import expect

    context, page = _open(browser, site / "diff.html", 1280)
    expect(page.locator("#suite-figures-heading")).to_have_text("Figures of the whole suite")
    expect(page.locator("#regressed-cases-heading")).to_contain_text(re.compile(r"Regressed \(\d+\)"))
    text = page.locator("main").inner_text()
    labels = page.locator(".figure-label, th").evaluate_all("nodes => nodes.map(node => node.textContent)")
    context.close()
    assert not re.search(r"\bitems?\b", text, re.IGNORECASE), re.findall(r".{30}\bitems?\b.{30}", text, re.IGNORECASE)
    assert labels and [label for label in labels if re.search(r"\b[a-z]+[A-Z]", label)] == []  # no report key