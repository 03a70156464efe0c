"""The report as JUnit XML, the test-result format CI servers (GitLab, Jenkins, GitHub apps) display."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from sitegen.compare.changes import REGRESSED, STILL_FAILING, CaseChange
from sitegen.errors import UsageError
from sitegen.report import CaseResult, Report, TrialResult

# XML 1.0 allows only TAB, LF, CR and these ranges; anything else (e.g. a NUL or ESC echoed by an LLM)
# makes the whole file unreadable, so it is dropped rather than escaped.
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Jenkins groups test classes by dots, so a tag's own separators become dots: matrix:reject-safety → matrix.reject-safety.
_CLASS_SEPARATORS = re.compile(r"[:/\\\s]+")


def xml_text(text: str) -> str:
    """Text with every character XML 1.0 forbids removed."""
    return _NOT_XML_CHAR.sub("", text)


def case_classname(result: CaseResult, suite_name: str) -> str:
    """The JUnit classname of a case: its first tag in dotted form, else the suite's name."""
    if result.tags:
        dotted = _CLASS_SEPARATORS.sub(".", xml_text(result.tags[0])).strip(".")
        if dotted:
            return dotted
    return xml_text(suite_name)


def _seconds(duration_ms: int | float | None) -> str:
    return f"{(duration_ms or 0) / 1000:.3f}"


KNOWN_FAILURES_SKIP = "skip"
KNOWN_FAILURES_FAIL = "fail"
KNOWN_FAILURE_MODES = (KNOWN_FAILURES_SKIP, KNOWN_FAILURES_FAIL)
KNOWN_FAILURE_PREFIX = "known failure since the baseline: "


def _known_failure_message(result: CaseResult, change: CaseChange) -> str:
    message = KNOWN_FAILURE_PREFIX + (", ".join(result.failed_codes) or "failed")
    if change.newFailedChecks:
        message += f" (new since the baseline: {', '.join(change.new_codes)})"
    return xml_text(message)


def _testcase(
    result: CaseResult, suite_name: str, change: CaseChange | None, skip_known: bool, name: str | None = None
) -> ET.Element:
    element = ET.Element(
        "testcase",
        {"classname": case_classname(result, suite_name), "name": xml_text(name or result.caseId), "time": _seconds(result.durationMs)},
    )
    body = xml_text("\n".join(result.failedChecks))
    regressed = change is not None and change.change == REGRESSED
    if result.status == "not_run" and not regressed:
        ET.SubElement(element, "skipped", {"message": body or "not run"})
    elif result.passed:
        return element
    elif change is not None and change.change == STILL_FAILING and skip_known:
        # The baseline failed too: red here would only repeat what the pull request did not break.
        ET.SubElement(element, "skipped", {"message": _known_failure_message(result, change)}).text = body
    elif result.failedChecks:
        codes = result.failed_codes
        failure = ET.SubElement(element, "failure", {"message": xml_text(", ".join(codes)), "type": xml_text(codes[0])})
        failure.text = body
    else:
        # A report read from elsewhere may mark a case failed without naming a check.
        ET.SubElement(element, "failure", {"message": "failed", "type": "failed"}).text = "failed without a recorded check"
    return element


def _trial_as_result(result: CaseResult, trial: TrialResult) -> CaseResult:
    return CaseResult(
        result.caseId, result.title, trial.status, trial.passed, list(trial.failedChecks), trial.verdict,
        trial.matchedKeywordCount, result.requiredKeywordCount, {}, trial.toolCallCount, trial.durationMs,
        list(result.tags),
    )  # fmt: skip


def _testcases(result: CaseResult, suite_name: str, change: CaseChange | None, skip_known: bool) -> list[ET.Element]:
    """A case's <testcase>, or one per trial when it has several (named `<case id> [<trial file>]`)."""
    if result.trialResults is None or len(result.trialResults) < 2:
        return [_testcase(result, suite_name, change, skip_known)]
    elements = []
    for trial in result.trialResults:
        name = f"{result.caseId} [{trial.fixture.rsplit('/', 1)[-1]}]"
        element = _testcase(_trial_as_result(result, trial), suite_name, change, skip_known, name)
        if result.passed and element.find("failure") is not None:
            # The case passes by its trial policy: a failed trial is shown, but is not what breaks the build.
            element.remove(element.find("failure"))  # type: ignore[arg-type]
            message = f"trial failed; the case passes by its trial policy ({result.passedTrials}/{result.trials} trials passed)"
            ET.SubElement(element, "skipped", {"message": message}).text = xml_text("\n".join(trial.failedChecks))
        elements.append(element)
    return elements


def junit_xml(
    report: Report,
    suite_name: str,
    changes: Iterable[CaseChange] | None = None,
    known_failures: str = KNOWN_FAILURES_SKIP,
) -> str:
    """One <testsuite> inside <testsuites>, a <testcase> per case (per trial when it has several): failures carry
    every failed check.

    `changes`: the diff's caseChanges when there is a baseline; a case that failed there too is then a
    known failure, reported as <skipped> (or as a failure with `known_failures="fail"`).
    """
    if known_failures not in KNOWN_FAILURE_MODES:
        raise UsageError(f"--junit-known-failures must be one of {', '.join(KNOWN_FAILURE_MODES)}, got {known_failures!r}")
    by_case = {change.caseId: change for change in changes or ()}
    skip_known = known_failures == KNOWN_FAILURES_SKIP
    cases = [
        element
        for result in report.results
        for element in _testcases(result, suite_name, by_case.get(result.caseId), skip_known)
    ]
    skipped = sum(1 for case in cases if case.find("skipped") is not None)
    failures = sum(1 for case in cases if case.find("failure") is not None)
    total_ms = sum(
        sum(trial.durationMs or 0 for trial in result.trialResults) if result.trialResults else result.durationMs or 0
        for result in report.results
    )
    counts = {
        "name": xml_text(suite_name),
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": _seconds(total_ms),
    }
    root = ET.Element("testsuites", counts)
    suite = ET.SubElement(root, "testsuite", counts)
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
