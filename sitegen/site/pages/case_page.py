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
from sitegen.site.html.highlight import Highlight
from sitegen.site.html.render import markdown_html
from sitegen.site.pages.badges import (
    Badge,
    diff_badge,
    mark_na,
    mark_no,
    mark_warn,
    mark_yes,
    status_badge,
    verdict_badge,
)
from sitegen.site.pages.change_views import CaseChangeView, case_change_view
from sitegen.site.pages.common import Fact, Layout, Link, RawFile, RawLink, SiteInfo, make_layout, raw_link
from sitegen.site.pages.text import (
    CELL_LIMIT,
    MAX_TOOL_CALLS,
    TEXT_LIMIT,
    TextBlock,
    clip,
    pretty,
    text_block,
)
from sitegen.site.pages.then_and_now import COMPARED, ComparisonView, FoundPhrases, comparison_view, found_phrases
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


class Chip(NamedTuple):
    """A phrase shown as a small labelled chip."""

    text: str
    css: str
    title: str  # what kind of phrase, when the legend above the chips does not say; else ""


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
    in_summary: Badge | None  # None: the trace's format has no verifier summary (OpenTelemetry), so no such column
    succeeded: Badge
    counted: Badge


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


def _trial_facts(result: CaseResult, shown: int | None, outcome: TrialTraces | None) -> tuple[Fact, ...]:
    """For a case with a folder of trials: its trial count, its combined verdict said to be one, and which trial
    the sections below show (the header is the whole case; the sections are one trial)."""
    if result.trialResults is None or shown is None or outcome is None:
        return ()
    verdict = result.verdict or "no verdict"
    return (
        Fact("Trials", f"{result.passedTrials}/{result.trials} passed"),
        Fact("Verdict", f"{verdict} (the most common of {result.trials} trials)"),
        Fact("Shown below", f"trial {shown + 1} of {result.trials} ({outcome.trials[shown][0]})"),
    )


_DEPTH = 1  # case pages live in cases/


def _keywords_found(case: Case, matched: int, only_denied: Sequence[str]) -> str:
    """`2 of 4 expected keywords found (needs 3)` (`affirmed`, and how many are only denied, when some are); a case
    that expects none says so instead of "0 of 0"."""
    if not case.expectedRootCauseKeywords:
        return "No expected keywords: this case checks none"
    legend = (
        f"{matched} of {len(case.expectedRootCauseKeywords)} expected keywords "
        f"{'affirmed' if only_denied else 'found'} (needs {case.keyword_threshold})"
    )
    if only_denied:
        legend += f"; {fmt.plural(len(only_denied), 'keyword')} only denied (struck through below)"
    return legend


def _answer_view(case: Case, answer: str, found: FoundPhrases, config: SuiteConfig, read: bool = True) -> AnswerView:
    """The answer with its keyword chips; `read`: whether the trace was read (else no keyword was looked for)."""
    if not read:
        return AnswerView(html=Markup(""), empty=True, note="", size=fmt.byte_size(0), chips=(),
                          legend="The trace could not be read, so no expected keyword was looked for.")
    matched, present_forbidden, markers, _ = found
    highlights: list[Highlight] = found.highlights
    denied = {denial.keyword: f"“{denial.trigger}”" for denial in found.denials}
    # The legend above the chips says they are the expected keywords; only a forbidden phrase's chip says which kind.
    # A denied keyword's chip says so in words, with its trigger (eval/README.md, "Negated keywords").
    chips = [Chip(f"✓ {k}" + (f", also denied by {denied[k]}" if k in denied else ""), "chip-keyword", "") for k in matched]
    chips += [
        Chip(f"⊘ {k}: denied by {denied[k]}", "chip-negated", "expected keyword, only where the answer denies it")
        if k in denied else Chip(f"✗ {k}", "chip-missing", "")
        for k in case.expectedRootCauseKeywords if k not in matched
    ]  # fmt: skip
    chips += [Chip(f"⚠ {k}", "chip-forbidden", "forbidden phrase, found") for k in present_forbidden]
    chips += [Chip(f"⚠ {k}", "chip-forbidden", "raw Executor marker, found") for k in markers]
    clipped = clip(answer, TEXT_LIMIT)
    legend = _keywords_found(case, len(matched), found.only_denied)
    if present_forbidden or markers:
        legend += f"; {fmt.plural(len(present_forbidden) + len(markers), 'forbidden phrase')} present"
    legend += "."
    if not config.negation.enabled:
        legend += " Negation detection is off for this suite ([answer] negation = false): a denied keyword counts as found."
    return AnswerView(
        html=markdown_html(clipped.text, highlights),
        empty=not answer.strip(),
        note=clipped.note,
        size=fmt.byte_size(clipped.size),
        chips=tuple(chips),
        legend=legend,
    )


def _evidence_rows(case: Case, outcome: LoadedTrace | FixtureProblem, result: CaseResult) -> tuple[EvidenceRow, ...]:
    rows = []
    trace = outcome.trace if isinstance(outcome, LoadedTrace) else None
    # A format without a verifier summary of tool calls (OpenTelemetry: eval/README.md, "The mapping") has no column
    # for it; a file its format recognised but could not read whole is there, only not read.
    summary_column = outcome.format is None or outcome.format.has_verifier_summary
    for tool in case.requiredEvidenceTools:
        counted = result.evidenceCoverage.get(tool, False)
        counted_badge = mark_yes("counts") if counted else mark_no("missing")
        if trace is None:  # not judged: nothing counts or is missing
            unread = mark_na("no trace" if outcome.format is None else "not read")
            rows.append(EvidenceRow(tool, unread, unread if summary_column else None, unread, mark_na("not evaluated")))
            continue
        calls = [inv for inv in trace.toolInvocations if inv.toolName == tool]
        summary = trace.verifier.tool_trace_summary if trace.verifier else []
        in_summary = any(entry.tool_name == tool for entry in summary)
        ok = sum(1 for inv in calls if inv.success is True)
        listed = mark_yes("listed") if in_summary else mark_no("not listed")
        if in_summary and not calls:  # the verifier vouches for a call the trace does not have
            listed = mark_warn("listed, never called", "the verifier's summary lists this tool, but the trace has no call to it")
        rows.append(
            EvidenceRow(
                tool=tool,
                invoked=mark_yes(fmt.plural(len(calls), "call")) if calls else mark_no("not invoked"),
                in_summary=listed if summary_column else None,
                succeeded=(mark_yes(f"{ok} of {len(calls)}") if ok else mark_no(f"0 of {len(calls)}")) if calls else mark_na(),
                counted=counted_badge,
            )
        )
    return tuple(rows)


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


def _keywords_fact(case: Case, result: CaseResult) -> str:
    """The Keywords figure: `3/4 (needs 3)`; "none expected" rather than "0/0"; "not evaluated" for a case not run."""
    if result.status is Status.NOT_RUN:
        return "not evaluated"
    if not case.expectedRootCauseKeywords:
        return "none expected"
    return f"{result.matchedKeywordCount}/{result.requiredKeywordCount} (needs {case.keyword_threshold})"


def _result_facts(case: Case, outcome: LoadedTrace | FixtureProblem, result: CaseResult) -> tuple[Fact, ...]:
    keywords = _keywords_fact(case, result)
    if result.trialResults is not None:
        # The case's figures are made of its trials' (eval/README.md, "Trials"): say how.
        k = f"{result.trials} trials"
        return (
            Fact(f"Keywords (lowest of {k})", keywords),
            Fact(f"Tool calls (mean of {k})", fmt.count(result.toolCallCount, 2)),
            Fact(f"Duration (mean of {k})", fmt.duration(result.durationMs)),
            *_usage_facts(result, f" (mean of {k})"),
            Fact("Trace", f"{case.traceFixture} · a folder of {k}"),
        )
    read = fmt.byte_size(outcome.size) if isinstance(outcome, LoadedTrace) else "not read"
    read += _format_note(outcome)
    return (
        Fact("Keywords", keywords),
        Fact("Tool calls", f"{result.toolCallCount:,}" if isinstance(outcome, LoadedTrace) else _unread_calls(outcome)),
        Fact("Duration", fmt.duration(result.durationMs)),
        *_usage_facts(result, ""),
        Fact("Trace", f"{case.traceFixture} · {read}"),
    )


def _format_note(outcome: LoadedTrace | FixtureProblem) -> str:
    """What the trace's format says of its file beside its size (` · OpenTelemetry, 6 spans`); "" for the native
    format, and for a file no format read."""
    if outcome.format is None:
        return ""
    said = outcome.format.describe(outcome.spans, isinstance(outcome, LoadedTrace))
    return f" · {said}" if said else ""


def _unread_calls(problem: FixtureProblem) -> str:
    """The Tool calls figure of a trace not read: its tool spans when it is an OpenTelemetry file without content."""
    if problem.tool_spans is None:
        return "not read"
    return f"{fmt.plural(problem.tool_spans, 'tool span')}, not read"


def _usage_facts(result: CaseResult, how: str) -> tuple[Fact, ...]:
    """The tokens the trace records (`session.usage`, `gen_ai.usage.*`) and what they cost; "not recorded" where it
    records none, never 0 (eval/README.md, "Tokens and cost")."""
    tokens = result.tokens
    if tokens is None:
        some = sum(1 for trial in result.trialResults or () if trial.tokens is not None)
        shown = f"recorded by {some} of {result.trials} trials only" if some else fmt.NOT_RECORDED
        return Fact(f"Tokens{how}", shown), Fact(f"Cost{how}", fmt.NOT_RECORDED)
    shown = f"{fmt.tokens(tokens.input)} in"
    if tokens.cacheRead:
        shown += f" ({fmt.tokens(tokens.cacheRead)} from cache)"
    shown += f" · {fmt.tokens(tokens.output)} out"
    cost = fmt.dollars(result.cost) if result.cost is not None else "not priced: no [cost.prices] entry for its model"
    return Fact(f"Tokens{how}", shown), Fact(f"Cost{how}", cost)


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
    answers = [_answer_view(page.case, trace.answer, phrases, config, not isinstance(trace.outcome, FixtureProblem))
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
        facts=_result_facts(case, outcome, result) + _trial_facts(result, trace.shown, trace.folder),
        pager=_pager(page.prev, page.next, site.case_pages.links_neighbours()),
        toc=_toc(trace.trials, comparison),
        checks=_checks(result.failedChecks[:MAX_TOOL_CALLS], change),
        problem=outcome.message if isinstance(outcome, FixtureProblem) else None,
        question=text_block(case.question),
        answer=answer,
        evidence=_evidence_rows(case, outcome, result),
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
