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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sitegen.errors import UsageError
from sitegen.mdtext import number, percent
from sitegen.report import CaseResult, Report, dumps_json

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
        """The items about one case, in diff order."""
        return [item for item in self.items if item.caseId == case_id]

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


def _signed(value: int | float, render: Callable[[float | int], str]) -> str:
    return ("+" if value > 0 else "-") + render(abs(value))


def _ms(value: Any) -> str:
    return "unknown" if value is None else f"{number(value)} ms"


def _direction(delta: int | float, higher_is_worse: bool) -> str:
    return REGRESSION if (delta > 0) == higher_is_worse else IMPROVEMENT


class _Collector:
    """Builds the item list so every item is made the same way."""

    def __init__(self) -> None:
        self.items: list[DiffItem] = []

    def add(self, kind: str, case_id: str | None, metric: str, before: Any, after: Any, message: str) -> None:
        scope = AGGREGATE if case_id is None else CASE
        self.items.append(DiffItem(kind, scope, case_id, metric, before, after, _delta(before, after), message))


def _aggregate_items(out: _Collector, baseline: Report, current: Report, tolerance: float) -> None:
    before, after = baseline.passRate, current.passRate
    if not _same(before, after):
        points = (after - before) * 100
        word = "fell" if after < before else "rose"
        out.add(
            REGRESSION if after < before else IMPROVEMENT,
            None,
            "passRate",
            before,
            after,
            f"Pass rate {word}: {percent(before)} → {percent(after)} ({_signed(points, '{:.1f}'.format)} points).",
        )
    costs: list[tuple[str, str, Callable[[Any], str]]] = [
        ("averageToolCallCount", "Average tool calls per case", lambda v: "unknown" if v is None else number(v, 2)),
        ("averageDurationMs", "Average duration", _ms),
    ]
    for metric, label, render in costs:
        before, after = getattr(baseline, metric), getattr(current, metric)
        if before is None and after is None or _same(before, after):
            continue
        if before is None or after is None:
            state = "no longer measured" if after is None else "now measured"
            out.add(CHANGED, None, metric, before, after, f"{label} {state}: {render(before)} → {render(after)}.")
            continue
        delta = after - before
        if abs(delta) <= tolerance * abs(before):
            continue
        kind = _direction(delta, higher_is_worse=True)
        note = "a cost regression" if kind == REGRESSION else "cheaper"
        word = "rose" if delta > 0 else "fell"
        message = f"{label} {word}: {render(before)} → {render(after)} ({_signed(delta, render)}, {note})."
        out.add(kind, None, metric, before, after, message)
    verdicts = sorted(set(baseline.verdictDistribution) | set(current.verdictDistribution))
    for verdict in verdicts:
        before = baseline.verdictDistribution.get(verdict, 0)
        after = current.verdictDistribution.get(verdict, 0)
        if before != after:
            out.add(
                CHANGED,
                None,
                f"verdictDistribution.{verdict}",
                before,
                after,
                f"Cases with verdict {verdict}: {before} → {after} ({_signed(after - before, str)}).",
            )


def _check_codes(checks: list[str]) -> list[str]:
    return list(dict.fromkeys(check.split(":", 1)[0].strip() for check in checks))


def _failed_checks_message(case_id: str, before: list[str], after: list[str]) -> str:
    added = [c for c in _check_codes(after) if c not in _check_codes(before)]
    removed = [c for c in _check_codes(before) if c not in _check_codes(after)]
    parts = []
    if added:
        parts.append("now also fails " + ", ".join(added))
    if removed:
        parts.append("no longer fails " + ", ".join(removed))
    detail = "; ".join(parts) if parts else "same checks, different details"
    return f"Case {case_id}: failed checks changed, {len(before)} → {len(after)} ({detail})."


def _definition_changed(base: CaseResult, cur: CaseResult) -> bool:
    return bool(base.caseDigest and cur.caseDigest and base.caseDigest != cur.caseDigest)


def _case_items(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult) -> None:
    if base.passed != cur.passed:
        if cur.passed:
            out.add(IMPROVEMENT, case_id, "passed", False, True, f"Case {case_id} now passes: failed → passed.")
        else:
            out.add(REGRESSION, case_id, "passed", True, False, f"Case {case_id} now fails: passed → failed.")
    for tool in sorted(set(base.evidenceCoverage) | set(cur.evidenceCoverage)):
        before, after = base.evidenceCoverage.get(tool), cur.evidenceCoverage.get(tool)
        metric = f"evidenceCoverage.{tool}"
        if before == after:
            continue
        if before is None or after is None:
            shown = {None: "not required", True: "covered", False: "not covered"}
            change = "is newly required" if before is None else "is no longer required"
            message = f"Case {case_id}: evidence tool {tool} {change}: {shown[before]} → {shown[after]}."
            out.add(CHANGED, case_id, metric, before, after, message)
        elif after:
            message = f"Case {case_id} now has evidence from {tool}: not covered → covered."
            out.add(IMPROVEMENT, case_id, metric, before, after, message)
        else:
            message = f"Case {case_id} lost evidence from {tool}: covered → not covered."
            out.add(REGRESSION, case_id, metric, before, after, message)
    before, after = base.matchedKeywordCount, cur.matchedKeywordCount
    if before != after:
        kind = _direction(after - before, higher_is_worse=False)
        word = "fewer" if after < before else "more"
        out.add(
            kind,
            case_id,
            "matchedKeywordCount",
            before,
            after,
            f"Case {case_id} matched {word} expected keywords: {before} → {after}.",
        )
    if base.verdict != cur.verdict:
        message = f"Case {case_id}: verdict changed, {base.verdict or 'none'} → {cur.verdict or 'none'}."
        out.add(CHANGED, case_id, "verdict", base.verdict, cur.verdict, message)
    if sorted(base.failedChecks) != sorted(cur.failedChecks):
        out.add(
            CHANGED,
            case_id,
            "failedChecks",
            list(base.failedChecks),
            list(cur.failedChecks),
            _failed_checks_message(case_id, base.failedChecks, cur.failedChecks),
        )
    before, after = base.toolCallCount, cur.toolCallCount
    if before != after:
        message = f"Case {case_id}: tool calls {before} → {after} ({_signed(after - before, str)})."
        out.add(CHANGED, case_id, "toolCallCount", before, after, message)
    before, after = base.durationMs, cur.durationMs
    if not _same(before, after):
        change = f" ({_signed(after - before, _ms)})" if before is not None and after is not None else ""
        message = f"Case {case_id}: duration {_ms(before)} → {_ms(after)}{change}."
        out.add(CHANGED, case_id, "durationMs", before, after, message)
    if _definition_changed(base, cur):
        out.add(
            CHANGED,
            case_id,
            "definition",
            base.caseDigest,
            cur.caseDigest,
            f"Case {case_id}: its definition changed since the baseline ({base.caseDigest} → {cur.caseDigest}), "
            "so its results are not comparable.",
        )


def _by_id(report: Report) -> dict[str, CaseResult]:
    return {result.caseId: result for result in report.results}


def _all_case_items(out: _Collector, baseline: Report, current: Report) -> Iterator[str]:
    """Add every case's items in case-id order; yield the ids whose definition changed."""
    before, after = _by_id(baseline), _by_id(current)
    for case_id in sorted(set(before) | set(after)):
        if case_id not in after:
            message = f"Case {case_id} is missing from the current report: present → missing."
            out.add(REGRESSION, case_id, "present", True, False, message)
        elif case_id not in before:
            message = f"Case {case_id} is new (not in the baseline): absent → present."
            out.add(CHANGED, case_id, "present", False, True, message)
        else:
            _case_items(out, case_id, before[case_id], after[case_id])
            if _definition_changed(before[case_id], after[case_id]):
                yield case_id


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
