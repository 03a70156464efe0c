"""Report aggregation, byte-stable JSON, Markdown escaping, reading reports back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import ROOT, check_golden, make_case, make_trace, write_suite
from sitegen.evaluation.engine import evaluate_suite
from sitegen.report.report_json import read_report, report_json
from sitegen.report.report_markdown import report_markdown
from sitegen.report.results import Report, build_report
from sitegen.suite.config import SuiteConfig, load_config
from sitegen.suite.loading import load_cases

GOLDEN = ROOT / "tests" / "golden" / "report"


def small_suite(tmp_path: Path) -> tuple[Path, Path]:
    cases = [
        make_case(id="pass-1", title="支付超时", expectedRootCauseKeywords=["连接池"], tags=["domain:db"]),
        make_case(id="fail-1", traceFixture="f.json", allowedVerdicts=["PASS", "LOW_CONFID"], requiredEvidenceTools=["query_logs"]),
        make_case(id="missing-1", traceFixture="missing.json"),
        make_case(id="invalid-1", traceFixture="bad.json"),
    ]
    pass_trace = make_trace("连接池耗尽", tools=["query_logs", "query_metrics"])
    fail_trace = make_trace("不确定", verdict="LOW_CONFID")
    fail_trace["session"]["totalDurationMs"] = 2000
    return write_suite(tmp_path, cases, {"c1.json": pass_trace, "f.json": fail_trace, "bad.json": "{"})


def test_aggregates(tmp_path: Path) -> None:
    cases, fixtures = small_suite(tmp_path)
    report = evaluate_suite(load_cases(cases), fixtures, SuiteConfig())
    # Two could not be evaluated: a missing trace and one that is not a trace.
    assert (report.totalCases, report.passedCases, report.failedCases, report.notRunCases) == (4, 1, 1, 2)
    assert report.passRate == 0.25
    assert report.verdictDistribution == {"LOW_CONFID": 1, "MISSING": 2, "PASS": 1}
    # averages are over the two traces that were read, not over missing or invalid ones
    assert report.averageToolCallCount == 1.0
    assert report.averageDurationMs == 1500.0
    statuses = {r.caseId: r.status for r in report.results}
    assert statuses == {"pass-1": "passed", "fail-1": "failed", "missing-1": "not_run", "invalid-1": "not_run"}
    missing = report.results[2]
    assert missing.failedChecks[0].startswith("fixture_missing: ") and missing.durationMs is None


def test_average_duration_null_when_no_trace_has_one() -> None:
    assert build_report([]).averageDurationMs is None


def test_json_shape_and_order(tmp_path: Path) -> None:
    cases, fixtures = small_suite(tmp_path)
    data = json.loads(report_json(evaluate_suite(load_cases(cases), fixtures, SuiteConfig())))
    assert list(data) == [
        "formatVersion", "totalCases", "passedCases", "failedCases", "notRunCases", "passRate",
        "verdictDistribution", "averageToolCallCount", "averageDurationMs", "tokensPerPassingCase", "costPerPassingCase",
        "results",
    ]  # fmt: skip
    assert [r["caseId"] for r in data["results"]] == ["pass-1", "fail-1", "missing-1", "invalid-1"]


def test_json_is_byte_identical_and_utf8(tmp_path: Path) -> None:
    cases, fixtures = small_suite(tmp_path)
    first = report_json(evaluate_suite(load_cases(cases), fixtures, SuiteConfig()))
    second = report_json(evaluate_suite(load_cases(cases), fixtures, SuiteConfig()))
    assert first == second
    assert '"title": "支付超时"' in first  # UTF-8, no \u escapes
    assert first.endswith("}\n")


def test_markdown_cells_cannot_break_the_table(tmp_path: Path) -> None:
    evil = "a|b\n<script>alert(1)</script> [x](javascript:alert(1))"
    cases, fixtures = write_suite(
        tmp_path, [make_case(id=evil, forbiddenAnswerKeywords=["|"])], {"c1.json": make_trace("x | y")}
    )
    md = report_markdown(evaluate_suite(load_cases(cases), fixtures, SuiteConfig()))
    table_lines = [line for line in md.splitlines() if line.startswith("| ") and "fail" in line]
    assert len(table_lines) == 1
    row = table_lines[0]
    assert row.count(" | ") == 5, row  # six cells: no extra column from the id's '|'
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert not re.search(r"(?<!\\)\]\(javascript", md) and "\\[x\\](javascript" in md


def test_read_report_round_trip(tmp_path: Path) -> None:
    cases, fixtures = small_suite(tmp_path)
    report = evaluate_suite(load_cases(cases), fixtures, SuiteConfig())
    path = tmp_path / "report.json"
    path.write_text(report_json(report), encoding="utf-8")
    assert report_json(read_report(path)) == report_json(report)


@pytest.mark.parametrize("layout", ["sitegen", "compact", "no results"])
def test_a_report_read_before_is_read_alike_the_quick_way(tmp_path: Path, layout: str) -> None:
    # The sealed path (a baseline this sitegen read with every check before) parses a report_json layout result
    # by result, any other whole: either way the report is the one the full read gives.
    cases, fixtures = small_suite(tmp_path)
    report = evaluate_suite(load_cases(cases), fixtures, SuiteConfig())
    if layout == "no results":
        report = build_report([])
    text = report_json(report)
    if layout == "compact":
        text = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    full, quick = read_report(path), read_report(path, path.read_bytes(), checked=True)
    assert report_json(quick) == report_json(full) == report_json(report)
    assert quick.results == full.results and len(quick.results) == len(report.results)


def test_read_java_report(tmp_path: Path) -> None:
    java = {
        "totalCases": 1,
        "passedCases": 1,
        "passRate": 1.0,
        "verdictDistribution": {"PASS": 1},
        "averageToolCallCount": 3.0,
        "averageDurationMs": 1200.0,
        "generatedAt": "2026-01-01T00:00:00Z",
        "results": [
            {
                "caseId": "payment-timeout",
                "title": "Payment API timeout",
                "passed": True,
                "failedChecks": [],
                "verdict": "PASS",
                "matchedKeywordCount": 3,
                "requiredKeywordCount": 3,
                "evidenceCoverage": {"query_logs": True},
                "toolCallCount": 3,
                "durationMs": 1200,
            }
        ],
    }
    path = tmp_path / "java.json"
    path.write_text(json.dumps(java), encoding="utf-8")
    report = read_report(path)
    assert report.results[0].status == "passed" and report.results[0].tags == [] and report.failedCases == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "invalid JSON"),
        ("[]", "expected a report JSON object"),
        ("{}", "field 'results'"),
        ('{"results": [{}]}', "results[0]"),
        ('{"formatVersion": 99, "results": []}', "field 'formatVersion': expected 1 or lower, got 99"),
    ],
)
def test_read_bad_report(tmp_path: Path, text: str, message: str) -> None:
    from sitegen.errors import BadInput

    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput, match=message):
        read_report(path)


def shipped_report() -> Report:
    config = load_config(ROOT / "eval/sitegen.toml")
    return evaluate_suite(load_cases(ROOT / "eval/cases/diagnosis-cases.json"), ROOT / "eval/fixtures", config)


def test_shipped_suite_reports_match_golden() -> None:
    """Golden files of the shipped suite; regenerate with SITEGEN_REGEN_GOLDEN=1 (see tests/README.md)."""
    report = shipped_report()
    check_golden(report_json(report), GOLDEN / "shipped-report.json")
    check_golden(report_markdown(report), GOLDEN / "shipped-report.md")


def test_committed_baseline_is_reproducible() -> None:
    """`sitegen baseline` on unchanged inputs must not change a byte of eval/baseline."""
    report = shipped_report()
    assert (ROOT / "eval/baseline/report.json").read_text(encoding="utf-8") == report_json(report)
    assert (ROOT / "eval/baseline/report.md").read_text(encoding="utf-8") == report_markdown(
        report, title="Diagnosis eval baseline"
    )
