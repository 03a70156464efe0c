"""What the agent did differently in a case: its trace, answer and tool calls then and now, from the evidence the
two reports record (eval/README.md, "Comparing with the baseline", "What the agent did differently").

Only a case whose trace changed (the two `traceDigest`s differ, or one is unknown) is compared: a build compares
every case, and most traces are unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from sitegen.compare.similarity import similarity
from sitegen.compare.trajectory import (
    Divergence,
    Step,
    align,
    calls_differ,
    first_divergence,
    inputs_changed,
    tool_order_changed,
)
from sitegen.defaults import DEFAULT_ANSWER_SIMILARITY, Choice
from sitegen.negation import read_keywords
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.results import CaseResult, TrialResult


class BehaviourReason(Choice):
    """Why a case behaves differently (`behaviourChanges`), as diff.json spells it, with the words the diff's tables,
    the terminal and the comment say it in: the one place a reason is spelled. Declared in the fixed order the
    reasons are listed in (eval/README.md, "Behaviour that changed" and "Behaviour that changed meaning"); the last
    three are recorded states, whose values then and now a `stateChanges` entry gives."""

    # value                        the reader's words
    ANSWER = "answer", "answer"
    KEYWORD_POLARITY = "keywordPolarity", "keyword affirmed or denied"
    CLAIMS = "claims", "claim checks"
    TOOLS = "tools", "tools called"
    TOOL_ORDER = "toolOrder", "tool order"
    TOOL_INPUTS = "toolInputs", "tool inputs"
    VERDICT = "verdict", "verdict"
    GATEKEEPER = "gatekeeperStatus", "gatekeeper status"
    COMPOSER = "composerMode", "composer mode"

    word: str


SMALL_EDIT_PERCENT = 5  # an answer changed by less than this (in percent) is worded by its edits, not a percentage


class PolarityChange(NamedTuple):
    """An expected keyword whose polarity differs (sitegen/negation.py), with the denial now when there is one."""

    keyword: str
    before: str  # a Polarity value
    after: str
    quote: str  # the current answer's denial of it ("根因并非支付渠道"); "" when none is found


class ClaimChange(NamedTuple):
    """A claim check added (before None), removed (after None) or whose verification changed."""

    claimId: str
    before: str | None
    after: str | None
    added: bool = False
    removed: bool = False


@dataclass(frozen=True)
class Behaviour:
    """How a case's agent behaviour changed, as a `caseChanges` entry records it (None: not known)."""

    traceChanged: bool | None = None  # False: both traces have the same digest; None: a side records none
    answerSimilarity: float | None = None  # textdiff.similarity of the two answers; None: a side records none
    toolsAdded: tuple[str, ...] = ()  # tools called now and not in the baseline, sorted
    toolsRemoved: tuple[str, ...] = ()  # tools called in the baseline and not now, sorted
    toolsNowFailing: tuple[str, ...] = ()  # tools that succeeded in the baseline and now only fail, sorted
    answerLengths: tuple[int, int] | None = None  # the answers' lengths in characters when they differ
    callsChanged: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # both (tool, outcome) sequences when they differ
    behaviourChanged: bool | None = None  # some BehaviourReason holds; None: not known
    behaviourChanges: tuple[BehaviourReason, ...] = ()  # the reasons, in their declared order
    steps: tuple[Step, ...] = ()  # the two trajectories aligned (compare/trajectory.py), when the calls differ
    firstDivergence: Divergence | None = None  # the first step where they differ
    inputsKnown: bool = True  # False: a side's report does not record the calls' inputs
    # The recorded states that differ (the reasons VERDICT, GATEKEEPER, COMPOSER), each with its value then and now.
    stateChanges: tuple[tuple[BehaviourReason, str | None, str | None], ...] = ()
    polarityChanges: tuple[PolarityChange, ...] = ()  # KEYWORD_POLARITY's keywords, in the case's order
    claimChanges: tuple[ClaimChange, ...] = ()  # BehaviourReason.CLAIMS's claims, in recorded order (removed ones last)
    # False: a side's report does not record keyword polarity / claim checks (an older sitegen's): not known.
    polarityKnown: bool = True
    claimsKnown: bool = True
    answerEdits: tuple[tuple[str, str], ...] = ()  # a small change (< SMALL_EDIT_PERCENT): each edit, then → now

    def to_json(self) -> dict[str, Any]:
        """The fields a `caseChanges` entry adds."""
        return {
            "traceChanged": self.traceChanged,
            "answerSimilarity": self.answerSimilarity,
            "toolsAdded": list(self.toolsAdded),
            "toolsRemoved": list(self.toolsRemoved),
            "toolsNowFailing": list(self.toolsNowFailing),
            "behaviourChanged": self.behaviourChanged,
            "behaviourChanges": list(self.behaviourChanges),
        }


UNKNOWN = Behaviour()
UNCHANGED = Behaviour(traceChanged=False, answerSimilarity=1.0, behaviourChanged=False)


def records_evidence(report_results: Iterable[CaseResult]) -> bool:
    """Whether a report records what the agent did (an older sitegen's or the Java harness's does not)."""
    return any(result.evidence is not None for result in report_results)


def records_meaning(report_results: Iterable[CaseResult]) -> bool:
    """Whether a report records each result's keyword polarity and claim checks (one of an older sitegen does not)."""
    return any(result.keywordPolarity is not None and result.claimChecks is not None for result in report_results)


def records_inputs(report_results: Iterable[CaseResult]) -> bool:
    """Whether a report records its tool calls' inputs (one of an older sitegen does not): some result's evidence
    does, and none lacks them."""
    evidences = [result.evidence for result in report_results if result.evidence is not None]
    return bool(evidences) and all(evidence.inputsRecorded for evidence in evidences)


class Shown(NamedTuple):
    """The two runs a comparison shows and judges (eval/README.md, "What the agent did differently"): each side's
    result or trial, its evidence, and its trial's number from 1 (None for a single trace)."""

    before: CaseResult | TrialResult
    after: CaseResult | TrialResult
    before_evidence: Evidence | None
    after_evidence: Evidence | None
    before_trial: int | None
    after_trial: int | None
    regressed_trials: bool  # the baseline's first passing trial and the first failing trial now


def _shown_side(result: CaseResult, passed: bool | None) -> tuple[CaseResult | TrialResult, Evidence | None, int | None]:
    trials = result.trialResults
    if not trials:
        return result, result.evidence, None
    if passed is None:  # the first trial, whose evidence the result carries (with a digest over every trial's)
        return trials[0], result.evidence, 1
    number = next((n for n, trial in enumerate(trials, 1) if trial.passed == passed), 1)
    trial = trials[number - 1]
    return trial, trial.evidence if trial.evidence is not None else result.evidence, number


def shown_pair(base: CaseResult, cur: CaseResult) -> Shown:
    """The two runs a comparison shows: for a case with trials that regressed, the baseline's first passing trial
    and the first failing trial now; otherwise each side's first trial (or its one trace)."""
    regressed = bool(base.trialResults and cur.trialResults and base.passed and not cur.passed)
    before, b_evidence, b_trial = _shown_side(base, True if regressed else None)
    after, c_evidence, c_trial = _shown_side(cur, False if regressed else None)
    return Shown(before, after, b_evidence, c_evidence, b_trial, c_trial, regressed)


def _sides(result: CaseResult) -> list[Evidence]:
    """The evidence of every trial of a result (its own for a single trace)."""
    if result.trialResults:
        return [trial.evidence for trial in result.trialResults if trial.evidence is not None]
    return [result.evidence] if result.evidence is not None else []


def _tool_outcomes(evidences: list[Evidence]) -> dict[str, bool]:
    """Each tool called in any of the traces → whether some call of it did not fail."""
    outcomes: dict[str, bool] = {}
    for evidence in evidences:
        for call in evidence.toolCalls:
            outcomes[call.toolName] = outcomes.get(call.toolName, False) or call.success is not False
    return outcomes


def _labels(calls: tuple[ToolCall, ...]) -> tuple[str, ...]:
    return tuple(call.label for call in calls)


def compare_behaviour(
    base: CaseResult | None, cur: CaseResult | None, answer_similarity: float = DEFAULT_ANSWER_SIMILARITY
) -> Behaviour:
    """The change of what the agent did between a case's baseline result and its current one; an answer less
    alike than `answer_similarity` (`[diff] answerSimilarity`) is a change of behaviour."""
    if base is None or cur is None or base.evidence is None or cur.evidence is None:
        return UNKNOWN
    digests = base.evidence.traceDigest, cur.evidence.traceDigest
    if digests[0] is not None and digests[0] == digests[1]:
        return UNCHANGED
    trace_changed = None if None in digests else True
    shown = shown_pair(base, cur)
    before, after = shown.before_evidence, shown.after_evidence
    if before is None or after is None or before.answer is None or after.answer is None:
        return Behaviour(trace_changed)  # a trace that could not be read: what the agent did there is not known
    same = before.answer == after.answer
    score = 1.0 if same else similarity(before.answer, after.answer)
    inputs_known = before.inputsRecorded and after.inputsRecorded
    differ = calls_differ(before.toolCalls, after.toolCalls, inputs_known)
    steps = align(before.toolCalls, after.toolCalls, inputs_known) if differ else ()
    then, now = _tool_outcomes(_sides(base)), _tool_outcomes(_sides(cur))
    added, removed = tuple(sorted(set(now) - set(then))), tuple(sorted(set(then) - set(now)))
    failing = tuple(sorted(tool for tool in then.keys() & now.keys() if then[tool] and not now[tool]))
    polarity = polarity_changes(shown.before.keywordPolarity, shown.after.keywordPolarity, after.answer)
    claims = claim_changes(shown.before.claimChecks, shown.after.claimChecks)
    held = {
        BehaviourReason.ANSWER: score < answer_similarity,
        BehaviourReason.KEYWORD_POLARITY: bool(polarity),
        BehaviourReason.CLAIMS: bool(claims),
        BehaviourReason.TOOLS: bool(added or removed or failing),
        BehaviourReason.TOOL_ORDER: differ and tool_order_changed(before.toolCalls, after.toolCalls),
        BehaviourReason.TOOL_INPUTS: inputs_changed(steps),
        BehaviourReason.VERDICT: shown.before.verdict != shown.after.verdict,
        BehaviourReason.GATEKEEPER: before.gatekeeperStatus != after.gatekeeperStatus,
        BehaviourReason.COMPOSER: before.composerMode != after.composerMode,
    }
    reasons = tuple(reason for reason in BehaviourReason if held[reason])
    states = (
        (BehaviourReason.VERDICT, shown.before.verdict, shown.after.verdict),
        (BehaviourReason.GATEKEEPER, before.gatekeeperStatus, after.gatekeeperStatus),
        (BehaviourReason.COMPOSER, before.composerMode, after.composerMode),
    )
    return Behaviour(
        traceChanged=trace_changed,
        answerSimilarity=score,
        toolsAdded=added,
        toolsRemoved=removed,
        toolsNowFailing=failing,
        answerLengths=None if same else (len(before.answer), len(after.answer)),
        # The `toolCalls` item's sequences (eval/README.md, "Items"): when the tools or their outcomes differ, not for
        # inputs alone (those are `toolInputs`, the phrase's first divergence and the page's trajectory).
        callsChanged=(_labels(before.toolCalls), _labels(after.toolCalls)) if differ and calls_differ(before.toolCalls, after.toolCalls, False) else None,
        behaviourChanged=bool(reasons),
        behaviourChanges=reasons,
        steps=steps,
        firstDivergence=first_divergence(steps) if steps else None,
        inputsKnown=inputs_known,
        stateChanges=tuple(state for state in states if held[state[0]]),
        polarityChanges=polarity or (),
        claimChanges=claims or (),
        polarityKnown=polarity is not None,
        claimsKnown=claims is not None,
        answerEdits=answer_edits(before.answer, after.answer) if not same and percent_changed(score) < SMALL_EDIT_PERCENT else (),
    )


def polarity_changes(before: dict[str, str] | None, after: dict[str, str] | None, answer: str) -> tuple[PolarityChange, ...] | None:
    """The expected keywords (of both sides) whose polarity differs, each with the current answer's denial of it;
    None when a side does not record polarity."""
    if before is None or after is None:
        return None
    changed = [(k, before[k], now) for k, now in after.items() if k in before and before[k] != now]
    if not changed:
        return ()
    # The denial quoted with the built-in lists: the reports hold each keyword's polarity, not the suite's lists.
    denials = {r.keyword: r.denial for r in read_keywords(answer, tuple(k for k, _, _ in changed))}
    return tuple(
        PolarityChange(k, then, now, denial.quote if (denial := denials.get(k)) is not None else "") for k, then, now in changed
    )


def claim_changes(
    before: tuple[tuple[str, str | None], ...] | None, after: tuple[tuple[str, str | None], ...] | None
) -> tuple[ClaimChange, ...] | None:
    """The claim checks added, removed or with another verification (by claim id); None when a side does not
    record them."""
    if before is None or after is None:
        return None
    then, now = dict(before), dict(after)
    changes = [
        ClaimChange(claim, then.get(claim), verification, added=claim not in then)
        for claim, verification in now.items()
        if claim not in then or then[claim] != verification
    ]
    changes += [ClaimChange(claim, verification, None, removed=True) for claim, verification in then.items() if claim not in now]
    return tuple(changes)


_BREAKS = re.compile(r"[\s。！？；，、：.!?;,:]")
_CONTEXT = 2  # characters (or one Latin word) of unchanged text an edit is quoted with, on each side
_EDIT_CLIP = 30


def _latin(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _context(text: str, start: int, end: int) -> tuple[int, int]:
    """An edit's span widened by a little unchanged text: up to _CONTEXT CJK characters or one Latin word (across a
    space) on each side, never past a punctuation mark."""
    left = start
    if left > 1 and text[left - 1] == " " and _latin(text[left - 2]):
        left -= 1
    while left > 0 and start - left < _CONTEXT and not _BREAKS.match(text[left - 1]):
        left -= 1
    while left > 0 and _latin(text[left - 1]):
        left -= 1
    right = end
    if right + 1 < len(text) and text[right] == " " and _latin(text[right + 1]):
        right += 1
    while right < len(text) and right - end < _CONTEXT and not _BREAKS.match(text[right]):
        right += 1
    while right < len(text) and _latin(text[right]):
        right += 1
    return left, right


def _clipped(text: str) -> str:
    return text if len(text) <= _EDIT_CLIP else text[: _EDIT_CLIP - 1] + "…"


def answer_edits(before: str, after: str) -> tuple[tuple[str, str], ...]:
    """The places where two nearly equal answers differ, each quoted then → now with a little context (edits closer
    than two characters make one place)."""
    from rapidfuzz.distance import Indel, Postfix, Prefix  # imported when first needed, as in compare/similarity.py

    start = int(Prefix.similarity(before, after))
    end = int(Postfix.similarity(before[start:], after[start:]))
    groups: list[list[int]] = []  # [before start, before end, after start, after end]
    for op in Indel.opcodes(before[start : len(before) - end], after[start : len(after) - end]):
        if op.tag == "equal":
            continue
        b1, b2, a1, a2 = op.src_start + start, op.src_end + start, op.dest_start + start, op.dest_end + start
        if groups and b1 - groups[-1][1] < 2 and a1 - groups[-1][3] < 2:
            groups[-1][1], groups[-1][3] = b2, a2
        else:
            groups.append([b1, b2, a1, a2])
    edits = []
    for b1, b2, a1, a2 in groups:
        (left_b, right_b), (left_a, right_a) = _context(before, b1, b2), _context(after, a1, a2)
        edits.append((_clipped(before[left_b:right_b]), _clipped(after[left_a:right_a])))
    return tuple(edits)


def percent_changed(answer_similarity: float) -> int:
    """How much of an answer changed, in whole percent: round((1 − similarity) × 100), halves rounded up."""
    per_mille = 1000 - round(answer_similarity * 1000)
    return (per_mille + 5) // 10
