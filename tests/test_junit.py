"""JUnit XML: one testcase per case pointing at its line of the case file, failures with every failed check in
full, not-run cases and known failures skipped; read with junitparser and as the workflow's test-report action reads it."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Attr, Error, Failure, IntAttr, JUnitXml, Skipped, TestCase
from typer.testing import CliRunner

from helpers import ROOT, make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.compare.changes import ChangeKind
from sitegen.compare.diff_report import compare_reports
from sitegen.errors import UsageError
from sitegen.report.junit import case_classname, junit_xml, trace_place, xml_text
from sitegen.report.results import CaseResult, build_report
from sitegen.suite.loading import case_lines


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
    assert (suite.tests, suite.failures, suite.skipped, suite.errors) == (3, 1, 0, 1)
    cases = {case.name: case for case in suite}
    assert list(cases) == ["ok", "bad", "gone"]
    assert cases["ok"].is_passed and cases["ok"].time == pytest.approx(1.5)
    (failure,) = cases["bad"].result
    assert isinstance(failure, Failure)
    assert failure.message == "verdict_not_allowed: verdict 'REJECT' is not allowed; keyword_coverage: 0/2"
    assert failure.type == "verdict_not_allowed"
    assert failure.text.splitlines() == [
        "verdict_not_allowed: verdict 'REJECT' is not allowed",
        "keyword_coverage: 0/2",
    ]
    (error,) = cases["gone"].result  # not the agent's failure: it was not judged (eval/README.md, "JUnit XML")
    assert isinstance(error, Error) and error.type == "fixture_missing"
    assert error.message == "could not be evaluated: gone.json does not exist"
    assert error.text == "fixture_missing: gone.json does not exist"


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
    assert isinstance(cases["absent"].result[0], Error) and cases["absent"].result[0].type == "fixture_missing"
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
    text = junit_xml(
        current, "s", known_failure_mode=known_failures,
        known_failures=[change.caseId for change in changes if change.change is ChangeKind.STILL_FAILING],
    )
    xml = _parse(text, tmp_path)
    suite = list(xml)[0]
    return {"suite": suite, **{case.name: case for case in suite}}


def test_known_failures_are_skipped_with_the_reason(tmp_path: Path) -> None:
    cases = _with_baseline(tmp_path)
    suite = cases["suite"]
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (7, 2, 2, 2)
    (skipped,) = cases["still-bad"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "known failure since the baseline: keyword_coverage: 0/2"
    assert skipped.text == "keyword_coverage: 0/2"
    (worse,) = cases["worse"].result
    assert isinstance(worse, Skipped)
    assert worse.message == "known failure since the baseline: keyword_coverage: 0/2; verdict_missing: no verdict"
    # What the change broke stays red: a case that passed and now fails, and a new failing case.
    for name, kind in (("breaks", "verdict_not_allowed"), ("new-bad", "verdict_missing")):
        (failure,) = cases[name].result
        assert isinstance(failure, Failure) and failure.type == kind, name
    # A case that could not be evaluated is an error, not the agent's failure, whatever the baseline said of it.
    for name, file in (("vanishes", "v.json"), ("never-ran", "x.json")):
        (error,) = cases[name].result
        assert isinstance(error, Error) and error.type == "fixture_missing", name
        assert error.message == f"could not be evaluated: {file} does not exist"
    assert cases["ok"].is_passed


def test_known_failures_can_be_reported_as_failures(tmp_path: Path) -> None:
    cases = _with_baseline(tmp_path, known_failures="fail")
    assert (cases["suite"].failures, cases["suite"].errors, cases["suite"].skipped) == (4, 2, 0)
    for name in ("still-bad", "worse"):
        (failure,) = cases[name].result
        assert isinstance(failure, Failure) and failure.type == "keyword_coverage"


def test_without_a_baseline_every_failed_case_fails() -> None:
    report = build_report([_result("bad", "failed", ["keyword_coverage: 0/2"])])
    assert "<failure " in junit_xml(report, "s") and "<skipped" not in junit_xml(report, "s")


def test_unknown_known_failures_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--junit-known-failures"):
        junit_xml(build_report([]), "s", known_failure_mode="ignore")


# --- where a case is: file and line, as a pull-request annotation reads them ---------------------------------------


class LocatedTestCase(TestCase):
    """A testcase with the position attributes GitHub's and GitLab's readers take (junitparser's documented way)."""

    file = Attr()
    line = IntAttr()


def _tricky_case_file(root: Path) -> tuple[Path, dict[str, int]]:
    """A case file laid out as people write them (a BOM, CRLF, two cases on a line, an id named in another
    case's text before the case itself), and the line each case's object starts on."""
    def case(case_id: str, **fields: object) -> str:
        return json.dumps(make_case(id=case_id, traceFixture=f"{case_id}.json", **fields), ensure_ascii=False)

    lines = [
        "\ufeff[",
        case("first", title='mentions {"id": "second"} and\na brace {'),  # line 2
        "  , " + case("second") + "," + case("third"),  # line 3, both
        "",
        "  ,{",  # line 5: the object starts here, its id two lines down
        '    "traceFixture": "fourth.json",',
        '    "id": "fourth"',
        "  }",
        "]",
    ]
    path = root / "suite" / "cases.json"
    path.parent.mkdir(parents=True)
    path.write_bytes("\r\n".join(lines).encode("utf-8"))
    fixtures = root / "suite" / "fixtures"
    fixtures.mkdir()
    for name in ("first", "third", "fourth"):
        (fixtures / f"{name}.json").write_text(json.dumps(make_trace(verdict="REJECT")), encoding="utf-8")
    return path, {"first": 2, "second": 3, "third": 3, "fourth": 5}


def test_each_testcase_names_the_case_file_and_the_line_of_its_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, expected = _tricky_case_file(tmp_path)
    assert case_lines(path) == expected
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["evaluate", "--cases", "suite/cases.json", "--fixtures", "suite/fixtures", "--junit", "j.xml"])
    assert result.exit_code == 0, result.output
    suite = list(JUnitXml.fromfile("j.xml"))[0]
    located = [LocatedTestCase.fromelem(case) for case in suite]
    assert {case.name: (case.file, case.line) for case in located} == {
        name: ("suite/cases.json", line) for name, line in expected.items()
    }


def _as_the_report_action_reads(path: Path, workspace: Path) -> list[dict[str, object]]:
    """The annotation mikepenz/action-junit-report (v5.6.2, the workflow's) makes of each failed testcase, as its
    src/testParser.ts does: the position from the testcase's (else the failure's, else the suite's) `file` and
    `line`, falling back to the last dotted part of the classname and line 1; the message from the failure's
    `message`, else the first two lines of its text, else the test's name; the title `<file>.<name>`."""
    annotations = []
    for suite in ET.parse(path).getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            failure = case.find("failure") if case.find("failure") is not None else case.find("error")
            if failure is None or case.find("skipped") is not None:
                continue
            trace = "\n".join((failure.text or "").strip().split("\n")[:2])
            message = (failure.get("message") or trace or case.get("name")).strip()
            file = case.get("file") or failure.get("file") or suite.get("file")
            line = case.get("line") or failure.get("line") or suite.get("line")
            classname = case.get("classname") or case.get("name")
            file_name = file or classname.split(".")[-1]
            position = int(line) if line and line.isdigit() else 1
            annotations.append({
                "path": file_name, "exists": (workspace / file_name).is_file(), "start_line": position,
                "title": f"{file_name}.{case.get('name')}" if file_name != case.get("name") else case.get("name"),
                "message": message,
            })
    return annotations


def test_a_failed_case_is_annotated_at_its_case_with_every_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, expected = _tricky_case_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["evaluate", "--cases", "suite/cases.json", "--fixtures", "suite/fixtures", "--junit", "j.xml"])
    assert result.exit_code == 0, result.output
    annotations = _as_the_report_action_reads(tmp_path / "j.xml", tmp_path)
    assert [(item["title"], item["start_line"], item["exists"]) for item in annotations] == [
        ("suite/cases.json.first", 2, True), ("suite/cases.json.second", 3, True), ("suite/cases.json.third", 3, True),
        ("suite/cases.json.fourth", 5, True),
    ]
    report = {item["caseId"]: item for item in json.loads(
        CliRunner().invoke(app, ["evaluate", "--cases", "suite/cases.json", "--fixtures", "suite/fixtures", "--json", "-"]).stdout
    )["results"]}
    for item in annotations:
        checks = report[str(item["title"]).rsplit(".", 1)[1]]["failedChecks"]
        if item["title"] == "suite/cases.json.second":  # its trace is missing: an error saying why and where
            assert item["message"] == "could not be evaluated: trace file suite/fixtures/second.json does not exist"
            continue
        assert item["message"] == "; ".join(checks) and all(": " in check for check in checks)


def test_without_a_case_file_there_is_no_position() -> None:
    root = ET.fromstring(junit_xml(build_report([_result("bad", "failed", ["verdict_missing: no verdict"])]), "s"))
    (case,) = root.iter("testcase")
    assert case.get("file") is None and case.get("line") is None


def test_case_lines_of_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    """The file is read again for the lines: one edited meanwhile gives the lines it still has, never an error."""
    path = tmp_path / "cases.json"
    path.write_text('[\n  {"id": "a"},\n  {"id": "b", "x": [', encoding="utf-8")
    assert case_lines(path) == {"a": 2}
    path.write_text('{"id": "a"}', encoding="utf-8")
    assert case_lines(path) == {}


def test_a_case_not_evaluated_is_annotated_at_the_line_its_trace_breaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The shipped suite against its baseline, mysql-slow-query's trace cut in half and oom-restart's not the trace
    # shape: each is an <error>, annotated (as the workflow's report action reads it) at its trace, not its case.
    shutil.copytree(ROOT / "eval", tmp_path / "eval")
    trace = tmp_path / "eval" / "fixtures" / "mysql-slow-query.json"
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) // 2])
    (tmp_path / "eval" / "fixtures" / "oom-restart.json").write_text('{"session": 5}', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["build", "--junit", "j.xml"]).exit_code == 0
    annotations = {item["title"]: item for item in _as_the_report_action_reads(tmp_path / "j.xml", tmp_path)}
    broken = annotations["eval/fixtures/mysql-slow-query.json.mysql-slow-query"]
    assert (broken["exists"], broken["start_line"]) == (True, 60)
    assert str(broken["message"]).startswith("could not be evaluated: trace is not JSON at eval/fixtures/mysql-slow-query.json:60:8")
    shape = annotations["eval/fixtures/oom-restart.json.oom-restart"]
    assert (shape["exists"], shape["start_line"]) == (True, 1)  # no line to name: the file's first
    errors = [case for case in ET.parse(tmp_path / "j.xml").getroot().iter("testcase") if case.find("error") is not None]
    assert [case.get("name") for case in errors] == ["mysql-slow-query", "oom-restart"]
    # The known failures are skipped: only what the change broke, or could not check, is red.
    assert len(annotations) == 2


@pytest.mark.parametrize(
    ("check", "place"),
    [
        ("fixture_invalid: trace is not JSON at eval/fixtures/a.json:60:8: Expecting value", ("eval/fixtures/a.json", 60)),
        ("fixture_invalid: trace is not the trace shape at x/a b.json: field 'session': expected an object", ("x/a b.json", None)),
        ("fixture_invalid: trace is not UTF-8 text at a.json:1:3: byte 0xff", ("a.json", 1)),
        ("fixture_missing: trace file eval/fixtures/a.json does not exist", None),
        ("fixture_missing: no trial could be recorded at eval/fixtures/rec: 2 trials saved as *.error.json", None),
        ("fixture_invalid: trace folder cannot be listed at eval/fixtures/rec: Permission denied", None),
    ],
)
def test_the_place_a_trace_breaks(check: str, place: tuple[str, int | None] | None) -> None:
    assert trace_place(check) == place
