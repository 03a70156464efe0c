"""What the agent did differently in a case: its trace, answer and tool calls then and now, from the evidence the
two reports record (eval/README.md, "Comparing with the baseline", "What the agent did differently").

Only a case whose trace changed (the two `traceDigest`s differ, or one is unknown) is compared: a build compares
every case, and most traces are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sitegen.compare.similarity import similarity
from sitegen.report.evidence import Evidence, ToolCall
from sitegen.report.results import CaseResult

# What the agent decided, recorded in a trace: its verdict, the gatekeeper's status, the composer's mode.
VERDICT, GATEKEEPER, COMPOSER = "verdict", "gatekeeperStatus", "composerMode"


@dataclass(frozen=True)
class Behaviour:
    """How a case's agent behaviour changed, as a `caseChanges` entry records it (None: not known)."""

    traceChanged: bool | None = None  # False: both traces have the same digest; None: a side records none
    answerSimilarity: float | None = None  # textdiff.similarity of the two answers; None: a side records none
    toolsAdded: tuple[str, ...] = ()  # tools called now and not in the baseline, sorted
    toolsRemoved: tuple[str, ...] = ()  # tools called in the baseline and not now, sorted
    toolsNowFailing: tuple[str, ...] = ()  # tools that succeeded in the baseline and now only fail, sorted
    answerLengths: tuple[int, int] | None = None  # the answers' lengths in characters when they differ
    callsChanged: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # both call sequences when they differ
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
        }


UNKNOWN = Behaviour()
UNCHANGED = Behaviour(traceChanged=False, answerSimilarity=1.0)


def records_evidence(report_results: Iterable[CaseResult]) -> bool:
    """Whether a report records what the agent did (an older sitegen's or the Java harness's does not)."""
    return any(result.evidence is not None for result in report_results)


def shown_evidence(base: CaseResult, cur: CaseResult) -> tuple[Evidence | None, Evidence | None]:
    """The two traces a comparison shows: for a case with trials that regressed, the baseline's first passing
    trial and the first failing trial now; otherwise each side's first trial (the result's own evidence)."""
    if base.trialResults and cur.trialResults and base.passed and not cur.passed:
        before = next((trial.evidence for trial in base.trialResults if trial.passed), base.evidence)
        after = next((trial.evidence for trial in cur.trialResults if not trial.passed), cur.evidence)
        return before, after
    return base.evidence, cur.evidence


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


def compare_behaviour(base: CaseResult | None, cur: CaseResult | None) -> Behaviour:
    """The change of what the agent did between a case's baseline result and its current one."""
    if base is None or cur is None or base.evidence is None or cur.evidence is None:
        return UNKNOWN
    digests = base.evidence.traceDigest, cur.evidence.traceDigest
    if digests[0] is not None and digests[0] == digests[1]:
        return UNCHANGED
    trace_changed = None if None in digests else True
    before, after = shown_evidence(base, cur)
    if before is None or after is None or before.answer is None or after.answer is None:
        return Behaviour(trace_changed)  # a trace that could not be read: what the agent did there is not known
    same = before.answer == after.answer
    score = 1.0 if same else similarity(before.answer, after.answer)
    lengths = None if same else (len(before.answer), len(after.answer))
    calls = None if before.toolCalls == after.toolCalls else (_labels(before.toolCalls), _labels(after.toolCalls))
    then, now = _tool_outcomes(_sides(base)), _tool_outcomes(_sides(cur))
    states = (
        (VERDICT, base.verdict, cur.verdict),
        (GATEKEEPER, before.gatekeeperStatus, after.gatekeeperStatus),
        (COMPOSER, before.composerMode, after.composerMode),
    )
    return Behaviour(
        traceChanged=trace_changed,
        answerSimilarity=score,
        toolsAdded=tuple(sorted(set(now) - set(then))),
        toolsRemoved=tuple(sorted(set(then) - set(now))),
        toolsNowFailing=tuple(sorted(tool for tool in then.keys() & now.keys() if then[tool] and not now[tool])),
        answerLengths=lengths,
        callsChanged=calls,
        stateChanges=tuple(state for state in states if state[1] != state[2]),
    )


def percent_changed(answer_similarity: float) -> int:
    """How much of an answer changed, in whole percent: round((1 − similarity) × 100), halves rounded up."""
    per_mille = 1000 - round(answer_similarity * 1000)
    return (per_mille + 5) // 10
