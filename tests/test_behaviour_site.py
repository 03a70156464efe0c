"""Passing cases that behave differently, seen everywhere a reader looks: the terminal, diff.md, the job summary, the
site's banner, the index's Change filter and rows, the case page's header and its aligned trajectory; never a gate
failure or a JUnit failure; a case whose trace did not change still plainly unchanged (tests/behaviour_suite.py)."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from contextlib import chdir
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from typer.testing import CliRunner

from behaviour_suite import ALIKE, CHANGED, HOSTILE, REWRITTEN, UNCHANGED, Scenario, build_behaviour_site
from helpers import ROOT
from site_audit import audit_site
from sitegen.cli import app
from sitegen.compare.behaviour import percent_changed
from sitegen.compare.similarity import similarity

# What each changed case's phrase says (the headline, diff.md's table, the case page's header).
PHRASES = {
    "db-connection-pool-exhaustion": "first diverged at step 2: query_metrics called with another input",
    "oom-restart": "first diverged at step 1: query_metrics called earlier than in the baseline",
    "milvus-retrieval-degradation": "verdict PASS → LOW_CONFID",
    "dubbo-thread-pool-exhaustion": "no longer called query_traces",
    "matrix-composer-fallback": "first diverged at step 1: query_k8s_events called with another input",
}


def _answer_phrase() -> str:
    before = json.loads((ROOT / "eval" / "fixtures" / "payment-timeout-pass.json").read_text(encoding="utf-8"))["session"]["answer"]
    return f"answer {percent_changed(similarity(before, REWRITTEN))} % changed"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return build_behaviour_site(tmp_path_factory.mktemp("behaviour"))


def _text(node: Tag | None) -> str:
    assert node is not None
    return " ".join(node.get_text().split())


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _page(site: Path, case_id: str) -> BeautifulSoup:
    (path,) = [p for p in (site / "cases").glob(f"{case_id}-*.html") if re.fullmatch(rf"{re.escape(case_id)}-[0-9a-f]{{10}}\.html", p.name)]
    return _soup(path)


def _phrase(case_id: str) -> str:
    return _answer_phrase() if case_id == "payment-timeout" else PHRASES[case_id]


def test_every_change_is_classified_and_none_fails_the_gate(scenario: Scenario) -> None:
    changes = {entry["caseId"]: entry for entry in scenario.diff["caseChanges"]}
    for case_id, reasons in CHANGED.items():
        assert (changes[case_id]["change"], tuple(changes[case_id]["behaviourChanges"])) == ("changed", reasons), case_id
        assert changes[case_id]["behaviourChanged"] is True
    assert (changes[ALIKE]["change"], changes[ALIKE]["traceChanged"], changes[ALIKE]["behaviourChanged"]) == ("still_passing", True, False)
    assert (changes[UNCHANGED]["change"], changes[UNCHANGED]["traceChanged"], changes[UNCHANGED]["behaviourChanged"]) == (
        "still_passing", False, False
    )
    assert scenario.diff["caseChangeCounts"]["changed"] == len(CHANGED)
    assert scenario.exit_code == 0 and not scenario.diff["hasRegression"]  # --fail-on-regression passed
    junit = ET.parse(scenario.root / "junit.xml").getroot()
    cases = {case.get("name"): case for case in junit.iter("testcase")}
    for case_id in CHANGED:
        assert [child.tag for child in cases[case_id]] == [], case_id  # a plain pass: no failure, no skip


def test_the_tool_calls_item_names_the_first_divergence(scenario: Scenario) -> None:
    items = {(item["caseId"], item["metric"]): item for item in scenario.diff["items"]}
    moved = items[("oom-restart", "toolCalls")]["firstDivergence"]
    assert moved["step"] == 1 and moved["baseline"] is None and moved["current"].startswith('query_metrics({"promql":')
    assert len(moved["current"]) == len("query_metrics(") + 80 + len("…)")  # the input clipped to 80 characters
    # The same tools with the same outcomes, one input changed past its clip: no toolCalls item (its two sequences
    # would be the same), but toolInputs in its caseChanges entry, and the phrase names the step.
    assert ("db-connection-pool-exhaustion", "toolCalls") not in items
    report = json.loads((scenario.site / "report.json").read_text(encoding="utf-8"))
    calls = next(r for r in report["results"] if r["caseId"] == "db-connection-pool-exhaustion")["toolCalls"]
    metrics = next(call for call in calls if call["toolName"] == "query_metrics")
    assert len(metrics["input"]) == 501 and "tail" not in metrics["input"]  # the change lies past the clip


def test_the_terminal_names_each_case_with_its_phrase(scenario: Scenario) -> None:
    headline = next(line for line in scenario.stdout.splitlines() if line.startswith("against "))
    assert "no case regressed · 6 passing cases behave differently: " in headline
    for case_id in ("payment-timeout", *PHRASES):
        named = f"{case_id} ({_phrase(case_id)})" in headline  # the first five in the headline, the rest under it
        assert named or f"\n  {case_id} — {_phrase(case_id)}\n" in scenario.stdout, case_id
    assert "\n  matrix-composer-fallback — " in scenario.stdout
    assert "\u202e" not in scenario.stdout and "<script>" not in scenario.stdout


def test_diff_md_and_the_job_summary_list_them_in_a_table_of_their_own(scenario: Scenario) -> None:
    for markdown in (scenario.diff_md, scenario.summary):
        assert "**no case regressed · 6 passing cases behave differently: payment-timeout (" in markdown
        assert "Passing cases that behave differently (6)" in markdown
        for case_id in ("payment-timeout", *PHRASES):
            escaped = _phrase(case_id).replace("_", "\\_")
            assert f"| {case_id.replace('_', chr(92) + '_')} | {escaped} |" in markdown, case_id
        assert "\u202e" not in markdown and "<script" not in markdown


def test_the_banner_names_them_and_is_not_green(scenario: Scenario) -> None:
    banners = {name: _soup(scenario.site / name).select_one("#headline") for name in ("index.html", "diff.html")}
    for banner in banners.values():
        assert banner is not None and "banner-changed" in banner["class"] and "banner-good" not in banner["class"]
    banner = banners["index.html"]
    headline = _text(banner.select_one(".headline-text"))
    assert headline.startswith(f"no case regressed · 6 passing cases behave differently: payment-timeout ({_answer_phrase()}), ")
    for case_id in ("db-connection-pool-exhaustion", "oom-restart", "milvus-retrieval-degradation", "dubbo-thread-pool-exhaustion"):
        assert f"{case_id} ({PHRASES[case_id]})" in headline
    links = {a.get_text(): a["href"] for a in banner.select(".headline-text a")}
    assert links["payment-timeout"].startswith("cases/payment-timeout-") and links["and 1 more"] == "diff.html#changed-cases"
    assert [c.get_text() for c in banner.select(".headline-text code")][:2] == ["query_metrics", "query_metrics"]
    # The diff page's banner counts, each count linking its section, which names each case once.
    counts = banners["diff.html"].select_one(".headline-text")
    assert _text(counts).startswith("no case regressed · 6 passing cases behave differently · ")
    assert {a.get_text(): a["href"] for a in counts.select("a")}["6 passing cases behave differently"] == "#changed-cases"


def test_the_index_badges_each_row_and_its_filter_offers_them(scenario: Scenario) -> None:
    index = _soup(scenario.site / "index.html")
    options = {o["value"]: o.get_text() for o in index.select("#filter-change option")}
    assert options["changed"] == "behaves differently" and list(options)[1] == "changed"  # first: nothing regressed
    for case_id in (*CHANGED, ALIKE, UNCHANGED):
        link = index.select_one(f"tbody a[href^='cases/{case_id}-']")
        assert link is not None, case_id
        row = link.find_parent("tr")
        badge = _text(row.select_one(".change-badge"))
        expected = "Δ behaves differently" if case_id in CHANGED else "= still passing"
        assert (row["data-change"], badge) == ("changed" if case_id in CHANGED else "still_passing", expected), case_id


def test_each_case_page_says_what_changed_in_its_header(scenario: Scenario) -> None:
    for case_id in ("payment-timeout", *PHRASES):
        doc = _page(scenario.site, case_id)
        assert doc.select_one("main")["data-change"] == "changed"
        statement = doc.select_one("#change .case-change-statement")
        assert statement is not None and statement.get_text() == f"Still passing, but it behaves differently: {_phrase(case_id)}", case_id
        assert "unchanged" not in _text(doc.select_one("#result")).lower()
        assert doc.select_one("section#comparison") is not None  # then and now, right below
    alike = _page(scenario.site, ALIKE)
    assert _text(alike.select_one("#change .case-change-statement")) == (
        "Still passing, and it behaves alike: its trace changed, within the thresholds."
    )
    assert "unchanged" not in _text(alike.select_one("#result")).lower()
    plain = _page(scenario.site, UNCHANGED)
    assert _text(plain.select_one("#change .case-change-statement")) == (
        "Unchanged: it passed in the baseline too, with the very same trace."
    )
    assert _text(plain.select_one("#comparison")) == "The trace is unchanged since the baseline."


def test_the_case_pages_show_the_aligned_trajectories(scenario: Scenario) -> None:
    def steps(case_id: str) -> list[Any]:
        return _page(scenario.site, case_id).select("#comparison table.trajectory tbody tr")

    moved = steps("oom-restart")
    assert [tr["data-step"] for tr in moved] == ["added", "same", "removed", "same"]
    # Steps 2 and 3 the same on both sides: one row naming their calls once, across both columns.
    assert _text(moved[1].th) == "2–3 same" and moved[1].td["colspan"] == "2" and len(moved[1].select("code")) == 2
    clipped = steps("db-connection-pool-exhaustion")
    assert [tr["data-step"] for tr in clipped] == ["same", "input", "same"]
    assert "step-first" in clipped[1]["class"]
    assert "differ past their first 500 characters" in _text(clipped[1].th)
    dropped = steps("dubbo-thread-pool-exhaustion")
    assert [tr["data-step"] for tr in dropped].count("removed") == 1
    assert _text(_page(scenario.site, "payment-timeout").select_one("#trajectory + p.legend")) == (
        "Both runs made the same 4 tool calls in the same order with the same inputs."
    )
    answers = _page(scenario.site, "payment-timeout").select("#comparison .compare-side")
    assert len(answers) == 2 and "节点网络抖动" in _text(answers[1])


def test_hostile_inputs_on_both_sides_stay_text(scenario: Scenario) -> None:
    doc = _page(scenario.site, "matrix-composer-fallback")
    rows = doc.select("#comparison table.trajectory tbody tr")
    assert [tr["data-step"] for tr in rows[:2]] == ["input", "input"]
    html = str(doc.select_one("#comparison"))
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert len(html) < 60_000  # a megabyte input on both sides is clipped to 500 characters in the report
    for cell in rows[1].find_all("td"):  # the markup and the direction overrides as text, in a cell of their own
        assert HOSTILE in cell.get_text()
    assert all(len(cell.get_text()) < 1_000 for cell in rows[0].find_all("td"))
    assert audit_site(scenario.site) == []


def test_the_done_when_of_a_rewrite_that_keeps_its_keywords(tmp_path: Path) -> None:
    """The issue as a new user met it: only payment-timeout's answer rewritten; `build --fail-on-regression`."""
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    path = tmp_path / "eval" / "fixtures" / "payment-timeout-pass.json"
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["session"]["answer"] = REWRITTEN
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")
    with chdir(tmp_path):
        result = CliRunner().invoke(app, ["build", "--out", "site", "--fail-on-regression"], env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.exit_code == 0, result.output
    sentence = f"1 passing case behaves differently: payment-timeout ({_answer_phrase()})"
    assert f"no case regressed · {sentence} · 8 known failures" in result.stdout
    index = _soup(tmp_path / "site" / "index.html")
    assert sentence in _text(index.select_one("#headline"))
    page = _page(tmp_path / "site", "payment-timeout")
    assert page.select_one("#change .case-change-statement").get_text() == (  # type: ignore[union-attr]
        f"Still passing, but it behaves differently: {_answer_phrase()}"
    )
    changes = {c["caseId"]: c["change"] for c in json.loads((tmp_path / "site" / "diff.json").read_text(encoding="utf-8"))["caseChanges"]}
    assert [case for case, change in changes.items() if change == "changed"] == ["payment-timeout"]
    assert "still_passing" in changes.values() and set(changes.values()) == {"changed", "still_passing", "still_failing"}


def test_sitegen_diff_on_a_terminal_lists_them_in_a_section_of_their_own(scenario: Scenario) -> None:
    baseline = scenario.root / "eval" / "baseline" / "report.json"
    result = CliRunner().invoke(app, ["diff", str(baseline), str(scenario.site / "report.json"), "--fail-on-regression"])
    assert result.exit_code == 0, result.output
    section = result.stdout.split("\nPassing cases that behave differently (6)\n", 1)[1].split("\n\n", 1)[0]
    assert f"  Δ payment-timeout: passed → passed\n      what changed: {_answer_phrase()} (answer)" in section
    assert "  Δ oom-restart: passed → passed\n      what changed: " + PHRASES["oom-restart"] + " (tool order)" in section
    assert "\u202e" not in result.stdout  # a direction override in a recorded text is written as an escape


def test_a_changed_case_gets_a_page_under_case_pages_failing_and_changed(scenario: Scenario) -> None:
    baseline = scenario.root / "eval" / "baseline" / "report.json"
    for mode in ("failing", "changed"):
        with chdir(scenario.root):
            result = CliRunner().invoke(
                app, ["build", "--out", f"site-{mode}", "--case-pages", mode, "--baseline", str(baseline)],
                env={"SOURCE_DATE_EPOCH": "1700000000"},
            )  # fmt: skip
        assert result.exit_code == 0, result.output
        pages = {path.name.rsplit("-", 1)[0] for path in (scenario.root / f"site-{mode}" / "cases").glob("*.html")}
        assert set(CHANGED) <= pages and UNCHANGED not in pages and ALIKE not in pages, (mode, pages)


def test_a_baseline_without_inputs_still_works_and_says_so_once(tmp_path: Path) -> None:
    """A baseline of the sitegen before tool inputs were recorded: calls compared by tool and outcome, said once."""
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    baseline = tmp_path / "eval" / "baseline" / "report.json"
    data = json.loads(baseline.read_text(encoding="utf-8"))
    for result in data["results"]:
        result["toolCalls"] = [{"toolName": c["toolName"], "success": c["success"]} for c in result["toolCalls"]]
    baseline.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    path = tmp_path / "eval" / "fixtures" / "payment-timeout-pass.json"
    trace = json.loads(path.read_text(encoding="utf-8"))
    trace["toolInvocations"][1]["input"]["limit"] = 51  # another input: not seen against this baseline
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")
    with chdir(tmp_path):
        result = CliRunner().invoke(app, ["build", "--out", "site"], env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.exit_code == 0, result.output
    note = "the baseline does not record the tool calls' inputs, so a call made with another input is not seen"
    assert result.stdout.count(note) == 1
    site = tmp_path / "site"
    assert (site / "diff.md").read_text(encoding="utf-8").count(note) == 1
    diff_page = _soup(site / "diff.html")
    assert [_text(p) for p in diff_page.select("#headline .headline-note") if "inputs" in p.get_text()] == [
        "The baseline does not record the tool calls' inputs, so a call made with another input is not seen: "
        "regenerate it with sitegen baseline."
    ]
    assert "inputs" not in _text(_soup(site / "index.html").select_one("#headline"))  # once: on the diff page
    changes = {c["caseId"]: c for c in json.loads((site / "diff.json").read_text(encoding="utf-8"))["caseChanges"]}
    assert (changes["payment-timeout"]["change"], changes["payment-timeout"]["behaviourChanged"]) == ("still_passing", False)
    page = _page(site, "payment-timeout")
    assert "does not record the calls' inputs" in _text(page.select_one("#comparison"))
