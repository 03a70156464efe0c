"""Comparing a current report with a baseline: categorised diff items and every case's change, as data (the items'
messages are compare/wording.py's, diff.json's shape compare/diff_json.py's).

Decisions where eval/README.md ("Comparing with the baseline") leaves room (also in tests):
- Numbers are equal when they agree to 1e-9 relative (1e-12 absolute), so a float written by another
  program (the Java harness) never yields a spurious item; `delta` is still plain current − baseline.
- The aggregate cost signals (averageToolCallCount, averageDurationMs, tokensPerPassingCase, costPerPassingCase)
  are judged on the *paired* average: over the cases that pass in both reports and have the value in both (a case
  has a tool-call count when its trace was read, a duration, tokens or a cost when it also records them). Risen by
  more than the relative cost tolerance T (|Δ| > T × |paired baseline|) is a REGRESSION, fallen by more an
  IMPROVEMENT, else CHANGED: adding or removing cases, or a case that stops passing (a required tool no longer
  called is fewer calls), can never make a cost regression or improvement. The item is recorded whenever the report's own
  average changed, and also when only the paired average moved beyond T (a cheap new case must not hide
  the shared cases getting slower). Per-case toolCallCount / durationMs stay CHANGED on any change.
- A null on one side of a cost signal or a duration (and a number on the other) is recorded with delta null.
- A tool in a case's evidenceCoverage on one side only is CHANGED (the case's requirements changed, not
  the agent's behaviour), with null for the side that lacks it.
- failedChecks compare as multisets: the same checks reported in another order are no change.
- A baseline case absent now gives only its `present` REGRESSION; a new case only its `present` CHANGED.
- `definition` (both sides carry a caseDigest and they differ) is CHANGED and comes last among the case's
  items; the case's other items are still reported, and `changedDefinitions` lists such cases.
- `trialPassRate` (a case with at least 2 trials on both sides whose trial pass rate changed) is judged by a
  one-sided Fisher exact test on the passed/failed trial counts (stats.py): fallen with p < α a REGRESSION,
  risen with p < α an IMPROVEMENT, else CHANGED; the item carries `pValue` (of the direction it moved) and
  `alpha`. The `passed` item keeps its own rule whatever the p-value.
- A case not run on either side (its trace unreadable, its trials unrecorded: `not_run`) was not judged there, so it
  has no metric item (passed, evidence, keywords, verdict, failed checks, tool calls, duration, answer, trials):
  its change (`not_evaluated`, or the baseline's `not_run` then) says it once. The aggregate items (pass rate, cost
  signals, verdict distribution) compare the reports without those cases (`leftOutCases`), so a case leaving the
  comparison never moves them; the reports' own figures (`baselinePassRate`, `currentPassRate`) stay the seed's.
- `pairedTest` is McNemar's exact test (stats.py) over the cases with one trial on both sides that were evaluated
  on both (a `not_run` side has no outcome to pair): b passed → failed, c failed → passed. It informs every
  pass-rate clause; the gate keeps its own rule. null when no case qualifies (a suite of trials).
- `hasRegression` is what `--fail-on-regression` fails on: a case could not be evaluated now (`not_evaluated`,
  whatever the baseline said of it), a case regressed or was removed (`caseRegressionCount` > 0), a cost signal is a REGRESSION by the paired rule, or a case's trial pass rate
  fell by more than chance (a `trialPassRate` REGRESSION: caught even when the trial policy still passes the
  case, say `any` going from 5/5 to 1/5). Other REGRESSION items
  (the pass rate falling because a new case fails, fewer keywords in a case that still passes) are counted
  in `regressionCount` and shown, but do not fail the gate.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.compare.behaviour import Behaviour, records_evidence, records_inputs, records_meaning
from sitegen.compare.changes import (
    CaseChange,
    ChangeKind,
    Headline,
    PairedTest,
    case_headline,
    change_counts,
    classify_case,
    paired_test,
    trial_p_value,
)
from sitegen.compare.costs import paired_average, paired_type
from sitegen.compare.where import Step, Streak
from sitegen.compare.items import (
    COST_METRICS,
    EVIDENCE_COVERAGE,
    VERDICT_DISTRIBUTION,
    DiffItem,
    ItemType,
    Metric,
    Scope,
    delta,
    direction,
    same,
)
from sitegen.defaults import DEFAULT_ALPHA, DEFAULT_ANSWER_SIMILARITY, DEFAULT_COST_TOLERANCE
from sitegen.errors import BadInput, UsageError
from sitegen.report.results import CaseResult, Report, build_report
from sitegen.report.status import Status


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
    caseChanges: list[CaseChange] = field(default_factory=list)
    caseRegressionCount: int = 0
    caseChangeCounts: dict[str, int] = field(default_factory=dict)
    costTolerance: float = DEFAULT_COST_TOLERANCE
    alpha: float = DEFAULT_ALPHA
    # Whether the baseline records what the agent did (an older sitegen's or the Java harness's does not) ...
    baselineEvidence: bool = True
    # ... and the inputs of its tool calls (an older sitegen's does not: input changes are then unknown).
    baselineInputs: bool = True
    # ... and each result's keyword polarity and claim checks (an older sitegen's does not: a change of meaning is
    # then unknown, eval/README.md "Behaviour that changed meaning").
    baselineMeaning: bool = True
    # `[diff] answerSimilarity`: a passing case whose answers are less alike than this behaves differently.
    answerSimilarity: float = DEFAULT_ANSWER_SIMILARITY
    # McNemar's exact test of the cases with one trial on both sides (None: no such case).
    pairedTest: PairedTest | None = None
    # Since when each failing case fails, by case id (compare/where.py): None when the diff was made without the
    # history of record (`sitegen diff`), which then says nothing of it; a build fills it in.
    failingSince: dict[str, Streak] | None = None
    # The latest step in the suite's pass rate, when this run is the first point after it (a build fills it in).
    step: Step | None = None
    # The cases not run on either side, left out of every metric item (current order, then the baseline's).
    leftOutCases: list[str] = field(default_factory=list)
    # The pass rates over each side's cases without them: the pass-rate item's and the headline's (None: no case
    # is left on that side).
    comparedBaselinePassRate: float | None = None
    comparedCurrentPassRate: float | None = None

    def headline(self) -> Headline:
        """What every summary leads with: the cases by change, then the pass rate (worded by compare/wording.py)."""
        return case_headline(self.caseChanges, self.comparedBaselinePassRate, self.comparedCurrentPassRate,
                             self.pairedTest, self.alpha, len(self.leftOutCases))

    @property
    def cost_regressions(self) -> list[DiffItem]:
        """The cost signals that regressed by the paired rule (they fail the gate with the regressed cases)."""
        return [item for item in self.items if item.type == ItemType.REGRESSION and item.metric in COST_METRICS]

    @property
    def trial_regressions(self) -> list[DiffItem]:
        """The cases whose trial pass rate fell by more than chance (they fail the gate too)."""
        return [item for item in self.items if item.type == ItemType.REGRESSION and item.metric == Metric.TRIAL_PASS_RATE]


class _Collector:
    """Builds the item list so every item is made the same way."""

    def __init__(self) -> None:
        self.items: list[DiffItem] = []

    def add(self, kind: str, case_id: str | None, metric: str, before: Any, after: Any, **extra: Any) -> None:
        """Add an item with its delta; `extra` sets DiffItem's optional fields."""
        scope = Scope.AGGREGATE if case_id is None else Scope.CASE
        self.items.append(DiffItem(kind, scope, case_id, metric, before, after, delta(before, after), **extra))


def _cost_items(out: _Collector, baseline: Report, current: Report, tolerance: float) -> None:
    for metric in COST_METRICS:
        before, after = getattr(baseline, metric), getattr(current, metric)
        paired = paired_average(baseline, current, metric)
        kind = paired_type(paired, tolerance)
        if same(before, after) and kind == ItemType.CHANGED:
            continue
        out.add(
            kind, None, metric, before, after,
            pairedCaseCount=paired.count, pairedBaselineValue=paired.baseline, pairedCurrentValue=paired.current,
            mixChanged=paired.mix_changed, costTolerance=tolerance, pairedLeft=paired.left,
        )


def evaluated_on_both(base: CaseResult, cur: CaseResult) -> bool:
    """Whether the agent was judged on both sides (neither is `not_run`): only then do its figures compare."""
    return base.status is not Status.NOT_RUN and cur.status is not Status.NOT_RUN


def left_out(baseline: Report, current: Report) -> list[str]:
    """The cases not run on either side (current order, then the baseline's): no metric item counts them."""
    before = baseline.by_id
    ids = [r.caseId for r in current.results
           if r.status is Status.NOT_RUN or (r.caseId in before and before[r.caseId].status is Status.NOT_RUN)]
    ids += [r.caseId for r in baseline.results if r.status is Status.NOT_RUN and r.caseId not in current.by_id]
    return ids


def without(report: Report, case_ids: Collection[str]) -> Report:
    """The report's figures worked out again without the cases `case_ids` (the report itself when none)."""
    if not case_ids:
        return report
    return build_report([result for result in report.results if result.caseId not in case_ids])


def _rate(report: Report) -> float | None:
    return report.passRate if report.results or report.totalCases else None


def _aggregate_items(
    out: _Collector, baseline: Report, current: Report, tolerance: float, paired: PairedTest | None, alpha: float,
    left: list[str],
) -> None:
    before, after = _rate(baseline), _rate(current)
    if before is not None and after is not None and not same(before, after):
        # Its message adds McNemar's test of the single-trial cases (compare/wording.py's chance_clause).
        out.add(ItemType.REGRESSION if after < before else ItemType.IMPROVEMENT, None, Metric.PASS_RATE, before, after, pairedTest=paired,
                alpha=alpha if paired is not None else None, leftOutCases=tuple(left))
    _cost_items(out, baseline, current, tolerance)
    for verdict in sorted(set(baseline.verdictDistribution) | set(current.verdictDistribution)):
        before = baseline.verdictDistribution.get(verdict, 0)
        after = current.verdictDistribution.get(verdict, 0)
        if before != after:
            out.add(ItemType.CHANGED, None, f"{VERDICT_DISTRIBUTION}{verdict}", before, after)


def definition_changed(base: CaseResult, cur: CaseResult) -> bool:
    """Whether both results carry a case digest and the digests differ (the case was edited)."""
    return bool(base.caseDigest and cur.caseDigest and base.caseDigest != cur.caseDigest)


def _trial_counts(base: CaseResult, cur: CaseResult) -> tuple[tuple[int, int], tuple[int, int]]:
    return (base.passedTrials, base.trials), (cur.passedTrials, cur.trials)


def _passed_item(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult, change: CaseChange) -> None:
    kind = ItemType.IMPROVEMENT if cur.passed else ItemType.REGRESSION
    checks = list(change.resolvedChecks if cur.passed else change.newFailedChecks)
    counts = None
    if change.change is ChangeKind.WITHIN_NOISE:  # the trial policy flipped, the trial pass rate moved within chance
        kind, counts = ItemType.CHANGED, _trial_counts(base, cur)
    out.add(kind, case_id, Metric.PASSED, base.passed, cur.passed, checks=checks, currentStatus=cur.status, trialCounts=counts)


def trial_change(base: CaseResult, cur: CaseResult, alpha: float) -> tuple[str, float] | None:
    """The type and p-value of a case's trial pass rate change; None unless both sides have ≥ 2 trials and the
    rate moved. The p-value is the one-sided Fisher exact test in the direction the rate moved."""
    moved = trial_p_value(base, cur)
    if moved is None:
        return None
    fell, p_value = moved
    if p_value >= alpha:
        return ItemType.CHANGED, p_value
    return (ItemType.REGRESSION if fell else ItemType.IMPROVEMENT), p_value


def _trial_item(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult, alpha: float) -> None:
    change = trial_change(base, cur, alpha)
    if change is None:
        return
    kind, p_value = change
    before, after = base.passedTrials / base.trials, cur.passedTrials / cur.trials
    out.add(kind, case_id, Metric.TRIAL_PASS_RATE, before, after, pValue=p_value, alpha=alpha, trialCounts=_trial_counts(base, cur))


def _behaviour_items(out: _Collector, case_id: str, behaviour: Behaviour) -> None:
    if behaviour.answerLengths is not None and behaviour.answerSimilarity is not None:
        before, after = behaviour.answerLengths
        out.add(ItemType.CHANGED, case_id, Metric.ANSWER, before, after, similarity=behaviour.answerSimilarity)
    if behaviour.callsChanged is not None:
        then, now = behaviour.callsChanged
        out.add(ItemType.CHANGED, case_id, Metric.TOOL_CALLS, list(then), list(now), firstDivergence=behaviour.firstDivergence)


def _case_items(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult, change: CaseChange, alpha: float) -> None:
    if base.passed != cur.passed:
        _passed_item(out, case_id, base, cur, change)
    _trial_item(out, case_id, base, cur, alpha)
    for tool in sorted(set(base.evidenceCoverage) | set(cur.evidenceCoverage)):
        before, after = base.evidenceCoverage.get(tool), cur.evidenceCoverage.get(tool)
        if before == after:
            continue
        kind = ItemType.CHANGED if before is None or after is None else ItemType.IMPROVEMENT if after else ItemType.REGRESSION
        out.add(kind, case_id, f"{EVIDENCE_COVERAGE}{tool}", before, after)
    before, after = base.matchedKeywordCount, cur.matchedKeywordCount
    if before != after:
        out.add(direction(after - before, higher_is_worse=False), case_id, Metric.MATCHED_KEYWORDS, before, after)
    if base.verdict != cur.verdict:
        out.add(ItemType.CHANGED, case_id, Metric.VERDICT, base.verdict, cur.verdict)
    if sorted(base.failedChecks) != sorted(cur.failedChecks):
        out.add(ItemType.CHANGED, case_id, Metric.FAILED_CHECKS, list(base.failedChecks), list(cur.failedChecks))
    if base.toolCallCount != cur.toolCallCount:
        out.add(ItemType.CHANGED, case_id, Metric.TOOL_CALL_COUNT, base.toolCallCount, cur.toolCallCount)
    _behaviour_items(out, case_id, change.behaviour)
    if not same(base.durationMs, cur.durationMs):
        out.add(ItemType.CHANGED, case_id, Metric.DURATION, base.durationMs, cur.durationMs)
    if definition_changed(base, cur):
        out.add(ItemType.CHANGED, case_id, Metric.DEFINITION, base.caseDigest, cur.caseDigest)


class CaseComparison(NamedTuple):
    """One case against its baseline entry, worked out once: its change and its diff items (in table order)."""

    change: CaseChange
    items: tuple[DiffItem, ...]


def compare_case(
    base: CaseResult | None,
    cur: CaseResult | None,
    *,
    alpha: float = DEFAULT_ALPHA,
    answer_similarity: float = DEFAULT_ANSWER_SIMILARITY,
) -> CaseComparison:
    """The change and the items of one case; `base` or `cur` is None when the case is missing from that report."""
    change = classify_case(base, cur, alpha, answer_similarity=answer_similarity)
    out = _Collector()
    if cur is None:
        assert base is not None, "a case is in at least one report"
        out.add(ItemType.REGRESSION, base.caseId, Metric.PRESENT, True, False)
    elif base is None:
        out.add(ItemType.CHANGED, cur.caseId, Metric.PRESENT, False, True)
    elif base != cur:  # most cases of a diff are unchanged: one comparison of every field says so
        if evaluated_on_both(base, cur):
            _case_items(out, cur.caseId, base, cur, change, alpha)
        elif definition_changed(base, cur):  # the case was edited: said of the case file, not of the agent
            out.add(ItemType.CHANGED, cur.caseId, Metric.DEFINITION, base.caseDigest, cur.caseDigest)
    return CaseComparison(change, tuple(out.items))


def incomparable(baseline: Report, current_ids: Collection[str]) -> str | None:
    """Why the baseline cannot be compared with the current suite, or None: it has no case at all, or none of its
    cases is in the current suite (a report of another suite), which would report every case removed and new
    instead of comparing any."""
    if not current_ids:
        return None
    if not baseline.results:
        return (f"the baseline has no case results, so it compares nothing with the {len(current_ids)} current "
                "case(s): give a report of this suite (sitegen baseline writes one)")
    if not any(result.caseId in current_ids for result in baseline.results):
        return (f"the baseline shares no case id with the current suite ({len(baseline.results)} baseline case(s), "
                f"{len(current_ids)} current case(s)): is it a report of another suite?")
    return None


def check_comparable(baseline: Report, current_ids: Collection[str], baseline_path: Path | str, current: Path | str) -> None:
    """Raise BadInput naming the baseline file and `current` (the case file or the current report) when they cannot be
    compared (`incomparable`), saying how to make a baseline that can."""
    problem = incomparable(baseline, current_ids)
    if problem is not None:
        raise BadInput(baseline_path, f"{problem} (compared with {current}); write this suite's baseline with "
                                      "`sitegen baseline`, or give --baseline a report of this suite")


def compare_reports(
    baseline: Report,
    current: Report,
    *,
    cost_tolerance: float = DEFAULT_COST_TOLERANCE,
    alpha: float = DEFAULT_ALPHA,
    answer_similarity: float = DEFAULT_ANSWER_SIMILARITY,
    compared: Mapping[str, CaseComparison] | None = None,
) -> DiffReport:
    """Compare two reports by case id: aggregate items first, then per case, and every case's change.

    `compared`: the comparisons (compare_case, same baseline, alpha and answer similarity) of cases already compared, by case id,
    such as those a build's case pages made; every other case is compared here.
    """
    if not (math.isfinite(cost_tolerance) and cost_tolerance >= 0):
        raise UsageError(f"cost tolerance must be a finite number ≥ 0 (a ratio such as 0.1), got {cost_tolerance}")
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be a number between 0 and 1 (such as 0.05), got {alpha}")
    if not 0 <= answer_similarity <= 1:
        raise UsageError(f"answer similarity must be a number from 0 to 1 (such as 0.9), got {answer_similarity}")
    before, after = baseline.by_id, current.by_id
    known = compared or {}
    cases: dict[str, CaseComparison] = {}
    for case_id in sorted(before.keys() | after.keys()):
        found = known.get(case_id)
        cases[case_id] = found if found is not None else compare_case(
            before.get(case_id), after.get(case_id), alpha=alpha, answer_similarity=answer_similarity
        )
    paired = paired_test((base, after[case_id]) for case_id, base in before.items() if case_id in after)
    out = _Collector()
    left = left_out(baseline, current)
    compared_baseline, compared_current = without(baseline, left), without(current, left)
    _aggregate_items(out, compared_baseline, compared_current, cost_tolerance, paired, alpha, left)
    for comparison in cases.values():
        out.items += comparison.items
    changed_definitions = [
        case_id for case_id, base in before.items() if case_id in after and definition_changed(base, after[case_id])
    ]
    changed_definitions.sort()
    changes = [cases[result.caseId].change for result in current.results]
    changes += [cases[result.caseId].change for result in baseline.results if result.caseId not in after]
    regressions = sum(1 for item in out.items if item.type == ItemType.REGRESSION)
    improvements = sum(1 for item in out.items if item.type == ItemType.IMPROVEMENT)
    breaking = sum(1 for change in changes if change.change.breaking)
    gated = sum(1 for change in changes if change.change.fails_gate)
    cost_regression = any(item.type == ItemType.REGRESSION and item.metric in COST_METRICS for item in out.items)
    trial_regression = any(item.type == ItemType.REGRESSION and item.metric == Metric.TRIAL_PASS_RATE for item in out.items)
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
        hasRegression=gated > 0 or cost_regression or trial_regression,
        items=out.items,
        changedDefinitions=changed_definitions,
        caseChanges=changes,
        caseRegressionCount=breaking,
        caseChangeCounts=change_counts(changes),
        costTolerance=cost_tolerance,
        alpha=alpha,
        baselineEvidence=not baseline.results or records_evidence(baseline.results),
        baselineInputs=not baseline.results or records_inputs(baseline.results) or not records_evidence(baseline.results),
        # Said only when it matters: the current report records meaning, the baseline records answers but not it.
        baselineMeaning=not (
            records_meaning(current.results) and records_evidence(baseline.results) and not records_meaning(baseline.results)
        ),
        answerSimilarity=answer_similarity,
        pairedTest=paired,
        leftOutCases=left,
        comparedBaselinePassRate=_rate(compared_baseline),
        comparedCurrentPassRate=_rate(compared_current),
    )

