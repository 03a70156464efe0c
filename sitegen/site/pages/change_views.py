"""Each case's change against the baseline on the pages: the headline banner (index and diff page) and the
statement at the top of a case page.

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
from sitegen.compare.whatchanged import NO_INPUTS, NO_MEANING, PHRASED, Part, no_evidence_parts, rule_codes, what_changed
from sitegen.report.status import Status
from sitegen.site.html import urls
from sitegen.site.pages.badges import Badge, change_badge
from sitegen.site.pages.text import CELL_LIMIT, MAX_TOOL_CALLS, clip

CHANGED_ANCHOR = "changed-cases"  # the diff page's section of the passing cases that behave differently
_OTHER_FIGURES_ANCHOR = "other-figures"  # its section of the passing cases whose figures moved


def section_anchor(kind: ChangeKind) -> str:
    """The id of the diff page's section of the cases of `kind` ("regressed-cases", "removed-cases", "known-failures")."""
    if kind is ChangeKind.CHANGED:
        return CHANGED_ANCHOR
    if kind is ChangeKind.STILL_PASSING:
        return _OTHER_FIGURES_ANCHOR
    return f"{kind.value}-cases" if kind.breaking else (kind.title or kind.value).lower().replace(" ", "-")


def count_segments(headline: Headline) -> tuple[Segment, ...]:
    """The cases part of the headline in counts, each linked to its section of the diff page, which names the cases
    (the diff page says each case once): "1 case regressed · 8 known failures"."""
    out: list[Segment] = []
    if not any(headline.of(kind) for kind in ChangeKind if kind.breaking):
        out.append(Segment("no case regressed"))
    for kind in ChangeKind:
        cases = headline.of(kind)
        if not cases or kind.title is None:
            continue
        text = f"{fmt.plural(len(cases), 'case')} {kind.word}" if kind.breaking else kind.count(len(cases))
        if kind is ChangeKind.CHANGED:
            text = wording.changed_lead(len(cases))
        if kind is ChangeKind.NEW and headline.new_failing:
            text += f" ({headline.new_failing:,} failing)"
        out += [Segment(" · ")] if out else []
        out.append(Segment(text, f"#{section_anchor(kind)}"))
    return tuple(out)


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
    pass_rate: str  # up to the `p` of its chance clause (all of it when there is none) ...
    pass_rate_p: str  # ... and after it ("" when none): the template explains the `p` in an <abbr> (P_MEANING)
    p_meaning: str
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
    """The pass-rate card's colour: by the diff's comparison of the cases evaluated on both sides (red only when
    lower; a case not evaluated never makes it red), neutral without a baseline."""
    before, after = (None, None) if diff is None else (diff.comparedBaselinePassRate, diff.comparedCurrentPassRate)
    if before is None or after is None or before == after:
        return "stat"
    return "stat stat-bad" if after < before else "stat stat-good"


# What the `p` of a pass-rate clause means, where a reader meets it (docs/trials.md, "What p means").
P_MEANING = ("p: how likely so lopsided a split of the flipped cases would be by chance alone, were the agent exactly "
             "as good as in the baseline; 1.00: chance gives such a split as readily as any. Never the chance that "
             "the change is harmless (docs/trials.md, What p means).")


def split_at_p(text: str) -> tuple[str, str]:
    """A pass-rate clause cut around the `p` of its chance clause ("…: p = 1.00, …" → ("…: ", " = 1.00, …")), so a
    page can explain it; (text, "") when it has none."""
    head, sep, tail = text.partition(": p ")
    return (f"{head}: ", f" {tail}") if sep else (text, "")


def banner(diff: DiffReport, slugs: Mapping[str, str], on_index: bool) -> Banner:
    """The headline banner of the index (naming the cases, linking the diff page) or of the diff page (in counts
    linked to its sections, which name each case once)."""
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
        cases=headline_segments(headline, slugs) if on_index else count_segments(headline),
        pass_rate=(pass_rate := split_at_p(wording.format_pass_rate(headline)))[0],
        pass_rate_p=pass_rate[1],
        p_meaning=P_MEANING,
        note=wording.cost_note(diff),
        definitions=f"{wording.DEFINITIONS_CHANGED}: {', '.join(diff.changedDefinitions)}" if diff.changedDefinitions else "",
        regressions=diff.caseRegressionCount,
        more=Segment("See the diff against the baseline", urls.DIFF) if on_index else None,
        changed=_changed_cases(diff, slugs) if on_index else (),
        evidence_note=() if on_index else _evidence_notes(diff),
    )


def _evidence_notes(diff: DiffReport) -> tuple[Part, ...]:
    """What the diff page says once about a baseline that does not record the agent's answers or its calls' inputs."""
    if not diff.baselineEvidence:
        return no_evidence_parts()
    if not diff.baselineInputs:
        return no_evidence_parts(NO_INPUTS)
    return () if diff.baselineMeaning else no_evidence_parts(NO_MEANING)


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
        detail = f"In the baseline: {before}; now: {now}. The diff's trial pass rate figure gives the p-value."
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


def changes_by_case(diff: DiffReport | None) -> dict[str, ChangeKind] | None:
    """Each case's change kind by id (for the case tables); None without a baseline."""
    return None if diff is None else {change.caseId: change.change for change in diff.caseChanges}

