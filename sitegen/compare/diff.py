"""Comparing a current report with a baseline: categorised diff items and every case's change, no formatting.

Decisions where eval/README.md ("Comparing with the baseline") leaves room (also in tests):
- Numbers are equal when they agree to 1e-9 relative (1e-12 absolute), so a float written by another
  program (the Java harness) never yields a spurious item; `delta` is still plain current − baseline.
- The aggregate cost signals (averageToolCallCount, averageDurationMs) are judged on the *paired* average:
  over the cases that have the value in both reports (a case has a tool-call count when its trace was
  read, a duration when it also records one). Risen by more than the relative cost tolerance T
  (|Δ| > T × |paired baseline|) is a REGRESSION, fallen by more an IMPROVEMENT, else CHANGED: adding or
  removing cases alone can never make a cost regression. The item is recorded whenever the report's own
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
- `hasRegression` is what `--fail-on-regression` fails on: a case regressed or was removed
  (`caseRegressionCount` > 0), a cost signal is a REGRESSION by the paired rule, or a case's trial pass rate
  fell by more than chance (a `trialPassRate` REGRESSION: caught even when the trial policy still passes the
  case, say `any` going from 5/5 to 1/5). Other REGRESSION items
  (the pass rate falling because a new case fails, fewer keywords in a case that still passes) are counted
  in `regressionCount` and shown, but do not fail the gate.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sitegen.compare.behaviour import Behaviour, compare_behaviour, percent_changed, records_evidence
from sitegen.compare.changes import (
    BREAKING,
    CaseChange,
    Headline,
    case_changes,
    case_headline,
    change_counts,
    check_codes,
    classify_case,
)
from sitegen.config import DEFAULT_ALPHA, DEFAULT_COST_TOLERANCE
from sitegen.errors import UsageError
from sitegen.formatting import number, percent
from sitegen.jsontext import dumps_json
from sitegen.report import CaseResult, Report
from sitegen.stats import fisher_one_sided

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
    # `passed` items: the failed checks new against the baseline (a REGRESSION) or resolved (an IMPROVEMENT).
    checks: list[str] | None = None
    # Cost items: the averages over the cases that have the value in both reports (what decides the type).
    pairedCaseCount: int | None = None
    pairedBaselineValue: float | None = None
    pairedCurrentValue: float | None = None
    # `trialPassRate` items: the one-sided Fisher exact p-value of the change and the level it was judged at.
    pValue: float | None = None
    alpha: float | None = None
    # `answer` items: how alike the two answers are (compare/textdiff.py).
    similarity: float | None = None

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
        return data


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
    # Whether the baseline records what the agent did (an older sitegen's or the Java harness's does not).
    baselineEvidence: bool = True

    def to_json(self) -> dict[str, Any]:
        """The diff as a JSON object (eval/README.md's diff.json: the Java shape plus the case changes)."""
        data = {
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
            "caseRegressionCount": self.caseRegressionCount,
            "caseChangeCounts": dict(self.caseChangeCounts),
            "costTolerance": self.costTolerance,
            "changedDefinitions": list(self.changedDefinitions),
            "caseChanges": [change.to_json() for change in self.caseChanges],
            "items": [item.to_json() for item in self.items],
        }
        if any(item.metric == TRIAL_PASS_RATE for item in self.items):  # single-trial diffs keep their shape
            data["alpha"] = self.alpha
        return data

    def headline(self) -> Headline:
        """What every summary leads with: the cases by change, then the pass rate (casechanges.format_headline)."""
        return case_headline(self.caseChanges, self.baselinePassRate, self.currentPassRate)

    @property
    def cost_regressions(self) -> list[DiffItem]:
        """The cost signals that regressed by the paired rule (they fail the gate with the regressed cases)."""
        return [item for item in self.items if item.type == REGRESSION and item.metric in _COST_FIELDS]

    @property
    def trial_regressions(self) -> list[DiffItem]:
        """The cases whose trial pass rate fell by more than chance (they fail the gate too)."""
        return [item for item in self.items if item.type == REGRESSION and item.metric == TRIAL_PASS_RATE]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _delta(baseline: Any, current: Any) -> int | float | None:
    return current - baseline if _is_number(baseline) and _is_number(current) else None


_DURATIONS = ("averageDurationMs", "durationMs")
TRIAL_PASS_RATE = "trialPassRate"
_RATES = ("passRate", TRIAL_PASS_RATE)
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
    if metric in _RATES:
        return percent(value)
    if metric in _DURATIONS:
        return f"{number(value)} ms"
    if metric == "averageToolCallCount":
        return number(value, 2)
    if metric == "failedChecks":
        return ", ".join(check_codes(value or [])) or "none"
    if metric == "toolCalls":
        return ", ".join(map(str, value or [])) or "none"
    if metric == "answer" and _is_number(value):
        return f"{number(value)} characters"
    return number(value) if _is_number(value) else str(value)


def describe_delta(metric: str, delta: int | float | None) -> str:
    """A delta with its sign and unit ("-33.3 points", "+300 ms", "+1"); empty when there is none."""
    if delta is None:
        return ""
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    if metric in _RATES:
        return f"{sign}{abs(delta) * 100:.1f} points"
    return sign + describe_value(metric, abs(delta))


def _direction(delta: int | float, higher_is_worse: bool) -> str:
    return REGRESSION if (delta > 0) == higher_is_worse else IMPROVEMENT


class _Collector:
    """Builds the item list so every item and message is made the same way."""

    def __init__(self) -> None:
        self.items: list[DiffItem] = []

    def add(
        self, kind: str, case_id: str | None, metric: str, before: Any, after: Any, sentence: str, **extra: Any
    ) -> DiffItem:
        """Add an item; its message is `sentence: before → after (delta).`; `extra` sets DiffItem's optional fields."""
        delta = _delta(before, after)
        change = describe_delta(metric, delta)
        message = f"{sentence}: {describe_value(metric, before)} → {describe_value(metric, after)}"
        message += f" ({change})." if change else "."
        scope = AGGREGATE if case_id is None else CASE
        item = DiffItem(kind, scope, case_id, metric, before, after, delta, message, **extra)
        self.items.append(item)
        return item


# The aggregate cost signals, each with its label and the per-case field it averages.
_COST_FIELDS = {
    "averageToolCallCount": ("Average tool calls per case", "toolCallCount"),
    "averageDurationMs": ("Average duration", "durationMs"),
}


@dataclass(frozen=True)
class PairedAverage:
    """A cost signal averaged over the cases that have it in both reports."""

    count: int
    baseline: float | None
    current: float | None
    mix_changed: bool  # some case has the value in one report only


# The codes of a trace that could not be read (rules.FIXTURE_CODES, not imported: diffing reports needs no
# rule engine). A report file does not record whether a trace was read; one of these checks says it was not.
UNREAD_TRACE_CODES = frozenset(("fixture_missing", "fixture_invalid", "fixture_path_invalid"))


def _cost_value(result: CaseResult, case_field: str) -> int | float | None:
    # Only a read trace has a tool-call count or a duration (an unread one reports 0 calls, no duration), and
    # an evaluated result must pair exactly as the same result read back from report.json.
    if not result.traceLoaded or (result.failedChecks and UNREAD_TRACE_CODES & set(check_codes(result.failedChecks))):
        return None
    return getattr(result, case_field)


def paired_average(baseline: Report, current: Report, metric: str) -> PairedAverage:
    """The average of a cost signal (averageToolCallCount or averageDurationMs) over the cases measured in both."""
    case_field = _COST_FIELDS[metric][1]
    before = {r.caseId: v for r in baseline.results if (v := _cost_value(r, case_field)) is not None}
    after = {r.caseId: v for r in current.results if (v := _cost_value(r, case_field)) is not None}
    shared = [case_id for case_id in after if case_id in before]
    mix_changed = len(shared) != len(before) or len(shared) != len(after)
    if not shared:
        return PairedAverage(0, None, None, mix_changed)
    # math.fsum: the same values summed in any order give the same average, so identical cases compare equal.
    return PairedAverage(
        len(shared),
        math.fsum(before[c] for c in shared) / len(shared),
        math.fsum(after[c] for c in shared) / len(shared),
        mix_changed,
    )


def paired_type(paired: PairedAverage, tolerance: float) -> str:
    """REGRESSION when the paired average rose by more than `tolerance` (relative), IMPROVEMENT when it fell by more."""
    if paired.baseline is None or paired.current is None or _same(paired.baseline, paired.current):
        return CHANGED
    delta = paired.current - paired.baseline
    allowed = tolerance * abs(paired.baseline)
    if abs(delta) <= allowed or math.isclose(abs(delta), allowed, rel_tol=1e-9):
        return CHANGED
    return _direction(delta, higher_is_worse=True)


def _paired_clause(metric: str, paired: PairedAverage, kind: str, tolerance: float, moved: bool) -> str:
    """Why the item has its type: the paired averages against the tolerance, and whether the case mix explains it."""
    mix = "the change comes from the case mix (cases added or removed)"
    if paired.baseline is None or paired.current is None:
        return "no case is measured in both reports" + (f", so {mix}" if paired.mix_changed and moved else "")
    cases = f"{paired.count} case" if paired.count == 1 else f"{paired.count} cases"
    values = f"{describe_value(metric, paired.baseline)} → {describe_value(metric, paired.current)}"
    if _same(paired.baseline, paired.current):
        clause = f"the {cases} in both reports are unchanged ({values})"
    else:
        relative = f", {(paired.current - paired.baseline) / paired.baseline:+.1%}" if paired.baseline else ""
        delta = describe_delta(metric, paired.current - paired.baseline)
        limit = f"the {tolerance * 100:g}% tolerance"
        judged = {REGRESSION: f"more than {limit}: a cost regression", IMPROVEMENT: f"more than {limit}"}
        clause = f"over the {cases} in both reports {values} ({delta}{relative}), {judged.get(kind, f'within {limit}')}"
    if kind == CHANGED and paired.mix_changed and moved:
        clause += f", so {mix}"
    elif kind != CHANGED and not moved:
        clause += ", hidden in the overall average by the case mix"
    return clause


def _cost_items(out: _Collector, baseline: Report, current: Report, tolerance: float) -> None:
    for metric, (label, _) in _COST_FIELDS.items():
        before, after = getattr(baseline, metric), getattr(current, metric)
        paired = paired_average(baseline, current, metric)
        kind = paired_type(paired, tolerance)
        moved = not _same(before, after)
        if not moved and kind == CHANGED:
            continue
        if before is None or after is None:
            sentence = f"{label} {'is no longer' if after is None else 'is now'} measured"
        elif not moved:
            sentence = f"{label} is unchanged overall"
        else:
            sentence = f"{label} {'rose' if after > before else 'fell'}"
        item = out.add(
            kind, None, metric, before, after, sentence,
            pairedCaseCount=paired.count, pairedBaselineValue=paired.baseline, pairedCurrentValue=paired.current,
        )
        item.message = f"{item.message[:-1]}; {_paired_clause(metric, paired, kind, tolerance, moved)}."


def _aggregate_items(out: _Collector, baseline: Report, current: Report, tolerance: float) -> None:
    before, after = baseline.passRate, current.passRate
    if not _same(before, after):
        fell = after < before
        kind, sentence = (REGRESSION, "Pass rate fell") if fell else (IMPROVEMENT, "Pass rate rose")
        out.add(kind, None, "passRate", before, after, sentence)
    _cost_items(out, baseline, current, tolerance)
    for verdict in sorted(set(baseline.verdictDistribution) | set(current.verdictDistribution)):
        before = baseline.verdictDistribution.get(verdict, 0)
        after = current.verdictDistribution.get(verdict, 0)
        if before != after:
            out.add(CHANGED, None, f"verdictDistribution.{verdict}", before, after, f"Cases with verdict {verdict}")


def definition_changed(base: CaseResult, cur: CaseResult) -> bool:
    """Whether both results carry a case digest and the digests differ (the case was edited)."""
    return bool(base.caseDigest and cur.caseDigest and base.caseDigest != cur.caseDigest)


def _check_phrase(check: str) -> str:
    """`code: message` as `code (message)`, the way a headline names a broken rule."""
    code, _, detail = check.partition(":")
    return f"{code.strip()} ({detail.strip()})" if detail.strip() else code.strip()


def _passed_item(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult, behaviour: Behaviour) -> None:
    change = classify_case(base, cur, behaviour)
    if cur.passed:
        kind, checks, sentence = IMPROVEMENT, list(change.resolvedChecks), f"Case {case_id} now passes"
    else:
        word = "is now not run" if cur.status == "not_run" else "now fails"
        kind, checks, sentence = REGRESSION, list(change.newFailedChecks), f"Case {case_id} {word}"
    item = out.add(kind, case_id, "passed", base.passed, cur.passed, sentence, checks=checks)
    if checks:
        named = "; ".join(_check_phrase(check) for check in checks)
        item.message = f"{sentence}, no longer failing {named}" if cur.passed else f"{sentence}: {named}"


def trial_change(base: CaseResult, cur: CaseResult, alpha: float) -> tuple[str, float] | None:
    """The type and p-value of a case's trial pass rate change; None unless both sides have ≥ 2 trials and the
    rate moved. The p-value is the one-sided Fisher exact test in the direction the rate moved."""
    if base.trialResults is None or cur.trialResults is None or base.trials < 2 or cur.trials < 2:
        return None
    before, after = (base.passedTrials, base.trials), (cur.passedTrials, cur.trials)
    if before[0] * after[1] == after[0] * before[1]:
        return None
    fell = after[0] * before[1] < before[0] * after[1]
    p_value = fisher_one_sided(*before, *after) if fell else fisher_one_sided(*after, *before)
    if p_value >= alpha:
        return CHANGED, p_value
    return (REGRESSION if fell else IMPROVEMENT), p_value


def _trial_item(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult, alpha: float) -> None:
    change = trial_change(base, cur, alpha)
    if change is None:
        return
    kind, p_value = change
    before, after = base.passedTrials / base.trials, cur.passedTrials / cur.trials
    sentence = f"Case {case_id} trial pass rate {'fell' if after < before else 'rose'}"
    item = out.add(kind, case_id, TRIAL_PASS_RATE, before, after, sentence, pValue=p_value, alpha=alpha)
    judged = "more than chance" if kind != CHANGED else "within chance"
    item.message = (
        f"{item.message[:-1]}; {base.passedTrials}/{base.trials} → {cur.passedTrials}/{cur.trials} trials passed, "
        f"one-sided Fisher exact p = {p_value:.3g} {'<' if kind != CHANGED else '≥'} α {alpha:g}: {judged}."
    )


def _behaviour_items(out: _Collector, case_id: str, behaviour: Behaviour) -> None:
    if behaviour.answerLengths is not None and behaviour.answerSimilarity is not None:
        before, after = behaviour.answerLengths
        item = out.add(CHANGED, case_id, "answer", before, after, f"Case {case_id} answer changed",
                       similarity=behaviour.answerSimilarity)  # fmt: skip
        changed = percent_changed(behaviour.answerSimilarity)
        item.message = f"Case {case_id} answer changed ({changed} % changed): {number(before)} → {number(after)} characters."
    if behaviour.callsChanged is not None:
        then, now = behaviour.callsChanged
        item = out.add(CHANGED, case_id, "toolCalls", list(then), list(now), f"Case {case_id} tool calls changed")
        item.message = f"Case {case_id} tool calls changed: {', '.join(then) or 'none'} → {', '.join(now) or 'none'}."


def _case_items(out: _Collector, case_id: str, base: CaseResult, cur: CaseResult, alpha: float, behaviour: Behaviour) -> None:
    if base.passed != cur.passed:
        _passed_item(out, case_id, base, cur, behaviour)
    _trial_item(out, case_id, base, cur, alpha)
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
        same_codes = set(check_codes(base.failedChecks)) == set(check_codes(cur.failedChecks))
        sentence = f"Case {case_id} {'failure details' if same_codes else 'failed checks'} changed"
        out.add(CHANGED, case_id, "failedChecks", list(base.failedChecks), list(cur.failedChecks), sentence)
    if base.toolCallCount != cur.toolCallCount:
        before, after = base.toolCallCount, cur.toolCallCount
        out.add(CHANGED, case_id, "toolCallCount", before, after, f"Case {case_id} tool call count changed")
    _behaviour_items(out, case_id, behaviour)
    if not _same(base.durationMs, cur.durationMs):
        out.add(CHANGED, case_id, "durationMs", base.durationMs, cur.durationMs, f"Case {case_id} duration changed")
    if definition_changed(base, cur):
        sentence = f"Case {case_id} definition changed since the baseline, so its results are not comparable"
        out.add(CHANGED, case_id, "definition", base.caseDigest, cur.caseDigest, sentence)


def _by_id(report: Report) -> dict[str, CaseResult]:
    return {result.caseId: result for result in report.results}


def _all_case_items(out: _Collector, baseline: Report, current: Report, alpha: float, behaviours: dict[str, Behaviour]) -> Iterator[str]:
    """Add every case's items in case-id order, keeping in `behaviours` those compared; yield the ids whose
    definition changed."""
    before, after = _by_id(baseline), _by_id(current)
    for case_id in sorted(set(before) | set(after)):
        if case_id not in after:
            out.add(REGRESSION, case_id, "present", True, False, f"Case {case_id} is missing from the current report")
            continue
        behaviour = _current_case_items(out, case_id, before.get(case_id), after[case_id], alpha, None)
        if behaviour is not None:
            behaviours[case_id] = behaviour
        if case_id in before and definition_changed(before[case_id], after[case_id]):
            yield case_id


def _current_case_items(
    out: _Collector, case_id: str, base: CaseResult | None, cur: CaseResult, alpha: float, behaviour: Behaviour | None
) -> Behaviour | None:
    """Add the case's items; return its behaviour change when it had to be compared."""
    if base is None:
        out.add(CHANGED, case_id, "present", False, True, f"Case {case_id} is new (not in the baseline)")
    elif base != cur:  # most cases of a diff are unchanged: one comparison of every field says so
        behaviour = compare_behaviour(base, cur) if behaviour is None else behaviour
        _case_items(out, case_id, base, cur, alpha, behaviour)
        return behaviour
    return None


def case_items(
    case_id: str, base: CaseResult | None, cur: CaseResult, *, alpha: float = DEFAULT_ALPHA, behaviour: Behaviour | None = None
) -> list[DiffItem]:
    """The diff items of one current case against its baseline entry (None: not in the baseline), as in the full
    diff. `behaviour`: compare_behaviour(base, cur) when already at hand."""
    out = _Collector()
    _current_case_items(out, case_id, base, cur, alpha, behaviour)
    return out.items


def compare_reports(
    baseline: Report, current: Report, *, cost_tolerance: float = DEFAULT_COST_TOLERANCE, alpha: float = DEFAULT_ALPHA
) -> DiffReport:
    """Compare two reports by case id: aggregate items first, then per case, and every case's change."""
    if not (math.isfinite(cost_tolerance) and cost_tolerance >= 0):
        raise UsageError(f"cost tolerance must be a finite number ≥ 0 (a ratio such as 0.1), got {cost_tolerance}")
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be a number between 0 and 1 (such as 0.05), got {alpha}")
    out = _Collector()
    _aggregate_items(out, baseline, current, cost_tolerance)
    behaviours: dict[str, Behaviour] = {}
    changed_definitions = list(_all_case_items(out, baseline, current, alpha, behaviours))
    regressions = sum(1 for item in out.items if item.type == REGRESSION)
    improvements = sum(1 for item in out.items if item.type == IMPROVEMENT)
    changes = case_changes(baseline, current, behaviours)
    breaking = sum(1 for change in changes if change.change in BREAKING)
    cost_regression = any(item.type == REGRESSION and item.metric in _COST_FIELDS for item in out.items)
    trial_regression = any(item.type == REGRESSION and item.metric == TRIAL_PASS_RATE for item in out.items)
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
        hasRegression=breaking > 0 or cost_regression or trial_regression,
        items=out.items,
        changedDefinitions=changed_definitions,
        caseChanges=changes,
        caseRegressionCount=breaking,
        caseChangeCounts=change_counts(changes),
        costTolerance=cost_tolerance,
        alpha=alpha,
        baselineEvidence=not baseline.results or records_evidence(baseline.results),
    )


def diff_json(diff: DiffReport) -> str:
    """The diff's JSON text; byte-identical for the same reports."""
    return dumps_json(diff.to_json())
