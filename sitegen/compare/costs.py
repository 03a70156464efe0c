"""The cost signals judged on the paired average: a cost signal (average tool calls, average duration, tokens and
dollars per passing case) compared over the cases that pass in both reports and are measured in both, so that
adding or removing cases, or a case that stops passing, never makes a cost regression or improvement
(eval/README.md, "Comparing with the baseline"; compare/diff_report.py makes the items).

Why only passing cases: a case that stops calling a required tool fails and calls fewer tools; counted, its
regression would read as "average tool calls fell", a cost improvement. A cost is what a *correct* run takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sitegen.checks import FIXTURE_CODES, check_codes
from sitegen.compare.items import COST_METRICS, ItemType, direction, same
from sitegen.finite import finite_mean
from sitegen.report.results import CaseResult, Report
from sitegen.report.status import Status
from sitegen.suite.models import TokenUsage

_UNREAD = frozenset(FIXTURE_CODES)


@dataclass(frozen=True)
class PairedAverage:
    """A cost signal averaged over the cases that pass in both reports and have it in both."""

    count: int
    baseline: float | None
    current: float | None
    mix_changed: bool  # a case measured in one report is in that report only: cases were added or removed
    # The cases in both reports outside the pairs (they do not pass in both, or one side does not measure them) whose
    # value moved the overall average: measured on one side only, or another value now (in current-report order).
    left: tuple[str, ...] = ()


def cost_value(result: CaseResult, case_field: str) -> int | float | None:
    """A case's tool-call count, duration, tokens (input and output) or cost; None when its trace was not read (a
    report file does not record whether it was: a fixture check says it was not) or does not record the value."""
    # Only a read trace has a tool-call count or a duration (an unread one reports 0 calls, no duration), and
    # an evaluated result must pair exactly as the same result read back from report.json.
    if not result.traceLoaded or (result.failedChecks and _UNREAD & set(check_codes(result.failedChecks))):
        return None
    value = getattr(result, case_field)
    return value.total if isinstance(value, TokenUsage) else value


def paired_average(baseline: Report, current: Report, metric: str) -> PairedAverage:
    """The average of a cost signal (COST_METRICS) over the cases passing in both reports and measured in both."""
    case_field = COST_METRICS[metric]
    before = {r.caseId: (v, r.status is Status.PASSED) for r in baseline.results if (v := cost_value(r, case_field)) is not None}
    after = {r.caseId: (v, r.status is Status.PASSED) for r in current.results if (v := cost_value(r, case_field)) is not None}
    mix_changed = any(case_id not in current.by_id for case_id in before) or any(
        case_id not in baseline.by_id for case_id in after
    )
    measured = [r.caseId for r in current.results if r.caseId in baseline.by_id and (r.caseId in before or r.caseId in after)]
    shared = [c for c in measured if c in before and c in after and before[c][1] and after[c][1]]
    paired = set(shared)
    # Of the cases outside the pairs, those that moved the overall average: measured on one side only, or changed.
    left = tuple(
        c for c in measured
        if c not in paired and (c not in before or c not in after or not same(before[c][0], after[c][0]))
    )  # fmt: skip
    if not shared:
        return PairedAverage(0, None, None, mix_changed, left)
    # Summed exactly: the same values in any order give the same average, so identical cases compare equal.
    return PairedAverage(
        len(shared),
        finite_mean([before[c][0] for c in shared], order_free=True),
        finite_mean([after[c][0] for c in shared], order_free=True),
        mix_changed,
        left,
    )


def paired_type(paired: PairedAverage, tolerance: float) -> str:
    """REGRESSION when the paired average rose by more than `tolerance` (relative), IMPROVEMENT when it fell by more."""
    if paired.baseline is None or paired.current is None or same(paired.baseline, paired.current):
        return ItemType.CHANGED
    change = paired.current - paired.baseline
    allowed = tolerance * abs(paired.baseline)
    if abs(change) <= allowed or math.isclose(abs(change), allowed, rel_tol=1e-9):
        return ItemType.CHANGED
    return direction(change, higher_is_worse=True)
