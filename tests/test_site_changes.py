"""Each case's change against the baseline on the site: badges and data-change wherever a case appears, the
headline banner, the statement at the top of a case page, the pass-rate card, the diff page led by the cases,
and a case's notes and annotations (eval/README.md, "The site")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

from changes_suite import ANNOTATIONS, EXPECTED, ORDER, build_changes_site
from helpers import make_case, make_trace, write_suite
from site_audit import case_rows_data
from sitegen.compare.wording import format_headline, format_pass_rate
from sitegen.defaults import DIFF_CASES_IN_FULL, CasePages
from sitegen.site.pages.diff_page import OTHER_DIFFERENCES_SHOWN
from sitegen.site.pipeline import BuildOptions, BuildResult, build_site


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8").replace("<wbr>", ""), "html.parser")


def case_page(site: Path, case_id: str) -> BeautifulSoup:
    return soup(next((site / "cases").glob(f"{case_id}-*.html")))


def text(node: Tag | None) -> str:
    assert node is not None
    return " ".join(node.get_text(" ", strip=True).split())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildResult]:
    return build_changes_site(tmp_path_factory.mktemp("changes"))


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same run with two rows a page: index.html, index-2.html, index-3.html and the index's compact rows."""
    return build_changes_site(tmp_path_factory.mktemp("changes-paged"), rows=2)[0]


def _rows(doc: BeautifulSoup) -> dict[str, Tag]:
    return {text(tr.select_one("a.case-link")): tr for tr in doc.select("table.case-table tbody tr")}


BADGES = {
    "steady": "= still passing", "breaks": "▼ regressed", "mends": "▲ fixed", "known": "≡ known failure",
    "fresh": "✚ new",
}


def test_every_index_row_carries_its_change_in_its_status_cell(built: tuple[Path, BuildResult]) -> None:
    site, _ = built
    doc = soup(site / "index.html")
    rows = _rows(doc)
    assert list(rows) == ORDER
    headers = [text(th) for th in doc.select("#case-table thead th")]
    assert headers[:3] == ["Case", "Status", "Agent verdict"] and len(headers) == 7  # no column added
    for case_id, tr in rows.items():
        assert tr["data-change"] == EXPECTED[case_id], case_id
        status_cell = tr.find_all("td")[1]
        assert text(status_cell.select_one(".change")) == BADGES[case_id], case_id
    assert "change-regressed" in rows["breaks"].select_one(".change")["class"]
    options = [(o["value"], text(o)) for o in doc.select("#filter-change option")]
    assert options == [
        ("", "All changes"), ("regressed", "regressed"), ("fixed", "fixed"), ("still_failing", "known failure"),
        ("new", "new"), ("still_passing", "still passing"),
    ]


def test_static_case_list_pages_and_compact_rows_carry_the_change(paged: Path) -> None:
    shown: dict[str, str] = {}
    for name in ("index.html", "index-2.html", "index-3.html"):
        for case_id, tr in _rows(soup(paged / name)).items():
            shown[case_id] = tr["data-change"]
            assert text(tr.find_all("td")[1].select_one(".change")) == BADGES[case_id]
    assert shown == EXPECTED
    data = case_rows_data(paged)
    assert {row[0]: row[13] for row in data["rows"]} == EXPECTED
    assert data["changes"]["regressed"][:3] == ["▼", "regressed", "change change-regressed"]


def test_the_banner_leads_with_the_cases_in_the_headline_words(built: tuple[Path, BuildResult]) -> None:
    site, result = built
    assert result.diff is not None
    expected = format_headline(result.diff.headline())
    assert expected.startswith("1 case regressed: breaks (forbidden_answer_keyword) · 1 case removed: gone · ")
    banner = soup(site / "index.html").select_one("#headline")
    assert text(banner.select_one(".headline-text")) == expected
    assert "banner-bad" in banner["class"] and banner["data-case-regressions"] == "2"
    links = {text(a): a["href"] for a in banner.select(".headline-text a")}
    assert links == {"breaks": "cases/" + next((site / "cases").glob("breaks-*.html")).name}  # gone has no page
    # The diff page names each case once, in its sections: its banner counts them, each count linked to its section.
    banner = soup(site / "diff.html").select_one("#headline")
    assert "banner-bad" in banner["class"] and banner["data-case-regressions"] == "2"
    assert text(banner.select_one(".headline-text")) == (
        "1 case regressed · 1 case removed · 1 known failure · 1 fixed · 1 new ; " + format_pass_rate(result.diff.headline())
    )
    assert [a["href"] for a in banner.select(".headline-text a")] == [
        "#regressed-cases", "#removed-cases", "#known-failures", "#fixed-cases", "#new-cases"
    ]


def test_the_pass_rate_is_the_banners_against_a_baseline_and_a_card_without_one(built: tuple[Path, BuildResult], tmp_path: Path) -> None:
    def labels(site: Path, page: str = "index.html") -> list[str]:
        return [text(s.select_one(".stat-label")) for s in soup(site / page).select(".stat")]

    assert "Pass rate" not in labels(built[0]) and labels(built[0], "diff.html") == []
    assert "pass rate 60.0% → 60.0% (±0.0 points; " in text(soup(built[0] / "index.html").select_one("#headline"))
    alone, _ = build_changes_site(tmp_path / "alone", baseline=False)
    card = next(s for s in soup(alone / "index.html").select(".stat") if text(s.select_one(".stat-label")) == "Pass rate")
    assert card["class"] == ["stat", "stat-wide"]


def test_without_a_baseline_there_is_no_change_to_show(tmp_path: Path) -> None:
    site, result = build_changes_site(tmp_path, baseline=False)
    assert result.diff is None
    doc = soup(site / "index.html")
    assert doc.select("[data-change]") == [] and doc.select(".change") == []
    assert doc.select_one("#filter-change") is None and doc.select_one("#headline") is None
    page = case_page(site, "breaks")
    assert not page.main.has_attr("data-change") and page.select_one("#change") is None


def test_a_case_page_states_its_change_at_the_top(built: tuple[Path, BuildResult]) -> None:
    site, _ = built
    for case_id, change in EXPECTED.items():
        page = case_page(site, case_id)
        assert page.main["data-change"] == change, case_id
        assert text(page.select_one(".case-head .badges .change")) == BADGES[case_id], case_id
    breaks = case_page(site, "breaks")
    head = breaks.select_one("section.case-head")
    statement = head.select_one("#change .case-change-statement")
    assert text(statement) == "Regressed since the baseline: forbidden_answer_keyword"
    # right under the title and its badges, before the facts and the failed checks
    children = head.find_all(["h1", "div", "dl"], recursive=False)
    order = [node.name if node.name in ("h1", "dl") else node.get("id") for node in children]
    assert order[0] == "h1" and order.index("change") < order.index("dl")
    # the failed checks that broke it are marked new in the list of failed checks (not listed twice)
    checks = [text(li) for li in head.select("ul.checks li.check-new")]
    assert checks == ["forbidden_answer_keyword answer contains forbidden phrase 'restart the database' new"]
    assert head.select("#change li") == []
    mends = case_page(site, "mends").select_one("#change")
    assert text(mends.select_one(".case-change-statement")) == "Fixed since the baseline; resolved: keyword_coverage"
    assert [text(c) for c in mends.select(".case-change-checks code")] == ["keyword_coverage"]
    known = case_page(site, "known")
    statement = text(known.select_one("#change .case-change-statement"))
    assert statement == "Known failure, with new failed checks since the baseline: forbidden_answer_keyword"
    marked = {text(li.code): "check-new" in li.get("class", []) for li in known.select("ul.checks li")}
    assert marked == {"keyword_coverage": False, "forbidden_answer_keyword": True}
    steady = case_page(site, "steady").select_one("#change .case-change-statement")
    assert text(steady) == "Unchanged: it passed in the baseline too, with the very same trace."


def test_notes_and_annotations_are_shown_as_text(built: tuple[Path, BuildResult]) -> None:
    page = case_page(built[0], "breaks")
    notes = page.select_one(".case-head #notes")
    assert notes.select("b, script") == [] and text(notes.select_one("strong")) == "strong"
    assert "<b>bold</b>" in notes.get_text() and "<script>alert('notes')</script>" in notes.get_text()
    annotations = {text(div.dt): div.dd.get_text() for div in page.select(".case-head #annotations > div")}
    assert annotations["_owner"] == ANNOTATIONS["_owner"]
    assert json.loads(annotations["x-ticket"]) == ANNOTATIONS["x-ticket"]
    assert page.select("#annotations script") == []
    definition = [text(dt) for dt in page.select("#definition dt")]
    assert not any("extra field" in label or label in ANNOTATIONS for label in definition)
    assert case_page(built[0], "steady").select_one("#notes") is None


def test_the_diff_page_leads_with_the_cases(built: tuple[Path, BuildResult]) -> None:
    site, _ = built
    doc = soup(site / "diff.html")
    assert text(doc.select_one(".page-head .subtitle")) == "3 of 5 cases passed in the baseline, 3 of 5 now."
    assert doc.select(".stat") == []  # the banner says the counts
    sections = [s["id"] for s in doc.select("main > section.card")]
    assert sections == ["regressed-cases", "removed-cases", "known-failures", "fixed-cases", "new-cases", "suite-figures", "transitions"]
    assert text(doc.select_one("#nothing")) == "No passing case behaves differently."  # every other kind has a case

    def rows(anchor: str) -> dict[str, list[str]]:
        return {text(body.td): [text(td) for td in body.tr.find_all("td")[1:]]
                for body in doc.select(f"#{anchor} table.change-table > tbody")}

    assert rows("regressed-cases") == {"breaks": ["forbidden_answer_keyword answer contains forbidden phrase 'restart the database'",
                                                   "answer 33 % changed"]}
    assert rows("removed-cases") == {"gone": ["—", "missing from the current report"]}
    assert doc.select_one("#removed-cases tbody a") is None  # no page to link
    assert rows("fixed-cases") == {"mends": ["keyword_coverage answer matches 0 of 1 expected keywords, needs 1; missing: 'pool'",
                                             "pool now affirmed; answer 60 % changed"]}  # the keyword it now affirms first
    assert rows("known-failures")["known"] == ["keyword_coverage forbidden_answer_keyword", "now also fails forbidden_answer_keyword; answer 58 % changed"]
    assert rows("new-cases") == {"fresh": ["—", "passed in its first run"]}
    # Each case once: no case of a section is named in another.
    named = [text(body.td) for body in doc.select("table.change-table > tbody")]
    assert len(named) == len(set(named))
    diff_md = (site / "diff.md").read_text(encoding="utf-8")
    assert "present → absent" in diff_md and "passed → failed" in diff_md


@pytest.mark.parametrize(
    ("now_answer", "anchor", "title"),
    [
        # Less alike than [diff] answerSimilarity's 0.9: every case behaves differently.
        ("The pool is exhausted again.", "changed-cases", "Passing, behaves differently"),
        # As alike as that: every case still passes and behaves alike, but its answer is a figure that moved.
        ("The pool is exhausted, as the pool's metrics show over the last hour of traffic!", "other-figures",
         "Passing, figures moved"),
    ],
)
def test_the_diff_page_lists_the_first_passing_cases_and_says_where_the_rest_are(
    tmp_path: Path, now_answer: str, anchor: str, title: str
) -> None:
    count = OTHER_DIFFERENCES_SHOWN + 2
    before_answer = "The pool is exhausted, as the pool's metrics show over the last hour of traffic."
    before_answer = "The pool is exhausted." if anchor == "changed-cases" else before_answer
    cases = [make_case(id=f"c{i:04d}", traceFixture=f"c{i:04d}.json", expectedRootCauseKeywords=["pool"]) for i in range(count)]
    before = write_suite(tmp_path / "before", cases, {f"c{i:04d}.json": make_trace(before_answer) for i in range(count)})
    build_site(BuildOptions(cases=before[0], fixtures=before[1], out=tmp_path / "before-site", cwd=tmp_path,
                            run_id="before", case_pages=CasePages.FAILING))
    now = write_suite(tmp_path / "now", cases, {f"c{i:04d}.json": make_trace(now_answer) for i in range(count)})
    site = tmp_path / "site"
    build_site(BuildOptions(cases=now[0], fixtures=now[1], out=site, cwd=tmp_path, run_id="now",
                            baseline=tmp_path / "before-site" / "report.json", case_pages=CasePages.FAILING))
    doc = soup(site / "diff.html")
    section = doc.select_one(f"#{anchor}")
    assert section is not None
    assert [s["id"] for s in doc.select("main > section.card") if s["id"] in ("changed-cases", "other-figures")] == [anchor]
    answer_items = json.loads((site / "diff.json").read_text(encoding="utf-8"))["items"]
    assert len([item for item in answer_items if item["metric"] == "answer"]) == count  # one a case
    assert text(section.h2).endswith(f"{title} ({count:,})")
    # The first DIFF_CASES_IN_FULL in full, the rest of those listed one compact row each.
    in_full, compact = section.select("table.change-table:not(.compact-table) > tbody"), section.select(".compact-table tbody tr")
    assert len(in_full) == DIFF_CASES_IN_FULL and len(in_full) + len(compact) == OTHER_DIFFERENCES_SHOWN
    assert text(section.select("p.muted")[-1]) == (
        f"The first {OTHER_DIFFERENCES_SHOWN:,} of {count:,} are listed here; diff.json and diff.md list them all."
    )
    markdown = (site / "diff.md").read_text(encoding="utf-8")
    assert len(re.findall(r"\| answer \| \d+ characters", markdown)) == count  # diff.md lists every figure
