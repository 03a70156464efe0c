"""A chart's figure drawn as a static SVG picture: what the page shows until plotly.js draws it.

plotly.js is 1.1 MB of script that takes a phone's CPU most of a second to start; the picture, computed here
from the same figure, shows the chart at once (and with script off), and the site's script replaces it with
plotly's interactive chart once the reader moves, scrolls or types (docs/architecture.md, "Charts"). Only what
sitegen's figures use is drawn: scatter traces (lines, markers — open ones as outlines —, a band filled to the
trace before it, error bars) and bars (grouped by x, or stacked; faded by their marker's opacity), numeric or category x axes with optional tick labels, a y range.
Every label is text: the figure's labels are escaped for plotly (views/charts.chart_text), so they are turned
back into text here and escaped again for the page.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 480.0, 260.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 48.0, 10.0, 10.0, 40.0
_LEGEND = 20.0
_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}|rgba?\(\s*[\d.]+\s*,\s*[\d.]+\s*,\s*[\d.]+\s*(,\s*[\d.]+\s*)?\)")
_DEFAULT_COLOUR = "#3b82c4"


def _colour(value: Any, default: str = _DEFAULT_COLOUR) -> str:
    """A colour the figure names, if it is one (hex or rgb[a]); else the default."""
    return value if isinstance(value, str) and _COLOUR.fullmatch(value) else default


def _text(label: Any) -> str:
    """A figure label (escaped for plotly, may hold <br>) as plain text."""
    return html.unescape(str(label).replace("<br>", " "))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def _nice_ticks(top: float) -> list[float]:
    """Four or five round ticks from 0 up to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [step * i for i in range(int(math.ceil(top / step - 1e-9)) + 1)]


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value - round(value)) < 1e-9 else f"{value:,.1f}"


class _Plot:
    """Where data values land in the picture."""

    def __init__(self, xs: Sequence[float], y_low: float, y_high: float, legend: bool, bars: bool) -> None:
        self.left, self.right = _LEFT, WIDTH - _RIGHT
        self.top, self.bottom = _TOP + (_LEGEND if legend else 0.0), HEIGHT - _BOTTOM
        low, high = (min(xs), max(xs)) if xs else (0.0, 1.0)
        pad = 0.5 if bars or low == high else (high - low) * 0.04
        self.x_low, self.x_high = low - pad, high + pad
        self.y_low, self.y_high = y_low, y_high if y_high > y_low else y_low + 1

    def x(self, value: float) -> float:
        return self.left + (value - self.x_low) / (self.x_high - self.x_low) * (self.right - self.left)

    def y(self, value: float) -> float:
        return self.bottom - (value - self.y_low) / (self.y_high - self.y_low) * (self.bottom - self.top)

    def band(self) -> float:
        return (self.right - self.left) / max(1.0, self.x_high - self.x_low)


def _positions(trace: dict[str, Any], categories: dict[str, int]) -> list[float | None]:
    """Each point's x as a number: its own, or its category's place."""
    out: list[float | None] = []
    for x in trace.get("x") or []:
        number = _number(x)
        if number is None and isinstance(x, str):
            number = float(categories.setdefault(x, len(categories)))
        out.append(number)
    return out


def _values(trace: dict[str, Any], key: str = "y") -> list[float | None]:
    return [_number(v) for v in trace.get(key) or []]


def chart_svg(figure: dict[str, Any]) -> Markup:
    """The figure as a static SVG picture (aria-hidden: the chart's container carries its description)."""
    layout = figure.get("layout") or {}
    traces = [t for t in figure.get("data") or [] if isinstance(t, dict)]
    xaxis, yaxis = layout.get("xaxis") or {}, layout.get("yaxis") or {}
    categories: dict[str, int] = {}
    for value in xaxis.get("tickvals") or []:
        if isinstance(value, str):
            categories.setdefault(value, len(categories))
    xs_of = [_positions(t, categories) for t in traces]
    ys_of = [_values(t) for t in traces]
    bars = [i for i, t in enumerate(traces) if t.get("type") == "bar"]
    stacked = layout.get("barmode") == "stack"
    highs: list[float] = [0.0]
    sums: dict[float, float] = {}
    for i, (xs, ys) in enumerate(zip(xs_of, ys_of)):
        errors = (traces[i].get("error_y") or {}).get("array") or []
        for j, (x, y) in enumerate(zip(xs, ys)):
            if x is None or y is None:
                continue
            if i in bars and stacked:
                sums[x] = sums.get(x, 0.0) + y
                highs.append(sums[x])
            else:
                highs.append(y + (_number(errors[j]) or 0.0 if j < len(errors) else 0.0))
    fixed = yaxis.get("range")
    if isinstance(fixed, list) and len(fixed) == 2 and all(_number(v) is not None for v in fixed):
        y_low, y_high = float(fixed[0]), float(fixed[1])
        ticks = [t for t in _nice_ticks(y_high) if t <= y_high + 1e-9]
    else:
        ticks = _nice_ticks(max(highs) * (1.12 if bars else 1.0))
        y_low, y_high = 0.0, ticks[-1]
    legend = [t for t in traces if layout.get("showlegend") and t.get("showlegend", True) is not False and t.get("name")]
    every_x = sorted({x for xs in xs_of for x in xs if x is not None})
    plot = _Plot(every_x, y_low, y_high, bool(legend), bool(bars))
    parts: list[str] = [
        f'<svg class="chart-picture" viewBox="0 0 {WIDTH:.0f} {HEIGHT:.0f}" aria-hidden="true" focusable="false">'
    ]
    parts += _y_axis(plot, ticks, yaxis)
    parts += _x_axis(plot, xaxis, every_x, categories)
    previous: list[tuple[float, float]] = []
    for i, trace in enumerate(traces):
        points = [(x, y) for x, y in zip(xs_of[i], ys_of[i]) if x is not None and y is not None]
        if trace.get("type") == "bar":
            if not stacked:
                parts += _bars(plot, trace, points, bars.index(i), len(bars))
        else:
            parts += _scatter(plot, trace, points, previous)
        previous = points
    if stacked:
        parts += _stacked(plot, [traces[i] for i in bars], [xs_of[i] for i in bars], [ys_of[i] for i in bars])
    parts += _legend(legend)
    parts.append("</svg>")
    return Markup("".join(parts))


def _y_axis(plot: _Plot, ticks: list[float], axis: dict[str, Any]) -> list[str]:
    out = []
    for tick in ticks:
        y = plot.y(tick)
        out.append(f'<line class="grid" x1="{plot.left:.1f}" x2="{plot.right:.1f}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="tick" x="{plot.left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end">{escape(_fmt(tick))}</text>')
    title = ((axis.get("title") or {}).get("text")) if isinstance(axis.get("title"), dict) else None
    if title:
        middle = (plot.top + plot.bottom) / 2
        out.append(f'<text class="axis-title" transform="translate(12 {middle:.1f}) rotate(-90)" text-anchor="middle">{escape(_text(title))}</text>')
    return out


def _x_axis(plot: _Plot, axis: dict[str, Any], every_x: list[float], categories: dict[str, int]) -> list[str]:
    out = [f'<line class="axis" x1="{plot.left:.1f}" x2="{plot.right:.1f}" y1="{plot.bottom:.1f}" y2="{plot.bottom:.1f}"/>']
    values, texts = axis.get("tickvals"), axis.get("ticktext")
    labels: list[tuple[float, str]] = []
    if isinstance(values, list) and isinstance(texts, list):
        for value, text in zip(values, texts):
            x = _number(value)
            if x is None and isinstance(value, str):
                x = float(categories.get(value, -1))
            if x is not None and x >= 0:
                labels.append((x, _text(text)))
    else:
        names = {place: name for name, place in categories.items()}
        labels = [(x, _text(names.get(int(x), _fmt(x)))) for x in every_x]
    step = max(1, math.ceil(len(labels) / 8))  # about 50 px a label at most: every step-th, the latest always
    labels = [label for i, label in enumerate(labels) if i % step == 0 or i == len(labels) - 1]
    for x, text in labels:
        out.append(f'<text class="tick" x="{plot.x(x):.1f}" y="{plot.bottom + 16:.1f}" text-anchor="middle">{escape(text[:14])}</text>')
    title = ((axis.get("title") or {}).get("text")) if isinstance(axis.get("title"), dict) else None
    if title:
        out.append(f'<text class="axis-title" x="{(plot.left + plot.right) / 2:.1f}" y="{HEIGHT - 4:.1f}" text-anchor="middle">{escape(_text(title))}</text>')
    return out


def _scatter(plot: _Plot, trace: dict[str, Any], points: list[tuple[float, float]], previous: list[tuple[float, float]]) -> list[str]:
    line = trace.get("line") or {}
    colour = _colour(line.get("color") or (trace.get("marker") or {}).get("color"))
    mode = str(trace.get("mode") or "lines+markers")
    out = []
    if trace.get("fill") == "tonexty" and points and previous:
        outline = [(plot.x(x), plot.y(y)) for x, y in points] + [(plot.x(x), plot.y(y)) for x, y in reversed(previous)]
        if len(points) == 1 and len(previous) == 1:  # one run: a band one point wide would not show
            (x, low), (_, high) = points[0], previous[0]
            half = min(12.0, plot.band() / 4)
            outline = [(plot.x(x) - half, plot.y(low)), (plot.x(x) + half, plot.y(low)), (plot.x(x) + half, plot.y(high)), (plot.x(x) - half, plot.y(high))]
        fill = _colour(trace.get("fillcolor"), "rgba(142, 106, 200, 0.18)")
        out.append(f'<polygon fill="{fill}" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in outline)}"/>')
    width = _number(line.get("width"))
    if "lines" in mode and len(points) > 1 and (width is None or width > 0):
        dash = ' stroke-dasharray="3 3"' if line.get("dash") else ""
        coords = " ".join(f"{plot.x(x):.1f},{plot.y(y):.1f}" for x, y in points)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="{width or 2:g}"{dash} points="{coords}"/>')
    errors = trace.get("error_y") or {}
    if errors.get("array"):
        ups, downs = errors.get("array") or [], errors.get("arrayminus") or errors.get("array") or []
        for (x, y), up, down in zip(points, ups, downs):
            high, low = y + (_number(up) or 0.0), y - (_number(down) or 0.0)
            px = plot.x(x)
            out.append(
                f'<path fill="none" stroke="{_colour(errors.get("color"), colour)}" stroke-width="1.5" '
                f'd="M{px - 4:.1f} {plot.y(high):.1f}h8M{px:.1f} {plot.y(high):.1f}V{plot.y(low):.1f}M{px - 4:.1f} {plot.y(low):.1f}h8"/>'
            )
    if "markers" in mode:
        marker = trace.get("marker") or {}
        radius = max(2.0, (_number(marker.get("size")) or 7) / 2)
        paint = _marker_paint(marker, colour)
        out += [f'<circle {paint} cx="{plot.x(x):.1f}" cy="{plot.y(y):.1f}" r="{radius:g}"/>' for x, y in points]
    return out


def _marker_paint(marker: dict[str, Any], colour: str) -> str:
    """A marker's fill, or for an open symbol (plotly's `circle-open`: a local run) its outline alone."""
    if str(marker.get("symbol") or "").endswith("-open"):
        width = _number((marker.get("line") or {}).get("width")) or 1.0
        return f'fill="none" stroke="{colour}" stroke-width="{width:g}"'
    return f'fill="{colour}"'


def _opacity(marker: dict[str, Any], index: int) -> str:
    """A bar's fill-opacity attribute when the figure fades it (a local run's bars), else nothing."""
    opacity = marker.get("opacity")
    value = _number(opacity[index]) if isinstance(opacity, list) and index < len(opacity) else _number(opacity)
    return "" if value is None or value >= 1 else f' fill-opacity="{max(0.0, value):g}"'


def _bars(plot: _Plot, trace: dict[str, Any], points: list[tuple[float, float]], place: int, count: int) -> list[str]:
    colours = (trace.get("marker") or {}).get("color")
    width = plot.band() * 0.7 / count
    texts = trace.get("text") if trace.get("textposition") == "outside" else None
    out = []
    for j, (x, y) in enumerate(points):
        colour = _colour(colours[j] if isinstance(colours, list) and j < len(colours) else colours)
        left = plot.x(x) - plot.band() * 0.35 + place * width
        top = plot.y(max(y, 0.0))
        out.append(f'<rect fill="{colour}" x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{plot.y(0) - top:.1f}"/>')
        if isinstance(texts, list) and j < len(texts):
            out.append(f'<text class="tick" x="{left + width / 2:.1f}" y="{top - 4:.1f}" text-anchor="middle">{escape(_text(texts[j]))}</text>')
    return out


def _stacked(plot: _Plot, traces: list[dict[str, Any]], xs_of: list[list[float | None]], ys_of: list[list[float | None]]) -> list[str]:
    base: dict[float, float] = {}
    width = plot.band() * 0.7
    out = []
    for trace, xs, ys in zip(traces, xs_of, ys_of):
        marker = trace.get("marker") or {}
        colour = _colour(marker.get("color"))
        for j, (x, y) in enumerate(zip(xs, ys)):
            if x is None or y is None or y <= 0:
                continue
            low = base.get(x, 0.0)
            base[x] = low + y
            top = plot.y(low + y)
            out.append(f'<rect fill="{colour}"{_opacity(marker, j)} x="{plot.x(x) - width / 2:.1f}" y="{top:.1f}" '
                       f'width="{width:.1f}" height="{plot.y(low) - top:.1f}"/>')
    return out


def _legend(traces: list[dict[str, Any]]) -> list[str]:
    out, x = [], _LEFT
    for trace in traces:
        marker = trace.get("marker") or {}
        colour = _colour((trace.get("line") or {}).get("color") or marker.get("color") or trace.get("fillcolor"))
        name = _text(trace.get("name"))[:28]
        if str(trace.get("mode") or "") == "markers":  # a trace of points alone: its key is one of them
            out.append(f'<circle {_marker_paint(marker, colour)} cx="{x + 5:.1f}" cy="{_TOP + 5:.1f}" r="4"/>')
        else:
            out.append(f'<rect fill="{colour}" x="{x:.1f}" y="{_TOP:.1f}" width="10" height="10"/>')
        out.append(f'<text class="tick" x="{x + 14:.1f}" y="{_TOP + 9:.1f}">{escape(name)}</text>')
        x += 26 + 7.4 * len(name)
    return out
