"""The "what changed" phrase after a regressed or fixed case's rules, worded once for every summary (eval/README.md,
"What the agent did differently"): `no longer called query_db_status; answer 38 % changed`, or `trace unchanged:
the case or the rules changed`.

The phrase is data — parts, a tool's name marked as recorded text — that diff.md, the job summary and the
terminal turn into text and the site's views into HTML, each escaping the names its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from sitegen.checks import check_codes
from sitegen.compare.behaviour import Behaviour, ClaimChange, PolarityChange, percent_changed
from sitegen.negation import Polarity
from sitegen.compare.changes import CaseChange, ChangeKind
from sitegen.compare.trajectory import Divergence
from sitegen.compare.where import step_text, streak_text
from sitegen.defaults import HEADLINE_LISTED

if TYPE_CHECKING:
    from sitegen.compare.diff_report import DiffReport

NO_EVIDENCE = "the baseline does not record the agent's answers: regenerate it with `sitegen baseline`"
NO_INPUTS = (
    "the baseline does not record the tool calls' inputs, so a call made with another input is not seen: "
    "regenerate it with `sitegen baseline`"
)
NO_MEANING = (
    "the baseline does not record keyword polarity or claim checks, so a change of meaning is not seen: "
    "regenerate it with `sitegen baseline`"
)
TRACE_UNCHANGED = "trace unchanged: the case or the rules changed"
MEANING_LISTED = 3  # keywords, claims or edits a phrase names before "and N more"
PHRASED = (ChangeKind.REGRESSED, ChangeKind.FIXED)  # the changes that get a phrase


class Part(NamedTuple):
    """A piece of a phrase: words, or (`code`) a tool's name as recorded, which every writer escapes, or a command."""

    text: str
    code: bool = False


def no_evidence_parts(sentence: str = NO_EVIDENCE) -> tuple[Part, ...]:
    """NO_EVIDENCE (or NO_INPUTS) as parts, capitalised as a sentence, its command as code (for the pages)."""
    pieces = (sentence[0].upper() + sentence[1:] + ".").split("`")
    return tuple(Part(piece, code=bool(i % 2)) for i, piece in enumerate(pieces) if piece)


def _tools(names: Iterable[str], lead: str, tail: str) -> list[Part]:
    parts = [Part(lead)] if lead else []
    for i, name in enumerate(names):
        if i:
            parts.append(Part(", "))
        parts.append(Part(name, code=True))
    return parts + ([Part(tail)] if tail else [])


def divergence_parts(divergence: Divergence) -> list[Part]:
    """Where the two trajectories first differ: `first diverged at step 2: query_logs instead of query_metrics`."""
    before, after = divergence.before, divergence.after
    lead = Part(f"first diverged at step {divergence.step}: ")
    if before is not None and after is not None and before.toolName != after.toolName:
        return [lead, Part(after.toolName, code=True), Part(" instead of "), Part(before.toolName, code=True)]
    if before is not None and after is not None:
        words = []
        if before.inputDigest != after.inputDigest:
            words.append("called with another input")
        if before.success != after.success:
            outcome = "now fails" if after.success is False else "no longer fails" if before.success is False else None
            words.append(outcome or "with another outcome recorded")
        return [lead, Part(before.toolName, code=True), Part(" " + " and ".join(words or ["called differently"]))]
    call = after if after is not None else before
    assert call is not None, "a divergence has a call on at least one side"
    if divergence.moved:
        return [lead, Part(call.toolName, code=True), Part(f" called {divergence.moved} than in the baseline")]
    return [lead, Part(call.toolName, code=True), Part(" left out" if after is None else " added")]


def _restates(divergence: Divergence, behaviour: Behaviour) -> bool:
    """Whether the first divergence only says again that a tool is no longer called, newly called or now fails."""
    before, after = divergence.before, divergence.after
    if after is None and before is not None:
        return before.toolName in behaviour.toolsRemoved
    if before is None and after is not None:
        return after.toolName in behaviour.toolsAdded
    assert before is not None and after is not None, "a divergence has a call on at least one side"
    only_failing = before.inputDigest == after.inputDigest and after.success is False
    return only_failing and before.toolName in behaviour.toolsNowFailing


def _state_clauses(behaviour: Behaviour) -> list[list[Part]]:
    """What the agent decided differently, each as `verdict PASS → REJECT` (a value as recorded, shown as code)."""
    return [[Part(f"{state.word} "), Part(then or "none", code=True), Part(" → "), Part(now or "none", code=True)]
            for state, then, now in behaviour.stateChanges]


_POLARITY_WORDS = {
    Polarity.NEGATED: "now negated",
    Polarity.BOTH: "now also negated",
    Polarity.AFFIRMED: "no longer negated",
    Polarity.ABSENT: "no longer mentioned",
}


def _joined(items: list[list[Part]]) -> list[Part]:
    """Items of a clause joined by commas, past MEANING_LISTED said as "and N more"."""
    parts: list[Part] = []
    for i, item in enumerate(items[:MEANING_LISTED]):
        parts += ([Part(", ")] if i else []) + item
    more = len(items) - MEANING_LISTED
    return parts + ([Part(f" and {more} more")] if more > 0 else [])


def polarity_parts(change: PolarityChange) -> list[Part]:
    """`支付 now negated: "根因并非支付渠道"`, or `支付 no longer negated` (eval/README.md, "Behaviour that changed meaning");
    the keyword and the quote are recorded text."""
    after = Polarity(change.after)
    words = "now affirmed" if after is Polarity.AFFIRMED and change.before == Polarity.ABSENT else _POLARITY_WORDS[after]
    parts = [Part(change.keyword, code=True), Part(f" {words}")]
    if change.quote and after in (Polarity.NEGATED, Polarity.BOTH):
        parts += [Part(': "'), Part(change.quote, code=True), Part('"')]
    return parts


def claim_parts(change: ClaimChange) -> list[Part]:
    """`claim c2 SUPPORTED → CONTRADICTED`, `claim c3 added (SUPPORTED)`, `claim c1 removed`."""
    lead = [Part("claim "), Part(change.claimId, code=True)]
    if change.added:
        return [*lead, Part(" added ("), Part(change.after or "no verification", code=True), Part(")")]
    if change.removed:
        return [*lead, Part(" removed")]
    return [*lead, Part(" "), Part(change.before or "none", code=True), Part(" → "), Part(change.after or "none", code=True)]


def edits_parts(edits: tuple[tuple[str, str], ...]) -> list[Part]:
    """`answer edited in 2 places: "根因：" → "根因并非", …`: a small change worded by its edits."""
    places = "1 place" if len(edits) == 1 else f"{len(edits)} places"
    quoted = [[Part('"'), Part(then, code=True), Part('" → "'), Part(now, code=True), Part('"')] for then, now in edits]
    return [Part(f"answer edited in {places}: "), *_joined(quoted)]


def meaning_clauses(behaviour: Behaviour) -> list[list[Part]]:
    """What the answer now means differently, named first in a phrase: the keywords whose polarity changed, then
    the claim checks that changed."""
    clauses = []
    if behaviour.polarityChanges:
        clauses.append(_joined([polarity_parts(change) for change in behaviour.polarityChanges]))
    if behaviour.claimChanges:
        clauses.append(_joined([claim_parts(change) for change in behaviour.claimChanges]))
    return clauses


def what_changed(behaviour: Behaviour) -> tuple[Part, ...]:
    """What the agent did differently, as parts of one phrase; empty when nothing is known of it."""
    if behaviour.traceChanged is False:
        return (Part(TRACE_UNCHANGED),)
    if behaviour.answerSimilarity is None:
        return ()  # a side records no evidence, or its trace could not be read (its failed check says so)
    clauses: list[list[Part]] = meaning_clauses(behaviour)
    if behaviour.toolsRemoved:
        clauses.append(_tools(behaviour.toolsRemoved, "no longer called ", ""))
    if behaviour.toolsNowFailing:
        verb = " now fails" if len(behaviour.toolsNowFailing) == 1 else " now fail"
        clauses.append(_tools(behaviour.toolsNowFailing, "", verb))
    if behaviour.toolsAdded:
        clauses.append(_tools(behaviour.toolsAdded, "now also called ", ""))
    divergence = behaviour.firstDivergence
    if divergence is not None and not _restates(divergence, behaviour):
        clauses.append(divergence_parts(divergence))
    elif not clauses and behaviour.callsChanged is not None:
        clauses.append([Part("tool calls changed")])
    if behaviour.answerEdits:
        clauses.append(edits_parts(behaviour.answerEdits))
    elif behaviour.answerSimilarity < 1:
        changed = percent_changed(behaviour.answerSimilarity)
        clauses.append([Part(f"answer {changed} % changed" if changed else "answer changed by less than 1 %")])
    # Its verdict, gatekeeper status or composer mode: often the whole story (a flipped verdict fails the rules
    # with the answer and tools as they were), so "same answer and tool calls" is said only when none moved.
    clauses += _state_clauses(behaviour)
    if not clauses:
        clauses.append([Part("same answer and tool calls")])
    parts: list[Part] = []
    for i, clause in enumerate(clauses):
        if i:
            parts.append(Part("; "))
        parts += clause
    return tuple(parts)


def phrase_text(parts: Iterable[Part], escape: Callable[[str], str] = str) -> str:
    """A phrase as text, `escape` applied to every tool name (Markdown escaping for diff.md)."""
    return "".join(escape(part.text) if part.code else part.text for part in parts)


def rule_codes(change: CaseChange) -> list[str]:
    """The rules a phrased case is named with: those that broke (regressed) or were resolved (fixed)."""
    return check_codes(change.resolvedChecks if change.change is ChangeKind.FIXED else change.newFailedChecks)


def case_line(change: CaseChange, escape: Callable[[str], str] = str) -> str:
    """`case (rules) — phrase`, as the terminal lists a regressed or fixed case; `escape` for every recorded text."""
    codes = rule_codes(change)
    line = escape(change.caseId) + (f" ({escape(', '.join(codes))})" if codes else "")
    phrase = what_changed(change.behaviour)
    return f"{line} — {phrase_text(phrase, escape)}" if phrase else line


def since_tail(change: CaseChange, diff: DiffReport, escape: Callable[[str], str] = str) -> str:
    """` · failing since a1b2c3d, 2026-11-30, 4 runs` after a regressed case's line, when a build's history tells it."""
    streak = None if diff.failingSince is None or change.change is not ChangeKind.REGRESSED else diff.failingSince.get(change.caseId)
    return "" if streak is None else f" · {escape(streak_text(streak))}"


TERMINAL_LISTED = 20  # phrased cases the terminal lists; diff.md and the job summary list them all


def printable(text: str) -> str:
    """Text for a terminal: control and formatting characters (escapes, bidi overrides, newlines) become spaces."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else " " for ch in text)


def terminal_lines(diff: DiffReport) -> list[str]:
    """The lines under the terminal's headline: the cases that could not be evaluated past those it names, then
    each regressed and fixed case with its phrase, or once that the baseline records no answers."""
    unjudged = [change for change in diff.caseChanges if change.change is ChangeKind.NOT_EVALUATED][HEADLINE_LISTED:]
    lines = [f"  {printable(change.caseId)} — {printable(change.reason or 'not run')}" for change in unjudged[:TERMINAL_LISTED]]
    if len(unjudged) > TERMINAL_LISTED:
        lines.append(f"  … and {len(unjudged) - TERMINAL_LISTED} more cases that could not be evaluated (see diff.md)")
    if diff.step is not None:
        lines.append(f"  {printable(step_text(diff.step))}")
    if not diff.baselineEvidence:  # no phrase to tell, but since when a regressed case fails, when a build knows
        told = [change for change in diff.caseChanges if since_tail(change, diff)]
        lines += [f"  {printable(change.caseId)}{since_tail(change, diff, printable)}" for change in told[:TERMINAL_LISTED]]
        return [*lines, f"  {NO_EVIDENCE}"]
    phrased = [change for change in diff.caseChanges if change.change in PHRASED]
    lines += [f"  {case_line(change, printable)}{since_tail(change, diff, printable)}" for change in phrased[:TERMINAL_LISTED]]
    if len(phrased) > TERMINAL_LISTED:
        lines.append(f"  … and {len(phrased) - TERMINAL_LISTED} more regressed or fixed cases (see diff.md)")
    # The passing cases that behave differently past those the headline names with their phrase.
    rest = [change for change in diff.caseChanges if change.change is ChangeKind.CHANGED][HEADLINE_LISTED:]
    lines += [f"  {case_line(change, printable)}" for change in rest[:TERMINAL_LISTED]]
    if len(rest) > TERMINAL_LISTED:
        lines.append(f"  … and {len(rest) - TERMINAL_LISTED} more passing cases that behave differently (see diff.md)")
    if not diff.baselineInputs:
        lines.append(f"  {NO_INPUTS}")
    elif not diff.baselineMeaning:
        lines.append(f"  {NO_MEANING}")
    return lines
