"""What the history of record tells the diff (eval/README.md, "Failing since", "Steps in the pass rate"): each
failing case's streak (history/since.py) and the step this run is in (history/steps.py), handed over in the shapes
compare/where.py words. compare/ and history/ never import each other; the build joins them here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sitegen.compare.diff_report import DiffReport
from sitegen.compare.where import Step, Streak
from sitegen.history.runs import Run
from sitegen.history.since import FailingSince, run_day, run_name_parts
from sitegen.history.steps import PassStep, step_at


def run_name(run: Run) -> str:
    """A run in short, as the history's pages name it (`a1b2c3d`, `PR #12 · a1b2c3d`)."""
    return " · ".join(run_name_parts(run))


def streak_of(since: FailingSince) -> Streak:
    """A failing case's streak as the diff tells it."""
    run = since.run
    return Streak(run.runId, run_name(run), run.commit, run_day(run), since.failed_runs, since.runs_ago,
                  since.first_recorded)


def step_of(step: PassStep) -> Step:
    """A step in the pass rate as the diff tells it."""
    before, after = step.last_before, step.first_after
    return Step((before.runId, after.runId), (run_name(before), run_name(after)), (before.commit, after.commit),
                step.before, step.after)


def with_history(
    diff: DiffReport, since: Mapping[str, FailingSince], steps: list[PassStep], runs: list[Run], run: Run
) -> DiffReport:
    """The diff with what the history tells: every failing case's streak, and the latest step when this run is the
    first point after it. When this run is the history's first, there is no streak to tell: the diff stays silent
    (as `sitegen diff`'s) rather than call every failure new."""
    if not runs or runs[0].runId == run.runId:
        return diff
    found = step_at(steps, run)
    return replace(diff, failingSince={case_id: streak_of(streak) for case_id, streak in since.items()},
                   step=None if found is None else step_of(found))
