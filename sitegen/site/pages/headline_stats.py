"""The index's headline figures: the pass rate (without a baseline: with one the banner says it), the cases of each
status linking to the index filtered to them, the averages and what the passing cases spend."""

from __future__ import annotations

from sitegen import formatting as fmt
from sitegen.checks import FIXTURE_CONTENT_MISSING, check_codes
from sitegen.compare.diff_report import DiffReport
from sitegen.report.results import Report
from sitegen.report.status import Status
from sitegen.site.html import urls
from sitegen.site.pages.change_views import pass_rate_css
from sitegen.site.pages.common import Stat
from sitegen.site.pages.spent import spent_stats


def _not_run_detail(report: Report) -> str:
    """Why cases were not run: their trace could not be evaluated (missing, not JSON or not a trace), or (an
    OpenTelemetry trace) it holds no content to judge."""
    uncaptured = any(
        result.status is Status.NOT_RUN and FIXTURE_CONTENT_MISSING in check_codes(result.failedChecks) for result in report.results
    )
    return "could not be evaluated, or content not captured" if uncaptured else "could not be evaluated"


def headline_stats(report: Report, diff: DiffReport | None) -> list[Stat]:
    """The headline figures: the pass rate (without a baseline: with one the banner says it), the counts per status,
    the averages."""
    rate_detail = f"{report.passedCases:,} of {report.totalCases:,} cases"
    failed_css = "stat stat-bad" if report.failedCases else "stat"
    not_run_css = "stat stat-warn" if report.notRunCases else "stat"
    # Against a baseline the banner says the pass rate and the regressions: the cards say only what it does not.
    stats = [] if diff is not None else [
        Stat("Pass rate", fmt.percent(report.passRate), rate_detail, pass_rate_css(diff) + " stat-wide", None),
    ]
    stats += [
        _status_stat(Status.PASSED, report.passedCases, "cases", "stat stat-good"),
        _status_stat(Status.FAILED, report.failedCases, "cases", failed_css),
        _status_stat(Status.NOT_RUN, report.notRunCases, _not_run_detail(report), not_run_css),
    ]
    stats.append(Stat("Avg tool calls", fmt.count(report.averageToolCallCount, 2), "per case with a trace", "stat", None))
    stats.append(Stat("Avg duration", fmt.duration(report.averageDurationMs), "per traced case", "stat", None))
    stats += spent_stats(report)
    return stats


def _status_stat(status: Status, count: int, detail: str, css: str) -> Stat:
    """A status's card: its count, linking to the index filtered to it."""
    return Stat(status.word.capitalize(), f"{status.icon} {count:,}", detail, css, urls.index_filter(status=status.value))
