"""index.html (the dashboard) and index-<n>.html (the static pages of a long case list).

A suite of more than SiteInfo.index_page_rows cases gets its case list in static pages of that many rows: the
index shows the first and links the others, so that every case page is linked in plain HTML without one huge
index. The index's script shows every case from compact data (case_table_data) in an asset of its own
(CaseRowsFile, assets/case-rows-<hash>.js), which it loads when the reader first uses the table's controls: the
index's first paint waits only for its own HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from sitegen import formatting as fmt
from sitegen.compare.changes import FILTER_ORDER, ChangeKind
from sitegen.compare.diff_report import DiffReport
from sitegen.defaults import TABLE_PAGE_SIZE
from sitegen.history.runs import Run
from sitegen.history.since import (
    LOCAL_NOTE,
    FailingSince,
    named_by_commit,
    runs_ago_text,
    since_run_text,
    since_sentence,
)
from sitegen.report.failures_by_rule import RuleCount
from sitegen.report.results import MISSING_VERDICT, CaseResult, Report
from sitegen.report.status import Status
from sitegen.site.html import urls
from sitegen.site.html.render import content_hashed_name, script_file
from sitegen.site.pages.badges import (
    FLAKY_HINT,
    Badge,
    change_badge,
    flaky_title,
    ordered_verdicts,
    status_badge,
    verdict_badge,
)
from sitegen.site.pages.change_views import Banner, banner, changes_by_case
from sitegen.site.pages.charts import Chart, pass_rate_chart, verdict_bar_chart, verdict_history_chart
from sitegen.site.pages.common import Layout, Link, Option, SiteInfo, Stat, make_layout
from sitegen.site.pages.headline_stats import headline_stats
from sitegen.site.pages.rule_panel import RulePanel, rule_panel
from sitegen.suite.config import SuiteConfig


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
    change: Badge | None  # the change against the baseline, shown in the status cell; None without a baseline
    change_value: str  # for data-change; "" without a baseline
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
    trials: str = ""  # "passed/trials" for a case with a folder of trials, else empty
    since: SinceCell | None = None  # the Failing since cell (the index only, when some case has a streak to tell)


class SinceCell(NamedTuple):
    """The index's Failing since cell: how long a failing case has failed (empty for the others)."""

    ago: str  # "3 runs ago", "this run"; "" when the case is not failing
    run: str  # the streak's first run, "PR #12 · a1b2c3d · 2026-11-30"; "" for this run
    sort: float  # minus the runs ago, half a run more for "or earlier" (the earliest first); 1 when not failing: last
    title: str = ""  # the tooltip: the case page's sentence, and how many runs of the streak it failed in


_NOT_FAILING = SinceCell("", "", 1)


def since_cell(streak: FailingSince | None) -> SinceCell:
    """A case's Failing since cell (history/since.py): sorted ascending, the longest-failing case comes first."""
    if streak is None:
        return _NOT_FAILING
    run = since_run_text(streak) if streak.runs_ago else ""
    runs = f" Failed in {fmt.plural(streak.failed_runs, 'recorded run')} of the streak." if streak.failed_runs > 1 else ""
    title = since_sentence(streak) + runs
    return SinceCell(runs_ago_text(streak), run, -streak.runs_ago - (0.5 if streak.first_recorded else 0), title)


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
    code_options: tuple[Option, ...]  # the rule codes some case fails
    change_options: tuple[Option, ...]  # none without a baseline: no Change filter
    total_text: str
    page_size: int
    flaky_count: int
    pages: PageNav | None = None  # the static pages of a long case list
    rows_src: str = ""  # assets/case-rows-<hash>.js (CaseRowsFile), when the table shows only the first page
    total: int = 0  # how many cases the whole list has (the index's count line before its rows' data is loaded)
    search_text: str = ""  # assets/search-text.js (questions and answers), loaded by the search box when first used
    since_column: bool = False  # the Failing since column: some case fails with a streak to tell (the index only)
    flaky_hint: str = ""  # what the "Flaky only" box keeps, said beside it


class CaseRowsFile(NamedTuple):
    """The asset that holds every case's row (case_table_data) for the index of a long case list."""

    path: str  # assets/case-rows-<8 hex>.js
    script: bytes  # a classic script setting window.SITEGEN_CASE_ROWS (render.script_file)


class IndexPage(NamedTuple):
    """index.html: headline figures, charts, failures by rule, the case table."""

    layout: Layout
    heading: str
    subtitle: str
    stats: tuple[Stat, ...]
    charts: tuple[Chart, ...]
    table: CaseTable
    banner: Banner | None
    rules: RulePanel | None  # None when no case fails a rule, now or in the baseline


class CaseListPage(NamedTuple):
    """index-<n>.html: one static page of a long case list (the index shows the first)."""

    layout: Layout
    heading: str
    subtitle: str
    table: CaseTable
    pages: PageNav


def _page_nav(number: int, total: int, rows: int) -> PageNav:
    count = urls.case_list_page_count(total, rows)
    first = (number - 1) * rows
    summary = f"Cases {first + 1:,}–{min(total, first + rows):,} of {total:,} (page {number:,} of {count:,})"
    links = tuple(PageLink(f"{n:,}", urls.case_list_page(n), n == number) for n in range(1, count + 1))
    return PageNav(summary, links)


def _verdict_value(result: CaseResult) -> str:
    return fmt.shorten(result.verdict) if result.verdict else MISSING_VERDICT


def _case_row(
    result: CaseResult, slug: str, flaky: bool, config: SuiteConfig, change: ChangeKind | None, on_index: bool = True,
    since: SinceCell | None = None,
) -> CaseRow:
    ratio = result.matchedKeywordCount / result.requiredKeywordCount if result.requiredKeywordCount else 1.0
    duration = result.durationMs
    codes = tuple(result.failed_codes)
    return CaseRow(
        case_id=result.caseId,
        href=urls.case_href(slug) if slug else "",
        title=result.title,
        show_title=result.title != result.caseId,
        tags=tuple(_tag_filter_link(tag, on_index) for tag in result.tags),
        status=status_badge(result.status),
        status_value=result.status.value,
        status_sort=_status_sort(result),
        change=change_badge(change) if change else None,
        change_value=change.value if change else "",
        verdict=verdict_badge(result.verdict, config),
        verdict_value=_verdict_value(result),
        codes=codes,
        codes_text=", ".join(codes),
        keywords=f"{result.matchedKeywordCount}/{result.requiredKeywordCount}",
        keywords_sort=f"{ratio:.4f}",
        tool_calls=f"{result.toolCallCount:,}",
        tool_calls_sort=str(result.toolCallCount),
        duration=fmt.duration(duration),
        duration_sort="-1" if duration is None else repr(float(duration)),
        flaky=flaky,
        flaky_title=flaky_title(result) if flaky else "",
        trials=_trial_count(result),
        since=since,
    )


def _trial_count(result: CaseResult) -> str:
    """passed/trials for the status cell of a case with a folder of trials; empty otherwise."""
    return "" if result.trialResults is None else f"{result.passedTrials}/{result.trials}"


def _status_sort(result: CaseResult) -> int | float:
    """The status order (failed, not run, passed); with trials, then the trial pass rate (as the script sorts)."""
    order = result.status.rank
    if result.trialResults is None or not result.trials:
        return order
    return round(order + 0.999 * result.passedTrials / result.trials, 4)


def _trial_row_data(result: CaseResult) -> list[list[int]]:
    """What a row of the inlined case data adds for a case with a folder of trials: [[passed, trials]]."""
    return [] if result.trialResults is None else [[result.passedTrials, result.trials]]


# A suite has few distinct tags and thousands of rows that link them.
@lru_cache(maxsize=4096)
def _tag_filter_link(tag: str, on_index: bool) -> Link:
    # On the index a tag filters its table in place; other pages link to the index filtered.
    return Link(tag, urls.index_filter(tag=tag).removeprefix(urls.INDEX if on_index else ""))


def _change_options(changes: Mapping[str, ChangeKind | None] | None) -> tuple[Option, ...]:
    """The Change filter's choices: the kinds some listed case has (removed cases are not rows); none without a baseline."""
    if changes is None:
        return ()
    present = set(changes.values())
    return (Option("", "All changes"), *(Option(c.value, change_badge(c).text) for c in FILTER_ORDER if c in present))


def _index_table(
    site: SiteInfo,
    report: Report,
    slugs: dict[str, str],
    flaky: set[str],
    changes: Mapping[str, ChangeKind] | None,
    codes: Sequence[str],
    since: Mapping[str, FailingSince],
) -> tuple[CaseTable, CaseRowsFile | None]:
    """The case table of the index (the first page of rows when the list has several, and the filters), and then
    the asset of every case's row."""
    config, results, rows_per_page = site.config, report.results, site.index_page_rows
    paged = urls.case_list_page_count(len(results), rows_per_page) > 1
    shown = results[:rows_per_page] if paged else results
    cells = {r.caseId: since_cell(since.get(r.caseId)) for r in results} if since else None
    verdicts = ordered_verdicts(list({_verdict_value(r): None for r in results}), config)
    tags = sorted({tag for r in results for tag in r.tags})
    statuses = [s for s in Status if any(r.status is s for r in results)]
    rows_file = None
    if paged:
        script = script_file("SITEGEN_CASE_ROWS", case_table_data(results, slugs, flaky, config, changes, cells))
        rows_file = CaseRowsFile(content_hashed_name(urls.CASE_ROWS, script), script)
    table = CaseTable(
        rows=tuple(
            _case_row(r, slugs.get(r.caseId, ""), r.caseId in flaky, config, _change(changes, r),
                      since=None if cells is None else cells[r.caseId])
            for r in shown
        ),
        status_options=(Option("", "All statuses"), *(Option(s.value, status_badge(s).text) for s in statuses)),
        verdict_options=(Option("", "All verdicts"), *(Option(v, v) for v in verdicts)),
        tag_options=(Option("", "All tags"), *(Option(t, t) for t in tags)),
        code_options=(Option("", "Any"), *(Option(c, c) for c in sorted(codes))),
        change_options=_change_options(None if changes is None else {r.caseId: _change(changes, r) for r in results}),
        total_text=fmt.plural(len(results), "case"),
        page_size=TABLE_PAGE_SIZE,
        flaky_count=len(flaky & {r.caseId for r in results}),
        pages=_page_nav(1, len(results), rows_per_page) if paged else None,
        rows_src=rows_file.path if rows_file else "",
        total=len(results),
        search_text=urls.SEARCH_TEXT,
        since_column=cells is not None,
        flaky_hint=FLAKY_HINT,
    )
    return table, rows_file


def _change(changes: Mapping[str, ChangeKind] | None, result: CaseResult) -> ChangeKind | None:
    return None if changes is None else changes.get(result.caseId)


def build_index_page(
    site: SiteInfo,
    report: Report,
    slugs: dict[str, str],
    runs: Sequence[Run],
    flaky: set[str],
    diff: DiffReport | None,
    run: Run,
    by_rule: Sequence[RuleCount] = (),
    since: Mapping[str, FailingSince] | None = None,
) -> tuple[IndexPage, CaseRowsFile | None]:
    """The dashboard's view model (with the first page of the case list when there are several), and then the
    asset of every case's row when there are several pages (the index names it)."""
    config = site.config
    changes = changes_by_case(diff)
    name = fmt.run_name(run.label, run.runId)
    # A CI run is often named by its commit: then the commit is not printed a second time.
    commit = f" · commit {run.commit[:10]}" if run.commit and not named_by_commit(run, name) else ""
    local = f" · {LOCAL_NOTE}" if run.local else ""
    subtitle = f"{fmt.plural(report.totalCases, 'case')} · {fmt.run_phrase(name)} · {fmt.timestamp(run.createdAt)}{commit}{local}"
    table, rows_file = _index_table(
        site, report, slugs, flaky, changes, [c.code for c in by_rule if c.current], since or {}
    )
    page = IndexPage(
        layout=make_layout(
            site,
            title="Overview",
            description=(
                f"Diagnosis eval, {fmt.run_phrase(name)}: {report.passedCases:,} of {fmt.plural(report.totalCases, 'case')} passed "
                f"({fmt.percent(report.passRate)}); failures by rule, charts and every case."
            ),
            depth=0,
            current="index",
            charts=True,
        ),
        heading="Diagnosis eval report",
        subtitle=subtitle,
        stats=tuple(headline_stats(report, diff)),
        charts=(pass_rate_chart(runs), verdict_bar_chart(report, config), verdict_history_chart(runs, config)),
        table=table,
        banner=banner(diff, slugs, on_index=True) if diff is not None else None,
        rules=rule_panel(by_rule),
    )
    return page, rows_file


def case_table_data(
    results: Sequence[CaseResult],
    slugs: dict[str, str],
    flaky: set[str],
    config: SuiteConfig,
    changes: Mapping[str, ChangeKind] | None = None,
    since: Mapping[str, SinceCell] | None = None,
) -> dict[str, Any]:
    """Every case's row in compact form, for the index's script to filter, sort and page the whole list.

    A row: [id, link (its slug; for a case without a page its raw trace's file name, or "": urls.case_href),
    title ("" when it is the id), tags, status, verdict, failed check codes, matched keywords, required keywords, tool calls, duration text, duration in ms or null, why it is flaky (its badge's title) or 0, change
    against the baseline ("" without one)], plus [passed trials, trials] for a case with a folder of trials; the
    badges of each status, verdict and change are given once. With the Failing since column, `since` holds the
    failing cases' cells as [id, sort key, runs ago, first run] (SinceCell).
    """
    statuses: dict[str, list[Any]] = {}
    verdicts: dict[str, list[str]] = {}
    change_badges: dict[str, list[str]] = {}
    rows = []
    for r in results:
        kind = _change(changes, r)
        change = kind.value if kind else ""
        if kind and change not in change_badges:
            badge = change_badge(kind)
            change_badges[change] = [badge.icon, badge.text, badge.css, badge.title]
        status = r.status.value
        if status not in statuses:
            badge = status_badge(r.status)
            statuses[status] = [badge.icon, badge.text, badge.css, r.status.rank]
        verdict = _verdict_value(r)
        if verdict not in verdicts:
            badge = verdict_badge(r.verdict, config)
            verdicts[verdict] = [badge.icon, badge.text, badge.css]
        rows.append(
            [
                r.caseId, slugs.get(r.caseId, ""), r.title if r.title != r.caseId else "", r.tags, status, verdict,
                r.failed_codes, r.matchedKeywordCount, r.requiredKeywordCount, r.toolCallCount,
                fmt.duration(r.durationMs), r.durationMs, flaky_title(r) if r.caseId in flaky else 0, change, *_trial_row_data(r),
            ]
        )
    data = {"formatVersion": 3, "statuses": statuses, "verdicts": verdicts, "changes": change_badges, "rows": rows}
    if since is not None:
        data["since"] = [[case_id, cell.sort, cell.ago, cell.run, cell.title] for case_id, cell in since.items() if cell.ago]
    return data


def case_list_rows(results: Sequence[CaseResult], number: int, rows: int) -> Sequence[CaseResult]:
    """The results on static page `number` of the case list at `rows` a page."""
    return results[(number - 1) * rows : number * rows]


def build_case_list_page(
    site: SiteInfo,
    results: Sequence[CaseResult],
    slugs: dict[str, str],
    flaky: set[str],
    number: int,
    diff: DiffReport | None,
) -> CaseListPage:
    """Page `number` (2 or more) of a long case list: its rows as plain HTML, with links to every page."""
    shown = case_list_rows(results, number, site.index_page_rows)
    changes = changes_by_case(diff)
    config = site.config
    rows = tuple(
        _case_row(r, slugs.get(r.caseId, ""), r.caseId in flaky, config, _change(changes, r), on_index=False) for r in shown
    )
    nav = _page_nav(number, len(results), site.index_page_rows)
    table = CaseTable(
        rows=rows, status_options=(), verdict_options=(), tag_options=(), code_options=(), change_options=(),
        total_text=fmt.plural(len(results), "case"),
        page_size=site.index_page_rows, flaky_count=0, pages=nav,
    )
    return CaseListPage(
        layout=make_layout(
            site,
            title=f"Cases, page {number:,}",
            description=f"{nav.summary}: each case's status, agent verdict and failed checks.",
            depth=0,
            current="index",
        ),
        heading="Cases",
        subtitle=nav.summary + ". The overview filters and sorts them all.",
        table=table,
        pages=nav,
    )
