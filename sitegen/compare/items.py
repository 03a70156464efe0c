"""What a diff item is: one difference between baseline and current, its type and scope, the metrics it names,
and when two values count as the same (eval/README.md, "Comparing with the baseline")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sitegen.finite import difference

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
# The aggregate cost signals, each with its label and the per-case field it averages (compare/costs.py).
COST_METRICS = {
    AVERAGE_TOOL_CALLS: ("Average tool calls per case", "toolCallCount"),
    AVERAGE_DURATION: ("Average duration", "durationMs"),
}


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
    # The `passRate` item's McNemar test of the single-trial cases (diff.json has it once, as `pairedTest`), read
    # at `alpha`.
    pairedTest: PairedTest | None = None


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
