"""What a diff item is: one difference between baseline and current, its type and scope, the metrics it names,
and when two values count as the same (eval/README.md, "Comparing with the baseline")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sitegen.defaults import Choice
from sitegen.finite import difference
from sitegen.report.results import ReportFigure
from sitegen.report.status import Status

if TYPE_CHECKING:
    from sitegen.compare.changes import PairedTest
    from sitegen.compare.trajectory import Divergence



class ItemType(StrEnum):
    """A diff item's type, in the Java harness's words (eval/README.md, "Comparing with the baseline"): worse,
    better, or only different."""

    REGRESSION = "REGRESSION"
    IMPROVEMENT = "IMPROVEMENT"
    CHANGED = "CHANGED"


class Scope(StrEnum):
    """What a diff item is about: the whole report, or one case."""

    AGGREGATE = "aggregate"
    CASE = "case"


class Metric(Choice):
    """What a diff item measures, as diff.json keys it, with the words every page, diff.md, the job summary and the
    terminal say it in (eval/README.md, "Comparing with the baseline"). Two kinds of metric name a thing after a
    prefix instead (`evidenceCoverage.<tool>`, `verdictDistribution.<verdict>`: `metric_label`)."""

    # value                  the reader's words
    PASS_RATE = ReportFigure.PASS_RATE.value, "pass rate"
    TRIAL_PASS_RATE = "trialPassRate", "trial pass rate"
    AVERAGE_TOOL_CALLS = ReportFigure.AVERAGE_TOOL_CALLS.value, "average tool calls per case"
    AVERAGE_DURATION = ReportFigure.AVERAGE_DURATION.value, "average duration"
    TOKENS_PER_PASSING_CASE = ReportFigure.TOKENS_PER_PASSING_CASE.value, "tokens per passing case"
    COST_PER_PASSING_CASE = ReportFigure.COST_PER_PASSING_CASE.value, "cost per passing case"
    PRESENT = "present", "in the report"
    PASSED = Status.PASSED.value, Status.PASSED.word  # the result field `passed`, named by its status word
    MATCHED_KEYWORDS = "matchedKeywordCount", "expected keywords found"
    VERDICT = "verdict", "agent's verdict"
    FAILED_CHECKS = "failedChecks", "failed checks"
    TOOL_CALL_COUNT = "toolCallCount", "tool calls"
    DURATION = "durationMs", "duration"
    ANSWER = "answer", "answer"
    TOOL_CALLS = "toolCalls", "tools called (in order)"
    DEFINITION = "definition", "definition"

    label: str


EVIDENCE_COVERAGE = "evidenceCoverage."  # + a required tool's name
VERDICT_DISTRIBUTION = "verdictDistribution."  # + a verdict
RATES = (Metric.PASS_RATE, Metric.TRIAL_PASS_RATE)
DURATIONS = (Metric.AVERAGE_DURATION, Metric.DURATION)
# The aggregate cost signals, each with the per-case field it averages over the cases passing on both sides
# (compare/costs.py); a sentence says one in its metric's words.
COST_METRICS = {
    Metric.AVERAGE_TOOL_CALLS: "toolCallCount",
    Metric.AVERAGE_DURATION: "durationMs",
    Metric.TOKENS_PER_PASSING_CASE: "tokens",
    Metric.COST_PER_PASSING_CASE: "cost",
}
# Metrics with a name after the prefix: the label is a phrase around that name.
_LABEL_PREFIXES = {EVIDENCE_COVERAGE: "required tool {} used", VERDICT_DISTRIBUTION: "cases with the verdict {}"}


def metric_label(metric: str) -> str:
    """The reader's words for a metric ("required tool query_db_status used"); a metric sitegen does not know
    (a newer report's) is shown as its key."""
    try:
        return Metric(metric).label
    except ValueError:
        pass
    for prefix, words in _LABEL_PREFIXES.items():
        if metric.startswith(prefix):
            return words.format(metric[len(prefix):])
    return metric


@dataclass
class DiffItem:
    """One difference between baseline and current, in the field names of the Java `DiagnosisEvalDiffItem`; its
    `message` is made from these fields by compare/wording.py (`item_message`), and diff.json's shape by
    compare/diff_json.py."""

    type: ItemType
    scope: Scope
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


def direction(change: int | float, higher_is_worse: bool) -> ItemType:
    """REGRESSION or IMPROVEMENT for a value that moved by `change`."""
    return ItemType.REGRESSION if (change > 0) == higher_is_worse else ItemType.IMPROVEMENT
