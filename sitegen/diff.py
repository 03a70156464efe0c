"""Comparing a current report with a baseline: categorised diff items (CONTRACT §3), no formatting.

Decisions where the contract is silent (also in docs and tests):
- Numbers are equal when they agree to 1e-9 relative (1e-12 absolute), so a float written by another
  program (the Java harness) never yields a spurious item; `delta` is still plain current − baseline.
- `cost_tolerance` T applies to the aggregate cost signals only (averageToolCallCount, averageDurationMs):
  a change with |delta| ≤ T × |baseline| is dropped entirely (it is noise, not a change). Per-case
  toolCallCount / durationMs stay CHANGED on any change (informational, they never gate).
- A null on one side of a cost signal or a duration (and a number on the other) is CHANGED, delta null.
- A tool in a case's evidenceCoverage on one side only is CHANGED (the case's requirements changed, not
  the agent's behaviour), with null for the side that lacks it.
- failedChecks compare as multisets: the same checks reported in another order are no change.
- A baseline case absent now gives only its `present` REGRESSION; a new case only its `present` CHANGED.
- `definition` (both sides carry a caseDigest and they differ) is CHANGED and comes last among the case's
  items; the case's other items are still reported, and `changedDefinitions` lists such cases.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sitegen.errors import UsageError
from sitegen.formatting import number, percent
from sitegen.jsontext import dumps_json
from sitegen.report import CaseResult, Report

DIFF_FORMAT_VERSION = 1

REGRESSION = "REGRESSION"
IMPROVEMENT = "IMPROVEMENT"
CHANGED = "CHANGED"
AGGREGATE = "aggregate"
CASE = "case"


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

    def to_json(self) -> dict[str, Any]:
        """The item as a JSON object with the contract's field order."""
        return {
            "type": self.type,
            "scope": self.scope,
            "caseId": self.caseId,
            "metric": self.metric,
            "baselineValue": self.baselineValue,
            "currentValue": self.currentValue,
            "delta": self.delta,
            "message": self.message,
        }


@dataclass
class DiffReport:
    """The whole comparison: both sides' headline figures, the counts and the ordered items."""

    baselineTotalCases: int
    currentTotalCases: int
    baselinePassedCases: int
    currentPassedCases: int
    baselinePassRate: float
    currentPassRate: float
    regressionCount: int
    improvementCount: int
    changedCount: int
    hasRegression: bool
    items: list[DiffItem]
    changedDefinitions: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The diff as a JSON object (CONTRACT §3, plus formatVersion and changedDefinitions)."""
        return {
            "formatVersion": DIFF_FORMAT_VERSION,
            "baselineTotalCases": self.baselineTotalCases,
            "currentTotalCases": self.currentTotalCases,
            "baselinePassedCases": self.baselinePassedCases,
            "currentPassedCases": self.currentPassedCases,
            "baselinePassRate": self.baselinePassRate,
            "currentPassRate": self.currentPassRate,
            "regressionCount": self.regressionCount,
            "improvementCount": self.improvementCount,
            "changedCount": self.changedCount,
            "hasRegression": self.hasRegression,
            "changedDefinitions": list(self.changedDefinitions),
            "items": [item.to_json() for item in self.items],
        }

    def items_for_case(self, case_id: str) -> list[DiffItem]:
        """The items about one case, in diff order (indexed once, so a site of N pages stays linear)."""
        index = self.__dict__.get("_by_case")
        if index is None or index[0] != len(self.items):
            grouped: dict[str, list[DiffItem]] = {}
            for item in self.items:
                if item.caseId is not None:
                    grouped.setdefault(item.caseId, []).append(item)
            index = (len(self.items), grouped)
            self.__dict__["_by_case"] = index
        return list(index[1].get(case_id, []))

    @property
    def regressions(self) -> list[DiffItem]:
        """The REGRESSION items."""
        return [item for item in self.items if item.type == REGRESSION]

    @property
    def improvements(self) -> list[DiffItem]:
        """The IMPROVEMENT items."""
        return [item for item in self.items if item.type == IMPROVEMENT]

    @property
    def changes(self) -> list[DiffItem]:
        """The CHANGED items."""
        return [item for item in self.items if item.type == CHANGED]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _delta(baseline: Any, current: Any) -> int | float | None:
    return current - baseline if _is_number(baseline) and _is_number(current) else None


def _check_codes(checks: Any) -> list[str]:
    return list(dict.fromkeys(str(check).split(":", 1)[0].strip() for check in checks or []))


_DURATIONS = ("averageDurationMs", "durationMs")
_WORDS: dict[str, dict[Any, str]] = {
    "present": {True: "present", False: "absent"},
    "passed": {True: "passed", False: "failed"},
    "evidenceCoverage.": {True: "covered", False: "not covered", None: "not required"},
}


def describe_value(metric: str, value: Any) -> str:
    """A metric's value as people read it ("covered", "66.7%", "1,200 ms"): for messages and tables."""
    for prefix, words in _WORDS.items():
        if metric.startswith(prefix) and value in words:
            return words[value]
    if value is None:
        return "unknown" if metric in _DURATIONS or metric == "averageToolCallCount" else "none"
    if metric == "passRate":
        return percent(value)
    if metric in _DURATIONS:
        return f"{number(value)} ms"
    if metric == "averageToolCallCount":
        return number(value, 2)
    if metric == "failedChecks":
        return ", ".join(_check_codes(value)) or "none"
    return number(value) if _is_number(value) else str(value)


def describe_delta(metric: str, delta: int | float | None) -> str:
    """A delta with its sign and unit ("-33.3 points", "+300 ms", "+1"); empty when there is none."""
    if delta is None:
        return ""
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    if metric == "passRate":
        return f"{sign}{abs(delta) * 100:.1f} points"
    return sign + describe_value(metric, abs(delta))


def _direction(delta: int | float, higher_is_worse: bool) -> str:
    return REGRESSION if (delta > 0) == higher_is_worse else IMPROVEMENT


class _Collector:
    """Builds the item list so every item and message is made the same way."""

    def __init__(self) -> None:
        self.items: list[DiffItem] = []

    def add(self, kind: str, case_id: str | None, metric: str, before: Any, after: Any, sentence: str) -> None:
        """Add an item; its message is `sentence: before → after (delta).`."""
        delta = _delta(before, after)
        change = describe_delta(metric, delta)
        message = f"{sentence}: {describe_value(metric, before)} → {describe_value(metric, after)}"
        message += f" ({change})." if change else "."
        scope = AGGREGATE if case_id is None else CASE
        self.items.append(DiffItem(kind, scope, case_id, metric, before, after, delta, message))


_COST_LABELS = {"averageToolCallCount": "Average tool calls per case", "averageDurationMs": "Average duration"}


def _aggregate_items(out: _Collector, baseline: Report, current: Report, tolerance: float) -> None:
    before, after = baseline.passRate, current.passRate
    if not _same(before, after):
        fell = after < before
        kind, sentence = (REGRESSION, "Pass rate fell") if fell else (IMPROVEMENT, "Pass rate rose")
        out.add(kind, None, "passRate", before, after, sentence)
    for metric, label in _COST_LABELS.items():
        before, after = getattr(baseline, metric), getattr(current, metric)
        if _same(before, after):
            continue
        if before is None or after is None:
            sentence = f"{label} {'is no longer' if after is None else 'is now'} measured"
            out.add(CHANGED, None, metric, before, after, sentence)
            continue
        delta = after - before
        allowed = tolerance * abs(before)
        if abs(delta) <= allowed or math.isclose(abs(delta), allowed, rel_tol=1e-9):
            continue
        kind = _direction(delta, higher_is_worse=True)
        out.add(kind, None, metric, before, after, f"{label} {'rose (a cost regression)' if delta > 0 else 'fell'}")
    for verdict in sorted(set(baseline.verdictDistribution) | set(current.verdictDistribution)):
        before = baseline.verdictDistribution.get(verdict, 0)
        after = current.verdictDistribution.get(verdict, 0)
        if before != after:
            out.add(CHANGED, None, f"verdictDistribution.{verdict}", before, after, f"Cases with verdict {verdict}")


def definition_changed(base: CaseResult, cur: CaseResult) -> bool:
    """Whether both results carry a case digest and the digests differ (the case was edited)."""
    return bool(base.caseDigest and cur.caseDigest and base.caseDigest != cur.caseDigest)


def _case_items(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult) -> None:
    if base.passed != cur.passed:
        kind = IMPROVEMENT if cur.passed else REGRESSION
        sentence = f"Case {case_id} now {'passes' if cur.passed else 'fails'}"
        out.add(kind, case_id, "passed", base.passed, cur.passed, sentence)
    for tool in sorted(set(base.evidenceCoverage) | set(cur.evidenceCoverage)):
        before, after = base.evidenceCoverage.get(tool), cur.evidenceCoverage.get(tool)
        metric = f"evidenceCoverage.{tool}"
        if before == after:
            continue
        if before is None or after is None:
            required = "newly required" if before is None else "no longer required"
            out.add(CHANGED, case_id, metric, before, after, f"Case {case_id} evidence tool {tool} is {required}")
        elif after:
            out.add(IMPROVEMENT, case_id, metric, before, after, f"Case {case_id} now has evidence from {tool}")
        else:
            out.add(REGRESSION, case_id, metric, before, after, f"Case {case_id} lost evidence from {tool}")
    before, after = base.matchedKeywordCount, cur.matchedKeywordCount
    if before != after:
        kind = _direction(after - before, higher_is_worse=False)
        word = "fewer" if after < before else "more"
        out.add(kind, case_id, "matchedKeywordCount", before, after, f"Case {case_id} matched {word} expected keywords")
    if base.verdict != cur.verdict:
        out.add(CHANGED, case_id, "verdict", base.verdict, cur.verdict, f"Case {case_id} verdict changed")
    if sorted(base.failedChecks) != sorted(cur.failedChecks):
        same_codes = set(_check_codes(base.failedChecks)) == set(_check_codes(cur.failedChecks))
        sentence = f"Case {case_id} {'failure details' if same_codes else 'failed checks'} changed"
        out.add(CHANGED, case_id, "failedChecks", list(base.failedChecks), list(cur.failedChecks), sentence)
    if base.toolCallCount != cur.toolCallCount:
        before, after = base.toolCallCount, cur.toolCallCount
        out.add(CHANGED, case_id, "toolCallCount", before, after, f"Case {case_id} tool call count changed")
    if not _same(base.durationMs, cur.durationMs):
        out.add(CHANGED, case_id, "durationMs", base.durationMs, cur.durationMs, f"Case {case_id} duration changed")
    if definition_changed(base, cur):
        sentence = f"Case {case_id} definition changed since the baseline, so its results are not comparable"
        out.add(CHANGED, case_id, "definition", base.caseDigest, cur.caseDigest, sentence)


def _by_id(report: Report) -> dict[str, CaseResult]:
    return {result.caseId: result for result in report.results}


def _all_case_items(out: _Collector, baseline: Report, current: Report) -> Iterator[str]:
    """Add every case's items in case-id order; yield the ids whose definition changed."""
    before, after = _by_id(baseline), _by_id(current)
    for case_id in sorted(set(before) | set(after)):
        if case_id not in after:
            out.add(REGRESSION, case_id, "present", True, False, f"Case {case_id} is missing from the current report")
            continue
        _current_case_items(out, case_id, before.get(case_id), after[case_id])
        if case_id in before and definition_changed(before[case_id], after[case_id]):
            yield case_id


def _current_case_items(out: _Collector, case_id: str, base: CaseResult | None, cur: CaseResult) -> None:
    if base is None:
        out.add(CHANGED, case_id, "present", False, True, f"Case {case_id} is new (not in the baseline)")
    elif base != cur:  # most cases of a diff are unchanged: one comparison of every field says so
        _case_items(out, case_id, base, cur)


def case_items(case_id: str, base: CaseResult | None, cur: CaseResult) -> list[DiffItem]:
    """The diff items of one current case against its baseline entry (None: not in the baseline), as in the full diff."""
    out = _Collector()
    _current_case_items(out, case_id, base, cur)
    return out.items


def compare_reports(baseline: Report, current: Report, *, cost_tolerance: float = 0.0) -> DiffReport:
    """Compare two reports by case id: aggregate items first, then per case (CONTRACT §3 metric table)."""
    if not (math.isfinite(cost_tolerance) and cost_tolerance >= 0):
        raise UsageError(f"cost tolerance must be a finite number ≥ 0 (a ratio such as 0.1), got {cost_tolerance}")
    out = _Collector()
    _aggregate_items(out, baseline, current, cost_tolerance)
    changed_definitions = list(_all_case_items(out, baseline, current))
    regressions = sum(1 for item in out.items if item.type == REGRESSION)
    improvements = sum(1 for item in out.items if item.type == IMPROVEMENT)
    return DiffReport(
        baselineTotalCases=baseline.totalCases,
        currentTotalCases=current.totalCases,
        baselinePassedCases=baseline.passedCases,
        currentPassedCases=current.passedCases,
        baselinePassRate=baseline.passRate,
        currentPassRate=current.passRate,
        regressionCount=regressions,
        improvementCount=improvements,
        changedCount=len(out.items) - regressions - improvements,
        hasRegression=regressions > 0,
        items=out.items,
        changedDefinitions=changed_definitions,
    )


def diff_json(diff: DiffReport) -> str:
    """The diff's JSON text; byte-identical for the same reports."""
    return dumps_json(diff.to_json())
