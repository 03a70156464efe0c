"""cases/<slug>.html: everything about one case — result, question, answer, evidence, tool calls, verifier,
change against the baseline, definition and the raw trace.

A case page depends only on its case, its trace, its baseline items and its neighbours (so a rebuild can take
it unchanged); what changes with every run, the pass/fail history, comes from assets/history-data.js.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.checks import parse_check
from sitegen.compare.changes import CaseChange, ChangeKind
from sitegen.compare.items import DiffItem, ItemType
from sitegen.compare.wording import item_message
from sitegen.report.results import CaseResult
from sitegen.report.status import Status
from sitegen.site.html import urls
from sitegen.site.html.render import markdown_html
from sitegen.site.pages.answer_view import AnswerView, answer_view
from sitegen.site.pages.badges import Badge, diff_badge, status_badge, verdict_badge
from sitegen.site.pages.case_facts import header_facts
from sitegen.site.pages.change_views import CaseChangeView, case_change_view
from sitegen.site.pages.common import Fact, Layout, Link, RawFile, RawLink, SiteInfo, make_layout, raw_link
from sitegen.site.pages.evidence_table import EvidenceRow, evidence_rows
from sitegen.site.pages.text import (
    CELL_LIMIT,
    MAX_TOOL_CALLS,
    TEXT_LIMIT,
    TextBlock,
    clip,
    pretty,
    text_block,
)
from sitegen.site.pages.then_and_now import COMPARED, ComparisonView, comparison_view, found_phrases
from sitegen.site.pages.tool_timeline import ToolsView, tools_view
from sitegen.site.pages.trial_cells import TrialsView, shown_trial, trials_view
from sitegen.site.pages.verifier import VerifierView, verifier_view
from sitegen.suite.config import SuiteConfig
from sitegen.suite.loading import TrialTraces
from sitegen.suite.models import Case
from sitegen.suite.traces import FixtureProblem, LoadedTrace


class Pager(NamedTuple):
    """Previous / next case and the way back.

    The case's position in the suite ("case 5 of 2,000") is filled in by the script from the shared history
    data: written into the page, adding or removing one case would change every page after it.
    """

    prev: Link | None
    next: Link | None
    back: Link
    neighbours: bool = True  # False when only some cases have a page (--case-pages): no previous / next


class Section(NamedTuple):
    """An entry of the page's table of contents (`#id` permalinks)."""

    anchor: str
    title: str


class Check(NamedTuple):
    """One failed check."""

    code: str
    message: str
    new: bool = False  # failing now but not in the baseline


class DiffLine(NamedTuple):
    """A diff item of this case, in words."""

    badge: Badge
    message: str  # the item's message, which names its figure in words


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
    change: CaseChangeView | None  # against the baseline; None without one
    comparison: ComparisonView | None  # what the agent did then and now; None without a baseline entry
    notes: Markup | None  # the case's notes, rendered as safe Markdown
    annotations: tuple[Fact, ...]  # the case's `_…`/`x-…` annotations
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
    raw: RawLink | None  # the trace file beside the page; None when it could not be read
    trials: TrialsView | None  # a case with a folder of trials: a cell per trial (site/pages/trial_cells.py)


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
TRIALS_SECTION = Section("trials", "Trials")  # only a case with a folder of trials has it (site/pages/trial_cells.py)
COMPARISON_SECTION = Section("comparison", "Then and now")  # a case compared with a baseline entry whose trace differs


def _toc(trials: TrialsView | None, comparison: ComparisonView | None) -> tuple[Section, ...]:
    """The table of contents, with the comparison and the trials section after the result when there are."""
    extra = (COMPARISON_SECTION,) if comparison is not None and comparison.state == COMPARED else ()
    extra += (TRIALS_SECTION,) if trials is not None else ()
    return (CASE_SECTIONS[0], *extra, *CASE_SECTIONS[1:]) if extra else CASE_SECTIONS


_DEPTH = 1  # case pages live in cases/


def _baseline_view(items: Sequence[DiffItem] | None, change: CaseChange | None) -> BaselineView:
    if items is None:
        return BaselineView("No baseline report, so nothing to compare with.", ())
    unjudged = None if change is None else next(
        (side for side, status in (("now", change.currentStatus), ("in the baseline", change.baselineStatus))
         if status is Status.NOT_RUN), None)
    if unjudged is not None:  # no metric item counts a case the agent was not judged on (eval/README.md)
        lines = tuple(DiffLine(diff_badge(item.type), item_message(item)) for item in items)
        return BaselineView(f"Not compared: the case could not be evaluated {unjudged}, so none of its figures is held "
                            "against the baseline.", lines)
    if not items:
        return BaselineView("No change against the baseline.", ())
    lines = tuple(DiffLine(diff_badge(item.type), item_message(item)) for item in items)
    kinds = [item.type for item in items]
    parts = [
        fmt.plural(kinds.count(kind), word)
        for kind, word in ((ItemType.REGRESSION, "regression"), (ItemType.IMPROVEMENT, "improvement"), (ItemType.CHANGED, "change"))
        if kinds.count(kind)
    ]
    return BaselineView(", ".join(parts) + " against the baseline.", lines)


def _list_text(values: Sequence[str]) -> str:
    return ", ".join(values) if values else fmt.UNKNOWN


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
        # Shown only when set or switched off, so that a suite without them reads as it did (eval/README.md,
        # "Negated keywords").
        *([Fact("Count even when denied", _list_text(case.keywordsAnyPolarity))] if case.keywordsAnyPolarity else []),
        *([Fact("Negated keywords", "not detected: [answer] negation = false")] if not config.negation.enabled else []),
        Fact("Required evidence tools", _list_text(case.requiredEvidenceTools)),
        Fact("Allowed verdicts", _list_text(case.allowedVerdicts)),
        Fact("Forbidden verdicts", _list_text(case.forbiddenVerdicts)),
        Fact("Forbidden answer phrases", _list_text(case.forbiddenAnswerKeywords)),
        Fact("Forbidden confirmed claims", _list_text(case.forbiddenConfirmedClaimKeywords)),
        Fact("Degraded answer markers", _list_text(markers)),
        Fact("Expected rule set version", case.expectedGatekeeperRuleSetVersion or fmt.UNKNOWN),
        Fact("Requirements", _list_text(flags)),
        Fact("Tags", _list_text(case.tags)),
        Fact("Case digest", digest),
    ]
    unset = [fact.label for fact in facts if fact.value == fmt.UNKNOWN]
    shown = [fact for fact in facts if fact.value != fmt.UNKNOWN]
    return tuple(shown + [Fact("Not set", ", ".join(unset))] if unset else shown)


def _notes(case: Case) -> Markup | None:
    """The case's notes: text from the case file, rendered as Markdown with raw HTML off like an answer."""
    return markdown_html(clip(case.notes, TEXT_LIMIT).text) if case.notes.strip() else None


def _annotations(case: Case) -> tuple[Fact, ...]:
    """The case's free annotations in file order: a string as written, any other value as JSON."""
    return tuple(
        Fact(fmt.shorten(key), clip(value if isinstance(value, str) else pretty(value), CELL_LIMIT).text)
        for key, value in case.annotations.items()
    )


def _verdict(result: CaseResult, config: SuiteConfig) -> Badge:
    """The case's verdict badge; for a case with trials it is the most common verdict, and its title says so."""
    badge = verdict_badge(result.verdict, config)
    return badge if result.trialResults is None else badge._replace(title=f"the most common verdict of {result.trials} trials")


def _pager(prev: Neighbour | None, next_: Neighbour | None, neighbours: bool) -> Pager:
    return Pager(
        prev=Link(f"← {prev.case_id}", urls.case_href(prev.slug, _DEPTH)) if prev else None,
        next=Link(f"{next_.case_id} →", urls.case_href(next_.slug, _DEPTH)) if next_ else None,
        back=Link("All cases", urls.href(urls.INDEX, _DEPTH)),
        neighbours=neighbours,
    )


def _description(case: Case, result: CaseResult) -> str:
    """The case page's meta description: its id, status and failed rules, and its title when it has one."""
    words = f"Eval case {case.id}: {result.status.word}"
    if result.failed_codes:
        words += f" ({', '.join(result.failed_codes)})"
    if case.display_title != case.id:
        words += f". {case.display_title}"
    return fmt.shorten(words, 300)


class PageInput(NamedTuple):
    """What one case page shows: its case, its trace (or folder of trials, or the problem reading it), its result,
    its baseline entry with its items and change (None without a baseline), its neighbours and raw trace files."""

    case: Case
    outcome: LoadedTrace | TrialTraces | FixtureProblem
    result: CaseResult
    diff_items: Sequence[DiffItem] | None
    prev: Neighbour | None
    next: Neighbour | None
    change: CaseChange | None = None
    raw: Sequence[RawFile] = ()
    baseline_result: CaseResult | None = None


class _Shown(NamedTuple):
    """The trace a page's sections show (for a folder of trials, one trial), its answer and the page's raw links."""

    outcome: LoadedTrace | FixtureProblem
    answer: str
    trials: TrialsView | None
    shown: int | None  # the trial shown, from 0
    folder: TrialTraces | None
    raw_links: dict[int | None, RawLink]


def build_case_pages(site: SiteInfo, pages: Sequence[PageInput]) -> list[CasePage]:
    """The view models of several case pages, each section for every page in turn: a section's code and data stay
    in the processor's caches from one page to the next (site/case_jobs.py, PAGE_BATCH). Each page depends
    only on its own input: the case, its trace, its baseline entry, items and change, neighbours and raw files."""
    config = site.config
    shown = [_shown(page, config) for page in pages]
    found = [found_phrases(page.case, trace.answer, config) for page, trace in zip(pages, shown)]
    comparisons = [
        # The current answer's phrases, found for the Answer section, are those of the comparison's current side.
        comparison_view(page.case, page.baseline_result, page.result, page.change, config, {trace.answer: phrases})
        if page.baseline_result is not None
        else None
        for page, trace, phrases in zip(pages, shown, found)
    ]
    answers = [answer_view(page.case, trace.answer, phrases, config, not isinstance(trace.outcome, FixtureProblem))
               for page, trace, phrases in zip(pages, shown, found)]
    tools = [tools_view(trace.outcome, page.case.expectedTrajectory) for page, trace in zip(pages, shown)]
    verifiers = [verifier_view(page.case, trace.outcome, config) for page, trace in zip(pages, shown)]
    return [_case_page(site, *parts) for parts in zip(pages, shown, comparisons, answers, tools, verifiers)]


def _shown(page: PageInput, config: SuiteConfig) -> _Shown:
    """What the page's sections show: the trace (one trial of a folder, with every trial's view), its answer."""
    trials, shown, folder, outcome = None, None, None, page.outcome
    raw_links = {file.trial: raw_link(file, _DEPTH) for file in page.raw}
    if isinstance(outcome, TrialTraces):  # the sections below show one trial; every trial has its own view
        shown, folder = shown_trial(outcome, page.result), outcome
        trials = trials_view(outcome, page.result, shown, config.trialPolicy, config, raw_links)
        outcome = outcome.trials[shown][1]
        raw_links[None] = raw_links.get(shown + 1)
    answer = outcome.trace.session.answer if isinstance(outcome, LoadedTrace) else ""
    return _Shown(outcome, answer, trials, shown, folder, raw_links)


def _case_page(
    site: SiteInfo,
    page: PageInput,
    trace: _Shown,
    comparison: ComparisonView | None,
    answer: AnswerView,
    tools: ToolsView,
    verifier: VerifierView,
) -> CasePage:
    """The page's view model from its sections made already."""
    case, result, change, outcome = page.case, page.result, page.change, trace.outcome
    return CasePage(
        layout=make_layout(
            site,
            title=case.id,
            description=_description(case, result),
            depth=_DEPTH,
            current="",
            history_data=True,
        ),
        case_id=case.id,
        title=case.display_title if case.display_title != case.id else "",
        status=status_badge(result.status),
        verdict=_verdict(result, site.config),
        change=case_change_view(change) if change is not None else None,
        comparison=comparison,
        notes=_notes(case),
        annotations=_annotations(case),
        tags=tuple(Link(tag, urls.index_filter(_DEPTH, tag=tag)) for tag in case.tags),
        facts=header_facts(case, outcome, result, trace.shown, trace.folder),
        pager=_pager(page.prev, page.next, site.case_pages.links_neighbours()),
        toc=_toc(trace.trials, comparison),
        checks=_checks(result.failedChecks[:MAX_TOOL_CALLS], change),
        problem=outcome.message if isinstance(outcome, FixtureProblem) else None,
        question=text_block(case.question),
        answer=answer,
        evidence=evidence_rows(case, outcome, result),
        tools=tools,
        verifier=verifier,
        baseline=_baseline_view(page.diff_items, change),
        definition=_definition(case, site.config, result.caseDigest or case.digest()),  # evaluation made it already
        raw=trace.raw_links.get(None),
        trials=trace.trials,
    )


def _checks(failed: Sequence[str], change: CaseChange | None) -> tuple[Check, ...]:
    """The failed checks, those new against the baseline marked (counted as a multiset, as the diff counts them)."""
    new = Counter(change.newFailedChecks if change is not None and change.change is not ChangeKind.NEW else ())
    checks = []
    for check in failed:
        is_new = new[check] > 0
        new[check] -= is_new
        checks.append(Check(*_split_check(clip(check, CELL_LIMIT).text), is_new))
    return tuple(checks)


def _split_check(check: str) -> tuple[str, str]:
    parsed = parse_check(check)
    return (parsed.code, parsed.detail) if parsed.has_detail else ("check", check)
