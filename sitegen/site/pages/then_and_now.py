"""The case page's comparison with the baseline: what the agent did differently (docs/comparison.md).

Shown right under the result box of a case whose trace changed: the status, verdict, gatekeeper status and
composer mode then → now, the two tool trajectories aligned step by step (site/pages/trajectory_view.py; with
trials also a table of the tools counted over them), and the two answers with removed and added text marked. Everything comes from the two reports' evidence fields (eval/README.md, "The report"), so
the comparison needs no trace of the baseline's. Only these pages pay for the text diff.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.compare.behaviour import Behaviour, compare_behaviour, percent_changed, shown_pair
from sitegen.compare.changes import CaseChange, ChangeKind
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.results import CaseResult, TrialResult
from sitegen.site.html.highlight import Highlight
from sitegen.site.html.phrase_diff import ADDED, LINES, REMOVED, REWRITTEN, SENTENCES, UNMARKED, diff_text
from sitegen.site.pages.answer_diff import Chunk, cut_spans, side_chunks, side_spans, side_text
from sitegen.site.pages.badges import Badge, mark_na, mark_no, mark_yes
from sitegen.site.pages.text import TEXT_LIMIT, clip
from sitegen.site.pages.trajectory_view import TrajectoryView, trajectory_view
from sitegen.suite.config import SuiteConfig
from sitegen.suite.models import Case
from sitegen.negation import Polarity, read_keywords
from sitegen.textmatch import found_in, normalise

COMPARED, UNCHANGED, NO_EVIDENCE, UNREADABLE = "compared", "unchanged", "no-evidence", "unreadable"
NO_EVIDENCE_TEXT = (
    "The baseline does not record the agent's answers and tool calls (it was written by the Java harness or an "
    "older sitegen), so there is nothing to compare them with."
)
REGENERATE = "sitegen baseline"
# What "N % changed" measures (docs/comparison.md, "answer N % changed"), said where the figure is shown.
CHANGED_NOTE = (
    "“% changed” measures how much of the two answers' text differs: the share of their characters that the two "
    "do not have in common, in order (a dropped sentence is a few percent, a rewrite most of it)."
)
_DIFF_NOTES = {
    SENTENCES: "These answers differ in many places, so they are compared sentence by sentence.",
    LINES: "These answers differ in many places, so they are compared line by line.",
    REWRITTEN: "The answer was rewritten: too little is common to mark word by word, so each side is marked whole.",
    UNMARKED: "These answers are too long and too different to compare in detail, so each side is marked whole.",
}


class Denial(NamedTuple):
    """An expected keyword the answer denies somewhere (eval/README.md, "Negated keywords"), with its trigger."""

    keyword: str
    trigger: str
    spans: tuple[str, ...]  # the answer's text from each denying trigger to the keyword, as marked
    only: bool  # every occurrence is denied


class FoundPhrases(NamedTuple):
    """The case's phrases found in an answer, as the rules find them."""

    matched: list[str]  # expected keywords that count: affirmed (or listed in keywordsAnyPolarity and present)
    forbidden: list[str]  # forbidden phrases present
    markers: list[str]  # raw Executor markers present
    denials: tuple[Denial, ...] = ()  # expected keywords denied somewhere, in the case's order

    @property
    def highlights(self) -> list[Highlight]:
        """The phrases to mark: expected keywords as found, their denials apart (marked last among them, so a denied
        occurrence reads denied), forbidden phrases and markers as alarms."""
        denied = [(span, "hl-negated") for denial in self.denials for span in denial.spans]
        return [(k, "hl-keyword") for k in self.matched] + denied + [(k, "hl-forbidden") for k in self.forbidden + self.markers]

    @property
    def only_denied(self) -> list[Denial]:
        """The denials of keywords the answer never affirms and that do not count."""
        return [denial for denial in self.denials if denial.only and denial.keyword not in self.matched]


def found_phrases(case: Case, answer: str, config: SuiteConfig) -> FoundPhrases:
    """The expected keywords (those that count, and those denied), forbidden phrases and raw Executor markers that
    `answer` holds."""
    forbidden = list(dict.fromkeys(case.forbiddenAnswerKeywords + case.forbiddenConfirmedClaimKeywords))
    readings = read_keywords(answer, tuple(dict.fromkeys(case.expectedRootCauseKeywords)), config.negation)
    any_polarity = {normalise(keyword) for keyword in case.keywordsAnyPolarity}
    matched = [r.keyword for r in readings if r.polarity.counts or (r.occurrences and normalise(r.keyword) in any_polarity)]
    denials = tuple(
        Denial(r.keyword, r.denial.trigger or "", tuple(dict.fromkeys(o.denied for o in r.occurrences if o.trigger)), r.polarity is Polarity.NEGATED)
        for r in readings
        if r.denial is not None
    )
    return FoundPhrases(matched, found_in(answer, forbidden), found_in(answer, list(config.raw_executor_markers)), denials)


def denial_words(denial: Denial) -> str:
    """A denied keyword as a reader is told it: `支付 (denied by "并非")`."""
    return f'{denial.keyword} (denied by "{denial.trigger}")'


class StateRow(NamedTuple):
    """One recorded value then → now."""

    label: str
    before: str
    after: str
    changed: bool


class ToolRow(NamedTuple):
    """One tool called on either side: what each side did with it."""

    tool: str
    required: bool
    before: tuple[Badge, ...]
    after: tuple[Badge, ...]
    changed: bool


class AnswerSide(NamedTuple):
    """One side's answer: which run and trial it is from, and its text as chunks of HTML."""

    title: str
    source: str
    chunks: tuple[Chunk, ...]
    missing: str | None  # why there is no answer to show
    note: str | None  # the answer was cut to the page's budget
    legend: str


class ComparisonView(NamedTuple):
    """The comparison section, or the one line saying why there is none to show."""

    state: str  # COMPARED, UNCHANGED, NO_EVIDENCE or UNREADABLE
    message: str
    shown: str | None  # which trials the answers are from
    states: tuple[StateRow, ...]
    tools: tuple[ToolRow, ...]  # with trials only: each tool counted over them
    tools_note: str
    answers: tuple[AnswerSide, AnswerSide] | None  # None: the answers are the same
    diff_note: str | None
    command: str | None = None  # the command that would make the comparison possible
    answers_title: str = "Answers"
    changed_note: str = ""  # what the title's "N % changed" measures, in one sentence
    trajectory: TrajectoryView | None = None  # the shown runs' tool calls aligned step by step


def trace_changed(behaviour: Behaviour, before: Evidence, after: Evidence) -> bool:
    """Whether the trace differs from the baseline's: by digest (`traceChanged`), or, with a digest unknown on one
    side, when both sides record an answer (the comparison then shows what it can)."""
    if behaviour.traceChanged is not None:
        return behaviour.traceChanged
    return before.answer is not None and after.answer is not None


def comparison_view(
    case: Case,
    baseline: CaseResult,
    result: CaseResult,
    change: CaseChange | None,
    config: SuiteConfig,
    found: Mapping[str, FoundPhrases] | None = None,
) -> ComparisonView:
    """The comparison of a case with its baseline entry (the case is in both reports); `found`: the phrases
    already found in some answers (found_phrases), by answer."""
    if baseline.evidence is None:
        return _line(NO_EVIDENCE, NO_EVIDENCE_TEXT)._replace(command=REGENERATE)
    assert result.evidence is not None, "a report made now records the evidence"
    if result.evidence.answer is None and result.evidence.traceDigest is None:
        return _line(UNREADABLE, "The trace could not be read now, so there is no answer to compare.")
    behaviour = change.behaviour if change is not None else compare_behaviour(baseline, result, config.answer_similarity)
    if not trace_changed(behaviour, baseline.evidence, result.evidence):
        if baseline.status != result.status or (change is not None and change.change in (ChangeKind.REGRESSED, ChangeKind.FIXED)):
            return _line(UNCHANGED, "The trace is unchanged since the baseline: the case or the rules changed.")
        return _line(UNCHANGED, "The trace is unchanged since the baseline.")
    # The runs compare/behaviour.py judges (so the answer's "% changed" and the trajectory are of these two): for a
    # case with trials that passed and fails now, the baseline's first passing trial and the first failing one now.
    shown = shown_pair(baseline, result)
    b_evidence = shown.before_evidence or baseline.evidence
    c_evidence = shown.after_evidence or result.evidence
    b_number, c_number = shown.before_trial, shown.after_trial
    answers, diff_note = _answers(case, config, b_evidence, c_evidence, b_number, c_number, found or {})
    similarity = behaviour.answerSimilarity
    trials = bool(baseline.trialResults and len(baseline.trialResults) > 1) or bool(result.trialResults and len(result.trialResults) > 1)
    tools, tools_note = _tools(case, baseline, result) if trials else ((), "")
    return ComparisonView(
        state=COMPARED,
        message="The trace changed since the baseline. What the agent did then and now:",
        shown=_shown_text(baseline, result, b_number, c_number, shown.regressed_trials),
        states=_states(shown.before, shown.after, b_evidence, c_evidence, config),
        tools=tools,
        tools_note=tools_note,
        answers=answers,
        diff_note=diff_note,
        answers_title="Answers" if similarity is None or answers is None else f"Answers · {percent_changed(similarity)} % changed",
        changed_note="" if similarity is None or answers is None else CHANGED_NOTE,
        trajectory=trajectory_view(b_evidence, c_evidence, case.requiredEvidenceTools, behaviour.steps),
    )


def _line(state: str, message: str) -> ComparisonView:
    return ComparisonView(state, message, None, (), (), "", None, None)


def _shown_text(baseline: CaseResult, result: CaseResult, before: int | None, after: int | None, regressed: bool) -> str | None:
    if before is None and after is None:
        return None
    then = f"the baseline's trial {before} of {baseline.trials}" if before else "the baseline's one trace"
    now = f"trial {after} of {result.trials} now" if after else "the one trace now"
    why = " (the baseline's first passing trial, the first failing trial now)" if regressed else ""
    return f"The states, tool trajectories and answers shown are from {then} and {now}{why}."


def _states(
    before: CaseResult | TrialResult, after: CaseResult | TrialResult, b: Evidence, c: Evidence, config: SuiteConfig
) -> tuple[StateRow, ...]:
    pairs = (
        ("Status", before.status.replace("_", " "), after.status.replace("_", " ")),
        ("Verdict", before.verdict or "no verdict", after.verdict or "no verdict"),
        ("Gatekeeper status", b.gatekeeperStatus or "not recorded", c.gatekeeperStatus or "not recorded"),
        ("Composer mode", b.composerMode or "not recorded", c.composerMode or "not recorded"),
    )
    return tuple(StateRow(label, fmt.shorten(x), fmt.shorten(y), x != y) for label, x, y in pairs)


# --- the tool table ------------------------------------------------------------------------------------


def _tool_states(calls: Sequence[ToolCall]) -> dict[str, str]:
    """What one trace did with each tool it called: "called" (some call did not fail) or "failed" (every call
    failed); a tool not in it was not called."""
    states: dict[str, str] = {}
    for call in calls:
        if states.get(call.toolName) != "called":
            states[call.toolName] = "failed" if call.success is False else "called"
    return states


def _side_calls(result: CaseResult) -> list[dict[str, str]]:
    """Each trial's tool states (one entry for a single trace); empty when the report records none."""
    if result.trialResults:
        return [_tool_states(trial.evidence.toolCalls) for trial in result.trialResults if trial.evidence is not None]
    return [_tool_states(result.evidence.toolCalls)] if result.evidence is not None else []


_SINGLE = {
    "called": (mark_yes("called"),),
    "failed": (mark_no("failed", "every call of it failed"),),
    "none": (mark_na("not called"),),
}


def _tool_badges(traces: list[dict[str, str]], tool: str) -> tuple[Badge, ...]:
    states = [trace.get(tool, "none") for trace in traces]
    if len(traces) == 1:
        return _SINGLE[states[0]]
    called, failed = states.count("called"), states.count("failed")
    badges = []
    if called:
        badges.append(mark_yes(f"called {called}/{len(traces)}", "trials in which it was called"))
    if failed:
        badges.append(mark_no(f"failed {failed}/{len(traces)}", "trials in which every call of it failed"))
    return tuple(badges) or (mark_na(f"not called 0/{len(traces)}", "trials in which it was called"),)


def _tools(case: Case, baseline: CaseResult, result: CaseResult) -> tuple[tuple[ToolRow, ...], str]:
    before, after = _side_calls(baseline), _side_calls(result)
    names = list(dict.fromkeys(case.requiredEvidenceTools))
    for traces in (before, after):
        names.extend(name for states in traces for name in states)
    names = list(dict.fromkeys(names))
    required = set(case.requiredEvidenceTools)
    rows = []
    for name in names[:200]:
        then, now = _tool_badges(before, name), _tool_badges(after, name)
        rows.append(ToolRow(fmt.shorten(name), name in required, then, now, then != now))
    unit = "trials" if len(before) > 1 or len(after) > 1 else "the trace"
    note = f"Each tool called on either side and each required tool; counted over {unit}."
    if len(names) > 200:
        note += f" The first 200 of {len(names):,} tools are listed."
    return tuple(rows), note


# --- the answers -----------------------------------------------------------------------------------------


def _answers(
    case: Case,
    config: SuiteConfig,
    b: Evidence,
    c: Evidence,
    b_trial: int | None,
    c_trial: int | None,
    found: Mapping[str, FoundPhrases],
) -> tuple[tuple[AnswerSide, AnswerSide] | None, str | None]:
    if b.answer is not None and b.answer == c.answer:
        return None, "The answers are the same."
    # The whole answers are diffed (their common start and end cost next to nothing), then each side is cut to
    # the page's budget: cutting first would make two long answers that differ in one place differ at the end.
    diff = diff_text(b.answer or "", c.answer or "")
    sides, held = [], []
    for title, trial, evidence, side in (("Baseline", b_trial, b, REMOVED), ("Now", c_trial, c, ADDED)):
        clipped = clip(side_text(diff.runs, side), TEXT_LIMIT)
        spans = cut_spans(side_spans(diff.runs, side), len(clipped.text))
        phrases = found.get(clipped.text) or found_phrases(case, clipped.text, config)
        # The keywords the whole answer holds, as the rules find them (the page may show it cut).
        held.append(phrases.matched if clipped.note is None else found_in(evidence.answer or "", case.expectedRootCauseKeywords))
        missing = None
        if evidence.answer is None:
            missing = "The trace could not be read, so it has no answer."
        elif not evidence.answer.strip():
            missing = "The trace has no answer."
        note = clipped.note
        sides.append(
            AnswerSide(
                title=title,
                source=f"trial {trial}" if trial else "",
                chunks=side_chunks(clipped.text, spans, side, phrases.highlights) if missing is None else (),
                missing=missing,
                note=note,
                legend=_legend(case, phrases, held[-1]),
            )
        )
    lost = [k for k in held[0] if k not in held[1]]
    gained = [k for k in held[1] if k not in held[0]]
    denied_now = {d.keyword for d in (found.get(c.answer or "") or found_phrases(case, c.answer or "", config)).denials}
    now = sides[1]._replace(legend=sides[1].legend + _keyword_changes(lost, gained, denied_now))
    return (sides[0], now), _DIFF_NOTES.get(diff.mode)


def _names(phrases: Sequence[str]) -> str:
    return ", ".join(fmt.shorten(p) for p in phrases[:10]) + (f" and {len(phrases) - 10:,} more" if len(phrases) > 10 else "")


def _legend(case: Case, phrases: FoundPhrases, matched: Sequence[str]) -> str:
    """How many expected keywords the answer holds, and the forbidden phrases it says, named."""
    text = f"{len(matched)} of {len(case.expectedRootCauseKeywords)} expected keywords"
    if phrases.only_denied:
        text += f"; only denied: {', '.join(denial_words(d) for d in phrases.only_denied[:10])}"
    said = phrases.forbidden + phrases.markers
    if said:
        text += f"; {'forbidden phrase' if len(said) == 1 else 'forbidden phrases'}: {_names(said)}"
    return text


def _keyword_changes(lost: Sequence[str], gained: Sequence[str], denied: set[str] | frozenset[str] = frozenset()) -> str:
    """The expected keywords the answer now denies, no longer holds and holds now, named ("" when none)."""
    now_denied = [k for k in lost if k in denied]
    lost = [k for k in lost if k not in denied]
    parts = [f"now denied: {_names(now_denied)}"] if now_denied else []
    parts += [f"no longer found: {_names(lost)}"] if lost else []
    parts += [f"newly found: {_names(gained)}"] if gained else []
    return f" — {'; '.join(parts)}" if parts else ""
