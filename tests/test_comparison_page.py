"""The case page's comparison with the baseline (docs/comparison.md), on the suite of comparison_suite.py: whole
pages of a regressed, a fixed and an unchanged case against goldens, then the specific elements — the states
and the tool table, the removed and added text, the one line of an unchanged trace or an evidence-less
baseline, trials, hostile, CJK and 1 MB answers.

Regenerate the goldens with `SITEGEN_REGEN_GOLDEN=1 python -m pytest tests/test_comparison_page.py` and review
`git diff tests/golden/comparison`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, NavigableString, Tag

from comparison_suite import CJK_BEFORE, EVIDENCE, HOSTILE_AFTER, HOSTILE_BEFORE, build_comparison_site
from helpers import check_golden
from site_audit import audit_site
from sitegen.compare.behaviour import compare_behaviour
from sitegen.compare.changes import CaseChange, ChangeKind
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.results import CaseResult
from sitegen.site.pages.then_and_now import COMPARED, NO_EVIDENCE, UNCHANGED, UNREADABLE, comparison_view
from sitegen.suite.config import SuiteConfig
from sitegen.suite.models import Case

GOLDEN = Path(__file__).parent / "golden" / "comparison"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_comparison_site(tmp_path_factory.mktemp("comparison"))[0]


def page_path(site: Path, case_id: str) -> Path:
    return next((site / "cases").glob(f"{case_id}-*.html"))


def page(site: Path, case_id: str) -> BeautifulSoup:
    return BeautifulSoup(page_path(site, case_id).read_text(encoding="utf-8"), "html.parser")


def text(node: Tag | None) -> str:
    """A node's words as a reader sees them (an identifier's parts around a <wbr> are one word)."""
    assert node is not None
    for wbr in node.find_all("wbr"):
        wbr.decompose()
    node.smooth()
    return " ".join(node.get_text(" ", strip=True).split())


def rows(doc: BeautifulSoup, table: str) -> dict[str, list[str]]:
    return {text(tr.th): [text(td) for td in tr.find_all("td")] for tr in doc.select(f"#comparison {table} tbody tr")}


@pytest.mark.parametrize(("case_id", "golden"), [("pool-regressed", "regressed"), ("pool-fixed", "fixed"), ("steady", "unchanged"), ("trajectory", "trajectory")])
def test_golden_pages(site: Path, case_id: str, golden: str) -> None:
    check_golden(page_path(site, case_id).read_text(encoding="utf-8"), GOLDEN / f"{golden}.html")


def test_every_page_passes_the_audit(site: Path) -> None:
    assert audit_site(site) == []


def test_the_comparison_comes_right_under_the_result_box(site: Path) -> None:
    doc = page(site, "pool-regressed")
    result = doc.select_one("#result")
    assert result is not None and result.find_next_sibling(True) is doc.select_one("section#comparison")
    assert [a["href"] for a in doc.select("nav.toc a")][:2] == ["#result", "#comparison"]


def test_a_regression_shows_states_tools_and_the_lost_sentence(site: Path) -> None:
    doc = page(site, "pool-regressed")
    assert rows(doc, ".compare-states") == {
        "Status": ["passed", "failed changed"],
        "Verdict": ["PASS", "PASS"],
        "Gatekeeper status": ["PASSED", "BLOCKED changed"],
        "Composer mode": ["FULL", "DEGRADED changed"],
    }
    assert doc.select("#comparison .compare-tools") == []  # one trace a side: the aligned trajectory says it all
    steps = doc.select("#comparison table.trajectory tbody tr")
    assert [(tr["data-step"], text(tr.th)) for tr in steps] == [
        ("same", "1 same"),
        ("removed", "2 left out now first divergence"),
        ("same", "3 same Now fails."),
    ]
    assert [[text(td) for td in tr.find_all("td")] for tr in steps] == [
        ["query_logs ✓ ok"],  # the same on both sides: named once
        ["query_db_status required ✓ ok", "no call"],
        ["query_metrics ✓ ok", "query_metrics ✗ failed"],
    ]
    assert "step-first" in steps[1]["class"] and steps[1]["id"] == "step-2"
    assert text(doc.select_one("#comparison #trajectory + p.legend")) == (
        "3 steps: 2 the same, 1 left out now; the runs first diverge at step 2."
    )
    before, after = doc.select("#comparison .compare-side")
    assert [text(d) for d in before.select("del")] == [EVIDENCE.split(". ", 1)[1].strip()]
    assert before.select("ins") == [] and after.select("del") == [] and after.select("ins") == []
    # The expected keywords are marked on both sides, inside the removed text too.
    assert [text(m) for m in before.select("mark.hl-keyword")] == ["connection pool", "200", "200"]
    assert [text(m) for m in after.select("mark.hl-keyword")] == ["connection pool"]
    # The keyword lost is named, not only counted; the title's "% changed" is said in a sentence.
    assert [text(p) for p in doc.select("#comparison .compare-side .legend")] == [
        "2 of 2 expected keywords", "1 of 2 expected keywords — no longer found: 200",
    ]
    title = doc.select_one("#comparison h3:not(#trajectory)")
    assert re.fullmatch(r"Answers · \d+ % changed", text(title))
    assert text(title.find_next_sibling("p")).startswith("“% changed” measures how much of the two answers' text differs")


def test_the_trajectory_aligns_the_calls_and_marks_the_first_divergence(site: Path) -> None:
    doc = page(site, "trajectory")
    assert doc.select_one("main")["data-change"] == "changed"
    steps = doc.select("#comparison table.trajectory tbody tr")
    assert [tr["data-step"] for tr in steps] == ["added", "same", "input", "removed", "removed", "added"]
    assert [tr["id"] for tr in doc.select("#comparison tr.step-first")] == ["step-1"]
    assert text(steps[0].th) == "1 added now first divergence Moved: the baseline made it at step 4."
    before, after = steps[2].find_all("td")
    # The input's diff: removed and added runs, the markup in the input as text.
    assert [text(d) for d in before.select("del")] == ["ERROR AND timeout"] and before.select("ins") == []
    assert [text(i) for i in after.select("ins")] == ["WARN AND <b>retry</b>"] and after.select("b") == []
    assert "query_logs required" in text(before) and text(steps[5].find_all("td")[0]) == "no call"
    statement = doc.select_one("#change .case-change-statement").get_text()  # type: ignore[union-attr]
    assert statement == (
        "Still passing, but it behaves differently: no longer called query_db_status; now also called query_traces; "
        "first diverged at step 1: query_metrics called earlier than in the baseline"
    )
    assert [text(c) for c in doc.select("#change .case-change-statement code")] == ["query_db_status", "query_traces", "query_metrics"]


def test_a_fix_shows_the_sentence_added(site: Path) -> None:
    doc = page(site, "pool-fixed")
    before, after = doc.select("#comparison .compare-side")
    assert text(after.select_one(".legend")) == "2 of 2 expected keywords — newly found: 200"
    assert [text(d) for d in after.select("ins")] == [EVIDENCE.split(". ", 1)[1].strip()]
    assert before.select("del") == []


def test_an_unchanged_trace_says_so_in_one_line(site: Path) -> None:
    steady = page(site, "steady").select_one("#comparison")
    assert steady is not None and steady.name == "p"
    assert text(steady) == "The trace is unchanged since the baseline."
    rules = page(site, "rules-changed").select_one("#comparison")
    assert text(rules) == "The trace is unchanged since the baseline: the case or the rules changed."
    assert page(site, "steady").select("nav.toc a[href='#comparison']") == []


def test_a_baseline_without_evidence_says_how_to_regenerate_it(tmp_path: Path) -> None:
    site, _ = build_comparison_site(tmp_path, strip_evidence=True)
    for case_id in ("pool-regressed", "steady", "trials"):
        line = page(site, case_id).select_one("#comparison")
        assert line is not None and line["data-comparison"] == NO_EVIDENCE
        assert "does not record the agent's answers" in text(line)
        assert text(line.code) == "sitegen baseline"


def test_trials_count_trials_and_say_which_are_shown(site: Path) -> None:
    doc = page(site, "trials")
    assert rows(doc, ".compare-tools")["query_db_status required"] == ["✓ called 5/5", "✓ called 1/5 changed"]
    assert rows(doc, ".compare-tools")["query_metrics"] == ["✓ called 5/5", "✓ called 1/5 ✗ failed 4/5 changed"]
    assert "the baseline's trial 1 of 5 and trial 2 of 5 now" in text(doc.select_one("#comparison .note"))
    assert [text(h) for h in doc.select("#comparison .compare-side h4")] == ["Baseline · trial 1", "Now · trial 2"]
    assert doc.select("#comparison .compare-side")[0].select("del")


def test_hostile_answers_are_text_on_both_sides(site: Path) -> None:
    doc = page(site, "hostile")
    section = doc.select_one("#comparison")
    assert section is not None
    assert section.find_all(["script", "img", "b"]) == []
    assert [i for i in section.find_all("i") if i.attrs != {"aria-hidden": "true"}] == []  # only the badges' icons
    before, after = (side.select_one(".diff-text") for side in section.select(".compare-side"))
    assert before.get_text() == HOSTILE_BEFORE and after.get_text() == HOSTILE_AFTER
    # A direction override stays inside the answer's own box, which takes its direction from its text.
    overrides = [node for node in section.find_all(string=True) if "\u202e" in node]
    assert overrides and all(isinstance(node, NavigableString) for node in overrides)
    assert all(node.find_parent(class_="diff-text")["dir"] == "auto" for node in overrides)


def test_cjk_is_marked_by_characters_with_latin_names_as_words(site: Path) -> None:
    doc = page(site, "cjk")
    before, after = doc.select("#comparison .compare-side")
    assert before.select_one(".diff-text").get_text() == CJK_BEFORE
    assert [d.get_text() for d in before.select("del")] == ["数据库连接", "query_db_status 发现 200 个连接都被占用"]
    assert [d.get_text() for d in after.select("ins")] == ["线程", "query_logs 发现大量超时日志"]
    assert "连接池" in [text(m) for m in after.select("mark.hl-keyword")]


def test_megabyte_answers_stay_within_the_page_budget(site: Path) -> None:
    path = page_path(site, "huge")
    assert path.stat().st_size < 2 * 1024 * 1024
    doc = page(site, "huge")
    section = doc.select_one("#comparison")
    assert [text(n) for n in section.select(".compare-side .note")] == ["showing first 64 KiB of 1.0 MiB"] * 2
    assert [text(i) for i in section.select("ins")] == ["A whole new sentence appears here."]
    folds = section.select("details.diff-fold")
    assert len(folds) == 2 and all(text(f.summary).endswith("unchanged characters") for f in folds)
    for summary in section.select(".diff-text summary"):
        summary.extract()
    for side in section.select(".diff-text"):  # the answer's text as shown, folded stretches included
        assert 60 * 1024 < len(side.get_text().encode("utf-8")) <= 64 * 1024


# --- the view alone ----------------------------------------------------------------------------------


CASE = Case(id="c", traceFixture="c.json", expectedRootCauseKeywords=["pool"], requiredEvidenceTools=["t"])


def result(status: str = "passed", evidence: Evidence | None = None) -> CaseResult:
    return CaseResult(
        caseId="c", title="c", status=status, passed=status == "passed", failedChecks=[], verdict="PASS",
        matchedKeywordCount=1, requiredKeywordCount=1, evidenceCoverage={}, toolCallCount=0, durationMs=None,
        evidence=evidence,
    )


def change(kind: ChangeKind, base: CaseResult, cur: CaseResult) -> CaseChange:
    return CaseChange("c", kind, base.status, cur.status, behaviour=compare_behaviour(base, cur))


def test_the_view_decides_what_to_show() -> None:
    config = SuiteConfig()
    old = Evidence("the pool", (ToolCall("t", True),), "PASSED", "FULL", "sha256:1")
    base = result(evidence=old)
    same = comparison_view(CASE, base, result("failed", old), change(ChangeKind.REGRESSED, base, result("failed", old)), config)
    assert same.state == UNCHANGED and "the case or the rules changed" in same.message
    assert comparison_view(CASE, result(), result(evidence=old), None, config).state == NO_EVIDENCE
    unread = Evidence(None, (), None, None, None)
    assert comparison_view(CASE, result(evidence=old), result(evidence=unread), None, config).state == UNREADABLE
    # A digest unknown on one side with answers on both: compared, whatever the digests would say.
    unknown = Evidence("the pool is full", (), None, None, None)
    view = comparison_view(CASE, base, result("failed", unknown), change(ChangeKind.REGRESSED, base, result("failed", unknown)), config)
    assert view.state == COMPARED and view.answers is not None
    assert view.tools == ()  # one trace a side: the aligned trajectory instead of a table of tools
    assert view.trajectory is not None and [(row.kind, row.first) for row in view.trajectory.rows] == [("removed", True)]
    assert view.trajectory.rows[0].before is not None and view.trajectory.rows[0].before.required
    # The same answer in a changed trace: no columns of text, one line saying so.
    moved = Evidence("the pool", (ToolCall("t", False),), "PASSED", "FULL", "sha256:2")
    view = comparison_view(CASE, base, result("failed", moved), change(ChangeKind.FIXED, base, result("failed", moved)), config)
    assert view.state == COMPARED and view.answers is None and view.diff_note == "The answers are the same."
