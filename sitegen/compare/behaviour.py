"""What the agent did differently in a case: its trace, answer and tool calls then and now, from the evidence the
two reports record (eval/README.md, "Comparing with the baseline", "What the agent did differently").

Only a case whose trace changed (the two `traceDigest`s differ, or one is unknown) is compared: a build compares
every case, and most traces are unchanged.
"""

from __future__ import annotations

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
from sitegen.defaults import DEFAULT_ANSWER_SIMILARITY
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.results import CaseResult, TrialResult

# Why a case behaves differently (`behaviourChanges`), in this fixed order (eval/README.md, "Behaviour that changed").
ANSWER, TOOLS, TOOL_ORDER, TOOL_INPUTS = "answer", "tools", "toolOrder", "toolInputs"
VERDICT, GATEKEEPER, COMPOSER = "verdict", "gatekeeperStatus", "composerMode"
BEHAVIOUR_REASONS = (ANSWER, TOOLS, TOOL_ORDER, TOOL_INPUTS, VERDICT, GATEKEEPER, COMPOSER)


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
    behaviourChanged: bool | None = None  # some reason of BEHAVIOUR_REASONS holds; None: not known
    behaviourChanges: tuple[str, ...] = ()  # the reasons, in BEHAVIOUR_REASONS order
    steps: tuple[Step, ...] = ()  # the two trajectories aligned (compare/trajectory.py), when the calls differ
    firstDivergence: Divergence | None = None  # the first step where they differ
    inputsKnown: bool = True  # False: a side's report does not record the calls' inputs
    # The recorded states that differ (VERDICT, GATEKEEPER, COMPOSER), each with its value then and now.
    stateChanges: tuple[tuple[str, str | None, str | None], ...] = ()

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
    held = {
        ANSWER: score < answer_similarity,
        TOOLS: bool(added or removed or failing),
        TOOL_ORDER: differ and tool_order_changed(before.toolCalls, after.toolCalls),
        TOOL_INPUTS: inputs_changed(steps),
        VERDICT: shown.before.verdict != shown.after.verdict,
        GATEKEEPER: before.gatekeeperStatus != after.gatekeeperStatus,
        COMPOSER: before.composerMode != after.composerMode,
    }
    reasons = tuple(reason for reason in BEHAVIOUR_REASONS if held[reason])
    states = (
        (VERDICT, shown.before.verdict, shown.after.verdict),
        (GATEKEEPER, before.gatekeeperStatus, after.gatekeeperStatus),
        (COMPOSER, before.composerMode, after.composerMode),
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
    )


def percent_changed(answer_similarity: float) -> int:
    """How much of an answer changed, in whole percent: round((1 − similarity) × 100), halves rounded up."""
    per_mille = 1000 - round(answer_similarity * 1000)
    return (per_mille + 5) // 10
