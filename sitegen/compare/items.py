"""What a diff item is: one difference between baseline and current, its type and scope, the metrics it names,
and when two values count as the same (eval/README.md, "Comparing with the baseline")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sitegen.finite import difference

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
    """One difference between baseline and current, in the field names of the Java `DiagnosisEvalDiffItem`."""

    type: str
    scope: str
    caseId: str | None
    metric: str
    baselineValue: Any
    currentValue: Any
    delta: int | float | None
    message: str
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
    # `toolCalls` items: the first step where the two aligned trajectories differ (compare/trajectory.py).
    firstDivergence: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The item as a JSON object with the contract's field order (extra fields only where they apply)."""
        data: dict[str, Any] = {
            "type": self.type,
            "scope": self.scope,
            "caseId": self.caseId,
            "metric": self.metric,
            "baselineValue": self.baselineValue,
            "currentValue": self.currentValue,
            "delta": self.delta,
            "message": self.message,
        }
        if self.checks is not None:
            data["checks"] = list(self.checks)
        if self.pairedCaseCount is not None:
            data["pairedCaseCount"] = self.pairedCaseCount
            data["pairedBaselineValue"] = self.pairedBaselineValue
            data["pairedCurrentValue"] = self.pairedCurrentValue
        if self.pValue is not None:
            data["pValue"] = self.pValue
            data["alpha"] = self.alpha
        if self.similarity is not None:
            data["similarity"] = self.similarity
        if self.firstDivergence is not None:
            data["firstDivergence"] = dict(self.firstDivergence)
        return data


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
