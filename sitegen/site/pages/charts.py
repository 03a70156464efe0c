"""The plotly charts of the index and history pages, each with its data as a table.

A chart's figure goes into the page as escaped JSON inside `<script type="application/json">`, and drawn as a
static picture (pages/chartsvg.py) that the site's script replaces with plotly's chart. Every label from a trace or a run is escaped for plotly, which reads tags in labels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.history.runs import LOCAL_SUFFIX, Run
from sitegen.history.since import run_name_parts
from sitegen.history.steps import PassStep
from sitegen.report.results import Report, ReportFigure
from sitegen.site.html.render import json_for_script
from sitegen.site.pages.badges import ordered_verdicts, verdict_kind
from sitegen.site.pages.chartsvg import chart_svg
from sitegen.suite.config import SuiteConfig

CHART_LABEL_MAX = 24
_OTHER_VERDICT_COLOURS = ("#4c78a8", "#8e6ac8", "#3aa6a6", "#c0648d", "#7f7f3f")
_VERDICT_COLOURS = {"pass": "#2e9d5b", "warn": "#d99a1e", "reject": "#d64545", "missing": "#8a8f98"}


class DataTable(NamedTuple):
    """A chart's data as a table (for screen readers, for copying, and when script is off)."""

    caption: str
    headers: tuple[str, ...]
    header_css: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


class Chart(NamedTuple):
    """A plotly chart: its figure as escaped JSON for `<script type="application/json">`, the same figure as a
    static picture shown until plotly draws it (pages/chartsvg.py), and its data table."""

    dom_id: str
    data_id: str
    title: str
    summary: str
    figure: Markup
    table: DataTable
    picture: Markup


def chart_text(text: str, limit: int | None = CHART_LABEL_MAX) -> str:
    """Untrusted text for a plotly label: plotly reads tags like <a>/<b> in labels, so escape; cut long text."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def verdict_colours(verdicts: Sequence[str], config: SuiteConfig) -> dict[str, str]:
    """A chart colour per verdict: fixed for the known kinds, a palette for the others."""
    colours: dict[str, str] = {}
    others = 0
    for verdict in verdicts:
        kind = verdict_kind(verdict, config)
        if kind == "other":
            colours[verdict] = _OTHER_VERDICT_COLOURS[others % len(_OTHER_VERDICT_COLOURS)]
            others += 1
        else:
            colours[verdict] = _VERDICT_COLOURS[kind]
    return colours


def _chart(dom_id: str, title: str, summary: str, figure: dict[str, Any], table: DataTable) -> Chart:
    return Chart(dom_id, f"{dom_id}-data", title, summary, json_for_script(figure), table, chart_svg(figure))


# At most this many runs are named on a chart's axis (every n-th, the latest always): more names would overlap.
RUN_TICKS = 12
# A run's name under its tick: at most two lines of this many characters. A longer name is not cut: the tick takes
# the run's short commit, else its number (the hover and the data table name the run in full).
_TICK_WIDTH, _TICK_LINES = 12, 2
_TICK_BREAK = re.compile(r"(?<=[\s_\-/])")


def tick_lines(name: str, width: int = _TICK_WIDTH, most: int = _TICK_LINES) -> list[str] | None:
    """`name` in lines of at most `width` characters, broken after a space, `_`, `-` or `/` (never inside a word);
    None when it takes more than `most` lines."""
    lines: list[str] = []
    for piece in _TICK_BREAK.split(name.strip()):
        if lines and len((lines[-1] + piece).rstrip()) <= width:
            lines[-1] += piece
        elif len(piece.rstrip()) <= width:
            lines.append(piece)
        else:
            return None
    lines = [line.strip() for line in lines if line.strip()]
    return lines if 0 < len(lines) <= most else None


def _run_tick(run: Run, number: int) -> str:
    """The run's name under its tick (its label, else its short commit, else #number), lines joined by <br>."""
    parts = run_name_parts(run)
    for name in (*(_tick_name(run, part) for part in parts), f"#{number}"):
        lines = tick_lines(name)
        if lines:
            return "<br>".join(chart_text(line, None) for line in lines)
    return f"#{number}"
# A local run (built with uncommitted changes, eval/README.md "History") is drawn apart: a hollow point off the line.
LOCAL_SYMBOL = "circle-open"
LOCAL_LEGEND = "local build (uncommitted)"
_LOCAL_OPACITY = 0.4  # a local run's bars


def _run_axis(runs: Sequence[Run]) -> dict[str, Any]:
    """The runs' axis: a run per whole number, named by its label (`PR #12`), else its short commit (`a1b2c3d`)."""
    step = max(1, -(-len(runs) // RUN_TICKS))
    numbers = list(range(len(runs), 0, -step))[::-1]
    names = [_run_tick(runs[number - 1], number) for number in numbers]
    return {"title": {"text": "Run"}, "tickmode": "array", "tickvals": numbers, "ticktext": names}


def _tick_name(run: Run, name: str) -> str:
    """A part of a run's name under its tick: `local` for a local build's commit (`a1b2c3d+local` would not fit,
    and its hollow point already says whose it is)."""
    return "local" if run.local and name.endswith(LOCAL_SUFFIX) else name


def _run_hover(runs: Sequence[Run]) -> list[str]:
    return [
        f"#{i} {chart_text(' · '.join(run_name_parts(run)), 48)}<br>{fmt.timestamp(run.createdAt)}"
        + ("<br>local build: uncommitted changes" if run.local else "")
        for i, run in enumerate(runs, 1)
    ]


def _local_note(runs: Sequence[Run], drawn: str = "a hollow point off the line") -> str:
    """What a chart's summary adds when a run is a local build: which run is drawn apart, how, and why."""
    local = [index for index, run in enumerate(runs, 1) if run.local]
    if not local:
        return ""
    return f" Run #{local[0]} is a local build with uncommitted changes, drawn apart ({drawn}): the next local build replaces it."


def line_chart(
    dom_id: str,
    title: str,
    runs: Sequence[Run],
    metric: ReportFigure,
    axis: str,
    *,
    as_percent: bool = False,
    show: Callable[[Any], str] = fmt.count,
    scale: float = 1.0,
    unit: str = "",
) -> Chart:
    """One run figure (`metric`) over the runs, a point per run that has it; plotted times `scale`, in `unit`."""
    figure, table, summary = _line_parts(title, runs, metric, axis, as_percent=as_percent, show=show, scale=scale, unit=unit)
    return _chart(dom_id, title, summary, figure, table)


def _line_parts(
    title: str, runs: Sequence[Run], metric: ReportFigure, axis: str, *, as_percent: bool, show: Callable[[Any], str],
    scale: float = 1.0, unit: str = "",
) -> tuple[dict[str, Any], DataTable, str]:
    """A line chart's figure, data table and summary, before they become a Chart."""
    points: dict[bool, tuple[list[int], list[float], list[str]]] = {False: ([], [], []), True: ([], [], [])}
    rows = []
    for index, (run, hover) in enumerate(zip(runs, _run_hover(runs)), 1):
        value = run.figure(metric)
        shown = fmt.UNKNOWN if value is None else (fmt.percent(value) if as_percent else show(value))
        rows.append((str(index), run.label or run.runId, fmt.timestamp(run.createdAt), shown))
        if value is not None:
            xs, ys, texts = points[run.local]
            xs.append(index)
            ys.append(round(value * 100, 2) if as_percent else round(value * scale, 3))
            texts.append(hover)
    template = "%{text}<br>%{y}" + ("%" if as_percent else unit) + "<extra></extra>"
    xs, ys, hover = points[False]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": xs,
            "y": ys,
            "text": hover,
            "hovertemplate": template,
            "line": {"color": "#3b82c4", "width": 2},
            "marker": {"size": 7},
        }
    ]
    if points[True][0]:  # off the line, hollow, and named in a legend of its own
        xs, ys, hover = points[True]
        data[0]["showlegend"] = False
        data.append({"type": "scatter", "mode": "markers", "x": xs, "y": ys, "text": hover, "hovertemplate": template,
                     "name": LOCAL_LEGEND, "marker": {"size": 9, "color": "#3b82c4", "symbol": LOCAL_SYMBOL,
                                                      "line": {"width": 2}}})  # fmt: skip
    figure = {
        "data": data,
        "layout": {
            "xaxis": _run_axis(runs),
            "yaxis": {"title": {"text": axis}, "rangemode": "tozero", **({"range": [0, 105]} if as_percent else {})},
            "showlegend": len(data) > 1,
            **({"legend": _LEGEND} if len(data) > 1 else {}),
        },
    }
    latest = rows[-1][3] if rows else fmt.UNKNOWN
    summary = f"{title}: {fmt.plural(len(runs), 'run')}, latest {latest}.{_local_note(runs)}"
    table = DataTable(title, ("Run", "Label", "Time", axis), ("num", "", "", "num"), tuple(rows))
    return figure, table, summary


STEP_LEGEND = "Step in the pass rate"
_STEP_COLOUR = "#d64545"


def step_label(step: PassStep) -> str:
    """A step as the history page lists it and the chart's hover shows it: `92.0% → 61.5% between a1b2c3d and
    b2c3d4e`."""
    names = (" · ".join(run_name_parts(step.last_before)), " · ".join(run_name_parts(step.first_after)))
    return f"{fmt.percent(step.before)} → {fmt.percent(step.after)} between {names[0]} and {names[1]}"


def _step_traces(runs: Sequence[Run], steps: Sequence[PassStep]) -> list[dict[str, Any]]:
    """Each step as a dashed vertical line between its two runs (history/steps.py), named once in the legend."""
    place = {run.runId: index for index, run in enumerate(runs, 1)}
    traces = []
    for step in steps:
        before, after = place.get(step.last_before.runId), place.get(step.first_after.runId)
        if before is None or after is None:
            continue
        middle = (before + after) / 2
        traces.append({"type": "scatter", "mode": "lines", "x": [middle, middle], "y": [0, 100],
                       "name": STEP_LEGEND, "showlegend": not traces, "text": [chart_text(step_label(step), None)] * 2,
                       "hovertemplate": "%{text}<extra></extra>",
                       "line": {"color": _STEP_COLOUR, "width": 1.5, "dash": "dash"}})  # fmt: skip
    return traces


def pass_rate_chart(runs: Sequence[Run], dom_id: str = "chart-pass-rate", steps: Sequence[PassStep] = ()) -> Chart:
    """Pass rate per run; with trials, also the trial pass rate and its 95 % interval as a band; each step in the
    pass rate (history/steps.py, the history page's) as a dashed line between its two runs."""
    title, axis = "Pass rate", "Pass rate (%)"
    figure, table, summary = _line_parts(title, runs, ReportFigure.PASS_RATE, axis, as_percent=True, show=fmt.count)
    marks = _step_traces(runs, steps)
    if marks:
        figure["data"][0]["name"] = "Cases passed"  # the runs' line, named in the legend beside the steps
        figure["data"] += marks
        figure["layout"]["showlegend"] = True
        figure["layout"]["legend"] = _LEGEND
        summary = f"{summary[:-1]}; {fmt.plural(len(marks), 'step')} in the pass rate: {'; '.join(step_label(s) for s in steps)}."
    band = _trial_band(runs)
    if band is not None:
        traces, column, note = band
        line = figure["data"][0]  # the runs' line (a local run's point comes after it)
        line["name"] = "Cases passed"
        line.pop("showlegend", None)
        figure["data"] = [*traces, *figure["data"]]
        figure["layout"]["showlegend"] = True
        figure["layout"]["legend"] = _LEGEND
        rows = tuple((*row, cell) for row, cell in zip(table.rows, column))
        table = DataTable(table.caption, (*table.headers, "Trial pass rate (95% interval)"), (*table.header_css, "num"), rows)
        summary = f"{summary[:-1]}; {note}"
    return _chart(dom_id, title, summary, figure, table)


_LEGEND = {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"}


# The trial pass rate of each run with its Wilson 95 % interval, drawn as a band (eval/README.md, "Trials").
_BAND_COLOUR = "rgba(142, 106, 200, 0.18)"
_TRIAL_COLOUR = "#8e6ac8"
_SHORT_BAND = 0.3  # half the width of the band drawn when only one run has one, in runs


def _trial_interval(run: Run) -> tuple[float, float, float] | None:
    """A run's trial pass rate and interval, when the run recorded trials and some case had more than one."""
    rate, interval, total, cases = run.trialPassRate, run.trialPassRateInterval, run.totalTrials, run.totalCases
    if rate is None or interval is None or total is None or cases is None:
        return None
    if total <= cases:  # every case had one trial: the band would only repeat the pass rate
        return None
    return float(rate), float(interval[0]), float(interval[1])


def _trial_band(runs: Sequence[Run]) -> tuple[list[dict[str, Any]], list[str], str] | None:
    """The band's traces (high, then low filled up to it, then the rate), a table column and a summary note."""
    points = [(index, found) for index, run in enumerate(runs, 1) if (found := _trial_interval(run)) is not None]
    if not points:
        return None
    xs = [index for index, _ in points]
    rates = [round(rate * 100, 2) for _, (rate, _, _) in points]
    lows = [round(low * 100, 2) for _, (_, low, _) in points]
    highs = [round(high * 100, 2) for _, (_, _, high) in points]
    band_xs, band_lows, band_highs = xs, lows, highs
    if len(points) == 1:  # a band over one point has no width: a short one, centred on the run
        band_xs, band_lows, band_highs = [xs[0] - _SHORT_BAND, xs[0] + _SHORT_BAND], lows * 2, highs * 2
    line = {"width": 0}
    traces = [
        {"type": "scatter", "mode": "lines", "x": band_xs, "y": band_highs, "line": line, "hoverinfo": "skip",
         "showlegend": False, "name": "95% interval (high)"},
        {"type": "scatter", "mode": "lines", "x": band_xs, "y": band_lows, "line": line, "fill": "tonexty",
         "fillcolor": _BAND_COLOUR, "hoverinfo": "skip", "name": "Trial pass rate, 95% interval"},
        {"type": "scatter", "mode": "lines+markers", "x": xs, "y": rates, "name": "Trials passed",
         "customdata": [[low, high] for low, high in zip(lows, highs)],
         "hovertemplate": "trials: %{y}% (95% interval %{customdata[0]}–%{customdata[1]}%)<extra></extra>",
         "line": {"color": _TRIAL_COLOUR, "width": 2, "dash": "dot"}, "marker": {"size": 6}},
    ]  # fmt: skip
    by_run = {index: found for index, found in points}
    column = []
    for index in range(1, len(runs) + 1):
        found = by_run.get(index)
        column.append(
            fmt.UNKNOWN if found is None else f"{fmt.percent(found[0])} ({fmt.percent(found[1])}–{fmt.percent(found[2])})"
        )
    rate, low, high = points[-1][1]
    note = f"trial pass rate latest {fmt.percent(rate)}, 95% interval {fmt.percent(low)}–{fmt.percent(high)}."
    return traces, column, note


def verdict_bar_chart(report: Report, config: SuiteConfig) -> Chart:
    """This run's verdict distribution as a bar per verdict."""
    verdicts = ordered_verdicts(list(report.verdictDistribution), config)
    colours = verdict_colours(verdicts, config)
    counts = [report.verdictDistribution[v] for v in verdicts]
    names = [fmt.shorten(v) for v in verdicts]  # a verdict is trace text: any length
    figure = {
        "data": [
            {
                "type": "bar",
                "x": [chart_text(v, None) for v in names],
                "y": counts,
                "marker": {"color": [colours[v] for v in verdicts]},
                "hovertemplate": "%{x}: %{y} cases<extra></extra>",
                "text": [str(c) for c in counts],
                "textposition": "outside",
                "cliponaxis": False,
            }
        ],
        "layout": {
            "xaxis": {
                "type": "category",
                "tickmode": "array",
                "tickvals": [chart_text(v, None) for v in names],
                "ticktext": [chart_text(v) for v in names],
            },
            "yaxis": {"title": {"text": "Cases"}, "rangemode": "tozero"},
            "showlegend": False,
        },
    }
    total = report.totalCases
    rows = tuple(
        (n, f"{report.verdictDistribution[v]:,}", fmt.percent(report.verdictDistribution[v] / total if total else 0))
        for v, n in zip(verdicts, names)
    )
    counts_text = ", ".join(f"{n} {report.verdictDistribution[v]}" for v, n in zip(verdicts, names))
    # The verdict is the agent's own (its Verifier's); a case passes or fails on sitegen's checks, so a PASS
    # count need not match the passed cases.
    summary = (
        f"The agent's Verifier this run: {counts_text}. Its verdict on its own answer, not whether the case "
        f"passed sitegen's checks ({report.passedCases:,} of {report.totalCases:,} cases passed)."
    )
    table = DataTable("Agent verdicts (Verifier), this run", ("Agent verdict", "Cases", "Share"), ("", "num", "num"), rows)
    return _chart("chart-verdicts", "Agent's verdicts (Verifier)", summary, figure, table)


def verdict_history_chart(runs: Sequence[Run], config: SuiteConfig) -> Chart:
    """The verdict distribution of every run, stacked."""
    seen: list[str] = []
    for run in runs:
        seen += list((run.figure(ReportFigure.VERDICT_DISTRIBUTION) or {}).keys())
    verdicts = ordered_verdicts(seen, config)
    colours = verdict_colours(verdicts, config)
    xs = list(range(1, len(runs) + 1))
    hover = _run_hover(runs)
    # A local run's bars are faded: drawn apart, as its point on the line charts is hollow.
    faded = {"opacity": [_LOCAL_OPACITY if run.local else 1 for run in runs]} if any(run.local for run in runs) else {}
    data = [
        {
            "type": "bar",
            "name": chart_text(verdict),
            "x": xs,
            "y": [(run.figure(ReportFigure.VERDICT_DISTRIBUTION) or {}).get(verdict, 0) for run in runs],
            "text": hover,
            "hovertemplate": "%{text}<br>%{fullData.name}: %{y}<extra></extra>",
            "textposition": "none",
            "marker": {"color": colours[verdict], **faded},
        }
        for verdict in verdicts
    ]
    figure = {
        "data": data,
        "layout": {
            "barmode": "stack",
            "xaxis": _run_axis(runs),
            "yaxis": {"title": {"text": "Cases"}, "rangemode": "tozero"},
            "showlegend": True,
            "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom", "traceorder": "normal"},
            "margin": {"t": 34},
        },
    }
    rows = tuple(
        (str(i), run.label or run.runId, *[str((run.figure(ReportFigure.VERDICT_DISTRIBUTION) or {}).get(v, 0)) for v in verdicts])
        for i, run in enumerate(runs, 1)
    )
    table = DataTable(
        "Verdicts per run", ("Run", "Label", *map(fmt.shorten, verdicts)), ("num", "", *["num"] * len(verdicts)), rows
    )
    summary = f"Verdict distribution over {fmt.plural(len(runs), 'run')}, stacked per run.{_local_note(runs, 'faded bars')}"
    return _chart("chart-verdict-history", "Agent's verdicts over time", summary, figure, table)
