"""history.html (every recorded run and the trends) and assets/history-data.js (read by every case page)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sitegen import formatting as fmt
from sitegen.history.runs import Run
from sitegen.history.since import LOCAL_NOTE, FailingSince, since_sentence
from sitegen.history.steps import PassStep
from sitegen.report.results import Report, ReportFigure
from sitegen.site.pages.badges import flaky_title
from sitegen.site.pages.charts import Chart, line_chart, pass_rate_chart, step_label
from sitegen.site.pages.common import Layout, SiteInfo, make_layout
from sitegen.site.pages.spent import spent_charts


class RunRow(NamedTuple):
    """One recorded run."""

    number: str
    run_id: str
    label: str
    time: str
    commit: str
    commit_title: str
    pass_rate: str
    passed: str
    failed: str
    not_run: str
    total: str
    tool_calls: str
    duration: str
    css: str
    current: bool
    local: str  # for a local run, what that means (its mark's title); else ""


class HistoryPage(NamedTuple):
    """history.html: every recorded run and the trends."""

    layout: Layout
    heading: str
    subtitle: str
    charts: tuple[Chart, ...]
    runs: tuple[RunRow, ...]
    steps: tuple[StepRow, ...]  # the steps in the pass rate (history/steps.py), newest first


class StepRow(NamedTuple):
    """A step in the pass rate, as the history page lists it (with a link to each of its two runs' rows)."""

    text: str  # `92.0% → 61.5% between a1b2c3d and b2c3d4e`
    before: str  # the row number of the last run before the step
    after: str  # ... and of the first run after it
    fell: bool


def _run_row(number: int, run: Run, current: bool) -> RunRow:
    rate = run.figure(ReportFigure.PASS_RATE)
    return RunRow(
        number=str(number),
        run_id=run.runId,
        label=run.label if run.label and run.label != run.runId else fmt.UNKNOWN,  # the run id once, in its column
        time=fmt.timestamp(run.createdAt),
        commit=run.commit[:10] if run.commit else fmt.UNKNOWN,
        commit_title=run.commit or "no commit recorded",
        pass_rate=fmt.UNKNOWN if rate is None else fmt.percent(rate),
        passed=fmt.count(run.figure(ReportFigure.PASSED_CASES)),
        failed=fmt.count(run.figure(ReportFigure.FAILED_CASES)),
        not_run=fmt.count(run.figure(ReportFigure.NOT_RUN_CASES)),
        total=fmt.count(run.figure(ReportFigure.TOTAL_CASES)),
        tool_calls=fmt.count(run.figure(ReportFigure.AVERAGE_TOOL_CALLS), 2),
        duration=fmt.duration(run.figure(ReportFigure.AVERAGE_DURATION)),
        css=" ".join(css for css, on in (("run-current", current), ("run-local", run.local)) if on),
        current=current,
        local=LOCAL_NOTE if run.local else "",
    )


def _two_decimals(value: Any) -> str:
    return fmt.count(value, 2)


def _step_rows(runs: Sequence[Run], steps: Sequence[PassStep]) -> tuple[StepRow, ...]:
    place = {run.runId: str(number) for number, run in enumerate(runs, 1)}
    return tuple(StepRow(step_label(step), place.get(step.last_before.runId, ""), place.get(step.first_after.runId, ""),
                         step.after < step.before) for step in reversed(steps))


def build_history_page(
    site: SiteInfo, runs: Sequence[Run], current_run_id: str, limit: int, steps: Sequence[PassStep] = ()
) -> HistoryPage:
    """The history page's view model (newest run first in the table; each step in the pass rate marked)."""
    rows = tuple(_run_row(number, run, run.runId == current_run_id) for number, run in reversed(list(enumerate(runs, 1))))
    charts = (
        pass_rate_chart(runs, "chart-history-pass-rate", steps),
        line_chart(
            "chart-history-tool-calls", "Average tool calls", runs, ReportFigure.AVERAGE_TOOL_CALLS, "Tool calls per case", show=_two_decimals
        ),
        line_chart(
            "chart-history-duration", "Average duration", runs, ReportFigure.AVERAGE_DURATION, "Duration (s)",
            show=fmt.duration, scale=0.001, unit=" s",  # seconds, as every duration on the site reads
        ),
        *spent_charts(runs),
    )
    return HistoryPage(
        layout=make_layout(
            site,
            title="History",
            description=f"Pass rate, verdicts, tool calls and duration over the last {fmt.plural(len(runs), 'recorded run')}.",
            depth=0,
            current="history",
            charts=True,
        ),
        heading="Run history",
        subtitle=f"{fmt.plural(len(runs), 'recorded run')} (the last {limit:,} are kept), newest first.{_local_subtitle(runs)}",
        charts=charts,
        runs=rows,
        steps=_step_rows(runs, steps),
    )


def _local_subtitle(runs: Sequence[Run]) -> str:
    """What the subtitle adds when a run is a local build: how the charts and the table mark it."""
    if not any(run.local for run in runs):
        return ""
    return (" A build from a work tree with uncommitted changes is a local run: a hollow point off the charts' line, "
            "marked “local” below, replaced by the next local build and never counted towards flakiness.")


def history_data(
    runs: Sequence[Run], report: Report, strips: dict[str, str], flaky: set[str], since: Mapping[str, FailingSince]
) -> dict[str, Any]:
    """What every case page's history strip reads: the runs and one `P`/`F`/`-` string per current case; and what
    its result box says of a flaky case (its badge's title) and of a failing case's streak ("failing since …",
    history/since.py)."""
    return {
        "formatVersion": 2,
        "runs": [
            {"runId": fmt.shorten(run.runId), "label": fmt.shorten(run.label or run.runId), "time": fmt.timestamp(run.createdAt)}
            for run in runs
        ],
        # Pairs, not an object: in a script's object literal a case id like "__proto__" would not be a key.
        "cases": [[r.caseId, strips[r.caseId]] for r in report.results],
        # The badge is made by the page's script, as the strip is: a case's page is not rendered again when only its
        # history made it flaky (or no longer flaky), and without script the page shows no history to be flaky in.
        "flaky": [[r.caseId, flaky_title(r)] for r in sorted(report.results, key=lambda r: r.caseId) if r.caseId in flaky],
        # Here, not in the case page: it changes with every run, and a page is rendered only when its case changed.
        "since": [[r.caseId, since_sentence(since[r.caseId])] for r in report.results if r.caseId in since],
    }
