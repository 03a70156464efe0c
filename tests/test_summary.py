"""Job summaries: appended to $GITHUB_STEP_SUMMARY by `diff` (and `build`), headline plus regressions."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import JUnitXml
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.diff import compare_reports
from sitegen.errors import BadInput
from sitegen.report import CaseResult, build_report, report_json
from sitegen.summary import FAILING_ROWS, append_step_summary, build_summary_markdown, fit_summary, report_headline


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


def test_summary_with_baseline_shows_the_regressions() -> None:
    baseline = build_report([_result("a", True), _result("b", True)])
    current = build_report([_result("a", True), _result("b", False)])
    text = build_summary_markdown(current, compare_reports(baseline, current))
    assert "## Baseline diff" in text
    assert "❌ **1 of 2 cases passed**" in text
    regressions = text.split("### Regressions", 1)[1]
    assert "| b |" in regressions and "passed" in regressions
    assert "### Failing cases" not in text


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
    assert text.startswith("## Baseline diff")
    assert "### Regressions (" in text and "| a |" in text


def test_diff_command_without_the_variable_writes_no_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    base = tmp_path / "base.json"
    base.write_text(report_json(build_report([_result("a", True)])), encoding="utf-8")
    result = CliRunner().invoke(app, ["diff", str(base), str(base), "--json", str(tmp_path / "d.json")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json", "d.json"]


def test_build_gate_writes_site_junit_and_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pull-request step of the workflow: `sitegen build --fail-on-regression --junit site/junit.xml`."""
    monkeypatch.chdir(tmp_path)
    cases, fixtures = write_suite(
        tmp_path / "eval",
        [make_case(id="stays", traceFixture="stays.json"), make_case(id="breaks", traceFixture="breaks.json")],
        {"stays.json": make_trace(verdict="PASS"), "breaks.json": make_trace(verdict="PASS")},
    )
    suite = ["--cases", str(cases), "--fixtures", str(fixtures)]
    runner = CliRunner()
    baseline = runner.invoke(app, ["evaluate", *suite, "--json", "baseline.json"])
    assert baseline.exit_code == 0, baseline.output
    (fixtures / "breaks.json").write_text('{"session": {"answer": ""}}', encoding="utf-8")
    summary = tmp_path / "step-summary.md"
    result = runner.invoke(
        app,
        ["build", *suite, "--baseline", "baseline.json", "--fail-on-regression", "--junit", "site/junit.xml"],
        env={"GITHUB_STEP_SUMMARY": str(summary), "SOURCE_DATE_EPOCH": "1700000000"},
    )
    assert result.exit_code == 1, result.output
    assert (tmp_path / "site" / "index.html").is_file()
    testcases = {case.name: case for case in list(JUnitXml.fromfile(str(tmp_path / "site" / "junit.xml")))[0]}
    assert set(testcases) == {"stays", "breaks"}
    assert testcases["stays"].is_passed and not testcases["breaks"].is_passed
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## Diagnosis eval\n\n❌ **1 of 2 cases passed**")
    assert "### Regressions" in text and "| breaks |" in text
