"""The report as JUnit XML, the test-result format CI servers (GitLab, Jenkins, GitHub apps) display.

What the readers use (eval/README.md, "JUnit XML"): a <testcase>'s `classname`, `name`, `file` and `line` (where a
pull-request annotation points: the case's object in the case file), and a <failure>'s `message` (the annotation's
text: every failed check in full) with the checks one per line as its text; a case that could not be evaluated is an
<error> instead, its `message` saying why and where, and its `file` and `line` the broken trace's (where the place is
a file and line), so the annotation lands on the line that broke.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from sitegen.checks import parse_check
from sitegen.defaults import DEFAULT_JUNIT_KNOWN_FAILURES, JunitKnownFailures
from sitegen.errors import UsageError
from sitegen.report.results import CaseResult, Report, TrialResult
from sitegen.report.status import Status

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


KNOWN_FAILURE = "known failure since the baseline"
NOT_EVALUATED = "could not be evaluated"
WITHIN_NOISE = "within noise of the baseline (the trial pass rate did not fall by more than chance)"


def _checks_message(checks: list[str]) -> str:
    """Every check in full, on one line (an attribute: many readers show it unwrapped)."""
    return xml_text("; ".join(checks))


def trace_place(check: str) -> tuple[str, int | None] | None:
    """The trace file and line a not-run case's check names, where its trace breaks: suite/loading.py's `unusable`
    words it `trace <reason> at <file>[:<line>:<column>][: <detail>]`; None for a check that names no file of a
    trace (a missing file, a folder of trials)."""
    reason, at, rest = (parse_check(check).message or "").partition(" at ")
    if not at or not reason.startswith("trace ") or "folder" in reason:
        return None
    place = rest.split(": ", 1)[0]
    file, line, column = (place.rsplit(":", 2) + ["", ""])[:3] if place.count(":") >= 2 else (place, "", "")
    if line.isdigit() and column.isdigit():
        return file, int(line)
    return place, None


@dataclass(frozen=True)
class _Case:
    """What a <testcase> says of a case beyond its result: where it is, and what the baseline said."""

    suite_name: str
    file: str | None
    line: int | None
    known: bool  # failed in the baseline too
    skip_known: bool
    noisy: bool = False  # its trial policy flipped within chance of the baseline

    def attributes(self, result: CaseResult, name: str | None) -> dict[str, str]:
        """The <testcase> attributes of `result` (a trial of the case when `name` is given): where a reader annotates
        it, the case's line of the case file, or, for a case not run, the place its trace breaks."""
        attributes = {"classname": case_classname(result, self.suite_name), "name": xml_text(name or result.caseId)}
        place = trace_place(result.failedChecks[0]) if result.status is Status.NOT_RUN and result.failedChecks else None
        file, line = place if place is not None else (self.file, self.line)
        if file is not None:
            attributes["file"] = xml_text(file)
            if line is not None:
                attributes["line"] = str(line)
        attributes["time"] = _seconds(result.durationMs)
        return attributes


def _testcase(result: CaseResult, case: _Case, name: str | None = None) -> ET.Element:
    element = ET.Element("testcase", case.attributes(result, name))
    body = xml_text("\n".join(result.failedChecks))
    if result.status is Status.NOT_RUN:
        # Not a failure of the agent, which was not judged, but of the run: JUnit's <error> (eval/README.md,
        # "Cases that could not be evaluated"), whatever the baseline said.
        reasons = [parse_check(check).message or check for check in result.failedChecks]
        message = f"{NOT_EVALUATED}: {xml_text('; '.join(dict.fromkeys(reasons)))}" if reasons else NOT_EVALUATED
        kind = xml_text(result.failed_codes[0]) if result.failedChecks else Status.NOT_RUN.value
        ET.SubElement(element, "error", {"message": message, "type": kind}).text = body
    elif result.passed:
        return element
    elif case.known and case.skip_known:
        # The baseline failed too: red here would only repeat what the pull request did not break.
        message = f"{KNOWN_FAILURE}: {_checks_message(result.failedChecks)}" if result.failedChecks else KNOWN_FAILURE
        ET.SubElement(element, "skipped", {"message": message}).text = body
    elif case.noisy and case.skip_known:
        # The trial policy flipped, but the trial pass rate did not fall by more than chance: not a regression.
        message = f"{WITHIN_NOISE}: {_checks_message(result.failedChecks)}" if result.failedChecks else WITHIN_NOISE
        ET.SubElement(element, "skipped", {"message": message}).text = body
    elif result.failedChecks:
        failure = ET.SubElement(
            element, "failure", {"message": _checks_message(result.failedChecks), "type": xml_text(result.failed_codes[0])}
        )
        failure.text = body
    else:
        # A report read from elsewhere may mark a case failed without naming a check.
        failed = Status.FAILED.word
        ET.SubElement(element, "failure", {"message": failed, "type": failed}).text = f"{failed} without a recorded check"
    return element


def _trial_as_result(result: CaseResult, trial: TrialResult) -> CaseResult:
    return CaseResult(
        result.caseId, result.title, trial.status, trial.passed, list(trial.failedChecks), trial.verdict,
        trial.matchedKeywordCount, result.requiredKeywordCount, {}, trial.toolCallCount, trial.durationMs,
        list(result.tags),
    )  # fmt: skip


def _testcases(result: CaseResult, case: _Case) -> list[ET.Element]:
    """A case's <testcase>, or one per trial when it has several (named `<case id> [<trial file>]`)."""
    if result.trialResults is None or len(result.trialResults) < 2:
        return [_testcase(result, case)]
    elements = []
    for trial in result.trialResults:
        name = f"{result.caseId} [{trial.fixture.rsplit('/', 1)[-1]}]"
        element = _testcase(_trial_as_result(result, trial), case, name)
        if result.passed and element.find("failure") is not None:
            # The case passes by its trial policy: a failed trial is shown, but is not what breaks the build.
            element.remove(element.find("failure"))  # type: ignore[arg-type]
            message = f"trial failed; the case passes by its trial policy ({result.passedTrials}/{result.trials} trials passed)"
            ET.SubElement(element, "skipped", {"message": message}).text = xml_text("\n".join(trial.failedChecks))
        elements.append(element)
    return elements


def junit_for_case_file(
    report: Report,
    cases_path: Path,
    *,
    known_failures: Collection[str] = (),
    within_noise: Collection[str] = (),
    known_failure_mode: JunitKnownFailures | str = DEFAULT_JUNIT_KNOWN_FAILURES,
) -> str:
    """The JUnit XML of a report of this case file, each case pointing at its line there (the file named relative to
    the suite's folder, as every report names it); the suite named for the file."""
    from sitegen.suite.discovery import suite_path
    from sitegen.suite.loading import case_lines

    return junit_xml(
        report, cases_path.stem or "sitegen", case_file=suite_path(cases_path), case_lines=case_lines(cases_path),
        known_failures=known_failures, within_noise=within_noise, known_failure_mode=known_failure_mode,
    )


def junit_xml(
    report: Report,
    suite_name: str,
    *,
    case_file: str | None = None,
    case_lines: Mapping[str, int] | None = None,
    known_failures: Collection[str] = (),
    within_noise: Collection[str] = (),
    known_failure_mode: JunitKnownFailures | str = DEFAULT_JUNIT_KNOWN_FAILURES,
) -> str:
    """One <testsuite> inside <testsuites>, a <testcase> per case (per trial when it has several): failures carry
    every failed check.

    `case_file` (the path as given) and `case_lines` (case id → line of its object) become each testcase's `file`
    and `line`. With a baseline: `known_failures` are the ids of cases that failed there too, reported as
    <skipped> (or as failures with `known_failure_mode="fail"`); `within_noise` those whose trial policy flipped
    within chance, whose failed trials are reported as <skipped> like known failures. A case that could not be
    evaluated is an <error>, with a baseline or without.
    """
    try:
        mode = JunitKnownFailures(known_failure_mode)
    except ValueError:
        raise UsageError(
            f"--junit-known-failures must be one of {', '.join(JunitKnownFailures)}, got {known_failure_mode!r}"
        ) from None
    known, noisy = set(known_failures), set(within_noise)
    lines = case_lines or {}
    skip_known = mode.skips()
    cases = [
        element
        for result in report.results
        for element in _testcases(
            result,
            _Case(
                suite_name, case_file, lines.get(result.caseId), result.caseId in known, skip_known,
                result.caseId in noisy,
            ),
        )
    ]
    skipped = sum(1 for case in cases if case.find("skipped") is not None)
    failures = sum(1 for case in cases if case.find("failure") is not None)
    errors = sum(1 for case in cases if case.find("error") is not None)
    total_ms = sum(
        sum(trial.durationMs or 0 for trial in result.trialResults) if result.trialResults else result.durationMs or 0
        for result in report.results
    )
    counts = {
        "name": xml_text(suite_name),
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": _seconds(total_ms),
    }
    root = ET.Element("testsuites", counts)
    suite = ET.SubElement(root, "testsuite", counts)
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
