"""diff.html: the baseline diff, regressions first, and the verdict transition matrix."""

from __future__ import annotations

from typing import Any, NamedTuple

from sitegen import formatting as fmt
from sitegen import urls
from sitegen.config import SuiteConfig
from sitegen.diff import CHANGED, IMPROVEMENT, REGRESSION, DiffItem, DiffReport
from sitegen.report import MISSING_VERDICT, Report
from sitegen.views.badges import Badge, diff_badge, ordered_verdicts
from sitegen.views.common import Layout, Link, SiteInfo, Stat, make_layout

_NEW_CASE = "(new case)"
_REMOVED_CASE = "(removed)"
_SECTIONS = (
    (REGRESSION, "regressions", "Regressions", "No regressions: nothing got worse."),
    (IMPROVEMENT, "improvements", "Improvements", "No improvements."),
    (CHANGED, "changes", "Other changes", "No other changes."),
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
        return fmt.UNKNOWN
    if isinstance(value, bool):
        return fmt.yes_no(value)
    if metric == "passRate" and isinstance(value, (int, float)):
        return fmt.percent(value)
    if isinstance(value, (int, float)):
        return fmt.count(value, 2)
    if isinstance(value, list):
        return "; ".join(str(v) for v in value) if value else "none"
    return str(value)


def _delta_text(delta: Any, metric: str) -> str:
    if delta is None:
        return ""
    if metric == "passRate":
        return fmt.points(delta)
    return fmt.signed(delta)


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
        before=_value_text(item.baselineValue, item.metric),
        after=_value_text(item.currentValue, item.metric),
        delta=_delta_text(item.delta, item.metric),
        message=item.message,
    )


def _sections(diff: DiffReport, slugs: dict[str, str]) -> tuple[DiffSection, ...]:
    """The diff items by type: regressions, improvements, other changes."""
    sections = []
    for kind, anchor, title, empty in _SECTIONS:
        rows = tuple(_diff_row(item, slugs) for item in diff.items if item.type == kind)
        sections.append(DiffSection(anchor, f"{title} ({len(rows):,})", diff_badge(kind), empty, rows))
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
    change = diff.currentPassRate - diff.baselinePassRate
    rate_css = "stat stat-bad" if change < 0 else "stat stat-good" if change > 0 else "stat"
    rate_detail = f"baseline {fmt.percent(diff.baselinePassRate)} · {fmt.points(change)}"
    return (
        Stat("Pass rate", fmt.percent(diff.currentPassRate), rate_detail, rate_css, None),
        Stat("Regressions", f"▼ {diff.regressionCount:,}", "items", "stat stat-bad" if diff.regressionCount else "stat stat-good", "#regressions"),
        Stat("Improvements", f"▲ {diff.improvementCount:,}", "items", "stat stat-good" if diff.improvementCount else "stat", "#improvements"),
        Stat("Other changes", f"● {diff.changedCount:,}", "items", "stat", "#changes"),
        Stat("Cases", f"{diff.currentTotalCases:,}", f"baseline {diff.baselineTotalCases:,}", "stat", None),
    )


def build_diff_page(site: SiteInfo, diff: DiffReport, baseline: Report, current: Report, slugs: dict[str, str]) -> DiffPage:
    """The diff page's view model."""
    matrix, transitions = _transitions(baseline, current, slugs, site.config)
    verdict = "Regressions found." if diff.hasRegression else "No regressions."
    return DiffPage(
        layout=make_layout(site, title="Baseline diff", depth=0, current="diff"),
        heading="Against the baseline",
        subtitle=f"{verdict} Passed {diff.baselinePassedCases:,} → {diff.currentPassedCases:,} cases.",
        stats=_stats(diff),
        sections=_sections(diff, slugs),
        matrix=matrix,
        transitions=transitions,
        downloads=(Link(urls.DIFF_JSON, urls.DIFF_JSON), Link(urls.DIFF_MD, urls.DIFF_MD)),
    )
