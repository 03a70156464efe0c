"""`sitegen evaluate`: evaluate every case's trace and write the JSON, Markdown and JUnit reports (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sitegen import defaults
from sitegen.commands.console import Console, to_stdout, write_outputs

if TYPE_CHECKING:
    from sitegen.compare.diff_report import DiffReport
    from sitegen.report.results import Report

_MAX_LISTED_FAILURES = 20


def run(
    cases: Path | None,
    fixtures: Path | None,
    config: Path | None,
    console: Console,
    *,
    json_out: Path | None = None,
    markdown_out: Path | None = None,
    junit_out: Path | None = None,
) -> int:
    """Write the reports asked for (all or none), then the one-line summary unless a report went to stdout."""
    from sitegen.report.report_json import report_json
    from sitegen.report.report_markdown import report_markdown
    from sitegen.suite.discovery import suite_inputs

    cases, fixtures, config = suite_inputs(cases, fixtures, config)
    report = evaluated(cases, fixtures, config)
    write_outputs([
        (json_out, report_json(report) if json_out is not None else ""),
        (markdown_out, report_markdown(report) if markdown_out is not None else ""),
        (junit_out, junit_text(report, cases) if junit_out is not None else ""),
    ], console)
    if not to_stdout(json_out, markdown_out, junit_out):
        console.say(one_line_summary(report))
    return 0


def evaluated(cases: Path, fixtures: Path, config: Path | None) -> Report:
    """The report of every case of the case file, evaluated with the cycle collector paused (plumbing/gcpause.py);
    the config, the case file and the fixtures folder checked in that order, as every command checks them."""
    from sitegen.evaluation.engine import evaluate_suite
    from sitegen.plumbing.gcpause import cycle_collection_paused
    from sitegen.suite.config import config_for
    from sitegen.suite.loading import check_fixtures_folder, load_cases

    settings = config_for(config)
    with cycle_collection_paused():
        suite = load_cases(cases)
        check_fixtures_folder(fixtures)
        return evaluate_suite(suite, fixtures, settings)


def junit_text(
    report: Report, cases_path: Path, diff: DiffReport | None = None,
    known_failures: str = defaults.DEFAULT_JUNIT_KNOWN_FAILURES,
) -> str:
    """The JUnit XML, each case pointing at its line of the case file; with a diff, the cases that failed in the
    baseline too are known failures and those within noise of it are skipped alike."""
    from sitegen.compare.changes import known_failures as known
    from sitegen.compare.changes import within_noise_cases
    from sitegen.report.junit import junit_xml
    from sitegen.suite.discovery import suite_path
    from sitegen.suite.loading import case_lines

    changes = diff.caseChanges if diff is not None else []
    return junit_xml(
        report, cases_path.stem or "sitegen", case_file=suite_path(cases_path), case_lines=case_lines(cases_path),
        known_failures=known(changes), within_noise=within_noise_cases(changes),
        known_failure_mode=known_failures,
    )


def one_line_summary(report: Report) -> str:
    """The counts and pass rate on one line, then the first failed checks, one a line."""
    from sitegen.formatting import percent

    lines = [
        f"{report.totalCases} cases: {report.passedCases} passed, {report.failedCases} failed, "
        f"{report.notRunCases} not run (pass rate {percent(report.passRate)})"
    ]
    failures = [f"  {result.caseId}: {failure}" for result in report.results for failure in result.failedChecks]
    lines += failures[:_MAX_LISTED_FAILURES]
    if len(failures) > _MAX_LISTED_FAILURES:
        lines.append(f"  … and {len(failures) - _MAX_LISTED_FAILURES} more failed checks (see the report)")
    return "\n".join(lines)
