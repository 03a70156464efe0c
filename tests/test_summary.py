"""Job summaries: appended to $GITHUB_STEP_SUMMARY by `diff` (and `build`), headline plus regressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from junitparser import Failure, JUnitXml, Skipped
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from helpers import ROOT, check_golden, make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.diff_report import compare_reports
from sitegen.compare.job_summary import (
    FAILING_ROWS,
    WARNING_ROWS,
    append_step_summary,
    build_summary_markdown,
    fit_summary,
    report_headline,
)
from sitegen.errors import BadInput
from sitegen.report.report_json import report_json
from sitegen.report.results import CaseResult, build_report


def _result(case_id: str, passed: bool, checks: list[str] | None = None) -> CaseResult:
    return CaseResult(
        caseId=case_id,
        title=case_id,
        status="passed" if passed else "failed",
        passed=passed,
        failedChecks=checks or ([] if passed else ["verdict_not_allowed: verdict 'REJECT' is not allowed"]),
        verdict="PASS" if passed else "REJECT",
        matchedKeywordCount=1,
        requiredKeywordCount=1,
        evidenceCoverage={},
        toolCallCount=2,
        durationMs=100,
    )


def test_append_is_a_no_op_without_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert append_step_summary("# hi") is False


def test_append_adds_to_existing_content(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier step output\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    assert append_step_summary("## First") is True
    assert append_step_summary("## 第二\n") is True
    assert target.read_text(encoding="utf-8") == "earlier step output\n\n## First\n\n## 第二\n"


def test_unwritable_summary_is_bad_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing-dir" / "summary.md"))
    with pytest.raises(BadInput, match="GITHUB_STEP_SUMMARY"):
        append_step_summary("x")


def test_fit_summary_cuts_at_a_line_and_says_so() -> None:
    text = "".join(f"| row {i} | 证据 |\n" for i in range(1000))
    fitted = fit_summary(text, limit=2000)
    assert len(fitted.encode("utf-8")) <= 2000
    body, note = fitted.rsplit("\n\n", 1)
    assert all(line.startswith("| row ") and line.endswith(" |") for line in body.splitlines())
    assert "truncated" in note
    assert fit_summary("short\n", limit=2000) == "short\n"


def test_headline_counts() -> None:
    report = build_report([_result("a", True), _result("b", False)])
    assert report_headline(report) == "❌ **1 of 2 cases passed** (pass rate 50.0%) · 1 failed · 0 not run"


def test_summary_without_baseline_lists_failing_cases() -> None:
    report = build_report([_result("ok", True), _result("bad|<b>", False)])
    text = build_summary_markdown(report)
    assert text.startswith("## Diagnosis eval\n\n❌ **1 of 2 cases passed**")
    assert "### Failing cases (1)" in text
    assert "| bad\\|&lt;b&gt; | failed | verdict\\_not\\_allowed |" in text
    assert "Baseline diff" not in text


def test_summary_caps_the_failing_list() -> None:
    report = build_report([_result(f"c{i}", False) for i in range(FAILING_ROWS + 5)])
    text = build_summary_markdown(report)
    assert text.count("| failed |") == FAILING_ROWS
    assert "…and 5 more in the full report." in text


def test_summary_ends_with_the_build_warnings() -> None:
    report = build_report([_result("ok", True)])
    warnings = ["the site is 0.85 GB, 85% of GitHub Pages' 1 GB limit: `--case-pages failing` <b>…</b>"]
    warnings += [f"case c{i}: unknown verdict" for i in range(WARNING_ROWS + 3)]
    text = build_summary_markdown(report, warnings=warnings)
    section = text.split(f"### Warnings ({WARNING_ROWS + 4})\n\n", 1)[1]
    items = section.splitlines()
    assert len(items) == WARNING_ROWS + 1 and items[-1] == "- …and 4 more in the job's log."
    assert markdown_text(items[0]).strip() == warnings[0]  # as said, never as markup
    assert "### Warnings" not in build_summary_markdown(report)


def markdown_text(markdown: str) -> str:
    """What a reader of the rendered Markdown sees."""
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    return BeautifulSoup(html, "html.parser").get_text()


def test_summary_with_baseline_leads_with_the_regressed_cases() -> None:
    baseline = build_report([_result("a", True), _result("b", True), _result("known", False)])
    current = build_report([_result("a", True), _result("b", False), _result("known", False)])
    text = build_summary_markdown(current, compare_reports(baseline, current))
    assert text.startswith("## Diagnosis eval\n\n**1 case regressed: b (verdict\\_not\\_allowed) · 1 known failure**\n")
    table = text.split("### Regressed and removed cases (1)", 1)[1]
    assert "| b | passed → failed | verdict\\_not\\_allowed | verdict\\_not\\_allowed: verdict 'REJECT' is not allowed |" in table
    assert text.rstrip().endswith("❌ **1 of 3 cases passed** (pass rate 33.3%) · 2 failed · 0 not run")
    assert "### Failing cases" not in text and "<details>" not in text


def test_summary_never_folds_the_regressed_cases() -> None:
    baseline = build_report([_result(f"c{i:03d}", True) for i in range(FAILING_ROWS * 3)])
    current = build_report([_result(f"c{i:03d}", False) for i in range(FAILING_ROWS * 3)])
    text = build_summary_markdown(current, compare_reports(baseline, current))
    assert "<details>" not in text
    assert sum(1 for line in text.splitlines() if "| passed → failed |" in line) == FAILING_ROWS * 3


def test_diff_command_appends_its_summary(tmp_path: Path) -> None:
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    base.write_text(report_json(build_report([_result("a", True)])), encoding="utf-8")
    cur.write_text(report_json(build_report([_result("a", False)])), encoding="utf-8")
    summary = tmp_path / "step-summary.md"
    result = CliRunner().invoke(
        app,
        ["diff", str(base), str(cur), "--markdown", str(tmp_path / "diff.md"), "--fail-on-regression"],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.exit_code == 1, result.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## Baseline diff\n\n**1 case regressed: a (verdict\\_not\\_allowed)**")
    assert "### Regressed and removed cases (1)" in text and "| a |" in text


def test_diff_command_without_the_variable_writes_no_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    base = tmp_path / "base.json"
    base.write_text(report_json(build_report([_result("a", True)])), encoding="utf-8")
    result = CliRunner().invoke(app, ["diff", str(base), str(base), "--json", str(tmp_path / "d.json")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json", "d.json"]


# One scenario end to end: a slow new case and one broken rule

SCENARIO_HEADLINE = "1 case regressed: mysql-slow-query (forbidden_answer_keyword) · 2 known failures · 1 new"
SLOW_TRACE = dict(make_trace(answer="磁盘 IO 饱和", tools=["query_metrics"] * 30))
SLOW_TRACE["session"] = dict(SLOW_TRACE["session"], totalDurationMs=600_000)


@pytest.fixture
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """A suite with two passing cases and two known failures, its baseline, then the user's change."""
    monkeypatch.chdir(tmp_path)
    cases = [
        make_case(id="mysql-slow-query", traceFixture="mysql.json", forbiddenAnswerKeywords=["重启 MySQL"]),
        make_case(id="disk-full", traceFixture="disk.json"),
        make_case(id="known-bad-verdict", traceFixture="verdict.json", tags=["example:known-bad"]),
        make_case(id="known-bad-evidence", traceFixture="evidence.json", requiredEvidenceTools=["query_logs"]),
    ]
    traces = {
        "mysql.json": make_trace(answer="慢查询拖垮了连接池，先加索引"),
        "disk.json": make_trace(answer="磁盘满了"),
        "verdict.json": make_trace(verdict="LOW_CONFID"),
        "evidence.json": make_trace(),
    }
    cases_path, fixtures = write_suite(tmp_path / "eval", cases, traces)
    suite = ["--cases", str(cases_path), "--fixtures", str(fixtures)]
    made = CliRunner().invoke(app, ["evaluate", *suite, "--json", "baseline.json"])
    assert made.exit_code == 0, made.output
    # The change: a slow but passing case, and one rule broken in another case.
    cases.append(make_case(id="slow-new-case", traceFixture="slow.json"))
    write_suite(tmp_path / "eval", cases, {"slow.json": SLOW_TRACE,
                                           "mysql.json": make_trace(answer="慢查询拖垮了连接池，建议重启 MySQL")})
    return suite, fixtures


def test_done_when_the_build_names_the_one_regressed_case(scenario: tuple[list[str], Path], tmp_path: Path) -> None:
    suite, _ = scenario
    summary = tmp_path / "step-summary.md"
    args = ["build", *suite, "--baseline", "baseline.json", "--fail-on-regression", "--junit", "site/junit.xml"]
    env = {"GITHUB_STEP_SUMMARY": str(summary), "SOURCE_DATE_EPOCH": "1700000000"}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 1, result.output
    assert f"against baseline.json: {SCENARIO_HEADLINE}; pass rate 50.0% → 40.0% (-10.0 points; 1 regressed, 0 fixed: p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression)" in result.stdout
    assert result.stderr.endswith("gate failed: 1 case regressed (against baseline.json)\n"), result.stderr
    text = summary.read_text(encoding="utf-8")
    assert SCENARIO_HEADLINE in markdown_text(text).splitlines()
    check_golden(text, ROOT / "tests" / "golden" / "diff" / "scenario-build-summary.md")
    diff = json.loads((tmp_path / "site" / "diff.json").read_text(encoding="utf-8"))
    assert (diff["caseRegressionCount"], diff["hasRegression"]) == (1, True)
    assert [i["type"] for i in diff["items"] if i["metric"].startswith("average")] == ["CHANGED", "CHANGED"]
    assert SCENARIO_HEADLINE in markdown_text((tmp_path / "site" / "diff.md").read_text(encoding="utf-8"))

    suite_xml = list(JUnitXml.fromfile(str(tmp_path / "site" / "junit.xml")))[0]
    testcases = {case.name: case for case in suite_xml}
    assert (suite_xml.tests, suite_xml.failures, suite_xml.skipped) == (5, 1, 2)
    (failure,) = testcases["mysql-slow-query"].result
    assert isinstance(failure, Failure) and failure.type == "forbidden_answer_keyword"
    for name, code in (("known-bad-verdict", "verdict_not_allowed"), ("known-bad-evidence", "missing_evidence_tool")):
        (skipped,) = testcases[name].result
        assert isinstance(skipped, Skipped) and skipped.message.startswith(f"known failure since the baseline: {code}: ")
    assert testcases["slow-new-case"].is_passed and testcases["disk-full"].is_passed


def test_done_when_known_failures_can_fail_the_junit_report(scenario: tuple[list[str], Path], tmp_path: Path) -> None:
    suite, _ = scenario
    args = ["build", *suite, "--baseline", "baseline.json", "--junit", "j.xml", "--junit-known-failures", "fail"]
    result = CliRunner().invoke(app, args, env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.exit_code == 0, result.output  # no --fail-on-regression
    suite_xml = list(JUnitXml.fromfile(str(tmp_path / "j.xml")))[0]
    assert (suite_xml.failures, suite_xml.skipped) == (3, 0)
    bad = CliRunner().invoke(app, [*args[:-1], "sometimes"])
    assert bad.exit_code == 2 and "--junit-known-failures" in bad.output


def test_done_when_the_diff_command_names_the_one_regressed_case(scenario: tuple[list[str], Path], tmp_path: Path) -> None:
    suite, _ = scenario
    runner = CliRunner()
    assert runner.invoke(app, ["evaluate", *suite, "--json", "current.json"]).exit_code == 0
    summary = tmp_path / "step-summary.md"
    result = runner.invoke(app, ["diff", "baseline.json", "current.json", "--markdown", "diff.md", "--fail-on-regression"],
                           env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(f"diff: {SCENARIO_HEADLINE}; pass rate 50.0% → 40.0% (-10.0 points; 1 regressed, 0 fixed: p = 1.00, too few flips to tell from chance (it takes 6 all one way); the gate fails on any regression)")
    assert result.stderr == "gate failed: 1 case regressed (against baseline.json)\n"
    assert SCENARIO_HEADLINE in markdown_text((tmp_path / "diff.md").read_text(encoding="utf-8")).splitlines()
    assert SCENARIO_HEADLINE in markdown_text(summary.read_text(encoding="utf-8")).splitlines()


def test_done_when_the_gate_fails_for_the_broken_case_alone(scenario: tuple[list[str], Path], tmp_path: Path) -> None:
    suite, fixtures = scenario
    # Mend the broken case: the slow new case remains, and it alone never fails the gate.
    write_suite(fixtures.parent, json.loads(Path(suite[1]).read_text(encoding="utf-8")),
                {"mysql.json": make_trace(answer="慢查询拖垮了连接池，先加索引")})
    result = CliRunner().invoke(app, ["build", *suite, "--baseline", "baseline.json", "--fail-on-regression"],
                                env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.exit_code == 0, result.output
    assert "against baseline.json: no case regressed · 2 known failures · 1 new; pass rate 50.0% → 60.0%" in result.stdout
