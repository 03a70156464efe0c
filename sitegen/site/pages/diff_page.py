"""diff.html: the baseline diff — the cases by change (regressed and removed first), the pass rate, the differences
metric by metric (the diff's items, by type) and the verdict transition matrix. Values are worded as in diff.md (compare/wording.py)."""

from __future__ import annotations

from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.compare.changes import ChangeKind
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import CHANGED, IMPROVEMENT, REGRESSION, DiffItem
from sitegen.compare.wording import (
    DIFFERENCE_TITLES,
    DIFFERENCES_HEADING,
    chance_clause,
    describe_delta,
    describe_value,
    item_message,
    pass_rate_points,
)
from sitegen.report.results import MISSING_VERDICT, Report
from sitegen.site.html import urls
from sitegen.site.pages.badges import Badge, diff_badge, ordered_verdicts
from sitegen.site.pages.change_views import (
    REGRESSED_ANCHOR,
    Banner,
    CaseRef,
    ChangeSection,
    banner,
    change_sections,
    pass_rate_css,
    section_anchor,
)
from sitegen.site.pages.common import Layout, Link, SiteInfo, Stat, make_layout
from sitegen.suite.config import SuiteConfig

_NEW_CASE = "(new case)"
_REMOVED_CASE = "(removed)"
# Rows of "Other differences" on the page: with every answer edited, each case has one (10,000 rows made a
# 6 MB page that took a second to build); diff.json and diff.md list every item. Got worse and Got better are whole.
OTHER_DIFFERENCES_SHOWN = 1000
_SECTIONS = (
    (REGRESSION, "regressions", "No figure got worse."),
    (IMPROVEMENT, "improvements", "No figure got better."),
    (CHANGED, "changes", "No other differences."),
)


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
    note: str | None = None  # the rows are the first of more


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


class Transition(NamedTuple):
    """The cases of one cell of the matrix."""

    anchor: str
    title: str
    cases: tuple[CaseRef, ...]


class DiffPage(NamedTuple):
    """diff.html: the headline, the cases by change, the items by type and the verdict transition matrix."""

    layout: Layout
    heading: str
    subtitle: str
    banner: Banner
    stats: tuple[Stat, ...]
    cases: tuple[ChangeSection, ...]
    differences_heading: str  # over the sections of differences (the diff's items), metric by metric
    sections: tuple[DiffSection, ...]
    matrix: Matrix
    transitions: tuple[Transition, ...]
    downloads: tuple[Link, ...]


def _diff_row(item: DiffItem, slugs: dict[str, str]) -> DiffRow:
    if item.caseId is None:
        link, text = None, "all cases"
    elif item.caseId in slugs:
        link, text = Link(item.caseId, urls.case_href(slugs[item.caseId])), item.caseId
    else:
        link, text = None, f"{item.caseId} (no longer in the suite)"
    return DiffRow(
        badge=diff_badge(item.type),
        case=link,
        case_text=text,
        metric=item.metric,
        before=describe_value(item.metric, item.baselineValue),
        after=describe_value(item.metric, item.currentValue),
        delta=describe_delta(item.metric, item.delta),
        message=item_message(item),
    )


def _sections(diff: DiffReport, slugs: dict[str, str]) -> tuple[DiffSection, ...]:
    """The diff items by type: regressions, improvements, other changes."""
    sections = []
    for kind, anchor, empty in _SECTIONS:
        items = [item for item in diff.items if item.type == kind]
        shown = items[:OTHER_DIFFERENCES_SHOWN] if kind == CHANGED else items
        note = None
        if len(shown) < len(items):
            note = f"The first {len(shown):,} of {len(items):,} are listed here; {urls.DIFF_JSON} and {urls.DIFF_MD} list them all."
        rows = tuple(_diff_row(item, slugs) for item in shown)
        sections.append(DiffSection(anchor, f"{DIFFERENCE_TITLES[kind]} ({len(items):,})", diff_badge(kind), empty, rows, note))
    return tuple(sections)


def _transitions(
    baseline: Report, current: Report, slugs: dict[str, str], config: SuiteConfig
) -> tuple[Matrix, tuple[Transition, ...]]:
    """How many cases went from each baseline verdict to each current verdict, and which ones."""
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
            if not ids:
                cells.append(MatrixCell("·", None, "matrix-empty", f"{row_key} → {col_key}: no cases"))
                continue
            anchor = f"transition-{i}-{j}"
            css = "matrix-same" if row_key == col_key else "matrix-moved"
            title = f"{row_key} → {col_key}: {fmt.plural(len(ids), 'case')}"
            cells.append(MatrixCell(f"{len(ids):,}", f"#{anchor}", css, title))
            refs = tuple(CaseRef(cid, urls.case_href(slugs[cid]) if cid in slugs else None) for cid in ids)
            transitions.append(Transition(anchor, title, refs))
        matrix_rows.append(MatrixRow(row_key, tuple(cells)))
    return Matrix(tuple(col_keys), tuple(matrix_rows)), tuple(transitions)


def _stats(diff: DiffReport) -> tuple[Stat, ...]:
    """The cases by change (as the headline orders them), then the pass rate, then the differences (the items)."""
    counts = diff.caseChangeCounts
    regressed, removed = ChangeKind.REGRESSED, ChangeKind.REMOVED
    regressed_css = "stat stat-bad" if diff.caseRegressionCount else "stat stat-good"
    points = pass_rate_points(diff.baselinePassRate, diff.currentPassRate)
    if diff.pairedTest is not None:
        points += f" · {chance_clause(diff.pairedTest, diff.alpha)}"
    items = f"▼ {diff.regressionCount:,} worse · ▲ {diff.improvementCount:,} better · ● {diff.changedCount:,} other"
    gone = counts.get(removed, 0)
    cards = []
    # A card per table of the page below the breaking one, left out with its table when that would be empty.
    for kind in ChangeKind:
        count = counts.get(kind, 0)
        if kind.title is None or kind.breaking or (kind.empty is None and not count):
            continue
        if kind is ChangeKind.CHANGED and not diff.baselineEvidence:
            continue  # without the agent's answers in the baseline nothing can be seen to behave differently
        css, detail = ("stat stat-good" if kind is ChangeKind.FIXED and count else "stat"), "cases"
        if kind.gated and count:  # the gate fails on them, though the agent was not judged
            css, detail = "stat stat-warn", "cases: the gate fails"
        if kind is ChangeKind.CHANGED and count:  # passing, but a person must look
            css, detail = "stat stat-warn", "passing cases"
        cards.append(Stat(kind.said.several.capitalize(), f"{kind.icon} {count:,}", detail, css, f"#{section_anchor(kind)}"))
    return (
        Stat("Regressions", f"{regressed.icon} {diff.caseRegressionCount:,}",
             f"cases · {gone:,} {removed.word}" if gone else "cases", regressed_css, f"#{REGRESSED_ANCHOR}"),
        *cards,
        Stat("Pass rate", fmt.percent(diff.currentPassRate), f"baseline {fmt.percent(diff.baselinePassRate)} · {points}",
             pass_rate_css(diff), None),
        Stat("Differences", f"{len(diff.items):,}", items, "stat", "#items"),
    )


def build_diff_page(site: SiteInfo, diff: DiffReport, baseline: Report, current: Report, slugs: dict[str, str]) -> DiffPage:
    """The diff page's view model."""
    matrix, transitions = _transitions(baseline, current, slugs, site.config)
    subtitle = (
        f"{diff.baselinePassedCases:,} of {fmt.plural(diff.baselineTotalCases, 'case')} passed in the baseline, "
        f"{diff.currentPassedCases:,} of {diff.currentTotalCases:,} now."
    )
    return DiffPage(
        layout=make_layout(
            site,
            title="Baseline diff",
            description=f"This run against the baseline: the cases that regressed, were fixed or are new, and every metric. {subtitle}",
            depth=0,
            current="diff",
        ),
        heading="Against the baseline",
        subtitle=subtitle,
        banner=banner(diff, slugs, on_index=False),
        stats=_stats(diff),
        cases=change_sections(diff, slugs),
        differences_heading=DIFFERENCES_HEADING,
        sections=_sections(diff, slugs),
        matrix=matrix,
        transitions=transitions,
        downloads=(Link(urls.DIFF_JSON, urls.DIFF_JSON), Link(urls.DIFF_MD, urls.DIFF_MD)),
    )
