"""Each case's change against the baseline on the pages: the headline banner (index and diff page), the
statement at the top of a case page, and the diff page's tables of cases by change.

The words are compare/wording.py's: the banner says exactly what `format_headline` says in the terminal and in
diff.md; this module only links each case id the headline names to its page (eval/README.md, "Comparing with
the baseline").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.checks import check_codes, parse_check
from sitegen.compare import wording
from sitegen.compare.changes import CaseChange, ChangeKind, Headline
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.whatchanged import (
    NO_INPUTS,
    PHRASED,
    Part,
    no_evidence_parts,
    phrase_text,
    rule_codes,
    what_changed,
)
from sitegen.defaults import FOLD_AFTER
from sitegen.report.status import Status
from sitegen.site.html import urls
from sitegen.site.pages.badges import Badge, change_badge
from sitegen.site.pages.text import CELL_LIMIT, MAX_TOOL_CALLS, clip

REGRESSED_ANCHOR = "regressed-cases"  # the diff page's table of the regressed and removed cases,
CHANGED_ANCHOR = "changed-cases"  # ... of the passing cases that behave differently,
CHANGED_SHOWN = 1000  # ... the first this many of them


def section_anchor(kind: ChangeKind) -> str:
    """The id of the diff page's table of the cases of `kind` ("known-failures"; the breaking kinds share one)."""
    if kind is ChangeKind.CHANGED:
        return CHANGED_ANCHOR
    return REGRESSED_ANCHOR if kind.breaking else (kind.title or kind.value).lower().replace(" ", "-")


class Segment(NamedTuple):
    """A piece of a headline: text, a link to a case page when `href` is set, recorded text (a tool's name in a
    "what changed" phrase) shown as code when `code`."""

    text: str
    href: str | None = None
    code: bool = False


class ChangedCase(NamedTuple):
    """A regressed or fixed case under the headline: its name (linked), its rules, and what the agent did
    differently (compare/whatchanged.py's parts: a tool's name shown as code)."""

    case: Segment
    rules: str
    phrase: tuple[Part, ...]


class Banner(NamedTuple):
    """The headline against the baseline: the cases by change, then the pass rate."""

    css: str
    icon: str
    cases: tuple[Segment, ...]
    pass_rate: str
    note: str  # a cost regression, which fails the gate without any case regressing; else ""
    definitions: str  # the cases edited since the baseline, as diff.md names them; else ""
    regressions: int  # cases regressed or removed
    more: Segment | None  # "See the diff" on the index; None on the diff page itself
    changed: tuple[ChangedCase, ...] = ()  # the regressed, then the fixed cases with a phrase (HEADLINE_LISTED each)
    evidence_note: tuple[Part, ...] = ()  # on the diff page, when the baseline does not record the agent's answers


def headline_segments(headline: Headline, slugs: Mapping[str, str]) -> tuple[Segment, ...]:
    """The cases part of the headline (wording.headline_segments), each case with a page linked to it and "and N
    more" to the diff page's full table."""
    out = []
    for segment in wording.headline_segments(headline):
        href = None
        if segment.kind == wording.CASE_ID and segment.text in slugs:
            href = urls.case_href(slugs[segment.text])
        elif segment.kind == wording.MORE:
            href = f"{urls.DIFF}#{section_anchor(segment.group or ChangeKind.REGRESSED)}"
        elif segment.kind == wording.MORE_NOT_EVALUATED:
            href = f"{urls.DIFF}#{section_anchor(ChangeKind.NOT_EVALUATED)}"
        out.append(Segment(segment.text, href, segment.kind == wording.RECORDED))
    return tuple(out)


def pass_rate_css(diff: DiffReport | None) -> str:
    """The pass-rate card's colour: by its comparison with the baseline (red only when lower), neutral without one."""
    if diff is None or diff.currentPassRate == diff.baselinePassRate:
        return "stat"
    return "stat stat-bad" if diff.currentPassRate < diff.baselinePassRate else "stat stat-good"


def banner(diff: DiffReport, slugs: Mapping[str, str], on_index: bool) -> Banner:
    """The headline banner of the index (linking the diff page) or of the diff page."""
    headline = diff.headline()
    bad = diff.hasRegression
    # Red whenever the gate fails; its icon says whether the agent got worse or was not judged at all. No gate
    # failure, but passing cases that behave differently: a person must look (amber, not green).
    agent_worse = diff.caseRegressionCount or diff.cost_regressions or diff.trial_regressions
    look = not bad and bool(headline.of(ChangeKind.CHANGED))
    return Banner(
        css="banner banner-bad" if bad else "banner banner-changed" if look else "banner banner-good",
        icon=("▼" if agent_worse or not headline.of(ChangeKind.NOT_EVALUATED) else ChangeKind.NOT_EVALUATED.icon) if bad
        else ChangeKind.CHANGED.icon if look else "✓",
        cases=headline_segments(headline, slugs),
        pass_rate=wording.format_pass_rate(headline),
        note=wording.cost_note(diff),
        definitions=f"{wording.DEFINITIONS_CHANGED}: {', '.join(diff.changedDefinitions)}" if diff.changedDefinitions else "",
        regressions=diff.caseRegressionCount,
        more=Segment("See the diff against the baseline", urls.DIFF) if on_index else None,
        changed=_changed_cases(diff, slugs),
        evidence_note=() if on_index else _evidence_notes(diff),
    )


def _evidence_notes(diff: DiffReport) -> tuple[Part, ...]:
    """What the diff page says once about a baseline that does not record the agent's answers or its calls' inputs."""
    if not diff.baselineEvidence:
        return no_evidence_parts()
    return () if diff.baselineInputs else no_evidence_parts(NO_INPUTS)


def _changed_cases(diff: DiffReport, slugs: Mapping[str, str]) -> tuple[ChangedCase, ...]:
    """The regressed and the fixed cases (up to HEADLINE_LISTED of each) with what the agent did differently."""
    if not diff.baselineEvidence:
        return ()
    out = []
    for kind in PHRASED:
        listed = 0
        for change in diff.caseChanges:
            phrase = what_changed(change.behaviour) if change.change is kind and listed < wording.HEADLINE_LISTED else ()
            if phrase:
                listed += 1
                slug = slugs.get(change.caseId)
                case = Segment(change.caseId, urls.case_href(slug) if slug is not None else None)
                out.append(ChangedCase(case, ", ".join(rule_codes(change)), phrase))
    return tuple(out)


class CheckLine(NamedTuple):
    """A failed check, its rule code apart from its message."""

    code: str
    message: str


def check_line(check: str) -> CheckLine:
    """`"<code>: <message>"` as a CheckLine, clipped for a page (a check without a code is all message)."""
    parsed = parse_check(clip(check, CELL_LIMIT).text)
    return CheckLine(parsed.code, parsed.detail) if parsed.has_detail else CheckLine("check", parsed.text)


class CaseChangeView(NamedTuple):
    """What happened to this case since the baseline, stated at the top of its page."""

    value: ChangeKind  # for data-change
    badge: Badge
    css: str
    statement: str
    detail: str
    resolved: tuple[CheckLine, ...]  # the checks that failed in the baseline and no longer do
    phrase: tuple[Part, ...] = ()  # what the agent did differently, after the statement
    detail_phrase: tuple[Part, ...] = ()  # ... or after the detail


def _codes_sentence(lead: str, checks: tuple[str, ...]) -> str:
    codes = check_codes(checks)
    return f"{lead}: {', '.join(codes)}" if codes else f"{lead}."


_LOOK_BELOW = "No rule caught this: read both answers and the two tool trajectories under “Then and now” below."


def case_change_view(change: CaseChange) -> CaseChangeView:
    """The statement of a case's change: what broke (for a regression), what was resolved (for a fix), what the
    agent does differently (for a passing case that behaves differently); never "unchanged" when the trace
    changed."""
    kind, before, now = change.change, wording.STATUS_WORDS[change.baselineStatus], wording.STATUS_WORDS[change.currentStatus]
    resolved = tuple(check_line(check) for check in change.resolvedChecks[:MAX_TOOL_CALLS])
    new = change.newFailedChecks if kind in (ChangeKind.REGRESSED, ChangeKind.STILL_FAILING) else ()
    css, detail, phrase, detail_phrase = "case-change", "", (), ()
    behaviour = change.behaviour
    if kind is ChangeKind.NOT_EVALUATED:
        statement = f"Could not be evaluated: {change.reason or Status.NOT_RUN.word}."
        then = f"In the baseline: {before}" if change.baselineStatus else "Not in the baseline"
        detail = (f"{then}; now: {Status.NOT_RUN.word}. The agent was not judged: this is neither a regression nor a "
                  "known failure, and the gate fails on it until the trace can be read.")
        css = "case-change case-change-unjudged"
    elif kind is ChangeKind.REGRESSED:
        statement = _codes_sentence("Regressed since the baseline", change.newFailedChecks)
        detail = f"In the baseline: {before}; now: {now}. The failed checks marked new below broke it."
        css = "case-change case-change-bad"
    elif kind is ChangeKind.FIXED:
        statement = _codes_sentence("Fixed since the baseline; resolved", change.resolvedChecks)
        detail = f"In the baseline: {before}; now: {now}."
        css = "case-change case-change-good"
    elif kind is ChangeKind.CHANGED:
        statement, phrase = "Still passing, but it behaves differently:", what_changed(behaviour)
        detail = _LOOK_BELOW
        css = "case-change case-change-changed"
    elif kind is ChangeKind.STILL_FAILING:
        statement = "Known failure: it failed in the baseline too."
        if new:
            statement = _codes_sentence("Known failure, with new failed checks since the baseline", new)
            detail = "The failed checks marked new below did not fail in the baseline."
        if behaviour.behaviourChanged:
            detail, detail_phrase = f"{detail} It also behaves differently:".lstrip(), what_changed(behaviour)
        css = "case-change case-change-known"
    elif kind is ChangeKind.WITHIN_NOISE:
        moved = "now passes by the trial policy" if change.currentStatus is Status.PASSED else "now fails by the trial policy"
        statement = f"Within noise: it {moved}, but its trial pass rate did not move by more than chance."
        detail = f"In the baseline: {before}; now: {now}. The trialPassRate item of the diff gives the p-value."
        css = "case-change case-change-noise"
    elif kind is ChangeKind.NEW:
        statement = f"New since the baseline (not in the baseline report); {now} in this run."
    elif behaviour.traceChanged is False:
        statement = "Unchanged: it passed in the baseline too, with the very same trace."
    elif behaviour.traceChanged is None or behaviour.behaviourChanged is None:
        statement = "Still passing: it passed in the baseline too."
    else:  # still passing, with a trace that changed within every threshold
        statement = "Still passing, and it behaves alike: its trace changed, within the thresholds."
        detail, detail_phrase = "What changed:", what_changed(behaviour)
    return CaseChangeView(kind, change_badge(kind), css, statement, detail, resolved, phrase, detail_phrase)


class CaseRef(NamedTuple):
    """A case mentioned on the diff page (linked when it has a page in this run)."""

    text: str
    href: str | None


class ChangeRow(NamedTuple):
    """One case in a table of cases by change."""

    case: CaseRef
    change: ChangeKind  # for data-change
    badge: Badge
    cells: tuple[str, ...]


class ChangeSection(NamedTuple):
    """The cases of one change (or two: regressed and removed), as a table."""

    anchor: str
    title: str
    badge: Badge
    empty: str
    headers: tuple[str, ...]
    rows: tuple[ChangeRow, ...]
    folded: bool  # a long list starts folded (never the regressions)
    note: str | None = None  # the rows are the first CHANGED_SHOWN of more


def _codes(checks: tuple[str, ...]) -> str:
    return ", ".join(check_codes(checks)) or fmt.UNKNOWN


def _checks(checks: tuple[str, ...]) -> str:
    return clip("; ".join(checks), CELL_LIMIT).text if checks else fmt.UNKNOWN


def _what_changed(change: CaseChange) -> str:
    return phrase_text(what_changed(change.behaviour)) or fmt.UNKNOWN


def _cells(change: CaseChange, phrased: bool) -> tuple[str, ...]:
    """A row's cells after the case; `phrased`: with what the agent did differently (the baseline records it)."""
    if change.change is ChangeKind.REMOVED:
        return (change.change.word, fmt.UNKNOWN, *((fmt.UNKNOWN,) if phrased else ()), "missing from the current report")
    if change.change is ChangeKind.NOT_EVALUATED:
        moved = wording.status_change(change) if change.baselineStatus else "new, not run"
        return (moved, clip(change.reason or Status.NOT_RUN.word, CELL_LIMIT).text)
    if change.change is ChangeKind.REGRESSED:
        what = (_what_changed(change),) if phrased else ()
        return (wording.status_change(change), _codes(change.newFailedChecks), *what, _checks(change.newFailedChecks))
    if change.change is ChangeKind.FIXED:
        return (wording.status_change(change), _checks(change.resolvedChecks), *((_what_changed(change),) if phrased else ()))
    if change.change is ChangeKind.NEW:
        return (wording.STATUS_WORDS[change.currentStatus], _codes(change.newFailedChecks))
    if change.change is ChangeKind.CHANGED:
        return (_what_changed(change), wording.reasons_text(change))
    return (wording.status_change(change), _checks(change.newFailedChecks), _checks(change.resolvedChecks))


_WHAT_CHANGED = "What changed"  # the column after a regressed case's broken rules and a fixed case's resolved checks


def _headers(kind: ChangeKind, phrased: bool) -> tuple[str, ...]:
    """The columns of the table of `kind`'s cases, as _cells fills them."""
    if kind is ChangeKind.NOT_EVALUATED:
        return ("Case", "Change", "Why (where)")
    if kind.breaking:
        return ("Case", "Change", "Broken rules", *((_WHAT_CHANGED,) if phrased else ()), "New failed checks")
    if kind is ChangeKind.FIXED:
        return ("Case", "Change", "Resolved checks", *((_WHAT_CHANGED,) if phrased else ()))
    if kind is ChangeKind.NEW:
        return ("Case", "Status", "Failed rules")
    if kind is ChangeKind.CHANGED:
        return ("Case", _WHAT_CHANGED, "Why")
    return ("Case", "Change", "New failed checks", "Resolved checks")


def change_sections(diff: DiffReport, slugs: Mapping[str, str]) -> tuple[ChangeSection, ...]:
    """The diff page's tables of cases, one per section title in reading order (regressed and removed share one);
    unchanged cases are not listed."""
    sections = []
    phrased = diff.baselineEvidence
    for title in dict.fromkeys(kind.title for kind in ChangeKind if kind.title is not None):
        kinds = [kind for kind in ChangeKind if kind.title == title]
        lead = kinds[0]
        changes = [c for c in diff.caseChanges if c.change in kinds]
        # The passing cases that behave differently may be every case of a suite whose agent changed: the page lists
        # the first CHANGED_SHOWN (as it lists the first of the other differences); diff.md and diff.json have all.
        shown = changes[:CHANGED_SHOWN] if lead is ChangeKind.CHANGED else changes
        note = None
        if len(shown) < len(changes):
            note = f"The first {len(shown):,} of {len(changes):,} are listed here; {urls.DIFF_JSON} and {urls.DIFF_MD} list them all."
        rows = tuple(
            ChangeRow(
                CaseRef(c.caseId, urls.case_href(slugs[c.caseId]) if c.caseId in slugs else None),
                c.change,
                change_badge(c.change),
                _cells(c, phrased),
            )
            for c in shown
        )
        if not rows and lead.empty is None:
            continue  # e.g. only trials can be within noise: a suite of single traces never shows the section
        if not rows and lead is ChangeKind.CHANGED and not phrased:
            continue  # without the agent's answers in the baseline nothing can be seen to behave differently
        folded = not lead.fails_gate and len(rows) > FOLD_AFTER
        empty = lead.empty or ""
        section = ChangeSection(section_anchor(lead), f"{title} ({len(changes):,})", change_badge(lead), empty,
                                _headers(lead, phrased), rows, folded, note)
        sections.append(section)
    return tuple(sections)


def changes_by_case(diff: DiffReport | None) -> dict[str, ChangeKind] | None:
    """Each case's change kind by id (for the case tables); None without a baseline."""
    return None if diff is None else {change.caseId: change.change for change in diff.caseChanges}

