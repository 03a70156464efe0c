"""Steps in the suite's pass rate (eval/README.md, "Steps in the pass rate"): where, over the history's CI points,
the share of passing cases changed and stayed changed.

Each point is a run's pass count: k of its m cases passed. The points are cut into segments, each with one pass
rate, by an exact optimal partition (PELT: Killick, Fearnhead and Eckley 2012, the dynamic programme asv's
step_detect solves for timings, here with pruning): the cost of a segment is minus the binomial log-likelihood of
its counts at the segment's own rate, and each step adds a penalty of STEP_PENALTY × ln(every case result of the
points). The penalty is the sensitivity: one case flipping for good in a suite of a hundred is not a step, five are;
pure binomial noise around one rate yields no step (tests/test_steps.py). Local builds (uncommitted changes) are
not CI points: they are left out, as from flakiness.

The steps are derived at each build (the site's steps.json), never stored in the history of record.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from sitegen.defaults import STEP_PENALTY
from sitegen.history.runs import Run
from sitegen.plumbing.jsontext import dumps_json
from sitegen.report.results import ReportFigure


class PassStep(NamedTuple):
    """A step in the pass rate: between two CI points, with the rates fitted on either side."""

    last_before: Run
    first_after: Run
    before: float  # the pass rate of the segment that ends at `last_before`
    after: float  # the pass rate of the segment that begins at `first_after`

    def to_json(self) -> dict[str, Any]:
        """The step as steps.json lists it."""
        return {
            "commits": [self.last_before.commit, self.first_after.commit],
            "runs": [self.last_before.runId, self.first_after.runId],
            "before": round(self.before, 6),
            "after": round(self.after, 6),
        }


def pass_count(run: Run) -> tuple[int, int]:
    """How many of a run's cases passed, of how many: its passedCases of totalCases, the figures its pass rate and the
    chart's point are made of (cases that could not be evaluated count, as they do there); from its `cases` when it
    did not record them."""
    passed, total = run.figure(ReportFigure.PASSED_CASES), run.figure(ReportFigure.TOTAL_CASES)
    if isinstance(passed, (int, float)) and isinstance(total, (int, float)) and 0 <= passed <= total:
        return int(passed), int(total)
    cases = run.cases
    return sum(1 for passed in cases.values() if passed), len(cases)


def ci_points(runs: Sequence[Run]) -> list[Run]:
    """The runs a step is looked for in: every recorded run but local builds, and only those with a case."""
    return [run for run in runs if not run.local and pass_count(run)[1] > 0]


def _segment_cost(passed: int, total: int) -> float:
    """Minus the binomial log-likelihood of `passed` of `total` at their own rate (0 log 0 = 0)."""
    if passed == 0 or passed == total:
        return 0.0
    failed = total - passed
    return -(passed * math.log(passed / total) + failed * math.log(failed / total))


def change_points(counts: Sequence[tuple[int, int]], penalty: float = STEP_PENALTY) -> list[int]:
    """Where each segment after the first begins (indices into `counts`), the partition minimising the segments'
    costs plus `penalty` × ln(all trials) per step; PELT keeps it exact and about linear in the points."""
    n = len(counts)
    if n < 2:
        return []
    passed, total = [0], [0]
    for k, m in counts:
        passed.append(passed[-1] + k)
        total.append(total[-1] + m)
    if total[-1] == 0:
        return []
    beta = penalty * math.log(max(total[-1], 2))

    def cost(start: int, end: int) -> float:
        return _segment_cost(passed[end] - passed[start], total[end] - total[start])

    best = [-beta] + [0.0] * n  # best[t]: the least cost of the first t points
    last = [0] * (n + 1)  # last[t]: where the last segment of that best partition begins
    candidates = [0]
    for end in range(1, n + 1):
        scored = [(best[start] + cost(start, end) + beta, start) for start in candidates]
        best[end], last[end] = min(scored)
        # A start that cannot beat the best even with a step's penalty to spare never will (PELT's pruning).
        candidates = [start for value, start in scored if value - beta <= best[end]] + [end]
    points, end = [], n
    while end > 0:
        end = last[end]
        if end > 0:
            points.append(end)
    return points[::-1]


def pass_rate_steps(runs: Sequence[Run], penalty: float = STEP_PENALTY) -> list[PassStep]:
    """Every step in the pass rate over the CI points of `runs` (oldest first), oldest step first."""
    points = ci_points(runs)
    if len(points) < 2:
        return []
    counts = [pass_count(run) for run in points]
    bounds = [0, *change_points(counts, penalty), len(points)]
    rates = []
    for start, end in zip(bounds, bounds[1:]):
        passed = sum(k for k, _ in counts[start:end])
        total = sum(m for _, m in counts[start:end])
        rates.append(passed / total)
    return [PassStep(points[at - 1], points[at], rates[i], rates[i + 1]) for i, at in enumerate(bounds[1:-1])]


def step_at(steps: Sequence[PassStep], run: Run) -> PassStep | None:
    """The latest step when `run` is the first point after it (this run is where the pass rate stepped), else None."""
    return steps[-1] if steps and steps[-1].first_after.runId == run.runId else None


def steps_json(steps: Sequence[PassStep]) -> str:
    """The site's steps.json: every step, oldest first (eval/README.md, "Steps in the pass rate")."""
    return dumps_json([step.to_json() for step in steps])
