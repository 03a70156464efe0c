"""Trials against a baseline: a check's identity ignores its trial counts, and a trial policy flip fails the gate
only when the trial pass rate moved by more than chance (eval/README.md, "Comparing with the baseline")."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.checks import parse_check
from sitegen.cli import app
from sitegen.compare.changes import CaseChange, known_failures, within_noise_cases
from sitegen.compare.diff_markdown import diff_markdown
from sitegen.compare.diff_json import diff_document
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.terminal import diff_text
from sitegen.compare.wording import format_headline, item_message
from sitegen.evaluation.engine import evaluate_suite
from sitegen.report.junit import junit_xml
from sitegen.report.report_json import report_json
from sitegen.report.results import Report
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import load_cases

runner = CliRunner()
GOOD = make_trace("the pool has a leak", tools=["query_logs"])
BAD_VERDICT = make_trace("the pool has a leak", verdict="WEIRD", tools=["query_logs"])


def _case(**fields: Any) -> dict[str, Any]:
    defaults = {"id": "c1", "traceFixture": "c1", "expectedRootCauseKeywords": ["pool", "leak"],
                "requiredEvidenceTools": ["query_logs"]}
    return make_case(**{**defaults, **fields})


def _suite(root: Path, passing: int, total: int) -> tuple[Path, Path]:
    traces = [GOOD] * passing + [BAD_VERDICT] * (total - passing)
    if total == 1:
        return write_suite(root, [_case(traceFixture="c1.json")], {"c1.json": traces[0]})
    return write_suite(root, [_case()], {f"c1/trial-{n:03d}.json": t for n, t in enumerate(traces, 1)})


def _report(root: Path, passing: int, total: int, policy: str = "all") -> Report:
    cases, fixtures = _suite(root, passing, total)
    return evaluate_suite(load_cases(cases), fixtures, SuiteConfig(trialPolicy=policy))


def _junit(report: Report, changes: list[CaseChange], mode: str = "skip") -> ET.Element:
    """The JUnit XML as the CLI writes it against a baseline (the known and within-noise cases from compare.changes)."""
    return ET.fromstring(junit_xml(
        report, "suite", known_failures=known_failures(changes),
        within_noise=within_noise_cases(changes), known_failure_mode=mode,
    ))  # fmt: skip


def test_check_identity_drops_only_the_trial_suffix() -> None:
    assert parse_check("forbidden_verdict: WEIRD (in 2 of 5 trials)").identity == "forbidden_verdict: WEIRD"
    assert parse_check("forbidden_verdict: WEIRD").identity == "forbidden_verdict: WEIRD"
    assert parse_check("x: said (in 2 of 5 trials) twice").identity == "x: said (in 2 of 5 trials) twice"


# --- 1. the same check at other counts is neither new nor resolved -------------------------------------------


def test_a_check_failing_on_both_sides_at_other_counts_is_neither_new_nor_resolved(tmp_path: Path) -> None:
    baseline, current = _report(tmp_path / "a", 3, 5), _report(tmp_path / "b", 2, 5)
    assert baseline.results[0].failedChecks != current.results[0].failedChecks  # "in 2 of 5" against "in 3 of 5"
    diff = compare_reports(baseline, current)
    change = diff.caseChanges[0]
    assert (change.change, change.newFailedChecks, change.resolvedChecks) == ("still_failing", (), ())
    data = diff_document(diff)["caseChanges"][0]
    assert data["newFailedChecks"] == [] and data["resolvedChecks"] == []
    skipped = _junit(current, diff.caseChanges).findall(".//skipped")
    assert skipped and not any("new since the baseline" in s.get("message", "") for s in skipped)
    assert "New failed checks" not in diff_markdown(diff).split("## Known failures")[0]


def test_a_regressed_trial_case_names_its_checks_once(tmp_path: Path) -> None:
    # 5/5 → 0/5: the check is new (the baseline had none); resolved stays empty.
    diff = compare_reports(_report(tmp_path / "a", 5, 5), _report(tmp_path / "b", 0, 5))
    change = diff.caseChanges[0]
    assert change.change == "regressed" and change.resolvedChecks == ()
    assert len(change.newFailedChecks) == 1 and change.newFailedChecks[0].endswith(" (in 5 of 5 trials)")
    passed = next(item for item in diff.items if item.metric == "passed")
    assert passed.type == "REGRESSION" and passed.checks == list(change.newFailedChecks)


def _build_against(tmp_path: Path, before: tuple[int, int], now: tuple[int, int], *extra: str) -> tuple[Any, Path]:
    """`sitegen build --fail-on-regression` of a suite with `now` trials passing against a baseline of `before`."""
    cases, fixtures = _suite(tmp_path / "b", *now)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(report_json(_report(tmp_path / "a", *before)), encoding="utf-8")
    out = tmp_path / "site"
    result = runner.invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--baseline", str(baseline),
                                 "--out", str(out), "--run-id", "r", "--fail-on-regression", *extra])
    return result, out


def test_the_case_page_says_known_failure_without_new_or_resolved_checks(tmp_path: Path) -> None:
    result, out = _build_against(tmp_path, (3, 5), (2, 5))
    assert result.exit_code == 0, result.output
    page = BeautifulSoup(next((out / "cases").glob("*.html")).read_text(encoding="utf-8"), "html.parser")
    statement = page.select_one("#change .case-change-statement").get_text()
    assert statement == "Known failure: it failed in the baseline too."
    assert "Resolved checks" not in page.select_one("#change").get_text()
    assert page.select(".new-mark") == []


# --- 2. a policy flip within chance is within noise -----------------------------------------------------------


def _diff_cli(tmp_path: Path, before: Report, after: Report) -> Any:
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    base.write_text(report_json(before), encoding="utf-8")
    cur.write_text(report_json(after), encoding="utf-8")
    return runner.invoke(app, ["diff", str(base), str(cur), "--json", str(tmp_path / "diff.json"), "--fail-on-regression"])


@pytest.mark.parametrize(
    ("policy", "now", "change", "passed_item", "exit_code"),
    [
        ("all", 4, "within_noise", "CHANGED", 0),  # 5/5 → 4/5 fails pass^5, p = 0.5
        ("all", 0, "regressed", "REGRESSION", 1),  # 5/5 → 0/5, p = 0.004
        ("majority", 4, "still_passing", None, 0),  # the policy still passes it
        ("majority", 2, "within_noise", "CHANGED", 0),  # 5/5 → 2/5 flips the majority, p = 0.083
        ("majority", 0, "regressed", "REGRESSION", 1),
    ],
)
def test_a_flip_is_a_regression_only_beyond_chance(
    tmp_path: Path, policy: str, now: int, change: str, passed_item: str | None, exit_code: int
) -> None:
    before, after = _report(tmp_path / "a", 5, 5, policy), _report(tmp_path / "b", now, 5, policy)
    diff = compare_reports(before, after)
    assert [c.change for c in diff.caseChanges] == [change]
    assert next((i.type for i in diff.items if i.metric == "passed"), None) == passed_item
    assert diff.hasRegression == bool(exit_code) and diff.caseRegressionCount == exit_code
    result = _diff_cli(tmp_path, before, after)
    assert result.exit_code == exit_code, result.output
    data = json.loads((tmp_path / "diff.json").read_text(encoding="utf-8"))
    assert data["caseChangeCounts"]["within_noise"] == (change == "within_noise")
    assert data["hasRegression"] == bool(exit_code)


def test_within_noise_is_in_the_headline_and_diff_md(tmp_path: Path) -> None:
    diff = compare_reports(_report(tmp_path / "a", 5, 5), _report(tmp_path / "b", 4, 5))
    assert format_headline(diff.headline()).startswith("no case regressed · 1 within noise; pass rate")
    markdown = diff_markdown(diff)
    assert "**no case regressed · 1 within noise**" in markdown and "## Within noise (1)" in markdown
    assert "✅ **No regression**" in markdown
    passed = next(item for item in diff.items if item.metric == "passed")
    assert "within noise: 5/5 → 4/5 trials passed" in item_message(passed)
    text = diff_text(diff).splitlines()
    assert "  No regression" in text and "Within noise (1)" in text and "  ≈ c1: passed → failed" in text


def test_a_fix_within_chance_is_within_noise_and_beyond_it_fixed(tmp_path: Path) -> None:
    noise = compare_reports(_report(tmp_path / "a", 4, 5), _report(tmp_path / "b", 5, 5))
    assert [c.change for c in noise.caseChanges] == ["within_noise"]
    assert next(i.type for i in noise.items if i.metric == "passed") == "CHANGED"
    fixed = compare_reports(_report(tmp_path / "c", 0, 5), _report(tmp_path / "d", 5, 5))
    assert [c.change for c in fixed.caseChanges] == ["fixed"]


def test_the_alpha_of_the_config_decides(tmp_path: Path) -> None:
    before, after = _report(tmp_path / "a", 5, 5), _report(tmp_path / "b", 0, 5)  # p = 0.004
    assert [c.change for c in compare_reports(before, after, alpha=0.001).caseChanges] == ["within_noise"]


@pytest.mark.parametrize(("before", "after"), [((1, 1), (0, 1)), ((5, 5), (0, 1)), ((1, 1), (4, 5))])
def test_a_single_trial_on_either_side_keeps_the_seed_rule(tmp_path: Path, before: tuple, after: tuple) -> None:
    diff = compare_reports(_report(tmp_path / "a", *before), _report(tmp_path / "b", *after))
    assert [c.change for c in diff.caseChanges] == ["regressed"] and diff.hasRegression


def test_junit_skips_the_failed_trials_of_a_case_within_noise(tmp_path: Path) -> None:
    before, after = _report(tmp_path / "a", 5, 5), _report(tmp_path / "b", 4, 5)
    changes = compare_reports(before, after).caseChanges
    root = _junit(after, changes)
    assert root.find(".//failure") is None
    assert [s.get("message", "").split(" (")[0] for s in root.findall(".//skipped")] == ["within noise of the baseline"]
    failing = _junit(after, changes, "fail")
    assert len(failing.findall(".//failure")) == 1


def test_build_junit_skips_the_failed_trial_of_a_case_within_noise(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result, _ = _build_against(tmp_path, (5, 5), (4, 5), "--junit", str(junit))
    assert result.exit_code == 0, result.output
    root = ET.fromstring(junit.read_text(encoding="utf-8"))
    assert root.find(".//failure") is None
    (skipped,) = root.findall(".//skipped")
    assert skipped.get("message", "").startswith("within noise of the baseline (") and "verdict" in skipped.get("message")
    result, _ = _build_against(tmp_path, (5, 5), (4, 5), "--junit", str(junit), "--junit-known-failures", "fail")
    assert len(ET.fromstring(junit.read_text(encoding="utf-8")).findall(".//failure")) == 1


def test_the_site_badges_and_filters_a_case_within_noise(tmp_path: Path) -> None:
    result, out = _build_against(tmp_path, (5, 5), (4, 5))
    assert result.exit_code == 0, result.output
    assert "no case regressed · 1 within noise" in result.output
    index = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser")
    options = {o["value"]: o.get_text() for o in index.select("#filter-change option")}
    assert options.get("within_noise") == "within noise"
    assert index.select_one('tr[data-change="within_noise"] .change-noise') is not None
    diff_page = BeautifulSoup((out / "diff.html").read_text(encoding="utf-8"), "html.parser")
    assert diff_page.select_one('a.stat-link[href="#within-noise"]') is not None
    assert [row["data-change"] for row in diff_page.select("#within-noise tbody tr")] == ["within_noise"]
    assert "1 within noise" in diff_page.select_one(".banner").get_text()
    page = BeautifulSoup(next((out / "cases").glob("*.html")).read_text(encoding="utf-8"), "html.parser")
    assert page.select_one("main")["data-change"] == "within_noise"
    assert page.select_one("#change .case-change-statement").get_text().startswith("Within noise:")


def test_a_trial_case_page_says_what_its_header_and_sections_show(tmp_path: Path) -> None:
    result, out = _build_against(tmp_path, (5, 5), (3, 5))  # trials 4 and 5 fail; the sections show trial 4
    assert result.exit_code == 0, result.output
    page = BeautifulSoup(next((out / "cases").glob("*.html")).read_text(encoding="utf-8"), "html.parser")
    facts = {div.dt.get_text(): div.dd.get_text() for div in page.select("#result dl.facts:not(.annotations) > div")}
    assert facts["Verdict"] == "PASS (the most common of 5 trials)"
    assert facts["Shown below"] == "trial 4 of 5 (c1/trial-004.json)"
    assert "Tool calls (mean of 5 trials)" in facts and "Duration (mean of 5 trials)" in facts
    assert facts["Keywords (lowest of 5 trials)"].startswith("2/2")
    assert facts["Trace"] == "c1 · a folder of 5 trials"
    assert page.select_one("#result .verdict")["title"] == "the most common verdict of 5 trials"
