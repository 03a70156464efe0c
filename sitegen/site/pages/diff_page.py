"""diff.html: the baseline diff, each fact once — the headline in counts, then every case that changed, once, under
its change kind (its rules, what the agent did differently, and the figures of it that moved, folded), the kinds
with no case in one line, then the figures of the whole suite and the verdicts that moved (docs/comparison.md,
"The diff page"). Values and figures are worded as in diff.md (compare/wording.py, compare/items.py's labels).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.checks import check_codes
from sitegen.compare import wording
from sitegen.compare.changes import CaseChange, ChangeKind
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import VERDICT_DISTRIBUTION, DiffItem, Metric, metric_label
from sitegen.compare.whatchanged import Part, what_changed
from sitegen.compare.where import streak_text
from sitegen.defaults import DIFF_CASES_IN_FULL, FOLD_AFTER
from sitegen.report.results import MISSING_VERDICT, Report
from sitegen.report.status import Status
from sitegen.site.html import urls
from sitegen.site.pages.badges import Badge, change_badge, diff_badge, ordered_verdicts
from sitegen.site.pages.change_views import Banner, CheckLine, Segment, banner, check_line, section_anchor
from sitegen.site.pages.common import Layout, Link, SiteInfo, make_layout
from sitegen.site.pages.text import MAX_TOOL_CALLS
from sitegen.suite.config import SuiteConfig

_NEW_CASE = "(new case)"
_REMOVED_CASE = "(removed)"
# Cases listed under "Passing, figures moved": with every answer edited each case has a figure that moved (10,000
# rows made a 6 MB page that took a second to build); diff.json and diff.md list every one.
OTHER_DIFFERENCES_SHOWN = 1000
# Items a case's row does not fold under it: its section and its rules say them, and the verdicts section the verdict.
_SAID_BY_THE_ROW = frozenset((Metric.PASSED, Metric.PRESENT, Metric.FAILED_CHECKS, Metric.VERDICT))
_SUITE_SAID_ELSEWHERE = (Metric.PASS_RATE, VERDICT_DISTRIBUTION)  # the banner's pass rate, the verdicts section
_NONE_CHANGED = "no passing case behaves differently"  # in the "nothing …" line, when answers on both sides tell
_LONG_KINDS = frozenset((ChangeKind.STILL_PASSING, ChangeKind.CHANGED))  # listed up to OTHER_DIFFERENCES_SHOWN
# Kinds named in the "nothing …" line when empty: only trials can be within noise, so a suite of single traces never
# mentions it; a still-passing case is never news.
_ALWAYS_NAMED = frozenset((ChangeKind.REGRESSED, ChangeKind.REMOVED, ChangeKind.FIXED, ChangeKind.NEW, ChangeKind.STILL_FAILING))


class Figure(NamedTuple):
    """One figure that moved: its words, the two values, the change, and why it counts as it does."""

    badge: Badge
    label: str
    before: str
    after: str
    delta: str
    note: str


class CaseEntry(NamedTuple):
    """A case that changed, once: its link, its rules, what the agent did differently, its figures that moved."""

    case: Segment
    change: str  # the change kind, for data-change
    rules: tuple[CheckLine, ...]
    what: tuple[Part, ...]  # compare/whatchanged.py's phrase, or words of the kind's own
    figures: tuple[Figure, ...]
    figures_summary: str  # "3 figures moved: …", the fold's summary


class KindSection(NamedTuple):
    """The cases of one change kind."""

    anchor: str
    title: str
    badge: Badge
    rules_header: str
    entries: tuple[CaseEntry, ...]  # the first DIFF_CASES_IN_FULL, in full
    compact: tuple[CaseEntry, ...]  # the rest, one compact row each (their rules' codes and what changed)
    compact_lead: str  # what the compact rows are, when there are any; else ""
    folded: bool  # a long list starts folded (never the regressions)
    fold_summary: str  # "Show the 471 cases", the fold's summary
    note: str  # the entries are the first of more; else ""


class Transition(NamedTuple):
    """Cases whose agent verdict moved from one value to another."""

    before: str
    after: str
    cases: tuple[Segment, ...]


class Verdicts(NamedTuple):
    """The agent's verdicts against the baseline: the counts that moved, the cases that moved, the rest as counts."""

    counts: tuple[Figure, ...]
    moved: tuple[Transition, ...]
    unchanged: str  # "17 PASS, 3 LOW_CONFID and 2 REJECT kept their verdict."


class DiffPage(NamedTuple):
    """diff.html's view model."""

    layout: Layout
    heading: str
    subtitle: str
    banner: Banner
    sections: tuple[KindSection, ...]
    nothing: str  # the kinds without a case, in one line; "" when every kind has one
    suite: tuple[Figure, ...]  # the figures of the whole suite that moved (the pass rate is the banner's)
    verdicts: Verdicts
    downloads: tuple[Link, ...]


def _figure(item: DiffItem) -> Figure:
    # A message is `Sentence: before → after (delta)` and sometimes `; why` (the cost rule, the trial test).
    message = wording.item_message(item)
    why = message.split("; ", 1)[1].rstrip(".") if "; " in message else ""
    return Figure(
        badge=diff_badge(item.type),
        label=metric_label(item.metric),
        before=wording.describe_value(item.metric, item.baselineValue),
        after=wording.describe_value(item.metric, item.currentValue),
        delta=wording.describe_delta(item.metric, item.delta),
        note=why,
    )


def _case_link(case_id: str, slugs: Mapping[str, str]) -> Segment:
    slug = slugs.get(case_id)
    return Segment(case_id, urls.case_href(slug) if slug is not None else None)


def _rules(change: CaseChange, current: Mapping[str, Sequence[str]]) -> tuple[CheckLine, ...]:
    """The checks a case's row names: what broke it (regressed), what was resolved (fixed), what it fails on."""
    if change.change == ChangeKind.FIXED:
        checks: Sequence[str] = change.resolvedChecks
    elif change.change in (ChangeKind.REGRESSED, ChangeKind.WITHIN_NOISE):
        checks = change.newFailedChecks
    else:
        checks = current.get(change.caseId, ())
        if change.change == ChangeKind.STILL_FAILING:  # a known failure: its codes (it failed the same way in the baseline)
            return tuple(CheckLine(code, "") for code in check_codes(checks)[:MAX_TOOL_CALLS])
    return tuple(check_line(check) for check in checks[:MAX_TOOL_CALLS])


def _what(change: CaseChange, phrased: bool) -> tuple[Part, ...]:
    """What changed, in one phrase: the agent's behaviour where it is known, else what the kind itself says."""
    phrase = what_changed(change.behaviour) if phrased else ()
    if change.change == ChangeKind.STILL_FAILING and change.behaviour.traceChanged is False:
        phrase = (Part("trace unchanged"),)  # not "the case or the rules changed": its result did not change
    if change.change == ChangeKind.REMOVED:
        return (Part("missing from the current report"),)
    if change.change == ChangeKind.NOT_EVALUATED:  # its failed check says why and where; this, what it means
        moved = wording.status_change(change) if change.baselineStatus else f"new, {Status.NOT_RUN.word}"
        return (Part(f"{moved}: the agent was not judged"),)
    if change.change == ChangeKind.NEW:
        return (Part(f"{wording.STATUS_WORDS[change.currentStatus]} in its first run"),)
    if change.change == ChangeKind.STILL_FAILING:
        codes = [Part(f"now also fails {', '.join(change.new_codes)}")] if change.new_codes else []
        resolved = check_codes(change.resolvedChecks)
        codes += [Part(f"no longer fails {', '.join(resolved)}")] if resolved else []
        said = [*(codes or [Part("the same checks fail")]), *([Part("; ")] if phrase else []), *phrase]
        return tuple(said)
    if change.change == ChangeKind.WITHIN_NOISE:
        return (Part(f"{wording.status_change(change)} by the trial policy, within chance"),)
    return phrase or (Part(wording.status_change(change)),)


def _entry(change: CaseChange, items: Sequence[DiffItem], slugs: Mapping[str, str], current: Mapping[str, Sequence[str]],
           phrased: bool) -> CaseEntry:
    figures = tuple(_figure(item) for item in items if item.metric not in _SAID_BY_THE_ROW)
    summary = ""
    if figures:
        summary = f"{fmt.plural(len(figures), 'figure')} moved: {', '.join(f.label for f in figures)}"
    return CaseEntry(_case_link(change.caseId, slugs), change.change, _rules(change, current), _what(change, phrased), figures, summary)


def _since(entry: CaseEntry, change: CaseChange, diff: DiffReport) -> CaseEntry:
    """The entry's phrase followed by since when the case fails, when a build's history tells it (compare/where.py)."""
    streak = None if diff.failingSince is None else diff.failingSince.get(change.caseId)
    return entry if streak is None else entry._replace(what=(*entry.what, Part(f" · {streak_text(streak)}")))


def _sections(diff: DiffReport, slugs: Mapping[str, str], current: Report) -> tuple[tuple[KindSection, ...], str]:
    """The sections of cases, one per change kind that has a case, and the line naming the kinds that have none."""
    by_case: dict[str, list[DiffItem]] = {}
    for item in diff.items:
        if item.caseId is not None:
            by_case.setdefault(item.caseId, []).append(item)
    failing = {r.caseId: r.failedChecks for r in current.results if r.failedChecks}
    groups: dict[str, list[CaseChange]] = {}
    for change in diff.caseChanges:
        if change.change != ChangeKind.STILL_PASSING or any(i.metric not in _SAID_BY_THE_ROW for i in by_case.get(change.caseId, ())):
            groups.setdefault(change.change, []).append(change)
    sections, empty = [], []
    for kind in ChangeKind:  # declared in the order a reviewer reads them: the page's sections
        changes = groups.get(kind, [])
        if not changes:
            if kind in _ALWAYS_NAMED:
                empty.append(kind.none_word)
            continue
        # Every answer edited gives every case a figure that moved, and may make every case behave differently.
        shown = changes[:OTHER_DIFFERENCES_SHOWN] if kind in _LONG_KINDS else changes
        note = ""
        if len(shown) < len(changes):
            note = f"The first {len(shown):,} of {len(changes):,} are listed here; {urls.DIFF_JSON} and {urls.DIFF_MD} list them all."
        entries = tuple(_since(_entry(c, by_case.get(c.caseId, ()), slugs, failing, diff.baselineEvidence), c, diff)
                        for c in shown)
        full, compact = entries[:DIFF_CASES_IN_FULL], entries[DIFF_CASES_IN_FULL:]
        folded = kind is not ChangeKind.REGRESSED and len(changes) > FOLD_AFTER
        sections.append(KindSection(section_anchor(kind), f"{kind.page.title} ({len(changes):,})", change_badge(kind), kind.page.rules_header,
                                    full, compact, _compact_lead(len(compact)), folded, f"Show the {len(entries):,} cases", note))
    nothing = f"Nothing {_or_list(empty)}." if empty else ""
    if diff.baselineEvidence and not groups.get(ChangeKind.CHANGED):  # only answers on both sides can tell
        nothing = f"{nothing[:-1]}; {_NONE_CHANGED}." if nothing else f"{_NONE_CHANGED.capitalize()}."
    return tuple(sections), nothing


def _compact_lead(count: int) -> str:
    """The line above a section's compact rows: how many, and where the rest of each case is."""
    if not count:
        return ""
    return (f"The other {fmt.plural(count, 'case')}, one row each: the codes of their rules and what changed. Their rules' "
            f"messages and the figures that moved are on each linked case's page and in {urls.DIFF_MD} and {urls.DIFF_JSON}.")


def _or_list(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _and_list(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _suite_figures(diff: DiffReport) -> tuple[Figure, ...]:
    return tuple(_figure(item) for item in diff.items if item.caseId is None and not item.metric.startswith(_SUITE_SAID_ELSEWHERE))


def _verdicts(diff: DiffReport, baseline: Report, current: Report, slugs: Mapping[str, str], config: SuiteConfig) -> Verdicts:
    """The verdict counts that moved, the cases whose verdict moved (by transition), and how many kept theirs; a case
    not evaluated on either side has no verdict of the agent's to count (its own section says it)."""
    left = set(diff.leftOutCases)
    before = {r.caseId: r.verdict or MISSING_VERDICT for r in baseline.results if r.caseId not in left}
    after = {r.caseId: r.verdict or MISSING_VERDICT for r in current.results if r.caseId not in left}
    moved: dict[tuple[str, str], list[str]] = {}
    kept: dict[str, int] = {}
    for case_id in [*after, *(c for c in before if c not in after)]:
        then, now = before.get(case_id, _NEW_CASE), after.get(case_id, _REMOVED_CASE)
        if then == now:
            kept[now] = kept.get(now, 0) + 1
        else:
            moved.setdefault((then, now), []).append(case_id)
    order = {v: i for i, v in enumerate(ordered_verdicts([*before.values(), *after.values()], config) + [_NEW_CASE, _REMOVED_CASE])}
    transitions = tuple(
        Transition(then, now, tuple(_case_link(c, slugs) for c in ids))
        for (then, now), ids in sorted(moved.items(), key=lambda kv: (order.get(kv[0][0], 0), order.get(kv[0][1], 0)))
    )
    counts = tuple(_figure(item) for item in diff.items if item.caseId is None and item.metric.startswith(VERDICT_DISTRIBUTION))
    kept_words = [f"{n:,} {verdict}" for verdict, n in sorted(kept.items(), key=lambda kv: order.get(kv[0], 0))]
    unchanged = ""
    if kept_words:
        lead = "No case's verdict moved" if not transitions else "The other cases kept their verdict"
        unchanged = f"{lead}: {_and_list(kept_words)}, as in the baseline."
    return Verdicts(counts, transitions, unchanged)


def build_diff_page(site: SiteInfo, diff: DiffReport, baseline: Report, current: Report, slugs: dict[str, str]) -> DiffPage:
    """The diff page's view model."""
    sections, nothing = _sections(diff, slugs, current)
    passed = (
        f"{diff.baselinePassedCases:,} of {fmt.plural(diff.baselineTotalCases, 'case')} passed in the baseline, "
        f"{diff.currentPassedCases:,} of {diff.currentTotalCases:,} now."
    )
    return DiffPage(
        layout=make_layout(
            site,
            title="Baseline diff",
            description=f"This run against the baseline: each case that changed, once, and the figures that moved. {passed}",
            depth=0,
            current="diff",
        ),
        heading="Against the baseline",
        subtitle=passed,
        banner=banner(diff, slugs, on_index=False),
        sections=sections,
        nothing=nothing,
        suite=_suite_figures(diff),
        verdicts=_verdicts(diff, baseline, current, slugs, site.config),
        downloads=(Link(urls.DIFF_JSON, urls.DIFF_JSON), Link(urls.DIFF_MD, urls.DIFF_MD)),
    )
