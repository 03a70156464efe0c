"""--case-pages: which cases get a page of their own; the index stays complete, a case without a page links
its raw trace, and a rebuild takes what is unchanged (docs/big-suites.md, "Very big suites")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import check_links, make_case, make_trace, soup, write_suite
from site_audit import audit_site
from sitegen.cli import app

# passing in both, failing in both, regressed, fixed, new (failing), new (passing), trace missing (failing)
_CASES = ["steady", "broken", "regresses", "fixed", "new-failing", "new-passing", "no-trace"]
_PAGES = {
    "all": set(_CASES),
    # failing now, or regressed / fixed (within noise too, with trials)
    "failing": {"broken", "regresses", "fixed", "new-failing", "no-trace"},
    # what changed against the baseline: regressed, fixed, new
    "changed": {"regresses", "fixed", "new-failing", "new-passing", "no-trace"},
}


def _suite(root: Path, failing: set[str]) -> tuple[Path, Path]:
    cases = [make_case(id=case_id, traceFixture=f"{case_id}.json") for case_id in _CASES]
    traces = {
        f"{case_id}.json": make_trace(verdict="REJECT" if case_id in failing else "PASS")
        for case_id in _CASES
        if case_id != "no-trace"
    }
    return write_suite(root, cases, traces)


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A suite whose cases cover every change against a baseline made from an earlier state of it."""
    before_cases, before_fixtures = _suite(tmp_path / "before", {"broken", "fixed"})
    data = json.loads(before_cases.read_text(encoding="utf-8"))
    before_cases.write_text(json.dumps([c for c in data if not c["id"].startswith(("new-", "no-"))]), encoding="utf-8")
    baseline = tmp_path / "baseline"
    done = CliRunner().invoke(app, ["baseline", "--cases", str(before_cases), "--fixtures", str(before_fixtures), "--dir", str(baseline)])
    assert done.exit_code == 0, done.output
    cases, fixtures = _suite(tmp_path / "now", {"broken", "regresses", "new-failing"})
    return cases, fixtures, baseline / "report.json"


def _build(suite: tuple[Path, Path, Path], out: Path, mode: str) -> str:
    cases, fixtures, baseline = suite
    args = ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(baseline), "--out", str(out)]
    done = CliRunner().invoke(app, [*args, "--case-pages", mode])
    assert done.exit_code == 0, done.output
    return done.output


def _index_links(out: Path) -> dict[str, str | None]:
    cells = soup(out / "index.html").select("#case-table .case-cell .case-link")
    return {cell.get_text(): cell.get("href") for cell in cells}


@pytest.mark.parametrize("mode", ["all", "failing", "changed"])
def test_pages_only_for_the_cases_a_reader_needs(suite: tuple[Path, Path, Path], tmp_path: Path, mode: str) -> None:
    out = tmp_path / "site"
    output = _build(suite, out, mode)
    pages = {soup(page).find("main")["data-case-id"] for page in (out / "cases").glob("*.html")}
    assert pages == _PAGES[mode]
    assert f": {len(_PAGES[mode])} case pages" in output
    # Every case is still a row of the index; one without a page links its raw trace, one without either is text.
    links = _index_links(out)
    assert set(links) == set(_CASES)
    for case_id, href in links.items():
        if case_id in pages:
            assert href is not None and href.endswith(".html"), (case_id, href)
        elif case_id == "no-trace":
            assert href is None
        else:
            assert href is not None and href.endswith(".trace.json"), (case_id, href)
            assert json.loads((out / href).read_text(encoding="utf-8"))["session"]
    # Every raw trace is written whatever the mode, and every link of every page leads somewhere.
    assert len(list((out / "cases").glob("*.trace.json"))) == len(_CASES) - 1
    assert check_links(out) == []
    assert audit_site(out) == []


def test_a_page_links_no_neighbours_when_only_some_cases_have_one(suite: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    _build(suite, out, "failing")
    for page in (out / "cases").glob("*.html"):
        doc = soup(page)
        assert doc.select("a[rel=prev], a[rel=next]") == [] and doc.select_one(".prev-next") is None
        assert doc.select_one(".case-pager a.back")["href"] == "../index.html"
    _build(suite, tmp_path / "every", "all")
    assert soup(next((tmp_path / "every" / "cases").glob("regresses-*.html"))).select_one("a[rel=prev]") is not None


def test_a_rebuild_takes_cases_without_a_page_unchanged(suite: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    _build(suite, out, "changed")
    again = _build(suite, out, "changed")
    assert f"{len(_CASES)} unchanged since the last build" in again
    # Another mode is another site: every page is rendered again.
    other = _build(suite, out, "failing")
    assert "unchanged since the last build" not in other
    assert {soup(p).find("main")["data-case-id"] for p in (out / "cases").glob("*.html")} == _PAGES["failing"]


def test_an_unknown_mode_is_a_usage_error(suite: tuple[Path, Path, Path], tmp_path: Path) -> None:
    cases, fixtures, _ = suite
    out = tmp_path / "site"
    done = CliRunner().invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(out), "--case-pages", "some"])
    assert done.exit_code == 2
    assert "--case-pages" in done.output and not out.exists()
