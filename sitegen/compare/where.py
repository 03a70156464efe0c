"""Where it happened, as the diff tells it (eval/README.md, "Failing since" and "Steps in the pass rate"): since which
run each failing case fails, and the step in the suite's pass rate this run is in, worded once for diff.json,
diff.md, the job summary, the terminal and the pull request's comment.

Both come from the history of record, which a comparison of two reports alone does not have: the build finds them
(history/since.py, history/steps.py) and hands them over in these shapes (site/history_facts.py). A diff made by
`sitegen diff` has neither and says nothing of them rather than something wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, NamedTuple

from sitegen.formatting import percent, plural


class StreakState(StrEnum):
    """Which kind of streak a failing case is in, as diff.json's `failingSince.state` spells it (eval/README.md,
    "Failing since")."""

    NEW = "new"  # a streak this run starts (it passed the run before); the cells say it as it is spelled
    SINCE = "since"  # a streak that began in an earlier run, a passing run before it
    EVERY_RUN = "everyRecordedRun"  # failing in every recorded run that holds the case: it may have begun earlier


class Streak(NamedTuple):
    """Since when a failing case fails: the first run of its current unbroken streak of failures."""

    runId: str
    name: str  # the run in short, as the history's pages name it (`a1b2c3d`, `PR #12 · a1b2c3d`)
    commit: str | None
    day: str  # the day it was recorded (`2026-11-30`), or ""
    runs: int  # the runs of the streak that hold the case, this one among them
    runsAgo: int  # recorded runs between the streak's first run and this one (0: this run)
    everyRun: bool  # no recorded run before the streak holds the case

    @property
    def state(self) -> StreakState:
        """Which kind of streak it is."""
        if self.everyRun:
            return StreakState.EVERY_RUN
        return StreakState.NEW if self.runsAgo == 0 else StreakState.SINCE

    def to_json(self) -> dict[str, Any]:
        """The streak as a `caseChanges` entry's `failingSince` in diff.json."""
        return {
            "state": self.state.value,
            "runId": self.runId,
            "run": self.name,
            "commit": self.commit,
            "date": self.day or None,
            "runs": self.runs,
            "runsAgo": self.runsAgo,
            "message": streak_text(self),
        }


def _where(streak: Streak, escape: Callable[[str], str]) -> str:
    return ", ".join((escape(streak.name), *((streak.day,) if streak.day else ())))


def streak_cell(streak: Streak, escape: Callable[[str], str] = str) -> str:
    """A streak under a "Failing since" heading: `a1b2c3d, 2026-11-30, 4 runs`, `new`, `every recorded run (4 runs,
    from …)`; `escape` for the run's name (a label from the history)."""
    if streak.state is StreakState.NEW:
        return StreakState.NEW.value
    if streak.state is StreakState.EVERY_RUN:
        if streak.runsAgo == 0:
            return "its first recorded run, this one"
        return f"every recorded run ({plural(streak.runs, 'run')}, from {_where(streak, escape)})"
    return f"{_where(streak, escape)}, {plural(streak.runs, 'run')}"


def streak_text(streak: Streak, escape: Callable[[str], str] = str) -> str:
    """`failing since a1b2c3d, 2026-11-30, 4 runs`; `failing since this run (new)`; `failing in every recorded run
    (4 runs, from a1b2c3d, 2026-11-01)`; `failing in its first recorded run, this one`."""
    if streak.state is StreakState.NEW:
        return "failing since this run (new)"
    if streak.state is StreakState.EVERY_RUN:
        return f"failing in {streak_cell(streak, escape)}"
    return f"failing since {streak_cell(streak, escape)}"


class Step(NamedTuple):
    """A step in the suite's pass rate between two CI points of the history (history/steps.py)."""

    runs: tuple[str, str]  # runIds: the last point before the step, the first after it
    names: tuple[str, str]  # the two runs in short, as the history's pages name them
    commits: tuple[str | None, str | None]
    before: float  # the pass rate fitted to the points before the step (back to the step before it)
    after: float  # ... and after it (up to the next step)

    def to_json(self) -> dict[str, Any]:
        """The step as diff.json's `step` (steps.json's shape, eval/README.md)."""
        return {"commits": list(self.commits), "runs": list(self.runs), "names": list(self.names),
                "before": self.before, "after": self.after, "message": step_text(self)}


def step_text(step: Step, escape: Callable[[str], str] = str) -> str:
    """`the suite's pass rate fell 92.0% → 61.5% between a1b2c3d and b2c3d4e (this run)`; `escape` for the names."""
    direction = "fell" if step.after < step.before else "rose"
    return (f"the suite's pass rate {direction} {percent(step.before)} → {percent(step.after)} between "
            f"{escape(step.names[0])} and {escape(step.names[1])} (this run)")
