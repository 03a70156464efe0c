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


def test_many_runs_name_at_most_eight_and_always_the_latest() -> None:
    runs = list(range(1, 31))
    doc = picture({"data": [line(runs, [50.0] * 30)], "layout": {"xaxis": {"tickvals": runs, "ticktext": [f"PR #{n}" for n in runs]}}})
    names = [t.get_text() for t in doc.select("text.tick") if t.get_text().startswith("PR")]
    assert len(names) <= 9 and names[0] == "PR #1" and names[-1] == "PR #30"
