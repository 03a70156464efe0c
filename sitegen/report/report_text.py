"""A report for the terminal and for the saved baseline: its counts on one line, the first failed checks, and the
baseline's two files (eval/README.md, "The baseline")."""

from __future__ import annotations

from sitegen.formatting import percent
from sitegen.report.results import Report

BASELINE_TITLE = "Diagnosis eval baseline"
_MAX_LISTED_FAILURES = 20


def one_line_summary(report: Report) -> str:
    """The counts and pass rate on one line, then the first failed checks, one a line."""
    lines = [
        f"{report.totalCases} cases: {report.passedCases} passed, {report.failedCases} failed, "
        f"{report.notRunCases} not run (pass rate {percent(report.passRate)})"
    ]
    failures = [f"  {result.caseId}: {failure}" for result in report.results for failure in result.failedChecks]
    lines += failures[:_MAX_LISTED_FAILURES]
    if len(failures) > _MAX_LISTED_FAILURES:
        lines.append(f"  … and {len(failures) - _MAX_LISTED_FAILURES} more failed checks (see the report)")
    return "\n".join(lines)


def baseline_texts(report: Report) -> tuple[str, str, str]:
    """report.json's and report.md's texts of a baseline of this report, and its summary line (`sitegen baseline`
    and `sitegen init` write the same bytes)."""
    from sitegen.report.report_json import report_json
    from sitegen.report.report_markdown import report_markdown

    return report_json(report), report_markdown(report, title=BASELINE_TITLE), one_line_summary(report).splitlines()[0]
