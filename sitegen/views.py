"""View models of the site's pages: every string, URL, CSS class and percentage is computed here.

Templates receive one of these objects' fields as their context (`page_context`) and only look up, loop
and branch. The view models are NamedTuples rather than dataclasses: immutable all the same, and a process
that builds pages imports this module about 25 ms sooner (a dataclass is generated code, compiled at import). The context keys of each template are listed in TEMPLATE_CONTEXT and checked by the tests:

- index.html    layout, heading, subtitle, stats, charts, table, banner
- case.html     layout, case_id, title, status, verdict, tags, facts, pager, toc, checks, problem, question,
                answer, evidence, tools, verifier, baseline, definition, raw
- diff.html     layout, heading, subtitle, stats, sections, matrix, transitions, downloads
- history.html  layout, heading, subtitle, charts, runs
- case-list.html  layout, heading, subtitle, table, pages

A suite of more than INDEX_PAGE_ROWS cases gets its case list in static pages of that many rows: the index
shows the first (and links the others: index-2.html, index-3.html, …), so that every case page is linked in
plain HTML without one huge index; its script shows every case from compact data inlined in the index.
"""

from __future__ import annotations

import json
from datetime import datetime
from itertools import accumulate
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import quote

import orjson
from markupsafe import Markup, escape

from sitegen import __version__
from sitegen.config import SuiteConfig
from sitegen.diff import CHANGED, IMPROVEMENT, REGRESSION, DiffItem, DiffReport
from sitegen.history import Run
from sitegen.loading import FixtureProblem, LoadedTrace
from sitegen.mdtext import number, percent
from sitegen.models import Case
from sitegen.render import Bounded, Highlight, bounded_value, json_for_script, markdown_html
from sitegen.report import MISSING_VERDICT, CaseResult, Report
from sitegen.textmatch import found_in

TEMPLATE_CONTEXT: dict[str, tuple[str, ...]] = {
    "index.html": ("layout", "heading", "subtitle", "stats", "charts", "table", "banner"),
    "case.html": (
        "layout", "case_id", "title", "status", "verdict", "tags", "facts", "pager", "toc", "checks", "problem",
        "question", "answer", "evidence", "tools", "verifier", "baseline", "definition", "raw",
    ),
    "diff.html": ("layout", "heading", "subtitle", "stats", "sections", "matrix", "transitions", "downloads"),
    "history.html": ("layout", "heading", "subtitle", "charts", "runs"),
    "case-list.html": ("layout", "heading", "subtitle", "table", "pages"),
}

SITE_NAME = "Diagnosis eval"
TEXT_LIMIT = 64 * 1024          # an answer, a question, one tool input or output
RAW_LIMIT = 256 * 1024          # the raw trace JSON
PAGE_PAYLOAD_BUDGET = 1024 * 1024  # all tool inputs/outputs of one page together
MAX_TOOL_CALLS = 500            # rows of the timeline (and of claim checks); the rest are counted, not shown
CELL_LIMIT = 16 * 1024          # one table cell (a claim's detail, say)
VERIFIER_BUDGET = 256 * 1024    # all claim checks and summary entries of one page together
TABLE_PAGE_SIZE = 100           # index rows per page once the script paginates
INDEX_PAGE_ROWS = 500           # rows per static page of the case list (index.html, index-2.html, …)
EMPTY_STYLE_HASH = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"  # sha256 of ""

_INPUT_KEYS = ("input", "inputs", "arguments", "args", "params", "parameters", "request", "query")
_OUTPUT_KEYS = ("output", "outputs", "result", "results", "response", "content", "observation", "error", "errorMessage")
_INVOCATION_KNOWN = ("toolName", "success", "durationMs")
_START_KEYS = ("startedAt", "startTime", "start", "timestamp")
META_MAX = 80  # a scalar field this short is shown inline, not in a collapsible block

STATUS_ORDER = {"failed": 0, "not_run": 1, "passed": 2}
_STATUS_SHOW = {
    "passed": ("✓", "passed", "status status-passed"),
    "failed": ("✗", "failed", "status status-failed"),
    "not_run": ("⊘", "not run", "status status-not-run"),
}
_DIFF_SHOW = {
    REGRESSION: ("▼", "regression", "diff diff-regression"),
    IMPROVEMENT: ("▲", "improvement", "diff diff-improvement"),
    CHANGED: ("●", "changed", "diff diff-changed"),
}
_OTHER_VERDICT_COLOURS = ("#4c78a8", "#8e6ac8", "#3aa6a6", "#c0648d", "#7f7f3f")
_VERDICT_COLOURS = {"pass": "#2e9d5b", "warn": "#d99a1e", "reject": "#d64545", "missing": "#8a8f98"}


# --- small shared pieces ---------------------------------------------------------------------------------


class Link(NamedTuple):
    """A hyperlink (href relative to the page it is on)."""

    text: str
    href: str


class Badge(NamedTuple):
    """A status shown by colour *and* by an icon and a word."""

    icon: str
    text: str
    css: str
    title: str = ""

    def __html__(self) -> str:
        """The badge as HTML: Jinja2 puts an object with `__html__` on the page as it is (markupsafe's protocol)."""
        return _badge_html(self)


# Pages show the same few badges thousands of times; written once each, their fields escaped here.
@lru_cache(maxsize=4096)
def _badge_html(badge: Badge) -> str:
    title = f' title="{escape(bounded_value(badge.title))}"' if badge.title else ""
    icon, text = escape(bounded_value(badge.icon)), escape(bounded_value(badge.text))
    return f'<span class="{escape(bounded_value(badge.css))}"{title}><span class="icon" aria-hidden="true">{icon}</span> {text}</span>'


class NavLink(NamedTuple):
    """One entry of the top navigation."""

    text: str
    href: str
    css: str
    current: bool


class Layout(NamedTuple):
    """What every page's frame needs: title, CSP, asset URLs, navigation, footer."""

    title: str
    site_name: str
    home: str
    csp: str
    stylesheet: str
    script: str
    icon: str
    plotly: str | None
    style_guards: tuple[str, ...]
    history_data: str | None
    nav: tuple[NavLink, ...]
    footer_links: tuple[Link, ...]
    generator: str


class Stat(NamedTuple):
    """A headline figure."""

    label: str
    value: str
    detail: str
    css: str
    href: str | None


class DataTable(NamedTuple):
    """A chart's data as a table (for screen readers, for copying, and when script is off)."""

    caption: str
    headers: tuple[str, ...]
    header_css: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


class Chart(NamedTuple):
    """A plotly chart: its figure as escaped JSON for `<script type="application/json">` plus its data table."""

    dom_id: str
    data_id: str
    title: str
    summary: str
    figure: Markup
    table: DataTable


class Option(NamedTuple):
    """A `<select>` option."""

    value: str
    label: str


class SiteInfo(NamedTuple):
    """Facts every page builder needs: the asset file names, whether there is a baseline, the suite config."""

    stylesheet: str
    script: str
    icon: str
    plotly: str
    style_guards: tuple[str, ...]
    has_baseline: bool
    config: SuiteConfig


def page_context(page: Any) -> dict[str, Any]:
    """A page view model as the flat dict its template is rendered with."""
    return page._asdict()


# --- formatting ------------------------------------------------------------------------------------------


def fmt_duration(ms: int | float | None) -> str:
    """Milliseconds for people: `850 ms`, `12.3 s`, `4.2 min`; `—` when unknown."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{number(ms, 0)} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


def fmt_bytes(size: int) -> str:
    """A byte count with binary units: `512 B`, `64 KiB`, `20.0 MiB`."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if value.is_integer() and unit == "KiB" else f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def fmt_count(value: int | float | None, digits: int = 1) -> str:
    """A number with thousands separators; `—` when unknown."""
    return "—" if value is None else number(value, digits)


def fmt_time(iso: str) -> str:
    """`2026-01-02T03:04:05Z` as `2026-01-02 03:04 UTC` (other text unchanged)."""
    if len(iso) == 20 and iso.endswith("Z") and iso[10] == "T":
        return f"{iso[:10]} {iso[11:16]} UTC"
    return shorten(iso) if iso else "—"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 case`, `2 cases`."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


class Clipped(NamedTuple):
    """Text cut to a byte budget, with the note saying how much is shown."""

    text: str
    note: str | None
    size: int


def clip(text: str, limit: int) -> Clipped:
    """The first `limit` UTF-8 bytes of `text` (cut on a character boundary) and a note when cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return Clipped(Bounded(text), None, len(data))
    shown = Bounded(data[:limit].decode("utf-8", "ignore"))
    return Clipped(shown, f"showing first {fmt_bytes(limit)} of {fmt_bytes(len(data))}", len(data))


def pretty(value: Any) -> str:
    """A JSON value pretty-printed; a string that holds a JSON object or array is unpacked first."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) < 50 * 1024 * 1024:
            try:
                return _indented(json.loads(stripped))
            except (ValueError, RecursionError):
                return value
        return value
    try:
        return _indented(value)
    except (ValueError, RecursionError):
        return repr(value)


def _indented(value: Any) -> str:
    """JSON with two-space indents: orjson where it can (several times faster), else the json module.

    orjson refuses integers beyond 64 bits, lone surrogates and very deep nesting; json writes those.
    Numbers in exponent form read `1e16` from orjson, `1e+16` from json: the same number either way.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, indent=2, ensure_ascii=False)


def shorten(text: str, limit: int = 200) -> str:
    """A name or label cut to `limit` characters (a trace can put megabytes anywhere)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_badge(status: str) -> Badge:
    """The badge of a case status (passed / failed / not_run)."""
    icon, text, css = _STATUS_SHOW.get(status, ("?", status, "status status-other"))
    return Badge(icon, text, css)


def diff_badge(kind: str) -> Badge:
    """The badge of a diff item type."""
    icon, text, css = _DIFF_SHOW.get(kind, ("●", kind.lower(), "diff diff-changed"))
    return Badge(icon, text, css)


def verdict_kind(verdict: str | None, config: SuiteConfig) -> str:
    """`pass`, `warn`, `reject`, `missing` or `other`: how alarming a verdict is."""
    if not verdict or verdict == MISSING_VERDICT:
        return "missing"
    if verdict == config.pass_verdict:
        return "pass"
    if verdict == config.reject_verdict:
        return "reject"
    return "warn" if verdict in config.verdicts else "other"


@lru_cache(maxsize=4096)
def verdict_badge(verdict: str | None, config: SuiteConfig) -> Badge:
    """The badge of a verifier verdict."""
    kind = verdict_kind(verdict, config)
    icons = {"pass": "✓", "warn": "!", "reject": "✗", "missing": "?", "other": "•"}
    return Badge(icons[kind], shorten(verdict) if verdict else "no verdict", f"verdict verdict-{kind}")


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


def ordered_verdicts(verdicts: Sequence[str], config: SuiteConfig) -> list[str]:
    """Verdicts in the suite's order first, then the unknown ones sorted, MISSING last."""
    present = set(verdicts)
    known = [v for v in config.verdicts if v in present]
    rest = sorted(v for v in present if v not in config.verdicts and v != MISSING_VERDICT)
    return known + rest + ([MISSING_VERDICT] if MISSING_VERDICT in present else [])


def index_filter_href(prefix: str, **state: str) -> str:
    """A link to the index with its case table filtered (state kept in the URL fragment)."""
    query = "&".join(f"{key}={quote(value, safe='')}" for key, value in sorted(state.items()))
    return f"{prefix}index.html#{query}"


# --- layout ----------------------------------------------------------------------------------------------


def csp(charts: bool) -> str:
    """The Content-Security-Policy of a page; chart pages also allow *empty* inline stylesheets.

    plotly.js creates empty <style> elements and fills them through the CSSOM (which CSP does not govern);
    the hash of the empty string allows exactly that and no inline CSS with content.
    """
    style = "'self' " + EMPTY_STYLE_HASH if charts else "'self'"
    return (
        "default-src 'none'; script-src 'self'; "
        f"style-src {style}; img-src 'self'; "
        "base-uri 'none'; form-action 'none'"
    )


def make_layout(
    site: SiteInfo, *, title: str, depth: int, current: str, charts: bool = False, history_data: bool = False
) -> Layout:
    """The frame of a page `depth` folders below the site root, with `current` highlighted in the nav."""
    prefix = "../" * depth
    entries = [("index", "Overview", "index.html"), ("history", "History", "history.html")]
    if site.has_baseline:
        entries.insert(1, ("diff", "Baseline diff", "diff.html"))
    nav = tuple(
        NavLink(text, prefix + href, "nav-link is-current" if key == current else "nav-link", key == current)
        for key, text, href in entries
    )
    footer = [Link("report.json", prefix + "report.json"), Link("report.md", prefix + "report.md")]
    if site.has_baseline:
        footer += [Link("diff.json", prefix + "diff.json"), Link("diff.md", prefix + "diff.md")]
    footer.append(Link("history.json", prefix + "history.json"))
    return Layout(
        title=f"{title} · {SITE_NAME}",
        site_name=SITE_NAME,
        home=prefix + "index.html",
        csp=csp(charts),
        stylesheet=prefix + "assets/" + site.stylesheet,
        script=prefix + "assets/" + site.script,
        icon=prefix + "assets/" + site.icon,
        plotly=prefix + "assets/" + site.plotly if charts else None,
        style_guards=site.style_guards if charts else (),
        history_data=prefix + "assets/history-data.js" if history_data else None,
        nav=nav,
        footer_links=tuple(footer),
        generator=f"sitegen {__version__}",
    )


# --- charts ----------------------------------------------------------------------------------------------


CHART_LABEL_MAX = 24


def chart_text(text: str, limit: int | None = CHART_LABEL_MAX) -> str:
    """Untrusted text for a plotly label: plotly reads tags like <a>/<b> in labels, so escape; cut long text."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chart(dom_id: str, title: str, summary: str, figure: dict[str, Any], table: DataTable) -> Chart:
    return Chart(dom_id, f"{dom_id}-data", title, summary, json_for_script(figure), table)


def _run_axis(runs: Sequence[Run]) -> dict[str, Any]:
    axis: dict[str, Any] = {"title": {"text": "Run"}, "tickformat": "d"}
    if len(runs) <= 20:  # one tick per run; with more, plotly picks whole-number ticks itself
        axis["dtick"] = 1
    return axis


def _run_hover(runs: Sequence[Run]) -> list[str]:
    return [f"#{i} {chart_text(run.label or run.runId, 40)}<br>{fmt_time(run.createdAt)}" for i, run in enumerate(runs, 1)]


def _line_chart(
    dom_id: str,
    title: str,
    runs: Sequence[Run],
    metric: str,
    axis: str,
    *,
    as_percent: bool = False,
    show: Callable[[Any], str] = fmt_count,
) -> Chart:
    xs, ys, rows = [], [], []
    for index, run in enumerate(runs, 1):
        value = run.figure(metric)
        shown = "—" if value is None else (percent(value) if as_percent else show(value))
        rows.append((str(index), run.label or run.runId, fmt_time(run.createdAt), shown))
        if value is not None:
            xs.append(index)
            ys.append(round(value * 100, 2) if as_percent else round(value, 3))
    hover = [text for text, run in zip(_run_hover(runs), runs) if run.figure(metric) is not None]
    figure = {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": xs,
                "y": ys,
                "text": hover,
                "hovertemplate": "%{text}<br>%{y}" + ("%" if as_percent else "") + "<extra></extra>",
                "line": {"color": "#3b82c4", "width": 2},
                "marker": {"size": 7},
            }
        ],
        "layout": {
            "xaxis": _run_axis(runs),
            "yaxis": {"title": {"text": axis}, "rangemode": "tozero", **({"range": [0, 105]} if as_percent else {})},
            "showlegend": False,
        },
    }
    latest = rows[-1][3] if rows else "—"
    summary = f"{title}: {plural(len(runs), 'run')}, latest {latest}."
    table = DataTable(title, ("Run", "Label", "Time", axis), ("num", "", "", "num"), tuple(rows))
    return _chart(dom_id, title, summary, figure, table)


def verdict_bar_chart(report: Report, config: SuiteConfig) -> Chart:
    """This run's verdict distribution as a bar per verdict."""
    verdicts = ordered_verdicts(list(report.verdictDistribution), config)
    colours = verdict_colours(verdicts, config)
    counts = [report.verdictDistribution[v] for v in verdicts]
    names = [shorten(v) for v in verdicts]  # a verdict is trace text: any length
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
    rows = tuple((n, f"{report.verdictDistribution[v]:,}", percent(report.verdictDistribution[v] / report.totalCases if report.totalCases else 0)) for v, n in zip(verdicts, names))
    summary = "Verdicts this run: " + ", ".join(f"{n} {report.verdictDistribution[v]}" for v, n in zip(verdicts, names)) + "."
    table = DataTable("Verdict distribution, this run", ("Verdict", "Cases", "Share"), ("", "num", "num"), rows)
    return _chart("chart-verdicts", "Verdicts this run", summary, figure, table)


def verdict_history_chart(runs: Sequence[Run], config: SuiteConfig) -> Chart:
    """The verdict distribution of every run, stacked."""
    seen: list[str] = []
    for run in runs:
        seen += list((run.figure("verdictDistribution") or {}).keys())
    verdicts = ordered_verdicts(seen, config)
    colours = verdict_colours(verdicts, config)
    xs = list(range(1, len(runs) + 1))
    hover = _run_hover(runs)
    data = [
        {
            "type": "bar",
            "name": chart_text(verdict),
            "x": xs,
            "y": [(run.figure("verdictDistribution") or {}).get(verdict, 0) for run in runs],
            "text": hover,
            "hovertemplate": "%{text}<br>%{fullData.name}: %{y}<extra></extra>",
            "textposition": "none",
            "marker": {"color": colours[verdict]},
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
        (str(i), run.label or run.runId, *[str((run.figure("verdictDistribution") or {}).get(v, 0)) for v in verdicts])
        for i, run in enumerate(runs, 1)
    )
    table = DataTable(
        "Verdicts per run", ("Run", "Label", *map(shorten, verdicts)), ("num", "", *["num"] * len(verdicts)), rows
    )
    summary = f"Verdict distribution over {plural(len(runs), 'run')}, stacked per run."
    return _chart("chart-verdict-history", "Verdicts over time", summary, figure, table)


def pass_rate_chart(runs: Sequence[Run], dom_id: str = "chart-pass-rate") -> Chart:
    """Pass rate per run."""
    return _line_chart(dom_id, "Pass rate", runs, "passRate", "Pass rate (%)", as_percent=True)


# --- index -----------------------------------------------------------------------------------------------


class CaseRow(NamedTuple):
    """One row of the index's case table."""

    case_id: str
    href: str
    title: str
    show_title: bool
    tags: tuple[Link, ...]
    status: Badge
    status_value: str
    status_sort: int
    verdict: Badge
    verdict_value: str
    codes: tuple[str, ...]
    codes_text: str
    keywords: str
    keywords_sort: str
    tool_calls: str
    tool_calls_sort: str
    duration: str
    duration_sort: str
    flaky: bool
    flaky_title: str


class PageLink(NamedTuple):
    """A link to one static page of the case list."""

    text: str
    href: str
    current: bool


class PageNav(NamedTuple):
    """Where a static page of the case list is and links to all of them."""

    summary: str
    links: tuple[PageLink, ...]


class CaseTable(NamedTuple):
    """The index's case table and its filter choices."""

    rows: tuple[CaseRow, ...]
    status_options: tuple[Option, ...]
    verdict_options: tuple[Option, ...]
    tag_options: tuple[Option, ...]
    total_text: str
    page_size: int
    flaky_count: int
    pages: PageNav | None = None  # the static pages of a long case list
    data: Markup | None = None  # every case's row as compact JSON, when the table shows only the first page


class IndexPage(NamedTuple):
    """index.html: headline figures, charts, the case table."""

    layout: Layout
    heading: str
    subtitle: str
    stats: tuple[Stat, ...]
    charts: tuple[Chart, ...]
    table: CaseTable
    banner: Stat | None


class CaseListPage(NamedTuple):
    """index-<n>.html: one static page of a long case list (the index shows the first)."""

    layout: Layout
    heading: str
    subtitle: str
    table: CaseTable
    pages: PageNav


def case_list_page_count(total: int) -> int:
    """How many static pages the case list of `total` cases has (1: everything is on the index)."""
    return max(1, -(-total // INDEX_PAGE_ROWS))


def case_list_href(number: int) -> str:
    """The file of the case list's page `number` (1-based); the first is the index."""
    return "index.html" if number == 1 else f"index-{number}.html"


def _page_nav(number: int, total: int) -> PageNav:
    count = case_list_page_count(total)
    first = (number - 1) * INDEX_PAGE_ROWS
    summary = f"Cases {first + 1:,}–{min(total, first + INDEX_PAGE_ROWS):,} of {total:,} (page {number:,} of {count:,})"
    links = tuple(PageLink(f"{n:,}", case_list_href(n), n == number) for n in range(1, count + 1))
    return PageNav(summary, links)


def _verdict_value(result: CaseResult) -> str:
    return shorten(result.verdict) if result.verdict else MISSING_VERDICT


def _case_row(result: CaseResult, slug: str, flaky: bool, config: SuiteConfig, on_index: bool = True) -> CaseRow:
    ratio = result.matchedKeywordCount / result.requiredKeywordCount if result.requiredKeywordCount else 1.0
    duration = result.durationMs
    codes = tuple(result.failed_codes)
    return CaseRow(
        case_id=result.caseId,
        href=f"cases/{slug}.html",
        title=result.title,
        show_title=result.title != result.caseId,
        tags=tuple(_tag_filter_link(tag, on_index) for tag in result.tags),
        status=status_badge(result.status),
        status_value=result.status,
        status_sort=STATUS_ORDER.get(result.status, 3),
        verdict=verdict_badge(result.verdict, config),
        verdict_value=_verdict_value(result),
        codes=codes,
        codes_text=", ".join(codes),
        keywords=f"{result.matchedKeywordCount}/{result.requiredKeywordCount}",
        keywords_sort=f"{ratio:.4f}",
        tool_calls=f"{result.toolCallCount:,}",
        tool_calls_sort=str(result.toolCallCount),
        duration=fmt_duration(duration),
        duration_sort="-1" if duration is None else repr(float(duration)),
        flaky=flaky,
        flaky_title="pass/fail flipped at least twice in the last 10 runs" if flaky else "",
    )


# A suite has few distinct tags and thousands of rows that link them.
@lru_cache(maxsize=4096)
def _tag_filter_link(tag: str, on_index: bool) -> Link:
    # On the index a tag filters its table in place; other pages link to the index filtered.
    return Link(tag, index_filter_href("", tag=tag).removeprefix("index.html" if on_index else ""))


def build_index_page(
    site: SiteInfo,
    report: Report,
    slugs: dict[str, str],
    runs: Sequence[Run],
    flaky: set[str],
    diff: DiffReport | None,
    run: Run,
) -> IndexPage:
    """The dashboard's view model (with the first page of the case list when there are several)."""
    config = site.config
    results = report.results
    paged = case_list_page_count(len(results)) > 1
    shown = results[:INDEX_PAGE_ROWS] if paged else results
    rows = tuple(_case_row(r, slugs[r.caseId], r.caseId in flaky, config) for r in shown)
    verdicts = ordered_verdicts(list({_verdict_value(r): None for r in results}), config)
    tags = sorted({tag for r in results for tag in r.tags})
    statuses = [s for s in ("failed", "not_run", "passed") if any(r.status == s for r in results)]
    table = CaseTable(
        rows=rows,
        status_options=(Option("", "All statuses"), *(Option(s, status_badge(s).text) for s in statuses)),
        verdict_options=(Option("", "All verdicts"), *(Option(v, v) for v in verdicts)),
        tag_options=(Option("", "All tags"), *(Option(t, t) for t in tags)),
        total_text=plural(len(results), "case"),
        page_size=TABLE_PAGE_SIZE,
        flaky_count=len(flaky & {r.caseId for r in results}),
        pages=_page_nav(1, len(results)) if paged else None,
        data=json_for_script(case_table_data(results, slugs, flaky, config)) if paged else None,
    )
    stats: list[Stat] = []
    rate_detail = f"{report.passedCases:,} of {report.totalCases:,} cases"
    if diff is not None:
        points = (diff.currentPassRate - diff.baselinePassRate) * 100
        rate_detail += f" · {points:+.1f} pts vs baseline ({percent(diff.baselinePassRate)})"
    rate_css = "stat stat-good" if report.failedCases + report.notRunCases == 0 else "stat stat-bad"
    stats.append(Stat("Pass rate", percent(report.passRate), rate_detail, rate_css + " stat-wide", None))
    stats.append(Stat("Passed", f"✓ {report.passedCases:,}", "cases", "stat stat-good", index_filter_href("", status="passed")))
    stats.append(
        Stat("Failed", f"✗ {report.failedCases:,}", "cases", "stat stat-bad" if report.failedCases else "stat", index_filter_href("", status="failed"))
    )
    stats.append(
        Stat("Not run", f"⊘ {report.notRunCases:,}", "trace missing", "stat stat-warn" if report.notRunCases else "stat", index_filter_href("", status="not_run"))
    )
    banner = None
    if diff is not None:
        css = "stat stat-bad" if diff.regressionCount else "stat stat-good"
        regressions = Stat(
            "Regressions", f"▼ {diff.regressionCount:,}",
            f"▲ {diff.improvementCount:,} improved · ● {diff.changedCount:,} changed", css, "diff.html",
        )
        stats.append(regressions)
        if diff.regressionCount:
            banner = Stat(
                "Regressions against the baseline",
                plural(diff.regressionCount, "regression"),
                "See what got worse, case by case.",
                "banner banner-bad",
                "diff.html",
            )
    stats.append(Stat("Avg tool calls", fmt_count(report.averageToolCallCount, 2), "per case with a trace", "stat", None))
    stats.append(Stat("Avg duration", fmt_duration(report.averageDurationMs), "per traced case", "stat", None))
    charts = (pass_rate_chart(runs), verdict_bar_chart(report, config), verdict_history_chart(runs, config))
    commit = f" · commit {run.commit[:10]}" if run.commit else ""
    subtitle = f"{plural(report.totalCases, 'case')} · run {run.label or run.runId} · {fmt_time(run.createdAt)}{commit}"
    return IndexPage(
        layout=make_layout(site, title="Overview", depth=0, current="index", charts=True),
        heading="Diagnosis eval report",
        subtitle=subtitle,
        stats=tuple(stats),
        charts=charts,
        table=table,
        banner=banner,
    )


def case_table_data(results: Sequence[CaseResult], slugs: dict[str, str], flaky: set[str], config: SuiteConfig) -> dict[str, Any]:
    """Every case's row in compact form, for the index's script to filter, sort and page the whole list.

    A row: [id, slug, title ("" when it is the id), tags, status, verdict, failed check codes, matched
    keywords, required keywords, tool calls, duration text, duration in ms or null, flaky 0/1]; the badges
    of each status and verdict are given once.
    """
    statuses: dict[str, list[Any]] = {}
    verdicts: dict[str, list[str]] = {}
    rows = []
    for r in results:
        if r.status not in statuses:
            badge = status_badge(r.status)
            statuses[r.status] = [badge.icon, badge.text, badge.css, STATUS_ORDER.get(r.status, 3)]
        verdict = _verdict_value(r)
        if verdict not in verdicts:
            badge = verdict_badge(r.verdict, config)
            verdicts[verdict] = [badge.icon, badge.text, badge.css]
        rows.append(
            [
                r.caseId, slugs[r.caseId], r.title if r.title != r.caseId else "", r.tags, r.status, verdict,
                r.failed_codes, r.matchedKeywordCount, r.requiredKeywordCount, r.toolCallCount,
                fmt_duration(r.durationMs), r.durationMs, 1 if r.caseId in flaky else 0,
            ]
        )
    return {"formatVersion": 1, "statuses": statuses, "verdicts": verdicts, "rows": rows}


def build_case_list_page(
    site: SiteInfo, results: Sequence[CaseResult], slugs: dict[str, str], flaky: set[str], number: int
) -> CaseListPage:
    """Page `number` (2 or more) of a long case list: its rows as plain HTML, with links to every page."""
    start = (number - 1) * INDEX_PAGE_ROWS
    shown = results[start : start + INDEX_PAGE_ROWS]
    rows = tuple(_case_row(r, slugs[r.caseId], r.caseId in flaky, site.config, on_index=False) for r in shown)
    nav = _page_nav(number, len(results))
    table = CaseTable(
        rows=rows, status_options=(), verdict_options=(), tag_options=(), total_text=plural(len(results), "case"),
        page_size=INDEX_PAGE_ROWS, flaky_count=0, pages=nav,
    )
    return CaseListPage(
        layout=make_layout(site, title=f"Cases, page {number:,}", depth=0, current="index"),
        heading="Cases",
        subtitle=nav.summary + ". The overview filters and sorts them all.",
        table=table,
        pages=nav,
    )


# --- case page -------------------------------------------------------------------------------------------


class Fact(NamedTuple):
    """A label/value pair in a summary list."""

    label: str
    value: str


class Pager(NamedTuple):
    """Previous / next case and the way back.

    The case's position in the suite ("case 5 of 2,000") is filled in by the script from the shared history
    data: written into the page, adding or removing one case would change every page after it.
    """

    prev: Link | None
    next: Link | None
    back: Link


class Section(NamedTuple):
    """An entry of the page's table of contents (`#id` permalinks)."""

    anchor: str
    title: str


class Check(NamedTuple):
    """One failed check."""

    code: str
    message: str


class Chip(NamedTuple):
    """A phrase shown as a small labelled chip."""

    text: str
    css: str
    title: str


class TextBlock(NamedTuple):
    """Text shown verbatim (possibly clipped), with its size and note."""

    text: str
    note: str | None
    size: str
    empty: bool


class AnswerView(NamedTuple):
    """The answer rendered as Markdown with the matched and forbidden phrases marked."""

    html: Markup
    empty: bool
    note: str | None
    size: str
    chips: tuple[Chip, ...]
    legend: str


class EvidenceRow(NamedTuple):
    """One required tool: where it was seen and whether it counts."""

    tool: str
    invoked: Badge
    in_summary: Badge
    succeeded: Badge
    counted: Badge


class Payload(NamedTuple):
    """A tool call's input, output or other field, pretty-printed and clipped."""

    label: str
    summary: str
    text: str
    note: str | None


class ToolCall(NamedTuple):
    """One row of the tool-invocation timeline."""

    number: str
    anchor: str
    name: str
    status: Badge
    duration: str
    meta: tuple[Fact, ...]
    bar_x: str
    bar_width: str
    payloads: tuple[Payload, ...]


class ToolsView(NamedTuple):
    """The tool-invocation timeline."""

    calls: tuple[ToolCall, ...]
    summary: str
    note: str | None


class ClaimRow(NamedTuple):
    """One claim check of the verifier."""

    claim_id: str
    verification: Badge
    detail: str


class VerifierView(NamedTuple):
    """The verifier's evaluation: verdict, gatekeeper, composer, evidence summary, claim checks."""

    present: bool
    facts: tuple[Fact, ...]
    badges: tuple[tuple[str, Badge], ...]
    summary_tools: tuple[str, ...]
    claims: tuple[ClaimRow, ...]
    claims_note: str
    draft: TextBlock | None


class DiffLine(NamedTuple):
    """A diff item of this case, in words."""

    badge: Badge
    metric: str
    message: str


class BaselineView(NamedTuple):
    """What changed for this case against the baseline."""

    state: str
    lines: tuple[DiffLine, ...]


class CasePage(NamedTuple):
    """cases/<slug>.html: everything about one case."""

    layout: Layout
    case_id: str
    title: str
    status: Badge
    verdict: Badge
    tags: tuple[Link, ...]
    facts: tuple[Fact, ...]
    pager: Pager
    toc: tuple[Section, ...]
    checks: tuple[Check, ...]
    problem: str | None
    question: TextBlock
    answer: AnswerView
    evidence: tuple[EvidenceRow, ...]
    tools: ToolsView
    verifier: VerifierView
    baseline: BaselineView
    definition: tuple[Fact, ...]
    raw: TextBlock | None


class Neighbour(NamedTuple):
    """A case next to this one in case-file order."""

    case_id: str
    slug: str


CASE_SECTIONS = (
    Section("result", "Result"),
    Section("question", "Question"),
    Section("answer", "Answer"),
    Section("evidence", "Evidence"),
    Section("tools", "Tool calls"),
    Section("verifier", "Verifier"),
    Section("baseline", "Against baseline"),
    Section("history", "History"),
    Section("definition", "Definition"),
    Section("raw", "Raw trace"),
)


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _yes(text: str, title: str = "") -> Badge:
    return Badge("✓", text, "mark mark-yes", title)


def _no(text: str, title: str = "") -> Badge:
    return Badge("✗", text, "mark mark-no", title)


def _na(text: str = "n/a", title: str = "") -> Badge:
    return Badge("–", text, "mark mark-na", title)


def _text_block(text: str, limit: int = TEXT_LIMIT) -> TextBlock:
    clipped = clip(text, limit)
    return TextBlock(clipped.text, clipped.note, fmt_bytes(clipped.size), not text.strip())


def _answer_view(case: Case, answer: str, config: SuiteConfig) -> AnswerView:
    forbidden = list(dict.fromkeys(case.forbiddenAnswerKeywords + case.forbiddenConfirmedClaimKeywords))
    matched = found_in(answer, case.expectedRootCauseKeywords)
    present_forbidden = found_in(answer, forbidden)
    markers = found_in(answer, list(config.raw_executor_markers))
    highlights: list[Highlight] = [(k, "hl-keyword") for k in matched]
    highlights += [(k, "hl-forbidden") for k in present_forbidden + markers]
    chips = [Chip(f"✓ {k}", "chip chip-keyword", "expected keyword, found") for k in matched]
    chips += [
        Chip(f"✗ {k}", "chip chip-missing", "expected keyword, not found")
        for k in case.expectedRootCauseKeywords
        if k not in matched
    ]
    chips += [Chip(f"⚠ {k}", "chip chip-forbidden", "forbidden phrase, found") for k in present_forbidden]
    chips += [Chip(f"⚠ {k}", "chip chip-forbidden", "raw Executor marker, found") for k in markers]
    clipped = clip(answer, TEXT_LIMIT)
    legend = (
        f"{len(matched)} of {len(case.expectedRootCauseKeywords)} expected keywords found "
        f"(needs {case.keyword_threshold})"
    )
    if present_forbidden or markers:
        legend += f"; {plural(len(present_forbidden) + len(markers), 'forbidden phrase')} present"
    return AnswerView(
        html=markdown_html(clipped.text, highlights),
        empty=not answer.strip(),
        note=clipped.note,
        size=fmt_bytes(clipped.size),
        chips=tuple(chips),
        legend=legend + ".",
    )


def _evidence_rows(case: Case, outcome: LoadedTrace | FixtureProblem, result: CaseResult) -> tuple[EvidenceRow, ...]:
    rows = []
    trace = outcome.trace if isinstance(outcome, LoadedTrace) else None
    for tool in case.requiredEvidenceTools:
        counted = result.evidenceCoverage.get(tool, False)
        counted_badge = _yes("counts") if counted else _no("missing")
        if trace is None:
            rows.append(EvidenceRow(tool, _na("no trace"), _na("no trace"), _na("no trace"), counted_badge))
            continue
        calls = [inv for inv in trace.toolInvocations if inv.toolName == tool]
        summary = trace.verifier.tool_trace_summary if trace.verifier else []
        in_summary = any(entry.tool_name == tool for entry in summary)
        ok = sum(1 for inv in calls if inv.success is True)
        rows.append(
            EvidenceRow(
                tool=tool,
                invoked=_yes(plural(len(calls), "call")) if calls else _no("not invoked"),
                in_summary=_yes("listed") if in_summary else _no("not listed"),
                succeeded=(_yes(f"{ok} of {len(calls)}") if ok else _no(f"0 of {len(calls)}")) if calls else _na(),
                counted=counted_badge,
            )
        )
    return tuple(rows)


class _Budget:
    """How many bytes of untrusted text a page may still show, so no trace can make a page huge."""

    def __init__(self, total: int) -> None:
        self.left = total

    def clip(self, text: str, limit: int) -> Clipped | None:
        """The text cut to `limit` and to what is left of the budget; None when the budget is spent."""
        allowed = min(limit, self.left)
        if allowed <= 0:
            return None
        clipped = clip(text, allowed)
        self.left -= min(clipped.size, allowed)
        return clipped

    def take(self, label: str, value: Any) -> Payload:
        """A tool call's field as a collapsible payload."""
        text = pretty(value)
        clipped = self.clip(text, TEXT_LIMIT)
        summary = f"{label} · {fmt_bytes(len(text.encode('utf-8', 'surrogatepass')))}"
        if clipped is None:
            return Payload(label, summary, "", "not shown: this page already shows its limit of trace data; see the raw trace")
        return Payload(label, summary, clipped.text, clipped.note)

    def cell(self, value: Any) -> str:
        """A value for a table cell, cut with a note."""
        if value is None:
            return "—"
        text = value if isinstance(value, str) else pretty(value)
        clipped = self.clip(text, CELL_LIMIT)
        if clipped is None:
            return "(not shown: this page already shows its limit of trace data; see the raw trace)"
        return clipped.text if clipped.note is None else Bounded(f"{clipped.text}… ({clipped.note})")


def _start_times(raw_calls: Sequence[Any], count: int) -> list[float] | None:
    """Each call's start in ms since the first, when every call records a parseable start time."""
    starts = []
    for index in range(count):
        raw = raw_calls[index] if index < len(raw_calls) and isinstance(raw_calls[index], dict) else {}
        value = next((raw[k] for k in _START_KEYS if isinstance(raw.get(k), str)), None)
        try:
            moment = datetime.fromisoformat(value) if value else None
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            return None
        starts.append(moment.timestamp() * 1000)
    first = min(starts, default=0.0)
    return [start - first for start in starts]


def _short_scalar(value: Any) -> str | None:
    """The value as one short line, or None when it deserves a collapsible block."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, (bool, int, float)):
        text = json.dumps(value)
    else:
        return None
    if len(text) <= META_MAX and "\n" not in text and not text.lstrip().startswith(("{", "[")):
        return text
    return None


def _tools_view(outcome: LoadedTrace | FixtureProblem) -> ToolsView:
    if not isinstance(outcome, LoadedTrace):
        return ToolsView((), "No trace, so no tool calls.", None)
    raw_calls = outcome.raw.get("toolInvocations") if isinstance(outcome.raw, dict) else None
    raw_calls = raw_calls if isinstance(raw_calls, list) else []
    models = outcome.trace.toolInvocations
    durations = [float(inv.durationMs) if inv.durationMs and inv.durationMs > 0 else 0.0 for inv in models]
    recorded = _start_times(raw_calls, len(models))
    starts = recorded
    if starts is None:  # lay the calls end to end
        starts = list(accumulate(durations, initial=0.0))[:-1]
    span = max((start + duration for start, duration in zip(starts, durations)), default=0.0)
    budget = _Budget(PAGE_PAYLOAD_BUDGET)
    calls = []
    for index, inv in enumerate(models[:MAX_TOOL_CALLS]):
        raw = raw_calls[index] if index < len(raw_calls) and isinstance(raw_calls[index], dict) else {}
        if inv.success is True:
            status = _yes("ok")
        elif inv.success is False:
            status = _no("failed")
        else:
            status = _na("unknown")
        width = durations[index] / span * 100 if span else 0.0
        x = starts[index] / span * 100 if span else 0.0
        payloads, meta = [], []
        keys = [k for k in _INPUT_KEYS if k in raw] + [k for k in _OUTPUT_KEYS if k in raw]
        keys += [k for k in raw if k not in keys and k not in _INVOCATION_KNOWN]
        for key in keys:
            short = _short_scalar(raw[key]) if key not in _INPUT_KEYS + _OUTPUT_KEYS else None
            if short is not None:
                meta.append(Fact(key, short))
            else:
                payloads.append(budget.take(key, raw[key]))
        calls.append(
            ToolCall(
                number=str(index + 1),
                anchor=f"call-{index + 1}",
                name=shorten(inv.toolName) if inv.toolName else "(unnamed tool)",
                status=status,
                duration=fmt_duration(inv.durationMs),
                meta=tuple(meta),
                bar_x=f"{min(x, 99.5):.2f}",
                bar_width=f"{max(width, 0.5):.2f}",
                payloads=tuple(payloads),
            )
        )
    ok = sum(1 for inv in models if inv.success is True)
    failed = sum(1 for inv in models if inv.success is False)
    summary = f"{plural(len(models), 'call')}: {ok} ok, {failed} failed"
    if span and recorded is not None:
        summary += f", over {fmt_duration(span)} (bars placed by each call's recorded start time)"
    elif span:
        summary += f", {fmt_duration(span)} in all (no start times recorded: bars laid end to end)"
    note = None
    if len(models) > MAX_TOOL_CALLS:
        note = f"showing the first {MAX_TOOL_CALLS:,} of {len(models):,} calls; the raw trace has them all"
    return ToolsView(tuple(calls), summary + ".", note)


def _claim_badge(verification: Any, config: SuiteConfig) -> Badge:
    if not isinstance(verification, str) or not verification:
        return _na("missing")
    if verification == "SUPPORTED":
        return Badge("✓", verification, "verdict verdict-pass")
    if verification in ("UNSUPPORTED", "CONTRADICTED"):
        return Badge("✗", verification, "verdict verdict-reject")
    if verification in config.claim_verifications:
        return Badge("!", verification, "verdict verdict-warn")
    return Badge("?", shorten(verification), "verdict verdict-other", "not a recognised verification value")


def _verifier_view(case: Case, outcome: LoadedTrace | FixtureProblem, config: SuiteConfig) -> VerifierView:
    if not isinstance(outcome, LoadedTrace):
        return VerifierView(False, (), (), (), (), "", None)
    trace = outcome.trace
    raw_eval = _dig(outcome.raw, "session", "selfEvaluation", "verifier_evaluation")
    verifier = trace.verifier
    draft_text = trace.executor_answer
    draft = _text_block(draft_text) if draft_text else None
    if verifier is None:
        return VerifierView(False, (), (), (), (), "", draft)
    badges: list[tuple[str, Badge]] = [("Verdict", verdict_badge(trace.verdict, config))]
    facts: list[Fact] = []
    gatekeeper = verifier.gatekeeper_result
    if gatekeeper is None:
        badges.append(("Gatekeeper", _na("absent")))
    else:
        status = (gatekeeper.status or "").strip()
        if status.casefold() == "pass":
            badges.append(("Gatekeeper", _yes(status)))
        elif status.casefold() == "fail":
            badges.append(("Gatekeeper", _no(status)))
        else:
            badges.append(("Gatekeeper", _na(shorten(status) or "no status")))
    recorded = gatekeeper.rule_set_version if gatekeeper else None
    expected = case.expectedGatekeeperRuleSetVersion
    if expected is not None:
        version_badge = _yes(recorded or "") if recorded == expected else _no(shorten(recorded) if recorded else "none recorded")
        badges.append((f"Rule set version (expected {expected})", version_badge))
    else:
        facts.append(Fact("Rule set version", shorten(recorded) if recorded else "—"))
    composer = verifier.composer_output
    mode = (composer.mode or "") if composer else ""
    if composer is None:
        badges.append(("Composer output", _na("absent")))
    elif mode.casefold() in [m.casefold() for m in config.composer_modes]:
        badges.append(("Composer mode", Badge("●", mode, "mark mark-info")))
    else:
        badges.append(("Composer mode", _na(shorten(mode) or "no mode")))
    raw_claims = _dig(raw_eval, "claim_checks")
    budget = _Budget(VERIFIER_BUDGET)
    claims = []
    if isinstance(raw_claims, list):
        for claim in raw_claims[:MAX_TOOL_CALLS]:
            item = claim if isinstance(claim, dict) else {}
            claims.append(
                ClaimRow(
                    claim_id=budget.cell(item.get("claim_id") if item else claim),
                    verification=_claim_badge(item.get("verification"), config),
                    detail=budget.cell(item.get("detail")),
                )
            )
        claims_note = plural(len(raw_claims), "claim check")
        if len(raw_claims) > MAX_TOOL_CALLS:
            claims_note += f"; the first {MAX_TOOL_CALLS:,} are shown, the raw trace has them all"
    else:
        claims_note = "No claim_checks recorded."
    return VerifierView(
        present=True,
        facts=tuple(facts),
        badges=tuple(badges),
        summary_tools=tuple(
            budget.cell(entry.tool_name or "(unnamed)") for entry in verifier.tool_trace_summary[:MAX_TOOL_CALLS]
        ),
        claims=tuple(claims),
        claims_note=claims_note,
        draft=draft,
    )


def _baseline_view(items: Sequence[DiffItem] | None) -> BaselineView:
    if items is None:
        return BaselineView("No baseline report, so nothing to compare with.", ())
    if not items:
        return BaselineView("No change against the baseline.", ())
    lines = tuple(DiffLine(diff_badge(item.type), item.metric, item.message) for item in items)
    kinds = [item.type for item in items]
    parts = [
        plural(kinds.count(kind), word)
        for kind, word in ((REGRESSION, "regression"), (IMPROVEMENT, "improvement"), (CHANGED, "change"))
        if kinds.count(kind)
    ]
    return BaselineView(", ".join(parts) + " against the baseline.", lines)


def _list_text(values: Sequence[str]) -> str:
    return ", ".join(values) if values else "—"


def _definition(case: Case, config: SuiteConfig, digest: str) -> tuple[Fact, ...]:
    markers = case.degradedAnswerMarkers if case.degradedAnswerMarkers is not None else list(config.degraded_answer_markers)
    flags = [
        name
        for name in ("requireV2AuditClosure", "requireClaimChecks", "requireComposerOutput", "requireSuccessfulEvidence")
        if getattr(case, name)
    ]
    facts = [
        Fact("Trace fixture", case.traceFixture),
        Fact("Expected keywords", _list_text(case.expectedRootCauseKeywords)),
        Fact("Keywords needed", str(case.keyword_threshold)),
        Fact("Required evidence tools", _list_text(case.requiredEvidenceTools)),
        Fact("Allowed verdicts", _list_text(case.allowedVerdicts)),
        Fact("Forbidden verdicts", _list_text(case.forbiddenVerdicts)),
        Fact("Forbidden answer phrases", _list_text(case.forbiddenAnswerKeywords)),
        Fact("Forbidden confirmed claims", _list_text(case.forbiddenConfirmedClaimKeywords)),
        Fact("Degraded answer markers", _list_text(markers)),
        Fact("Expected rule set version", case.expectedGatekeeperRuleSetVersion or "—"),
        Fact("Requirements", _list_text(flags)),
        Fact("Tags", _list_text(case.tags)),
        Fact("Case digest", digest),
    ]
    for key, value in sorted(case.extra_fields.items()):
        facts.append(Fact(f"{key} (extra field)", clip(pretty(value), TEXT_LIMIT).text))
    return tuple(facts)


def build_case_page(
    site: SiteInfo,
    case: Case,
    outcome: LoadedTrace | FixtureProblem,
    result: CaseResult,
    diff_items: Sequence[DiffItem] | None,
    prev: Neighbour | None,
    next_: Neighbour | None,
) -> CasePage:
    """One case page's view model; depends only on the case, its trace, its baseline items and neighbours."""
    config = site.config
    trace = outcome.trace if isinstance(outcome, LoadedTrace) else None
    answer = trace.session.answer if trace else ""
    facts = [
        Fact("Keywords", f"{result.matchedKeywordCount}/{result.requiredKeywordCount} (needs {case.keyword_threshold})"),
        Fact("Tool calls", f"{result.toolCallCount:,}"),
        Fact("Duration", fmt_duration(result.durationMs)),
    ]
    if isinstance(outcome, LoadedTrace):
        facts.append(Fact("Trace", f"{case.traceFixture} · {fmt_bytes(outcome.size)}"))
    else:
        facts.append(Fact("Trace", f"{case.traceFixture} · not read"))
    raw = None
    if isinstance(outcome, LoadedTrace):
        raw = _text_block(raw_trace_text(outcome), RAW_LIMIT)
    pager = Pager(
        prev=Link(f"← {prev.case_id}", f"{prev.slug}.html") if prev else None,
        next=Link(f"{next_.case_id} →", f"{next_.slug}.html") if next_ else None,
        back=Link("All cases", "../index.html"),
    )
    checks = tuple(Check(*_split_check(clip(check, CELL_LIMIT).text)) for check in result.failedChecks[:MAX_TOOL_CALLS])
    return CasePage(
        layout=make_layout(site, title=case.id, depth=1, current="", history_data=True),
        case_id=case.id,
        title=case.display_title if case.display_title != case.id else "",
        status=status_badge(result.status),
        verdict=verdict_badge(result.verdict, config),
        tags=tuple(Link(tag, index_filter_href("../", tag=tag)) for tag in case.tags),
        facts=tuple(facts),
        pager=pager,
        toc=CASE_SECTIONS,
        checks=checks,
        problem=outcome.message if isinstance(outcome, FixtureProblem) else None,
        question=_text_block(case.question),
        answer=_answer_view(case, answer, config),
        evidence=_evidence_rows(case, outcome, result),
        tools=_tools_view(outcome),
        verifier=_verifier_view(case, outcome, config),
        baseline=_baseline_view(diff_items),
        definition=_definition(case, config, result.caseDigest or case.digest()),  # evaluation made it already
        raw=raw,
    )


def raw_trace_text(outcome: LoadedTrace) -> str:
    """The trace as saved when the file is laid out in lines (as it is, no time spent re-indenting it), else pretty-printed."""
    if outcome.text is not None and "\n" in outcome.text.strip():
        return outcome.text.rstrip()
    return pretty(outcome.raw)


def _split_check(check: str) -> tuple[str, str]:
    code, _, message = check.partition(":")
    return (code.strip(), message.strip()) if message else ("check", check)


# --- diff page -------------------------------------------------------------------------------------------


class DiffRow(NamedTuple):
    """One diff item as a table row."""

    badge: Badge
    case: Link | None
    case_text: str
    metric: str
    before: str
    after: str
    delta: str
    message: str


class DiffSection(NamedTuple):
    """The items of one type."""

    anchor: str
    title: str
    badge: Badge
    empty: str
    rows: tuple[DiffRow, ...]


class MatrixCell(NamedTuple):
    """A count of cases that went from one verdict to another."""

    text: str
    href: str | None
    css: str
    title: str


class MatrixRow(NamedTuple):
    """A baseline verdict and its counts per current verdict."""

    header: str
    cells: tuple[MatrixCell, ...]


class Matrix(NamedTuple):
    """Verdict transitions: baseline verdict (rows) × current verdict (columns)."""

    columns: tuple[str, ...]
    rows: tuple[MatrixRow, ...]


class CaseRef(NamedTuple):
    """A case mentioned on the diff page (linked when it has a page in this run)."""

    text: str
    href: str | None


class Transition(NamedTuple):
    """The cases of one cell of the matrix."""

    anchor: str
    title: str
    cases: tuple[CaseRef, ...]


class DiffPage(NamedTuple):
    """diff.html: the baseline diff, regressions first, and the verdict transition matrix."""

    layout: Layout
    heading: str
    subtitle: str
    stats: tuple[Stat, ...]
    sections: tuple[DiffSection, ...]
    matrix: Matrix
    transitions: tuple[Transition, ...]
    downloads: tuple[Link, ...]


def _value_text(value: Any, metric: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if metric == "passRate" and isinstance(value, (int, float)):
        return percent(value)
    if isinstance(value, (int, float)):
        return fmt_count(value, 2)
    if isinstance(value, list):
        return "; ".join(str(v) for v in value) if value else "none"
    return str(value)


def _delta_text(delta: Any, metric: str) -> str:
    if delta is None:
        return ""
    if metric == "passRate":
        return f"{delta * 100:+.1f} pts"
    return f"{delta:+,.2f}".rstrip("0").rstrip(".") if isinstance(delta, float) else f"{delta:+,}"


_NEW_CASE = "(new case)"
_REMOVED_CASE = "(removed)"


def build_diff_page(site: SiteInfo, diff: DiffReport, baseline: Report, current: Report, slugs: dict[str, str]) -> DiffPage:
    """The diff page's view model."""
    config = site.config

    def case_link(case_id: str | None) -> tuple[Link | None, str]:
        if case_id is None:
            return None, "all cases"
        if case_id in slugs:
            return Link(case_id, f"cases/{slugs[case_id]}.html"), case_id
        return None, f"{case_id} (no longer in the suite)"

    sections = []
    for kind, anchor, title, empty in (
        (REGRESSION, "regressions", "Regressions", "No regressions: nothing got worse."),
        (IMPROVEMENT, "improvements", "Improvements", "No improvements."),
        (CHANGED, "changes", "Other changes", "No other changes."),
    ):
        rows = []
        for item in diff.items:
            if item.type != kind:
                continue
            link, text = case_link(item.caseId)
            rows.append(
                DiffRow(
                    badge=diff_badge(item.type),
                    case=link,
                    case_text=text,
                    metric=item.metric,
                    before=_value_text(item.baselineValue, item.metric),
                    after=_value_text(item.currentValue, item.metric),
                    delta=_delta_text(item.delta, item.metric),
                    message=item.message,
                )
            )
        sections.append(DiffSection(anchor, f"{title} ({len(rows):,})", diff_badge(kind), empty, tuple(rows)))

    before = {r.caseId: r.verdict or MISSING_VERDICT for r in baseline.results}
    after = {r.caseId: r.verdict or MISSING_VERDICT for r in current.results}
    row_keys = ordered_verdicts(list(before.values()), config) + ([_NEW_CASE] if set(after) - set(before) else [])
    col_keys = ordered_verdicts(list(after.values()), config) + ([_REMOVED_CASE] if set(before) - set(after) else [])
    members: dict[tuple[str, str], list[str]] = {}
    for case_id in sorted(set(before) | set(after)):
        key = (before.get(case_id, _NEW_CASE), after.get(case_id, _REMOVED_CASE))
        members.setdefault(key, []).append(case_id)
    matrix_rows = []
    transitions = []
    for i, row_key in enumerate(row_keys):
        cells = []
        for j, col_key in enumerate(col_keys):
            ids = members.get((row_key, col_key), [])
            same = row_key == col_key
            if not ids:
                cells.append(MatrixCell("·", None, "matrix-empty", f"{row_key} → {col_key}: no cases"))
                continue
            anchor = f"transition-{i}-{j}"
            css = "matrix-same" if same else "matrix-moved"
            title = f"{row_key} → {col_key}: {plural(len(ids), 'case')}"
            cells.append(MatrixCell(f"{len(ids):,}", f"#{anchor}", css, title))
            refs = tuple(CaseRef(cid, f"cases/{slugs[cid]}.html" if cid in slugs else None) for cid in ids)
            transitions.append(Transition(anchor, title, refs))
        matrix_rows.append(MatrixRow(row_key, tuple(cells)))
    points = (diff.currentPassRate - diff.baselinePassRate) * 100
    stats = (
        Stat("Pass rate", percent(diff.currentPassRate), f"baseline {percent(diff.baselinePassRate)} · {points:+.1f} pts",
             "stat stat-bad" if points < 0 else "stat stat-good" if points > 0 else "stat", None),
        Stat("Regressions", f"▼ {diff.regressionCount:,}", "items", "stat stat-bad" if diff.regressionCount else "stat stat-good", "#regressions"),
        Stat("Improvements", f"▲ {diff.improvementCount:,}", "items", "stat stat-good" if diff.improvementCount else "stat", "#improvements"),
        Stat("Other changes", f"● {diff.changedCount:,}", "items", "stat", "#changes"),
        Stat("Cases", f"{diff.currentTotalCases:,}", f"baseline {diff.baselineTotalCases:,}", "stat", None),
    )
    verdict = "Regressions found." if diff.hasRegression else "No regressions."
    return DiffPage(
        layout=make_layout(site, title="Baseline diff", depth=0, current="diff"),
        heading="Against the baseline",
        subtitle=f"{verdict} Passed {diff.baselinePassedCases:,} → {diff.currentPassedCases:,} cases.",
        stats=stats,
        sections=tuple(sections),
        matrix=Matrix(tuple(col_keys), tuple(matrix_rows)),
        transitions=tuple(transitions),
        downloads=(Link("diff.json", "diff.json"), Link("diff.md", "diff.md")),
    )


# --- history page ----------------------------------------------------------------------------------------


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


class HistoryPage(NamedTuple):
    """history.html: every recorded run and the trends."""

    layout: Layout
    heading: str
    subtitle: str
    charts: tuple[Chart, ...]
    runs: tuple[RunRow, ...]


def build_history_page(site: SiteInfo, runs: Sequence[Run], current_run_id: str, limit: int) -> HistoryPage:
    """The history page's view model (newest run first in the table)."""
    rows = []
    for index, run in reversed(list(enumerate(runs, 1))):
        current = run.runId == current_run_id
        rows.append(
            RunRow(
                number=str(index),
                run_id=run.runId,
                label=run.label or "—",
                time=fmt_time(run.createdAt),
                commit=run.commit[:10] if run.commit else "—",
                commit_title=run.commit or "no commit recorded",
                pass_rate="—" if run.figure("passRate") is None else percent(run.figure("passRate")),
                passed=fmt_count(run.figure("passedCases")),
                failed=fmt_count(run.figure("failedCases")),
                not_run=fmt_count(run.figure("notRunCases")),
                total=fmt_count(run.figure("totalCases")),
                tool_calls=fmt_count(run.figure("averageToolCallCount"), 2),
                duration=fmt_duration(run.figure("averageDurationMs")),
                css="run-current" if current else "",
                current=current,
            )
        )
    charts = (
        pass_rate_chart(runs, "chart-history-pass-rate"),
        _line_chart(
            "chart-history-tool-calls", "Average tool calls", runs, "averageToolCallCount", "Tool calls per case",
            show=lambda v: fmt_count(v, 2),
        ),
        _line_chart("chart-history-duration", "Average duration", runs, "averageDurationMs", "Duration (ms)", show=fmt_duration),
    )
    return HistoryPage(
        layout=make_layout(site, title="History", depth=0, current="history", charts=True),
        heading="Run history",
        subtitle=f"{plural(len(runs), 'recorded run')} (the last {limit:,} are kept), newest first.",
        charts=charts,
        runs=tuple(rows),
    )


# --- shared history data (assets/history-data.js) --------------------------------------------------------


def history_data(runs: Sequence[Run], report: Report, strips: dict[str, str], flaky: set[str]) -> dict[str, Any]:
    """What every case page's history strip reads: the runs and one `P`/`F`/`-` string per current case."""
    return {
        "formatVersion": 1,
        "runs": [
            {"runId": shorten(run.runId), "label": shorten(run.label or run.runId), "time": fmt_time(run.createdAt)} for run in runs
        ],
        # Pairs, not an object: in a script's object literal a case id like "__proto__" would not be a key.
        "cases": [[r.caseId, strips[r.caseId]] for r in report.results],
        "flaky": sorted(flaky & {r.caseId for r in report.results}),
    }
