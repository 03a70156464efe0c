"""What a passing case spends, as the site shows it (eval/README.md, "Tokens and cost"): the index's two figures and
the history's two charts, each "not recorded" (never 0) where no trace records usage."""

from __future__ import annotations

from collections.abc import Sequence

from sitegen import formatting as fmt
from sitegen.history.runs import Run
from sitegen.report.results import Report, ReportFigure
from sitegen.report.status import Status
from sitegen.site.pages.charts import Chart, line_chart
from sitegen.site.pages.common import Stat


def spent_stats(report: Report) -> list[Stat]:
    """What a passing case spends, over the passing cases whose traces record it; "not recorded" when none does
    (eval/README.md, "Tokens and cost")."""
    passing = [result for result in report.results if result.status is Status.PASSED]
    with_tokens = sum(1 for result in passing if result.tokens is not None)
    with_cost = sum(1 for result in passing if result.cost is not None)

    def detail(count: int, what: str) -> str:
        return f"over {fmt.plural(count, 'passing case')} recording {what}" if count else f"no passing case records {what}"

    def css(value: float | None) -> str:
        return "stat" if value is not None else "stat stat-unrecorded"

    return [
        Stat("Tokens per passing case", fmt.tokens(report.tokensPerPassingCase), detail(with_tokens, "tokens"),
             css(report.tokensPerPassingCase), None),
        Stat("Cost per passing case", fmt.dollars(report.costPerPassingCase), detail(with_cost, "a priced model"),
             css(report.costPerPassingCase), None),
    ]  # fmt: skip


def spent_charts(runs: Sequence[Run]) -> tuple[Chart, ...]:
    """Tokens and dollars per passing case, once some run records them: each series starts with the first run whose
    traces record usage (a run before has no point, never a 0; eval/README.md, "Tokens and cost")."""
    charts = []
    if any(run.figure(ReportFigure.TOKENS_PER_PASSING_CASE) is not None for run in runs):
        charts.append(line_chart("chart-history-tokens", "Tokens per passing case", runs, ReportFigure.TOKENS_PER_PASSING_CASE,
                                 "Tokens per passing case", show=fmt.tokens))  # fmt: skip
    if any(run.figure(ReportFigure.COST_PER_PASSING_CASE) is not None for run in runs):
        charts.append(line_chart("chart-history-cost", "Cost per passing case", runs, ReportFigure.COST_PER_PASSING_CASE,
                                 "US cents per passing case", show=fmt.dollars, scale=100, unit=" ¢"))  # fmt: skip
    return tuple(charts)
