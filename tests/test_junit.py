"""JUnit XML: one testcase per case, failures with every failed check, not-run cases and known failures skipped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Skipped
from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.diff import compare_reports
from sitegen.errors import UsageError
from sitegen.junit import case_classname, junit_xml, xml_text
from sitegen.report import CaseResult, build_report


def _result(case_id: str, status: str = "passed", checks: list[str] | None = None, **fields) -> CaseResult:
    data = dict(
        caseId=case_id,
        title=case_id,
        status=status,
        passed=status == "passed",
        failedChecks=checks or [],
        verdict="PASS",
        matchedKeywordCount=0,
        requiredKeywordCount=0,
        evidenceCoverage={},
        toolCallCount=0,
        durationMs=None,
        traceLoaded=status != "not_run",
    )
    data.update(fields)
    return CaseResult(**data)


def _parse(text: str, tmp_path: Path) -> JUnitXml:
    path = tmp_path / "junit.xml"
    path.write_text(text, encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def test_one_testcase_per_case_with_counts(tmp_path: Path) -> None:
    report = build_report(
        [
            _result("ok", durationMs=1500),
            _result("bad", "failed", ["verdict_not_allowed: verdict 'REJECT' is not allowed", "keyword_coverage: 0/2"]),
            _result("gone", "not_run", ["fixture_missing: gone.json does not exist"]),
        ]
    )
    xml = _parse(junit_xml(report, "diagnosis-cases"), tmp_path)
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert suite.name == "diagnosis-cases"
    assert (suite.tests, suite.failures, suite.skipped, suite.errors) == (3, 1, 1, 0)
    cases = {case.name: case for case in suite}
    assert list(cases) == ["ok", "bad", "gone"]
    assert cases["ok"].is_passed and cases["ok"].time == pytest.approx(1.5)
    (failure,) = cases["bad"].result
    assert isinstance(failure, Failure)
    assert failure.message == "verdict_not_allowed, keyword_coverage"
    assert failure.type == "verdict_not_allowed"
    assert failure.text.splitlines() == [
        "verdict_not_allowed: verdict 'REJECT' is not allowed",
        "keyword_coverage: 0/2",
    ]
    (skipped,) = cases["gone"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "fixture_missing: gone.json does not exist"


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["matrix:reject-safety", "other"], "matrix.reject-safety"),
        (["a/b c"], "a.b.c"),
        ([":"], "suite"),
        ([], "suite"),
    ],
)
def test_classname_from_first_tag_else_suite(tags: list[str], expected: str) -> None:
    assert case_classname(_result("x", tags=tags), "suite") == expected


def test_hostile_text_is_escaped_and_control_characters_dropped(tmp_path: Path) -> None:
    check = 'forbidden_answer_keyword: answer contains "</failure><script>&\x00\x1b\ufffe"'
    report = build_report([_result('id"<&>\x07', "failed", [check])])
    text = junit_xml(report, "s\x01uite")
    ET.fromstring(text.encode("utf-8"))  # well-formed XML 1.0
    (case,) = list(list(_parse(text, tmp_path))[0])
    assert case.name == 'id"<&>'
    assert case.result[0].text == 'forbidden_answer_keyword: answer contains "</failure><script>&"'


def test_xml_text_keeps_tabs_newlines_and_non_ascii() -> None:
    assert xml_text("a\tb\nc\r证据不足😀\x0b\x0c") == "a\tb\nc\r证据不足😀"


def test_failed_result_without_checks_still_fails(tmp_path: Path) -> None:
    report = build_report([_result("odd", "failed")])
    (case,) = list(list(_parse(junit_xml(report, "s"), tmp_path))[0])
    assert isinstance(case.result[0], Failure)


def test_output_is_byte_stable() -> None:
    report = build_report([_result("a", durationMs=12), _result("b", "failed", ["verdict_missing: no verdict"])])
    assert junit_xml(report, "s") == junit_xml(report, "s")
    assert junit_xml(report, "s").startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')


def test_evaluate_writes_junit(tmp_path: Path) -> None:
    cases_path, fixtures = write_suite(
        tmp_path,
        [
            make_case(id="pass", traceFixture="pass.json", tags=["matrix:happy"]),
            make_case(id="fail", traceFixture="fail.json"),
            make_case(id="absent", traceFixture="absent.json"),
        ],
        {"pass.json": make_trace(verdict="PASS"), "fail.json": make_trace(verdict="REJECT")},
    )
    target = tmp_path / "out" / "junit.xml"
    result = CliRunner().invoke(
        app, ["evaluate", "--cases", str(cases_path), "--fixtures", str(fixtures), "--junit", str(target)]
    )
    assert result.exit_code == 0, result.output
    suite = list(JUnitXml.fromfile(str(target)))[0]
    assert suite.name == "cases"
    cases = {case.name: case for case in suite}
    assert set(cases) == {"pass", "fail", "absent"}
    assert cases["pass"].classname == "matrix.happy" and cases["pass"].is_passed
    assert cases["fail"].classname == "cases"
    assert cases["fail"].result[0].type == "verdict_not_allowed"
    assert isinstance(cases["absent"].result[0], Skipped)
    assert cases["pass"].time == pytest.approx(1.0)


# --- with a baseline: known failures ------------------------------------------------------------------------------


def _with_baseline(tmp_path: Path, known_failures: str = "skip") -> dict[str, object]:
    baseline = build_report([
        _result("still-bad", "failed", ["keyword_coverage: 0/2"]),
        _result("worse", "failed", ["keyword_coverage: 0/2"]),
        _result("breaks", "passed"),
        _result("vanishes", "passed"),
        _result("never-ran", "not_run", ["fixture_missing: x.json does not exist"]),
        _result("ok", "passed"),
    ])
    current = build_report([
        _result("still-bad", "failed", ["keyword_coverage: 0/2"]),
        _result("worse", "failed", ["keyword_coverage: 0/2", "verdict_missing: no verdict"]),
        _result("breaks", "failed", ["verdict_not_allowed: verdict 'REJECT' is not allowed"]),
        _result("vanishes", "not_run", ["fixture_missing: v.json does not exist"]),
        _result("never-ran", "not_run", ["fixture_missing: x.json does not exist"]),
        _result("ok", "passed"),
        _result("new-bad", "failed", ["verdict_missing: no verdict"]),
    ])
    changes = compare_reports(baseline, current).caseChanges
    xml = _parse(junit_xml(current, "s", changes, known_failures), tmp_path)
    suite = list(xml)[0]
    return {"suite": suite, **{case.name: case for case in suite}}


def test_known_failures_are_skipped_with_the_reason(tmp_path: Path) -> None:
    cases = _with_baseline(tmp_path)
    suite = cases["suite"]
    assert (suite.tests, suite.failures, suite.skipped) == (7, 3, 3)
    (skipped,) = cases["still-bad"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "known failure since the baseline: keyword_coverage"
    assert skipped.text == "keyword_coverage: 0/2"
    (worse,) = cases["worse"].result
    assert isinstance(worse, Skipped)
    assert worse.message == ("known failure since the baseline: keyword_coverage, verdict_missing "
                             "(new since the baseline: verdict_missing)")
    # What the change broke stays red: a case that passed (now failing or not run) and a new failing case.
    for name, kind in (("breaks", "verdict_not_allowed"), ("vanishes", "fixture_missing"), ("new-bad", "verdict_missing")):
        (failure,) = cases[name].result
        assert isinstance(failure, Failure) and failure.type == kind, name
    (not_run,) = cases["never-ran"].result
    assert isinstance(not_run, Skipped) and not_run.message == "fixture_missing: x.json does not exist"
    assert cases["ok"].is_passed


def test_known_failures_can_be_reported_as_failures(tmp_path: Path) -> None:
    cases = _with_baseline(tmp_path, known_failures="fail")
    assert (cases["suite"].failures, cases["suite"].skipped) == (5, 1)
    for name in ("still-bad", "worse"):
        (failure,) = cases[name].result
        assert isinstance(failure, Failure) and failure.type == "keyword_coverage"


def test_without_a_baseline_every_failed_case_fails() -> None:
    report = build_report([_result("bad", "failed", ["keyword_coverage: 0/2"])])
    assert "<failure " in junit_xml(report, "s") and "<skipped" not in junit_xml(report, "s")


def test_unknown_known_failures_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--junit-known-failures"):
        junit_xml(build_report([]), "s", [], "ignore")
