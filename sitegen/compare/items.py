"""What a diff item is: one difference between baseline and current, its type and scope, the metrics it names,
and when two values count as the same (eval/README.md, "Comparing with the baseline")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sitegen.finite import difference
from sitegen.report.status import Status

if TYPE_CHECKING:
    from sitegen.compare.changes import PairedTest
    from sitegen.compare.trajectory import Divergence

REGRESSION = "REGRESSION"
IMPROVEMENT = "IMPROVEMENT"
CHANGED = "CHANGED"
AGGREGATE = "aggregate"
CASE = "case"

PASS_RATE = "passRate"
TRIAL_PASS_RATE = "trialPassRate"
RATES = (PASS_RATE, TRIAL_PASS_RATE)
AVERAGE_TOOL_CALLS = "averageToolCallCount"
AVERAGE_DURATION = "averageDurationMs"
DURATIONS = (AVERAGE_DURATION, "durationMs")
TOKENS_PER_PASSING_CASE = "tokensPerPassingCase"
COST_PER_PASSING_CASE = "costPerPassingCase"
# The aggregate cost signals, each with its label and the per-case field it averages (compare/costs.py).
COST_METRICS = {
    AVERAGE_TOOL_CALLS: ("Average tool calls per case", "toolCallCount"),
    AVERAGE_DURATION: ("Average duration", "durationMs"),
    TOKENS_PER_PASSING_CASE: ("Tokens per passing case", "tokens"),
    COST_PER_PASSING_CASE: ("Cost per passing case", "cost"),
}


# Each metric as a reader names it, in one place: every page, diff.md, the job summary and the terminal say these
# words, and JSON keeps the metric's key (eval/README.md, "Comparing with the baseline").
METRIC_LABELS = {
    PASS_RATE: "pass rate",
    TRIAL_PASS_RATE: "trial pass rate",
    AVERAGE_TOOL_CALLS: "average tool calls per case",
    AVERAGE_DURATION: "average duration",
    TOKENS_PER_PASSING_CASE: "tokens per passing case",
    COST_PER_PASSING_CASE: "cost per passing case",
    "present": "in the report",
    Status.PASSED.value: Status.PASSED.word,  # the result field `passed`, named by its status word
    "matchedKeywordCount": "expected keywords found",
    "verdict": "agent's verdict",
    "failedChecks": "failed checks",
    "toolCallCount": "tool calls",
    "durationMs": "duration",
    "answer": "answer",
    "toolCalls": "tools called (in order)",
}
# Metrics with a name after the prefix: the label is a phrase around that name.
_LABEL_PREFIXES = {
    "evidenceCoverage.": "required tool {} used",
    "verdictDistribution.": "cases with the verdict {}",
}


def metric_label(metric: str) -> str:
    """The reader's words for a metric ("required tool query_db_status used"); a metric sitegen does not know
    (a newer report's) is shown as its key."""
    label = METRIC_LABELS.get(metric)
    if label is not None:
        return label
    for prefix, words in _LABEL_PREFIXES.items():
        if metric.startswith(prefix):
            return words.format(metric[len(prefix):])
    return metric


@dataclass
class DiffItem:
    """One difference between baseline and current, in the field names of the Java `DiagnosisEvalDiffItem`; its
    `message` is made from these fields by compare/wording.py (`item_message`), and diff.json's shape by
    compare/diff_json.py."""

    type: str
    scope: str
    caseId: str | None
    metric: str
    baselineValue: Any
    currentValue: Any
    delta: int | float | None
    # `passed` items: the failed checks new against the baseline (a REGRESSION) or resolved (an IMPROVEMENT).
    checks: list[str] | None = None
    # Cost items: the averages over the cases that have the value in both reports (what decides the type).
    pairedCaseCount: int | None = None
    pairedBaselineValue: float | None = None
    pairedCurrentValue: float | None = None
    # `trialPassRate` items: the one-sided Fisher exact p-value of the change and the level it was judged at.
    pValue: float | None = None
    alpha: float | None = None
    # `answer` items: how alike the two answers are (compare/similarity.py).
    similarity: float | None = None
    # `toolCalls` items: the first step where the two aligned trajectories differ (diff.json writes its `to_json`).
    firstDivergence: Divergence | None = None
    # What the message says beyond the fields above (not in diff.json): the case's status now (`passed` items);
    # the passed and run trials in the baseline and now (`trialPassRate` items, and a `passed` item within noise);
    # whether some case has the value in one report only, and the tolerance the paired averages were judged by
    # (cost items).
    currentStatus: str | None = None
    trialCounts: tuple[tuple[int, int], tuple[int, int]] | None = None
    mixChanged: bool | None = None
    costTolerance: float | None = None
    pairedLeft: tuple[str, ...] = ()  # cost items: the cases in both reports outside the pairs (compare/costs.py)
    # The `passRate` item's McNemar test of the single-trial cases (diff.json has it once, as `pairedTest`), read
    # at `alpha`.
    pairedTest: PairedTest | None = None
    # The `passRate` item: the cases it leaves out, not run on either side (diff.json has them once, as
    # `leftOutCases`).
    leftOutCases: tuple[str, ...] = ()


def is_number(value: Any) -> bool:
    """Whether a value is a JSON number (a boolean is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(a: Any, b: Any) -> bool:
    """Whether two values are no change: numbers equal to 1e-9 relative (1e-12 absolute), anything else equal."""
    if is_number(a) and is_number(b):
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def delta(baseline: Any, current: Any) -> int | float | None:
    """current − baseline when both are numbers, else None."""
    return difference(current, baseline) if is_number(baseline) and is_number(current) else None


def direction(change: int | float, higher_is_worse: bool) -> str:
    """REGRESSION or IMPROVEMENT for a value that moved by `change`."""
    return REGRESSION if (change > 0) == higher_is_worse else IMPROVEMENT
