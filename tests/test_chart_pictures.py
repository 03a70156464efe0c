"""The static picture of each chart (pages/chartsvg.py): drawn from the figure plotly gets, text never markup."""

from __future__ import annotations

from typing import Any

from bs4 import BeautifulSoup

from sitegen.site.pages.charts import chart_text
from sitegen.site.pages.chartsvg import chart_svg


def picture(figure: dict[str, Any]) -> BeautifulSoup:
    return BeautifulSoup(str(chart_svg(figure)), "html.parser")


def line(xs: list[float], ys: list[float], **extra: Any) -> dict[str, Any]:
    return {"type": "scatter", "mode": "lines+markers", "x": xs, "y": ys, "line": {"color": "#3b82c4", "width": 2}, **extra}


def test_a_line_chart_has_a_point_per_value_and_its_axes() -> None:
    doc = picture({"data": [line([1, 2, 3], [50.0, 75.0, 100.0])],
                   "layout": {"xaxis": {"title": {"text": "Run"}}, "yaxis": {"title": {"text": "Pass rate (%)"}, "range": [0, 105]}}})  # fmt: skip
    svg = doc.find("svg")
    assert svg["aria-hidden"] == "true" and svg["viewbox"] == "0 0 480 260"
    assert len(doc.select("circle")) == 3 and len(doc.select("polyline")) == 1
    ys = [float(c["cy"]) for c in doc.select("circle")]
    assert ys[0] > ys[1] > ys[2]  # higher values higher up
    assert [t.get_text() for t in doc.select("text.tick")][:3] == ["0", "50", "100"]
    assert {t.get_text() for t in doc.select("text.axis-title")} == {"Run", "Pass rate (%)"}


def test_tick_labels_the_figure_gives_are_shown() -> None:
    doc = picture({"data": [line([1, 2], [1.0, 2.0])],
                   "layout": {"xaxis": {"tickvals": [1, 2], "ticktext": ["PR #12", "a1b2c3d"]}}})  # fmt: skip
    assert {"PR #12", "a1b2c3d"} <= {t.get_text() for t in doc.select("text.tick")}


def test_a_band_over_one_run_is_still_visible() -> None:
    """With one run, a band from the low to the high of the interval one point wide would be a line of no width."""
    band = [
        {"type": "scatter", "mode": "lines", "x": [1], "y": [90.0], "line": {"width": 0}},
        {"type": "scatter", "mode": "lines", "x": [1], "y": [40.0], "line": {"width": 0}, "fill": "tonexty",
         "fillcolor": "rgba(142, 106, 200, 0.18)"},
    ]  # fmt: skip
    doc = picture({"data": band, "layout": {"yaxis": {"range": [0, 105]}}})
    xs = {float(point.split(",")[0]) for point in doc.find("polygon")["points"].split()}
    assert max(xs) - min(xs) >= 8


def test_stacked_bars_stack_and_grouped_bars_carry_their_counts() -> None:
    stacked = picture({"data": [{"type": "bar", "x": [1, 2], "y": [3, 4], "marker": {"color": "#2e9d5b"}, "name": "PASS"},
                                {"type": "bar", "x": [1, 2], "y": [1, 2], "marker": {"color": "#d64545"}, "name": "REJECT"}],
                       "layout": {"barmode": "stack", "showlegend": True}})  # fmt: skip
    rects = [r for r in stacked.select("rect") if r["width"] != "10"]  # the legend's swatches are 10 wide
    assert len(rects) == 4
    first_pass, first_reject = rects[0], rects[2]
    assert abs(float(first_reject["y"]) + float(first_reject["height"]) - float(first_pass["y"])) < 0.2  # on top of it
    assert [t.get_text() for t in stacked.select("text") if t.get_text() in ("PASS", "REJECT")] == ["PASS", "REJECT"]
    bars = picture({"data": [{"type": "bar", "x": ["PASS", "REJECT"], "y": [17, 2], "text": ["17", "2"], "textposition": "outside",
                              "marker": {"color": ["#2e9d5b", "#d64545"]}}],
                    "layout": {"xaxis": {"type": "category", "tickvals": ["PASS", "REJECT"], "ticktext": ["PASS", "REJECT"]}}})  # fmt: skip
    assert [r["fill"] for r in bars.select("rect")] == ["#2e9d5b", "#d64545"]
    texts = [t.get_text() for t in bars.select("text")]
    assert "17" in texts and "PASS" in texts and "REJECT" in texts


def test_labels_from_a_trace_are_text_and_colours_only_colours() -> None:
    hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    doc = picture({"data": [{"type": "bar", "x": [chart_text(hostile, None)], "y": [1], "name": chart_text(hostile),
                             "marker": {"color": 'red" onload="alert(3)'}}],
                   "layout": {"xaxis": {"tickvals": [chart_text(hostile, None)], "ticktext": [chart_text(hostile)]}, "showlegend": True}})  # fmt: skip
    assert doc.find("script") is None and doc.find("img") is None
    assert all(not name.startswith("on") for tag in doc.find_all(True) for name in tag.attrs)
    assert {r["fill"] for r in doc.select("rect")} == {"#3b82c4"}  # not a colour: the default one
    assert any(t.get_text().startswith("<script>") for t in doc.select("text"))  # shown as the text it is


def test_an_empty_figure_is_an_empty_frame() -> None:
    doc = picture({"data": [], "layout": {}})
    assert doc.find("svg") is not None and not doc.select("circle, rect, polyline")


def _ticks(doc: BeautifulSoup) -> list[tuple[float, list[str]]]:
    """The x tick labels under the axis: each one's x and lines."""
    return [(float(t["x"]), [span.get_text() for span in t.select("tspan")]) for t in doc.select("text.tick") if t.select("tspan")]


def test_many_runs_name_as_many_as_fit_and_always_the_latest() -> None:
    runs = list(range(1, 31))
    doc = picture({"data": [line(runs, [50.0] * 30)], "layout": {"xaxis": {"tickvals": runs, "ticktext": [f"PR #{n}" for n in runs]}}})
    ticks = _ticks(doc)
    assert 5 <= len(ticks) <= 9 and ticks[-1][1] == ["PR #30"]
    gaps = [b[0] - a[0] for a, b in zip(ticks, ticks[1:])]
    assert min(gaps) >= 6 * 7.2 + 8  # "PR #30" keeps clear of the next label


def test_a_label_of_two_lines_is_drawn_whole_and_the_plot_makes_room() -> None:
    one = picture({"data": [line([1, 2], [1.0, 2.0])], "layout": {"xaxis": {"tickvals": [1, 2], "ticktext": ["a", "b"]}}})
    two = picture({"data": [line([1, 2], [1.0, 2.0])],
                   "layout": {"xaxis": {"tickvals": [1, 2], "ticktext": ["recording<br>from stub", "PR #2"]}}})  # fmt: skip
    assert _ticks(two) == [(_ticks(two)[0][0], ["recording", "from stub"]), (_ticks(two)[1][0], ["PR #2"])]
    lowest = {name: max(float(c["cy"]) for c in doc.select("circle")) for name, doc in (("one", one), ("two", two))}
    assert lowest["two"] < lowest["one"]  # the plot's bottom moved up for the second line


def test_a_long_legend_wraps_into_rows_and_keeps_every_name_whole() -> None:
    names = ["Trial pass rate, 95% interval", "Trials passed", "Cases passed", "Another long series name here"]
    doc = picture({"data": [line([1, 2], [1.0, 2.0], name=name) for name in names], "layout": {"showlegend": True}})
    texts = [t for t in doc.select("text.tick") if t.get_text() in names]
    assert [t.get_text() for t in texts] == names  # whole: nothing cut
    assert len({t["y"] for t in texts}) >= 2  # more than one row
    for text in texts:  # each inside the picture, by the widths the picture estimates
        assert float(text["x"]) + len(text.get_text()) * 7.2 <= 480
