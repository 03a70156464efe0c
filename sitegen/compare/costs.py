"""The cost signals judged on the paired average: a cost signal (average tool calls, average duration) compared
over the cases measured in both reports, so adding or removing cases alone never makes a cost regression
(eval/README.md, "Comparing with the baseline"; compare/diff_report.py makes the items)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sitegen.checks import FIXTURE_CODES, check_codes
from sitegen.compare.items import CHANGED, COST_METRICS, direction, same
from sitegen.finite import finite_mean
from sitegen.report.results import CaseResult, Report

_UNREAD = frozenset(FIXTURE_CODES)


@dataclass(frozen=True)
class PairedAverage:
    """A cost signal averaged over the cases that have it in both reports."""

    count: int
    baseline: float | None
    current: float | None
    mix_changed: bool  # some case has the value in one report only


def cost_value(result: CaseResult, case_field: str) -> int | float | None:
    """A case's tool-call count or duration, None when its trace was not read (a report file does not record
    whether it was: a fixture check says it was not)."""
    # Only a read trace has a tool-call count or a duration (an unread one reports 0 calls, no duration), and
    # an evaluated result must pair exactly as the same result read back from report.json.
    if not result.traceLoaded or (result.failedChecks and _UNREAD & set(check_codes(result.failedChecks))):
        return None
    return getattr(result, case_field)


def paired_average(baseline: Report, current: Report, metric: str) -> PairedAverage:
    """The average of a cost signal (averageToolCallCount or averageDurationMs) over the cases measured in both."""
    case_field = COST_METRICS[metric][1]
    before = {r.caseId: v for r in baseline.results if (v := cost_value(r, case_field)) is not None}
    after = {r.caseId: v for r in current.results if (v := cost_value(r, case_field)) is not None}
    shared = [case_id for case_id in after if case_id in before]
    mix_changed = len(shared) != len(before) or len(shared) != len(after)
    if not shared:
        return PairedAverage(0, None, None, mix_changed)
    # Summed exactly: the same values in any order give the same average, so identical cases compare equal.
    return PairedAverage(
        len(shared),
        finite_mean([before[c] for c in shared], order_free=True),
        finite_mean([after[c] for c in shared], order_free=True),
        mix_changed,
    )


def paired_type(paired: PairedAverage, tolerance: float) -> str:
    """REGRESSION when the paired average rose by more than `tolerance` (relative), IMPROVEMENT when it fell by more."""
    if paired.baseline is None or paired.current is None or same(paired.baseline, paired.current):
        return CHANGED
    change = paired.current - paired.baseline
    allowed = tolerance * abs(paired.baseline)
    if abs(change) <= allowed or math.isclose(abs(change), allowed, rel_tol=1e-9):
        return CHANGED
    return direction(change, higher_is_worse=True)
