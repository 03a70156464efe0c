"""The diff page and diff.md, each fact once: golden files of one regression (the shipped suite with mysql-slow-query
no longer calling query_db_status) and of a mixed change (tests/changes_suite.py: regressed, removed, fixed, known
failure, new); the regressed case named once on the page with its rule and what changed; the page within two
desktop screens (marker `browser`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from changes_suite import build_changes_site
from helpers import EPOCH, ROOT, check_golden, drop_tool, open_settled, soup
from sitegen.site.pipeline import BuildOptions, build_site

GOLDEN = ROOT / "tests" / "golden" / "diff-page"
CASE = "mysql-slow-query"


@pytest.fixture(scope="module")
def one_regression(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped suite against its committed baseline, CASE's trace without its query_db_status call and without
    the keyword t_order."""
    root = tmp_path_factory.mktemp("one-regression")
    shutil.copytree(ROOT / "eval", root / "eval")
    path = root / "eval" / "fixtures" / f"{CASE}.json"
    trace = json.loads(path.read_text(encoding="utf-8"))
    drop_tool(trace, "query_db_status", from_summary=True)
    trace["session"]["answer"] = trace["session"]["answer"].replace("t_order", "订单表")
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        build_site(BuildOptions(cases=root / "eval/cases/diagnosis-cases.json", fixtures=root / "eval/fixtures",
                                config=root / "eval/sitegen.toml", baseline=ROOT / "eval/baseline/report.json",
                                out=root / "site", run_id="one-regression", cwd=root))  # fmt: skip
    return root / "site"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        return build_changes_site(tmp_path_factory.mktemp("mixed"))[0]


@pytest.mark.parametrize("name", ["diff.html", "diff.md"])
def test_golden_one_regression(one_regression: Path, name: str) -> None:
    check_golden((one_regression / name).read_text(encoding="utf-8"), GOLDEN / f"one-regression-{name}")


@pytest.mark.parametrize("name", ["diff.html", "diff.md"])
def test_golden_mixed_change(mixed: Path, name: str) -> None:
    check_golden((mixed / name).read_text(encoding="utf-8"), GOLDEN / f"mixed-{name}")


def _words(node: Any) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


def test_one_regression_names_the_case_once_with_its_rule_and_what_changed(one_regression: Path) -> None:
    doc = soup(one_regression / "diff.html")
    main = doc.select_one("main")
    # Named once as a case; a cost figure's "why" names it as what moved the overall average (compare/costs.py).
    (why,) = [td for td in main.select("td.prose") if CASE in _words(td)]
    assert _words(why).endswith(f"so the change comes from {CASE}, which does not pass and get measured in both reports")
    why.decompose()
    assert _words(main).count(CASE) == 1
    (entry,) = doc.select("#regressed-cases table.change-table > tbody")
    assert [_words(code) for code in entry.select("td.rules code")] == ["missing_evidence_tool"]
    what = " ".join(entry.select_one("td[data-label='What changed']").get_text().split())
    # A change of meaning first (the expected keyword t_order no longer in the answer), then the tools; an answer
    # changed by under 5 % is worded by its edits (docs/comparison.md, "Behaviour that changed meaning").
    assert what.startswith("t_order no longer mentioned; no longer called query_db_status; answer edited in 2 places: ")
    folded = [_words(td) for td in entry.select(".figures-fold .figure-label")]
    assert folded[:2] == ["▼ regression required tool query_db_status used", "▼ regression expected keywords found"]
    assert _words(doc.select_one("#nothing")) == "Nothing removed, fixed or new; no passing case behaves differently."
    # The verdicts that did not move are counts, not lists of cases; no section is empty.
    assert doc.select("#transitions li") == [] and "17 PASS" in _words(doc.select_one("#transitions"))
    assert all(section.select("table.change-table > tbody") for section in doc.select("main > section[id$='-cases'], #known-failures"))


def test_the_mixed_change_has_a_section_per_kind_and_says_what_none_did(mixed: Path) -> None:
    doc = soup(mixed / "diff.html")
    kinds = [section["id"] for section in doc.select("main > section.card")]
    assert kinds[:5] == ["regressed-cases", "removed-cases", "known-failures", "fixed-cases", "new-cases"]
    assert _words(doc.select_one("#nothing")) == "No passing case behaves differently."  # every other kind has a case
    named = [_words(body.td) for body in doc.select("table.change-table > tbody")]
    assert sorted(named) == ["breaks", "fresh", "gone", "known", "mends"]  # steady is unchanged: not listed


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_one_regression_fits_in_two_desktop_screens(browser: Any, one_regression: Path, scheme: str) -> None:
    context, page = open_settled(browser, one_regression / "diff.html", 1280, scheme)
    height = page.evaluate("document.documentElement.scrollHeight")
    context.close()
    assert height <= 2 * 900, height


def test_diff_md_names_each_figure_in_words(one_regression: Path) -> None:
    text = (one_regression / "diff.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ") and " → " in line]
    figures = [row[1] for row in rows if len(row) > 3]
    assert "required tool query\\_db\\_status used" in figures and "expected keywords found" in figures
    assert [figure for figure in figures if re.search(r"\b[a-z]+[A-Z]", figure)] == []  # no report key
