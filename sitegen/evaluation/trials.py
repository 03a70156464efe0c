"""A case with several trials: its result made of its trials' results by the suite's trial policy.

What each field of the case's result takes from its trials is fixed in eval/README.md ("Trials"): the case
passes by the policy (`all`: every trial passed, pass^k; `majority`: more than half; `any`: at least one,
pass@k); `failedChecks` lists each distinct failed check once, with how many trials failed it; `verdict` is
the most common (ties: the earliest trial's); `matchedKeywordCount` the lowest; a tool counts as evidence only
when it did in every trial; `toolCallCount` and `durationMs` are means, and so are `tokens` and `cost` when every trial records them; the evidence (answer, tool calls, gatekeeper status, composer mode)
is the first trial's, with a `traceDigest` over every trial's; `keywordPolarity` and `claimChecks` the first
trial's (each trial keeps its own).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from sitegen.checks import with_trial_count
from sitegen.defaults import TrialPolicy
from sitegen.finite import finite_mean
from sitegen.report.evidence import UNREAD, trials_digest
from sitegen.report.results import CaseResult, TrialResult
from sitegen.report.status import Status
from sitegen.suite.models import TokenUsage


def trial_checks(results: Sequence[CaseResult]) -> list[str]:
    """Each distinct failed check of the trials once, in order of first appearance; with K > 1 trials suffixed
    ` (in N of K trials)`."""
    counts: Counter[str] = Counter()
    for result in results:
        counts.update(set(result.failedChecks))
    ordered = dict.fromkeys(check for result in results for check in result.failedChecks)
    if len(results) <= 1:
        return list(ordered)
    return [with_trial_count(check, counts[check], len(results)) for check in ordered]


def most_common_verdict(verdicts: Sequence[str | None]) -> str | None:
    """The verdict most trials gave (a missing one counts as one value); a tie goes to the earliest trial's."""
    counts = Counter(verdicts)
    best = max(counts.values(), default=0)
    return next((verdict for verdict in verdicts if counts[verdict] == best), None)


def _mean(values: Sequence[int | float]) -> int | float:
    """The mean, as an integer when it is one (so that equal trials report as a single trace would)."""
    mean = finite_mean(values)
    return int(mean) if float(mean).is_integer() else mean


def _mean_tokens(usages: Sequence[TokenUsage | None]) -> TokenUsage | None:
    """The trials' mean tokens, each count over the trials; None unless every trial records tokens (a mean over
    some would not be a run's cost)."""
    if not usages or any(usage is None for usage in usages):
        return None
    recorded = [usage for usage in usages if usage is not None]

    def mean(values: list[int | float | None]) -> int | float | None:
        return None if any(value is None for value in values) else _mean([value for value in values if value is not None])

    return TokenUsage(*(mean([getattr(usage, part) for usage in recorded]) for part in ("input", "output", "cacheRead")))


def combine_trials(trials: Sequence[tuple[str, CaseResult]], policy: TrialPolicy) -> CaseResult:
    """The case's result from its trials' results (each made by the same rules), passing by `policy`."""
    assert trials, "a folder without trials is a fixture problem, not an empty list"
    results = [result for _, result in trials]
    first = results[0]
    passed = sum(1 for result in results if result.passed)
    passes = policy.passes(passed, len(results))
    read = [result for result in results if result.traceLoaded]
    # Not run only when no trial could be read; an unreadable trial among readable ones is a failed trial.
    status = Status.PASSED if passes else Status.FAILED if read else Status.NOT_RUN
    durations = [result.durationMs for result in read if result.durationMs is not None]
    tools = list(dict.fromkeys(tool for result in results for tool in result.evidenceCoverage))
    evidence = [result.evidence or UNREAD for result in results]
    digest = trials_digest([(name, trial.traceDigest) for (name, _), trial in zip(trials, evidence)])
    return CaseResult(
        caseId=first.caseId,
        title=first.title,
        status=status,
        passed=passes,
        failedChecks=trial_checks(results),
        verdict=most_common_verdict([result.verdict for result in results]),
        matchedKeywordCount=min(result.matchedKeywordCount for result in results),
        requiredKeywordCount=first.requiredKeywordCount,
        evidenceCoverage={tool: all(result.evidenceCoverage.get(tool, False) for result in results) for tool in tools},
        toolCallCount=_mean([result.toolCallCount for result in read]) if read else 0,
        durationMs=_mean(durations) if durations else None,
        tags=list(first.tags),
        tokens=_mean_tokens([result.tokens for result in results]),
        cost=finite_mean(costs) if (costs := [r.cost for r in results if r.cost is not None]) and len(costs) == len(results) else None,
        caseDigest=first.caseDigest,
        traceLoaded=bool(read),
        evidence=dataclasses.replace(evidence[0], traceDigest=digest),
        keywordPolarity=first.keywordPolarity,
        claimChecks=first.claimChecks,
        trialResults=[
            TrialResult(
                fixture=name,
                status=Status.FAILED if read and result.status is Status.NOT_RUN else result.status,
                failedChecks=list(result.failedChecks),
                verdict=result.verdict,
                matchedKeywordCount=result.matchedKeywordCount,
                toolCallCount=result.toolCallCount,
                durationMs=result.durationMs,
                tokens=result.tokens,
                cost=result.cost,
                evidence=result.evidence,
                keywordPolarity=result.keywordPolarity,
                claimChecks=result.claimChecks,
            )
            for name, result in trials
        ],
    )

